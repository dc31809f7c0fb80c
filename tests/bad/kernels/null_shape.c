/* tests/bad/kernels/null_shape.c: tl_alloc with a NULL shape.
// args: --topo topologies/small.yaml
// expect: tests/bad/kernels/null_shape.c:@LINE@: error: PE sip0.cube0.pe0: tl_alloc: shape is NULL
// expect-count: 1
 */
#include <cubesim/tl.h>

static void body(tl_ctx *tl, const void *argp)
{
        if (tl_rank(tl, -1, -1, -1) != 0)
                return;
        tl_alloc(tl, TL_TCM, TL_FP32, 2, NULL); /* FAULT */
}

static const struct tl_kernel kernel = { .name = "null_shape", .fn = body };
const struct tl_kernel *const cubesim_kernels[] = { &kernel, NULL };
