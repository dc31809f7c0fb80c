/* tests/bad/kernels/null_desc.c: tl_composite with a NULL descriptor.
// args: --topo topologies/small.yaml
// expect: tests/bad/kernels/null_desc.c:@LINE@: error: PE sip0.cube0.pe0: tl_composite: the descriptor is NULL
// expect-count: 1
 */
#include <cubesim/tl.h>

#include "pe0.h"

static void fault(tl_ctx *tl, const void *argp)
{
        tl_composite(tl, NULL); /* FAULT */
}

CASE_TABLE(.name = "null_desc");
