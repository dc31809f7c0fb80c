/* tests/cross/engine_selftest.c: a self-test of the coroutine switch that
 * needs nothing but libc, so it can be cross-compiled for aarch64 and run
 * under qemu-user, or built with -DCUBESIM_CORO_UCONTEXT to test the
 * portable fallback. Covers switching, callee-saved integer and FP registers
 * (probed directly in assembly), the FP environment, a double carried across
 * yields, stack alignment, nesting, pool reuse and the guard page.
 *
 * Prints "N passed, 0 failed" and exits 0 on success, non-zero otherwise.
 * With --bench it instead prints resume+yield round trips per second. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "engine/coro.h"

#include <fenv.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int n_pass;                   /* checks that held */
static int n_fail;                   /* checks that did not */

#define CHECK(cond, ...)                                                 \
        do {                                                             \
                if (cond) {                                              \
                        n_pass++;                                        \
                } else {                                                 \
                        n_fail++;                                        \
                        fprintf(stderr, "%s:%d: FAIL: %s: ", __FILE__,   \
                                __LINE__, #cond);                        \
                        fprintf(stderr, __VA_ARGS__);                    \
                        fputc('\n', stderr);                             \
                }                                                        \
        } while (0)

#define PROBE_ROUNDS 50                /* probe rounds per coroutine */
#include "../lib/coro_probe.h"

#ifdef HAVE_PROBE

static void test_registers(void)
{
        struct coro_pool pool;
        struct probe_job job = { 0 };
        uint64_t out[PROBE_N];
        int n_bad = 0;

        coro_pool_init(&pool, 0);
        job.co = coro_create(&pool, probe_body, &job, "probe");
        for (int i = 0; !coro_done(job.co); i++) {
                uint64_t base = 0x5a5a5a5a00000000u + (uint64_t)i * 0x100;
                coro_probe_call(do_resume, job.co, out, base);
                n_bad += probe_bad(out, base);
        }
        CHECK(n_bad == 0, "%d registers of main clobbered", n_bad);
        CHECK(job.n_bad == 0, "%d registers of the coroutine clobbered", job.n_bad);
        coro_release(&pool, job.co);
        coro_pool_fini(&pool);
}
#endif

/* ---- ping-pong: values and a double across yields ------------------ */

struct pingpong {
        struct coro *co;             /* the coroutine */
        volatile long shared;        /* written alternately by both sides */
        double acc;                  /* the coroutine's sum, reported at end */
        long n_wrong;                /* times shared was not what was expected */
};

static void pingpong_body(void *arg)
{
        struct pingpong *pp = arg;
        volatile double seed = 0.1;
        double acc = 0.0;            /* lives in a register or the stack */
        unsigned long a = 3, b = 5, c = 7;  /* likely callee-saved registers */

        for (long i = 0; i < 1000; i++) {
                acc += seed * (double)i;
                a = a * 31 + (unsigned long)i;
                b ^= a;
                c += b;
                if (pp->shared != 2 * i)
                        pp->n_wrong++;
                pp->shared = 2 * i + 1;
                coro_yield(pp->co);
        }
        pp->acc = acc + (double)(a + b + c) * 0.0;
        /* Recompute without yields; the two must agree bit for bit. */
        unsigned long a2 = 3, b2 = 5, c2 = 7;
        for (long i = 0; i < 1000; i++) {
                a2 = a2 * 31 + (unsigned long)i;
                b2 ^= a2;
                c2 += b2;
        }
        if (a != a2 || b != b2 || c != c2)
                pp->n_wrong += 1000000;
}

static void test_pingpong(void)
{
        struct coro_pool pool;
        struct pingpong pp = { 0 };
        volatile double seed = 0.25;
        double acc = 0.0, want_main = 0.0, want_co = 0.0;
        long n = 0;

        coro_pool_init(&pool, 0);
        pp.co = coro_create(&pool, pingpong_body, &pp, "pingpong");
        CHECK(pp.co != NULL, "coro_create failed");
        while (!coro_done(pp.co)) {
                acc += seed * (double)n;
                coro_resume(pp.co);
                if (!coro_done(pp.co)) {
                        if (pp.shared != 2 * n + 1)
                                pp.n_wrong++;
                        pp.shared = 2 * n + 2;
                }
                n++;
        }
        for (long i = 0; i < n; i++)
                want_main += 0.25 * (double)i;
        for (long i = 0; i < 1000; i++)
                want_co += 0.1 * (double)i;
        CHECK(n == 1001, "resumed %ld times, expected 1001", n);
        CHECK(pp.n_wrong == 0, "%ld handoffs wrong", pp.n_wrong);
        CHECK(acc == want_main, "main's double %.17g, expected %.17g", acc, want_main);
        CHECK(pp.acc == want_co, "coroutine's double %.17g, expected %.17g", pp.acc, want_co);
        coro_release(&pool, pp.co);
        coro_pool_fini(&pool);
        CHECK(pool.n_mapped == 0, "%zu stacks left mapped", pool.n_mapped);
}

/* ---- the floating-point environment is per context ----------------- */

struct fenv_job {
        struct coro *co;             /* the coroutine */
        int mode_after_yield;        /* fegetround() seen after resuming */
        int live_after_yield;        /* live_rounding() seen after resuming */
};

static volatile double one = 1.0, three = 3.0;  /* opaque to the compiler */

/* The rounding the SSE/FP unit really applies (fegetround() may only read
 * the x87 control word): -1 down, 0 nearest, +1 up. */
static int live_rounding(void)
{
        const double nearest = 0.3333333333333333;  /* below 1/3 */
        double third = one / three;          /* inexact */
        double minus = -one / three;

        if (third > nearest)
                return 1;
        if (minus < -nearest)
                return -1;
        return 0;
}

static void fenv_body(void *arg)
{
        struct fenv_job *job = arg;

        fesetround(FE_UPWARD);
        coro_yield(job->co);
        job->mode_after_yield = fegetround();
        job->live_after_yield = live_rounding();
        fesetround(FE_TONEAREST);
}

static void test_fenv(void)
{
        struct coro_pool pool;
        struct fenv_job job = { 0 };

        coro_pool_init(&pool, 0);
        job.co = coro_create(&pool, fenv_body, &job, "fenv");
        fesetround(FE_TONEAREST);
        CHECK(live_rounding() == 0, "rounding to nearest not detected");
        coro_resume(job.co);
        CHECK(fegetround() == FE_TONEAREST, "coroutine's rounding mode leaked to main");
        CHECK(live_rounding() == 0, "coroutine's rounding leaked to main's FP unit");
        fesetround(FE_DOWNWARD);
        CHECK(live_rounding() == -1, "rounding down not detected");
        coro_resume(job.co);
        CHECK(job.mode_after_yield == FE_UPWARD, "coroutine lost its rounding mode");
        CHECK(job.live_after_yield == 1, "coroutine's FP unit lost its rounding");
        CHECK(fegetround() == FE_DOWNWARD, "main lost its rounding mode");
        CHECK(live_rounding() == -1, "main's FP unit lost its rounding");
        fesetround(FE_TONEAREST);
        coro_release(&pool, job.co);
        coro_pool_fini(&pool);
}

/* ---- alignment ------------------------------------------------------ */

typedef float v4f __attribute__((vector_size(16)));

struct align_job {
        int n_bad;                   /* misaligned addresses seen */
        float sum;                   /* keeps the vector work alive */
};

/* The compiler assumes the ABI alignment; hide the addresses from it so the
 * check looks at where things really are. */
static __attribute__((noinline)) int misaligned(const volatile void *p)
{
        uintptr_t a = (uintptr_t)p;

        __asm__ volatile("" : "+r"(a));
        return (a % 16) != 0;
}

static __attribute__((noinline)) void aligned_work(struct align_job *job)
{
        __attribute__((aligned(16))) volatile char buf[16];
        volatile long double ld = 1.5L;
        volatile v4f v = { 1, 2, 3, 4 };
        v4f w = v * v;

        buf[0] = 1;
        job->n_bad += misaligned(buf);
        job->n_bad += misaligned(&ld);
        job->n_bad += misaligned(&v);
        job->n_bad += misaligned(__builtin_frame_address(0));
        job->sum += w[0] + w[3] + (float)ld + buf[0];
}

static void align_body(void *arg)
{
        aligned_work(arg);
        coro_yield(coro_current());
        aligned_work(arg);
}

static void test_alignment(void)
{
        struct coro_pool pool;
        struct align_job job = { 0 };
        struct coro *co;

        coro_pool_init(&pool, 0);
        co = coro_create(&pool, align_body, &job, "align");
        coro_resume(co);
        coro_resume(co);
        CHECK(coro_done(co), "alignment coroutine did not finish");
        CHECK(job.n_bad == 0, "%d misaligned addresses in the coroutine", job.n_bad);
        CHECK(job.sum == 2 * (1 + 16 + 1.5f + 1), "vector work gave %g", (double)job.sum);
        coro_release(&pool, co);
        coro_pool_fini(&pool);
}

/* ---- current, nesting ---------------------------------------------- */

struct nest_job {
        struct coro *outer;          /* resumes inner */
        struct coro *inner;          /* yields twice */
        int n_bad;                   /* wrong coro_current() results */
};

static void inner_body(void *arg)
{
        struct nest_job *job = arg;

        job->n_bad += coro_current() != job->inner;
        coro_yield(job->inner);
        job->n_bad += coro_current() != job->inner;
}

static void outer_body(void *arg)
{
        struct nest_job *job = arg;

        job->n_bad += coro_current() != job->outer;
        coro_resume(job->inner);
        job->n_bad += coro_current() != job->outer;
        coro_yield(job->outer);
        coro_resume(job->inner);
        job->n_bad += coro_current() != job->outer;
        job->n_bad += !coro_done(job->inner);
}

static void test_current(void)
{
        struct coro_pool pool;
        struct nest_job job = { 0 };

        coro_pool_init(&pool, 0);
        CHECK(coro_current() == NULL, "coro_current() in main is not NULL");
        job.outer = coro_create(&pool, outer_body, &job, "outer");
        job.inner = coro_create(&pool, inner_body, &job, "inner");
        coro_resume(job.outer);
        CHECK(coro_current() == NULL, "coro_current() after yield is not NULL");
        coro_resume(job.outer);
        CHECK(coro_done(job.outer), "outer did not finish");
        CHECK(coro_current() == NULL, "coro_current() after finish is not NULL");
        CHECK(job.n_bad == 0, "%d wrong coro_current() inside", job.n_bad);
        coro_release(&pool, job.inner);
        coro_release(&pool, job.outer);
        coro_pool_fini(&pool);
}

/* ---- many interleaved ---------------------------------------------- */

enum { N_MANY = 100, STEPS = 20 };

struct many_job {
        struct coro *co;             /* this one */
        int id;                      /* 0..N_MANY-1 */
        int *log;                    /* shared: ids in the order they ran */
        int *n_log;                  /* entries in log */
};

static void many_body(void *arg)
{
        struct many_job *job = arg;

        for (int s = 0; s < STEPS; s++) {
                job->log[(*job->n_log)++] = job->id * 1000 + s;
                coro_yield(job->co);
        }
}

static void test_many(void)
{
        static int log[N_MANY * STEPS];
        struct coro_pool pool;
        struct many_job jobs[N_MANY];
        int n_log = 0, n_bad = 0, n_running = N_MANY;

        coro_pool_init(&pool, 32 * 1024);
        for (int i = 0; i < N_MANY; i++) {
                jobs[i] = (struct many_job){ .id = i, .log = log, .n_log = &n_log };
                jobs[i].co = coro_create(&pool, many_body, &jobs[i], "many");
        }
        while (n_running) {
                n_running = 0;
                for (int i = 0; i < N_MANY; i++) {
                        if (!coro_done(jobs[i].co)) {
                                coro_resume(jobs[i].co);
                                n_running++;
                        }
                }
        }
        CHECK(n_log == N_MANY * STEPS, "%d log entries", n_log);
        for (int k = 0; k < n_log; k++)
                n_bad += log[k] != (k % N_MANY) * 1000 + k / N_MANY;
        CHECK(n_bad == 0, "%d entries out of round-robin order", n_bad);
        CHECK(pool.n_live == N_MANY && pool.n_mapped == N_MANY,
              "live %zu mapped %zu", pool.n_live, pool.n_mapped);
        for (int i = 0; i < N_MANY; i++)
                coro_release(&pool, jobs[i].co);
        CHECK(pool.n_live == 0, "live %zu after release", pool.n_live);
        coro_pool_fini(&pool);
        CHECK(pool.n_mapped == 0, "%zu stacks left mapped", pool.n_mapped);
}

/* ---- pool reuse ----------------------------------------------------- */

static void count_body(void *arg)
{
        ++*(int *)arg;
        coro_yield(coro_current());
        ++*(int *)arg;
}

static void test_reuse(void)
{
        struct coro_pool pool;
        struct coro *first = NULL;
        int count = 0, n_other = 0;

        coro_pool_init(&pool, 0);
        for (int i = 0; i < 1000; i++) {
                struct coro *co = coro_create(&pool, count_body, &count, "reuse");
                if (!first)
                        first = co;
                n_other += co != first;
                coro_resume(co);
                coro_resume(co);
                coro_release(&pool, co);
        }
        CHECK(count == 2000, "count %d", count);
        CHECK(pool.n_mapped == 1, "%zu stacks mapped for one at a time", pool.n_mapped);
        CHECK(n_other == 0, "%d creations did not reuse the pooled one", n_other);
        coro_pool_fini(&pool);
        CHECK(pool.n_mapped == 0, "%zu stacks left mapped", pool.n_mapped);
}

/* ---- guard page ----------------------------------------------------- */

static volatile int depth_limit = 1 << 30;  /* never reached: 256 GiB */

static __attribute__((noinline)) int recurse(int depth)
{
        volatile char pad[256];

        pad[0] = (char)depth;
        pad[255] = (char)depth;
        if (depth >= depth_limit)
                return pad[0];
        return recurse(depth + 1) + pad[0] + pad[255];   /* not a tail call */
}

static void overflow_body(void *arg)
{
        *(int *)arg = recurse(0);
}

/* Run fn in a child with stderr in a pipe; return its wait status and what
 * it wrote. */
static int run_child(void (*fn)(void), char *err, size_t cap)
{
        int fds[2], status = 0;
        size_t n = 0;
        ssize_t r;

        if (pipe(fds) != 0)
                return -1;
        fflush(NULL);
        pid_t pid = fork();
        if (pid == 0) {
                close(fds[0]);
                dup2(fds[1], STDERR_FILENO);
                fn();
                _exit(0);
        }
        close(fds[1]);
        while (n + 1 < cap && (r = read(fds[0], err + n, cap - 1 - n)) > 0)
                n += (size_t)r;
        err[n] = 0;
        close(fds[0]);
        waitpid(pid, &status, 0);
        return status;
}

static void overflow_child(void)
{
        struct coro_pool pool;
        int result = 0;

        coro_pool_init(&pool, 64 * 1024);
        coro_resume(coro_create(&pool, overflow_body, &result, "deep_recursion"));
}

static void test_guard(void)
{
        char err[4096];
        int status = run_child(overflow_child, err, sizeof err);

        CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 1,
              "child status 0x%x, expected exit 1", status);
        CHECK(strstr(err, "cubesim: error: stack overflow in process "
                          "'deep_recursion' (stack 64 KiB); raise the stack size\n"),
              "stderr was: %s", err);
}

