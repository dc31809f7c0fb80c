/* tests/bad/kernels/bad_space.c: tl_alloc with a space that is none of tl_space.
// args: --topo topologies/small.yaml
// expect: tests/bad/kernels/bad_space.c:@LINE@: error: PE sip0.cube0.pe0: tl_alloc: space 9: expected TL_TCM or TL_SCRATCH
// expect-count: 1
 */
#include <cubesim/tl.h>

#include "pe0.h"

static void fault(tl_ctx *tl, const void *argp)
{
        tl_alloc(tl, (tl_space)9, TL_FP32, 2, ((int64_t[]){ 8, 8 })); /* FAULT */
}

CASE_TABLE(.name = "bad_space");
