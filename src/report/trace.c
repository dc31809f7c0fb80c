/* report/trace.c: the Chrome trace writer (format in trace.h, rationale in
 * docs/adr/0004). One event per line between "[" and "]": the header is
 * written at open, each event as it comes, the footer at close. The state
 * is one byte per PE saying which of its names were written, the end of
 * each lane of each PE's tracks, and the counters' pending changes.
 *
 * Times: ts and dur are microseconds written exactly from picoseconds,
 * ps / 10^6 "." ps % 10^6 zero-padded to 6 digits, all in integers (a
 * double has 53 bits and would round long runs). */
#include "report/trace.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/heap.h"
#include "base/util.h"

enum {
        KIND_CPU, KIND_DMA, KIND_GEMM, KIND_MATH, KIND_OTHER,
        TID_LANE_STRIDE = 8,          /* tid = kind + 8 * lane */
        NAMED_PE = 1,                 /* named[]: process and lane 0 of kinds 0..3 named */
        NAMED_OTHER = 2,              /* named[]: lane 0 of "other" named */
};

static const char *const track_names[] = { "pe_cpu", "pe_dma", "pe_gemm", "pe_math", "other" };

static unsigned component_kind(const char *c)
{
        if (c && c[0] == 'p' && c[1] == 'e' && c[2] == '_')
                for (unsigned k = 0; k < KIND_OTHER; k++)
                        if (strcmp(c + 3, track_names[k] + 3) == 0)
                                return k;
        return KIND_OTHER;
}

/* ps as microseconds with exactly 6 decimals. */
static void put_us(FILE *f, sim_ps ps)
{
        char frac[7];
        uint64_t r = ps % 1000000;
        rep__put_u64(f, ps / 1000000);
        frac[0] = '.';
        for (int i = 6; i >= 1; i--) {
                frac[i] = (char)('0' + r % 10);
                r /= 10;
        }
        rep__put_bytes(f, frac, sizeof frac);
}

/* The separator before an event: none before the first. */
static void begin_event(struct rep_trace *t)
{
        if (t->first) {
                putc_unlocked('\n', t->f);
                t->first = false;
        } else {
                REP__PUT_LIT(t->f, ",\n");
        }
}

/* {"ph":"M","pid":P[,"tid":T],"name":"<what>","args":{ -- the caller
 * writes the argument and closes with "}}". */
static void begin_meta(struct rep_trace *t, uint32_t pid, int tid, const char *what)
{
        FILE *f = t->f;
        begin_event(t);
        REP__PUT_KEY_U64(f, "{\"ph\":\"M\",\"pid\":", pid);
        if (tid >= 0) {
                REP__PUT_KEY_U64(f, ",\"tid\":", (uint64_t)tid);
        }
        REP__PUT_LIT(f, ",\"name\":\"");
        rep__put_bytes(f, what, strlen(what));
        REP__PUT_LIT(f, "\",\"args\":{");
}

void rep_trace_name(struct rep_trace *t, uint32_t pid, int tid, const char *name, uint64_t sort)
{
        if (unlikely(t->err != 0))
                return;
        begin_meta(t, pid, tid, tid < 0 ? "process_name" : "thread_name");
        REP__PUT_LIT(t->f, "\"name\":");
        jsonw_put_string(t->f, name);
        REP__PUT_LIT(t->f, "}}");
        begin_meta(t, pid, tid, tid < 0 ? "process_sort_index" : "thread_sort_index");
        REP__PUT_LIT(t->f, "\"sort_index\":");
        rep__put_u64(t->f, sort);
        REP__PUT_LIT(t->f, "}}");
}

/* Lane names: "pe_dma ch<lane>" for DMA, else "<track>" for lane 0 and
 * "<track> #<lane>" past it. */
static void lane_name(char *buf, size_t len, const char *track, bool dma, unsigned lane)
{
        if (dma)
                snprintf(buf, len, "%s ch%u", track, lane);
        else if (lane)
                snprintf(buf, len, "%s #%u", track, lane);
        else
                snprintf(buf, len, "%s", track);
}

static void name_lane(struct rep_trace *t, uint32_t pid, unsigned kind, unsigned lane)
{
        char name[48];
        lane_name(name, sizeof name, track_names[kind], kind == KIND_DMA, lane);
        rep_trace_name(t, pid, (int)(kind + TID_LANE_STRIDE * lane), name, kind * 64 + lane);
}

/* The metadata of op's PE and of lane 0 of its kind, unless already
 * written. A PE index outside the machine (a caller bug) is named every
 * time: repeated metadata is harmless, missing names are not. */
