/* tests/bad/kernels/shard_huge_block.c: a block-cyclic shard whose block
 * is so large that a round of blocks over the 4 cubes (block x 4) does not
 * fit in 64 bits: bad input naming the call's line and the values (it
 * wrapped to 0 and divided by zero, or wrapped to a small round and gave a
 * wrong capacity). A block that fits, however large, is counted exactly:
 * y's, 2^61 rows a block over 4 cubes, is all on cube 0 and fits.
// expect: tests/bad/kernels/shard_huge_block.c:@LINE@: error: kernel shard_huge_block: tl_setup_shard: tensor x: block 4611686018427387904 over 4 cubes: a round of blocks (block x cubes) overflows 64 bits
// expect: tests/bad/kernels/shard_huge_block.c:21: error: kernel shard_huge_block: tl_setup_shard: tensor z: block 4611686018427387905 over 4 cubes
// expect-count: 2
// status: 2
 */
#include <cubesim/tl.h>

#include "case.h"

static void setup(tl_setup *s, void *argp)
{
        struct case_xyz *a = case_xyz_declare(s, argp, 0);
        tl_setup_shard(s, a->x, 0, INT64_C(1) << 62); /* FAULT */
        tl_setup_shard(s, a->y, 1, INT64_C(1) << 61);
        tl_setup_shard(s, a->z, 0, (INT64_C(1) << 62) + 1);
}

static void body(tl_ctx *tl, const void *argp)
{
}

CASE_TABLE(.name = "shard_huge_block", .args_size = sizeof(struct case_xyz), .setup = setup);
