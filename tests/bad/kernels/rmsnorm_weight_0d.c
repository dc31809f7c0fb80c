/* tests/bad/kernels/rmsnorm_weight_0d.c: an RMSNORM epilogue whose weight
 * is 0-D: data mode read its extent -1 (UBSan).
// args: --topo topologies/small.yaml --mode data
// expect: tests/bad/kernels/rmsnorm_weight_0d.c:@LINE@: error: PE sip0.cube0.pe0: tl_composite: epilogue #0 (TL_RMSNORM): weight [] for rows of 8 (output [8, 8]): expected [8] or [1, 8]
// expect-count: 1
 */
#include <cubesim/tl.h>

#include "pe0.h"

static void fault(tl_ctx *tl, const void *argp)
{
        tl_tensor *out = tl_alloc(tl, TL_TCM, TL_FP32, 2, ((int64_t[]){ 8, 8 }));
        tl_tensor *w = tl_fill(tl, TL_FP32, 0, NULL, 1.0f);
        tl_epilogue e = { .op = TL_RMSNORM, .tensor = w, .factor = 1e-6f,
                          .scope = TL_SCOPE_KERNEL };
        tl_wait(tl, tl_composite(tl, &(tl_composite_desc){ .out = out, .epilogue = &e, /* FAULT */
                                                           .n_epilogue = 1 }));
}

CASE_TABLE(.name = "rmsnorm_weight_0d");
