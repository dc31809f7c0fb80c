/* tl/ops.c: the tl_* operations: issue cost, waiting for operands, the
 * engine reservation that decides each op's start and end, the op_log
 * record, and (data mode) the computation.
 *
 * Every op runs in the same order:
 *   1. PE_CPU pays the op type's issue cost (the process sleeps);
 *   2. the op waits for its operands' futures (lazy results);
 *   3. its engine is reserved from now: start = when the engine is free,
 *      end = start + the engine's cost (hw.h);
 *   4. the result's future completes at end; the call returns now.
 * Data is computed at issue (operands are ready by then); consumers see it
 * only through the future, so the timing is as if computed at end. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/ckd.h"
#include "base/util.h"
#include "tl/tl_int.h"

static const char *const dtype_names[] = { "fp32", "bf16", "fp16", "bfp8_b", "bfp4_b" };

/* ---- logging ------------------------------------------------------ */

void tl__account(tl_ctx *tl, enum rep_engine e, const struct rep_op *op, const char *file,
                 int line, struct rep_line_hint *hint)
{
        struct tl_run *r = tl->run;
        struct rep_line_hint none = { 0 };
        struct rep_line *l = rep_profile_hinted(&r->profile, file, line, hint ? hint : &none);
        if (l)
                l->engine_ps[e] += op->end_ps - op->start_ps;
        rep_work_add(&r->work, e, op->bytes, op->flops, op->elem_cycles);
}

void tl__account_sums(tl_ctx *tl, const sim_ps busy_ps[REP_ENG_COUNT], const struct rep_work *w,
                      const char *file, int line, struct rep_line_hint *hint)
{
        struct tl_run *r = tl->run;
        struct rep_line *l = rep_profile_hinted(&r->profile, file, line, hint);
        if (l)
                for (int e = 0; e < REP_ENG_COUNT; e++)
                        l->engine_ps[e] += busy_ps[e];
        rep_work_sum(&r->work, w);
}

/* Account op at file:line and write it to the op_log and the trace. */
static struct rep_trace_ref record(tl_ctx *tl, const struct rep_op *op, enum rep_engine e,
                                   const char *file, int line, struct rep_line_hint *hint)
{
        struct tl_run *r = tl->run;
        if (e != REP_ENG_CPU)
                tl__account(tl, e, op, file, line, hint);
        if (r->have_oplog)
                rep_oplog_write(&r->oplog, op);
        struct rep_trace_ref ref = { 0 };
        if (!r->have_trace)
                return ref;
        ref = rep_trace_op(&r->trace, op);
        if (e == REP_ENG_DMA)
                rep_trace_hw_dma(&r->trace_hw, op->pe_index, op->end_ps);
        return ref;
}

struct rep_trace_ref tl__log(tl_ctx *tl, const struct rep_op *op)
{
        struct tl_run *r = tl->run;
        enum rep_engine e = rep_engine_of(op->component);
        struct rep_trace_ref ref = record(tl, op, e, tl->proc->at_file, tl->proc->at_line,
                                          &tl->issued);
        if (!r->have_trace || e == REP_ENG_CPU)
                return ref;
        /* The op's first engine record receives the arrows from the
         * producers of its operands on other tracks (on its own track
         * the order already shows). */
        for (int i = 0; i < tl->n_deps; i++)
                if (tl->deps[i].pid != ref.pid || tl->deps[i].tid != ref.tid)
                        rep_trace_flow(&r->trace, ++r->next_flow, "dep", &tl->deps[i], &ref);
        tl->n_deps = 0;
        tl->last_slice = ref;
        return ref;
}

struct rep_trace_ref tl__log_stage(tl_ctx *tl, const struct rep_op *op, const char *file,
                                   int line, struct rep_line_hint *hint)
{
        return record(tl, op, rep_engine_of(op->component), file, line, hint);
}

void tl__waited(tl_ctx *tl, sim_ps since, const char *what, const char *file, int line)
{
        struct tl_run *r = tl->run;
        sim_ps now = ev_now(&tl->sim->ev);
        if (now <= since)
                return;
        struct rep_line *l = rep_profile_hinted(&r->profile, file, line, &tl->issued);
        if (l)
                l->wait_ps += now - since;
        if (!r->have_trace)
                return;
        char name[192];
        snprintf(name, sizeof name, "blocked on %s (%s:%d)", what, file ? file : "?", line);
        struct rep_op rec = { .pe = tl->pe->name, .pe_index = tl->rank, .component = "pe_cpu",
                              .op = name, .start_ps = since, .end_ps = now };
        rep_trace_op(&r->trace, &rec);
}

/* "tl_load", "tl_mul", ...: the call as a kernel writer spells it. */
static const char *tl__issue_name(enum topo_op op)
{
#define NAME(id, name, key, form) [TOPO_OP_##id] = "tl_" #name,
        static const char *const names[TOPO_OP_COUNT] = { TOPO_CTRL_OPS(NAME) TOPO_MATH_OPS(NAME) };
#undef NAME
        return (unsigned)op < TOPO_OP_COUNT ? names[op] : "tl_?";
}

void tl__issue(tl_ctx *tl, enum topo_op op, const char *file, int line)
{
        tl->proc->at_file = file;    /* named in deadlock and budget reports */
        tl->proc->at_line = line;
        tl->proc->at_what = tl__issue_name(op);
        sim_ps cost = topo_issue_cost_ps(&tl->sim->topo->pe.cpu, op);
        tl->issue_ps[op] += cost;
        tl->n_ops[op]++;
        struct rep_line_hint *h = &tl->hints[(unsigned)line % TL_HINTS];
        struct rep_line *l = rep_profile_hinted(&tl->run->profile, file, line, h);
        tl->issued = *h;
        if (l) {
                l->issue_ps += cost;
                l->n_ops++;
        }
        tl->n_deps = 0;
        tl->last_slice.ok = false;
        if (!cost) {
                /* The PE_CPUs run side by side: let the others issue what
                 * they issue at this instant before this one goes on, so
                 * same-time requests reach the machine round-robin. */
                ev_sleep(tl->proc, 0);
                return;
        }
        sim_ps now = ev_now(&tl->sim->ev);
        if (tl->run->have_oplog || tl->run->have_trace) {
                struct rep_param p[2] = { { .name = "file", .kind = REP_STR, .s = file },
                                          { .name = "line", .kind = REP_INT, .i = line } };
                struct rep_op rec = { .pe = tl->pe->name, .pe_index = tl->rank,
                                      .component = "pe_cpu", .op = topo_op_name(op),
                                      .start_ps = now, .end_ps = now + cost, .params = p,
                                      .n_params = 2 };
                tl__log(tl, &rec);
        }
        ev_sleep(tl->proc, cost);
}

/* ---- futures of results ------------------------------------------------------ */

static void ready_fire(struct ev_loop *ev, struct ev_event *e)
{
        tl_tensor *t = container_of(e, tl_tensor, ready_ev);
        if (t->ready_at > ev_now(ev)) {
                ev_schedule_at(ev, e, t->ready_at); /* a later op extended it */
                return;
        }
        t->busy = false;
        ev_future_complete(ev, &t->ready, 0);
}

/* HBM tensors (and launch tensors sharded over the PEs' TCMs) are shared
 * by every PE: their readiness is not tracked (one PE's store must not
 * hold up another PE's access to other parts of the tensor); kernels
 * order that traffic between PEs with send/recv, and a kernel's end waits
 * for its stores. */
static bool untracked(const tl_tensor *t)
{
        return t->space == TL_HBM || t->owner->sharded;
}

