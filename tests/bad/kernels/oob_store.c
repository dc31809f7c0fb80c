/* tests/bad/kernels/oob_store.c: a store whose source does not fit its
 * destination (a tile one row too tall), in data mode.
// args: --topo topologies/small.yaml --mode data
// expect: tests/bad/kernels/oob_store.c:@LINE@: error: PE sip0.cube0.pe0: tl_store: shape mismatch: destination [8, 64], source [9, 64]
 */
#include <cubesim/tl.h>

#define HBM_X_ROLE TL_OUTPUT
#define HBM_X_SHAPE 64, 64
#include "hbm_x.h"

static void body(tl_ctx *tl, const void *argp)
{
        const struct args *a = argp;
        int64_t start[2] = { 8 * tl_rank(tl, -1, -1, -1), 0 }, shape[2] = { 8, 64 };
        int64_t tall[2] = { 9, 64 };
        tl_tensor *t = tl_fill(tl, TL_FP32, 2, tall, 1.0f);
        tl_store(tl, tl_view(tl, a->x, start, shape), t); /* FAULT */
}

CASE_KERNEL("oob_store");
