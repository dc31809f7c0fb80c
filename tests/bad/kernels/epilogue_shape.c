/* tests/bad/kernels/epilogue_shape.c: a BIAS whose tensor does not
 * broadcast onto the composite's output ([3, 3] onto [8, 8]); in data mode
 * it was read past its end.
// args: --topo topologies/small.yaml --mode data
// expect: tests/bad/kernels/epilogue_shape.c:@LINE@: error: PE sip0.cube0.pe0: tl_composite: epilogue #0 (TL_BIAS): its tensor [3, 3] does not broadcast to the output [8, 8]
// expect-count: 1
 */
#include <cubesim/tl.h>

#include "pe0.h"

static void fault(tl_ctx *tl, const void *argp)
{
        tl_tensor *a = tl_fill(tl, TL_FP32, 2, ((int64_t[]){ 8, 8 }), 1.0f);
        tl_tensor *bias = tl_fill(tl, TL_FP32, 2, ((int64_t[]){ 3, 3 }), 1.0f);
        tl_tensor *out = tl_alloc(tl, TL_TCM, TL_FP32, 2, ((int64_t[]){ 8, 8 }));
        tl_epilogue e = { .op = TL_BIAS, .tensor = bias };
        tl_composite(tl, &(tl_composite_desc){ .op = TL_GEMM, .a = a, .b = a, .out = out, /* FAULT */
                                               .epilogue = &e, .n_epilogue = 1 });
}

CASE_TABLE(.name = "epilogue_shape");
