/* tests/bad/kernels/scope_unbalanced.c: a scratch scope closed that was
 * never opened.
// args: --topo topologies/small.yaml
// expect: tests/bad/kernels/scope_unbalanced.c:@LINE@: error: PE sip0.cube0.pe0: tl_scratch_scope_end: no scope is open
 */
#include <cubesim/tl.h>

#include "case.h"

static void body(tl_ctx *tl, const void *argp)
{
        tl_scratch_scope_end(tl); /* FAULT */
}

CASE_TABLE(.name = "scope_unbalanced");
