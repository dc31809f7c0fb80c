/* tl/composite.c: tl_composite, tl_wait and the softmax_merge recipe.
 *
 * A composite pays one PE_CPU issue cost, waits for its operands, builds
 * the flat op list, has the planner (plan/plan.c) turn it into a pipeline
 * plan and feeds it to the PE's engines from now; the feed places each
 * tile's stages when its buffer frees (events), so the composite is in
 * flight until its last stage is placed. Then its outputs get their ready
 * time and the handle its end; tl_wait, the scope's end and the kernel's
 * end wait for that. In data mode the numbers
 * are computed here, in the order the stages would: per K tile the partial
 * product and its K_TILE ops, summed in K order; then the OUTPUT_TILE ops;
 * the store rounds to the output's dtype; then the post-loop ops. Issuing
 * the same ops one by one in that order gives the same numbers. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "plan/plan.h"
#include "tl/ops.h"
#include "tl/tensor.h"
#include "tl/tl_int.h"

#define COMPOSITE_OUTS TL_INFLIGHT_OUTS

/* A composite's feed, reused once its stages are placed (most of a
 * composite's bytes: fresh ones per composite cost cache misses). */
struct tl_feed {
        struct tl_pooled pooled;     /* in tl_ctx.feeds */
        struct plan_run run;         /* the feed */
};

/* What a composite's handle refers to until its stages are placed; then
 * the handle holds its end and the record is reused (kept for the
 * handle's scope, records were most of a kernel-level loop's memory). */
struct composite_rec {
        struct tl_pooled pooled;     /* in tl_ctx.recs */
        tl_tensor *handle;           /* its handle */
        struct tl_feed *feed;        /* its feed while stages are being placed, then NULL */
        struct tl_inflight fl;       /* in flight until every stage is placed */
        tl_ctx *tl;                  /* the PE that issued it */
        const char *file;            /* the tl_composite call, its stages are charged to */
        int line;                    /* and its line */
        struct rep_line_hint prof;   /* its profile entry */
};

/* A stage placed by the feed, maybe long after the call: charged to the
 * composite's line, whatever the PE_CPU does by then. */
static void log_sink(void *ctx, const struct rep_op *op)
{
        struct composite_rec *rec = ctx;
        tl__log_stage(rec->tl, op, rec->file, rec->line, &rec->prof);
}

/* A stage placed while no record is written: for the critical path. */
static void dep_sink(void *ctx, const char *component, const char *op, sim_ps start, sim_ps end)
{
        struct composite_rec *rec = ctx;
        tl_ctx *tl = rec->tl;
        rep_cp_stage(tl->run->cp, tl->sim, tl->rank, component, op, start, end, rec->file,
                     rec->line);
}

/* The feed placed the last stage: it is not touched again. When no
 * record is written its stages' engine time and work were summed in the
 * feed (pc->tally), and are accounted now: a run's profile and work are
 * read only once every feed is placed (the kernel's end waits for them). */
static void placed(void *ctx, sim_ps end)
{
        struct composite_rec *rec = ctx;
        tl_ctx *tl = rec->tl;
        const struct plan_ctx *pc = &rec->feed->run.pc;
        if (pc->tally)
                tl__account_sums(tl, pc->busy_ps, &pc->work, rec->file, rec->line, &rec->prof);
        tl__inflight_placed(&rec->fl, end);
        tl__pool_put(&tl->feeds, rec->feed);
        rec->feed = NULL;
        /* A waiter woken above reads the handle, not the record: nothing
         * takes the record from the pool before the PE's process runs. */
        rec->handle->ready_at = end;
        rec->handle->handle_rec = NULL;
        tl__pool_put(&tl->recs, rec);
}

/* A composite feed to plan into (its run.plan): reused or new. */
static struct tl_feed *feed_get(tl_ctx *tl, const char *file, int line)
{
        return tl__pool_get(tl, &tl->feeds, sizeof(struct tl_feed), file, line, "tl_composite");
}

