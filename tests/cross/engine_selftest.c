/* tests/cross/engine_selftest.c: a self-test of the coroutine switch that
 * needs nothing but libc, so it can be cross-compiled for aarch64 and run
 * under qemu-user, or built with -DCUBESIM_CORO_UCONTEXT to test the
 * portable fallback. It runs the cases it shares with the unit tests
 * (tests/lib/coro_cases.h): switching, callee-saved integer and FP registers
 * (probed directly in assembly), the FP environment, a double carried across
 * yields, stack alignment, nesting, many interleaved, pool reuse and the
 * guard page.
 *
 * Prints "N passed, 0 failed" and exits 0 on success, non-zero otherwise.
 * With --bench it instead prints resume+yield round trips per second. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "engine/coro.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

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

/* A failed REQUIRE ends the run: what follows it would not make sense. */
#define REQUIRE(cond, ...)                                               \
        do {                                                             \
                int n_fail_before = n_fail;                              \
                CHECK(cond, __VA_ARGS__);                                \
                if (n_fail != n_fail_before)                             \
                        exit(1);                                         \
        } while (0)

#define PROBE_ROUNDS 50                /* probe rounds per coroutine */
#include "../lib/coro_cases.h"

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
        coro_case_registers();
#endif
        coro_case_pingpong();
        coro_case_fenv();
        coro_case_alignment();
        coro_case_current();
        coro_case_many();
        coro_case_reuse();
        coro_case_guard();
        printf("engine_selftest (%s): %d passed, %d failed\n", coro_backend(),
               n_pass, n_fail);
        return n_fail ? 1 : 0;
}
