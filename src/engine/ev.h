/* engine/ev.h: the discrete-event engine.
 *
 * Time is sim_ps, an unsigned 64-bit count of picoseconds; there is no
 * floating point in event ordering. Events run in (time, insertion
 * sequence) order, so the same input gives the same run bit for bit.
 *
 * The queue has three parts (docs/adr/0012-event-queue-calendar.md): a FIFO (an
 * intrusive list) for events scheduled at the current time; a calendar of
 * EV_CAL_BUCKETS buckets of 2^EV_CAL_SHIFT ps each for the near future
 * (the bucket numbers now >> EV_CAL_SHIFT onwards, a ring), each bucket an
 * intrusive list sorted on (time, sequence); and a 4-ary array heap of
 * plain 24-byte entries for events past the calendar's reach when they
 * were scheduled. The next event is the smaller of the calendar's first
 * and the heap's root. Correctness of the FIFO bypass: an event in the
 * calendar or heap with time t was inserted while now < t, so before every
 * event put in the FIFO while now == t; running those of time now first,
 * then the FIFO, is exactly (time, sequence) order.
 *
 * Events are embedded in their owners (a component, a request, a process)
 * and get back to the owner with container_of: the hot path allocates
 * nothing. An event is in at most one queue or waiter list at a time.
 *
 * Two kinds of actors share the queue: callback handlers (hardware
 * components; no stack) and processes (kernel code; each a coroutine with
 * its own stack that suspends in ev_sleep / ev_wait / queue operations).
 *
 * When the queue empties while processes still wait, ev_run reports a
 * deadlock naming every waiting process and what it waits on. */
#ifndef CUBESIM_ENGINE_EV_H
#define CUBESIM_ENGINE_EV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/diag.h"
#include "engine/coro.h"

#ifndef CUBESIM_SIM_PS_DEFINED
#define CUBESIM_SIM_PS_DEFINED
typedef uint64_t sim_ps;        /* simulated time or duration, picoseconds */
#endif

#define SIM_PS_PER_NS ((sim_ps)1000)
#define SIM_PS_MAX UINT64_MAX

struct ev_loop;
struct ev_event;
typedef void (*ev_fn)(struct ev_loop *, struct ev_event *);

struct ev_event {
        ev_fn fn;                    /* handler, run when the event fires */
        struct ev_event *next;       /* link in the FIFO, a calendar bucket or a waiter list */
        uint64_t seq;                /* insertion sequence when last scheduled */
        sim_ps t;                    /* firing time when last scheduled (orders a calendar bucket) */
};

/* The calendar: 4096 buckets of 1024 ps reach 4.19 us past now, past
 * nearly every delay of the kernels' events (issue costs, DMA, links). */
#define EV_CAL_SHIFT 10
#define EV_CAL_BUCKETS 4096
#define EV_CAL_WORDS (EV_CAL_BUCKETS / 64)

struct ev_cal_bucket {
        struct ev_event *head;       /* earliest (time, seq) first */
        struct ev_event *tail;       /* latest, for appending */
};

struct ev_heap_entry {
        sim_ps t;                    /* firing time */
        uint64_t seq;                /* insertion sequence, breaks ties */
        struct ev_event *e;          /* what fires */
};

/* Observes every dispatched event (determinism tests, tracing). */
typedef void (*ev_trace_fn)(void *ctx, sim_ps t, uint64_t seq, const struct ev_event *e);
/* Called between two events, every so many (ev_set_poll): progress. */
typedef void (*ev_poll_fn)(void *ctx, const struct ev_loop *ev);

struct ev_proc;

struct ev_loop {
        sim_ps now;                  /* current simulated time */
        uint64_t seq;                /* next insertion sequence number */
        struct ev_heap_entry *heap;  /* 4-ary min-heap on (t, seq) */
        size_t n_heap;               /* entries in heap */
        size_t cap_heap;             /* allocated entries */
        struct ev_cal_bucket *cal;   /* EV_CAL_BUCKETS buckets; bucket number b at b % EV_CAL_BUCKETS */
        uint64_t cal_used[EV_CAL_WORDS]; /* bit per bucket: not empty */
        uint64_t cal_words;          /* bit per word of cal_used: not zero */
        size_t n_cal;                /* events in the calendar */
        struct ev_event *fifo_head;  /* events at time now, in insertion order */
        struct ev_event *fifo_tail;  /* last of them, for appending */
        uint64_t n_events;           /* stat: events dispatched */
        uint64_t n_resumes;          /* stat: process resumes (switches in) */
        struct coro_pool stacks;     /* coroutine stacks, pooled */
        struct ev_proc *procs;       /* live processes in start order, doubly linked */
        struct ev_proc *procs_tail;  /* the last started of them */
        size_t n_procs;              /* live processes */
        struct ev_proc *current;     /* running process, NULL in a callback */
        uint64_t max_events;         /* stop with an error past this many (0: none) */
        sim_ps max_time;             /* stop with an error past this time (0: none) */
        uint64_t next_check;         /* events at which the loop looks up from its work: the
                                      * budget or the next poll (0: never); ev_run sets it */
        uint64_t poll_every;         /* events between calls of poll */
        ev_poll_fn poll;             /* ev_set_poll's, or NULL */
        void *poll_ctx;              /* its context */
        bool stopping;               /* ev_stop was called */
        bool nomem;                  /* sticky: an event was lost to a failed allocation */
        bool direct;                 /* processes may hand over to each other (coro_transfer) */
        struct ev_proc *finished;    /* a process whose body just returned, for the loop to free */
        ev_trace_fn trace;           /* optional observer, NULL if none */
        void *trace_ctx;             /* its context */
};

