/* tests/bad/kernels/never_ends_time.c: a kernel that never ends, stopped by
 * the simulated-time budget.
// args: --topo topologies/small.yaml --max-sim-ns 100000
// expect: error: simulated time budget exceeded: the next event is at
// expect: past the budget of 100000.000 ns; a run this long needs a larger one (cubesim run --max-sim-ns), unless its kernel never ends
// expect: process 'sip0.cube0.pe0'
// expect-count: 1
 */
#include <cubesim/tl.h>

#include "case.h"

static void body(tl_ctx *tl, const void *argp)
{
        for (;;) {
                tl_scratch_scope_begin(tl); /* FAULT */
                tl_scratch_scope_end(tl);
        }
}

CASE_TABLE(.name = "never_ends_time");
