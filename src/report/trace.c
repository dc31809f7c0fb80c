/* report/trace.c: the Chrome trace writer (format in trace.h, rationale in
 * docs/adr/0004). One event per line between "[" and "]": the header is
 * written at open, each event as it comes, the footer at close, so the only
 * state is one byte per PE saying which of its names were written.
 *
 * Times: ts and dur are microseconds written exactly from picoseconds,
 * ps / 10^6 "." ps % 10^6 zero-padded to 6 digits, all in integers (a
 * double has 53 bits and would round long runs). */
#include "report/trace.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"

/* As in oplog.c: inline stores into the stdio buffer, no calls. */
static inline void put_bytes(FILE *f, const void *s, size_t n)
{
        const char *c = s;
        for (size_t i = 0; i < n; i++)
                putc_unlocked(c[i], f);
}

#define PUT_LIT(f, lit) put_bytes(f, lit, sizeof(lit) - 1)

enum {
        TID_OTHER = 4,                /* track of an unknown component */
        NAMED_PE = 1,                 /* named[]: process and tids 0..3 named */
        NAMED_OTHER = 2,              /* named[]: tid 4 "other" named */
};

static const char *const track_names[] = { "pe_cpu", "pe_dma", "pe_gemm", "pe_math", "other" };

static unsigned component_tid(const char *c)
{
        if (c && c[0] == 'p' && c[1] == 'e' && c[2] == '_')
                for (unsigned tid = 0; tid < TID_OTHER; tid++)
                        if (strcmp(c + 3, track_names[tid] + 3) == 0)
                                return tid;
        return TID_OTHER;
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
        put_bytes(f, frac, sizeof frac);
}

/* The separator before an event: none before the first. */
static void begin_event(struct rep_trace *t)
{
        if (t->first) {
                putc_unlocked('\n', t->f);
                t->first = false;
        } else {
                PUT_LIT(t->f, ",\n");
        }
}

/* {"ph":"M","pid":P[,"tid":T],"name":"<what>","args":{ -- the caller
 * writes the argument and closes with "}}". */
static void begin_meta(struct rep_trace *t, uint32_t pid, int tid, const char *what)
{
        FILE *f = t->f;
        begin_event(t);
        PUT_LIT(f, "{\"ph\":\"M\",\"pid\":");
        rep__put_u64(f, pid);
        if (tid >= 0) {
                PUT_LIT(f, ",\"tid\":");
                rep__put_u64(f, (uint64_t)tid);
        }
        PUT_LIT(f, ",\"name\":\"");
        put_bytes(f, what, strlen(what));
        PUT_LIT(f, "\",\"args\":{");
}

static void name_thread(struct rep_trace *t, uint32_t pid, unsigned tid)
{
        begin_meta(t, pid, (int)tid, "thread_name");
        PUT_LIT(t->f, "\"name\":");
        rep_json_string(t->f, track_names[tid]);
        PUT_LIT(t->f, "}}");
        begin_meta(t, pid, (int)tid, "thread_sort_index");
        PUT_LIT(t->f, "\"sort_index\":");
        rep__put_u64(t->f, tid);
        PUT_LIT(t->f, "}}");
}

/* The metadata of op's PE and of track tid, unless already written. A PE
 * index outside the machine (a caller bug) is named every time: repeated
 * metadata is harmless, missing names are not. */
static void name_tracks(struct rep_trace *t, const struct rep_op *op, unsigned tid)
{
        uint32_t pid = op->pe_index;
        uint8_t need = tid == TID_OTHER ? NAMED_PE | NAMED_OTHER : NAMED_PE;
        uint8_t done = 0;
        CS_ASSERT(pid < t->n_pes);
        if (likely(pid < t->n_pes)) {
                done = t->named[pid];
                if (likely((done & need) == need))
                        return;
                t->named[pid] = done | need;
        }
        if (!(done & NAMED_PE)) {
                begin_meta(t, pid, -1, "process_name");
                PUT_LIT(t->f, "\"name\":");
                rep_json_string(t->f, op->pe);
                PUT_LIT(t->f, "}}");
                begin_meta(t, pid, -1, "process_sort_index");
                PUT_LIT(t->f, "\"sort_index\":");
                rep__put_u64(t->f, pid);
                PUT_LIT(t->f, "}}");
                for (unsigned i = 0; i < TID_OTHER; i++)
                        name_thread(t, pid, i);
        }
        if ((need & NAMED_OTHER) && !(done & NAMED_OTHER))
                name_thread(t, pid, TID_OTHER);
}