struct ev_config {
        size_t stack_bytes;          /* process stack size (0: 256 KiB) */
        size_t heap_reserve;         /* initial heap capacity, entries (0: 1024) */
};

/* 0 or -ENOMEM. */
int ev_loop_init(struct ev_loop *, const struct ev_config *);
void ev_loop_fini(struct ev_loop *);
/* Call fn(ctx, ev) between two events every `every` events (> 0) of the
 * runs that follow; fn NULL: no more calls. It may read the loop, not
 * change it. The check costs the loop nothing: it is the event budget's. */
void ev_set_poll(struct ev_loop *, uint64_t every, ev_poll_fn fn, void *ctx);

static inline sim_ps ev_now(const struct ev_loop *ev) { return ev->now; }

/* Fire e at now + delay; delay 0 goes through the FIFO. e must not already
 * be queued. Returns 0, or -ENOMEM if the heap could not grow: the event
 * is then not scheduled, and the loop remembers it (as SQLite's
 * mallocFailed does), so ev_run stops with EV_NOMEM instead of running on
 * with an event missing. A caller need not check the result. */
int ev_schedule(struct ev_loop *, struct ev_event *e, sim_ps delay);
/* Fire e at time when >= now. */
int ev_schedule_at(struct ev_loop *, struct ev_event *e, sim_ps when);

enum ev_run_result {
        EV_DONE = 0,                 /* queue empty, no process waiting */
        EV_STOPPED,                  /* ev_stop was called */
        EV_DEADLOCK,                 /* queue empty, processes still waiting */
        EV_BUDGET,                   /* max_events or max_time exceeded */
        EV_NOMEM,                    /* an allocation failed while scheduling */
};

/* Run until the queue is empty, ev_stop, a budget is exceeded, or an event
 * was lost to a failed allocation (EV_NOMEM: at once if that happened
 * before the call). On EV_DEADLOCK and EV_BUDGET the report (every waiting
 * process and what it waits on) goes into d; on EV_NOMEM a message. */
enum ev_run_result ev_run(struct ev_loop *, struct diag *d);
void ev_stop(struct ev_loop *);
/* Record that work of the run was lost to a failed allocation outside the
 * queue (a route that could not be cached): ev_run stops with EV_NOMEM. */
void ev_set_nomem(struct ev_loop *);

/* ---- processes -------------------------------------------------------- */

typedef void (*ev_proc_fn)(struct ev_proc *, void *arg);
/* Writes a wait note into buf (len bytes, NUL-terminated), from arg. */
typedef void (*ev_note_fn)(const void *arg, char *buf, size_t len);

enum ev_wait_kind {
        EV_WAIT_NONE,                /* running or ready */
        EV_WAIT_SLEEP,               /* in ev_sleep */
        EV_WAIT_FUTURE,              /* in ev_wait */
        EV_WAIT_QUEUE_GET,           /* in ev_queue_get on an empty queue */
        EV_WAIT_QUEUE_PUT,           /* in ev_queue_put on a full queue */
};

struct ev_proc {
        struct ev_loop *ev;          /* the loop it runs in */
        struct coro *co;             /* its coroutine; NULL once finished */
        struct ev_event wake;        /* resumes the coroutine when fired */
        const char *name;            /* borrowed, for reports */
        ev_proc_fn fn;               /* body */
        void *arg;                   /* body's argument */
        struct ev_proc *prev, *next; /* in ev_loop.procs while live */
        enum ev_wait_kind wait_kind; /* what it is blocked in */
        const char *wait_name;       /* name of the future or queue waited on */
        char wait_note[160];         /* caller's detail (e.g. kernel file:line, recv from PE) */
        ev_note_fn note_fn;          /* formats the detail on demand instead, or NULL */
        const void *note_arg;        /* its argument, valid while the process waits */
        const char *at_file;         /* caller's last source location (kernel file), or NULL */
        int at_line;                 /* and line */
        const char *at_what;         /* and what it called there, or NULL */
        void *xfer;                  /* item handed over by a queue */
        uint64_t value;              /* value of the future that woke it */
        bool finished;               /* body returned */
        struct ev_event *on_exit;    /* fired (at now) when the body returns, or NULL */
};

