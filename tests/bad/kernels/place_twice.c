/* tests/bad/kernels/place_twice.c: a tensor's placement set twice (here
 * sharded, then replicated; even the same placement again) is bad input
 * naming both calls: one call would silently undo the other.
// args: --topo topologies/small.yaml
// expect: tests/bad/kernels/place_twice.c:@LINE@: error: kernel place_twice: tl_setup_replicate: tensor x is already placed (sharded along axis 0, at tests/bad/kernels/place_twice.c:24); a tensor's placement is set once
// expect: tests/bad/kernels/place_twice.c:27: error: kernel place_twice: tl_setup_interleave: tensor y is already placed (interleaved, at tests/bad/kernels/place_twice.c:26)
// expect-count: 2
// status: 2
 */
#include <cubesim/tl.h>

#include "case.h"

struct args {
        tl_tensor *x, *y;            /* inputs [8, 8] */
};

static void setup(tl_setup *s, void *argp)
{
        struct args *a = argp;
        int64_t shape[2] = { 8, 8 };
        a->x = tl_setup_tensor(s, "x", TL_INPUT, TL_FP32, 2, shape);
        a->y = tl_setup_tensor(s, "y", TL_INPUT, TL_FP32, 2, shape);
        tl_setup_shard(s, a->x, 0, 0);
        tl_setup_replicate(s, a->x); /* FAULT */
        tl_setup_interleave(s, a->y);
        tl_setup_interleave(s, a->y);
}

static void body(tl_ctx *tl, const void *argp)
{
}

CASE_TABLE(.name = "place_twice", .args_size = sizeof(struct args), .setup = setup);
