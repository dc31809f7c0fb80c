/* plan/plan.c: the pipeline planner and the feeder. See plan.h. */
#include "plan/plan.h"

#include <stdio.h>
#include <string.h>

#include "base/util.h"

static struct plan_stage math_stage(const struct plan_op *op)
{
        return (struct plan_stage){ .unit = PLAN_MATH, .op = op->name, .scope = op->scope,
                                    .cost_op = op->cost_op, .elements = op->elements };
}

int plan_generate_from_ops(const struct plan_op *ops, int n, const struct plan_gemm *gemm,
                           struct pipeline_plan *out, char *err, size_t err_len)
{
        memset(out, 0, sizeof *out);
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
                        out->prologue[out->n_prologue++] = math_stage(&ops[i]);
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
                out->prologue[out->n_prologue++] = math_stage(&ops[i]);
        }
        out->has_gemm = true;
        out->gemm = *gemm;
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
        for (int i = head + 1; i < n; i++) {
                struct plan_stage st = math_stage(&ops[i]);
                switch (ops[i].scope) {
                case TL_SCOPE_K_TILE: out->k_tile[out->n_k_tile++] = st; break;
                case TL_SCOPE_OUTPUT_TILE: out->out_tile[out->n_out_tile++] = st; break;
                case TL_SCOPE_KERNEL: out->post[out->n_post++] = st; break;
                }
        }
        return 0;
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

static void log_stage(struct plan_ctx *pc, const struct plan_stage *st, const char *op,
                      int64_t tile, sim_ps start, sim_ps end, uint64_t bytes, uint64_t flops)
{
        if (!pc->log)
                return;
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
        struct rep_op rec = { .pe = pc->pe->name, .pe_index = pc->pe->global,
                              .component = unit_component[st->unit], .op = op,
                              .start_ps = start, .end_ps = end, .bytes = bytes, .flops = flops,
                              .params = p, .n_params = 5 };
        pc->log(pc->log_ctx, &rec);
}

/* One MATH stage from at: returns its end. */
static sim_ps run_math(struct plan_ctx *pc, const struct plan_stage *st, uint64_t elements,
                       int64_t tile, sim_ps at)
{
        const struct topo *t = pc->pe->sim->topo;
        sim_ps start, end = ev_resource_reserve(&pc->pe->math, at,
                                                hw_math_ps(t, st->cost_op, elements), &start);
        log_stage(pc, st, st->op, tile, start, end, elements * 4, elements);
        return end;
}

static sim_ps max_ps(sim_ps a, sim_ps b) { return a > b ? a : b; }

static int64_t extent(int64_t total, int64_t tile, int64_t i)
{
        return total - i * tile < tile ? total - i * tile : tile;
}

/* A token of bytes from graph node a to b, leaving at t: when it arrives.
 * If it cannot be routed, hw_xfer has stopped the run (EV_NOMEM): the
 * token costs nothing then, so no time past "never" is computed. */
static sim_ps token(struct hw_sim *s, uint32_t a, uint32_t b, uint64_t bytes, sim_ps t)
{
        sim_ps arrive = hw_xfer(s, a, b, bytes, t);
        return arrive == TOPO_PS_NONE ? t : arrive;
}

/* Where a GEMM tile is in the tile loop. */
struct tile_at {
        int64_t tm, tn, tk;          /* tile indices along M, N and K */
        int64_t tile;                /* its index in the op_log (after the prologue's) */
};

/* One GEMM tile through the pipeline: DMA_READ of the operands that are
 * not pinned (once the tile's buffer, *buf_end, is free), the token to
 * PE_GEMM, the GEMM, the token to PE_MATH and the K_TILE MATH stages; on
 * the last K tile also the OUTPUT_TILE stages and the DMA_WRITE. Updates
 * *buf_end to the GEMM's end; returns when the tile's last stage ends. */
