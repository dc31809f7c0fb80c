/* tests/bad/kernels/bad_epilogue_scope.c: an epilogue op with a scope that is none of tl_cscope.
// args: --topo topologies/small.yaml
// expect: tests/bad/kernels/bad_epilogue_scope.c:@LINE@: error: PE sip0.cube0.pe0: tl_composite: epilogue #0: scope 7 is not OUTPUT_TILE, K_TILE or KERNEL
// expect-count: 1
 */
#include <cubesim/tl.h>

#include "pe0.h"

static void fault(tl_ctx *tl, const void *argp)
{
        tl_tensor *o = tl_alloc(tl, TL_TCM, TL_FP32, 2, ((int64_t[]){ 8, 8 }));
        tl_epilogue e = { .op = TL_RELU, .scope = (tl_cscope)7 };
        tl_composite(tl, &(tl_composite_desc){ .out = o, .epilogue = &e, .n_epilogue = 1 }); /* FAULT */
}

CASE_TABLE(.name = "bad_epilogue_scope");
