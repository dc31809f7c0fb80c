/* tests/bad/kernels/null_set_pinned.c: tl_set_pinned on NULL: the call has no context argument; the
 * error still names the kernel's line and the PE.
// args: --topo topologies/small.yaml
// expect: tests/bad/kernels/null_set_pinned.c:@LINE@: error: PE sip0.cube0.pe0: tl_set_pinned: the tensor is NULL
// expect-count: 1
 */
#include <cubesim/tl.h>

#include "pe0.h"

static void fault(tl_ctx *tl, const void *argp)
{
        tl_set_pinned(NULL, true); /* FAULT */
}

CASE_TABLE(.name = "null_set_pinned");
