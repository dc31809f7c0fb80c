/* tests/bad/kernels/use_after_scope.c: a scratch tensor stored after its scope ended: its storage
 * was freed (and would be reused by the next scope's ops), so this is an
 * error, not wrong data with exit 0.
// args: --topo topologies/small.yaml --mode data
// expect: tests/bad/kernels/use_after_scope.c:@LINE@: error: PE sip0.cube0.pe0: tl_store: src was made in a scratch scope that has ended (tl_scratch_scope_end freed it; keep values across scopes with tl_copy_to)
// expect-count: 1
 */
#include <cubesim/tl.h>

#include "hbm_x.h"
#include "pe0.h"

static void fault(tl_ctx *tl, const void *argp)
{
        const struct args *a = argp;
        tl_scratch_scope_begin(tl);
        tl_tensor *t = tl_exp(tl, tl_load(tl, a->x));
        tl_scratch_scope_end(tl);
        tl_store(tl, a->x, t); /* FAULT */
}

CASE_KERNEL("use_after_scope");