/* ---- benchmark ------------------------------------------------------ */

static void bench_body(void *arg)
{
        struct coro *co = coro_current();

        for (;;) {
                ++*(long *)arg;
                coro_yield(co);
        }
}

static double now_s(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int bench(void)
{
        struct coro_pool pool;
        long count = 0, n = 1000;
        double t0, dt;
        struct coro *co;

        coro_pool_init(&pool, 0);
        co = coro_create(&pool, bench_body, &count, "bench");
        for (;;) {
                t0 = now_s();
                for (long i = 0; i < n; i++)
                        coro_resume(co);
                dt = now_s() - t0;
                if (dt > 0.5)
                        break;
                n *= 4;
        }
        printf("%s: %ld round trips in %.3f s: %.1f M/s, %.1f ns each\n",
               coro_backend(), n, dt, (double)n / dt * 1e-6, dt / (double)n * 1e9);
        return 0;                    /* the coroutine never finishes: leaked */
}

int main(int argc, char **argv)
{
        if (argc > 1 && strcmp(argv[1], "--bench") == 0)
                return bench();
#ifdef HAVE_PROBE
        test_registers();
#endif
        test_pingpong();
        test_fenv();
        test_alignment();
        test_current();
        test_many();
        test_reuse();
        test_guard();
        printf("engine_selftest (%s): %d passed, %d failed\n", coro_backend(),
               n_pass, n_fail);
        return n_fail ? 1 : 0;
}
