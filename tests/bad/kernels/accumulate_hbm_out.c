/* tests/bad/kernels/accumulate_hbm_out.c: an accumulating GEMM whose
 * output is in HBM (the engine adds onto values where they are: in TCM).
// args: --topo topologies/small.yaml
// expect: tests/bad/kernels/accumulate_hbm_out.c:@LINE@: error: PE sip0.cube0.pe0: tl_composite: accumulate: the output must be consumed in place (a pinned TCM or scratch tensor), as the engine adds onto its values where they are
 */
#include <cubesim/tl.h>

#define HBM_X_ROLE TL_OUTPUT
#include "hbm_x.h"

static void body(tl_ctx *tl, const void *argp)
{
        const struct args *g = argp;
        tl_tensor *a = tl_alloc(tl, TL_TCM, TL_BF16, 2, ((int64_t[]){ 8, 8 }));
        tl_composite(tl, &(tl_composite_desc){ .op = TL_GEMM, .a = a, .b = a, .out = g->x, .accumulate = true }); /* FAULT */
}

CASE_KERNEL("accumulate_hbm_out");
