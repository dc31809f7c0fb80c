/* base/util.h: small helpers used everywhere: container_of, array length,
 * the project's own invariant check (on in debug and test builds). */
#ifndef CUBESIM_BASE_UTIL_H
#define CUBESIM_BASE_UTIL_H

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define container_of(ptr, type, member) \
        ((type *)(void *)((char *)(ptr) - offsetof(type, member)))

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

#define likely(x) __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)

/* Seconds on the monotonic clock, for wall-time figures and progress. */
static inline double util_now_s(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* The array p (n elements of elem bytes used of *cap) with room for one
 * more: p itself, or p grown by doubling (from first) with *cap updated;
 * NULL if out of memory (p still valid, *cap unchanged). */
static inline void *util_grow(void *p, size_t n, size_t *cap, size_t elem, size_t first)
{
        if (n < *cap)
                return p;
        size_t c = *cap ? 2 * *cap : first;
        void *q = realloc(p, c * elem);
        if (q)
                *cap = c;
        return q;
}

/* An invariant of cubesim's own code (never a check of user input). */
#ifdef CUBESIM_ASSERTS
#define CS_ASSERT(cond)                                                        \
        do {                                                                   \
                if (unlikely(!(cond))) {                                       \
                        fprintf(stderr, "%s:%d: internal error: %s\n",         \
                                __FILE__, __LINE__, #cond);                    \
                        abort();                                               \
                }                                                              \
        } while (0)
#else
#define CS_ASSERT(cond) ((void)0)
#endif

#endif
