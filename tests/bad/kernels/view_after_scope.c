/* tests/bad/kernels/view_after_scope.c: a view made inside a scope, used after it: the view itself
 * lived in the scope's scratch.
// args: --topo topologies/small.yaml
// expect: tests/bad/kernels/view_after_scope.c:@LINE@: error: PE sip0.cube0.pe0: tl_load: src was made in a scratch scope that has ended
// expect-count: 1
 */
#include <cubesim/tl.h>

#include "hbm_x.h"
#include "pe0.h"

static void fault(tl_ctx *tl, const void *argp)
{
        const struct args *a = argp;
        int64_t start[2] = { 0, 0 }, shape[2] = { 4, 4 };
        tl_scratch_scope_begin(tl);
        tl_tensor *v = tl_view(tl, a->x, start, shape);
        tl_scratch_scope_end(tl);
        tl_load(tl, v); /* FAULT */
}

CASE_KERNEL("view_after_scope");
