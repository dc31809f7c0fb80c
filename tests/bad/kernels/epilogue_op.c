/* tests/bad/kernels/epilogue_op.c: a composite epilogue op that is not an
 * epilogue op is named by its enumerator, not by its number.
// args: --topo topologies/small.yaml
// expect: tests/bad/kernels/epilogue_op.c:@LINE@: error: PE sip0.cube0.pe0: tl_composite: epilogue #0: TL_ROWMAX is not
 */
#include <cubesim/tl.h>

#include "case.h"

static void body(tl_ctx *tl, const void *argp)
{
        int64_t shape[2] = { 8, 8 };
        tl_tensor *x = tl_alloc(tl, TL_TCM, TL_FP32, 2, shape);
        tl_composite(tl, &(tl_composite_desc){ .out = x, .n_epilogue = 1, /* FAULT */
                                               .epilogue = (tl_epilogue[]){ { .op = TL_ROWMAX } } });
}

CASE_TABLE(.name = "epilogue_op");
