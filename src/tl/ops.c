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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/ckd.h"
#include "base/list.h"
#include "base/util.h"
#include "tl/ops.h"
#include "tl/tensor.h"
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
        rep_work_add(&r->work, e, op->bytes, op->flops, op->elem_cycles,
                     (enum topo_mac_dt)op->mac_dt);
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
        if (unlikely(r->cp))
                rep_cp_op(r->cp, tl->sim, tl->rank, op, tl->proc->at_file, tl->proc->at_line, false);
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
        if (unlikely(tl->run->cp))
                rep_cp_op(tl->run->cp, tl->sim, tl->rank, op, file, line, true);
        return record(tl, op, rep_engine_of(op->component), file, line, hint);
}

void tl__waited(tl_ctx *tl, sim_ps since, const char *what, const char *file, int line)
{
        struct tl_run *r = tl->run;
        sim_ps now = ev_now(&tl->sim->ev);
        if (now <= since)
                return;
        if (unlikely(r->cp))
                rep_cp_wait(r->cp, tl->rank, tl__thread_no(tl), since, now, file, line);
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

/* The calling thread's core busy for cost from now (after the core's other
 * threads' issues), logged and profiled as what at file:line. */
static void core_busy(tl_ctx *tl, sim_ps cost, const char *what, const char *file, int line)
{
        sim_ps now = ev_now(&tl->sim->ev), begin = now;
        if (tl->first->n_threads) {
                /* Threads sharing a core take turns issuing on it. */
                sim_ps *free_at = &tl->first->core_free[tl->core];
                if (*free_at > begin)
                        begin = *free_at;
                *free_at = begin + cost;
        }
        if (tl->run->have_oplog || tl->run->have_trace) {
                struct rep_param p[2] = { { .name = "file", .kind = REP_STR, .s = file },
                                          { .name = "line", .kind = REP_INT, .i = line } };
                struct rep_op rec = { .pe = tl->pe->name, .pe_index = tl->rank,
                                      .component = "pe_cpu", .op = what, .start_ps = begin,
                                      .end_ps = begin + cost, .params = p, .n_params = 2 };
                tl__log(tl, &rec);
        }
        if (begin == now)
                ev_sleep(tl->proc, cost);
        else
                ev_sleep_until(tl->proc, begin + cost);
        if (unlikely(tl->run->cp))
                rep_cp_issue(tl->run->cp, tl->rank, now, begin + cost, file, line, tl->proc->at_what);
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
        core_busy(tl, cost, topo_op_name(op), file, line);
}

void tl_impl_delay(tl_ctx *tl, int64_t ns, const char *file, int line)
{
        if (ns < 0 || ns > TL_DELAY_MAX_NS)
                tl__fail(tl, file, line, "tl_delay", "%lld ns: expected 0..%lld",
                         (long long)ns, (long long)TL_DELAY_MAX_NS);
        tl->proc->at_file = file;
        tl->proc->at_line = line;
        tl->proc->at_what = "tl_delay";
        struct rep_line_hint *h = &tl->hints[(unsigned)line % TL_HINTS];
        struct rep_line *l = rep_profile_hinted(&tl->run->profile, file, line, h);
        tl->issued = *h;
        if (l)
                l->issue_ps += (sim_ps)ns * 1000;
        tl->last_slice.ok = false;
        if (ns)
                core_busy(tl, (sim_ps)ns * 1000, "delay", file, line);
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
        LIST_UNLINK(tl->inflight, f, prev, next);
        ev_future_complete(&tl->sim->ev, &f->placed, 0);
}

void tl__wait_inflight(tl_ctx *tl, int depth, const char *what)
{
        sim_ps since = ev_now(&tl->sim->ev);
        for (;;) {
                struct tl_inflight *f = tl->inflight;
                while (f && f->depth < depth)
                        f = f->next;
                if (!f)
                        break;
                (void)what; /* no note: formatting one per wait costs more than the wait */
                ev_wait(tl->proc, &f->placed);
        }
        if (unlikely(tl->run->cp))
                rep_cp_wait(tl->run->cp, tl->rank, tl__thread_no(tl), since, ev_now(&tl->sim->ev),
                            tl->proc->at_file, tl->proc->at_line);
}

void tl__cp_signal(tl_ctx *tl, const char *file, int line, const char *what)
{
        if (unlikely(tl->run->cp))
                rep_cp_signal(tl->run->cp, tl->rank, tl__thread_no(tl), ev_now(&tl->sim->ev), file,
                              line, what);
}

void tl__cp_remote(tl_ctx *tl, uint32_t dst, const char *what, sim_ps start, sim_ps end,
                   const char *file, int line)
{
        if (likely(!tl->run->cp))
                return;
        /* The sender's part, then its landing at dst, which a wait there
         * woken at end follows back to the sender (a send and its drain). */
        struct rep_op op = { .pe_index = tl->rank, .component = "pe_dma", .op = what,
                             .start_ps = start, .end_ps = end };
        rep_cp_op(tl->run->cp, tl->sim, tl->rank, &op, file, line, false);
        op.pe_index = dst;
        rep_cp_op(tl->run->cp, tl->sim, tl->rank, &op, file, line, false);
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

void tl_impl_wait_tensor(tl_ctx *tl, tl_tensor *t, const char *file, int line)
{
        tl__issue(tl, TOPO_OP_WAIT, file, line);
        tl__check_tensor(tl, t, file, line, "tl_wait_tensor", "t");
        if (!t->owner->sharded)      /* untracked, and waiting touches no part of it */
                tl__wait_ready(tl, t, file, line, "tl_wait_tensor");
}

/* ---- scratch scopes: the memory side is tensor.c's ---------------------- */

void tl_impl_scratch_scope_begin(tl_ctx *tl, const char *file, int line)
{
        tl__issue(tl, TOPO_OP_SCRATCH_SCOPE, file, line);
        tl__scope_open(tl, file, line);
}

void tl_impl_scratch_scope_end(tl_ctx *tl, const char *file, int line)
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

/* tl__log_engine of a record whose GEMM operands are of class mac_dt. */
static struct rep_trace_ref log_engine_dt(tl_ctx *tl, const char *component, const char *op,
                                          sim_ps start, sim_ps end, uint64_t bytes,
                                          uint64_t flops, uint64_t elem_cycles,
                                          const struct rep_param *p, unsigned n,
                                          enum topo_mac_dt mac_dt)
{
        struct rep_op rec = { .pe = tl->pe->name, .pe_index = tl->rank, .component = component,
                              .op = op, .start_ps = start, .end_ps = end, .bytes = bytes,
                              .flops = flops, .params = p, .n_params = n,
                              .elem_cycles = elem_cycles, .mac_dt = (uint8_t)mac_dt };
        return tl__log(tl, &rec);
}

struct rep_trace_ref tl__log_engine(tl_ctx *tl, const char *component, const char *op,
                                    sim_ps start, sim_ps end, uint64_t bytes, uint64_t flops,
                                    uint64_t elem_cycles, const struct rep_param *p, unsigned n)
{
        return log_engine_dt(tl, component, op, start, end, bytes, flops, elem_cycles, p, n,
                             TOPO_MAC_BF16);
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
                                      .noc = tl->noc, .at = ev_now(&tl->sim->ev),
                                      .done = dma_placed };
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

tl_tensor *tl_impl_load(tl_ctx *tl, tl_tensor *src, const char *file, int line)
{
        tl__issue(tl, TOPO_OP_LOAD, file, line);
        tl__check_tensor(tl, src, file, line, "tl_load", "src");
        tl__wait_ready(tl, src, file, line, "tl_load");
        tl_tensor *t = tl__new_tensor(tl, file, line, "tl_load", TL_SCRATCH, src->dtype, src->ndim,
                                      src->shape);
        uint64_t bytes = tl__tensor_bytes(src);
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
        if (!tl__same_shape(a->ndim, a->shape, b->ndim, b->shape)) {
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
        uint64_t bytes = tl__bytes_as(src, dst->dtype);
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

void tl_impl_store(tl_ctx *tl, tl_tensor *dst, tl_tensor *src, const char *file, int line)
{
        write_out(tl, dst, src, file, line, "tl_store", TOPO_OP_STORE);
}

void tl_impl_copy_to(tl_ctx *tl, tl_tensor *dst, tl_tensor *src, const char *file, int line)
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
        tl__log_engine(tl, "pe_math", name, start, end, tcm_bytes, elements,
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
                                        in_bytes + tl__tensor_bytes(out)));
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
        return math_done(tl, op, out, (uint64_t)tl__elems(x), ax == x->ndim - 1, tl__tensor_bytes(x));
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

tl_tensor *tl_impl_math1(tl_ctx *tl, tl_math_op op, tl_tensor *x, const char *file, int line)
{
        const char *name = issue_math(tl, op, TL__FORM_UNARY, TL__FORM_REDUCE,
                                      "a unary op or a reduction", file, line, "tl_math1");
        if (tl__op_form(op) == TL__FORM_REDUCE)
                return reduce(tl, op, name, x, -1, file, line);
        tl_tensor *out = like_x(tl, name, x, file, line);
        if (data_mode(tl))
                tl__compute_math1(op, x, out);
        return math_done(tl, op, out, (uint64_t)tl__elems(x), false, tl__tensor_bytes(x));
}

tl_tensor *tl_impl_reduce(tl_ctx *tl, tl_math_op op, tl_tensor *x, int axis, const char *file,
                      int line)
{
        const char *name = issue_math(tl, op, TL__FORM_REDUCE, TL__FORM_REDUCE, "a reduction",
                                      file, line, "tl_reduce");
        return reduce(tl, op, name, x, axis, file, line);
}

tl_tensor *tl_impl_scalar(tl_ctx *tl, tl_math_op op, tl_tensor *x, float v, const char *file, int line)
{
        const char *name = issue_math(tl, op, TL__FORM_SCALAR, TL__FORM_SCALAR,
                                      "an op with a scalar operand", file, line, "tl_scalar");
        tl_tensor *out = like_x(tl, name, x, file, line);
        if (data_mode(tl))
                tl__compute_scalar(op, x, v, out);
        return math_done(tl, op, out, (uint64_t)tl__elems(x), false, tl__tensor_bytes(x));
}

tl_tensor *tl_impl_scale(tl_ctx *tl, tl_tensor *x, float factor, const char *file, int line)
{
        return tl_impl_scalar(tl, TL_SCALE, x, factor, file, line);
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

/* The fp32 result of an elementwise op over the n operands in (shape, nd:
 * their broadcast), once they are ready; *in_bytes the bytes they hold. */
static tl_tensor *broadcast_out(tl_ctx *tl, const char *file, int line, const char *name,
                                tl_tensor *const *in, int n, int nd, const int64_t *shape,
                                uint64_t *in_bytes)
{
        *in_bytes = 0;
        for (int i = 0; i < n; i++) {
                tl__wait_ready(tl, in[i], file, line, name);
                *in_bytes += tl__tensor_bytes(in[i]);
        }
        return tl__new_tensor(tl, file, line, name, TL_SCRATCH, TL_FP32, nd, shape);
}

tl_tensor *tl_impl_math2(tl_ctx *tl, tl_math_op op, tl_tensor *a, tl_tensor *b, const char *file,
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
        uint64_t bytes;
        tl_tensor *out = broadcast_out(tl, file, line, name, (tl_tensor *[]){ a, b }, 2, nd,
                                       shape, &bytes);
        if (data_mode(tl))
                tl__compute_math2(op, a, b, out);
        return math_done(tl, op, out, (uint64_t)tl__elems(out), false, bytes);
}

tl_tensor *tl_impl_where(tl_ctx *tl, tl_tensor *mask, tl_tensor *a, tl_tensor *b, const char *file,
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
        uint64_t bytes;
        tl_tensor *out = broadcast_out(tl, file, line, name, (tl_tensor *[]){ mask, a, b }, 3,
                                       nd, shape, &bytes);
        if (data_mode(tl))
                tl__compute_where(mask, a, b, out);
        return math_done(tl, TL_WHERE, out, (uint64_t)tl__elems(out), false, bytes);
}

tl_tensor *tl_impl_cast(tl_ctx *tl, tl_tensor *x, tl_dtype dt, const char *file, int line)
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
                                        tl__tensor_bytes(x) + tl__bytes_as(x, dt)));
        return out;
}

tl_tensor *tl_impl_fill(tl_ctx *tl, tl_dtype dt, int ndim, const int64_t *shape, float value,
                    const char *file, int line)
{
        tl__issue(tl, TOPO_OP_FILL, file, line);
        tl__check_dtype(tl, dt, file, line, "fill");
        tl_tensor *out = tl__new_tensor(tl, file, line, "fill", TL_SCRATCH, dt, ndim, shape);
        if (data_mode(tl))
                tl__compute_fill(out, tl__round(value, dt));
        uint64_t n = (uint64_t)tl__elems(out);
        tl__finish_at(tl, out, run_math(tl, TOPO_OP_FILL, "fill", n, false, tl__bytes_as(out, dt)));
        return out;
}

tl_tensor *tl_impl_mask_causal(tl_ctx *tl, tl_tensor *x, int64_t offset, const char *file, int line)
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
                                        tl__tensor_bytes(x) + tl__tensor_bytes(out)));
        return out;
}

