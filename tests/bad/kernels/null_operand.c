/* tests/bad/kernels/null_operand.c: a composite GEMM whose b is NULL.
// args: --topo topologies/small.yaml
// expect: tests/bad/kernels/null_operand.c:@LINE@: error: PE sip0.cube0.pe0: tl_composite: b is NULL
// expect-count: 1
 */
#include <cubesim/tl.h>

#include "pe0.h"

static void fault(tl_ctx *tl, const void *argp)
{
        tl_tensor *m = tl_alloc(tl, TL_TCM, TL_FP32, 2, ((int64_t[]){ 8, 8 }));
        tl_composite(tl, &(tl_composite_desc){ .op = TL_GEMM, .a = m, .out = m }); /* FAULT */
}

CASE_TABLE(.name = "null_operand");
