/* tests/unit/test_engine.c: the event engine: ordering and ties, the FIFO
 * bypass, determinism, processes, futures, resources, queues, the deadlock
 * and budget reports. */
#include <criterion/criterion.h>
#include <string.h>

#include "base/util.h"
#include "engine/ev.h"

static struct ev_loop ev;
static struct diag d;

static void setup(void)
{
        cr_assert_eq(ev_loop_init(&ev, NULL), 0);
        diag_init(&d);
}

static void teardown(void)
{
        ev_loop_fini(&ev);
        diag_fini(&d);
}

TestSuite(engine, .init = setup, .fini = teardown);

/* ---- ordering ---------------------------------------------------------- */

struct tagged {
        struct ev_event e;           /* the event */
        int id;                      /* identity in the log */
        sim_ps child_delay;          /* if nonzero+1: schedule child at this delay */
        struct tagged *child;        /* scheduled when this one fires */
};

static int order_log[64];
static sim_ps time_log[64];
static int n_log;

static void log_fire(struct ev_loop *l, struct ev_event *e)
{
        struct tagged *t = container_of(e, struct tagged, e);
        order_log[n_log] = t->id;
        time_log[n_log] = ev_now(l);
        n_log++;
        if (t->child)
                ev_schedule(l, &t->child->e, t->child_delay);
}

Test(engine, time_then_insertion_order)
{
        n_log = 0;
        struct tagged ev_a[6];
        const sim_ps at[6] = { 30, 10, 20, 10, 30, 10 };
        for (int i = 0; i < 6; i++) {
                ev_a[i] = (struct tagged){ .e.fn = log_fire, .id = i };
                ev_schedule(&ev, &ev_a[i].e, at[i]);
        }
        cr_assert_eq(ev_run(&ev, &d), EV_DONE);
        const int want[6] = { 1, 3, 5, 2, 0, 4 };
        cr_assert_eq(n_log, 6);
        for (int i = 0; i < 6; i++)
                cr_assert_eq(order_log[i], want[i], "position %d: got %d want %d", i,
                             order_log[i], want[i]);
        cr_assert_eq(ev_now(&ev), 30);
}

/* Heap events due at t run before events put in the FIFO at t, even when
 * the FIFO event was scheduled by the first of them. */
Test(engine, fifo_after_heap_at_same_time)
{
        n_log = 0;
        struct tagged a = { .e.fn = log_fire, .id = 0 }, b = { .e.fn = log_fire, .id = 1 },
                      c = { .e.fn = log_fire, .id = 2 }, z = { .e.fn = log_fire, .id = 3 };
        a.child = &z;                /* z at delay 0: after b and c */
        a.child_delay = 0;
        ev_schedule(&ev, &a.e, 5);
        ev_schedule(&ev, &b.e, 5);
        ev_schedule(&ev, &c.e, 5);
        cr_assert_eq(ev_run(&ev, &d), EV_DONE);
        const int want[4] = { 0, 1, 2, 3 };
        for (int i = 0; i < 4; i++)
                cr_assert_eq(order_log[i], want[i]);
        cr_assert_eq(time_log[3], 5);
}

/* Random schedules: the dispatch sequence is sorted by (t, seq). */
struct rnd_ev {
        struct ev_event e;           /* the event */
        int hops;                    /* reschedules left */
};

static uint64_t rng_state;
static uint64_t rnd(void)
{
        uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
        return z ^ (z >> 31);
}

static void rnd_fire(struct ev_loop *l, struct ev_event *e)
{
        struct rnd_ev *r = container_of(e, struct rnd_ev, e);
        if (r->hops-- > 0)
                ev_schedule(l, e, rnd() % 4 == 0 ? 0 : rnd() % 50);
}

struct trace_rec {
        sim_ps t;                    /* dispatch time */
        uint64_t seq;                /* sequence */
        size_t who;                  /* index of the event's owner */
};

struct trace_buf {
        struct trace_rec *recs;      /* records */
        size_t n, cap;               /* used, allocated */
        struct rnd_ev *base;         /* owners' array, to name events by index */
};

static void trace_cb(void *ctx, sim_ps t, uint64_t seq, const struct ev_event *e)
{
        struct trace_buf *tb = ctx;
        if (tb->n < tb->cap)
                tb->recs[tb->n++] = (struct trace_rec){
                        t, seq, (size_t)(container_of(e, struct rnd_ev, e) - tb->base) };
}

