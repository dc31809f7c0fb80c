/* tests/bad/kernels/epilogue_alias.c: a BIAS epilogue whose [1, 8] tensor
 * is the first row of the output: later tiles would read what the first
 * one wrote. (The output itself as the operand, a residual add in place,
 * is allowed.)
// args: --topo topologies/small.yaml
// expect: tests/bad/kernels/epilogue_alias.c:@LINE@: error: PE sip0.cube0.pe0: tl_composite: epilogue #1 (TL_BIAS): its tensor [1, 8] shares elements with the output [8, 8] without being it (only the output itself may be read in place); give it a tensor of its own
// expect-count: 1
 */
#include <cubesim/tl.h>

#include "pe0.h"

static void fault(tl_ctx *tl, const void *argp)
{
        tl_tensor *a = tl_fill(tl, TL_FP32, 2, ((int64_t[]){ 8, 8 }), 1.0f);
        tl_tensor *out = tl_alloc(tl, TL_TCM, TL_FP32, 2, ((int64_t[]){ 8, 8 }));
        tl_tensor *row = tl_view(tl, out, ((int64_t[]){ 0, 0 }), ((int64_t[]){ 1, 8 }));
        tl_epilogue e[2] = { { .op = TL_ADD, .tensor = out }, { .op = TL_BIAS, .tensor = row } };
        tl_wait(tl, tl_composite(tl, &(tl_composite_desc){ .op = TL_GEMM, .a = a, .b = a, /* FAULT */
                                                           .out = out, .epilogue = e,
                                                           .n_epilogue = 2 }));
}

CASE_TABLE(.name = "epilogue_alias");
