/* tests/bad/kernels/dequant_no_gemm.c: a MATH-only composite with a
 * K_TILE DEQUANT whose 3 scales do not broadcast onto the [8, 8] output:
 * without a GEMM there are no K tiles, so the scales multiply the output
 * (and were read past their end in data mode).
// args: --topo topologies/small.yaml --mode data
// expect: tests/bad/kernels/dequant_no_gemm.c:@LINE@: error: PE sip0.cube0.pe0: tl_composite: epilogue #0 (TL_DEQUANT): no GEMM, so no K tiles, and its 3 values do not broadcast to the output
// expect-count: 1
 */
#include <cubesim/tl.h>

#include "pe0.h"

static void fault(tl_ctx *tl, const void *argp)
{
        tl_tensor *s = tl_fill(tl, TL_FP32, 1, ((int64_t[]){ 3 }), 0.5f);
        tl_tensor *out = tl_fill(tl, TL_FP32, 2, ((int64_t[]){ 8, 8 }), 1.0f);
        tl_epilogue e = { .op = TL_DEQUANT, .tensor = s, .scope = TL_SCOPE_K_TILE };
        tl_composite(tl, &(tl_composite_desc){ .out = out, .epilogue = &e, .n_epilogue = 1 }); /* FAULT */
}

CASE_TABLE(.name = "dequant_no_gemm");