/* The result t becomes ready at end; account the op in the open scope. */
void tl__finish_at(tl_ctx *tl, tl_tensor *t, sim_ps end)
{
        if (end > tl->busy_until)
                tl->busy_until = end;
        if (tl->n_scopes && end > tl->scopes[tl->n_scopes - 1].busy_until)
                tl->scopes[tl->n_scopes - 1].busy_until = end;
        if (!t || untracked(t))
                return;
        t = t->owner;
        /* Its latest producer: what a waiter waits for. */
        if (tl->proc->at_what)
                t->made_by = tl->proc->at_what;
        if (tl->run->have_trace)
                t->made_at = tl->last_slice;
        if (t->busy) {
                /* Its completion event is pending: let it fire later. */
                if (end > t->ready_at)
                        t->ready_at = end;
                return;
        }
        if (end <= ev_now(&tl->sim->ev))
                return; /* ready at once */
        t->ready_at = end;
        t->busy = true;
        ev_future_init(&t->ready, t->made_by);
        t->ready_ev.fn = ready_fire;
        ev_schedule_at(&tl->sim->ev, &t->ready_ev, end);
}

/* Is outs[i]'s owner that of an earlier entry (disjoint views of one
 * tensor: its readiness is tracked once)? */
static bool owned_before(tl_tensor *const outs[TL_INFLIGHT_OUTS], int i)
{
        for (int j = 0; j < i; j++)
                if (outs[j] && outs[j]->owner == outs[i]->owner)
                        return true;
        return false;
}

void tl__inflight_begin(tl_ctx *tl, struct tl_inflight *f, tl_tensor *const outs[TL_INFLIGHT_OUTS])
{
        f->tl = tl;
        f->depth = tl->n_scopes;
        f->end = 0;
        ev_future_init(&f->placed, "op in flight");
        for (int i = 0; i < TL_INFLIGHT_OUTS; i++) {
                tl_tensor *t = outs[i];
                f->outs[i] = NULL;
                if (!t || untracked(t) || owned_before(outs, i))
                        continue;
                /* Not ready until placed (SIM_PS_MAX: end not known). */
                t = t->owner;
                CS_ASSERT(!t->busy); /* the caller waited for it */
                f->outs[i] = t;
                t->busy = true;
                ev_future_init(&t->ready, t->made_by);
                t->ready_at = SIM_PS_MAX;
        }
        f->prev = NULL;
        f->next = tl->inflight;
        if (f->next)
                f->next->prev = f;
        tl->inflight = f;
}

void tl__inflight_placed(struct tl_inflight *f, sim_ps end)
{
        tl_ctx *tl = f->tl;
        sim_ps now = ev_now(&tl->sim->ev);
        f->end = end;
        if (end > tl->busy_until)
                tl->busy_until = end;
        if (f->depth > 0 && end > tl->scopes[f->depth - 1].busy_until)
                tl->scopes[f->depth - 1].busy_until = end;
        for (int i = 0; i < TL_INFLIGHT_OUTS; i++) {
                tl_tensor *t = f->outs[i];
                if (!t)
                        continue;
                t->ready_at = end;
                t->ready_ev.fn = ready_fire;
                ev_schedule_at(&tl->sim->ev, &t->ready_ev, end > now ? end : now);
        }
        if (f->prev)
                f->prev->next = f->next;
        else
                tl->inflight = f->next;
        if (f->next)
                f->next->prev = f->prev;
        ev_future_complete(&tl->sim->ev, &f->placed, 0);
}

void tl__wait_inflight(tl_ctx *tl, int depth, const char *what)
{
        for (;;) {
                struct tl_inflight *f = tl->inflight;
                while (f && f->depth < depth)
                        f = f->next;
                if (!f)
                        return;
                (void)what; /* no note: formatting one per wait costs more than the wait */
                ev_wait(tl->proc, &f->placed);
        }
}

sim_ps tl__ready_at(tl_ctx *tl, tl_tensor *t, const char *file, int line, const char *op)
{
        const tl_tensor *o = t->owner;
        if (o->sharded)
                tl__sharded_touch(tl, t, file, line, op);
        if (o->busy && o->ready_at == SIM_PS_MAX)
                tl__wait_ready(tl, t, file, line, op); /* an op in flight, end not known yet */
        return o->busy ? o->ready_at : ev_now(&tl->sim->ev);
}

static void format_note(const void *arg, char *buf, size_t len)
{
        const tl_ctx *tl = arg;
        const struct tl_note *n = &tl->note;
        switch (n->kind) {
        case TL_NOTE_AT:
                snprintf(buf, len, "%s:%d: %s", n->file, n->line, n->op);
                return;
        case TL_NOTE_RESULT:
                snprintf(buf, len, "%s:%d: %s waits for a %s result", n->file, n->line, n->op,
                         n->what);
                return;
        case TL_NOTE_RECV:
                snprintf(buf, len, "%s:%d: %s from %s tag %d", n->file, n->line, n->op, n->what,
                         n->tag);
                return;
        }
        snprintf(buf, len, "?");
}

void tl__note_wait(tl_ctx *tl, enum tl_note_kind kind, const char *file, int line, const char *op,
                   const char *what, int tag)
{
        tl->note = (struct tl_note){ .kind = kind, .file = file, .line = line, .op = op,
                                     .what = what, .tag = tag };
        ev_proc_note_lazy(tl->proc, format_note, tl);
}

void tl__wait_busy(tl_ctx *tl, tl_tensor *t, const char *file, int line, const char *op)
{
        struct ev_future *f = &t->owner->ready;
        /* Only a trace marks producers (made_at.ok); a ready owner's state
         * past its first line is not read. */
        if (tl->run->have_trace && t->owner->made_at.ok && tl->n_deps < (int)ARRAY_LEN(tl->deps))
                tl->deps[tl->n_deps++] = t->owner->made_at;
        if (!t->owner->busy)
                return;
        /* An op in flight is placed within its instant (an HBM copy) or as
         * its composite's feed goes: the future's name tells. */
        if (t->owner->ready_at != SIM_PS_MAX)
                tl__note_wait(tl, TL_NOTE_RESULT, file, line, op, t->owner->made_by, 0);
        sim_ps since = ev_now(&tl->sim->ev);
        ev_wait(tl->proc, f);
        tl__waited(tl, since, t->owner->made_by, file, line);
}

void tl__wait_tensor(tl_ctx *tl, tl_tensor *t, const char *file, int line)
{
        tl__issue(tl, TOPO_OP_WAIT, file, line);
        tl__check_tensor(tl, t, file, line, "tl_wait_tensor", "t");
        if (!t->owner->sharded)      /* untracked, and waiting touches no part of it */
                tl__wait_ready(tl, t, file, line, "tl_wait_tensor");
}

/* ---- scratch scopes: the memory side is tensor.c's ---------------------- */

void tl__scratch_scope_begin(tl_ctx *tl, const char *file, int line)
{
        tl__issue(tl, TOPO_OP_SCRATCH_SCOPE, file, line);
        tl__scope_open(tl, file, line);
}

void tl__scratch_scope_end(tl_ctx *tl, const char *file, int line)
{
        tl__issue(tl, TOPO_OP_SCRATCH_SCOPE, file, line);
        if (tl->n_scopes == 0)
                tl__fail(tl, file, line, "tl_scratch_scope_end", "no scope is open");
        struct tl_scope *s = &tl->scopes[--tl->n_scopes];
        /* The scope's ops may still read or write its scratch. */
        tl__wait_inflight(tl, tl->n_scopes + 1, "tl_scratch_scope_end");
        if (s->busy_until > ev_now(&tl->sim->ev)) {
                tl__note_wait(tl, TL_NOTE_AT, file, line, "tl_scratch_scope_end", NULL, 0);
                sim_ps since = ev_now(&tl->sim->ev);
                ev_sleep_until(tl->proc, s->busy_until);
                tl__waited(tl, since, "the scope's ops", file, line);
        }
        tl__scope_close(tl, s);
}

static struct rep_trace_ref log_engine(tl_ctx *tl, const char *component, const char *op,
                                       sim_ps start, sim_ps end, uint64_t bytes, uint64_t flops,
                                       uint64_t elem_cycles, const struct rep_param *p, unsigned n)
{
        struct rep_op rec = { .pe = tl->pe->name, .pe_index = tl->rank, .component = component,
                              .op = op, .start_ps = start, .end_ps = end, .bytes = bytes,
                              .flops = flops, .params = p, .n_params = n,
                              .elem_cycles = elem_cycles };
        return tl__log(tl, &rec);
}

