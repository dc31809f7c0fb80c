/* tests/bad/kernels/rmsnorm_weight_2d.c: an RMSNORM epilogue whose weight
 * is [8, 8]: it was accepted and only its first row was used.
// args: --topo topologies/small.yaml --mode data
// expect: tests/bad/kernels/rmsnorm_weight_2d.c:@LINE@: error: PE sip0.cube0.pe0: tl_composite: epilogue #0 (TL_RMSNORM): weight [8, 8] for rows of 8 (output [8, 8]): expected [8] or [1, 8]
// expect-count: 1
 */
#include <cubesim/tl.h>

#include "pe0.h"

static void fault(tl_ctx *tl, const void *argp)
{
        int64_t sq[2] = { 8, 8 };
        tl_tensor *a = tl_fill(tl, TL_FP32, 2, sq, 1.0f);
        tl_tensor *out = tl_alloc(tl, TL_TCM, TL_FP32, 2, sq);
        tl_tensor *w = tl_fill(tl, TL_FP32, 2, sq, 1.0f);
        tl_epilogue e = { .op = TL_RMSNORM, .tensor = w, .factor = 1e-6f,
                          .scope = TL_SCOPE_KERNEL };
        tl_wait(tl, tl_composite(tl, &(tl_composite_desc){ .op = TL_GEMM, .a = a, .b = a, /* FAULT */
                                                           .out = out, .epilogue = &e,
                                                           .n_epilogue = 1 }));
}

CASE_TABLE(.name = "rmsnorm_weight_2d");
