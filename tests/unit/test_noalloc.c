/* tests/unit/test_noalloc.c: the engine allocates nothing in steady state.
 *
 * This binary is linked with --wrap for malloc, calloc, realloc and mmap,
 * so every such call made by cubesim's own code is counted here. A hold
 * model and a PHOLD-style callback model run to a checkpoint (warm-up:
 * heap growth, stack mapping), then on; the counts must not move. */
#include <criterion/criterion.h>
#include <stddef.h>
#include <sys/mman.h>

#include "base/util.h"
#include "engine/ev.h"

void *__real_malloc(size_t);
void *__real_calloc(size_t, size_t);
void *__real_realloc(void *, size_t);
void *__real_mmap(void *, size_t, int, int, int, off_t);
void *__wrap_malloc(size_t);
void *__wrap_calloc(size_t, size_t);
void *__wrap_realloc(void *, size_t);
void *__wrap_mmap(void *, size_t, int, int, int, off_t);

static unsigned long n_alloc;

void *__wrap_malloc(size_t n) { n_alloc++; return __real_malloc(n); }
void *__wrap_calloc(size_t a, size_t b) { n_alloc++; return __real_calloc(a, b); }
void *__wrap_realloc(void *p, size_t n) { n_alloc++; return __real_realloc(p, n); }
void *__wrap_mmap(void *a, size_t n, int prot, int fl, int fd, off_t off)
{
        n_alloc++;
        return __real_mmap(a, n, prot, fl, fd, off);
}

struct checkpoint {
        struct ev_event e;           /* stops the loop */
};

static void stop_cb(struct ev_loop *ev, struct ev_event *e)
{
        ev_stop(ev);
}

static void hold_body(struct ev_proc *p, void *arg)
{
        uintptr_t id = (uintptr_t)arg;
        for (uint64_t i = 0; i < 2000; i++)
                ev_sleep(p, 1 + (7 * i + id) % 5);
}

/* Short-lived processes started by a callback: stacks must come from the pool. */
struct spawner {
        struct ev_event e;           /* fires every 10 ps */
        struct ev_proc procs[4];     /* reused process slots */
        int round;                   /* rounds done */
};

static void short_body(struct ev_proc *p, void *arg)
{
        ev_sleep(p, 3);
}

static void spawn_cb(struct ev_loop *ev, struct ev_event *e)
{
        struct spawner *s = container_of(e, struct spawner, e);
        if (s->round++ >= 300)
                return;
        for (int i = 0; i < 4; i++)
                cr_assert_eq(ev_proc_start(ev, &s->procs[i], "short", short_body, NULL), 0);
        ev_schedule(ev, e, 10);
}

Test(noalloc, steady_state_allocates_nothing)
{
        struct ev_loop ev;
        struct diag d;
        diag_init(&d);
        cr_assert_eq(ev_loop_init(&ev, NULL), 0);
        static struct ev_proc procs[64];
        for (uintptr_t i = 0; i < 64; i++)
                cr_assert_eq(ev_proc_start(&ev, &procs[i], "hold", hold_body, (void *)i), 0);
        struct spawner sp = { .e.fn = spawn_cb };
        ev_schedule(&ev, &sp.e, 0);
        struct checkpoint cp = { .e.fn = stop_cb };
        ev_schedule(&ev, &cp.e, 200);
        cr_assert_eq(ev_run(&ev, &d), EV_STOPPED);
        unsigned long before = n_alloc;
        uint64_t events_before = ev.n_events;
        cr_assert_eq(ev_run(&ev, &d), EV_DONE);
        cr_assert_gt(ev.n_events - events_before, 100000);
        cr_assert_eq(n_alloc, before, "%lu allocations in steady state", n_alloc - before);
        ev_loop_fini(&ev);
        diag_fini(&d);
}
