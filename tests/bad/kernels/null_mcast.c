/* tests/bad/kernels/null_mcast.c: tl_mcast of a NULL tensor.
// args: --topo topologies/small.yaml
// expect: tests/bad/kernels/null_mcast.c:@LINE@: error: PE sip0.cube0.pe0: tl_mcast: t is NULL
// expect-count: 1
 */
#include <cubesim/tl.h>

#include "pe0.h"

static void fault(tl_ctx *tl, const void *argp)
{
        tl_mcast(tl, 0, 0, 1, 2, NULL, 7); /* FAULT */
}

CASE_TABLE(.name = "null_mcast");
