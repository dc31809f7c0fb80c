/* tests/bad/kernels/scope_left_open_where.c: a scope left open is reported
 * at the tl_scratch_scope_begin that opened it (file:line), not only by
 * the kernel's name.
// args: --topo topologies/small.yaml
// expect: tests/bad/kernels/scope_left_open_where.c:@LINE@: error: PE sip0.cube0.pe0:
// expect: 1 scratch scope still open
 */
#include <cubesim/tl.h>

#include "case.h"

static void body(tl_ctx *tl, const void *argp)
{
        tl_scratch_scope_begin(tl);
        tl_scratch_scope_end(tl);
        tl_scratch_scope_begin(tl); /* FAULT */
}

CASE_TABLE(.name = "scope_left_open_where");
