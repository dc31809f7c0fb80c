/* tests/unit/test_noalloc.c: the engine, and the kernel layer on top of
 * it, allocate nothing in steady state.
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
#include "fixture.h"

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
        struct diag dg;
        diag_init(&dg);
        cr_assert_eq(ev_loop_init(&ev, NULL), 0);
        static struct ev_proc procs[64];
        for (uintptr_t i = 0; i < 64; i++)
                cr_assert_eq(ev_proc_start(&ev, &procs[i], "hold", hold_body, (void *)i), 0);
        struct spawner sp = { .e.fn = spawn_cb };
        ev_schedule(&ev, &sp.e, 0);
        struct checkpoint cp = { .e.fn = stop_cb };
        ev_schedule(&ev, &cp.e, 200);
        cr_assert_eq(ev_run(&ev, &dg), EV_STOPPED);
        unsigned long before = n_alloc;
        uint64_t events_before = ev.n_events;
        cr_assert_eq(ev_run(&ev, &dg), EV_DONE);
        cr_assert_gt(ev.n_events - events_before, 100000);
        cr_assert_eq(n_alloc, before, "%lu allocations in steady state", n_alloc - before);
        ev_loop_fini(&ev);
        diag_fini(&dg);
}

/* The kernel layer: tensors, scratch scopes, DMA, math, GEMM, composites
 * (a GEMM with an epilogue, softmax_merge) and send/recv in a loop on two PEs that exchange a tile every iteration (so
 * neither runs far ahead). Tensor structs come from the PE's arena, reset
 * by each scope; messages from the run's pool. Rank 0 reads the count
 * after a warm-up and at the end. */
enum { WARM_ITERS = 50, ITERS = 400 };
static unsigned long tl_before, tl_after;

static void k_steady(tl_ctx *tl, const void *a)
{
        if (tl->rank > 1)
                return;
        tl_tensor *src = tl_alloc(tl, TL_TCM, TL_BF16, 2, ((int64_t[]){ 64, 64 }));
        /* The running state of a softmax_merge, in persistent TCM. */
        tl_tensor *m = tl_alloc(tl, TL_TCM, TL_FP32, 2, ((int64_t[]){ 64, 1 }));
        tl_tensor *l = tl_alloc(tl, TL_TCM, TL_FP32, 2, ((int64_t[]){ 64, 1 }));
        tl_tensor *o = tl_alloc(tl, TL_TCM, TL_FP32, 2, ((int64_t[]){ 64, 64 }));
        for (int i = 0; i < ITERS; i++) {
                if (tl->rank == 0 && i == WARM_ITERS)
                        tl_before = n_alloc;
                tl_scratch_scope_begin(tl);
                tl_tensor *x = tl_load(tl, src);
                tl_tensor *y = tl_exp(tl, tl_mul(tl, x, x));
                tl_tensor *z = tl_dot(tl, x, y, true);
                tl_tensor *mx = tl_rowmax(tl, z);
                /* Composites: a GEMM with an epilogue, and the recipe
                 * (their feeds and DMA records come from pools). */
                tl_tensor *g = tl_alloc(tl, TL_SCRATCH, TL_FP32, 2, ((int64_t[]){ 64, 64 }));
                tl_epilogue relu = { .op = TL_RELU, .scope = TL_SCOPE_OUTPUT_TILE };
                tl_wait(tl, tl_composite(tl, &(tl_composite_desc){ .op = TL_GEMM, .a = x, .b = x,
                                                                   .out = g, .epilogue = &relu,
                                                                   .n_epilogue = 1 }));
                tl_wait(tl, tl_softmax_merge(tl, g, x, m, l, o));
                tl_send(tl, 1 - (int)tl->rank, mx, i);
                tl_tensor *r = tl_recv(tl, 1 - (int)tl->rank, i);
                tl_wait_tensor(tl, r);
                tl_scratch_scope_end(tl);
        }
        if (tl->rank == 0)
                tl_after = n_alloc;
}

Test(noalloc, kernel_layer_steady_state_allocates_nothing, .init = fixture_small,
     .fini = fixture_fini)
{
        static struct tl_kernel k = { .name = "steady", .fn = k_steady };
        cr_assert_eq(fixture_run(&k, NULL, NULL, 0), 0);
        cr_assert_gt(tl_before, 0);
        cr_assert_eq(tl_after, tl_before, "%lu allocations in steady state",
                     tl_after - tl_before);
}