/* Bytes of t's elements held as dt. */
static uint64_t bytes_as(const tl_tensor *t, tl_dtype dt)
{
        return tl_dtype_bytes(dt, tl__elems(t), t->ndim ? t->shape[t->ndim - 1] : 1);
}

static uint64_t tensor_bytes(const tl_tensor *t)
{
        return bytes_as(t, t->dtype);
}

static bool data_mode(const tl_ctx *tl)
{
        return tl->run->opts->mode == TL_MODE_DATA;
}

/* ---- data movement ------------------------------------------------------------- */

/* A copy on the PE's DMA engine, in flight until placed (an HBM copy at
 * the end of its instant, hw_dma_copy_later); records are reused. */
struct tl_dma_op {
        struct tl_pooled pooled;     /* in tl_ctx.dma_ops */
        struct hw_dma_req req;       /* the copy */
        struct hw_hbm_span from_home, to_home; /* its spans (req points at them) */
        struct tl_inflight fl;       /* in flight until placed */
        const char *op;              /* op_log name: load, store, copy_to */
        struct rep_param p[3];       /* its op_log parameters */
        unsigned n_params;           /* entries of p */
        const char *file;            /* the call it was issued by, charged its time */
        int line;                    /* and its line */
        struct rep_line_hint prof;   /* that line's profile entry */
        tl_tensor *out;              /* the tensor it writes (the trace marks its producer) */
};

static void dma_placed(struct hw_dma_req *req, sim_ps start, sim_ps end)
{
        struct tl_dma_op *d = container_of(req, struct tl_dma_op, req);
        tl_ctx *tl = d->fl.tl;
        struct rep_op rec = { .pe = tl->pe->name, .pe_index = tl->rank, .component = "pe_dma",
                              .op = d->op, .start_ps = start, .end_ps = end, .bytes = req->bytes,
                              .params = d->p, .n_params = d->n_params };
        struct rep_trace_ref at = tl__log_stage(tl, &rec, d->file, d->line, &d->prof);
        if (tl->run->have_trace && d->out && d->out->space != TL_HBM)
                d->out->owner->made_at = at;
        tl__inflight_placed(&d->fl, end);
        tl__pool_put(&tl->dma_ops, d);
}

/* Move bytes on this PE's DMA engine from src to dst (HBM where their
 * homes put the region; TCM and scratch are local); out is ready when they
 * land. p[n] are the op_log parameters (static strings). */
static void dma_move(tl_ctx *tl, const tl_tensor *src, const tl_tensor *dst, uint64_t bytes,
                     const char *op, const struct rep_param *p, unsigned n, tl_tensor *out,
                     const char *file, int line)
{
        struct tl_dma_op *d = tl__pool_get(tl, &tl->dma_ops, sizeof *d, file, line, op);
        d->op = op;
        d->out = out;
        d->file = file;
        d->line = line;
        d->prof = tl->issued;        /* the issuing call's, as it was just issued */
        memcpy(d->p, p, n * sizeof *p);
        d->n_params = n;
        d->req = (struct hw_dma_req){ .pe = tl->pe, .from_hbm = src->space == TL_HBM,
                                      .to_hbm = dst->space == TL_HBM, .bytes = bytes,
                                      .at = ev_now(&tl->sim->ev), .done = dma_placed };
        if (d->req.from_hbm) {
                tl__hbm_span(tl->run, src, &d->from_home);
                d->req.from_home = &d->from_home;
        }
        if (d->req.to_hbm) {
                tl__hbm_span(tl->run, dst, &d->to_home);
                d->req.to_home = &d->to_home;
        }
        tl__inflight_begin(tl, &d->fl, (tl_tensor *[TL_INFLIGHT_OUTS]){ out, NULL, NULL });
        hw_dma_copy_later(&d->req);
}

static const char *space_key(tl_space sp)
{
        return sp == TL_HBM ? "hbm" : sp == TL_TCM ? "tcm" : "scratch";
}

tl_tensor *tl__load(tl_ctx *tl, tl_tensor *src, const char *file, int line)
{
        tl__issue(tl, TOPO_OP_LOAD, file, line);
        tl__check_tensor(tl, src, file, line, "tl_load", "src");
        tl__wait_ready(tl, src, file, line, "tl_load");
        tl_tensor *t = tl__new_tensor(tl, file, line, "tl_load", TL_SCRATCH, src->dtype, src->ndim,
                                      src->shape);
        uint64_t bytes = tensor_bytes(src);
        if (data_mode(tl)) {
                tl_tensor in;
                tl__compute_copy(tl__data_read(tl, src, &in, file, line, "tl_load"), t,
                                 tl__is_bfp(src->dtype) ? TL_FP32 : src->dtype);
        }
        struct rep_param p[2] = { { .name = "src", .kind = REP_STR, .s = space_key(src->space) },
                                  { .name = "dtype", .kind = REP_STR, .s = dtype_names[src->dtype] } };
        dma_move(tl, src, t, bytes, "load", p, 2, t, file, line);
        return t;
}

static void check_same_shape(tl_ctx *tl, const char *file, int line, const char *op,
                             const tl_tensor *a, const tl_tensor *b)
{
        bool same = a->ndim == b->ndim;
        for (int i = 0; same && i < a->ndim; i++)
                same = a->shape[i] == b->shape[i];
        if (!same) {
                char sa[96], sb[96];
                tl__shape_text(sa, sizeof sa, a->ndim, a->shape);
                tl__shape_text(sb, sizeof sb, b->ndim, b->shape);
                tl__fail(tl, file, line, op, "shape mismatch: destination %s, source %s", sa, sb);
        }
}

void tl__need_local(tl_ctx *tl, const tl_tensor *t, const char *file, int line, const char *op,
                       const char *which)
{
        tl__check_tensor(tl, t, file, line, op, which);
        if (t->space == TL_HBM)
                tl__fail(tl, file, line, op, "operand %s is in HBM; tl_load it first", which);
}

static void write_out(tl_ctx *tl, tl_tensor *dst, tl_tensor *src, const char *file, int line,
                      const char *op, enum topo_op type)
{
        tl__issue(tl, type, file, line);
        tl__check_tensor(tl, dst, file, line, op, "dst");
        tl__check_tensor(tl, src, file, line, op, "src");
        if (dst->space == TL_SCRATCH)
                tl__fail(tl, file, line, op, type == TOPO_OP_STORE
                         ? "the destination is scratch; store to HBM or TCM"
                         : "the destination is scratch; copy_to writes TCM (tl_alloc(TL_TCM, ...)) or HBM");
        if (type == TOPO_OP_STORE)
                tl__need_local(tl, src, file, line, op, "src");
        check_same_shape(tl, file, line, op, dst, src);
        if (!tl__same_view(dst, src))
                tl__check_apart(tl, file, line, op, dst, "dst", src, "src", "a copy between "
                                "overlapping views would depend on the order of its elements");
        tl__check_block_start(tl, file, line, op, dst, "dst");
        tl__wait_ready(tl, src, file, line, op);
        tl__wait_ready(tl, dst, file, line, op);
        uint64_t bytes = bytes_as(src, dst->dtype);
        if (data_mode(tl)) {
                tl_tensor in, out;
                tl__compute_copy(tl__data_read(tl, src, &in, file, line, op),
                                 tl__data_write(tl, dst, &out, file, line, op), dst->dtype);
        }
        struct rep_param p[3] = { { .name = "src", .kind = REP_STR, .s = space_key(src->space) },
                                  { .name = "dst", .kind = REP_STR, .s = space_key(dst->space) },
                                  { .name = "dtype", .kind = REP_STR, .s = dtype_names[dst->dtype] } };
        /* A TCM destination is ready when the write lands (its later readers
         * wait); an HBM one carries no readiness (see tl__finish_at). */
        dma_move(tl, src, dst, bytes, type == TOPO_OP_STORE ? "store" : "copy_to", p, 3, dst,
                 file, line);
}

