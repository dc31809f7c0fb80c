/* tests/bad/kernels/null_math.c: a MATH op on a NULL operand.
// args: --topo topologies/small.yaml
// expect: tests/bad/kernels/null_math.c:@LINE@: error: PE sip0.cube0.pe0: add: b is NULL
// expect-count: 1
 */
#include <cubesim/tl.h>

#include "hbm_x.h"
#include "pe0.h"

static void fault(tl_ctx *tl, const void *argp)
{
        const struct args *a = argp;
        tl_tensor *t = tl_load(tl, a->x);
        tl_add(tl, t, NULL); /* FAULT */
}

CASE_KERNEL("null_math");
