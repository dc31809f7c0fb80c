/* tests/bad/kernels/place_tcm_sharded.c: placement calls on a tensor of
 * tl_setup_tensor_sharded, which lives in the PEs' TCM and has no HBM
 * home: each is bad input naming its line (they were accepted, and
 * counted its bytes against the cubes' HBM as well).
// args: --topo topologies/small.yaml
// expect: tests/bad/kernels/place_tcm_sharded.c:@LINE@: error: kernel place_tcm_sharded: tl_setup_shard: tensor a lives in the PEs' TCM (tl_setup_tensor_sharded): it has no HBM home to place
// expect: tests/bad/kernels/place_tcm_sharded.c:27: error: kernel place_tcm_sharded: tl_setup_interleave: tensor b lives in the PEs' TCM
// expect: tests/bad/kernels/place_tcm_sharded.c:28: error: kernel place_tcm_sharded: tl_setup_replicate: tensor b lives in the PEs' TCM
// expect-count: 3
// status: 2
 */
#include <cubesim/tl.h>

#include "case.h"

struct args {
        tl_tensor *a, *b;            /* TCM-sharded inputs [64, 64] */
};

static void setup(tl_setup *s, void *argp)
{
        struct args *g = argp;
        int64_t shape[2] = { 64, 64 };
        g->a = tl_setup_tensor_sharded(s, "a", TL_INPUT, TL_FP32, 2, shape);
        g->b = tl_setup_tensor_sharded(s, "b", TL_INPUT, TL_FP32, 2, shape);
        tl_setup_shard(s, g->a, 0, 0); /* FAULT */
        tl_setup_interleave(s, g->b);
        tl_setup_replicate(s, g->b);
}

static void body(tl_ctx *tl, const void *argp)
{
}

CASE_TABLE(.name = "place_tcm_sharded", .args_size = sizeof(struct args), .setup = setup);
