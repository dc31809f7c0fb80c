/* tests/bad/kernels/scratch_overflow.c: a loop that allocates scratch and
 * never closes a scope grows past the 1 MiB ceiling.
// args: --topo topologies/small.yaml
// expect: tests/bad/kernels/scratch_overflow.c:@LINE@: error: PE sip0.cube0.pe0: tl_alloc: scratch: 1.25 MiB requested, 1.00 MiB ceiling (pe.tcm.scratch_ceiling_kib;
 */
#include <cubesim/tl.h>

#include "case.h"

static void body(tl_ctx *tl, const void *argp)
{
        int64_t shape[2] = { 256, 256 };   /* 256 KiB of fp32 each */
        for (int i = 0; i < 100; i++)
                tl_alloc(tl, TL_SCRATCH, TL_FP32, 2, shape); /* FAULT */
}

CASE_TABLE(.name = "scratch_overflow");
