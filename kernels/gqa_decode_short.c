/* kernels/gqa_decode_short.c: GQA decode, short context.
 *
 * No sequence split across cubes: each cube owns whole KV heads,
 * kv_per_cube of them at a time (pairs (batch, KV head) are dealt to the
 * cubes in rounds). A cube's PEs form one group per owned KV head; the
 * group's query heads are folded into M (as in gqa_decode) and run on the
 * group's PEs in parallel, each PE taking a slice of the keys; a binary
 * tree inside the group (gqa_tree) brings the partial states to the
 * group's first PE, which writes o. */
#include "gqa_common.h"

static void decode_short(tl_ctx *tl, const void *argp)
{
        const struct gqa_args *a = argp;
        struct gqa_short m;
        if (!gqa_short_map(tl, a, &m))
                return;
        struct gqa_decode_plan p = {
                .n_pairs = m.n_pairs, .pair0 = m.pair0, .round_stride = m.round_stride,
                .group0 = m.group0, .group_step = m.group_step, .groups = m.groups,
                .kv_tile = a->kv_tile, .parent = -1,
        };
        gqa_split(a->s, m.pg, m.member, &p.s0, &p.s1);
        gqa_tree(tl, &p, (int64_t)m.cube * tl_num_programs(tl, 0) + m.first_pe, m.member, m.pg);
        gqa_decode_run(tl, a, &p);
}

GQA_KERNEL(gqa_decode_short,
           "GQA decode, short context: cubes own whole KV heads, tree reduce per group",
           decode_short, GQA_DECODE_SHORT, GQA_DECODE_IO_HELP,
           GQA_PARAMS_SHAPE(4096), GQA_PARAMS_SHORT);
