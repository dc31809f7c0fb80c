/* tests/bad/kernels/rmsnorm_0d_out.c: a MATH-only composite with an
 * RMSNORM epilogue on a 0-D output: it has no rows, and data mode read
 * extent -1 (UBSan) or a garbage row length.
// args: --topo topologies/small.yaml --mode data
// expect: tests/bad/kernels/rmsnorm_0d_out.c:@LINE@: error: PE sip0.cube0.pe0: tl_composite: epilogue #0 (TL_RMSNORM) normalizes rows of the last axis: the output is 0-D (shape []); give it at least one axis
// expect-count: 1
 */
#include <cubesim/tl.h>

#include "pe0.h"

static void fault(tl_ctx *tl, const void *argp)
{
        tl_tensor *out = tl_alloc(tl, TL_TCM, TL_FP32, 0, NULL);
        tl_epilogue e = { .op = TL_RMSNORM, .factor = 1e-6f, .scope = TL_SCOPE_KERNEL };
        tl_wait(tl, tl_composite(tl, &(tl_composite_desc){ .out = out, .epilogue = &e, /* FAULT */
                                                           .n_epilogue = 1 }));
}

CASE_TABLE(.name = "rmsnorm_0d_out");