void tl__store(tl_ctx *tl, tl_tensor *dst, tl_tensor *src, const char *file, int line)
{
        write_out(tl, dst, src, file, line, "tl_store", TOPO_OP_STORE);
}

void tl__copy_to(tl_ctx *tl, tl_tensor *dst, tl_tensor *src, const char *file, int line)
{
        write_out(tl, dst, src, file, line, "tl_copy_to", TOPO_OP_COPY_TO);
}

/* ---- compute --------------------------------------------------------------------- */

/* Run op over elements on PE_MATH (across_lanes: a reduction along the
 * last axis), with tcm_bytes of operands and result through TCM; returns
 * the end, logs it. */
static sim_ps run_math(tl_ctx *tl, enum topo_op type, const char *name, uint64_t elements,
                       bool across_lanes, uint64_t tcm_bytes)
{
        sim_ps start, end = hw_math_run(tl->pe, type, elements, across_lanes, tcm_bytes,
                                        ev_now(&tl->sim->ev), &start);
        log_engine(tl, "pe_math", name, start, end, tcm_bytes, elements,
                   sat_mul_u64(elements, tl->sim->topo->pe.math.cycles_per_element[type]), NULL,
                   0);
        return end;
}

/* ---- the ops' table ------------------------------------------------------------- */

#define ROW_KEY(id, name, key, form) [TL_##id] = TOPO_OP_##key,
#define ROW_NAME(id, name, key, form) [TL_##id] = #name,
#define ROW_ID(id, name, key, form) [TL_##id] = "TL_" #id,
#define ROW_FORM(id, name, key, form) [TL_##id] = TL__FORM_##form,
static const enum topo_op op_keys[] = { TL_OPS(ROW_KEY, ROW_KEY) };
static const char *const op_names[] = { TL_OPS(ROW_NAME, ROW_NAME) };
static const char *const op_ids[] = { TL_OPS(ROW_ID, ROW_ID) };
static const enum tl__form op_forms[] = { TL_OPS(ROW_FORM, ROW_FORM) };
#undef ROW_KEY
#undef ROW_NAME
#undef ROW_ID
#undef ROW_FORM

bool tl__op_valid(tl_op op)
{
        return (unsigned)op < ARRAY_LEN(op_names);
}

enum topo_op tl__math_type(tl_op op)
{
        return op_keys[op];
}

const char *tl__op_name(tl_op op)
{
        return op_names[op];
}

const char *tl__op_id(tl_op op)
{
        return op_ids[op];
}

enum tl__form tl__op_form(tl_op op)
{
        return op_forms[op];
}

/* Run op over n elements on PE_MATH, reading in_bytes and writing out
 * through TCM; out becomes ready at its end. */
static tl_tensor *math_done(tl_ctx *tl, tl_op op, tl_tensor *out, uint64_t n, bool across_lanes,
                            uint64_t in_bytes)
{
        tl__finish_at(tl, out, run_math(tl, tl__math_type(op), tl__op_name(op), n, across_lanes,
                                        in_bytes + tensor_bytes(out)));
        return out;
}

/* The fp32 scratch result of an elementwise op of x, once x is ready. */
static tl_tensor *like_x(tl_ctx *tl, const char *name, tl_tensor *x, const char *file, int line)
{
        tl__need_local(tl, x, file, line, name, "x");
        tl__wait_ready(tl, x, file, line, name);
        return tl__new_tensor(tl, file, line, name, TL_SCRATCH, TL_FP32, x->ndim, x->shape);
}

/* op (a reduction, issued) of x along axis (negative: from the end),
 * kept as extent 1. */
static tl_tensor *reduce(tl_ctx *tl, tl_op op, const char *name, tl_tensor *x, int axis,
                         const char *file, int line)
{
        tl__need_local(tl, x, file, line, name, "x");
        int ax = axis < 0 ? axis + x->ndim : axis;
        if (x->ndim < 1)
                tl__fail(tl, file, line, name, "axis %d of a 0-D tensor: it has no axis to reduce",
                         axis);
        if (ax < 0 || ax >= x->ndim)
                tl__fail(tl, file, line, name, "axis %d of a %dD tensor: expected -%d..%d", axis,
                         x->ndim, x->ndim, x->ndim - 1);
        tl__wait_ready(tl, x, file, line, name);
        int64_t shape[TL_MAX_DIMS];
        memcpy(shape, x->shape, sizeof shape);
        shape[ax] = 1;
        tl_tensor *out = tl__new_tensor(tl, file, line, name, TL_SCRATCH, TL_FP32, x->ndim, shape);
        if (data_mode(tl))
                tl__compute_reduce(op, x, ax, out);
        return math_done(tl, op, out, (uint64_t)tl__elems(x), ax == x->ndim - 1, tensor_bytes(x));
}

/* Pay op's issue cost; a kernel error unless op has one of the forms
 * want1, want2 (what names them in the message). Returns op's name. */
static const char *issue_math(tl_ctx *tl, tl_op op, enum tl__form want1, enum tl__form want2,
                              const char *what, const char *file, int line, const char *entry)
{
        if (!tl__op_valid(op))
                tl__fail(tl, file, line, entry, "op %d is not a tl_op (expected %s)", (int)op,
                         what);
        tl__issue(tl, tl__math_type(op), file, line);
        enum tl__form f = tl__op_form(op);
        if (f != want1 && f != want2)
                tl__fail(tl, file, line, tl__op_name(op), "%s is not %s", tl__op_id(op), what);
        return tl__op_name(op);
}

tl_tensor *tl__math1(tl_ctx *tl, tl_math_op op, tl_tensor *x, const char *file, int line)
{
        const char *name = issue_math(tl, op, TL__FORM_UNARY, TL__FORM_REDUCE,
                                      "a unary op or a reduction", file, line, "tl_math1");
        if (tl__op_form(op) == TL__FORM_REDUCE)
                return reduce(tl, op, name, x, -1, file, line);
        tl_tensor *out = like_x(tl, name, x, file, line);
        if (data_mode(tl))
                tl__compute_math1(op, x, out);
        return math_done(tl, op, out, (uint64_t)tl__elems(x), false, tensor_bytes(x));
}

tl_tensor *tl__reduce(tl_ctx *tl, tl_math_op op, tl_tensor *x, int axis, const char *file,
                      int line)
{
        const char *name = issue_math(tl, op, TL__FORM_REDUCE, TL__FORM_REDUCE, "a reduction",
                                      file, line, "tl_reduce");
        return reduce(tl, op, name, x, axis, file, line);
}

tl_tensor *tl__scalar(tl_ctx *tl, tl_math_op op, tl_tensor *x, float v, const char *file, int line)
{
        const char *name = issue_math(tl, op, TL__FORM_SCALAR, TL__FORM_SCALAR,
                                      "an op with a scalar operand", file, line, "tl_scalar");
        tl_tensor *out = like_x(tl, name, x, file, line);
        if (data_mode(tl))
                tl__compute_scalar(op, x, v, out);
        return math_done(tl, op, out, (uint64_t)tl__elems(x), false, tensor_bytes(x));
}

tl_tensor *tl__scale(tl_ctx *tl, tl_tensor *x, float factor, const char *file, int line)
{
        return tl__scalar(tl, TL_SCALE, x, factor, file, line);
}

/* NumPy broadcasting of a and b; the result shape into shape. */
static int broadcast(const tl_tensor *a, const tl_tensor *b, int64_t *shape)
{
        int nd = a->ndim > b->ndim ? a->ndim : b->ndim;
        for (int i = 0; i < nd; i++) {
                int ia = i - (nd - a->ndim), ib = i - (nd - b->ndim);
                int64_t ea = ia >= 0 ? a->shape[ia] : 1, eb = ib >= 0 ? b->shape[ib] : 1;
                if (ea != eb && ea != 1 && eb != 1)
                        return -1;
                shape[i] = ea > eb ? ea : eb;
        }
        return nd;
}

