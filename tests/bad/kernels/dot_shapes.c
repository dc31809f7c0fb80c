/* tests/bad/kernels/dot_shapes.c: a GEMM whose inner dimensions differ.
// args: --topo topologies/small.yaml
// expect: tests/bad/kernels/dot_shapes.c:@LINE@: error: PE sip0.cube0.pe0: dot: inner dimensions differ: a is [8, 16], b is [8, 8]
 */
#include <cubesim/tl.h>

#include "case.h"

static void body(tl_ctx *tl, const void *argp)
{
        int64_t sa[2] = { 8, 16 }, sb[2] = { 8, 8 };
        tl_tensor *a = tl_fill(tl, TL_FP32, 2, sa, 1.0f);
        tl_tensor *b = tl_fill(tl, TL_FP32, 2, sb, 1.0f);
        tl_dot(tl, a, b, false); /* FAULT */
}

CASE_TABLE(.name = "dot_shapes");