static size_t run_random(uint64_t seed, struct trace_buf *tb)
{
        static struct rnd_ev evs[300];
        struct ev_loop l;
        cr_assert_eq(ev_loop_init(&l, &(struct ev_config){ .heap_reserve = 4 }), 0);
        rng_state = seed;
        tb->base = evs;
        l.trace = trace_cb;
        l.trace_ctx = tb;
        for (int i = 0; i < 300; i++) {
                evs[i] = (struct rnd_ev){ .e.fn = rnd_fire, .hops = 20 };
                ev_schedule(&l, &evs[i].e, rnd() % 100);
        }
        struct diag dd;
        diag_init(&dd);
        cr_assert_eq(ev_run(&l, &dd), EV_DONE);
        diag_fini(&dd);
        ev_loop_fini(&l);
        return tb->n;
}

Test(engine, random_schedule_is_sorted_and_deterministic)
{
        struct trace_buf a = { .cap = 10000 }, b = { .cap = 10000 };
        a.recs = calloc(a.cap, sizeof *a.recs);
        b.recs = calloc(b.cap, sizeof *b.recs);
        size_t na = run_random(42, &a);
        cr_assert_eq(na, 300 * 21);
        for (size_t i = 1; i < na; i++) {
                cr_assert(a.recs[i - 1].t < a.recs[i].t ||
                          (a.recs[i - 1].t == a.recs[i].t && a.recs[i - 1].seq < a.recs[i].seq),
                          "out of order at %zu", i);
        }
        size_t nb = run_random(42, &b);
        cr_assert_eq(na, nb);
        cr_assert_eq(memcmp(a.recs, b.recs, na * sizeof *a.recs), 0, "two runs differ");
        free(a.recs);
        free(b.recs);
}

/* Delays of every scale the queue tells apart: the current time (FIFO),
 * within one calendar bucket, across buckets, past the calendar's reach
 * (heap), and many equal times (crowded buckets fall back to the heap). */
struct scale_ev {
        struct ev_event e;           /* the event */
        int hops;                    /* reschedules left */
        sim_ps due;                  /* the time it was scheduled for */
        uint64_t seq;                /* its sequence then */
};

static struct {
        sim_ps last_t;               /* time of the previous dispatch */
        uint64_t last_seq;           /* and its sequence */
        size_t n;                    /* dispatches */
        size_t bad_time, bad_order;  /* dispatches at the wrong time, out of order */
} scale_log;

static sim_ps scale_delay(void)
{
        const sim_ps reach = (sim_ps)EV_CAL_BUCKETS << EV_CAL_SHIFT;
        switch (rnd() % 6) {
        case 0: return 0;
        case 1: return rnd() % ((sim_ps)1 << EV_CAL_SHIFT);
        case 2: return 5000;         /* equal times pile up */
        case 3: return rnd() % reach;
        case 4: return reach - 1 + rnd() % 3;
        default: return rnd() % (4 * reach);
        }
}

static void scale_fire(struct ev_loop *l, struct ev_event *e)
{
        struct scale_ev *r = container_of(e, struct scale_ev, e);
        if (ev_now(l) != r->due)
                scale_log.bad_time++;
        if (scale_log.n && (ev_now(l) < scale_log.last_t ||
                            (ev_now(l) == scale_log.last_t && r->seq <= scale_log.last_seq)))
                scale_log.bad_order++;
        scale_log.last_t = ev_now(l);
        scale_log.last_seq = r->seq;
        scale_log.n++;
        if (r->hops-- > 0) {
                sim_ps delay = scale_delay();
                r->due = ev_now(l) + delay;
                r->seq = l->seq;
                ev_schedule(l, e, delay);
        }
}

Test(engine, queue_keeps_order_at_every_scale)
{
        static struct scale_ev evs[2000];
        struct ev_loop l;
        cr_assert_eq(ev_loop_init(&l, &(struct ev_config){ .heap_reserve = 4 }), 0);
        rng_state = 7;
        memset(&scale_log, 0, sizeof scale_log);
        for (int i = 0; i < 2000; i++) {
                evs[i] = (struct scale_ev){ .e.fn = scale_fire, .hops = 30 };
                sim_ps delay = scale_delay();
                evs[i].due = delay;
                evs[i].seq = l.seq;
                ev_schedule(&l, &evs[i].e, delay);
        }
        struct diag dd;
        diag_init(&dd);
        cr_assert_eq(ev_run(&l, &dd), EV_DONE);
        diag_fini(&dd);
        cr_assert_eq(scale_log.n, 2000 * 31);
        cr_assert_eq(scale_log.bad_time, 0, "%zu events fired at the wrong time", scale_log.bad_time);
        cr_assert_eq(scale_log.bad_order, 0, "%zu events out of (time, seq) order",
                     scale_log.bad_order);
        cr_assert(l.now > 10 * ((sim_ps)EV_CAL_BUCKETS << EV_CAL_SHIFT), "the ring wrapped");
        ev_loop_fini(&l);
}

