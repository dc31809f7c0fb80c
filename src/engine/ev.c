/* engine/ev.c: event queue, run loop, processes, futures, resources and
 * queues. See ev.h for the model and its invariants. */
#include "engine/ev.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/list.h"
#include "base/util.h"

#define HEAP_ARITY 4
#define EV_CAL_WALK 1             /* longest walk into a calendar bucket */

int ev_loop_init(struct ev_loop *ev, const struct ev_config *cfg)
{
        memset(ev, 0, sizeof *ev);
        size_t reserve = cfg && cfg->heap_reserve ? cfg->heap_reserve : 1024;
        ev->heap = malloc(reserve * sizeof ev->heap[0]);
        if (!ev->heap)
                return -ENOMEM;
        ev->cap_heap = reserve;
        ev->cal = calloc(EV_CAL_BUCKETS, sizeof ev->cal[0]);
        if (!ev->cal) {
                free(ev->heap);
                ev->heap = NULL;
                return -ENOMEM;
        }
        coro_pool_init(&ev->stacks, cfg ? cfg->stack_bytes : 0);
        return 0;
}

void ev_loop_fini(struct ev_loop *ev)
{
        /* Processes still live (after a deadlock or a stop) lose their
         * stacks here; their owners' memory is the owners' to free. */
        struct ev_proc *p = ev->procs;
        while (p) {
                struct ev_proc *next = p->next;
                if (p->co)
                        coro_discard(&ev->stacks, p->co);
                p->co = NULL;
                p = next;
        }
        ev->procs = ev->procs_tail = NULL;
        coro_pool_fini(&ev->stacks);
        free(ev->heap);
        ev->heap = NULL;
        free(ev->cal);
        ev->cal = NULL;
}

/* ---- the queue ------------------------------------------------------------ */

/* (t, seq) as one 128-bit key: the comparison is branch-free. */
static inline unsigned __int128 key(const struct ev_heap_entry *a)
{
        return (unsigned __int128)a->t << 64 | a->seq;
}

static int heap_grow(struct ev_loop *ev)
{
        size_t cap = ev->cap_heap * 2;
        struct ev_heap_entry *h = realloc(ev->heap, cap * sizeof *h);
        if (!h)
                return -ENOMEM;
        ev->heap = h;
        ev->cap_heap = cap;
        return 0;
}

/* Place x at hole i, moving it up past larger parents. */
static inline void sift_up(struct ev_heap_entry *h, size_t i, struct ev_heap_entry x)
{
        unsigned __int128 kx = key(&x);
        while (i > 0) {
                size_t parent = (i - 1) / HEAP_ARITY;
                if (kx >= key(&h[parent]))
                        break;
                h[i] = h[parent];
                i = parent;
        }
        h[i] = x;
}

static void heap_push(struct ev_loop *ev, struct ev_heap_entry x)
{
        sift_up(ev->heap, ev->n_heap++, x);
}

/* Remove the root; n_heap > 0. Bottom-up: the hole left by the root sinks
 * along the smallest children to a leaf without comparing against the
 * moved element, which then rises from there; the last element usually
 * belongs near the bottom, so this takes about half the comparisons. */
static void heap_pop(struct ev_loop *ev)
{
        struct ev_heap_entry *h = ev->heap;
        size_t n = --ev->n_heap;
        if (n == 0)
                return;
        size_t i = 0;
        for (;;) {
                size_t first = i * HEAP_ARITY + 1;
                if (first >= n)
                        break;
                size_t best = first;
                unsigned __int128 kb = key(&h[first]);
                size_t last = first + HEAP_ARITY < n ? first + HEAP_ARITY : n;
                for (size_t c = first + 1; c < last; c++) {
                        unsigned __int128 kc = key(&h[c]);
                        bool less = kc < kb;
                        best = less ? c : best;
                        kb = less ? kc : kb;
                }
                h[i] = h[best];
                i = best;
        }
        /* Put the last element in the hole at i and let it rise. */
        sift_up(h, i, h[n]);
}

/* ---- the calendar: near-future buckets (see ev.h) ---- */

static inline size_t cal_index(sim_ps t)
{
        return (size_t)(t >> EV_CAL_SHIFT) & (EV_CAL_BUCKETS - 1);
}

