/* tests/bad/kernels/never_ends_where.c: when a budget stops a kernel that
 * never ends, the report names where each PE's kernel is: its file:line
 * and the op it is in.
// args: --topo topologies/small.yaml --max-sim-ns 10000
// expect: error: simulated time budget exceeded
// expect: process 'sip0.cube0.pe0'
// expect: waits on a timer; last call tests/bad/kernels/never_ends_where.c:
 */
#include <cubesim/tl.h>

#include "case.h"

static void body(tl_ctx *tl, const void *argp)
{
        int64_t shape[2] = { 8, 8 };
        tl_tensor *x = tl_fill(tl, TL_FP32, 2, shape, 1.0f);
        for (;;) {
                tl_scratch_scope_begin(tl);
                tl_wait_tensor(tl, tl_mul(tl, x, x)); /* FAULT */
                tl_scratch_scope_end(tl);
        }
}

CASE_TABLE(.name = "never_ends_where");
