/* tests/bad/kernels/accumulate_no_gemm.c: accumulate on a MATH-only
 * composite (only a GEMM accumulates).
// args: --topo topologies/small.yaml
// expect: tests/bad/kernels/accumulate_no_gemm.c:@LINE@: error: PE sip0.cube0.pe0: tl_composite: accumulate: only a GEMM accumulates (the head is TL_NONE)
// expect-count: 1
 */
#include <cubesim/tl.h>

#include "pe0.h"

static void fault(tl_ctx *tl, const void *argp)
{
        tl_tensor *o = tl_alloc(tl, TL_TCM, TL_FP32, 2, ((int64_t[]){ 8, 8 }));
        tl_epilogue e = { .op = TL_RELU };
        tl_composite(tl, &(tl_composite_desc){ .out = o, .accumulate = true, .epilogue = &e, .n_epilogue = 1 }); /* FAULT */
}

CASE_TABLE(.name = "accumulate_no_gemm");
