/* tests/bad/kernels/null_load.c: tl_load of a NULL tensor.
// args: --topo topologies/small.yaml
// expect: tests/bad/kernels/null_load.c:@LINE@: error: PE sip0.cube0.pe0: tl_load: src is NULL
// expect-count: 1
 */
#include <cubesim/tl.h>

#include "pe0.h"

static void fault(tl_ctx *tl, const void *argp)
{
        tl_load(tl, NULL); /* FAULT */
}

CASE_TABLE(.name = "null_load");