/* Feed the plan made in feed->run.plan from now; the handle. */
static tl_handle finish(tl_ctx *tl, struct tl_feed *feed, sim_ps math_ready,
                        tl_tensor *const outs[COMPOSITE_OUTS], const char *file, int line)
{
        struct composite_rec *rec = tl__pool_get(tl, &tl->recs, sizeof *rec, file, line,
                                                 "tl_composite");
        /* The handle first: the feed may place every stage at once. */
        tl_tensor *h = tl__new_handle(tl, rec);
        if (!h)
                tl__fail(tl, file, line, "tl_composite", "host out of memory");
        rec->handle = h;
        rec->feed = feed;  /* its run is set by plan_feed, fl by tl__inflight_begin */
        rec->tl = tl;
        rec->file = file;
        rec->line = line;
        rec->prof = tl->issued;      /* the tl_composite call's entry */
        tl__inflight_begin(tl, &rec->fl, outs);
        /* Every stage is accounted (profile, work), logged or not. */
        struct plan_ctx pc = { .pe = tl->pe, .start = ev_now(&tl->sim->ev),
                               .math_ready = math_ready, .done = placed, .done_ctx = rec,
                               .log = log_sink, .log_ctx = rec,
                               .tally = !tl->run->have_oplog && !tl->run->have_trace,
                               .dep = tl->run->cp ? dep_sink : NULL, .dep_ctx = rec };
        plan_feed(&feed->run, &feed->run.plan, &pc);
        return (tl_handle){ .p = h };
}

void tl_impl_wait(tl_ctx *tl, tl_handle h, const char *file, int line)
{
        tl__issue(tl, TOPO_OP_WAIT, file, line);
        const tl_tensor *hs = h.p;
        if (!hs || hs->magic != TL_HANDLE_MAGIC || hs->ctx != tl)
                tl__fail(tl, file, line, "tl_wait", "not a handle returned by tl_composite");
        if (tl__struct_dead(tl, hs))
                return;      /* issued in a scope that has ended, which waited for it */
        struct composite_rec *rec = hs->handle_rec; /* NULL once placed */
        if (rec) {
                tl__note_wait(tl, TL_NOTE_AT, file, line, "tl_wait on a composite", NULL, 0);
                sim_ps since = ev_now(&tl->sim->ev);
                ev_wait(tl->proc, &rec->fl.placed);
                tl__waited(tl, since, "tl_composite", file, line);
        }
        if (hs->ready_at > ev_now(&tl->sim->ev)) {
                tl__note_wait(tl, TL_NOTE_AT, file, line, "tl_wait on a composite", NULL, 0);
                sim_ps since = ev_now(&tl->sim->ev);
                ev_sleep_until(tl->proc, hs->ready_at);
                tl__waited(tl, since, "tl_composite", file, line);
        }
}

/* ---- data mode ----------------------------------------------------------------- */

/* A host-only fp32 tensor of shape [r, c] for intermediate values. */
static tl_tensor *temp(tl_ctx *tl, int64_t r, int64_t c)
{
        tl_tensor *t = tl__arena_alloc(tl, sizeof *t);
        float *data = tl__arena_alloc(tl, (size_t)(r * c) * sizeof(float));
        if (!t || !data)
                return NULL;
        memset(t, 0, sizeof *t);
        t->space = TL_SCRATCH;
        t->dtype = TL_FP32;
        t->ndim = 2;
        t->shape[0] = r;
        t->shape[1] = c;
        t->stride[0] = c;
        t->stride[1] = 1;
        t->base = data;
        t->owner = t;
        t->ready.done = true;
        t->magic = TL_TENSOR_MAGIC;
        return t;
}

static tl_tensor view2(const tl_tensor *t, int64_t r0, int64_t c0, int64_t r, int64_t c)
{
        tl_tensor v = *t;
        v.offset += r0 * t->stride[0] + c0 * t->stride[1];
        v.shape[0] = r;
        v.shape[1] = c;
        return v;
}

/* "TL_EXP", or "op 77 (not a tl_op)" for a value outside the table. */
static const char *op_text(tl_op o, char *buf, size_t len)
{
        if (tl__op_valid(o))
                return tl__op_id(o);
        snprintf(buf, len, "op %d (not a tl_op)", (int)o);
        return buf;
}

/* A per-K-tile DEQUANT: one scale per K tile, a 1-D tensor. */
static bool per_k_tile(const tl_epilogue *e)
{
        return e->op == TL_DEQUANT && e->scope == TL_SCOPE_K_TILE && e->tensor->ndim == 1 &&
               tl__elems(e->tensor) > 1;
}

/* Apply one epilogue op to x in place; k_tile is the K tile index (for a
 * per-K-tile DEQUANT) or -1. */
