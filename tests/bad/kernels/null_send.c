/* tests/bad/kernels/null_send.c: tl_send of a NULL tensor.
// args: --topo topologies/small.yaml
// expect: tests/bad/kernels/null_send.c:@LINE@: error: PE sip0.cube0.pe0: tl_send: t is NULL
// expect-count: 1
 */
#include <cubesim/tl.h>

#include "pe0.h"

static void fault(tl_ctx *tl, const void *argp)
{
        tl_send(tl, 1, NULL, 7); /* FAULT */
}

CASE_TABLE(.name = "null_send");