/* Does t fall within the calendar's reach from now? */
static inline bool cal_reaches(const struct ev_loop *ev, sim_ps t)
{
        return (t >> EV_CAL_SHIFT) - (ev->now >> EV_CAL_SHIFT) < EV_CAL_BUCKETS;
}

/* Put e (e->t set, e->seq the newest) in its bucket, after every event of
 * the same or an earlier time; false if that would take a walk of more
 * than EV_CAL_WALK links (a crowded bucket: the heap takes it instead). */
static inline bool cal_insert(struct ev_loop *ev, struct ev_event *e)
{
        size_t i = cal_index(e->t);
        struct ev_cal_bucket *b = &ev->cal[i];
        e->next = NULL;
        if (!b->head) {
                b->head = b->tail = e;
                ev->cal_used[i / 64] |= UINT64_C(1) << (i % 64);
                ev->cal_words |= UINT64_C(1) << (i / 64);
        } else if (e->t >= b->tail->t) {
                b->tail->next = e;
                b->tail = e;
        } else if (e->t < b->head->t) {
                e->next = b->head;
                b->head = e;
        } else {
                struct ev_event *p = b->head;
                for (int n = 0; p->next->t <= e->t; n++) {
                        if (n == EV_CAL_WALK)
                                return false;
                        p = p->next;
                }
                e->next = p->next;
                p->next = e;
        }
        ev->n_cal++;
        return true;
}

/* The calendar's earliest event, or NULL: the head of the first non-empty
 * bucket from now's, in ring order. */
static inline struct ev_event *cal_first(const struct ev_loop *ev)
{
        if (!ev->n_cal)
                return NULL;
        size_t i = cal_index(ev->now), w = i / 64;
        uint64_t m = ev->cal_used[w] & (~UINT64_C(0) << (i % 64));
        if (!m) {
                /* Words after w, else (wrapping) from word 0: the
                 * buckets of w below i are then the last in ring order. */
                uint64_t later = w == EV_CAL_WORDS - 1 ? 0 : ev->cal_words & (~UINT64_C(0) << (w + 1));
                w = (size_t)__builtin_ctzll(later ? later : ev->cal_words);
                m = ev->cal_used[w];
        }
        return ev->cal[w * 64 + (size_t)__builtin_ctzll(m)].head;
}

/* Remove the head of its bucket. */
static inline void cal_pop(struct ev_loop *ev, struct ev_cal_bucket *b, size_t i)
{
        b->head = b->head->next;
        if (!b->head) {
                b->tail = NULL;
                ev->cal_used[i / 64] &= ~(UINT64_C(1) << (i % 64));
                if (!ev->cal_used[i / 64])
                        ev->cal_words &= ~(UINT64_C(1) << (i / 64));
        }
        ev->n_cal--;
}

/* The earliest event of the calendar and the heap, or NULL; its time in *t. */
static inline struct ev_event *queue_first(const struct ev_loop *ev, sim_ps *t)
{
        struct ev_event *c = cal_first(ev);
        if (ev->n_heap) {
                const struct ev_heap_entry *h = &ev->heap[0];
                if (!c || h->t < c->t || (h->t == c->t && h->seq < c->seq)) {
                        *t = h->t;
                        return h->e;
                }
        }
        if (c)
                *t = c->t;
        return c;
}

static inline void fifo_push(struct ev_loop *ev, struct ev_event *e)
{
        LIST_APPEND(ev->fifo_head, ev->fifo_tail, e, next);
}

int ev_schedule_at(struct ev_loop *ev, struct ev_event *e, sim_ps when)
{
        CS_ASSERT(when >= ev->now);
        e->seq = ev->seq++;
        e->t = when;
        if (when == ev->now) {
                fifo_push(ev, e);
                return 0;
        }
        if (likely(cal_reaches(ev, when)) && cal_insert(ev, e))
                return 0;
        if (unlikely(ev->n_heap == ev->cap_heap) && heap_grow(ev) < 0) {
                ev->nomem = true;
                return -ENOMEM;
        }
        heap_push(ev, (struct ev_heap_entry){ .t = when, .seq = e->seq, .e = e });
        return 0;
}