static void apply_epilogue(const tl_epilogue *e, tl_tensor *x, int64_t k_tile)
{
        switch (tl__op_form(e->op)) {
        case TL__FORM_UNARY:
                tl__compute_math1(e->op, x, x);
                break;
        case TL__FORM_BINARY:
                tl__compute_math2(e->op, x, e->tensor, x);
                break;
        case TL__FORM_SCALAR:
                tl__compute_scalar(e->op, x, e->factor, x);
                break;
        case TL__FORM_TENSOR:
                if (e->op == TL_RMSNORM) {
                        tl__compute_rmsnorm(x, e->tensor, e->factor, x);
                } else if (e->op == TL_BIAS) {
                        tl__compute_math2(TL_ADD, x, e->tensor, x);
                } else if (k_tile >= 0 && per_k_tile(e)) {
                        float s = e->tensor->base[e->tensor->offset + k_tile * e->tensor->stride[0]];
                        tl__compute_scalar(TL_SCALE, x, s, x);
                } else {
                        tl__compute_math2(TL_MUL, x, e->tensor, x);
                }
                break;
        default:
                break;
        }
}

/* A kernel error unless epilogue op #i can run on an output of shape
 * out: its op, its operands and its scope. */
static void check_epilogue(tl_ctx *tl, const tl_epilogue *e, int i, const tl_tensor *out,
                           const char *file, int line)
{
        const char *op = "tl_composite";
        char buf[48];
        enum tl__form f = tl__op_valid(e->op) ? tl__op_form(e->op) : TL__FORM_NONE;
        if (f != TL__FORM_UNARY && f != TL__FORM_BINARY && f != TL__FORM_SCALAR &&
            f != TL__FORM_TENSOR)
                tl__fail(tl, file, line, op, "epilogue #%d: %s is not an epilogue op (a unary "
                         "or binary op, TL_SCALE, TL_ADD_SCALAR, TL_DEQUANT, TL_BIAS or "
                         "TL_RMSNORM)", i, op_text(e->op, buf, sizeof buf));
        const char *id = tl__op_id(e->op);
        if (e->scope != TL_SCOPE_OUTPUT_TILE && e->scope != TL_SCOPE_K_TILE &&
            e->scope != TL_SCOPE_KERNEL)
                tl__fail(tl, file, line, op, "epilogue #%d: scope %d is not OUTPUT_TILE, K_TILE "
                         "or KERNEL", i, (int)e->scope);
        bool needs_tensor = f == TL__FORM_BINARY || e->op == TL_DEQUANT || e->op == TL_BIAS;
        if (needs_tensor && !e->tensor)
                tl__fail(tl, file, line, op, "epilogue #%d (%s) needs a tensor", i, id);
        if (e->op == TL_RMSNORM && e->scope != TL_SCOPE_KERNEL)
                tl__fail(tl, file, line, op, "epilogue #%d (%s) needs whole rows: give it "
                         "scope TL_SCOPE_KERNEL", i, id);
        char os[96], ts[96];
        tl__shape_text(os, sizeof os, out->ndim, out->shape);
        if (e->op == TL_RMSNORM && out->ndim == 0)
                tl__fail(tl, file, line, op, "epilogue #%d (%s) normalizes rows of the last axis: "
                         "the output is 0-D (shape []); give it at least one axis", i, id);
        if (!e->tensor)
                return;
        tl__need_local(tl, e->tensor, file, line, op, tl__op_name(e->op));
        const tl_tensor *t = e->tensor;
        tl__shape_text(ts, sizeof ts, t->ndim, t->shape);
        if (e->op == TL_RMSNORM) {
                /* One weight per element of a row: [N] or [1, N]. */
                int64_t n = out->shape[out->ndim - 1];
                if (!((t->ndim == 1 || (t->ndim == 2 && t->shape[0] == 1)) &&
                      t->shape[t->ndim - 1] == n))
                        tl__fail(tl, file, line, op, "epilogue #%d (%s): weight %s for rows of %lld "
                                 "(output %s): expected [%lld] or [1, %lld]", i, id, ts,
                                 (long long)n, os, (long long)n, (long long)n);
                if (tl__overlap(t, out))
                        tl__fail(tl, file, line, op, "epilogue #%d (%s): the weight shares "
                                 "elements with the output, which the norm rewrites row by row; "
                                 "give it a tensor of its own", i, id);
                return;
        }
        /* The operand broadcasts to the output (a K-tile DEQUANT's per-tile
         * vector is indexed by the K tile instead). */
        bool k_vector = e->op == TL_DEQUANT && e->scope == TL_SCOPE_K_TILE && t->ndim == 1;
        bool ok = t->ndim <= out->ndim;
        for (int j = 0; ok && j < t->ndim; j++) {
                int64_t et = t->shape[t->ndim - 1 - j], eo = out->shape[out->ndim - 1 - j];
                ok = et == 1 || et == eo;
        }
        if (!ok && !k_vector)
                tl__fail(tl, file, line, op, "epilogue #%d (%s): its tensor %s does not "
                         "broadcast to the output %s", i, id, ts, os);
        /* The output itself is an operand in place (each element reads its
         * own value before the tile is written); any other shared element
         * would be read after another tile has written it. */
        if (!tl__same_view(t, out) && tl__overlap(t, out))
                tl__fail(tl, file, line, op, "epilogue #%d (%s): its tensor %s shares elements "
                         "with the output %s without being it (only the output itself may be "
                         "read in place); give it a tensor of its own", i, id, ts, os);
}

