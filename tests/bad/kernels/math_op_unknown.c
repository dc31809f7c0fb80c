/* tests/bad/kernels/math_op_unknown.c: a value outside the op table.
// args: --topo topologies/small.yaml
// expect: tests/bad/kernels/math_op_unknown.c:@LINE@: error: PE sip0.cube0.pe0: tl_math2: op 977 is not a tl_op (expected a binary op)
 */
#include <cubesim/tl.h>

#include "case.h"

static void body(tl_ctx *tl, const void *argp)
{
        int64_t shape[2] = { 8, 8 };
        tl_tensor *x = tl_alloc(tl, TL_TCM, TL_FP32, 2, shape);
        tl__math2(tl, (tl_op)977, x, x, __FILE__, __LINE__); /* FAULT */
}

CASE_TABLE(.name = "math_op_unknown");