static void name_tracks(struct rep_trace *t, const struct rep_op *op, unsigned kind)
{
        uint32_t pid = op->pe_index;
        uint8_t need = kind == KIND_OTHER ? NAMED_PE | NAMED_OTHER : NAMED_PE;
        uint8_t done = 0;
        CS_ASSERT(pid < t->n_pes);
        if (likely(pid < t->n_pes)) {
                done = t->named[pid];
                if (likely((done & need) == need))
                        return;
                t->named[pid] = done | need;
        }
        if (!(done & NAMED_PE)) {
                rep_trace_name(t, pid, -1, op->pe, pid);
                for (unsigned k = 0; k < KIND_OTHER; k++)
                        name_lane(t, pid, k, 0);
        }
        if ((need & NAMED_OTHER) && !(done & NAMED_OTHER))
                name_lane(t, pid, KIND_OTHER, 0);
}

/* The lane for [start, end]: the preferred one if free at start, else the
 * first free, else a new one; -1 if all REP_TRACE_LANES are busy. A lane's
 * slices are then disjoint and in time order. */
static int place(struct rep_lanes *l, unsigned prefer, sim_ps start, sim_ps end, bool *opened)
{
        int lane = -1;
        *opened = false;
        if (prefer < l->n && l->end[prefer] <= start) {
                lane = (int)prefer;
        } else {
                for (unsigned i = 0; i < l->n; i++)
                        if (l->end[i] <= start) {
                                lane = (int)i;
                                break;
                        }
        }
        if (lane < 0) {
                if (l->n == REP_TRACE_LANES)
                        return -1;
                /* Lanes open in order, so a new lane's number is the first
                 * not yet used; prefer is honoured if it is that one. */
                lane = l->n++;
                *opened = true;
        }
        l->end[lane] = end > start ? end : start;
        return lane;
}

static bool in_window(const struct rep_trace *t, sim_ps start, sim_ps end)
{
        return end >= t->t0 && start <= t->t1;
}

bool rep_trace_wants_pe(const struct rep_trace *t, uint32_t pe)
{
        return !t->select || (pe < t->n_pes && t->select[pe]);
}

int rep_trace_open(struct rep_trace *t, const char *path, uint32_t n_pes)
{
        memset(t, 0, sizeof *t);
        t->named = calloc(n_pes ? n_pes : 1, 1);
        t->lanes = calloc((size_t)(n_pes ? n_pes : 1) * REP_TRACE_KINDS, sizeof *t->lanes);
        if (!t->named || !t->lanes) {
                free(t->named);
                free(t->lanes);
                t->named = NULL;
                t->lanes = NULL;
                return -ENOMEM;
        }
        int rc = rep__out_open(path, &t->f, &t->owned, &t->buf, &t->at);
        if (rc < 0) {
                free(t->named);
                free(t->lanes);
                t->named = NULL;
                t->lanes = NULL;
                return rc;
        }
        t->n_pes = n_pes;
        t->first = true;
        t->t1 = SIM_PS_MAX;
        REP__PUT_LIT(t->f, "{\"traceEvents\":[");
        rep__note_error(t->f, &t->err);
        return 0;
}

void rep_trace_filter(struct rep_trace *t, const uint8_t *select, sim_ps t0, sim_ps t1)
{
        t->select = select;
        t->t0 = t0;
        t->t1 = t1;
}

static void put_slice(struct rep_trace *t, uint32_t pid, uint32_t tid, const char *name,
                      sim_ps start, sim_ps end)
{
        FILE *f = t->f;
        CS_ASSERT(end >= start);
        sim_ps dur = end >= start ? end - start : 0;
        begin_event(t);
        REP__PUT_KEY_U64(f, "{\"ph\":\"X\",\"pid\":", pid);
        REP__PUT_KEY_U64(f, ",\"tid\":", tid);
        REP__PUT_KEY_STR(f, ",\"name\":", name);
        REP__PUT_LIT(f, ",\"ts\":");
        put_us(f, start);
        REP__PUT_LIT(f, ",\"dur\":");
        put_us(f, dur);
}

struct rep_trace_ref rep_trace_op(struct rep_trace *t, const struct rep_op *op)
{
        struct rep_trace_ref ref = { 0 };
        FILE *f = t->f;
        if (unlikely(t->err != 0) || !rep_trace_wants_pe(t, op->pe_index) ||
            !in_window(t, op->start_ps, op->end_ps))
                return ref;
        unsigned kind = component_kind(op->component);
        name_tracks(t, op, kind);
        unsigned lane = 0;
        if (likely(op->pe_index < t->n_pes)) {
                bool opened;
                int l = place(&t->lanes[(size_t)op->pe_index * REP_TRACE_KINDS + kind],
                              kind == KIND_DMA ? op->channel : 0, op->start_ps, op->end_ps,
                              &opened);
                if (l < 0) {
                        t->n_dropped++;
                        return ref;
                }
                lane = (unsigned)l;
                if (opened && lane)
                        name_lane(t, op->pe_index, kind, lane);
        }
        uint32_t tid = kind + TID_LANE_STRIDE * lane;
        put_slice(t, op->pe_index, tid, op->op, op->start_ps, op->end_ps);
        REP__PUT_KEY_U64(f, ",\"args\":{\"bytes\":", op->bytes);
        REP__PUT_KEY_U64(f, ",\"flops\":", op->flops);
        rep__put_params(f, op->params, op->n_params, true);
        REP__PUT_LIT(f, "}}");
        rep__note_error(f, &t->err);
        return (struct rep_trace_ref){ .ts = op->start_ps, .pid = op->pe_index, .tid = tid,
                                       .ok = true };
}

