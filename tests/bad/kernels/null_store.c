/* tests/bad/kernels/null_store.c: tl_store of a NULL source.
// args: --topo topologies/small.yaml
// expect: tests/bad/kernels/null_store.c:@LINE@: error: PE sip0.cube0.pe0: tl_store: src is NULL
// expect-count: 1
 */
#include <cubesim/tl.h>

#include "hbm_x.h"
#include "pe0.h"

static void fault(tl_ctx *tl, const void *argp)
{
        const struct args *a = argp;
        tl_store(tl, a->x, NULL); /* FAULT */
}

CASE_KERNEL("null_store");
