/* tests/bad/kernels/dequant_scales.c: a per-K-tile DEQUANT with 2 scales
 * for a GEMM of 4 K tiles; in data mode the missing scales were read past
 * the tensor's end.
// args: --topo topologies/small.yaml --mode data
// expect: tests/bad/kernels/dequant_scales.c:@LINE@: error: PE sip0.cube0.pe0: tl_composite: epilogue #0 (TL_DEQUANT): 2 scales for 4 K tiles
// expect-count: 1
 */
#include <cubesim/tl.h>

#include "pe0.h"

static void fault(tl_ctx *tl, const void *argp)
{
        tl_tensor *a = tl_fill(tl, TL_FP32, 2, ((int64_t[]){ 8, 256 }), 1.0f);
        tl_tensor *b = tl_fill(tl, TL_FP32, 2, ((int64_t[]){ 256, 8 }), 1.0f);
        tl_tensor *s = tl_fill(tl, TL_FP32, 1, ((int64_t[]){ 2 }), 0.5f);
        tl_tensor *out = tl_alloc(tl, TL_TCM, TL_FP32, 2, ((int64_t[]){ 8, 8 }));
        tl_epilogue e = { .op = TL_DEQUANT, .tensor = s, .scope = TL_SCOPE_K_TILE };
        tl_composite(tl, &(tl_composite_desc){ .op = TL_GEMM, .a = a, .b = b, .out = out, /* FAULT */
                                               .epilogue = &e, .n_epilogue = 1, .tile_k = 64 });
}

CASE_TABLE(.name = "dequant_scales");