/* ---- processes and futures ------------------------------------------------- */

struct waiter_arg {
        struct ev_future *f;         /* what to wait on */
        int id;                      /* identity in the log */
        uint64_t got;                /* value received */
        sim_ps woke_at;              /* when it resumed */
};

static void wait_body(struct ev_proc *p, void *arg)
{
        struct waiter_arg *w = arg;
        order_log[n_log++] = w->id;
        w->got = ev_wait(p, w->f);
        w->woke_at = ev_now(p->ev);
        order_log[n_log++] = 100 + w->id;
}

struct completer {
        struct ev_event e;           /* fires the completion */
        struct ev_future *f;         /* to complete */
};

static void complete_cb(struct ev_loop *l, struct ev_event *e)
{
        struct completer *c = container_of(e, struct completer, e);
        ev_future_complete(l, c->f, 77);
}

Test(engine, future_wakes_waiters_in_order)
{
        n_log = 0;
        struct ev_future f;
        ev_future_init(&f, "f");
        struct ev_proc p1, p2;
        struct waiter_arg w1 = { .f = &f, .id = 1 }, w2 = { .f = &f, .id = 2 };
        cr_assert_eq(ev_proc_start(&ev, &p1, "p1", wait_body, &w1), 0);
        cr_assert_eq(ev_proc_start(&ev, &p2, "p2", wait_body, &w2), 0);
        struct completer c = { .e.fn = complete_cb, .f = &f };
        ev_schedule(&ev, &c.e, 10 * SIM_PS_PER_NS);
        cr_assert_eq(ev_run(&ev, &d), EV_DONE);
        const int want[4] = { 1, 2, 101, 102 };
        for (int i = 0; i < 4; i++)
                cr_assert_eq(order_log[i], want[i]);
        cr_assert_eq(w1.got, 77);
        cr_assert_eq(w2.woke_at, 10 * SIM_PS_PER_NS);
        cr_assert_eq(ev.n_procs, 0);
}

static void sleeper(struct ev_proc *p, void *arg)
{
        sim_ps *when = arg;
        ev_sleep(p, 3);
        ev_sleep(p, 4);
        ev_sleep_until(p, 20);
        *when = ev_now(p->ev);
}

Test(engine, sleep_accumulates)
{
        sim_ps when = 0;
        struct ev_proc p;
        ev_proc_start(&ev, &p, "s", sleeper, &when);
        cr_assert_eq(ev_run(&ev, &d), EV_DONE);
        cr_assert_eq(when, 20);
}

Test(engine, future_already_done_does_not_block)
{
        n_log = 0;
        struct ev_future f;
        ev_future_init(&f, "f");
        ev_future_complete(&ev, &f, 5);
        struct ev_proc p;
        struct waiter_arg w = { .f = &f, .id = 1 };
        ev_proc_start(&ev, &p, "p", wait_body, &w);
        cr_assert_eq(ev_run(&ev, &d), EV_DONE);
        cr_assert_eq(w.got, 5);
        cr_assert_eq(w.woke_at, 0);
}

static int cb_fired;
static void count_cb(struct ev_loop *l, struct ev_event *e)
{
        (void)e;
        cb_fired = (int)ev_now(l);
}

Test(engine, future_callback_waiter)
{
        struct ev_future f;
        ev_future_init(&f, "f");
        struct ev_event cb = { .fn = count_cb };
        ev_future_on_done(&ev, &f, &cb);
        struct completer c = { .e.fn = complete_cb, .f = &f };
        ev_schedule(&ev, &c.e, 9);
        cb_fired = -1;
        cr_assert_eq(ev_run(&ev, &d), EV_DONE);
        cr_assert_eq(cb_fired, 9);
}

/* ---- resources ----------------------------------------------------------- */

