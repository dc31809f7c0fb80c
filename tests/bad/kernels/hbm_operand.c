/* tests/bad/kernels/hbm_operand.c: a math op on an HBM tensor that was
 * never loaded.
// args: --topo topologies/small.yaml
// expect: tests/bad/kernels/hbm_operand.c:@LINE@: error: PE sip0.cube0.pe0: 
// expect: is in HBM; tl_load it first
 */
#include <cubesim/tl.h>

#include "hbm_x.h"

static void body(tl_ctx *tl, const void *argp)
{
        const struct args *a = argp;
        tl_exp(tl, a->x); /* FAULT */
}

CASE_KERNEL("hbm_operand");
