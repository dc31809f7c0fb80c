/* tests/bad/kernels/null_mcast.c: tl_mcast of a NULL tensor.
// args: --topo topologies/small.yaml
// expect: tests/bad/kernels/null_mcast.c:@LINE@: error: PE sip0.cube0.pe0: tl_mcast: t is NULL
// expect-count: 1
 */
#include <cubesim/tl.h>

static void body(tl_ctx *tl, const void *argp)
{
        if (tl_rank(tl, -1, -1, -1) != 0)
                return;
        tl_mcast(tl, 0, 0, 1, 2, NULL, 7); /* FAULT */
}

static const struct tl_kernel kernel = { .name = "null_mcast", .fn = body };
const struct tl_kernel *const cubesim_kernels[] = { &kernel, NULL };