Test(engine, resource_fifo_contention)
{
        struct ev_resource r;
        ev_resource_init(&r, NULL, "link", 1, EV_WHOLE);
        sim_ps s1, s2;
        sim_ps e1 = ev_resource_reserve(&r, 0, 100, &s1);
        sim_ps e2 = ev_resource_reserve(&r, 0, 100, &s2);
        cr_assert_eq(e1, 100);
        cr_assert_eq(s2, 100);
        cr_assert_eq(e2, 200, "two requests on one server take twice as long");
        /* An idle gap is not counted as busy. */
        sim_ps e3 = ev_resource_reserve(&r, 500, 10, NULL);
        cr_assert_eq(e3, 510);
        cr_assert_eq(r.busy_ps, 210);
        ev_resource_fini(&r);

        struct ev_resource two;
        ev_resource_init(&two, NULL, "hbm", 2, EV_WHOLE);
        cr_assert_eq(ev_resource_reserve(&two, 0, 100, NULL), 100);
        cr_assert_eq(ev_resource_reserve(&two, 0, 100, NULL), 100);
        cr_assert_eq(ev_resource_reserve(&two, 0, 100, NULL), 200);
        ev_resource_fini(&two);
}

/* A request arriving at arrival for service ps on r starts at start and
 * ends at end. */
static void reserve_at(struct ev_resource *r, sim_ps arrival, sim_ps service, sim_ps start,
                       sim_ps end)
{
        sim_ps s = 0;
        cr_assert_eq(ev_resource_reserve(r, arrival, service, &s), end,
                     "%s: %llu ps at %llu: end", r->name, (unsigned long long)service,
                     (unsigned long long)arrival);
        cr_assert_eq(s, start, "%s: %llu ps at %llu: start", r->name,
                     (unsigned long long)service, (unsigned long long)arrival);
}

/* A booking in the future does not block an earlier arrival placed later:
 * it is served at its arrival, in the gap before the booking. */
Test(engine, resource_earlier_arrival_served_first)
{
        struct ev_resource r;
        ev_resource_init(&r, NULL, "engine", 1, EV_WHOLE);
        sim_ps s;
        reserve_at(&r, 1000, 100, 1000, 1100);
        reserve_at(&r, 0, 300, 0, 300); /* served at arrival, before the booking */
        /* A request that does not fit the gap [300, 1000) takes the next. */
        reserve_at(&r, 200, 800, 1100, 1900);
        /* One that fits exactly fills it: [300, 1000) is now busy. */
        reserve_at(&r, 0, 700, 300, 1000);
        cr_assert_eq(ev_resource_reserve(&r, 0, 1, &s), 1901, "no gap left before 1900");
        ev_resource_fini(&r);

        /* Two servers: the one whose gap starts first. */
        struct ev_resource two;
        ev_resource_init(&two, NULL, "slots", 2, EV_WHOLE);
        ev_resource_reserve(&two, 100, 100, NULL); /* server 0: [100, 200) */
        ev_resource_reserve(&two, 0, 500, NULL);   /* server 1: [0, 500) */
        reserve_at(&two, 0, 100, 0, 100); /* fits before server 0's booking */
        reserve_at(&two, 0, 100, 200, 300);
        ev_resource_fini(&two);
}

/* Divisible work fills every idle stretch from its arrival: the server is
 * never idle while it waits, and a booking keeps its time. */
Test(engine, resource_split_fills_gaps)
{
        struct ev_resource r;
        ev_resource_init(&r, NULL, "link", 1, EV_SPLIT);
        sim_ps s;
        ev_resource_reserve(&r, 100, 100, NULL); /* [100, 200) */
        ev_resource_reserve(&r, 300, 100, NULL); /* [300, 400) */
        /* 250 ps from 0: [0, 100) + [200, 300) + [400, 450). */
        reserve_at(&r, 0, 250, 0, 450);
        cr_assert_eq(r.busy_ps, 450);
        /* Everything up to 450 is now one busy stretch. */
        reserve_at(&r, 0, 10, 450, 460);
        /* A zero request finishes at its arrival. */
        cr_assert_eq(ev_resource_reserve(&r, 5, 0, &s), 5);
        /* Arriving while the last booking is served, with a gap before
         * it: after it, extending it; a zero request there stays put. */
        ev_resource_reserve(&r, 600, 100, NULL); /* [600, 700) */
        reserve_at(&r, 650, 20, 700, 720);
        reserve_at(&r, 650, 0, 650, 650);
        cr_assert_eq(r.servers[0].iv[r.servers[0].n - 1].start, 600);
        cr_assert_eq(r.servers[0].last_end, 720);
        /* The gap [460, 600) is still there for an earlier arrival. */
        reserve_at(&r, 470, 50, 470, 520);
        ev_resource_fini(&r);
}

/* Many bookings in the future, then the arrivals before them: each takes
 * its own gap, the list grows past its first storage, and the total busy
 * time is the sum of the services (closed form). */
