/* tests/unit/test_coro.c: the coroutine module (engine/coro.h).
 *
 * Each test is built to fail if its feature breaks: callee-saved registers
 * are loaded with known values by an assembly probe around the switch;
 * alignment is checked on addresses hidden from the optimiser; the FP
 * rounding mode is observed by doing arithmetic, not only by fegetround();
 * the guard page is hit for real in a forked child. The round-trip benchmark
 * runs only with CUBESIM_CORO_BENCH=1 and never fails on timing. */
#include <criterion/criterion.h>

#include <fenv.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "engine/coro.h"
#define PROBE_ROUNDS 100                /* probe rounds per coroutine */
#include "../lib/coro_probe.h"

#ifdef HAVE_PROBE

Test(coro, callee_saved_registers_survive_switches)
{
        struct coro_pool pool;
        struct probe_job job = { 0 };
        uint64_t out[PROBE_N];
        int n_bad = 0, n = 0;

        coro_pool_init(&pool, 0);
        job.co = coro_create(&pool, probe_body, &job, "probe");
        cr_assert_not_null(job.co);
        while (!coro_done(job.co)) {
                uint64_t base = 0x5a5a5a5a00000000u + (uint64_t)n++ * 0x100;
                coro_probe_call(do_resume, job.co, out, base);
                n_bad += probe_bad(out, base);
        }
        cr_expect_eq(n, PROBE_ROUNDS + 1);
        cr_expect_eq(n_bad, 0, "%d of main's callee-saved registers clobbered", n_bad);
        cr_expect_eq(job.n_bad, 0, "%d of the coroutine's callee-saved registers clobbered",
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

Test(coro, ping_pong_preserves_values_and_doubles)
{
        struct coro_pool pool;
        struct pingpong pp = { 0 };
        double acc = 0.0, want_main = 0.0, want_co = 0.0;
        unsigned long a = 3, b = 5, c = 7;
        long n = 0;

        coro_pool_init(&pool, 0);
        pp.co = coro_create(&pool, pingpong_body, &pp, "pingpong");
        cr_assert_not_null(pp.co);
        cr_expect(!coro_done(pp.co));
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
        cr_expect_eq(n, 1001);
        cr_expect_eq(pp.n_wrong, 0);
        cr_expect(acc == want_main, "main's double %.17g, expected %.17g", acc, want_main);
        cr_expect(pp.acc == want_co, "coroutine's double %.17g, expected %.17g",
                  pp.acc, want_co);
        cr_expect_eq(pp.mix, a ^ (b << 1) ^ (c << 2));
        coro_release(&pool, pp.co);
        coro_pool_fini(&pool);
        cr_expect_eq(pool.n_mapped, 0);
}

/* ---- floating-point environment ------------------------------------ */

static volatile double one = 1.0, three = 3.0;

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

Test(coro, rounding_mode_is_per_context)
{
        struct coro_pool pool;
        struct fenv_job job = { 0 };

        coro_pool_init(&pool, 0);
        job.co = coro_create(&pool, fenv_body, &job, "fenv");
        cr_assert_eq(live_rounding(), 0);
        coro_resume(job.co);
        cr_expect_eq(fegetround(), FE_TONEAREST, "coroutine's rounding leaked to main");
        cr_expect_eq(live_rounding(), 0, "coroutine's rounding leaked to main's FP unit");
        fesetround(FE_DOWNWARD);
        cr_assert_eq(live_rounding(), -1);
        coro_resume(job.co);
        cr_expect_eq(job.mode, FE_UPWARD);
        cr_expect_eq(job.live, 1, "coroutine's FP unit lost its rounding mode");
        cr_expect_eq(fegetround(), FE_DOWNWARD);
        cr_expect_eq(live_rounding(), -1, "main's FP unit lost its rounding mode");
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

Test(coro, stack_is_abi_aligned)
{
        struct coro_pool pool;
        struct align_job job = { 0 };
        struct coro *co;

        coro_pool_init(&pool, 0);
        co = coro_create(&pool, align_body, &job, "align");
        coro_resume(co);
        coro_resume(co);
        cr_assert(coro_done(co));
        cr_expect_eq(job.n_checked, 8);
        cr_expect_eq(job.n_bad, 0, "%d misaligned addresses in the coroutine", job.n_bad);
        cr_expect(job.sum == 2 * (1 + 16 + 1.5f + 1));
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

Test(coro, current_tracks_the_running_coroutine)
{
        struct coro_pool pool;
        struct nest_job job = { 0 };

        coro_pool_init(&pool, 0);
        cr_expect_null(coro_current());
        job.outer = coro_create(&pool, outer_body, &job, "outer");
        job.inner = coro_create(&pool, inner_body, &job, "inner");
        cr_expect_null(coro_current());
        coro_resume(job.outer);
        cr_expect_null(coro_current());
        cr_expect(!coro_done(job.outer));
        cr_expect(!coro_done(job.inner));
        coro_resume(job.outer);
        cr_expect_null(coro_current());
        cr_expect(coro_done(job.outer));
        cr_expect(coro_done(job.inner));
        cr_expect_eq(job.seen[0], job.outer);
        cr_expect_eq(job.seen[1], job.inner);
        cr_expect_eq(job.seen[2], job.outer);
        cr_expect_eq(job.seen[3], job.outer);
        cr_expect_eq(job.seen[4], job.inner);
        cr_expect_eq(job.seen[5], job.outer);
        coro_release(&pool, job.inner);
        coro_release(&pool, job.outer);
        coro_pool_fini(&pool);
}

/* ---- longjmp within a coroutine ------------------------------------
 * Under AddressSanitizer, longjmp makes ASan unpoison "the current stack";
 * if it was not told about the switch (coro.c's fiber annotations) it
 * misjudges the stack's bounds and reports a false stack-buffer-overflow. */

struct jump_job {
        jmp_buf env;                 /* target inside the coroutine */
        volatile bool armed;         /* jump at the bottom (always set) */
        int n_jumps;                 /* longjmps that landed */
        int big_sum;                 /* result of touch_big_frame() */
};

static __attribute__((noinline)) void jump_from_depth(struct jump_job *job, int n)
{
        volatile char buf[64];

        buf[0] = (char)n;
        if (n > 0)
                jump_from_depth(job, n - 1);
        else if (job->armed)
                longjmp(job->env, 1);
        buf[1] = buf[0];
}

/* A frame laid out unlike jump_from_depth's, over the stack the jump
 * abandoned: stale redzones there would be reported. */
static __attribute__((noinline)) int touch_big_frame(void)
{
        volatile char big[2048];
        int sum = 0;

        for (size_t i = 0; i < sizeof big; i++)
                big[i] = (char)i;
        for (size_t i = 0; i < sizeof big; i += 64)
                sum += big[i];
        return sum;
}

static void jump_body(void *arg)
{
        struct jump_job *job = arg;

        for (int i = 0; i < 3; i++) {
                if (setjmp(job->env) == 0)
                        jump_from_depth(job, 10 + i);
                else
                        job->n_jumps++;
                coro_yield(coro_current());
                job->big_sum = touch_big_frame();
        }
}

Test(coro, longjmp_inside_a_coroutine)
{
        struct coro_pool pool;
        struct jump_job job = { .armed = true };
        struct coro *co;
        int n = 0;

        coro_pool_init(&pool, 0);
        co = coro_create(&pool, jump_body, &job, "jump");
        while (!coro_done(co) && n < 10) {
                coro_resume(co);
                n++;
        }
        cr_expect_eq(n, 4);
        cr_expect_eq(job.n_jumps, 3);
        cr_expect_eq(job.big_sum, touch_big_frame());
        coro_release(&pool, co);
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

Test(coro, many_coroutines_interleave)
{
        static int log[N_MANY * STEPS];
        static struct many_job jobs[N_MANY];
        struct coro_pool pool;
        int n_log = 0, n_bad = 0, n_running = N_MANY, n_rounds = 0;

        coro_pool_init(&pool, 32 * 1024);
        for (int i = 0; i < N_MANY; i++) {
                jobs[i] = (struct many_job){ .id = i, .log = log, .n_log = &n_log };
                jobs[i].co = coro_create(&pool, many_body, &jobs[i], "many");
                cr_assert_not_null(jobs[i].co);
        }
        cr_expect_eq(pool.n_live, N_MANY);
        cr_expect_eq(pool.n_mapped, N_MANY);
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
        cr_expect_eq(n_rounds, STEPS + 2);  /* last round finishes, then empty */
        cr_assert_eq(n_log, N_MANY * STEPS);
        for (int k = 0; k < n_log; k++)
                n_bad += log[k] != (k % N_MANY) * 1000 + k / N_MANY;
        cr_expect_eq(n_bad, 0, "%d log entries out of round-robin order", n_bad);
        for (int i = 0; i < N_MANY; i++) {
                cr_expect_eq(jobs[i].local_sum, (long)i * STEPS * (STEPS - 1) / 2);
                coro_release(&pool, jobs[i].co);
        }
        cr_expect_eq(pool.n_live, 0);
        cr_expect_eq(pool.n_mapped, N_MANY);
        coro_pool_fini(&pool);
        cr_expect_eq(pool.n_mapped, 0);
}

/* ---- pool reuse ----------------------------------------------------- */

static void count_body(void *arg)
{
        ++*(int *)arg;
        coro_yield(coro_current());
        ++*(int *)arg;
}

Test(coro, finished_stacks_are_reused)
{
        struct coro_pool pool;
        struct coro *first = NULL;
        int count = 0, n_other = 0;

        coro_pool_init(&pool, 0);
        for (int i = 0; i < 1000; i++) {
                struct coro *co = coro_create(&pool, count_body, &count, "reuse");
                cr_assert_not_null(co);
                if (!first)
                        first = co;
                n_other += co != first;
                coro_resume(co);
                coro_resume(co);
                cr_assert(coro_done(co));
                coro_release(&pool, co);
                cr_assert_eq(pool.n_mapped, 1, "cycle %d: %zu stacks mapped", i,
                             pool.n_mapped);
        }
        cr_expect_eq(count, 2000);
        cr_expect_eq(n_other, 0, "%d creations did not reuse the pooled coroutine", n_other);
        cr_expect_eq(pool.n_live, 0);
        coro_pool_fini(&pool);
        cr_expect_eq(pool.n_mapped, 0);
}

Test(coro, never_started_coroutine_can_be_released)
{
        struct coro_pool pool;
        int count = 0;

        coro_pool_init(&pool, 0);
        struct coro *a = coro_create(&pool, count_body, &count, "a");
        coro_release(&pool, a);
        struct coro *b = coro_create(&pool, count_body, &count, "b");
        cr_expect_eq(a, b);
        coro_resume(b);
        coro_resume(b);
        cr_expect_eq(count, 2);
        coro_release(&pool, b);
        coro_pool_fini(&pool);
        cr_expect_eq(pool.n_mapped, 0);
}

Test(coro, stack_size_is_rounded_to_pages)
{
        struct coro_pool pool;
        size_t page = (size_t)sysconf(_SC_PAGESIZE);

        coro_pool_init(&pool, 0);
        cr_expect_eq(pool.stack_bytes, 256 * 1024);
        coro_pool_init(&pool, 100 * 1024 + 1);
        cr_expect_eq(pool.stack_bytes % page, 0);
        cr_expect_geq(pool.stack_bytes, 100 * 1024 + 1);
        cr_expect_lt(pool.stack_bytes, 100 * 1024 + 1 + page);
}

Test(coro, backend_matches_the_build)
{
#if defined(CUBESIM_CORO_UCONTEXT) || !(defined(__x86_64__) || defined(__aarch64__))
        cr_expect_str_eq(coro_backend(), "ucontext");
#elif defined(__x86_64__)
        cr_expect_str_eq(coro_backend(), "x86-64");
#else
        cr_expect_str_eq(coro_backend(), "aarch64");
#endif
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

/* A wild read: into a fresh PROT_NONE page, not any coroutine's guard. */
static void wild_read_body(void *arg)
{
        volatile int *p = mmap(NULL, 4096, PROT_NONE,
                               MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

        if (p != MAP_FAILED)
                *(int *)arg = *p;
}

/* Run fn in a forked child with stderr going to a pipe; return the wait
 * status and what it wrote. */
static int run_child(void (*fn)(void), char *err, size_t cap)
{
        int fds[2], status = 0;
        size_t n = 0;
        ssize_t r;
        pid_t pid;

        cr_assert_eq(pipe(fds), 0);
        fflush(NULL);
        pid = fork();
        cr_assert_geq(pid, 0);
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
        cr_assert_eq(waitpid(pid, &status, 0), pid);
        return status;
}

static void overflow_child(void)
{
        struct coro_pool pool;
        int result = 0;

        coro_pool_init(&pool, 64 * 1024);
        coro_resume(coro_create(&pool, overflow_body, &result, "deep_recursion"));
}

static void wild_read_child(void)
{
        struct coro_pool pool;
        int result = 0;

        coro_pool_init(&pool, 64 * 1024);
        coro_resume(coro_create(&pool, wild_read_body, &result, "wild_read"));
}

Test(coro, overflow_hits_guard_page_and_is_reported)
{
        char err[8192];
        int status = run_child(overflow_child, err, sizeof err);

        cr_expect(WIFEXITED(status) && WEXITSTATUS(status) == 1,
                  "child status 0x%x, expected exit 1; stderr: %s", status, err);
        cr_expect(strstr(err, "cubesim: error: stack overflow in process "
                              "'deep_recursion' (stack 64 KiB); raise the stack size\n"),
                  "stderr was: %s", err);
}

Test(coro, ordinary_segfault_is_not_reported_as_overflow)
{
        char err[8192];
        int status = run_child(wild_read_child, err, sizeof err);

        cr_expect(!strstr(err, "stack overflow in process"), "stderr was: %s", err);
#ifdef CUBESIM_SANITIZED
        /* AddressSanitizer's handler, to which ours passes the signal,
         * reports and exits (status 1 by default). */
        cr_expect(!(WIFEXITED(status) && WEXITSTATUS(status) == 0),
                  "child exited cleanly after a wild read");
        cr_expect(strstr(err, "AddressSanitizer: SEGV"), "stderr was: %s", err);
#else
        cr_expect(WIFSIGNALED(status) && WTERMSIG(status) == SIGSEGV,
                  "child status 0x%x, expected death by SIGSEGV", status);
#endif
}

/* Kernels without guard regions (and qemu-user) get mprotect guards:
 * an overflow is reported the same way. */
Test(coro, overflow_is_reported_with_mprotect_guards)
{
        char err[8192];

        setenv("CUBESIM_TEST_NO_GUARD_REGIONS", "1", 1);
        cr_assert(!coro_guard_regions());
        int status = run_child(overflow_child, err, sizeof err);
        cr_expect(WIFEXITED(status) && WEXITSTATUS(status) == 1,
                  "child status 0x%x, expected exit 1; stderr: %s", status, err);
        cr_expect(strstr(err, "cubesim: error: stack overflow in process 'deep_recursion'"),
                  "stderr was: %s", err);
}

static size_t count_mappings(void)
{
        FILE *f = fopen("/proc/self/maps", "r");
        size_t n = 0;
        int c;

        cr_assert(f);
        while ((c = fgetc(f)) != EOF)
                n += c == '\n';
        fclose(f);
        return n;
}

/* 128 stacks (two chunks) add the mappings coro_mappings announces, which
 * the host capacity check counts against vm.max_map_count: 2 with guard
 * regions, 256 with mprotect guards. */
static void check_mappings_of_128_stacks(void)
{
        struct coro_pool pool;
        struct coro *co[128];

        coro_pool_init(&pool, 16 * 1024);
        co[0] = coro_create(&pool, overflow_body, NULL, "first"); /* probes, installs handlers */
        size_t before = count_mappings();
        for (int i = 1; i < 128; i++)
                co[i] = coro_create(&pool, overflow_body, NULL, "many");
        size_t added = count_mappings() - before;
        /* The first stack's chunk was there before: its 63 other slots
         * split it further under mprotect, and one chunk more is mapped. */
        size_t want = coro_mappings(128) - coro_mappings(1);
        cr_expect(added <= want + 1 && added + 1 >= want,
                  "128 stacks added %zu mappings; coro_mappings says %zu", added, want);
        for (int i = 0; i < 128; i++)
                coro_release(&pool, co[i]);
        coro_pool_fini(&pool);
}

Test(coro, stacks_take_the_mappings_counted_with_guard_regions)
{
        if (!coro_guard_regions())
                cr_skip_test("this kernel has no guard regions");
        cr_expect_eq(coro_mappings(128), 2);
        check_mappings_of_128_stacks();
}

Test(coro, stacks_take_the_mappings_counted_with_mprotect_guards)
{
        setenv("CUBESIM_TEST_NO_GUARD_REGIONS", "1", 1);
        cr_expect_eq(coro_mappings(128), 256);
        check_mappings_of_128_stacks();
}

/* ---- benchmark (not a pass/fail test) ------------------------------- */

static void bench_body(void *arg)
{
        struct coro *co = coro_current();

        for (long i = 0; i < *(long *)arg; i++)
                coro_yield(co);
}

Test(coro, bench_round_trips)
{
        struct coro_pool pool;
        struct timespec t0, t1;
        long n = 5 * 1000 * 1000;

        if (!getenv("CUBESIM_CORO_BENCH"))
                cr_skip_test("benchmark: set CUBESIM_CORO_BENCH=1 to run");
        coro_pool_init(&pool, 0);
        struct coro *co = coro_create(&pool, bench_body, &n, "bench");
        clock_gettime(CLOCK_MONOTONIC, &t0);
        for (long i = 0; i < n; i++)
                coro_resume(co);
        clock_gettime(CLOCK_MONOTONIC, &t1);
        coro_resume(co);
        cr_assert(coro_done(co));
        double dt = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9;
        cr_log_warn("coro %s: %.1f M resume+yield round trips/s (%.1f ns each)",
                    coro_backend(), (double)n / dt * 1e-6, dt / (double)n * 1e9);
        coro_release(&pool, co);
        coro_pool_fini(&pool);
}
