/* tests/bad/kernels/null_desc.c: tl_composite with a NULL descriptor.
// args: --topo topologies/small.yaml
// expect: tests/bad/kernels/null_desc.c:@LINE@: error: PE sip0.cube0.pe0: tl_composite: the descriptor is NULL
// expect-count: 1
 */
#include <cubesim/tl.h>

static void body(tl_ctx *tl, const void *argp)
{
        if (tl_rank(tl, -1, -1, -1) != 0)
                return;
        tl_composite(tl, NULL); /* FAULT */
}

static const struct tl_kernel kernel = { .name = "null_desc", .fn = body };
const struct tl_kernel *const cubesim_kernels[] = { &kernel, NULL };
