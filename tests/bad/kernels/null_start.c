/* tests/bad/kernels/null_start.c: tl_view with a NULL start.
// args: --topo topologies/small.yaml
// expect: tests/bad/kernels/null_start.c:@LINE@: error: PE sip0.cube0.pe0: tl_view: start is NULL
// expect-count: 1
 */
#include <cubesim/tl.h>

#include "hbm_x.h"
#include "pe0.h"

static void fault(tl_ctx *tl, const void *argp)
{
        const struct args *a = argp;
        int64_t shape[2] = { 4, 4 };
        tl_view(tl, a->x, NULL, shape); /* FAULT */
}

CASE_KERNEL("null_start");
