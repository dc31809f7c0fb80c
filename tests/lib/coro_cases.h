/* tests/lib/coro_cases.h: the coroutine cases that both the unit tests
 * (tests/unit/test_coro.c, under Criterion) and the libc-only self-test
 * (tests/cross/engine_selftest.c, cross-built for aarch64 and built with
 * the ucontext fallback) run, each a function coro_case_NAME(void).
 *
 * Each case is built to fail if its feature breaks: callee-saved registers
 * are loaded with known values by an assembly probe around the switch
 * (coro_probe.h); alignment is checked on addresses hidden from the
 * optimiser; the FP rounding mode is observed by doing arithmetic, not only
 * by fegetround(); the guard page is hit for real in a forked child.
 *
 * The includer defines, before including it once:
 *   CHECK(cond, fmt, ...)    a check that, failing, reports and goes on;
 *   REQUIRE(cond, fmt, ...)  one that, failing, ends the case;
 *   PROBE_ROUNDS             probe rounds per coroutine (coro_probe.h). */
#ifndef CUBESIM_TESTS_CORO_CASES_H
#define CUBESIM_TESTS_CORO_CASES_H

#include <fenv.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "engine/coro.h"
#include "coro_probe.h"

#ifdef HAVE_PROBE
static void coro_case_registers(void)
{
        struct coro_pool pool;
        struct probe_job job = { 0 };
        uint64_t out[PROBE_N];
        int n_bad = 0, n = 0;

        coro_pool_init(&pool, 0);
        job.co = coro_create(&pool, probe_body, &job, "probe");
        REQUIRE(job.co != NULL, "coro_create failed");
        while (!coro_done(job.co)) {
                uint64_t base = 0x5a5a5a5a00000000u + (uint64_t)n++ * 0x100;
                coro_probe_call(do_resume, job.co, out, base);
                n_bad += probe_bad(out, base);
        }
        CHECK(n == PROBE_ROUNDS + 1, "%d resumes, expected %d", n, PROBE_ROUNDS + 1);
        CHECK(n_bad == 0, "%d of main's callee-saved registers clobbered", n_bad);
        CHECK(job.n_bad == 0, "%d of the coroutine's callee-saved registers clobbered",
              job.n_bad);
        coro_release(&pool, job.co);
        coro_pool_fini(&pool);
}
#endif

/* ---- ping-pong: integers and a double carried across yields -------- */

struct pingpong {
        struct coro *co;             /* the coroutine */
        volatile long shared;        /* written alternately by both sides */
        double acc;                  /* the coroutine's sum, reported at end */
        unsigned long mix;           /* its integer state, reported at end */
        long n_wrong;                /* handoffs that saw the wrong value */
};

static volatile double seed_co = 0.1;    /* opaque to the optimiser */
static volatile double seed_main = 0.25;

static void pingpong_body(void *arg)
{
        struct pingpong *pp = arg;
        double acc = 0.0;
        unsigned long a = 3, b = 5, c = 7;   /* live across every yield */

        for (long i = 0; i < 1000; i++) {
                acc += seed_co * (double)i;
                a = a * 31 + (unsigned long)i;
                b ^= a;
                c += b;
                if (pp->shared != 2 * i)
                        pp->n_wrong++;
                pp->shared = 2 * i + 1;
                coro_yield(pp->co);
        }
        pp->acc = acc;
        pp->mix = a ^ (b << 1) ^ (c << 2);
}

