/* tests/bad/kernels/view_overflow.c: a view whose start + extent wraps int64 passes no bounds
 * check: it is refused before any byte moves (it used to write before the
 * buffer).
// args: --topo topologies/small.yaml --mode data
// expect: tests/bad/kernels/view_overflow.c:@LINE@: error: PE sip0.cube0.pe0: tl_view: out of bounds: axis 1, start 9223372036854775805 + extent 4 overflows (extent 8 of x)
// expect-count: 1
 */
#include <cubesim/tl.h>

#include "hbm_x.h"
#include "pe0.h"

static void fault(tl_ctx *tl, const void *argp)
{
        const struct args *a = argp;
        int64_t start[2] = { 0, INT64_MAX - 2 }, shape[2] = { 1, 4 };
        tl_tensor *t = tl_load(tl, tl_view(tl, a->x, start, shape)); /* FAULT */
        tl_store(tl, a->x, t);
}

CASE_KERNEL("view_overflow");