tl_tensor *tl_impl_dot(tl_ctx *tl, tl_tensor *a, tl_tensor *b, bool trans_b, const char *file,
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
        uint64_t tcm = tl__tensor_bytes(a) + tl__tensor_bytes(b) + tl__tensor_bytes(out);
        sim_ps start, end = hw_gemm_run(tl->pe, (uint64_t)m, (uint64_t)n, (uint64_t)k, tcm,
                                        ev_now(&tl->sim->ev), &start);
        struct rep_param p[3] = { { .name = "m", .kind = REP_INT, .i = m },
                                  { .name = "n", .kind = REP_INT, .i = n },
                                  { .name = "k", .kind = REP_INT, .i = k } };
        log_engine_dt(tl, "pe_gemm", "dot", start, end, tl__tensor_bytes(a) + tl__tensor_bytes(b),
                      flops, 0, p, 3, topo_mac_dt_of(a->dtype, b->dtype));
        tl__finish_at(tl, out, end);
        return out;
}

int tl_impl_hbm_channel_pe(tl_ctx *tl, int channel, const char *file, int line)
{
        const struct hw_sim *s = tl->sim;
        if (channel < 0 || (uint32_t)channel >= s->topo->cube.hbm.channels)
                tl__fail(tl, file, line, "tl_hbm_channel_pe",
                         "channel %d: expected 0 .. %u (cube.hbm.channels - 1)", channel,
                         s->topo->cube.hbm.channels - 1);
        uint32_t pe = s->channel_attach_pe[channel];
        return pe == UINT32_MAX ? -1 : (int)pe;
}

