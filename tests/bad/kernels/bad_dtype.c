/* tests/bad/kernels/bad_dtype.c: tl_alloc with a dtype that is none of tl_dtype.
// args: --topo topologies/small.yaml
// expect: tests/bad/kernels/bad_dtype.c:@LINE@: error: PE sip0.cube0.pe0: tl_alloc: dtype 77: expected TL_FP32, TL_BF16, TL_FP16, TL_BFP8_B or TL_BFP4_B
// expect-count: 1
 */
#include <cubesim/tl.h>

#include "pe0.h"

static void fault(tl_ctx *tl, const void *argp)
{
        tl_alloc(tl, TL_TCM, (tl_dtype)77, 2, ((int64_t[]){ 8, 8 })); /* FAULT */
}

CASE_TABLE(.name = "bad_dtype");
