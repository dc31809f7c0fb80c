/* plan/plan.c: the pipeline planner and the feeder. See plan.h. */
#include "plan/plan.h"

#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "base/ckd.h"
#include "base/muldiv.h"
#include "base/util.h"

static struct plan_stage math_stage(const struct plan_op *op)
{
        return (struct plan_stage){ .unit = PLAN_MATH, .op = op->name, .scope = op->scope,
                                    .cost_op = op->cost_op, .elements = op->elements };
}

/* The tile counts of out's GEMM, its tile sizes defaulted (64) first. */
static void gemm_tiles(struct pipeline_plan *out)
{
        struct plan_gemm *g = &out->gemm;
        if (g->tile_m <= 0)
                g->tile_m = 64;
        if (g->tile_n <= 0)
                g->tile_n = 64;
        if (g->tile_k <= 0)
                g->tile_k = 64;
        out->tiles_m = (g->m + g->tile_m - 1) / g->tile_m;
        out->tiles_n = (g->n + g->tile_n - 1) / g->tile_n;
        out->tiles_k = (g->k + g->tile_k - 1) / g->tile_k;
}

int plan_generate_from_ops(const struct plan_op *ops, int n, const struct plan_gemm *gemm,
                           struct pipeline_plan *out, char *err, size_t err_len)
{
        /* The header only: the stages past the counts, and the GEMM
         * without one, are never read (a plan is generated per composite). */
        out->n_prologue = out->n_k_tile = out->n_out_tile = out->n_post = 0;
        out->has_gemm = false;
        out->tiles_m = out->tiles_n = out->tiles_k = 0;
        if (n > PLAN_MAX_OPS) {
                snprintf(err, err_len, "%d ops; a composite holds at most %d", n, PLAN_MAX_OPS);
                return -1;
        }
        int head = -1;
        for (int i = 0; i < n; i++) {
                if (!ops[i].gemm)
                        continue;
                if (head >= 0) {
                        snprintf(err, err_len, "two GEMM ops (#%d %s and #%d %s); a composite has "
                                 "at most one", head, ops[head].name, i, ops[i].name);
                        return -1;
                }
                head = i;
        }
        if (head < 0) {
                /* MATH only: the plain plan, every op one stage, in order. */
                for (int i = 0; i < n; i++)
                        out->stage[out->n_prologue++] = math_stage(&ops[i]);
                return 0;
        }
        for (int i = 0; i < head; i++) {
                if (ops[i].scope != TL_SCOPE_KERNEL) {
                        snprintf(err, err_len, "op #%d %s comes before the GEMM but has a tile "
                                 "scope; ops before the GEMM must have KERNEL scope", i,
                                 ops[i].name);
                        return -1;
                }
                if (ops[i].reads_hbm && i != 0) {
                        snprintf(err, err_len, "prologue op #%d %s reads HBM tensor '%s'; prologue "
                                 "ops read TCM only (load it first)", i, ops[i].name,
                                 ops[i].hbm_name ? ops[i].hbm_name : "?");
                        return -1;
                }
                out->stage[out->n_prologue++] = math_stage(&ops[i]);
        }
        out->has_gemm = true;
        if (gemm != &out->gemm)
                out->gemm = *gemm;
        gemm_tiles(out);
        /* The ops after the GEMM, by scope in section order, each in op order. */
        static const tl_cscope order[3] = { TL_SCOPE_K_TILE, TL_SCOPE_OUTPUT_TILE,
                                            TL_SCOPE_KERNEL };
        int *count[3] = { &out->n_k_tile, &out->n_out_tile, &out->n_post };
        int at = out->n_prologue;
        for (int sec = 0; sec < 3; sec++)
                for (int i = head + 1; i < n; i++)
                        if (ops[i].scope == order[sec]) {
                                out->stage[at++] = math_stage(&ops[i]);
                                (*count[sec])++;
                        }
        return 0;
}

