/* tests/bad/kernels/oob_view.c: one PE views past the end of an HBM tensor.
 * The run stops at that call: exit 1, the kernel's file:line, the PE, the op.
// args: --topo topologies/small.yaml
// expect: tests/bad/kernels/oob_view.c:@LINE@: error: PE sip0.cube0.pe3: tl_view: out of bounds: axis 0, [32, 96) of extent 64 of x
// expect-count: 1
 */
#include <cubesim/tl.h>

#define HBM_X_SHAPE 64, 64
#include "hbm_x.h"

static void body(tl_ctx *tl, const void *argp)
{
        const struct args *a = argp;
        int64_t start[2] = { 32, 0 }, shape[2] = { 64, 64 };
        if (tl_rank(tl, -1, -1, -1) == 3)
                tl_load(tl, tl_view(tl, a->x, start, shape)); /* FAULT */
}

CASE_KERNEL("oob_view");
