/* tests/bad/kernels/null_shape.c: tl_alloc with a NULL shape.
// args: --topo topologies/small.yaml
// expect: tests/bad/kernels/null_shape.c:@LINE@: error: PE sip0.cube0.pe0: tl_alloc: shape is NULL
// expect-count: 1
 */
#include <cubesim/tl.h>

#include "pe0.h"

static void fault(tl_ctx *tl, const void *argp)
{
        tl_alloc(tl, TL_TCM, TL_FP32, 2, NULL); /* FAULT */
}

CASE_TABLE(.name = "null_shape");