int ev_schedule(struct ev_loop *ev, struct ev_event *e, sim_ps delay)
{
        CS_ASSERT(delay <= SIM_PS_MAX - ev->now);
        return ev_schedule_at(ev, e, ev->now + delay);
}

void ev_stop(struct ev_loop *ev)
{
        ev->stopping = true;
}

void ev_set_nomem(struct ev_loop *ev)
{
        ev->nomem = true;
}

static enum ev_run_result out_of_memory(const struct ev_loop *ev, struct diag *d)
{
        diag_error(d, "out of memory at %llu ns: an event or a route could not be stored; "
                   "the run stops rather than go on without it",
                   (unsigned long long)(ev->now / SIM_PS_PER_NS));
        return EV_NOMEM;
}

static const char *wait_kind_text(enum ev_wait_kind k)
{
        switch (k) {
        case EV_WAIT_NONE: return "nothing (ready)";
        case EV_WAIT_SLEEP: return "a timer";
        case EV_WAIT_FUTURE: return "future";
        case EV_WAIT_QUEUE_GET: return "get from empty queue";
        case EV_WAIT_QUEUE_PUT: return "put to full queue";
        }
        return "?";
}

static void report_procs(struct ev_loop *ev, struct diag *d)
{
        for (struct ev_proc *p = ev->procs; p; p = p->next) {
                char at[200] = "", note[sizeof p->wait_note];
                if (ev_proc_note_text(p, note, sizeof note)[0])
                        snprintf(at, sizeof at, "; %s", note);
                else if (p->at_file)
                        snprintf(at, sizeof at, "; last call %s:%d: %s", p->at_file, p->at_line,
                                 p->at_what ? p->at_what : "?");
                if (p->wait_name)
                        diag_report(d, DIAG_NOTE, NULL, 0, 0, "process '%s' waits on %s '%s'%s",
                                    p->name, wait_kind_text(p->wait_kind), p->wait_name, at);
                else
                        diag_report(d, DIAG_NOTE, NULL, 0, 0, "process '%s' waits on %s%s",
                                    p->name, wait_kind_text(p->wait_kind), at);
        }
}

enum next_kind { NEXT_EVENT, NEXT_NONE, NEXT_TIME_BUDGET, NEXT_CHECK };

/* The next event in (time, seq) order, without taking it; or why there is
 * none to take. */
static inline enum next_kind peek_next(const struct ev_loop *ev, struct ev_event **out)
{
        sim_ps t = 0;
        struct ev_event *q = queue_first(ev, &t);
        if (q && t == ev->now) {
                *out = q;
        } else if (ev->fifo_head) {
                *out = ev->fifo_head;
        } else if (q) {
                if (unlikely(ev->max_time && t > ev->max_time))
                        return NEXT_TIME_BUDGET;
                *out = q;
        } else {
                return NEXT_NONE;
        }
        if (unlikely(ev->next_check && ev->n_events >= ev->next_check))
                return NEXT_CHECK;
        return NEXT_EVENT;
}

/* Take the event peek_next returned, advancing time. */
static inline void take(struct ev_loop *ev, struct ev_event *e)
{
        /* An event is in one place only: the heap's root, the head of the
         * bucket of its time, or the FIFO's head. */
        size_t i = cal_index(e->t);
        if (ev->n_heap && ev->heap[0].e == e) {
                ev->now = ev->heap[0].t;
                heap_pop(ev);
                /* The next event's owner is likely cold (another process's
                 * struct): start fetching it now. */
                if (ev->n_heap)
                        __builtin_prefetch(ev->heap[0].e);
        } else if (ev->cal[i].head == e) {
                ev->now = e->t;
                cal_pop(ev, &ev->cal[i], i);
        } else {
                ev->fifo_head = e->next;
                if (!ev->fifo_head)
                        ev->fifo_tail = NULL;
        }
        ev->n_events++;
}

/* The event count at which the loop next looks up: its budget, or its next
 * poll when that comes first (0: never). */