static void coro_case_pingpong(void)
{
        struct coro_pool pool;
        struct pingpong pp = { 0 };
        double acc = 0.0, want_main = 0.0, want_co = 0.0;
        unsigned long a = 3, b = 5, c = 7;
        long n = 0;

        coro_pool_init(&pool, 0);
        pp.co = coro_create(&pool, pingpong_body, &pp, "pingpong");
        REQUIRE(pp.co != NULL, "coro_create failed");
        CHECK(!coro_done(pp.co), "done before its first resume");
        while (!coro_done(pp.co)) {
                acc += seed_main * (double)n;
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
        for (long i = 0; i < 1000; i++) {
                want_co += 0.1 * (double)i;
                a = a * 31 + (unsigned long)i;
                b ^= a;
                c += b;
        }
        CHECK(n == 1001, "resumed %ld times, expected 1001", n);
        CHECK(pp.n_wrong == 0, "%ld handoffs wrong", pp.n_wrong);
        CHECK(acc == want_main, "main's double %.17g, expected %.17g", acc, want_main);
        CHECK(pp.acc == want_co, "coroutine's double %.17g, expected %.17g", pp.acc, want_co);
        CHECK(pp.mix == (a ^ (b << 1) ^ (c << 2)), "the coroutine's integers changed");
        coro_release(&pool, pp.co);
        coro_pool_fini(&pool);
        CHECK(pool.n_mapped == 0, "%zu stacks left mapped", pool.n_mapped);
}

/* ---- floating-point environment ------------------------------------ */

static volatile double one = 1.0, three = 3.0;  /* opaque to the optimiser */

/* The rounding the FP unit really applies (fegetround() may read only the
 * x87 control word, not MXCSR): -1 down, 0 nearest, +1 up. */
static int live_rounding(void)
{
        const double nearest = 0.3333333333333333;  /* below 1/3 */
        double third = one / three;
        double minus = -one / three;

        if (third > nearest)
                return 1;
        if (minus < -nearest)
                return -1;
        return 0;
}

struct fenv_job {
        struct coro *co;             /* the coroutine */
        int mode;                    /* fegetround() after its resume */
        int live;                    /* live_rounding() after its resume */
};

static void fenv_body(void *arg)
{
        struct fenv_job *job = arg;

        fesetround(FE_UPWARD);
        coro_yield(job->co);
        job->mode = fegetround();
        job->live = live_rounding();
        fesetround(FE_TONEAREST);
}

static void coro_case_fenv(void)
{
        struct coro_pool pool;
        struct fenv_job job = { 0 };

        coro_pool_init(&pool, 0);
        job.co = coro_create(&pool, fenv_body, &job, "fenv");
        fesetround(FE_TONEAREST);
        REQUIRE(live_rounding() == 0, "rounding to nearest not detected");
        coro_resume(job.co);
        CHECK(fegetround() == FE_TONEAREST, "coroutine's rounding mode leaked to main");
        CHECK(live_rounding() == 0, "coroutine's rounding leaked to main's FP unit");
        fesetround(FE_DOWNWARD);
        REQUIRE(live_rounding() == -1, "rounding down not detected");
        coro_resume(job.co);
        CHECK(job.mode == FE_UPWARD, "coroutine lost its rounding mode");
        CHECK(job.live == 1, "coroutine's FP unit lost its rounding mode");
        CHECK(fegetround() == FE_DOWNWARD, "main lost its rounding mode");
        CHECK(live_rounding() == -1, "main's FP unit lost its rounding mode");
        fesetround(FE_TONEAREST);
        coro_release(&pool, job.co);
        coro_pool_fini(&pool);
}

/* ---- alignment ------------------------------------------------------ */

typedef float v4f __attribute__((vector_size(16)));

struct align_job {
        int n_bad;                   /* misaligned addresses seen */
        int n_checked;               /* addresses checked */
        float sum;                   /* keeps the vector work alive */
};

/* The compiler assumes ABI alignment and would fold a direct check to true;
 * launder the address so the test sees where it really is. */
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
        volatile v4f v = { 1, 2, 3, 4 };     /* aligned vector load/store */
        v4f w = v * v;

        buf[0] = 1;
        job->n_bad += misaligned(buf);
        job->n_bad += misaligned(&ld);
        job->n_bad += misaligned(&v);
        job->n_bad += misaligned(__builtin_frame_address(0));
        job->n_checked += 4;
        job->sum += w[0] + w[3] + (float)ld + buf[0];
}

static void align_body(void *arg)
{
        aligned_work(arg);
        coro_yield(coro_current());
        aligned_work(arg);
}