Test(engine, resource_many_gaps)
{
        struct ev_resource r;
        ev_resource_init(&r, NULL, "channel", 1, EV_SPLIT);
        for (int i = 0; i < 100; i++)
                ev_resource_reserve(&r, 1000 + 20 * (sim_ps)i, 10, NULL);
        for (int i = 0; i < 100; i++) {
                sim_ps s, e = ev_resource_reserve(&r, 1010 + 20 * (sim_ps)i, 10, &s);
                cr_assert_eq(s, 1010 + 20 * (sim_ps)i);
                cr_assert_eq(e, s + 10);
        }
        /* Now [1000, 3000) is busy without a gap. */
        sim_ps s, e = ev_resource_reserve(&r, 1000, 5, &s);
        cr_assert_eq(s, 3000);
        cr_assert_eq(e, 3005);
        cr_assert_eq(r.servers[0].n - r.servers[0].head, 1, "touching intervals merge");
        ev_resource_fini(&r);
}

/* Whole requests skip gaps too short for them (the widest gap is tracked)
 * and still take one that fits. */
Test(engine, resource_whole_skips_short_gaps)
{
        struct ev_resource r;
        ev_resource_init(&r, NULL, "engine", 1, EV_WHOLE);
        for (int i = 0; i < 50; i++)
                ev_resource_reserve(&r, 20 * (sim_ps)i, 10, NULL); /* gaps of 10 */
        sim_ps s;
        reserve_at(&r, 0, 15, 990, 1005);
        cr_assert_eq(ev_resource_reserve(&r, 0, 15, &s), 1020, "after the last, touching it");
        reserve_at(&r, 35, 10, 50, 60); /* [35, 40) is too short; [50, 60) fits */
        reserve_at(&r, 0, 10, 10, 20);
        /* A gap opened far ahead is found again. */
        ev_resource_reserve(&r, 5000, 10, NULL);
        reserve_at(&r, 0, 100, 1020, 1120);
        ev_resource_fini(&r);
}

/* Intervals that ended before the loop's time are dropped, and no request
 * is placed before it. */
Test(engine, resource_floor_is_now)
{
        struct ev_resource r;
        ev_resource_init(&r, &ev, "engine", 1, EV_WHOLE);
        ev_resource_reserve(&r, 0, 100, NULL);
        ev.now = 500;
        reserve_at(&r, 0, 10, 500, 510); /* an arrival before now is taken at now */
        cr_assert_eq(r.servers[0].n - r.servers[0].head, 1);
        ev_resource_fini(&r);
}

/* The inline placement (a divisible request after every booking, or
 * while the last is served) is the out-of-line one: two twin links get the
 * same requests, one through each, and agree on every start, end and
 * interval. The requests mix appends, arrivals inside the last booking,
 * gaps before it and a moving floor. */
Test(engine, resource_inline_matches_out_of_line)
{
        struct ev_resource a, b;
        ev_resource_init(&a, &ev, "link", 1, EV_SPLIT);
        ev_resource_init(&b, &ev, "link", 1, EV_SPLIT);
        uint64_t x = 12345, appended = 0;
        for (int i = 0; i < 20000; i++) {
                x = x * 6364136223846793005ull + 1442695040888963407ull;
                if ((x >> 63) == 0)
                        ev.now += (x >> 40) % 64;
                sim_ps last = a.servers[0].last_end;
                sim_ps arrive = ev.now + (x >> 20) % 400, service = (x >> 8) % 20;
                appended += arrive >= last;
                sim_ps sa = 0, sb = 0;
                sim_ps ea = ev_resource_reserve(&a, arrive, service, &sa);
                sim_ps eb = ev__resource_reserve(&b, arrive, service, &sb);
                cr_assert_eq(ea, eb, "request %d: end %llu inline, %llu out of line", i,
                             (unsigned long long)ea, (unsigned long long)eb);
                cr_assert_eq(sa, sb, "request %d: start", i);
        }
        cr_assert_gt(appended, 1000, "the mix exercised the inline path");
        cr_assert_lt(appended, 19000, "the mix exercised the search");
        const struct ev_server *sa = &a.servers[0], *sb = &b.servers[0];
        cr_assert_eq(sa->n - sa->head, sb->n - sb->head);
        for (uint32_t k = 0; k < sa->n - sa->head; k++) {
                cr_assert_eq(sa->iv[sa->head + k].start, sb->iv[sb->head + k].start);
                cr_assert_eq(sa->iv[sa->head + k].end, sb->iv[sb->head + k].end);
        }
        cr_assert_eq(a.busy_ps, b.busy_ps);
        cr_assert_eq(a.n_requests, b.n_requests);
        ev_resource_fini(&a);
        ev_resource_fini(&b);
}

