/* tests/bad/kernels/bad_handle.c: waiting on a handle tl_composite never
 * returned.
// args: --topo topologies/small.yaml
// expect: tests/bad/kernels/bad_handle.c:@LINE@: error: PE sip0.cube0.pe0: tl_wait: not a handle returned by tl_composite
 */
#include <cubesim/tl.h>

#include "case.h"

static void body(tl_ctx *tl, const void *argp)
{
        tl_handle h = { 0 };
        tl_wait(tl, h); /* FAULT */
}

CASE_TABLE(.name = "bad_handle");
