/* tests/bad/kernels/bad_cast.c: tl_cast to dtype -1.
// args: --topo topologies/small.yaml
// expect: tests/bad/kernels/bad_cast.c:@LINE@: error: PE sip0.cube0.pe0: cast: dtype -1: expected TL_FP32, TL_BF16, TL_FP16, TL_BFP8_B or TL_BFP4_B
// expect-count: 1
 */
#include <cubesim/tl.h>

#include "pe0.h"

static void fault(tl_ctx *tl, const void *argp)
{
        tl_tensor *t = tl_fill(tl, TL_FP32, 2, ((int64_t[]){ 8, 8 }), 1.0f);
        tl_cast(tl, t, (tl_dtype)-1); /* FAULT */
}

CASE_TABLE(.name = "bad_cast");