void plan_replan(struct pipeline_plan *out, const struct pipeline_plan *like,
                 const struct plan_gemm *gemm, const uint64_t *elements)
{
        int n = like->n_prologue + like->n_k_tile + like->n_out_tile + like->n_post;
        out->n_prologue = like->n_prologue;
        out->n_k_tile = like->n_k_tile;
        out->n_out_tile = like->n_out_tile;
        out->n_post = like->n_post;
        out->has_gemm = like->has_gemm;
        out->tiles_m = out->tiles_n = out->tiles_k = 0;
        memcpy(out->stage, like->stage, (size_t)n * sizeof out->stage[0]);
        for (int i = 0; i < n; i++)
                out->stage[i].elements = elements[i];
        if (!like->has_gemm)
                return;
        if (gemm != &out->gemm)
                out->gemm = *gemm;
        gemm_tiles(out);
}

uint64_t plan_n_completions(const struct pipeline_plan *p)
{
        uint64_t tiles = p->has_gemm ? (uint64_t)(p->tiles_m * p->tiles_n * p->tiles_k) : 0;
        return (uint64_t)p->n_prologue + tiles + (uint64_t)p->n_post;
}

/* ---- the feeder ------------------------------------------------------------------ */

static const char *scope_name(tl_cscope s)
{
        switch (s) {
        case TL_SCOPE_OUTPUT_TILE: return "output_tile";
        case TL_SCOPE_K_TILE: return "k_tile";
        case TL_SCOPE_KERNEL: return "kernel";
        }
        return "?";
}

static const char *const unit_component[] = { "pe_dma", "pe_gemm", "pe_math", "pe_dma" };
static const enum rep_engine unit_engine[] = { REP_ENG_DMA, REP_ENG_GEMM, REP_ENG_MATH,
                                               REP_ENG_DMA };

/* The elements x cycles per element of a MATH stage of flops elements. */
static uint64_t elem_cycles_of(const struct plan_ctx *pc, const struct plan_stage *st,
                               uint64_t flops)
{
        return st->unit != PLAN_MATH ? 0 :
               flops * pc->pe->sim->topo->pe.math.cycles_per_element[st->cost_op];
}

/* The op_log record of a stage (log_stage), out of the tallying path. */
__attribute__((noinline)) static void log_record(struct plan_ctx *pc, const struct plan_stage *st,
                                                 const char *op, int64_t tile, sim_ps start,
                                                 sim_ps end, uint64_t bytes, uint64_t flops,
                                                 enum topo_mac_dt mac_dt)
{
        struct rep_op rec = { .pe = pc->pe->name, .pe_index = pc->pe->global,
                              .component = unit_component[st->unit], .op = op,
                              .start_ps = start, .end_ps = end, .bytes = bytes, .flops = flops,
                              .elem_cycles = elem_cycles_of(pc, st, flops),
                              .mac_dt = (uint8_t)mac_dt };
        struct rep_param p[5] = {
                { .name = "composite", .kind = REP_INT, .i = 1 },
                { .name = "scope", .kind = REP_STR, .s = scope_name(st->scope) },
                { .name = "stage_op", .kind = REP_STR, .s = st->op },
                { .name = "tile", .kind = REP_INT, .i = tile },
                { .name = "unit", .kind = REP_STR,
                  .s = st->unit == PLAN_DMA_READ ? "dma_read"
                       : st->unit == PLAN_DMA_WRITE ? "dma_write"
                       : st->unit == PLAN_GEMM ? "gemm" : "math" },
        };
        rec.params = p;
        rec.n_params = 5;
        pc->log(pc->log_ctx, &rec);
}

/* A stage placed: tallied (inline: every stage of every composite comes
 * here), or recorded; mac_dt: a GEMM stage's operand class (else unused). */
