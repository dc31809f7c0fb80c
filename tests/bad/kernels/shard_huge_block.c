/* tests/bad/kernels/shard_huge_block.c: a block-cyclic shard whose block
 * is so large that a round of blocks over the 4 cubes (block x 4) does not
 * fit in 64 bits: bad input naming the call's line and the values (it
 * wrapped to 0 and divided by zero, or wrapped to a small round and gave a
 * wrong capacity). A block that fits, however large, is counted exactly:
 * y's, 2^61 rows a block over 4 cubes, is all on cube 0 and fits.
// expect: tests/bad/kernels/shard_huge_block.c:@LINE@: error: kernel shard_huge_block: tl_setup_shard: tensor x: block 4611686018427387904 over 4 cubes: a round of blocks (block x cubes) overflows 64 bits
// expect: tests/bad/kernels/shard_huge_block.c:29: error: kernel shard_huge_block: tl_setup_shard: tensor z: block 4611686018427387905 over 4 cubes
// expect-count: 2
// status: 2
 */
#include <cubesim/tl.h>

#include "case.h"

struct args {
        tl_tensor *x, *y, *z;        /* inputs [8, 8] */
};

static void setup(tl_setup *s, void *argp)
{
        struct args *a = argp;
        int64_t shape[2] = { 8, 8 };
        a->x = tl_setup_tensor(s, "x", TL_INPUT, TL_FP32, 2, shape);
        a->y = tl_setup_tensor(s, "y", TL_INPUT, TL_FP32, 2, shape);
        a->z = tl_setup_tensor(s, "z", TL_INPUT, TL_FP32, 2, shape);
        tl_setup_shard(s, a->x, 0, INT64_C(1) << 62); /* FAULT */
        tl_setup_shard(s, a->y, 1, INT64_C(1) << 61);
        tl_setup_shard(s, a->z, 0, (INT64_C(1) << 62) + 1);
}

static void body(tl_ctx *tl, const void *argp)
{
}

CASE_TABLE(.name = "shard_huge_block", .args_size = sizeof(struct args), .setup = setup);
