/* tests/bad/kernels/null_wait_tensor.c: tl_wait_tensor on NULL.
// args: --topo topologies/small.yaml
// expect: tests/bad/kernels/null_wait_tensor.c:@LINE@: error: PE sip0.cube0.pe0: tl_wait_tensor: t is NULL
// expect-count: 1
 */
#include <cubesim/tl.h>

static void body(tl_ctx *tl, const void *argp)
{
        if (tl_rank(tl, -1, -1, -1) != 0)
                return;
        tl_wait_tensor(tl, NULL); /* FAULT */
}

static const struct tl_kernel kernel = { .name = "null_wait_tensor", .fn = body };
const struct tl_kernel *const cubesim_kernels[] = { &kernel, NULL };
