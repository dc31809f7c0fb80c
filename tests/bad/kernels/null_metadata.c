/* tests/bad/kernels/null_metadata.c: tl_dim of NULL.
// args: --topo topologies/small.yaml
// expect: tests/bad/kernels/null_metadata.c:@LINE@: error: PE sip0.cube0.pe0: tl_dim: the tensor is NULL
// expect-count: 1
 */
#include <cubesim/tl.h>

#include "pe0.h"

static void fault(tl_ctx *tl, const void *argp)
{
        if (tl_dim(NULL, 0) == 0) /* FAULT */
                tl_load(tl, NULL);
}

CASE_TABLE(.name = "null_metadata");