static inline void log_stage_dt(struct plan_ctx *pc, const struct plan_stage *st,
                                const char *op, int64_t tile, sim_ps start, sim_ps end,
                                uint64_t bytes, uint64_t flops, enum topo_mac_dt mac_dt)
{
        if (pc->tally) {
                enum rep_engine e = unit_engine[st->unit];
                pc->busy_ps[e] += end - start;
                rep_work_add(&pc->work, e, bytes, flops, elem_cycles_of(pc, st, flops), mac_dt);
                if (unlikely(pc->dep != NULL))
                        pc->dep(pc->dep_ctx, unit_component[st->unit], op, start, end);
        } else if (pc->log) {
                log_record(pc, st, op, tile, start, end, bytes, flops, mac_dt);
        }
}

/* log_stage_dt of a DMA or MATH stage. */
static inline void log_stage(struct plan_ctx *pc, const struct plan_stage *st, const char *op,
                             int64_t tile, sim_ps start, sim_ps end, uint64_t bytes,
                             uint64_t flops)
{
        log_stage_dt(pc, st, op, tile, start, end, bytes, flops, TOPO_MAC_BF16);
}

/* One MATH stage from at (and not before the tensors it reads are ready):
 * returns its end. */
static sim_ps run_math(struct plan_ctx *pc, const struct plan_stage *st, uint64_t elements,
                       int64_t tile, sim_ps at)
{
        if (pc->math_ready > at)
                at = pc->math_ready;
        /* fp32 in and out through TCM. */
        sim_ps start, end = hw_math_run(pc->pe, st->cost_op, elements,
                                        hw_math_row_reduction(st->cost_op), elements * 8, at,
                                        &start);
        log_stage(pc, st, st->op, tile, start, end, elements * 4, elements);
        return end;
}

static sim_ps max_ps(sim_ps a, sim_ps b) { return a > b ? a : b; }

static int64_t extent(int64_t total, int64_t tile, int64_t i)
{
        return total - i * tile < tile ? total - i * tile : tile;
}

static const struct plan_stage rd = { .unit = PLAN_DMA_READ, .op = "dma_read",
                                      .scope = TL_SCOPE_K_TILE };
static const struct plan_stage wr = { .unit = PLAN_DMA_WRITE, .op = "dma_write",
                                      .scope = TL_SCOPE_OUTPUT_TILE };
static const struct plan_stage gm = { .unit = PLAN_GEMM, .op = "gemm", .scope = TL_SCOPE_K_TILE };

/* The bytes of elems elements of a GEMM operand of elem_bytes, kbytes a
 * 1024 (plan_gemm): a block-float tile's shared exponents with its
 * mantissas, as the format stores them. */
static uint64_t operand_bytes(int64_t elems, uint32_t elem_bytes, uint32_t kbytes)
{
        if (!kbytes)
                return sat_mul_u64((uint64_t)elems, elem_bytes);
        return div_up(sat_mul_u64((uint64_t)elems, kbytes), 1024);
}

/* Place the rest of GEMM tile (r->tm, r->tn, r->tk) once its reads are
 * placed (they land at r->rd_ready), and advance to the next tile. */