static struct ev_resource shared_res;
static void user(struct ev_proc *p, void *arg)
{
        sim_ps *end = arg;
        ev_resource_use(p, &shared_res, 50);
        *end = ev_now(p->ev);
}

Test(engine, resource_use_from_processes)
{
        ev_resource_init(&shared_res, &ev, "engine", 1, EV_WHOLE);
        struct ev_proc p[3];
        sim_ps end[3];
        for (int i = 0; i < 3; i++)
                ev_proc_start(&ev, &p[i], "user", user, &end[i]);
        cr_assert_eq(ev_run(&ev, &d), EV_DONE);
        cr_assert_eq(end[0], 50);
        cr_assert_eq(end[1], 100);
        cr_assert_eq(end[2], 150);
        ev_resource_fini(&shared_res);
}

/* ---- queues --------------------------------------------------------------- */

static struct ev_queue q;
static sim_ps put_done_at[8];
static intptr_t got_items[8];
static sim_ps got_at[8];

static void producer(struct ev_proc *p, void *arg)
{
        for (intptr_t i = 0; i < 5; i++) {
                ev_queue_put(p, &q, (void *)(i + 1));
                put_done_at[i] = ev_now(p->ev);
        }
}

static void consumer(struct ev_proc *p, void *arg)
{
        for (int i = 0; i < 5; i++) {
                ev_sleep(p, 10);
                got_items[i] = (intptr_t)ev_queue_get(p, &q);
                got_at[i] = ev_now(p->ev);
        }
}

/* Run first, then second (a producer and a consumer, in either order) over
 * q of capacity cap: the consumer must get items 1..5 in order, item i at
 * step * i. */
static void run_queue(size_t cap, ev_proc_fn first, ev_proc_fn second, sim_ps step)
{
        cr_assert_eq(ev_queue_init(&q, cap, "q"), 0);
        struct ev_proc p1, p2;
        ev_proc_start(&ev, &p1, "first", first, NULL);
        ev_proc_start(&ev, &p2, "second", second, NULL);
        cr_assert_eq(ev_run(&ev, &d), EV_DONE);
        for (int i = 0; i < 5; i++) {
                cr_assert_eq(got_items[i], i + 1);
                cr_assert_eq(got_at[i], step * (sim_ps)(i + 1));
        }
}

Test(engine, bounded_queue_blocks_and_keeps_order)
{
        run_queue(2, producer, consumer, 10);
        /* Two fit at once; the third waits for the first get at t=10. */
        cr_assert_eq(put_done_at[0], 0);
        cr_assert_eq(put_done_at[1], 0);
        cr_assert_eq(put_done_at[2], 10);
        cr_assert_eq(put_done_at[3], 20);
        ev_queue_fini(&q);
}

static void eager_consumer(struct ev_proc *p, void *arg)
{
        for (int i = 0; i < 5; i++) {
                got_items[i] = (intptr_t)ev_queue_get(p, &q);
                got_at[i] = ev_now(p->ev);
        }
}

static void slow_producer(struct ev_proc *p, void *arg)
{
        for (intptr_t i = 0; i < 5; i++) {
                ev_sleep(p, 7);
                ev_queue_put(p, &q, (void *)(i + 1));
        }
}

Test(engine, queue_get_blocks_until_put)
{
        run_queue(1, eager_consumer, slow_producer, 7);
        ev_queue_fini(&q);
}

/* ---- deadlock and budgets -------------------------------------------------- */

static void stuck(struct ev_proc *p, void *arg)
{
        ev_sleep(p, 5);
        ev_proc_note(p, "kernels/x.c:12: recv from PE 3 tag 7");
        ev_wait(p, arg);
}

static void stuck_get(struct ev_proc *p, void *arg)
{
        ev_queue_get(p, arg);
}

static bool diag_has(const struct diag *dg, const char *needle)
{
        for (const struct diag_msg *m = dg->head; m; m = m->next)
                if (strstr(m->text, needle))
                        return true;
        return false;
}

