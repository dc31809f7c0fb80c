/* tests/bad/kernels/null_metadata.c: tl_dim of NULL.
// args: --topo topologies/small.yaml
// expect: tests/bad/kernels/null_metadata.c:@LINE@: error: PE sip0.cube0.pe0: tl_dim: the tensor is NULL
// expect-count: 1
 */
#include <cubesim/tl.h>

static void body(tl_ctx *tl, const void *argp)
{
        if (tl_rank(tl, -1, -1, -1) != 0)
                return;
        if (tl_dim(NULL, 0) == 0) /* FAULT */
                tl_load(tl, NULL);
}

static const struct tl_kernel kernel = { .name = "null_metadata", .fn = body };
const struct tl_kernel *const cubesim_kernels[] = { &kernel, NULL };