static void place_tile_rest(struct plan_run *r)
{
        const struct pipeline_plan *p = &r->plan;
        const struct plan_gemm *g = &p->gemm;
        struct plan_ctx *pc = &r->pc;
        struct hw_pe *pe = pc->pe;
        int64_t mm = extent(g->m, g->tile_m, r->tm), nn = extent(g->n, g->tile_n, r->tn);
        int64_t kk = extent(g->k, g->tile_k, r->tk);
        sim_ps ready = r->rd_ready;
        uint64_t rd_bytes = r->rd_bytes;
        /* Operands in from TCM, the fp32 tile out. */
        uint64_t a_ops = operand_bytes(mm * kk, g->a_elem_bytes, g->a_kbytes);
        uint64_t b_ops = operand_bytes(kk * nn, g->b_elem_bytes, g->b_kbytes);
        uint64_t tcm = a_ops + b_ops + (uint64_t)(mm * nn) * 4;
        /* Accumulating: the engine starts the output tile from its values
         * in TCM (read once, at its first K tile) rather than from zero. */
        if (g->accumulate && r->tk == 0)
                tcm += (uint64_t)(mm * nn) * g->out_elem_bytes;
        sim_ps gs, ge = hw_gemm_run_fed(pe, (uint64_t)mm, (uint64_t)nn, (uint64_t)kk, tcm, a_ops,
                                        b_ops, ready, &gs);
        log_stage_dt(pc, &gm, "gemm", r->tile, gs, ge, rd_bytes, 2 * (uint64_t)(mm * nn * kk),
                     g->mac_dt);
        r->buf_free[r->i % PLAN_DEPTH] = ge;
        /* The MATH stages read the GEMM's result from TCM. */
        sim_ps te = ge;
        uint64_t tile_elems = (uint64_t)(mm * nn);
        for (int j = 0; j < p->n_k_tile; j++)
                te = run_math(pc, &plan_k_tile(p)[j], tile_elems, r->tile, te);
        if (r->tk == p->tiles_k - 1) {
                for (int j = 0; j < p->n_out_tile; j++)
                        te = run_math(pc, &plan_out_tile(p)[j], tile_elems, r->tile, te);
                if (!g->out_pinned) {
                        uint64_t b = tile_elems * g->out_elem_bytes;
                        sim_ps st0;
                        te = hw_dma_copy(pe, NULL, g->out_hbm ? &g->out_home : NULL, b, te,
                                         &st0);
                        log_stage(pc, &wr, "dma_write", r->tile, st0, te, b, 0);
                }
        }
        pc->completions++;
        pc->end = max_ps(pc->end, te);
        r->tile++;
        r->i++;
        if (++r->tk == p->tiles_k) {
                r->tk = 0;
                if (++r->tn == p->tiles_n) {
                        r->tn = 0;
                        r->tm++;
                }
        }
}

static void feed_tiles(struct plan_run *r);

/* Operand read i of the tile is placed: the rest of the tile once both are. */
static void read_placed(struct plan_run *r, int i, sim_ps start, sim_ps end)
{
        log_stage(&r->pc, &rd, "dma_read", r->tile, start, end, r->rd[i].bytes, 0);
        r->rd_ready = max_ps(r->rd_ready, end);
        if (--r->rd_pending || r->issuing)
                return; /* issue_reads goes on if it is still issuing */
        place_tile_rest(r);
        feed_tiles(r);
}

static void read_a_placed(struct hw_dma_req *req, sim_ps start, sim_ps end)
{
        read_placed(container_of(req, struct plan_run, rd[0]), 0, start, end);
}

static void read_b_placed(struct hw_dma_req *req, sim_ps start, sim_ps end)
{
        read_placed(container_of(req, struct plan_run, rd[1]), 1, start, end);
}

/* Issue the reads of the next GEMM tile's operands that are not pinned, at
 * at (its buffer is free by then), placed with the cube's other HBM
 * copies of this instant (hw_dma_copy_later). False while they are being
 * placed (read_placed goes on), true if there are none. */
static bool issue_reads(struct plan_run *r, sim_ps at)
{
        const struct plan_gemm *g = &r->plan.gemm;
        int64_t mm = extent(g->m, g->tile_m, r->tm), nn = extent(g->n, g->tile_n, r->tn);
        int64_t kk = extent(g->k, g->tile_k, r->tk);
        uint64_t a = g->a_pinned ? 0 : operand_bytes(mm * kk, g->a_elem_bytes, g->a_kbytes);
        uint64_t b = g->b_pinned ? 0 : operand_bytes(kk * nn, g->b_elem_bytes, g->b_kbytes);
        r->rd_ready = max_ps(r->operands, at);
        r->rd_bytes = a + b;
        r->rd_pending = (a > 0) + (b > 0);
        if (!r->rd_pending)
                return true;
        /* The rest of each request was set by plan_feed. */
        r->rd[0].bytes = a;
        r->rd[0].at = at;
        r->rd[1].bytes = b;
        r->rd[1].at = at;
        /* A read from TCM is placed (and counted) at once. */
        r->issuing = true;
        if (a > 0)
                hw_dma_copy_later(&r->rd[0]);
        if (b > 0)
                hw_dma_copy_later(&r->rd[1]);
        r->issuing = false;
        return r->rd_pending == 0;
}

