/* tests/bad/kernels/tcm_overflow.c: persistent TCM allocations past the
 * TCM's capacity (2 MiB by default, 1 MiB of it the scratch arena).
// args: --topo topologies/small.yaml
// expect: tests/bad/kernels/tcm_overflow.c:@LINE@: error: PE sip0.cube0.pe0: tl_alloc: TCM:
 */
#include <cubesim/tl.h>

#include "case.h"

static void body(tl_ctx *tl, const void *argp)
{
        int64_t shape[2] = { 512, 512 };   /* 1 MiB of fp32 each */
        for (int i = 0; i < 4; i++)
                tl_alloc(tl, TL_TCM, TL_FP32, 2, shape); /* FAULT */
}

CASE_TABLE(.name = "tcm_overflow");