static uint64_t check_at(const struct ev_loop *ev)
{
        uint64_t at = ev->max_events;
        if (ev->poll) {
                uint64_t poll = ev->poll_every > UINT64_MAX - ev->n_events
                                        ? UINT64_MAX : ev->n_events + ev->poll_every;
                if (!at || poll < at)
                        at = poll;
        }
        return at;
}

void ev_set_poll(struct ev_loop *ev, uint64_t every, ev_poll_fn fn, void *ctx)
{
        CS_ASSERT(!fn || every > 0);
        ev->poll = fn;
        ev->poll_every = every;
        ev->poll_ctx = ctx;
}

enum ev_run_result ev_run(struct ev_loop *ev, struct diag *d)
{
        ev->stopping = false;
        ev->next_check = check_at(ev);
        ev->direct = coro_can_transfer() && ev->trace == NULL;
        if (unlikely(ev->nomem))
                return out_of_memory(ev, d);
        for (;;) {
                struct ev_event *e;
                switch (peek_next(ev, &e)) {
                case NEXT_NONE:
                        goto drained;
                case NEXT_TIME_BUDGET: {
                        sim_ps next = 0;
                        queue_first(ev, &next);
                        diag_error(d, "simulated time budget exceeded: the next event is at "
                                   "%llu.%03llu ns, past the budget of %llu.%03llu ns; a "
                                   "run this long needs a larger one (cubesim run "
                                   "--max-sim-ns), unless its kernel never ends (where the "
                                   "processes wait is below)",
                                   (unsigned long long)(next / SIM_PS_PER_NS),
                                   (unsigned long long)(next % SIM_PS_PER_NS),
                                   (unsigned long long)(ev->max_time / SIM_PS_PER_NS),
                                   (unsigned long long)(ev->max_time % SIM_PS_PER_NS));
                        report_procs(ev, d);
                        return EV_BUDGET;
                }
                case NEXT_CHECK:
                        if (!ev->max_events || ev->n_events < ev->max_events) {
                                ev->poll(ev->poll_ctx, ev);
                                ev->next_check = check_at(ev);
                                continue;
                        }
                        diag_error(d, "event budget exceeded: %llu events at %llu ns; a run "
                                   "this long needs a larger one (cubesim run --max-events, "
                                   "and --max-sim-ns if simulated time runs out next), unless "
                                   "its kernel never ends (where the processes wait is below)",
                                   (unsigned long long)ev->n_events,
                                   (unsigned long long)(ev->now / SIM_PS_PER_NS));
                        report_procs(ev, d);
                        return EV_BUDGET;
                case NEXT_EVENT:
                        break;
                }
                take(ev, e);
                if (unlikely(ev->trace != NULL))
                        ev->trace(ev->trace_ctx, ev->now, e->seq, e);
                e->fn(ev, e);
                if (unlikely(ev->stopping | ev->nomem))
                        return ev->nomem ? out_of_memory(ev, d) : EV_STOPPED;
        }
drained:
        if (ev->n_procs) {
                diag_error(d, "deadlock at %llu ns: the event queue is empty and %zu process%s "
                           "still wait%s",
                           (unsigned long long)(ev->now / SIM_PS_PER_NS), ev->n_procs,
                           ev->n_procs == 1 ? "" : "es", ev->n_procs == 1 ? "s" : "");
                report_procs(ev, d);
                return EV_DEADLOCK;
        }
        return EV_DONE;
}

/* ---- processes ------------------------------------------------------------ */

static void proc_body(void *arg)
{
        struct ev_proc *p = arg;
        p->fn(p, p->arg);
        p->finished = true;
        p->ev->finished = p;  /* the loop frees its stack once off it */
}

static void proc_unlink(struct ev_loop *ev, struct ev_proc *p)
{
        if (!p->next)
                ev->procs_tail = p->prev;
        LIST_UNLINK(ev->procs, p, prev, next);
        p->prev = p->next = NULL;
        ev->n_procs--;
}

static inline void clear_wait(struct ev_proc *p)
{
        p->wait_kind = EV_WAIT_NONE;
        p->wait_name = NULL;
        p->wait_note[0] = '\0';
        p->note_fn = NULL;
}