/* A KERNEL-scope op of a composite on its output in place (a post-loop
 * stage, or any op of a MATH-only composite): the result is written in
 * out's dtype. */
static void apply_in_place(const tl_epilogue *e, tl_tensor *out)
{
        apply_epilogue(e, out, -1);
        if (out->dtype != TL_FP32)
                tl__compute_copy(out, out, out->dtype);
}

/* out = epilogue(a . b) with the K tiling of the plan. */
static void compute_gemm(tl_ctx *tl, const tl_composite_desc *d, const struct pipeline_plan *plan)
{
        const struct plan_gemm *g = &plan->gemm;
        size_t mark = tl->arena.pos;
        tl_tensor *acc = temp(tl, g->m, g->n), *part = temp(tl, g->m, g->n);
        if (!acc || !part)
                goto out;
        /* Accumulating: the sum starts from out's values (in fp32). */
        if (d->accumulate)
                tl__compute_copy(d->out, acc, TL_FP32);
        for (int64_t tk = 0; tk < plan->tiles_k; tk++) {
                int64_t k0 = tk * g->tile_k, kk = g->k - k0 < g->tile_k ? g->k - k0 : g->tile_k;
                tl_tensor a = view2(d->a, 0, k0, g->m, kk);
                tl_tensor b = d->trans_b ? view2(d->b, 0, k0, g->n, kk) : view2(d->b, k0, 0, kk, g->n);
                bool into_acc = tk == 0 && !d->accumulate;
                tl_tensor *p = into_acc ? acc : part;
                tl__compute_dot(&a, &b, d->trans_b, p);
                for (int i = 0; i < d->n_epilogue; i++)
                        if (d->epilogue[i].scope == TL_SCOPE_K_TILE)
                                apply_epilogue(&d->epilogue[i], p, tk);
                if (!into_acc)
                        tl__compute_math2(TL_ADD, acc, part, acc);
        }
        for (int i = 0; i < d->n_epilogue; i++)
                if (d->epilogue[i].scope == TL_SCOPE_OUTPUT_TILE)
                        apply_epilogue(&d->epilogue[i], acc, -1);
        tl__compute_copy(acc, d->out, d->out->dtype);
        for (int i = 0; i < d->n_epilogue; i++)
                if (d->epilogue[i].scope == TL_SCOPE_KERNEL)
                        apply_in_place(&d->epilogue[i], d->out);
out:
        tl__arena_rollback(tl, mark);
}

/* ---- tl_composite ------------------------------------------------------------------ */

/* A per-K-tile DEQUANT of epilogue #i has one scale per K tile of the
 * GEMM (the data mode indexes it by K tile); without a GEMM (tiles_k 0)
 * it multiplies the output, so it must broadcast onto its last axis. */
static void check_k_scales(tl_ctx *tl, const tl_epilogue *e, int i, const tl_tensor *out,
                           int64_t tiles_k, const char *file, int line)
{
        if (!e->tensor || !per_k_tile(e))
                return;
        int64_t n = tl__elems(e->tensor);
        if (tiles_k && n != tiles_k)
                tl__fail(tl, file, line, "tl_composite", "epilogue #%d (%s): %lld scales for "
                         "%lld K tiles", i, tl__op_id(e->op), (long long)n, (long long)tiles_k);
        if (!tiles_k && (out->ndim == 0 || n != out->shape[out->ndim - 1]))
                tl__fail(tl, file, line, "tl_composite", "epilogue #%d (%s): no GEMM, so no K "
                         "tiles, and its %lld values do not broadcast to the output", i,
                         tl__op_id(e->op), (long long)n);
}