/* The kernel error of operands t[] named n1, n2 and n3 (NULL: two
 * operands) whose shapes do not broadcast together. */
_Noreturn static void no_broadcast(tl_ctx *tl, const char *file, int line, const char *op,
                                   const tl_tensor *const *t, const char *n1, const char *n2,
                                   const char *n3)
{
        char s[3][96];
        for (int i = 0; i < (n3 ? 3 : 2); i++)
                tl__shape_text(s[i], sizeof s[i], t[i]->ndim, t[i]->shape);
        if (n3)
                tl__fail(tl, file, line, op, "shapes do not broadcast: %s %s, %s %s and %s %s", n1,
                         s[0], n2, s[1], n3, s[2]);
        tl__fail(tl, file, line, op, "shapes do not broadcast: %s %s and %s %s", n1, s[0], n2,
                 s[1]);
}

tl_tensor *tl__math2(tl_ctx *tl, tl_math_op op, tl_tensor *a, tl_tensor *b, const char *file,
                     int line)
{
        const char *name = issue_math(tl, op, TL__FORM_BINARY, TL__FORM_BINARY, "a binary op",
                                      file, line, "tl_math2");
        tl__need_local(tl, a, file, line, name, "a");
        tl__need_local(tl, b, file, line, name, "b");
        int64_t shape[TL_MAX_DIMS];
        int nd = broadcast(a, b, shape);
        if (nd < 0)
                no_broadcast(tl, file, line, name, (const tl_tensor *[]){ a, b }, "a", "b", NULL);
        tl__wait_ready(tl, a, file, line, name);
        tl__wait_ready(tl, b, file, line, name);
        tl_tensor *out = tl__new_tensor(tl, file, line, name, TL_SCRATCH, TL_FP32, nd, shape);
        if (data_mode(tl))
                tl__compute_math2(op, a, b, out);
        return math_done(tl, op, out, (uint64_t)tl__elems(out), false,
                         tensor_bytes(a) + tensor_bytes(b));
}

tl_tensor *tl__where(tl_ctx *tl, tl_tensor *mask, tl_tensor *a, tl_tensor *b, const char *file,
                     int line)
{
        const char *name = tl__op_name(TL_WHERE);
        tl__issue(tl, tl__math_type(TL_WHERE), file, line);
        tl__need_local(tl, mask, file, line, name, "mask");
        tl__need_local(tl, a, file, line, name, "a");
        tl__need_local(tl, b, file, line, name, "b");
        tl_tensor ab = { .ndim = 0 };
        ab.ndim = broadcast(a, b, ab.shape);
        /* Into its own array: broadcast reads ab's extents while it writes
         * (written over ab's, a [10, 10, 10, 10] mask passed [8, 16] a, b). */
        int64_t shape[TL_MAX_DIMS];
        int nd = ab.ndim < 0 ? -1 : broadcast(mask, &ab, shape);
        if (nd < 0)
                no_broadcast(tl, file, line, name, (const tl_tensor *[]){ mask, a, b }, "mask",
                             "a", "b");
        tl__wait_ready(tl, mask, file, line, name);
        tl__wait_ready(tl, a, file, line, name);
        tl__wait_ready(tl, b, file, line, name);
        tl_tensor *out = tl__new_tensor(tl, file, line, name, TL_SCRATCH, TL_FP32, nd, shape);
        if (data_mode(tl))
                tl__compute_where(mask, a, b, out);
        return math_done(tl, TL_WHERE, out, (uint64_t)tl__elems(out), false,
                         tensor_bytes(mask) + tensor_bytes(a) + tensor_bytes(b));
}

tl_tensor *tl__cast(tl_ctx *tl, tl_tensor *x, tl_dtype dt, const char *file, int line)
{
        tl__issue(tl, TOPO_OP_CAST, file, line);
        tl__need_local(tl, x, file, line, "cast", "x");
        tl__check_dtype(tl, dt, file, line, "cast");
        tl__wait_ready(tl, x, file, line, "cast");
        tl_tensor *out = tl__new_tensor(tl, file, line, "cast", TL_SCRATCH, dt, x->ndim, x->shape);
        if (data_mode(tl))
                tl__compute_copy(x, out, dt);
        uint64_t n = (uint64_t)tl__elems(x);
        tl__finish_at(tl, out, run_math(tl, TOPO_OP_CAST, "cast", n, false,
                                        tensor_bytes(x) + bytes_as(x, dt)));
        return out;
}

tl_tensor *tl__fill(tl_ctx *tl, tl_dtype dt, int ndim, const int64_t *shape, float value,
                    const char *file, int line)
{
        tl__issue(tl, TOPO_OP_FILL, file, line);
        tl__check_dtype(tl, dt, file, line, "fill");
        tl_tensor *out = tl__new_tensor(tl, file, line, "fill", TL_SCRATCH, dt, ndim, shape);
        if (data_mode(tl))
                tl__compute_fill(out, tl__round(value, dt));
        uint64_t n = (uint64_t)tl__elems(out);
        tl__finish_at(tl, out, run_math(tl, TOPO_OP_FILL, "fill", n, false, bytes_as(out, dt)));
        return out;
}

tl_tensor *tl__mask_causal(tl_ctx *tl, tl_tensor *x, int64_t offset, const char *file, int line)
{
        tl__issue(tl, TOPO_OP_MASK, file, line);
        tl__need_local(tl, x, file, line, "mask_causal", "x");
        if (x->ndim < 2)
                tl__fail(tl, file, line, "mask_causal", "needs at least 2 axes (got %d)", x->ndim);
        tl__wait_ready(tl, x, file, line, "mask_causal");
        tl_tensor *out = tl__new_tensor(tl, file, line, "mask_causal", TL_SCRATCH, TL_FP32,
                                        x->ndim, x->shape);
        if (data_mode(tl))
                tl__compute_mask_causal(x, offset, out);
        uint64_t n = (uint64_t)tl__elems(x);
        tl__finish_at(tl, out, run_math(tl, TOPO_OP_MASK, "mask", n, false,
                                        tensor_bytes(x) + tensor_bytes(out)));
        return out;
}

tl_tensor *tl__dot(tl_ctx *tl, tl_tensor *a, tl_tensor *b, bool trans_b, const char *file,
                   int line)
{
        tl__issue(tl, TOPO_OP_DOT, file, line);
        tl__need_local(tl, a, file, line, "dot", "a");
        tl__need_local(tl, b, file, line, "dot", "b");
        if (a->ndim != 2 || b->ndim != 2)
                tl__fail(tl, file, line, "dot", "operands must be 2-D (got %dD and %dD); tl_reshape them",
                         a->ndim, b->ndim);
        int64_t m = a->shape[0], k = a->shape[1];
        int64_t kb = trans_b ? b->shape[1] : b->shape[0], n = trans_b ? b->shape[0] : b->shape[1];
        if (k != kb)
                tl__fail(tl, file, line, "dot", "inner dimensions differ: a is [%lld, %lld], b%s is [%lld, %lld]",
                         (long long)m, (long long)k, trans_b ? "^T" : "", (long long)kb,
                         (long long)n);
        uint64_t flops;
        if (!ckd_mul_u64(&flops, (uint64_t)m, (uint64_t)n) ||
            !ckd_mul_u64(&flops, flops, 2 * (uint64_t)k))
                tl__fail(tl, file, line, "dot", "[%lld, %lld] x [%lld, %lld]: the flop count "
                         "overflows 64 bits", (long long)m, (long long)k, (long long)k,
                         (long long)n);
        tl__wait_ready(tl, a, file, line, "dot");
        tl__wait_ready(tl, b, file, line, "dot");
        int64_t shape[2] = { m, n };
        tl_tensor *out = tl__new_tensor(tl, file, line, "dot", TL_SCRATCH, TL_FP32, 2, shape);
        if (data_mode(tl))
                tl__compute_dot(a, b, trans_b, out);
        /* a and b in from TCM, the fp32 result out. */
        uint64_t tcm = tensor_bytes(a) + tensor_bytes(b) + tensor_bytes(out);
        sim_ps start, end = hw_gemm_run(tl->pe, (uint64_t)m, (uint64_t)n, (uint64_t)k, tcm,
                                        ev_now(&tl->sim->ev), &start);
        struct rep_param p[3] = { { .name = "m", .kind = REP_INT, .i = m },
                                  { .name = "n", .kind = REP_INT, .i = n },
                                  { .name = "k", .kind = REP_INT, .i = k } };
        log_engine(tl, "pe_gemm", "dot", start, end, tensor_bytes(a) + tensor_bytes(b),
                   flops, 0, p, 3);
        tl__finish_at(tl, out, end);
        return out;
}