static void coro_case_alignment(void)
{
        struct coro_pool pool;
        struct align_job job = { 0 };
        struct coro *co;

        coro_pool_init(&pool, 0);
        co = coro_create(&pool, align_body, &job, "align");
        coro_resume(co);
        coro_resume(co);
        REQUIRE(coro_done(co), "alignment coroutine did not finish");
        CHECK(job.n_checked == 8, "%d addresses checked, expected 8", job.n_checked);
        CHECK(job.n_bad == 0, "%d misaligned addresses in the coroutine", job.n_bad);
        CHECK(job.sum == 2 * (1 + 16 + 1.5f + 1), "vector work gave %g", (double)job.sum);
        coro_release(&pool, co);
        coro_pool_fini(&pool);
}

/* ---- coro_current, nesting ----------------------------------------- */

struct nest_job {
        struct coro *outer;          /* resumes inner */
        struct coro *inner;          /* yields once */
        struct coro *seen[6];        /* coro_current() at each checkpoint */
};

static void inner_body(void *arg)
{
        struct nest_job *job = arg;

        job->seen[1] = coro_current();
        coro_yield(job->inner);
        job->seen[4] = coro_current();
}

static void outer_body(void *arg)
{
        struct nest_job *job = arg;

        job->seen[0] = coro_current();
        coro_resume(job->inner);
        job->seen[2] = coro_current();
        coro_yield(job->outer);
        job->seen[3] = coro_current();
        coro_resume(job->inner);
        job->seen[5] = coro_current();
}

static void coro_case_current(void)
{
        struct coro_pool pool;
        struct nest_job job = { 0 };

        coro_pool_init(&pool, 0);
        CHECK(coro_current() == NULL, "coro_current() in main is not NULL");
        job.outer = coro_create(&pool, outer_body, &job, "outer");
        job.inner = coro_create(&pool, inner_body, &job, "inner");
        CHECK(coro_current() == NULL, "coro_current() after create is not NULL");
        coro_resume(job.outer);
        CHECK(coro_current() == NULL, "coro_current() after yield is not NULL");
        CHECK(!coro_done(job.outer) && !coro_done(job.inner), "finished after one resume");
        coro_resume(job.outer);
        CHECK(coro_current() == NULL, "coro_current() after finish is not NULL");
        CHECK(coro_done(job.outer) && coro_done(job.inner), "not finished after two resumes");
        struct coro *want[6] = { job.outer, job.inner, job.outer, job.outer, job.inner, job.outer };
        for (int k = 0; k < 6; k++)
                CHECK(job.seen[k] == want[k], "checkpoint %d saw coro_current() %p, not %p", k,
                      (void *)job.seen[k], (void *)want[k]);
        coro_release(&pool, job.inner);
        coro_release(&pool, job.outer);
        coro_pool_fini(&pool);
}

/* ---- many interleaved ---------------------------------------------- */

enum { N_MANY = 200, STEPS = 25 };

struct many_job {
        struct coro *co;             /* this one */
        int id;                      /* 0..N_MANY-1 */
        int *log;                    /* shared: id*1000+step in run order */
        int *n_log;                  /* entries in log */
        long local_sum;              /* a stack-local result, reported at end */
};

static void many_body(void *arg)
{
        struct many_job *job = arg;
        long sum = 0;                /* on this coroutine's own stack */

        for (int s = 0; s < STEPS; s++) {
                sum += job->id * s;
                job->log[(*job->n_log)++] = job->id * 1000 + s;
                coro_yield(job->co);
        }
        job->local_sum = sum;
}