/* Start p running fn(p, arg) at the current time. p is owned by the caller
 * and must stay valid until the process finishes or, if it never does
 * (deadlock, budget, stop), until ev_loop_fini. 0 or -ENOMEM. */
int ev_proc_start(struct ev_loop *, struct ev_proc *p, const char *name, ev_proc_fn fn, void *arg);

/* Drop a process that never finished (after a deadlock or a stop): its
 * stack is discarded and the loop forgets it, so its owner may free p
 * before ev_loop_fini. Nothing if it has finished or never started. */
void ev_proc_discard(struct ev_proc *p);

/* Within a process: */
void ev_sleep(struct ev_proc *, sim_ps dt);
void ev_sleep_until(struct ev_proc *, sim_ps when);

/* Attach a note to the next wait (shown in the deadlock report); cleared
 * when the process resumes. */
void ev_proc_note(struct ev_proc *, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The same, formatted only if a report asks for it: fn(arg, ...) runs then,
 * so arg must stay valid until the process resumes. Waits are on the hot
 * path and their notes are almost never read. */
void ev_proc_note_lazy(struct ev_proc *, ev_note_fn fn, const void *arg);
/* The note of p's current wait, formatted into buf; "" if none. */
const char *ev_proc_note_text(const struct ev_proc *p, char *buf, size_t len);

/* ---- futures ---------------------------------------------------------- */

/* A one-shot completion with a value and a list of waiters (process wake
 * events or component callbacks), woken in the order they arrived. */
struct ev_future {
        struct ev_event *waiters;    /* head of waiter list */
        struct ev_event *waiters_tail; /* tail, for appending */
        uint64_t value;              /* set on completion */
        bool done;                   /* completed */
        const char *name;            /* borrowed, for reports */
};

void ev_future_init(struct ev_future *, const char *name);
/* Complete f: every waiter fires at the current time, in arrival order.
 * Completing twice is a bug in the caller. */
void ev_future_complete(struct ev_loop *, struct ev_future *f, uint64_t value);
/* Fire e when f completes (at once, through the FIFO, if it already has). */
void ev_future_on_done(struct ev_loop *, struct ev_future *f, struct ev_event *e);
/* Within a process: block until f completes; returns its value. */
uint64_t ev_wait(struct ev_proc *, struct ev_future *f);

/* ---- resources ----------------------------------------------------------- */

/* A server bank served at arrival time (docs/adr/0010): n identical
 * servers, each keeping a sorted list of the intervals it is busy. A
 * request arriving at t takes idle time at or after t, never before, so a
 * booking that lies in the future never blocks an earlier arrival that fits
 * before it, and a server with work waiting is never idle:
 *   - EV_WHOLE: the request holds one server for its whole service, in the
 *     earliest gap at or after its arrival that fits it (on the server
 *     where that gap starts first; the lowest index on ties);
 *   - EV_SPLIT: the work is divisible (bytes on a link or a channel, which
 *     move as packets): it fills every idle stretch from its arrival on
 *     until its service is done, around the bookings already made.
 * Where two requests want the same time, the one placed first keeps it
 * (priority by placement order). The model stays analytic: a request
 * learns its start and end when it is placed. Intervals that end before
 * the loop's current time are dropped (no request arrives in the past). */
#define EV_RESOURCE_MAX_SERVERS 64

enum ev_share {
        EV_WHOLE,                    /* a request holds one server throughout */
        EV_SPLIT,                    /* a request's work is divisible (one server) */
};

struct ev_busy {
        sim_ps start;                /* first busy ps */
        sim_ps end;                  /* first idle ps after it */
};

struct ev_server {
        struct ev_busy *iv;          /* busy intervals, sorted, disjoint, not touching */
        uint32_t head;               /* first interval that may still matter */
        uint32_t n;                  /* intervals used (iv[head..n) live) */
        uint32_t cap;                /* intervals allocated */
        sim_ps max_gap;              /* no gap between live intervals is longer, ps */
        sim_ps last_end;             /* end of the last interval (0: none yet) */
        struct ev_busy small[2];     /* first intervals, before any allocation */
};

struct ev_resource {
        const char *name;            /* borrowed, for reports */
        struct ev_loop *ev;          /* its loop (the floor of arrivals), or NULL */
        enum ev_share share;         /* whole or divisible requests */
        unsigned n_servers;          /* identical servers, 1..EV_RESOURCE_MAX_SERVERS */
        struct ev_server *servers;   /* n_servers; &one when there is one */
        struct ev_server one;        /* the server of a one-server bank */
        sim_ps busy_ps;              /* stat: total service time given */
        uint64_t n_requests;         /* stat: requests served */
};

/* 0 or -ENOMEM. EV_SPLIT needs n_servers == 1. ev may be NULL (arrivals
 * are then never before 0). */
int ev_resource_init(struct ev_resource *, struct ev_loop *ev, const char *name,
                     unsigned n_servers, enum ev_share share);
void ev_resource_fini(struct ev_resource *);
/* A request arriving at `arrive` needing `service`: returns its finish time
 * and writes its start (its first busy ps) to *start (may be NULL). A
 * request for 0 ps finishes at its arrival. If the interval list cannot
 * grow, the request is placed after the server's last booking (times stay
 * valid, gaps are lost) and the loop stops with EV_NOMEM (ev_set_nomem). */
static inline sim_ps ev_resource_reserve(struct ev_resource *, sim_ps arrive, sim_ps service,
                                         sim_ps *start);
/* The same, out of line: every case. */
sim_ps ev__resource_reserve(struct ev_resource *, sim_ps arrive, sim_ps service, sim_ps *start);
/* The end of the resource's last booking (0 if none yet). */
sim_ps ev_resource_booked_until(const struct ev_resource *);
/* Within a process: be served from now and sleep until done. */
void ev_resource_use(struct ev_proc *, struct ev_resource *, sim_ps service);

/* ---- bounded queues ------------------------------------------------------ */

struct ev_queue {
        void **slots;                /* ring of items */
        size_t cap;                  /* ring capacity (the bound) */
        size_t head;                 /* index of the oldest item */
        size_t count;                /* items held */
        struct ev_event *getters;    /* blocked getters' wake events, FIFO */
        struct ev_event *getters_tail;
        struct ev_event *putters;    /* blocked putters' wake events, FIFO */
        struct ev_event *putters_tail;
        const char *name;            /* borrowed, for reports */
};

/* capacity >= 1. 0 or -ENOMEM. */
int ev_queue_init(struct ev_queue *, size_t capacity, const char *name);
void ev_queue_fini(struct ev_queue *);
/* Within a process: block while full / while empty. Items are handed to
 * blocked getters in arrival order. */
void ev_queue_put(struct ev_proc *, struct ev_queue *, void *item);
void *ev_queue_get(struct ev_proc *, struct ev_queue *);
/* From callbacks or processes, never blocking: false if full / empty. */
bool ev_queue_try_put(struct ev_loop *, struct ev_queue *, void *item);
bool ev_queue_try_get(struct ev_loop *, struct ev_queue *, void **item);

/* Place [t, t + service) on s after every booking (t >= its last end, and
 * room for one more interval unless the last ends at t): the last is
 * extended when it ends at t, else the interval is appended. Its end. */
static inline sim_ps ev__resource_append(struct ev_resource *r, struct ev_server *s, sim_ps t,
                                         sim_ps service, sim_ps *start)
{
        bool live = s->n > s->head;  /* then the last interval ends at last_end */
        if (live && s->last_end == t) {
                s->iv[s->n - 1].end = t + service;
        } else {
                if (live && t - s->last_end > s->max_gap)
                        s->max_gap = t - s->last_end;
                s->iv[s->n++] = (struct ev_busy){ t, t + service };
        }
        s->last_end = t + service;
        r->busy_ps += service;
        r->n_requests++;
        if (start)
                *start = t;
        return t + service;
}

/* A divisible request that arrives after every booking, or while the last
 * one is served, extends the last booking or follows it: the most common
 * case (a link's or a channel's next piece), placed here without a call.
 * Everything else, and every whole request, is placed out of line. */
static inline sim_ps ev_resource_reserve(struct ev_resource *r, sim_ps arrive, sim_ps service,
                                         sim_ps *start)
{
        struct ev_server *s = &r->one;
        if (r->share == EV_SPLIT && service > 0 && r->ev && s->n > s->head) {
                sim_ps t = arrive > r->ev->now ? arrive : r->ev->now;
                if (t < s->last_end && s->iv[s->n - 1].start <= t)
                        t = s->last_end;
                if (t == s->last_end || (t > s->last_end && s->n < s->cap))
                        return ev__resource_append(r, s, t, service, start);
        }
        return ev__resource_reserve(r, arrive, service, start);
}

#endif