static bool is_2d(const tl_tensor *t) { return t && t->ndim == 2; }

/* The shape and tiles of GEMM plan g, made in its feed: its operands are
 * set by gemm_operand (their HBM spans only where they are in HBM: no
 * other is read, and a span is most of the plan's bytes). */
static void gemm_init(struct plan_gemm *g, int64_t m, int64_t n, int64_t k, int64_t tile_m,
                      int64_t tile_n, int64_t tile_k)
{
        g->m = m;
        g->n = n;
        g->k = k;
        g->tile_m = tile_m;
        g->tile_n = tile_n;
        g->tile_k = tile_k;
        g->accumulate = false;
}

/* Where GEMM operand t is, for the plan: pinned, in HBM (and where its
 * bytes are), its element size. */
static void gemm_operand(tl_ctx *tl, const tl_tensor *t, bool *pinned, bool *hbm,
                         struct hw_hbm_span *home, uint32_t *elem_bytes, uint32_t *kbytes)
{
        *pinned = t->pinned;
        *hbm = t->space == TL_HBM;
        if (*hbm)
                tl__hbm_span(tl->run, t, home);
        *elem_bytes = (uint32_t)tl_dtype_size(t->dtype);
        if (kbytes)
                *kbytes = (uint32_t)tl_dtype_bytes(t->dtype, 1024, 1024);
}

