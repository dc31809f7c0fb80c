/* tests/bad/kernels/math_op_form.c: a binary op passed where a unary op is
 * expected, and a value outside the op table, are named as such.
// args: --topo topologies/small.yaml
// expect: tests/bad/kernels/math_op_form.c:@LINE@: error: PE sip0.cube0.pe0: add: TL_ADD is not a unary op or a reduction
 */
#include <cubesim/tl.h>

#include "case.h"

static void body(tl_ctx *tl, const void *argp)
{
        int64_t shape[2] = { 8, 8 };
        tl_tensor *x = tl_alloc(tl, TL_TCM, TL_FP32, 2, shape);
        tl__math1(tl, TL_ADD, x, __FILE__, __LINE__); /* FAULT */
}

CASE_TABLE(.name = "math_op_form");
