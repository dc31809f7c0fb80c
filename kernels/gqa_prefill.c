/* kernels/gqa_prefill.c: GQA prefill, long context.
 *
 * Head-parallel inside a cube: units of hpp query heads of one KV group
 * are dealt to the cube's PEs (the same unit to PE e of every cube). The
 * query sequence is split over the C cubes, zigzag so that causal work is
 * balanced: of 2C equal chunks of rows, cube c owns chunks c and
 * 2C - 1 - c. The key sequence is split into C blocks; cube c starts with
 * key block c. The KV blocks rotate around the ring of cubes: while a
 * PE runs its first query block of a unit, it reads its own block's tiles
 * from HBM and sends each to the next cube, then at every ring step
 * receives the tiles of the next block from the previous cube, forwards
 * them, and merges them into the block's running state. The cube keeps
 * what the ring brought, so the unit's later query blocks read every
 * block from the cube's HBM, skipping tiles that causality hides. Each
 * cube writes its own rows of o. */
#include "gqa_common.h"

static const struct tl_param params[] = {
        GQA_PARAMS_SHAPE(2048),
        GQA_PARAMS_PREFILL,
        GQA_PARAMS_END,
};

static void prefill(tl_ctx *tl, const void *argp)
{
        const struct gqa_args *a = argp;
        int pes = tl_num_programs(tl, 0), cubes = gqa_cube_count(tl);
        int gc = gqa_cube_index(tl), e = tl_program_id(tl, 0);
        int64_t lo[2], hi[2];
        gqa_split(a->sq, 2 * cubes, gc, &lo[0], &hi[0]);
        gqa_split(a->sq, 2 * cubes, 2 * cubes - 1 - gc, &lo[1], &hi[1]);
        int64_t rows = hi[0] - lo[0] + hi[1] - lo[1];
        int64_t hpp, qt;
        gqa_prefill_shape(a, a->batch * a->hkv, false, pes, rows, &hpp, &qt);
        int64_t blocks = a->group / hpp, units = a->batch * a->hkv * blocks;
        struct gqa_kv_plan kv = { .n_blocks = cubes, .first = gc, .prev = -1, .next = -1 };
        if (cubes > 1) {
                kv.prev = gqa_rank(tl, (gc + cubes - 1) % cubes, e);
                kv.next = gqa_rank(tl, (gc + 1) % cubes, e);
        }
        struct gqa_prefill_pe pf = { 0 };
        for (int64_t u = e; u < units; u += pes) {
                int64_t bk = u / blocks;
                struct gqa_qblock qb = { .b = bk / a->hkv, .kvh = bk % a->hkv, .hpp = hpp };
                qb.h0 = qb.kvh * a->group + (u % blocks) * hpp;
                kv.ring = cubes > 1;
                if (rows == 0) {
                        /* No rows here: the block only keeps the ring going. */
                        if (kv.ring)
                                gqa_prefill_block(tl, a, &pf, &qb, &kv);
                        continue;
                }
                for (int part = 0; part < 2; part++)
                        for (int64_t i0 = lo[part]; i0 < hi[part]; i0 += qt) {
                                qb.i0 = i0;
                                qb.ql = hi[part] - i0 < qt ? hi[part] - i0 : qt;
                                gqa_prefill_block(tl, a, &pf, &qb, &kv);
                                kv.ring = false;
                        }
        }
}

GQA_KERNEL(gqa_prefill,
           "GQA prefill, long context: heads over a cube's PEs, KV blocks rotate on a ring",
           prefill, params, GQA_PREFILL, GQA_PREFILL_IO_HELP);