tl_handle tl_impl_composite(tl_ctx *tl, const tl_composite_desc *d, const char *file, int line)
{
        const char *op = "tl_composite";
        char buf[48];
        tl__issue(tl, TOPO_OP_COMPOSITE, file, line);
        if (!d)
                tl__fail(tl, file, line, op, "the descriptor is NULL");
        if (d->op != TL_GEMM && d->op != TL_NONE)
                tl__fail(tl, file, line, op, "%s: expected TL_GEMM or TL_NONE (MATH only)",
                         op_text(d->op, buf, sizeof buf));
        if (d->n_epilogue < 0 || d->n_epilogue > PLAN_MAX_OPS - 1)
                tl__fail(tl, file, line, op, "%d epilogue ops: expected 0..%d", d->n_epilogue,
                         PLAN_MAX_OPS - 1);
        if (d->n_epilogue > 0 && !d->epilogue)
                tl__fail(tl, file, line, op, "%d epilogue ops but epilogue is NULL",
                         d->n_epilogue);
        if (!d->out)
                tl__fail(tl, file, line, op, "no output tensor");
        tl__check_tensor(tl, d->out, file, line, op, "out");
        tl__check_block_start(tl, file, line, op, d->out, "out");
        const int64_t tiles[3] = { d->tile_m, d->tile_n, d->tile_k };
        for (int i = 0; i < 3; i++)
                if (tiles[i] < 0 || tiles[i] > TL_MAX_EXTENT)
                        tl__fail(tl, file, line, op, "tile_%c = %lld: expected 0 (64) to 2^40",
                                 "mnk"[i], (long long)tiles[i]);
        struct plan_op ops[PLAN_MAX_OPS];
        int n = 0;
        struct tl_feed *feed = feed_get(tl, file, line);
        struct plan_gemm *g = &feed->run.plan.gemm; /* made in place (no GEMM: not read) */
        sim_ps math_ready = 0;       /* the epilogue's tensors, as primitives would wait */
        if (d->accumulate && d->op != TL_GEMM)
                tl__fail(tl, file, line, op, "accumulate: only a GEMM accumulates (the head is "
                         "TL_NONE)");
        if (d->op == TL_GEMM) {
                tl__check_tensor(tl, d->a, file, line, op, "a");
                tl__check_tensor(tl, d->b, file, line, op, "b");
                if (!is_2d(d->a) || !is_2d(d->b) || !is_2d(d->out))
                        tl__fail(tl, file, line, op, "the GEMM's a, b and out must be 2-D tensors");
                int64_t m = d->a->shape[0], k = d->a->shape[1];
                int64_t kb = d->trans_b ? d->b->shape[1] : d->b->shape[0];
                int64_t nn = d->trans_b ? d->b->shape[0] : d->b->shape[1];
                if (k != kb || d->out->shape[0] != m || d->out->shape[1] != nn)
                        tl__fail(tl, file, line, op,
                                 "shapes do not agree: a [%lld, %lld], b%s [%lld, %lld], out [%lld, %lld]",
                                 (long long)m, (long long)k, d->trans_b ? "^T" : "",
                                 (long long)kb, (long long)nn, (long long)d->out->shape[0],
                                 (long long)d->out->shape[1]);
                static const char why_ab[] = "the GEMM would write an operand it is still "
                                             "reading (give out a tensor of its own)";
                tl__check_apart(tl, file, line, op, d->out, "out", d->a, "a", why_ab);
                tl__check_apart(tl, file, line, op, d->out, "out", d->b, "b", why_ab);
                tl__wait_ready(tl, d->a, file, line, op);
                tl__wait_ready(tl, d->b, file, line, op);
                gemm_init(g, m, nn, k, d->tile_m, d->tile_n, d->tile_k);
                gemm_operand(tl, d->a, &g->a_pinned, &g->a_hbm, &g->a_home, &g->a_elem_bytes,
                             &g->a_kbytes);
                gemm_operand(tl, d->b, &g->b_pinned, &g->b_hbm, &g->b_home, &g->b_elem_bytes,
                             &g->b_kbytes);
                gemm_operand(tl, d->out, &g->out_pinned, &g->out_hbm, &g->out_home,
                             &g->out_elem_bytes, NULL);
                g->mac_dt = topo_mac_dt_of(d->a->dtype, d->b->dtype);
                g->accumulate = d->accumulate;
                if (d->accumulate && !g->out_pinned)
                        tl__fail(tl, file, line, op, "accumulate: the output must be consumed in "
                                 "place (a pinned TCM or scratch tensor), as the engine adds onto "
                                 "its values where they are");
                ops[n++] = (struct plan_op){ .gemm = true, .name = tl__op_name(TL_GEMM),
                                             .scope = TL_SCOPE_K_TILE };
        }
        for (int i = 0; i < d->n_epilogue; i++) {
                const tl_epilogue *e = &d->epilogue[i];
                check_epilogue(tl, e, i, d->out, file, line);
                if (e->tensor) {
                        sim_ps at = tl__ready_at(tl, e->tensor, file, line, op);
                        if (at > math_ready)
                                math_ready = at;
                }
                ops[n++] = (struct plan_op){ .name = tl__op_name(e->op),
                                             .cost_op = tl__math_type(e->op), .scope = e->scope,
                                             .elements = (uint64_t)tl__elems(d->out) };
        }
        tl__wait_ready(tl, d->out, file, line, op);
        struct pipeline_plan *plan = &feed->run.plan;
        char err[256];
        if (plan_generate_from_ops(ops, n, g, plan, err, sizeof err) < 0)
                tl__fail(tl, file, line, op, "plan: %s", err);
        for (int i = 0; i < d->n_epilogue; i++)
                check_k_scales(tl, &d->epilogue[i], i, d->out,
                               d->op == TL_GEMM ? plan->tiles_k : 0, file, line);
        if (tl->run->opts->mode == TL_MODE_DATA) {
                /* Each operand in HBM as this PE's cube holds it. */
                tl_tensor a, b, out;
                tl_composite_desc dd = *d;
                if (d->op != TL_GEMM || d->accumulate) /* out is read, in place */
                        tl__data_read(tl, d->out, &out, file, line, op);
                dd.out = tl__data_write(tl, d->out, &out, file, line, op);
                if (d->op == TL_GEMM) {
                        dd.a = (tl_tensor *)tl__data_read(tl, d->a, &a, file, line, op);
                        dd.b = (tl_tensor *)tl__data_read(tl, d->b, &b, file, line, op);
                        compute_gemm(tl, &dd, plan);
                } else {
                        for (int i = 0; i < d->n_epilogue; i++)
                                apply_in_place(&d->epilogue[i], dd.out);
                }
        }
        return finish(tl, feed, math_ready, (tl_tensor *[COMPOSITE_OUTS]){ d->out, NULL, NULL },
                      file, line);
}

/* ---- the softmax_merge recipe ---------------------------------------------------- */

/* e^(a - b) with e^(-inf - -inf) = 1: a merge of two empty states is empty,
 * never NaN. */
static float exp_diff(float a, float b)
{
        if (a == b)
                return 1.0f;
        return expf(a - b);
}