Test(engine, deadlock_names_every_waiter)
{
        struct ev_future never;
        ev_future_init(&never, "reply");
        cr_assert_eq(ev_queue_init(&q, 1, "inbox"), 0);
        static struct ev_proc a, b;  /* live until the loop's fini */
        ev_proc_start(&ev, &a, "pe0", stuck, &never);
        ev_proc_start(&ev, &b, "pe1", stuck_get, &q);
        cr_assert_eq(ev_run(&ev, &d), EV_DEADLOCK);
        cr_assert(diag_has(&d, "deadlock at 0 ns"), "got: %s", d.head ? d.head->text : "");
        cr_assert(diag_has(&d, "2 processes"));
        cr_assert(diag_has(&d, "process 'pe0' waits on future 'reply'; kernels/x.c:12: recv from PE 3 tag 7"));
        cr_assert(diag_has(&d, "process 'pe1' waits on get from empty queue 'inbox'"));
        cr_assert_eq(d.n_errors, 1);
        ev_queue_fini(&q);
}

/* A lazy note is formatted when the report reads it, from what its
 * argument holds then, and is gone once the process has resumed. */
static int lazy_calls;
static void lazy_note(const void *arg, char *buf, size_t len)
{
        lazy_calls++;
        snprintf(buf, len, "waits at step %d", *(const int *)arg);
}

static void stuck_lazy(struct ev_proc *p, void *arg)
{
        static int step;
        step = 1;
        ev_proc_note_lazy(p, lazy_note, &step);
        ev_sleep(p, 5);
        step = 2;
        ev_proc_note_lazy(p, lazy_note, &step);
        ev_wait(p, arg);
}

static void stuck_lazy_then_plain(struct ev_proc *p, void *arg)
{
        static int step = 9;
        ev_proc_note_lazy(p, lazy_note, &step);
        ev_sleep(p, 5);
        ev_wait(p, arg);
}

Test(engine, lazy_note_is_formatted_only_for_the_report)
{
        struct ev_future never;
        ev_future_init(&never, "reply");
        static struct ev_proc a, b;
        lazy_calls = 0;
        ev_proc_start(&ev, &a, "pe0", stuck_lazy, &never);
        ev_proc_start(&ev, &b, "pe1", stuck_lazy_then_plain, &never);
        cr_assert_eq(ev_run(&ev, &d), EV_DEADLOCK);
        cr_assert_eq(lazy_calls, 1, "formatted once, for the report (%d)", lazy_calls);
        cr_assert(diag_has(&d, "process 'pe0' waits on future 'reply'; waits at step 2"));
        cr_assert(diag_has(&d, "process 'pe1' waits on future 'reply'"));
        cr_assert(!diag_has(&d, "step 9"), "a note does not outlive its wait");
}

static void forever(struct ev_proc *p, void *arg)
{
        for (;;)
                ev_sleep(p, SIM_PS_PER_NS);
}

Test(engine, event_budget_stops_runaway)
{
        static struct ev_proc p;
        ev.max_events = 1000;
        ev_proc_start(&ev, &p, "spinner", forever, NULL);
        cr_assert_eq(ev_run(&ev, &d), EV_BUDGET);
        cr_assert(diag_has(&d, "event budget exceeded: 1000 events"));
        cr_assert(diag_has(&d, "process 'spinner' waits on a timer"));
}

/* The poll is called between events, every so many, and the event budget
 * it shares its check with still stops the run at its count. */
static uint64_t poll_at[64];
static int n_polls;
static void record_poll(void *ctx, const struct ev_loop *l)
{
        (void)ctx;
        if (n_polls < 64)
                poll_at[n_polls] = l->n_events;
        n_polls++;
}

Test(engine, poll_every_n_events_and_budget)
{
        static struct ev_proc p;
        ev.max_events = 1000;
        ev_set_poll(&ev, 300, record_poll, NULL);
        ev_proc_start(&ev, &p, "spinner", forever, NULL);
        cr_assert_eq(ev_run(&ev, &d), EV_BUDGET);
        cr_assert(diag_has(&d, "event budget exceeded: 1000 events"));
        cr_assert_eq(n_polls, 3, "polls at 300, 600, 900 (%d)", n_polls);
        for (int i = 0; i < 3; i++)
                cr_assert_eq(poll_at[i], 300 * (uint64_t)(i + 1));
        n_polls = 0;
        ev_set_poll(&ev, 0, NULL, NULL);
        ev.max_events = 1500;
        cr_assert_eq(ev_run(&ev, &d), EV_BUDGET, "no poll after it is taken off");
        cr_assert_eq(n_polls, 0);
}

Test(engine, time_budget_stops_runaway)
{
        static struct ev_proc p;
        ev.max_time = 50 * SIM_PS_PER_NS;
        ev_proc_start(&ev, &p, "spinner", forever, NULL);
        cr_assert_eq(ev_run(&ev, &d), EV_BUDGET);
        cr_assert(diag_has(&d, "simulated time budget exceeded: the next event is at 51.000 ns, past the budget of 50.000 ns"));
}