/* ---- send / recv ------------------------------------------------------------------ */

static struct tl_msg *msg_new(struct tl_run *r)
{
        struct tl_msg *m = r->free_msgs;
        if (m) {
                r->free_msgs = m->next;
                struct tl_msg *all = m->all_next;
                memset(m, 0, sizeof *m);
                m->all_next = all;
                return m;
        }
        m = calloc(1, sizeof *m);
        if (m) {
                m->all_next = r->all_msgs;
                r->all_msgs = m;
        }
        return m;
}

void tl__msg_drop_payload(struct tl_msg *m)
{
        if (m->payload && --m->payload->refs == 0)
                free(m->payload);
        m->payload = NULL;
}

static void msg_free(struct tl_run *r, struct tl_msg *m)
{
        tl__msg_drop_payload(m);
        m->next = r->free_msgs;
        r->free_msgs = m;
}

/* ---- the inbox index (struct tl_inbox) ---- */

static size_t inbox_hash(uint32_t dst, uint32_t src, int tag)
{
        /* splitmix64's finaliser over the packed key: every bit of each
         * field reaches the low bits the table uses. */
        uint64_t h = ((uint64_t)dst << 32 | src) ^ (uint64_t)(uint32_t)tag *
                                                          UINT64_C(0x9e3779b97f4a7c15);
        h = (h ^ h >> 30) * UINT64_C(0xbf58476d1ce4e5b9);
        h = (h ^ h >> 27) * UINT64_C(0x94d049bb133111eb);
        return (size_t)(h ^ h >> 31);
}

/* The slot of (dst, src, tag): its queue, or the free slot where it goes. */
static struct tl_inbox_q *inbox_slot(const struct tl_inbox *in, uint32_t dst, uint32_t src,
                                     int tag)
{
        size_t mask = in->cap - 1;
        for (size_t i = inbox_hash(dst, src, tag) & mask;; i = (i + 1) & mask) {
                struct tl_inbox_q *q = &in->slots[i];
                if (!q->used || (q->dst == dst && q->src == src && q->tag == tag))
                        return q;
        }
}

/* Room for one more message sent and not yet received. 0 or -ENOMEM. */
static int inbox_reserve(struct tl_inbox *in)
{
        if (2 * (in->n_out + 1) <= in->cap) {
                in->n_out++;
                return 0;
        }
        size_t cap = in->cap ? 2 * in->cap : 64;
        struct tl_inbox_q *slots = calloc(cap, sizeof *slots), *old = in->slots;
        if (!slots)
                return -ENOMEM;
        size_t old_cap = in->cap;
        in->slots = slots;
        in->cap = cap;
        for (size_t i = 0; i < old_cap; i++)
                if (old[i].used)
                        *inbox_slot(in, old[i].dst, old[i].src, old[i].tag) = old[i];
        free(old);
        in->n_out++;
        return 0;
}

static void inbox_push(struct tl_inbox *in, uint32_t dst, struct tl_msg *m)
{
        struct tl_inbox_q *q = inbox_slot(in, dst, m->src_rank, m->tag);
        m->next = NULL;
        if (q->used) {
                q->tail->next = m;
        } else {
                *q = (struct tl_inbox_q){ .dst = dst, .src = m->src_rank, .tag = m->tag,
                                          .used = true, .head = m };
        }
        q->tail = m;
}

/* The oldest landed message of (dst, src, tag), taken out; NULL if none. */
static struct tl_msg *inbox_take(struct tl_inbox *in, uint32_t dst, uint32_t src, int tag)
{
        if (!in->cap)
                return NULL;
        struct tl_inbox_q *q = inbox_slot(in, dst, src, tag);
        if (!q->used)
                return NULL;
        struct tl_msg *m = q->head;
        q->head = m->next;
        if (q->head)
                return m;
        /* The queue is empty: delete its slot, shifting back the entries
         * of its probe run that could sit in it (linear probing). */
        size_t mask = in->cap - 1, hole = (size_t)(q - in->slots);
        q->used = false;
        for (size_t i = (hole + 1) & mask; in->slots[i].used; i = (i + 1) & mask) {
                struct tl_inbox_q *e = &in->slots[i];
                size_t home = inbox_hash(e->dst, e->src, e->tag) & mask;
                /* e may move to hole unless its home lies in (hole, i]. */
                if (((i - home) & mask) >= ((i - hole) & mask)) {
                        in->slots[hole] = *e;
                        e->used = false;
                        hole = i;
                }
        }
        return m;
}

int tl__inbox_check_empty(struct tl_run *r, struct diag *d)
{
        const struct tl_inbox *in = &r->inbox;
        if (in->n_out == 0)
                return 0;
        const struct tl_msg *first = NULL;
        for (size_t i = 0; i < in->cap; i++)
                for (const struct tl_msg *m = in->slots[i].used ? in->slots[i].head : NULL; m;
                     m = m->next)
                        if (!first || m->seq < first->seq)
                                first = m;
        if (!first) {                /* not landed: cannot happen once the run is done */
                diag_error(d, "%zu messages sent and never received", in->n_out);
                return -1;
        }
        diag_error_at(d, first->file, (unsigned)first->line, 0,
                      "PE %s: %s: %zu message%s sent and never received by the kernel's end "
                      "(the first sent: to PE %s, tag %d); every message needs its tl_recv",
                      r->sim->pes[first->src_rank].name, first->op, in->n_out,
                      in->n_out == 1 ? "" : "s", first->dst->pe->name, first->tag);
        return -1;
}

void tl__inbox_fini(struct tl_inbox *in)
{
        free(in->slots);
        memset(in, 0, sizeof *in);
}

static void msg_land(struct ev_loop *ev, struct ev_event *e)
{
        struct tl_msg *m = container_of(e, struct tl_msg, land);
        tl_ctx *dst = m->dst;
        if (dst->recv_src >= 0 && (int)m->src_rank == dst->recv_src && m->tag == dst->recv_tag) {
                dst->recv_src = -1;
                dst->recv_got = m;
                ev_future_complete(ev, &dst->recv_ready, 0);
                return;
        }
        inbox_push(&dst->run->inbox, dst->rank, m);
}

static void check_rank(tl_ctx *tl, int rank, const char *file, int line, const char *op)
{
        if (rank < 0 || (uint32_t)rank >= tl->sim->n_pes)
                tl__fail(tl, file, line, op, "rank %d: expected 0..%u", rank, tl->sim->n_pes - 1);
}

/* Data mode: a payload holding a contiguous copy of t, no message yet
 * holding it (refs 0); NULL in op_log mode. */
static struct tl_payload *payload_of(tl_ctx *tl, tl_tensor *t, const char *file, int line,
                                     const char *op)
{
        if (!data_mode(tl))
                return NULL;
        struct tl_payload *p = malloc(sizeof *p + (size_t)tl__elems(t) * sizeof(float) + 1);
        if (!p)
                tl__fail(tl, file, line, op, "host out of memory");
        p->refs = 0;
        /* A contiguous image of t over the payload. */
        tl_tensor tmp = *t;
        tmp.base = p->data;
        tmp.offset = 0;
        int64_t st = 1;
        for (int i = t->ndim - 1; i >= 0; i--) {
                tmp.stride[i] = st;
                st *= t->shape[i];
        }
        tl__compute_copy(t, &tmp, tl__is_bfp(t->dtype) ? TL_FP32 : t->dtype);
        return p;
}