/* The post-loop stages, then done. */
static void finish_feed(struct plan_run *r)
{
        const struct pipeline_plan *p = &r->plan;
        struct plan_ctx *pc = &r->pc;
        sim_ps t = pc->end;
        for (int i = 0; i < p->n_post; i++) {
                const struct plan_stage *st = &plan_post(p)[i];
                t = run_math(pc, st, st->elements, r->tile++, t);
                pc->completions++;
                pc->end = max_ps(pc->end, t);
        }
        if (pc->done)
                pc->done(pc->done_ctx, pc->end);
}

/* Place every GEMM tile whose buffer is free by now; wait for the next
 * (an event when its buffer frees, or its reads' placement). */
static void feed_tiles(struct plan_run *r)
{
        struct hw_sim *s = r->pc.pe->sim;
        sim_ps now = ev_now(&s->ev);
        while (r->tm < r->plan.tiles_m) {
                sim_ps free_at = r->buf_free[r->i % PLAN_DEPTH];
                if (free_at > now) {
                        ev_schedule_at(&s->ev, &r->next, free_at);
                        return;
                }
                if (!issue_reads(r, max_ps(free_at, r->pc.start)))
                        return;
                place_tile_rest(r);
        }
        finish_feed(r);
}

static void next_fire(struct ev_loop *ev, struct ev_event *e)
{
        (void)ev;
        feed_tiles(container_of(e, struct plan_run, next));
}

/* The operand read of a tile of p from home (from HBM if hbm): all but
 * its bytes and time, which issue_reads sets per tile. */
static void read_init(struct hw_dma_req *rq, const struct plan_ctx *pc, bool hbm,
                      const struct hw_hbm_span *home,
                      void (*done)(struct hw_dma_req *, sim_ps, sim_ps))
{
        rq->pe = pc->pe;
        rq->from_hbm = hbm;
        rq->to_hbm = false;
        rq->from_home = hbm ? home : NULL;
        rq->done = done;
}

void plan_feed(struct plan_run *r, const struct pipeline_plan *p, const struct plan_ctx *pc)
{
        /* The feed's state between where it runs (copied below) and the
         * operand reads (set up once below; their spans are most of the
         * feed's bytes). */
        memset((char *)r + offsetof(struct plan_run, operands), 0,
               offsetof(struct plan_run, rd) - offsetof(struct plan_run, operands));
        r->rd_pending = 0;
        r->issuing = false;
        r->rd_ready = 0;
        r->rd_bytes = 0;
        if (p != &r->plan)
                r->plan = *p;
        r->pc = *pc;
        r->pc.completions = 0;
        r->pc.end = pc->start;
        memset(r->pc.busy_ps, 0, sizeof r->pc.busy_ps);
        memset(&r->pc.work, 0, sizeof r->pc.work);
        r->next.fn = next_fire;

        /* Prologue: standalone one-stage tiles, each on PE_MATH. */
        sim_ps t = pc->start;
        for (int i = 0; i < p->n_prologue; i++) {
                const struct plan_stage *st = &plan_prologue(p)[i];
                t = run_math(&r->pc, st, st->elements, r->tile++, t);
                r->pc.completions++;
                r->pc.end = max_ps(r->pc.end, t);
        }
        if (!p->has_gemm) {
                finish_feed(r);
                return;
        }
        /* Their spans are the feed's own plan's: they live as long. */
        read_init(&r->rd[0], pc, p->gemm.a_hbm, &r->plan.gemm.a_home, read_a_placed);
        read_init(&r->rd[1], pc, p->gemm.b_hbm, &r->plan.gemm.b_home, read_b_placed);
        /* GEMM operands produced by the prologue wait for it. */
        r->operands = max_ps(p->n_prologue ? t : pc->start, pc->operands_ready);
        for (int i = 0; i < PLAN_DEPTH; i++)
                r->buf_free[i] = pc->start;
        feed_tiles(r);
}