static void finisher(struct ev_proc *p, void *arg)
{
        ev_sleep(p, 1);
}

Test(engine, finished_processes_release_and_reuse_stacks)
{
        struct ev_proc p;
        for (int i = 0; i < 200; i++) {
                cr_assert_eq(ev_proc_start(&ev, &p, "short", finisher, NULL), 0);
                cr_assert_eq(ev_run(&ev, &d), EV_DONE);
        }
        cr_assert_eq(ev.stacks.n_live, 0);
        cr_assert_leq(ev.stacks.n_mapped, 1);
}

/* ---- direct hand-over between processes ------------------------------------- */

struct mixed {
        struct ev_proc proc;         /* the process */
        int id;                      /* its index */
};

static int mixed_log[4096][2];
static int n_mixed;
static struct ev_future gate;
static struct ev_event gate_ev;

static void note_run(int id, sim_ps t)
{
        if (n_mixed < 4096) {
                mixed_log[n_mixed][0] = id;
                mixed_log[n_mixed][1] = (int)t;
                n_mixed++;
        }
}

static void mixed_body(struct ev_proc *p, void *arg)
{
        struct mixed *m = arg;
        for (int i = 0; i < 40; i++) {
                note_run(m->id, ev_now(p->ev));
                if (i == 20 && m->id % 3 == 0)
                        ev_wait(p, &gate);   /* woken by a callback */
                else
                        ev_sleep(p, (sim_ps)((m->id * 7 + i * 3) % 4));  /* 0: same time */
        }
        note_run(100 + m->id, ev_now(p->ev));
}

static void open_gate(struct ev_loop *l, struct ev_event *e)
{
        ev_future_complete(l, &gate, 1);
}

static void noop_trace(void *ctx, sim_ps t, uint64_t seq, const struct ev_event *e)
{
}

static int run_mixed(bool traced, int (*out)[2])
{
        struct ev_loop l;
        struct diag dd;
        diag_init(&dd);
        cr_assert_eq(ev_loop_init(&l, NULL), 0);
        if (traced)
                l.trace = noop_trace; /* the loop dispatches every event itself */
        static struct mixed m[12];
        ev_future_init(&gate, "gate");
        gate_ev.fn = open_gate;
        ev_schedule(&l, &gate_ev, 50);
        n_mixed = 0;
        for (int i = 0; i < 12; i++) {
                m[i].id = i;
                cr_assert_eq(ev_proc_start(&l, &m[i].proc, "mixed", mixed_body, &m[i]), 0);
        }
        cr_assert_eq(ev_run(&l, &dd), EV_DONE);
        cr_assert_eq(l.n_procs, 0);
        memcpy(out, mixed_log, sizeof mixed_log);
        ev_loop_fini(&l);
        diag_fini(&dd);
        return n_mixed;
}

Test(engine, direct_hand_over_keeps_the_loop_order)
{
        static int a[4096][2], b[4096][2];
        int na = run_mixed(false, a);
        int nb = run_mixed(true, b);
        cr_assert_eq(na, 12 * 41);
        cr_assert_eq(na, nb);
        cr_assert_eq(memcmp(a, b, (size_t)na * sizeof a[0]), 0, "the two dispatch paths differ");
}

static unsigned n_nomem_fired;

static void nomem_fire(struct ev_loop *loop, struct ev_event *e)
{
        n_nomem_fired++;
        if (n_nomem_fired == 1)
                ev_set_nomem(loop);  /* as hw_xfer does when a route cannot be cached */
}

Test(engine, out_of_memory_is_sticky_and_stops_the_run)
{
        struct ev_event e[3] = { { .fn = nomem_fire }, { .fn = nomem_fire }, { .fn = nomem_fire } };
        for (int i = 0; i < 3; i++)
                cr_assert_eq(ev_schedule(&ev, &e[i], (sim_ps)(i + 1)), 0);
        cr_assert_eq(ev_run(&ev, &d), EV_NOMEM);
        cr_assert_eq(n_nomem_fired, 1, "the run went on after the loss");
        cr_assert_eq(ev_run(&ev, &d), EV_NOMEM, "the flag is sticky");
        cr_assert_eq(n_nomem_fired, 1);
        cr_assert_eq(d.n_errors, 2);
        cr_assert(strstr(d.head->text, "out of memory at 0 ns: an event or a route could not be stored"),
                  "%s", d.head->text);
}
