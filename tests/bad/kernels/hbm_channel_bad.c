/* tests/bad/kernels/hbm_channel_bad.c: tl_setup_hbm_channel with a channel
 * the machine does not have, twice on one tensor, or on a TCM-sharded
 * tensor is bad input naming the call: the bytes would have no channel, or
 * one call would silently undo the other.
// args: --topo topologies/small.yaml
// expect: tests/bad/kernels/hbm_channel_bad.c:@LINE@: error: kernel hbm_channel_bad: tl_setup_hbm_channel: tensor x: channel 99, expected 0..
// expect: tests/bad/kernels/hbm_channel_bad.c:21: error: kernel hbm_channel_bad: tl_setup_hbm_channel: tensor y is already held in channel 1; a tensor's channel is set once
// expect: tests/bad/kernels/hbm_channel_bad.c:22: error: kernel hbm_channel_bad: tl_setup_hbm_channel: tensor z lives in the PEs' TCM (tl_setup_tensor_sharded): it has no HBM channel
// expect-count: 3
// status: 2
 */
#include <cubesim/tl.h>

#include "case.h"

static void setup(tl_setup *s, void *argp)
{
        struct case_xyz *a = case_xyz_declare(s, argp, 1);
        tl_setup_hbm_channel(s, a->x, 99); /* FAULT */
        tl_setup_hbm_channel(s, a->y, 1);
        tl_setup_hbm_channel(s, a->y, 0);
        tl_setup_hbm_channel(s, a->z, 0);
}

static void body(tl_ctx *tl, const void *argp)
{
}

CASE_TABLE(.name = "hbm_channel_bad", .args_size = sizeof(struct case_xyz), .setup = setup);
