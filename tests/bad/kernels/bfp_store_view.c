/* tests/bad/kernels/bfp_store_view.c: a store into a view of a bfp8_b
 * tensor whose rows start at column 20, inside a block of 16: its blocks
 * would be grouped from the view's first column, not the tensor's, and the
 * output would depend on the tiling (docs/adr/0019). The store at column
 * 16 before it is fine.
// args: --topo topologies/small.yaml --mode data
// expect: tests/bad/kernels/bfp_store_view.c:@LINE@: error: PE sip0.cube0.pe0: tl_store: dst: a bfp8_b view with a row starting at column 20 of 48: a block float is written in whole blocks of 16 along the last axis, so a view written to starts each row at a multiple of 16
// expect-count: 1
 */
#include <cubesim/tl.h>

#include "pe0.h"

struct args {
        tl_tensor *c;                /* HBM output [8, 48], bfp8_b */
};

static void setup(tl_setup *s, void *argp)
{
        struct args *a = argp;
        a->c = tl_setup_tensor(s, "c", TL_OUTPUT, TL_BFP8_B, 2, ((int64_t[]){ 8, 48 }));
}

static void fault(tl_ctx *tl, const void *argp)
{
        const struct args *a = argp;
        tl_tensor *x = tl_fill(tl, TL_FP32, 2, ((int64_t[]){ 8, 4 }), 1.0f);
        tl_store(tl, tl_view(tl, a->c, ((int64_t[]){ 0, 16 }), ((int64_t[]){ 8, 4 })), x);
        tl_store(tl, tl_view(tl, a->c, ((int64_t[]){ 0, 20 }), ((int64_t[]){ 8, 4 })), x); /* FAULT */
}

CASE_TABLE(.name = "bfp_store_view", .args_size = sizeof(struct args), .setup = setup);
