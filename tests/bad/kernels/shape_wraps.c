/* tests/bad/kernels/shape_wraps.c: a shape whose element count wraps int64 (2^40 x 2^24 = 2^64):
 * refused, not made into an empty tensor that overflows its buffer in data
 * mode.
// args: --topo topologies/small.yaml --mode data
// expect: tests/bad/kernels/shape_wraps.c:@LINE@: error: PE sip0.cube0.pe0: fill: shape [1099511627776, 16777216]: more than 2^48 elements
// expect-count: 1
 */
#include <cubesim/tl.h>

#include "pe0.h"

static void fault(tl_ctx *tl, const void *argp)
{
        int64_t shape[2] = { INT64_C(1) << 40, INT64_C(1) << 24 };
        tl_fill(tl, TL_FP32, 2, shape, 1.0f); /* FAULT */
}

CASE_TABLE(.name = "shape_wraps");
