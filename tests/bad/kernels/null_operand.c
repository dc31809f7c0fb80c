/* tests/bad/kernels/null_operand.c: a composite GEMM whose b is NULL.
// args: --topo topologies/small.yaml
// expect: tests/bad/kernels/null_operand.c:@LINE@: error: PE sip0.cube0.pe0: tl_composite: b is NULL
// expect-count: 1
 */
#include <cubesim/tl.h>

static void body(tl_ctx *tl, const void *argp)
{
        if (tl_rank(tl, -1, -1, -1) != 0)
                return;
        tl_tensor *m = tl_alloc(tl, TL_TCM, TL_FP32, 2, ((int64_t[]){ 8, 8 }));
        tl_composite(tl, &(tl_composite_desc){ .op = TL_GEMM, .a = m, .out = m }); /* FAULT */
}

static const struct tl_kernel kernel = { .name = "null_operand", .fn = body };
const struct tl_kernel *const cubesim_kernels[] = { &kernel, NULL };
