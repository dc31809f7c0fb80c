/* tests/bad/kernels/scope_carried.c: a scratch result carried from one
 * iteration of a loop of scopes into the next. The next iteration's
 * tensors take the place its storage had, so the values read would be
 * this iteration's; the tensor is dead and that is the error.
// args: --topo topologies/small.yaml --mode data
// expect: tests/bad/kernels/scope_carried.c:@LINE@: error: PE sip0.cube0.pe0: add: b was made in a scratch scope that has ended
// expect-count: 1
 */
#include <cubesim/tl.h>

#include "hbm_x.h"
#include "pe0.h"

static void fault(tl_ctx *tl, const void *argp)
{
        const struct args *a = argp;
        tl_tensor *prev = NULL;
        for (int i = 0; i < 2; i++) {
                tl_scratch_scope_begin(tl);
                tl_tensor *t = tl_exp(tl, tl_load(tl, a->x));
                if (prev)
                        t = tl_add(tl, t, prev); /* FAULT */
                prev = t;
                tl_scratch_scope_end(tl);
        }
}

CASE_KERNEL("scope_carried");
