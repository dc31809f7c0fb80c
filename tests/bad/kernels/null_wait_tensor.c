/* tests/bad/kernels/null_wait_tensor.c: tl_wait_tensor on NULL.
// args: --topo topologies/small.yaml
// expect: tests/bad/kernels/null_wait_tensor.c:@LINE@: error: PE sip0.cube0.pe0: tl_wait_tensor: t is NULL
// expect-count: 1
 */
#include <cubesim/tl.h>

#include "pe0.h"

static void fault(tl_ctx *tl, const void *argp)
{
        tl_wait_tensor(tl, NULL); /* FAULT */
}

CASE_TABLE(.name = "null_wait_tensor");