static void proc_wake(struct ev_loop *ev, struct ev_event *e)
{
        struct ev_proc *p = container_of(e, struct ev_proc, wake);
        clear_wait(p);
        ev->current = p;
        ev->n_resumes++;
        coro_resume(p->co);
        /* Back in the loop: p, or a process p handed over to, yielded. */
        ev->current = NULL;
        struct ev_proc *f = ev->finished;
        if (f) {
                ev->finished = NULL;
                coro_release(&ev->stacks, f->co);
                f->co = NULL;
                proc_unlink(ev, f);
                if (f->on_exit)
                        ev_schedule(ev, f->on_exit, 0);
        }
}

void ev_proc_discard(struct ev_proc *p)
{
        if (!p->co)
                return;
        struct ev_loop *ev = p->ev;
        if (ev->finished == p) {     /* returned, its stack not yet freed */
                ev->finished = NULL;
                coro_release(&ev->stacks, p->co);
        } else {
                coro_discard(&ev->stacks, p->co);
        }
        p->co = NULL;
        proc_unlink(ev, p);
}

int ev_proc_start(struct ev_loop *ev, struct ev_proc *p, const char *name, ev_proc_fn fn, void *arg)
{
        memset(p, 0, sizeof *p);
        p->ev = ev;
        p->name = name;
        p->fn = fn;
        p->arg = arg;
        p->wake.fn = proc_wake;
        p->co = coro_create(&ev->stacks, proc_body, p, name);
        if (!p->co)
                return -ENOMEM;
        if (ev_schedule(ev, &p->wake, 0) < 0) {
                coro_release(&ev->stacks, p->co);
                p->co = NULL;
                return -ENOMEM;
        }
        p->prev = ev->procs_tail;
        LIST_APPEND(ev->procs, ev->procs_tail, p, next);
        ev->n_procs++;
        return 0;
}

/* Suspend the running process until its wake event fires.
 *
 * Fast path: when the next event is a process's wake-up, take it here and
 * hand over to that process directly (or just go on, if it is this one)
 * instead of switching to the loop and from there to the process: one
 * switch per event instead of two. The order of events is the loop's own
 * (same peek and take). Anything else (a callback, a budget, a stop, an
 * empty queue, tracing) goes back to the loop. */
static inline void proc_block(struct ev_proc *p)
{
        struct ev_loop *ev = p->ev;
        CS_ASSERT(ev->current == p);
        struct ev_event *e;
        if (ev->direct && !(ev->stopping | ev->nomem) && peek_next(ev, &e) == NEXT_EVENT &&
            e->fn == proc_wake) {
                take(ev, e);
                struct ev_proc *q = container_of(e, struct ev_proc, wake);
                clear_wait(q);
                if (q == p)
                        return;
                ev->current = q;
                ev->n_resumes++;
                coro_transfer(p->co, q->co);
                return;
        }
        coro_yield(p->co);
}

void ev_sleep_until(struct ev_proc *p, sim_ps when)
{
        p->wait_kind = EV_WAIT_SLEEP;
        if (ev_schedule_at(p->ev, &p->wake, when) < 0) {
                /* No memory to queue the wake-up: the process can only be
                 * reported, as waiting forever. */
                ev_proc_note(p, "out of memory scheduling its wake-up");
        }
        proc_block(p);
}

void ev_sleep(struct ev_proc *p, sim_ps dt)
{
        ev_sleep_until(p, p->ev->now + dt);
}

void ev_proc_note(struct ev_proc *p, const char *fmt, ...)
{
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(p->wait_note, sizeof p->wait_note, fmt, ap);
        va_end(ap);
        p->note_fn = NULL;
}

void ev_proc_note_lazy(struct ev_proc *p, ev_note_fn fn, const void *arg)
{
        p->wait_note[0] = '\0';
        p->note_fn = fn;
        p->note_arg = arg;
}

const char *ev_proc_note_text(const struct ev_proc *p, char *buf, size_t len)
{
        if (len == 0)
                return "";
        if (p->note_fn)
                p->note_fn(p->note_arg, buf, len);
        else
                snprintf(buf, len, "%s", p->wait_note);
        return buf;
}

/* ---- futures --------------------------------------------------------------- */