int tl_impl_sip_link_pe(tl_ctx *tl, int sip, int peer, int k, const char *file, int line)
{
        const struct hw_sim *s = tl->sim;
        if (sip < 0 || (uint32_t)sip >= s->n_sips || peer < 0 || (uint32_t)peer >= s->n_sips ||
            k < 0)
                tl__fail(tl, file, line, "tl_sip_link_pe",
                         "SIP %d to SIP %d, link %d: expected SIPs 0 .. %u and a link >= 0", sip,
                         peer, k, s->n_sips - 1);
        for (uint32_t i = s->sip_link_first[sip]; i < s->sip_link_first[sip + 1]; i++)
                if (s->sip_links[i].peer == (uint32_t)peer && k-- == 0)
                        return s->sip_links[i].pe == UINT32_MAX ? -1 : (int)s->sip_links[i].pe;
        return -1;
}

int tl_impl_mesh_dim(tl_ctx *tl, int axis, const char *file, int line)
{
        const struct topo_noc *noc = &tl->sim->topo->cube.noc;
        switch (axis) {
        case 0: return (int)noc->cols;
        case 1: return (int)noc->rows;
        }
        tl__fail(tl, file, line, "tl_mesh_dim", "axis %d: expected 0 (columns) or 1 (rows)", axis);
}

/* ---- the launch's view ---------------------------------------------------------- */

int tl_impl_program_id(tl_ctx *tl, int axis, const char *file, int line)
{
        tl__issue(tl, TOPO_OP_PROGRAM_ID, file, line);
        switch (axis) {
        case 0: return (int)tl->pe->pe;
        case 1: return (int)tl->pe->cube;
        case 2: return (int)tl->pe->sip;
        }
        tl__fail(tl, file, line, "tl_program_id", "axis %d: expected 0 (PE), 1 (cube) or 2 (SIP)", axis);
}

int tl_impl_num_programs(tl_ctx *tl, int axis, const char *file, int line)
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
                .cpu_cores = pe->cpu.cores ? (int)pe->cpu.cores : 1,
                .nocs = (int)hw_dma_nocs(t),
        };
}

tl_machine tl_machine_info(tl_ctx *tl)
{
        return tl__machine_of(tl->sim);
}

int tl_impl_rank(tl_ctx *tl, int pe, int cube, int sip, const char *file, int line)
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
