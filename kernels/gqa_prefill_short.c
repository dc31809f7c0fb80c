/* kernels/gqa_prefill_short.c: GQA prefill, short context.
 *
 * Each cube owns whole KV heads (kv_per_cube at a time, dealt in rounds as
 * in gqa_decode_short). A cube's PEs form one group per owned KV head; the
 * group's blocks (query heads x query rows) are dealt to its PEs in snake
 * order by row, each block attending to the keys it sees (tiles causality
 * hides are not fetched). See gqa_prefill_run for the block pipeline. */
#include "gqa_common.h"

static void prefill_short(tl_ctx *tl, const void *argp)
{
        const struct gqa_args *a = argp;
        struct gqa_short m;
        if (!gqa_short_map(tl, a, &m))
                return;
        struct gqa_prefill_work w;
        gqa_prefill_work_init(tl, a, &w, (int64_t[]){ 0, a->sq }, (int64_t[]){ a->sq, a->sq }, &m,
                              m.pg, m.member);
        gqa_prefill_run(tl, a, &w);
}

GQA_KERNEL(gqa_prefill_short,
           "GQA prefill, short context: cubes own whole KV heads, fully resident, no ring",
           prefill_short, GQA_PREFILL_SHORT, GQA_PREFILL_IO_HELP,
           GQA_PARAMS_SHAPE(2048), GQA_PARAMS_PREFILL, GQA_PARAMS_SHORT);