static inline void list_append(struct ev_event **head, struct ev_event **tail, struct ev_event *e)
{
        LIST_APPEND(*head, *tail, e, next);
}

static inline struct ev_event *list_pop(struct ev_event **head, struct ev_event **tail)
{
        struct ev_event *e = *head;
        if (e) {
                *head = e->next;
                if (!*head)
                        *tail = NULL;
        }
        return e;
}

void ev_future_init(struct ev_future *f, const char *name)
{
        memset(f, 0, sizeof *f);
        f->name = name;
}

void ev_future_complete(struct ev_loop *ev, struct ev_future *f, uint64_t value)
{
        CS_ASSERT(!f->done);
        f->done = true;
        f->value = value;
        struct ev_event *e;
        while ((e = list_pop(&f->waiters, &f->waiters_tail)))
                ev_schedule(ev, e, 0);
}

void ev_future_on_done(struct ev_loop *ev, struct ev_future *f, struct ev_event *e)
{
        if (f->done)
                ev_schedule(ev, e, 0);
        else
                list_append(&f->waiters, &f->waiters_tail, e);
}

uint64_t ev_wait(struct ev_proc *p, struct ev_future *f)
{
        if (!f->done) {
                p->wait_kind = EV_WAIT_FUTURE;
                p->wait_name = f->name;
                list_append(&f->waiters, &f->waiters_tail, &p->wake);
                proc_block(p);
        }
        return f->value;
}

/* ---- bounded queues -------------------------------------------------------- */

int ev_queue_init(struct ev_queue *q, size_t capacity, const char *name)
{
        memset(q, 0, sizeof *q);
        CS_ASSERT(capacity >= 1);
        q->slots = malloc(capacity * sizeof q->slots[0]);
        if (!q->slots)
                return -ENOMEM;
        q->cap = capacity;
        q->name = name;
        return 0;
}

void ev_queue_fini(struct ev_queue *q)
{
        free(q->slots);
        q->slots = NULL;
}

static void ring_push(struct ev_queue *q, void *item)
{
        q->slots[(q->head + q->count) % q->cap] = item;
        q->count++;
}

static void *ring_pop(struct ev_queue *q)
{
        void *item = q->slots[q->head];
        q->head = (q->head + 1) % q->cap;
        q->count--;
        return item;
}

bool ev_queue_try_put(struct ev_loop *ev, struct ev_queue *q, void *item)
{
        struct ev_event *g = list_pop(&q->getters, &q->getters_tail);
        if (g) {
                /* Hand the item straight to the oldest blocked getter. */
                struct ev_proc *p = container_of(g, struct ev_proc, wake);
                p->xfer = item;
                ev_schedule(ev, g, 0);
                return true;
        }
        if (q->count == q->cap)
                return false;
        ring_push(q, item);
        return true;
}

bool ev_queue_try_get(struct ev_loop *ev, struct ev_queue *q, void **item)
{
        if (q->count == 0)
                return false;
        *item = ring_pop(q);
        struct ev_event *w = list_pop(&q->putters, &q->putters_tail);
        if (w) {
                /* A slot opened: the oldest blocked putter's item goes in. */
                struct ev_proc *p = container_of(w, struct ev_proc, wake);
                ring_push(q, p->xfer);
                p->xfer = NULL;
                ev_schedule(ev, w, 0);
        }
        return true;
}

void ev_queue_put(struct ev_proc *p, struct ev_queue *q, void *item)
{
        if (ev_queue_try_put(p->ev, q, item))
                return;
        p->wait_kind = EV_WAIT_QUEUE_PUT;
        p->wait_name = q->name;
        p->xfer = item;
        list_append(&q->putters, &q->putters_tail, &p->wake);
        proc_block(p);
}

void *ev_queue_get(struct ev_proc *p, struct ev_queue *q)
{
        void *item;
        if (ev_queue_try_get(p->ev, q, &item))
                return item;
        p->wait_kind = EV_WAIT_QUEUE_GET;
        p->wait_name = q->name;
        p->xfer = NULL;
        list_append(&q->getters, &q->getters_tail, &p->wake);
        proc_block(p);
        item = p->xfer;
        p->xfer = NULL;
        return item;
}