uint32_t rep_trace_slice(struct rep_trace *t, struct rep_lanes *lanes, uint32_t pid,
                         uint32_t base_tid, const char *name, sim_ps start, sim_ps end,
                         uint64_t bytes, uint64_t n)
{
        if (unlikely(t->err != 0) || !in_window(t, start, end))
                return 0;
        bool opened;
        int lane = place(lanes, 0, start, end, &opened);
        if (lane < 0) {
                t->n_dropped++;
                return 0;
        }
        uint32_t tid = base_tid + ((uint32_t)lane << 24);
        put_slice(t, pid, tid, name, start, end);
        REP__PUT_LIT(t->f, ",\"args\":{\"bytes\":");
        rep__put_u64(t->f, bytes);
        REP__PUT_LIT(t->f, ",\"transfers\":");
        rep__put_u64(t->f, n);
        REP__PUT_LIT(t->f, "}}");
        rep__note_error(t->f, &t->err);
        return opened && lane ? tid : 0;
}

/* One end of a flow: "s" at the first slice, "f" bound to the enclosing
 * slice ("bp":"e") at the second. */
static void flow_end(struct rep_trace *t, char ph, uint64_t id, const char *cat,
                     const struct rep_trace_ref *at)
{
        FILE *f = t->f;
        begin_event(t);
        REP__PUT_LIT(f, "{\"ph\":\"");
        putc_unlocked(ph, f);
        if (ph == 'f')
                REP__PUT_LIT(f, "\",\"bp\":\"e");
        REP__PUT_KEY_U64(f, "\",\"pid\":", at->pid);
        REP__PUT_KEY_U64(f, ",\"tid\":", at->tid);
        REP__PUT_LIT(f, ",\"ts\":");
        put_us(f, at->ts);
        REP__PUT_KEY_U64(f, ",\"id\":", id);
        REP__PUT_KEY_STR(f, ",\"cat\":", cat);
        REP__PUT_KEY_STR(f, ",\"name\":", strcmp(cat, "ipcq") == 0 ? "send" : cat);
        putc_unlocked('}', f);
}

void rep_trace_flow(struct rep_trace *t, uint64_t id, const char *cat,
                    const struct rep_trace_ref *from, const struct rep_trace_ref *to)
{
        if (unlikely(t->err != 0) || !from->ok || !to->ok)
                return;
        flow_end(t, 's', id, cat, from);
        flow_end(t, 'f', id, cat, to);
        rep__note_error(t->f, &t->err);
}

/* ---- counters ----------------------------------------------------------------- */

static bool change_before(const struct rep_counter_change *a, const struct rep_counter_change *b)
{
        return a->t < b->t;
}

HEAP_DEFINE(changes, struct rep_counter_change, change_before, 16)

int rep_counter_add(struct rep_counter *c, sim_ps t, int64_t delta)
{
        return changes_push(&c->heap, &c->n, &c->cap,
                            (struct rep_counter_change){ .t = t, .delta = delta });
}

void rep_counter_flush(struct rep_trace *t, struct rep_counter *c, sim_ps now)
{
        while (c->n && c->heap[0].t < now) {
                sim_ps at = c->heap[0].t;
                while (c->n && c->heap[0].t == at)
                        c->value += changes_pop(c->heap, &c->n).delta;
                if (unlikely(t->err != 0) || at < t->t0 || at > t->t1)
                        continue;
                FILE *f = t->f;
                begin_event(t);
                REP__PUT_KEY_U64(f, "{\"ph\":\"C\",\"pid\":", c->pid);
                REP__PUT_KEY_STR(f, ",\"name\":", c->name);
                REP__PUT_LIT(f, ",\"ts\":");
                put_us(f, at);
                REP__PUT_KEY_STR(f, ",\"args\":{", c->name);
                putc_unlocked(':', f);
                rep__put_i64(f, c->value);
                REP__PUT_LIT(f, "}}");
                rep__note_error(f, &t->err);
        }
}

void rep_counter_fini(struct rep_counter *c)
{
        free(c->heap);
        c->heap = NULL;
        c->n = c->cap = 0;
}

int rep_trace_close(struct rep_trace *t)
{
        if (t->f && t->err == 0 && !t->discard) {
                if (!t->first)
                        putc_unlocked('\n', t->f);
                REP__PUT_LIT(t->f, "],\"displayTimeUnit\":\"ns\"}\n");
        }
        int rc = rep__out_close(t->f, t->owned, t->buf, t->err, &t->at, !t->discard);
        free(t->named);
        free(t->lanes);
        t->f = NULL;
        t->owned = false;
        t->buf = NULL;
        t->named = NULL;
        t->lanes = NULL;
        t->n_pes = 0;
        t->err = -rc;
        return rc;
}
