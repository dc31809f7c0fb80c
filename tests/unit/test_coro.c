/* tests/unit/test_coro.c: the coroutine module (engine/coro.h).
 *
 * The cases it shares with the libc-only self-test (registers, values and
 * doubles across yields, the FP environment, alignment, nesting, many
 * interleaved, pool reuse, the guard page) are in tests/lib/coro_cases.h;
 * here are those that need Criterion or only run natively. The round-trip
 * benchmark runs only with CUBESIM_CORO_BENCH=1 and never fails on timing. */
#include <criterion/criterion.h>

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

#define CHECK(cond, ...) cr_expect(cond, __VA_ARGS__)
#define REQUIRE(cond, ...) cr_assert(cond, __VA_ARGS__)
#define PROBE_ROUNDS 100                /* probe rounds per coroutine */
#include "../lib/coro_cases.h"

#ifdef HAVE_PROBE
Test(coro, callee_saved_registers_survive_switches) { coro_case_registers(); }
#endif
Test(coro, ping_pong_preserves_values_and_doubles) { coro_case_pingpong(); }
Test(coro, rounding_mode_is_per_context) { coro_case_fenv(); }
Test(coro, stack_is_abi_aligned) { coro_case_alignment(); }
Test(coro, current_tracks_the_running_coroutine) { coro_case_current(); }
Test(coro, many_coroutines_interleave) { coro_case_many(); }
Test(coro, finished_stacks_are_reused) { coro_case_reuse(); }
Test(coro, overflow_hits_guard_page_and_is_reported) { coro_case_guard(); }

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

/* ---- guard page: what only the unit tests cover -------------------- */

/* A wild read: into a fresh PROT_NONE page, not any coroutine's guard. */
static void wild_read_body(void *arg)
{
        volatile int *p = mmap(NULL, 4096, PROT_NONE,
                               MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

        if (p != MAP_FAILED)
                *(int *)arg = *p;
}

static void wild_read_child(void)
{
        struct coro_pool pool;
        int result = 0;

        coro_pool_init(&pool, 64 * 1024);
        coro_resume(coro_create(&pool, wild_read_body, &result, "wild_read"));
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
