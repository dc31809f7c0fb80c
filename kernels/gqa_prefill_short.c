/* kernels/gqa_prefill_short.c: GQA prefill, short context.
 *
 * Each cube owns whole KV heads (kv_per_cube at a time, dealt in rounds as
 * in gqa_decode_short) and each owned head is fully resident: no ring.
 * A cube's PEs form one group per owned KV head; the group's work (blocks
 * of hpp query heads x q_tile rows) is dealt round-robin to its PEs, each
 * block attending to every key of the head it needs (causal tiles skipped). */
#include "gqa_common.h"

static const struct tl_param params[] = {
        GQA_PARAMS_SHAPE(2048),
        GQA_PARAMS_PREFILL,
        GQA_PARAMS_SHORT,
        GQA_PARAMS_END,
};

static void prefill_short(tl_ctx *tl, const void *argp)
{
        const struct gqa_args *a = argp;
        struct gqa_short m;
        gqa_short_map(tl, a, &m);
        if (m.n_pairs == 0)
                return;
        int64_t hpp, qt;
        gqa_prefill_shape(a, 1, true, m.pg, a->sq, &hpp, &qt);
        int64_t hblocks = a->group / hpp, qblocks = (a->sq + qt - 1) / qt;
        struct gqa_kv_plan kv = { .n_blocks = 1, .first = 0, .prev = -1, .next = -1 };
        struct gqa_prefill_pe pf = { 0 };
        for (int64_t i = 0; i < m.n_pairs; i++) {
                int64_t pair = gqa_short_pair(&m, i);
                for (int64_t j = m.member; j < hblocks * qblocks; j += m.pg) {
                        struct gqa_qblock qb = { .b = pair / a->hkv, .kvh = pair % a->hkv,
                                                 .hpp = hpp };
                        qb.h0 = qb.kvh * a->group + (j / qblocks) * hpp;
                        qb.i0 = (j % qblocks) * qt;
                        qb.ql = a->sq - qb.i0 < qt ? a->sq - qb.i0 : qt;
                        gqa_prefill_block(tl, a, &pf, &qb, &kv);
                }
        }
}

GQA_KERNEL(gqa_prefill_short,
           "GQA prefill, short context: cubes own whole KV heads, fully resident, no ring",
           prefill_short, params, GQA_PREFILL_SHORT, GQA_PREFILL_IO_HELP);
