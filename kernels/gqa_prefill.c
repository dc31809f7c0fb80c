/* kernels/gqa_prefill.c: GQA prefill, long context.
 *
 * Sequence-parallel over cubes, head-parallel inside a cube. The query
 * sequence is split over the C cubes, zigzag so that causal work is
 * balanced: of 2C equal chunks of rows, cube c owns chunks c and
 * 2C - 1 - c. A cube's blocks (query rows x heads of one KV group) are
 * dealt to its PEs in snake order by row, so every PE gets early and late
 * rows alike. Every cube's HBM holds a copy of K and V, so each PE streams
 * the keys its blocks see from its own cube's HBM: a ring of cubes passing
 * KV blocks on would move the same bytes over the die-to-die links and
 * add a serial phase (measured 0.5 ms at 8K), so there is none. Each cube
 * writes its own rows of o. See gqa_prefill_run for the block pipeline. */
#include "gqa_common.h"

static void prefill(tl_ctx *tl, const void *argp)
{
        const struct gqa_args *a = argp;
        int pes = tl_num_programs(tl, 0), cubes = gqa_cube_count(tl);
        int gc = gqa_cube_index(tl), e = tl_program_id(tl, 0);
        int64_t lo[2], hi[2];
        gqa_split(a->sq, 2 * cubes, gc, &lo[0], &hi[0]);
        gqa_split(a->sq, 2 * cubes, 2 * cubes - 1 - gc, &lo[1], &hi[1]);
        struct gqa_prefill_work w;
        gqa_prefill_work_init(tl, a, &w, lo, hi, NULL, pes, e);
        gqa_prefill_run(tl, a, &w);
}

GQA_KERNEL(gqa_prefill,
           "GQA prefill, long context: query rows over cubes (zigzag), blocks over a cube's PEs",
           prefill, GQA_PREFILL, GQA_PREFILL_IO_HELP,
           GQA_PARAMS_SHAPE(2048), GQA_PARAMS_PREFILL);