static void compute_softmax_merge(tl_ctx *tl, tl_tensor *s, tl_tensor *v, tl_tensor *m,
                                  tl_tensor *l, tl_tensor *o, int64_t tile_k)
{
        int64_t rows = s->shape[0], cols = s->shape[1], dd = o->shape[1];
        size_t mark = tl->arena.pos;
        tl_tensor *p = temp(tl, rows, cols), *pv = temp(tl, rows, dd), *part = temp(tl, rows, dd);
        float *alpha = tl__arena_alloc(tl, (size_t)rows * sizeof(float));
        if (!p || !pv || !part || !alpha)
                goto out;
        for (int64_t i = 0; i < rows; i++) {
                const float *srow = s->base + s->offset + i * s->stride[0];
                float *mi = m->base + m->offset + i * m->stride[0];
                float *li = l->base + l->offset + i * l->stride[0];
                float mx = -INFINITY;
                for (int64_t j = 0; j < cols; j++)
                        mx = fmaxf(mx, srow[j * s->stride[1]]);
                float m_new = fmaxf(*mi, mx);
                float sum = 0.0f;
                float *prow = p->base + i * cols;
                for (int64_t j = 0; j < cols; j++) {
                        float x = srow[j * s->stride[1]];
                        prow[j] = m_new == -INFINITY ? 0.0f : expf(x - m_new);
                        sum += prow[j];
                }
                alpha[i] = exp_diff(*mi, m_new);
                *li = alpha[i] * *li + sum;
                *mi = m_new;
        }
        /* P . V in the GEMM's K tiles, summed in K order. */
        int64_t tiles_k = (cols + tile_k - 1) / tile_k;
        for (int64_t tk = 0; tk < tiles_k; tk++) {
                int64_t k0 = tk * tile_k, kk = cols - k0 < tile_k ? cols - k0 : tile_k;
                tl_tensor pa = view2(p, 0, k0, rows, kk), vb = view2(v, k0, 0, kk, dd);
                tl__compute_dot(&pa, &vb, false, tk ? part : pv);
                if (tk)
                        tl__compute_math2(TL_ADD, pv, part, pv);
        }
        for (int64_t i = 0; i < rows; i++)
                for (int64_t j = 0; j < dd; j++) {
                        float *oij = o->base + o->offset + i * o->stride[0] + j * o->stride[1];
                        *oij = alpha[i] * *oij + pv->base[i * dd + j];
                }
        /* The state is written back in its dtypes. */
        tl_tensor *state[3] = { m, l, o };
        for (int i = 0; i < 3; i++)
                if (state[i]->dtype != TL_FP32)
                        tl__compute_copy(state[i], state[i], state[i]->dtype);
out:
        tl__arena_rollback(tl, mark);
}

/* The recipe's op list: the online merge's MATH, the head GEMM (P . V)
 * at MERGE_HEAD, the rescale-and-add into O; MERGE_STAGES MATH stages. */
static const tl_op merge_ops[] = { TL_ROWMAX, TL_MAX, TL_SUB, TL_EXP, TL_SUB, TL_EXP, TL_MUL,
                                   TL_ROWSUM, TL_ADD, TL_GEMM, TL_MUL, TL_ADD };
#define MERGE_HEAD 9
#define MERGE_STAGES 11