static sim_ps feed_tile(struct plan_ctx *pc, const struct pipeline_plan *p,
                        const struct tile_at *at, sim_ps operands, sim_ps *buf_end)
{
        static const struct plan_stage rd = { .unit = PLAN_DMA_READ, .op = "dma_read",
                                              .scope = TL_SCOPE_K_TILE };
        static const struct plan_stage wr = { .unit = PLAN_DMA_WRITE, .op = "dma_write",
                                              .scope = TL_SCOPE_OUTPUT_TILE };
        static const struct plan_stage gm = { .unit = PLAN_GEMM, .op = "gemm",
                                              .scope = TL_SCOPE_K_TILE };
        const struct plan_gemm *g = &p->gemm;
        struct hw_pe *pe = pc->pe;
        struct hw_sim *s = pe->sim;
        int64_t mm = extent(g->m, g->tile_m, at->tm);
        int64_t nn = extent(g->n, g->tile_n, at->tn);
        int64_t kk = extent(g->k, g->tile_k, at->tk);
        int64_t tile = at->tile;

        /* DMA_READ: the operands that are not pinned, once this buffer's
         * last GEMM is done. */
        sim_ps ready = operands;
        sim_ps buf_free = *buf_end;
        uint64_t rd_bytes = 0;
        sim_ps rd_end = buf_free;
        const struct { bool pinned; bool hbm; uint64_t bytes; } opnd[2] = {
                { g->a_pinned, g->a_hbm, (uint64_t)(mm * kk) * g->a_elem_bytes },
                { g->b_pinned, g->b_hbm, (uint64_t)(kk * nn) * g->b_elem_bytes },
        };
        for (int o = 0; o < 2; o++) {
                if (opnd[o].pinned)
                        continue;
                uint64_t b = opnd[o].bytes;
                sim_ps st0, e = hw_dma_copy(pe, opnd[o].hbm, false, b, buf_free, &st0);
                log_stage(pc, &rd, "dma_read", tile, st0, e, b, 0);
                rd_bytes += b;
                rd_end = max_ps(rd_end, e);
        }
        if (rd_bytes) /* token DMA -> GEMM */
                ready = max_ps(ready, token(s, pe->node_dma, pe->node_gemm, rd_bytes, rd_end));
        sim_ps gs, ge = ev_resource_reserve(&pe->gemm, ready,
                                            hw_gemm_ps(s->topo, (uint64_t)mm, (uint64_t)nn,
                                                       (uint64_t)kk), &gs);
        log_stage(pc, &gm, "gemm", tile, gs, ge, rd_bytes, 2 * (uint64_t)(mm * nn * kk));
        *buf_end = ge;

        sim_ps te = ge;
        bool last_k = at->tk == p->tiles_k - 1;
        int n_math = p->n_k_tile + (last_k ? p->n_out_tile : 0);
        uint64_t tile_elems = (uint64_t)(mm * nn);
        if (n_math) /* token GEMM -> MATH */
                te = token(s, pe->node_gemm, pe->node_math, tile_elems * 4, ge);
        /* Chained MATH stages: a local loop on PE_MATH. */
        for (int j = 0; j < p->n_k_tile; j++)
                te = run_math(pc, &p->k_tile[j], tile_elems, tile, te);
        if (!last_k)
                return te;
        for (int j = 0; j < p->n_out_tile; j++)
                te = run_math(pc, &p->out_tile[j], tile_elems, tile, te);
        if (!g->out_pinned) {
                uint64_t b = tile_elems * g->out_elem_bytes;
                uint32_t from = n_math ? pe->node_math : pe->node_gemm;
                sim_ps st0, tok = token(s, from, pe->node_dma, b, te);
                te = hw_dma_copy(pe, false, g->out_hbm, b, tok, &st0);
                log_stage(pc, &wr, "dma_write", tile, st0, te, b, 0);
        }
        return te;
}

void plan_feed(const struct pipeline_plan *p, struct plan_ctx *pc)
{
        sim_ps end = pc->start;
        int64_t tile = 0;
        pc->completions = 0;

        /* Prologue: standalone one-stage tiles, each on PE_MATH. */
        sim_ps t = pc->start;
        for (int i = 0; i < p->n_prologue; i++) {
                t = run_math(pc, &p->prologue[i], p->prologue[i].elements, tile++, t);
                pc->completions++;
                end = max_ps(end, t);
        }
        sim_ps prologue_end = t;

        if (p->has_gemm) {
                /* GEMM operands produced by the prologue wait for it. */
                sim_ps operands = p->n_prologue ? prologue_end : pc->start;
                if (pc->operands_ready > operands)
                        operands = pc->operands_ready;
                sim_ps gemm_end_ring[2] = { pc->start, pc->start }; /* double buffers */
                uint64_t i = 0;
                for (int64_t tm = 0; tm < p->tiles_m; tm++)
                        for (int64_t tn = 0; tn < p->tiles_n; tn++)
                                for (int64_t tk = 0; tk < p->tiles_k; tk++, i++) {
                                        struct tile_at at = { tm, tn, tk, tile++ };
                                        end = max_ps(end, feed_tile(pc, p, &at, operands,
                                                                    &gemm_end_ring[i % 2]));
                                        pc->completions++;
                                }
        }

        /* Post-loop: standalone one-stage tiles after every GEMM tile. */
        t = end;
        for (int i = 0; i < p->n_post; i++) {
                t = run_math(pc, &p->post[i], p->post[i].elements, tile++, t);
                pc->completions++;
                end = max_ps(end, t);
        }
        pc->end = end;
}
