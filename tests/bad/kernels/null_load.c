/* tests/bad/kernels/null_load.c: tl_load of a NULL tensor.
// args: --topo topologies/small.yaml
// expect: tests/bad/kernels/null_load.c:@LINE@: error: PE sip0.cube0.pe0: tl_load: src is NULL
// expect-count: 1
 */
#include <cubesim/tl.h>

static void body(tl_ctx *tl, const void *argp)
{
        if (tl_rank(tl, -1, -1, -1) != 0)
                return;
        tl_load(tl, NULL); /* FAULT */
}

static const struct tl_kernel kernel = { .name = "null_load", .fn = body };
const struct tl_kernel *const cubesim_kernels[] = { &kernel, NULL };