static void coro_case_many(void)
{
        static int log[N_MANY * STEPS];
        static struct many_job jobs[N_MANY];
        struct coro_pool pool;
        int n_log = 0, n_bad = 0, n_running = N_MANY, n_rounds = 0;

        coro_pool_init(&pool, 32 * 1024);
        for (int i = 0; i < N_MANY; i++) {
                jobs[i] = (struct many_job){ .id = i, .log = log, .n_log = &n_log };
                jobs[i].co = coro_create(&pool, many_body, &jobs[i], "many");
                REQUIRE(jobs[i].co != NULL, "coro_create %d failed", i);
        }
        CHECK(pool.n_live == N_MANY && pool.n_mapped == N_MANY, "live %zu mapped %zu",
              pool.n_live, pool.n_mapped);
        while (n_running) {
                n_running = 0;
                for (int i = 0; i < N_MANY; i++) {
                        if (!coro_done(jobs[i].co)) {
                                coro_resume(jobs[i].co);
                                n_running++;
                        }
                }
                n_rounds++;
        }
        /* The last round finishes them, then one finds none running. */
        CHECK(n_rounds == STEPS + 2, "%d rounds, expected %d", n_rounds, STEPS + 2);
        REQUIRE(n_log == N_MANY * STEPS, "%d log entries", n_log);
        for (int k = 0; k < n_log; k++)
                n_bad += log[k] != (k % N_MANY) * 1000 + k / N_MANY;
        CHECK(n_bad == 0, "%d log entries out of round-robin order", n_bad);
        for (int i = 0; i < N_MANY; i++) {
                CHECK(jobs[i].local_sum == (long)i * STEPS * (STEPS - 1) / 2,
                      "coroutine %d summed %ld", i, jobs[i].local_sum);
                coro_release(&pool, jobs[i].co);
        }
        CHECK(pool.n_live == 0 && pool.n_mapped == N_MANY, "after release: live %zu mapped %zu",
              pool.n_live, pool.n_mapped);
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

static void coro_case_reuse(void)
{
        struct coro_pool pool;
        struct coro *first = NULL;
        int count = 0, n_other = 0;

        coro_pool_init(&pool, 0);
        for (int i = 0; i < 1000; i++) {
                struct coro *co = coro_create(&pool, count_body, &count, "reuse");
                REQUIRE(co != NULL, "coro_create failed in cycle %d", i);
                if (!first)
                        first = co;
                n_other += co != first;
                coro_resume(co);
                coro_resume(co);
                REQUIRE(coro_done(co), "cycle %d: not finished", i);
                coro_release(&pool, co);
                REQUIRE(pool.n_mapped == 1, "cycle %d: %zu stacks mapped", i, pool.n_mapped);
        }
        CHECK(count == 2000, "count %d, expected 2000", count);
        CHECK(n_other == 0, "%d creations did not reuse the pooled coroutine", n_other);
        CHECK(pool.n_live == 0, "live %zu", pool.n_live);
        coro_pool_fini(&pool);
        CHECK(pool.n_mapped == 0, "%zu stacks left mapped", pool.n_mapped);
}

/* ---- guard page ----------------------------------------------------- */

static volatile int depth_limit = 1 << 30;   /* never reached */

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

/* Run fn in a forked child with stderr going to a pipe; return the wait
 * status and what it wrote. */
static int run_child(void (*fn)(void), char *err, size_t cap)
{
        int fds[2], status = 0;
        size_t n = 0;
        ssize_t r;
        pid_t pid;

        REQUIRE(pipe(fds) == 0, "pipe failed");
        fflush(NULL);
        pid = fork();
        REQUIRE(pid >= 0, "fork failed");
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
        REQUIRE(waitpid(pid, &status, 0) == pid, "waitpid failed");
        return status;
}

static void overflow_child(void)
{
        struct coro_pool pool;
        int result = 0;

        coro_pool_init(&pool, 64 * 1024);
        coro_resume(coro_create(&pool, overflow_body, &result, "deep_recursion"));
}

static void coro_case_guard(void)
{
        char err[8192];
        int status = run_child(overflow_child, err, sizeof err);

        CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 1,
              "child status 0x%x, expected exit 1; stderr: %s", status, err);
        CHECK(strstr(err, "cubesim: error: stack overflow in process "
                          "'deep_recursion' (stack 64 KiB); raise the stack size\n"),
              "stderr was: %s", err);
}

#endif