/* A message of t to dst holding payload p (data mode; NULL otherwise). */
static struct tl_msg *msg_of(tl_ctx *tl, tl_tensor *t, struct tl_payload *p, tl_ctx *dst, int tag,
                             const char *file, int line, const char *op)
{
        struct tl_msg *m = msg_new(tl->run);
        if (!m || inbox_reserve(&tl->run->inbox) < 0) {
                if (p && p->refs == 0)
                        free(p);
                tl__fail(tl, file, line, op, "host out of memory");
        }
        m->dst = dst;
        m->src_rank = tl->rank;
        m->tag = tag;
        m->dtype = t->dtype;
        m->ndim = t->ndim;
        memcpy(m->shape, t->shape, sizeof m->shape);
        m->file = file;
        m->line = line;
        m->op = op;
        m->seq = ++tl->run->n_msgs_sent;
        m->payload = p;
        if (p)
                p->refs++;
        return m;
}

/* The sender's DMA reads bytes out of its TCM from its descriptor's start
 * (after the setup): when the read-out is done, no earlier than sent. */
static sim_ps tcm_read_out(tl_ctx *tl, sim_ps start, uint64_t bytes, sim_ps sent)
{
        sim_ps read = hw_tcm_reserve(tl->pe, start + tl->sim->topo->pe.dma.setup_ps, bytes);
        return read > sent ? read : sent;
}

/* The sender's DMA has read m out by sent; its last byte reaches the
 * receiver's DMA at arrive: the receiving DMA drains it into the inbox,
 * and it lands there no earlier than sent. Logs the drain (and the flow
 * from the sender's record) and schedules the landing. */
static void msg_deliver(tl_ctx *tl, struct tl_msg *m, uint64_t bytes, sim_ps sent, sim_ps arrive)
{
        struct tl_run *r = tl->run;
        struct hw_sim *s = tl->sim;
        tl_ctx *dst = m->dst;
        sim_ps drain = hw_bytes_ps(bytes, hw_dma_bw(s->topo));
        /* The first bytes reach the receiver one drain before the last;
         * a message shorter than its drain starts at once (0: the
         * resource takes it from now). */
        sim_ps head = arrive > drain ? arrive - drain : 0;
        sim_ps drain_start, landed = hw_dma_reserve(dst->pe, head, bytes, false, 0, &drain_start);
        /* The receiver's DMA writes the tensor into its TCM. */
        sim_ps written = hw_tcm_reserve(dst->pe, drain_start, bytes);
        if (landed < written)
                landed = written;
        if (landed < sent)
                landed = sent;
        struct rep_param q[2] = { { .name = "src", .kind = REP_INT, .i = tl->rank },
                                  { .name = "tag", .kind = REP_INT, .i = m->tag } };
        struct rep_op rec = { .pe = dst->pe->name, .pe_index = dst->rank, .component = "pe_dma",
                              .op = "recv_drain", .start_ps = drain_start, .end_ps = landed,
                              .bytes = bytes, .params = q, .n_params = 2 };
        struct rep_trace_ref to = tl__log(tl, &rec);
        if (r->have_trace)
                rep_trace_flow(&r->trace, ++r->next_flow, "ipcq", &m->send_at, &to);
        m->drain_at = to;
        m->land.fn = msg_land;
        ev_schedule_at(&s->ev, &m->land, landed);
}

void tl__send(tl_ctx *tl, int dst_rank, tl_tensor *t, int tag, const char *file, int line)
{
        tl__issue(tl, TOPO_OP_SEND, file, line);
        check_rank(tl, dst_rank, file, line, "tl_send");
        tl__need_local(tl, t, file, line, "tl_send", "t");
        tl__wait_ready(tl, t, file, line, "tl_send");
        struct hw_sim *s = tl->sim;
        tl_ctx *dst = &tl->run->ctx[dst_rank];
        struct tl_msg *m = msg_of(tl, t, payload_of(tl, t, file, line, "tl_send"), dst, tag,
                                  file, line, "tl_send");
        uint64_t bytes = tensor_bytes(t);
        /* Sender's DMA: setup and read-out; then the route; then the
         * receiving DMA drains the bytes into its inbox. */
        sim_ps now = ev_now(&s->ev), start;
        sim_ps sent = hw_dma_reserve(tl->pe, now, bytes, true, 0, &start);
        sim_ps arrive = hw_xfer(s, tl->pe->node_dma, dst->pe->node_dma, bytes,
                                start + s->topo->pe.dma.setup_ps);
        if (arrive == TOPO_PS_NONE)
                tl__fail(tl, file, line, "tl_send", "host out of memory routing to PE %d",
                         dst_rank);
        sent = tcm_read_out(tl, start, bytes, sent);
        struct rep_param p[2] = { { .name = "dst", .kind = REP_INT, .i = dst_rank },
                                  { .name = "tag", .kind = REP_INT, .i = tag } };
        m->send_at = log_engine(tl, "pe_dma", "send", start, sent, bytes, 0, 0, p, 2);
        msg_deliver(tl, m, bytes, sent, arrive);
        tl__finish_at(tl, NULL, sent);
}

/* tl_mcast and tl_mcast_linked (op: the call's name): linked, the sender
 * pays pe.dma.mcast_linked_dest_ns per packet and destination, else
 * pe.dma.mcast_dest_ns. */
static void mcast(tl_ctx *tl, int row0, int col0, int n_rows, int n_cols, tl_tensor *t, int tag,
                  bool linked, const char *file, int line, const char *op)
{
        tl__issue(tl, TOPO_OP_SEND, file, line);
        tl__need_local(tl, t, file, line, op, "t");
        struct hw_sim *s = tl->sim;
        int rows = (int)s->topo->cube.noc.rows, cols = (int)s->topo->cube.noc.cols;
        if (n_rows < 1 || n_cols < 1 || row0 < 0 || col0 < 0 || row0 > rows - n_rows ||
            col0 > cols - n_cols)
                tl__fail(tl, file, line, op,
                         "rows [%d, +%d) x cols [%d, +%d) is not a rectangle of the %d x %d NoC",
                         row0, n_rows, col0, n_cols, rows, cols);
        tl__wait_ready(tl, t, file, line, op);
        uint32_t first = tl->rank - tl->pe->pe, n = 0;
        uint32_t *dsts = tl__arena_alloc(tl, (size_t)n_rows * (size_t)n_cols * 2 * sizeof *dsts);
        if (!dsts)
                tl__fail(tl, file, line, op, "host out of memory");
        sim_ps *arrive = tl__arena_alloc(tl, (size_t)n_rows * (size_t)n_cols * sizeof *arrive);
        if (!arrive)
                tl__fail(tl, file, line, op, "host out of memory");
        uint32_t *ranks = dsts + (size_t)n_rows * (size_t)n_cols;
        for (int r = row0; r < row0 + n_rows; r++) {
                for (int c = col0; c < col0 + n_cols; c++) {
                        uint32_t rank = first + (uint32_t)(r * cols + c);
                        if (rank == tl->rank)
                                continue;       /* no loopback: the sender has the data */
                        ranks[n] = rank;
                        dsts[n++] = tl->run->ctx[rank].pe->node_dma;
                }
        }
        uint64_t bytes = tensor_bytes(t);
        sim_ps now = ev_now(&s->ev), start;
        /* The sender's NoC interface, per packet, serves each destination
         * (its acknowledgement) beside the bytes. */
        const struct topo_pe_dma *dma = &s->topo->pe.dma;
        sim_ps per_dest = linked ? dma->mcast_linked_dest_ps : dma->mcast_dest_ps;
        sim_ps extra = sat_mul_u64(sat_mul_u64(hw_noc_packets(s->topo, bytes), n), per_dest);
        sim_ps sent = hw_dma_reserve(tl->pe, now, bytes, true, extra, &start);
        if (n && hw_xfer_mcast(s, tl->pe->node_dma, dsts, n, bytes,
                               start + s->topo->pe.dma.setup_ps, arrive) == TOPO_PS_NONE)
                tl__fail(tl, file, line, op, "host out of memory routing the multicast");
        sent = tcm_read_out(tl, start, bytes, sent);
        struct rep_param p[5] = { { .name = "row0", .kind = REP_INT, .i = row0 },
                                  { .name = "col0", .kind = REP_INT, .i = col0 },
                                  { .name = "rows", .kind = REP_INT, .i = n_rows },
                                  { .name = "cols", .kind = REP_INT, .i = n_cols },
                                  { .name = "tag", .kind = REP_INT, .i = tag } };
        struct rep_trace_ref from = log_engine(tl, "pe_dma", linked ? "mcast_linked" : "mcast",
                                               start, sent, bytes, 0, 0, p, 5);
        /* One copy of the values, whatever the receivers (data mode). */
        struct tl_payload *pl = n ? payload_of(tl, t, file, line, op) : NULL;
        for (uint32_t i = 0; i < n; i++) {
                struct tl_msg *m = msg_of(tl, t, pl, &tl->run->ctx[ranks[i]], tag, file, line,
                                          op);
                m->send_at = from;
                msg_deliver(tl, m, bytes, sent, arrive[i]);
        }
        tl__finish_at(tl, NULL, sent);
}

