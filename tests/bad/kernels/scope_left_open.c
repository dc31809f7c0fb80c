/* tests/bad/kernels/scope_left_open.c: a kernel that returns with a
 * scratch scope still open; the error comes at the kernel's end.
// args: --topo topologies/small.yaml
// expect: tests/bad/kernels/scope_left_open.c:@LINE@: error: PE sip0.cube0.pe0: kernel end: 1 scratch scope still open at the kernel's end
 */
#include <cubesim/tl.h>

#include "case.h"

static void body(tl_ctx *tl, const void *argp)
{
        tl_scratch_scope_begin(tl); /* FAULT */
}

CASE_TABLE(.name = "scope_left_open");
