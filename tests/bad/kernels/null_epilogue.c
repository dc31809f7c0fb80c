/* tests/bad/kernels/null_epilogue.c: a composite that counts two epilogue ops but gives none.
// args: --topo topologies/small.yaml
// expect: tests/bad/kernels/null_epilogue.c:@LINE@: error: PE sip0.cube0.pe0: tl_composite: 2 epilogue ops but epilogue is NULL
// expect-count: 1
 */
#include <cubesim/tl.h>

#include "pe0.h"

static void fault(tl_ctx *tl, const void *argp)
{
        tl_tensor *o = tl_alloc(tl, TL_TCM, TL_FP32, 2, ((int64_t[]){ 8, 8 }));
        tl_composite(tl, &(tl_composite_desc){ .out = o, .n_epilogue = 2 }); /* FAULT */
}

CASE_TABLE(.name = "null_epilogue");