void tl__mcast(tl_ctx *tl, int row0, int col0, int n_rows, int n_cols, tl_tensor *t, int tag,
               const char *file, int line)
{
        mcast(tl, row0, col0, n_rows, n_cols, t, tag, false, file, line, "tl_mcast");
}

void tl__mcast_linked(tl_ctx *tl, int row0, int col0, int n_rows, int n_cols, tl_tensor *t,
                      int tag, const char *file, int line)
{
        mcast(tl, row0, col0, n_rows, n_cols, t, tag, true, file, line, "tl_mcast_linked");
}

int tl__hbm_channel_pe(tl_ctx *tl, int channel, const char *file, int line)
{
        const struct hw_sim *s = tl->sim;
        if (channel < 0 || (uint32_t)channel >= s->topo->cube.hbm.channels)
                tl__fail(tl, file, line, "tl_hbm_channel_pe",
                         "channel %d: expected 0 .. %u (cube.hbm.channels - 1)", channel,
                         s->topo->cube.hbm.channels - 1);
        uint32_t pe = s->channel_attach_pe[channel];
        return pe == UINT32_MAX ? -1 : (int)pe;
}

int tl__mesh_dim(tl_ctx *tl, int axis, const char *file, int line)
{
        const struct topo_noc *noc = &tl->sim->topo->cube.noc;
        switch (axis) {
        case 0: return (int)noc->cols;
        case 1: return (int)noc->rows;
        }
        tl__fail(tl, file, line, "tl_mesh_dim", "axis %d: expected 0 (columns) or 1 (rows)", axis);
}

tl_tensor *tl__recv(tl_ctx *tl, int src_rank, int tag, const char *file, int line)
{
        tl__issue(tl, TOPO_OP_RECV, file, line);
        check_rank(tl, src_rank, file, line, "tl_recv");
        struct tl_msg *m = inbox_take(&tl->run->inbox, tl->rank, (uint32_t)src_rank, tag);
        if (!m) {
                tl->recv_src = src_rank;
                tl->recv_tag = tag;
                tl->recv_got = NULL;
                ev_future_init(&tl->recv_ready, "tl_recv");
                tl__note_wait(tl, TL_NOTE_RECV, file, line, "tl_recv", tl->sim->pes[src_rank].name,
                              tag);
                sim_ps since = ev_now(&tl->sim->ev);
                ev_wait(tl->proc, &tl->recv_ready);
                tl__waited(tl, since, "tl_recv", file, line);
                m = tl->recv_got;
        }
        tl->run->inbox.n_out--;
        tl_tensor *t = tl__new_tensor(tl, file, line, "tl_recv", TL_SCRATCH, m->dtype, m->ndim,
                                      m->shape);
        if (data_mode(tl) && m->payload)
                memcpy(t->base, m->payload->data, (size_t)tl__elems(t) * sizeof(float));
        t->made_at = m->drain_at;   /* its consumers' arrows start at the drain */
        msg_free(tl->run, m);
        return t;
}

/* ---- the launch's view ---------------------------------------------------------- */

int tl__program_id(tl_ctx *tl, int axis, const char *file, int line)
{
        tl__issue(tl, TOPO_OP_PROGRAM_ID, file, line);
        switch (axis) {
        case 0: return (int)tl->pe->pe;
        case 1: return (int)tl->pe->cube;
        case 2: return (int)tl->pe->sip;
        }
        tl__fail(tl, file, line, "tl_program_id", "axis %d: expected 0 (PE), 1 (cube) or 2 (SIP)", axis);
}

int tl__num_programs(tl_ctx *tl, int axis, const char *file, int line)
{
        tl__issue(tl, TOPO_OP_PROGRAM_ID, file, line);
        const struct hw_sim *s = tl->sim;
        switch (axis) {
        case 0: return (int)s->pes_per_cube;
        case 1: return (int)s->topo->sip.cubes;
        case 2: return (int)s->n_sips;
        }
        tl__fail(tl, file, line, "tl_num_programs", "axis %d: expected 0 (PE), 1 (cube) or 2 (SIP)",
                 axis);
}

tl_machine tl__machine_of(const struct hw_sim *s)
{
        const struct topo *t = s->topo;
        const struct topo_pe *pe = &t->pe;
        return (tl_machine){
                .sips = (int)s->n_sips,
                .cubes_per_sip = (int)t->sip.cubes,
                .cubes = (int)s->n_cubes,
                .pes_per_cube = (int)s->pes_per_cube,
                .mesh_rows = (int)t->cube.noc.rows,
                .mesh_cols = (int)t->cube.noc.cols,
                .tcm_bytes = (int64_t)pe->tcm.size_bytes,
                .scratch_bytes = (int64_t)pe->tcm.scratch_ceiling_bytes,
                .tcm_alloc_bytes = (int64_t)(pe->tcm.size_bytes - pe->tcm.scratch_ceiling_bytes),
                .gemm_macs_per_cycle = pe->gemm.macs_per_cycle,
                .gemm_clock_hz = (double)pe->gemm.clock_hz,
                .gemm_flops_per_s = 2.0 * pe->gemm.macs_per_cycle * (double)pe->gemm.clock_hz,
                .math_lanes = pe->math.lanes,
                .math_clock_hz = (double)pe->math.clock_hz,
                .dma_channels = (int)pe->dma.channels,
                .dma_bytes_per_s = (double)pe->dma.bw_bytes_per_s,
                .hbm_channels = (int)t->cube.hbm.channels,
                .hbm_bytes_per_s = (double)t->cube.hbm.channels *
                                   (double)t->cube.hbm.channel_bw_bytes_per_s,
                .noc_link_bytes_per_s = (double)t->cube.noc.link_bw_bytes_per_s,
        };
}

tl_machine tl_machine_info(tl_ctx *tl)
{
        return tl__machine_of(tl->sim);
}

int tl__rank(tl_ctx *tl, int pe, int cube, int sip, const char *file, int line)
{
        const struct hw_sim *s = tl->sim;
        if (pe == -1 && cube == -1 && sip == -1)
                return (int)tl->rank;
        if (pe < 0 || (uint32_t)pe >= s->pes_per_cube || cube < 0 ||
            (uint32_t)cube >= s->topo->sip.cubes || sip < 0 || (uint32_t)sip >= s->n_sips)
                tl__fail(tl, file, line, "tl_rank", "(pe %d, cube %d, sip %d) is not on this machine "
                         "(%u PEs x %u cubes x %u SIPs)", pe, cube, sip, s->pes_per_cube,
                         s->topo->sip.cubes, s->n_sips);
        return (int)(((uint32_t)sip * s->topo->sip.cubes + (uint32_t)cube) * s->pes_per_cube +
                     (uint32_t)pe);
}