int rep_trace_open(struct rep_trace *t, const char *path, uint32_t n_pes)
{
        memset(t, 0, sizeof *t);
        t->named = calloc(n_pes ? n_pes : 1, 1);
        if (!t->named)
                return -ENOMEM;
        int rc = rep__out_open(path, &t->f, &t->owned, &t->buf);
        if (rc < 0) {
                free(t->named);
                t->named = NULL;
                return rc;
        }
        t->n_pes = n_pes;
        t->first = true;
        PUT_LIT(t->f, "{\"traceEvents\":[");
        rep__note_error(t->f, &t->err);
        return 0;
}

void rep_trace_op(struct rep_trace *t, const struct rep_op *op)
{
        FILE *f = t->f;
        if (unlikely(t->err != 0))
                return;
        unsigned tid = component_tid(op->component);
        name_tracks(t, op, tid);
        CS_ASSERT(op->end_ps >= op->start_ps);
        sim_ps dur = op->end_ps >= op->start_ps ? op->end_ps - op->start_ps : 0;
        begin_event(t);
        PUT_LIT(f, "{\"ph\":\"X\",\"pid\":");
        rep__put_u64(f, op->pe_index);
        PUT_LIT(f, ",\"tid\":");
        rep__put_u64(f, tid);
        PUT_LIT(f, ",\"name\":");
        rep_json_string(f, op->op);
        PUT_LIT(f, ",\"ts\":");
        put_us(f, op->start_ps);
        PUT_LIT(f, ",\"dur\":");
        put_us(f, dur);
        PUT_LIT(f, ",\"args\":{\"bytes\":");
        rep__put_u64(f, op->bytes);
        PUT_LIT(f, ",\"flops\":");
        rep__put_u64(f, op->flops);
        rep__put_params(f, op->params, op->n_params, true);
        PUT_LIT(f, "}}");
        rep__note_error(f, &t->err);
}

/* One end of a flow: "s" at the sender, "f" bound to the enclosing slice
 * ("bp":"e") at the receiver. */
static void flow_end(struct rep_trace *t, char ph, uint64_t id, const struct rep_op *op)
{
        FILE *f = t->f;
        unsigned tid = component_tid(op->component);
        name_tracks(t, op, tid);
        begin_event(t);
        PUT_LIT(f, "{\"ph\":\"");
        putc_unlocked(ph, f);
        if (ph == 'f')
                PUT_LIT(f, "\",\"bp\":\"e");
        PUT_LIT(f, "\",\"pid\":");
        rep__put_u64(f, op->pe_index);
        PUT_LIT(f, ",\"tid\":");
        rep__put_u64(f, tid);
        PUT_LIT(f, ",\"ts\":");
        put_us(f, op->start_ps);
        PUT_LIT(f, ",\"id\":");
        rep__put_u64(f, id);
        PUT_LIT(f, ",\"cat\":\"ipcq\",\"name\":\"send\"}");
}

void rep_trace_flow(struct rep_trace *t, uint64_t id, const struct rep_op *from,
                    const struct rep_op *to)
{
        if (unlikely(t->err != 0))
                return;
        flow_end(t, 's', id, from);
        flow_end(t, 'f', id, to);
        rep__note_error(t->f, &t->err);
}

int rep_trace_close(struct rep_trace *t)
{
        if (t->f && t->err == 0) {
                if (!t->first)
                        putc_unlocked('\n', t->f);
                PUT_LIT(t->f, "],\"displayTimeUnit\":\"ns\"}\n");
        }
        int rc = rep__out_close(t->f, t->owned, t->buf, t->err);
        free(t->named);
        t->f = NULL;
        t->owned = false;
        t->buf = NULL;
        t->named = NULL;
        t->n_pes = 0;
        t->err = -rc;
        return rc;
}