tl_handle tl_impl_softmax_merge(tl_ctx *tl, tl_tensor *s, tl_tensor *v, tl_tensor *m, tl_tensor *l,
                            tl_tensor *o, const char *file, int line)
{
        const char *op = "softmax_merge";
        tl__issue(tl, TOPO_OP_COMPOSITE, file, line);
        static const char *const names[5] = { "s", "v", "m", "l", "o" };
        tl_tensor *all[5] = { s, v, m, l, o };
        for (int i = 0; i < 5; i++)
                tl__check_tensor(tl, all[i], file, line, op, names[i]);
        if (!is_2d(s) || !is_2d(v) || !is_2d(m) || !is_2d(l) || !is_2d(o))
                tl__fail(tl, file, line, op, "s, v, m, l and o must be 2-D");
        int64_t rows = s->shape[0], cols = s->shape[1], dd = o->shape[1];
        if (v->shape[0] != cols || v->shape[1] != dd || o->shape[0] != rows ||
            m->shape[0] != rows || m->shape[1] != 1 || l->shape[0] != rows || l->shape[1] != 1)
                tl__fail(tl, file, line, op,
                         "shapes do not agree: s [%lld, %lld], v [%lld, %lld], m [%lld, %lld], "
                         "l [%lld, %lld], o [%lld, %lld]; expected v [N, D], m and l [M, 1], "
                         "o [M, D]", (long long)rows, (long long)cols, (long long)v->shape[0],
                         (long long)v->shape[1], (long long)m->shape[0], (long long)m->shape[1],
                         (long long)l->shape[0], (long long)l->shape[1], (long long)o->shape[0],
                         (long long)o->shape[1]);
        tl_tensor *state[3] = { m, l, o };
        for (int i = 0; i < 3; i++)
                if (state[i]->space != TL_TCM)
                        tl__fail(tl, file, line, op, "the running state (m, l, o) must be "
                                 "persistent TCM (tl_alloc(tl, TL_TCM, ...))");
        /* The state is updated in place, row by row, as s and v are read:
         * a shared element would make the result depend on that order. */
        for (int i = 0; i < 4; i++)
                for (int j = i < 2 ? 2 : i + 1; j < 5; j++)
                        tl__check_apart(tl, file, line, op, all[i], names[i], all[j], names[j],
                                        i < 2 ? "the recipe reads s and v while it updates "
                                                "m, l and o in place"
                                              : "the running state m, l and o must be "
                                                "separate tensors");
        for (int i = 2; i < 5; i++)
                tl__check_block_start(tl, file, line, op, all[i], names[i]);
        for (int i = 0; i < 5; i++)
                tl__wait_ready(tl, all[i], file, line, op);
        uint64_t mn = (uint64_t)(rows * cols), mr = (uint64_t)rows, md = (uint64_t)(rows * dd);
        /* The MATH stages' elements, in order: the prologue (KERNEL scope,
         * TCM only; the head op may stream), then after the head GEMM
         * (P, recipe scratch pinned in place, . V streamed) the post-loop
         * o = alpha * o + pv. */
        const uint64_t elements[MERGE_STAGES] = { mn, mr, mn, mn, mr, mr, mr, mn, mr, md, md };
        int64_t tile_k = 64;
        struct tl_feed *feed = feed_get(tl, file, line);
        struct plan_gemm *g = &feed->run.plan.gemm; /* made in place */
        gemm_init(g, rows, dd, cols, rows, dd, tile_k);
        /* P: the recipe's fp32 scratch, in place; the result stays in TCM. */
        g->a_pinned = g->out_pinned = true;
        g->a_hbm = g->out_hbm = false;
        g->a_elem_bytes = g->out_elem_bytes = 4;
        g->a_kbytes = 4096;
        gemm_operand(tl, v, &g->b_pinned, &g->b_hbm, &g->b_home, &g->b_elem_bytes, &g->b_kbytes);
        g->mac_dt = topo_mac_dt_of(TL_FP32, v->dtype); /* P is fp32 */
        /* Planned once per PE from the op list, then reused with this
         * call's shapes (scores in HBM: planned, to be refused). */
        struct pipeline_plan *plan = &feed->run.plan;
        if (s->space != TL_HBM && tl->merge_plan.has_gemm) {
                plan_replan(plan, &tl->merge_plan, g, elements);
        } else {
                struct plan_op ops[PLAN_MAX_OPS];
                int n = 0;
                for (int i = 0; i < (int)ARRAY_LEN(merge_ops); i++) {
                        tl_op mo = merge_ops[i];
                        if (mo == TL_GEMM) {
                                ops[n++] = (struct plan_op){ .gemm = true, .name = tl__op_name(mo),
                                                             .scope = TL_SCOPE_K_TILE };
                                continue;
                        }
                        ops[n++] = (struct plan_op){ .name = tl__op_name(mo),
                                                     .cost_op = tl__math_type(mo),
                                                     .scope = TL_SCOPE_KERNEL,
                                                     .elements = elements[i - (i > MERGE_HEAD)],
                                                     .reads_hbm = i < MERGE_HEAD &&
                                                                  s->space == TL_HBM,
                                                     .hbm_name = "s" };
                }
                char err[256];
                if (plan_generate_from_ops(ops, n, g, plan, err, sizeof err) < 0)
                        tl__fail(tl, file, line, op, "plan: %s", err);
                tl->merge_plan = *plan;
        }
        if (tl->run->opts->mode == TL_MODE_DATA) {
                tl_tensor s_in, v_in;
                compute_softmax_merge(tl, (tl_tensor *)tl__data_read(tl, s, &s_in, file, line, op),
                                      (tl_tensor *)tl__data_read(tl, v, &v_in, file, line, op),
                                      m, l, o, tile_k);
        }
        /* The state tensors are busy until the post-loop ends. */
        return finish(tl, feed, 0, (tl_tensor *[COMPOSITE_OUTS]){ m, l, o }, file, line);
}
