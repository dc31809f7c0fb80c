/* base/heap.h: a binary min-heap of values of one type in a growable
 * array, ordered by the caller's strict "less" (equal elements leave in
 * any order). A macro defines the two operations for one element type, as
 * BSD's <sys/tree.h> does, so each heap keeps its own type and its
 * comparison inlined, with no callback:
 *
 *     HEAP_DEFINE(changes, struct rep_counter_change, change_before, 16)
 *
 * defines
 *
 *     int changes_push(struct rep_counter_change **h, size_t *n, size_t *cap,
 *                      struct rep_counter_change x);
 *         add x to the heap h[0..*n) of *cap slots, growing it (to `first`
 *         slots at first, then doubling): 0, or -ENOMEM with the heap as
 *         it was;
 *     struct rep_counter_change changes_pop(struct rep_counter_change *h, size_t *n);
 *         remove and return the least element; *n > 0.
 *
 * (The event queue has its own 4-ary heap, tuned for its hot path.) */
#ifndef CUBESIM_BASE_HEAP_H
#define CUBESIM_BASE_HEAP_H

#include <errno.h>
#include <stddef.h>

#include "base/util.h"

#define HEAP_DEFINE(name, type, less, first)                                            \
        static inline int name##_push(type **h, size_t *n, size_t *cap, type x)         \
        {                                                                               \
                type *a = util_grow(*h, *n, cap, sizeof *a, (first));                   \
                if (!a)                                                                 \
                        return -ENOMEM;                                                 \
                *h = a;                                                                 \
                size_t i = (*n)++;                                                      \
                while (i > 0 && less(&x, &a[(i - 1) / 2])) {                            \
                        a[i] = a[(i - 1) / 2];                                          \
                        i = (i - 1) / 2;                                                \
                }                                                                       \
                a[i] = x;                                                               \
                return 0;                                                               \
        }                                                                               \
                                                                                        \
        static inline type name##_pop(type *a, size_t *n)                               \
        {                                                                               \
                type top = a[0], last = a[--*n];                                        \
                size_t i = 0;                                                           \
                for (;;) {                                                              \
                        size_t l = 2 * i + 1, m = i;                                    \
                        const type *best = &last;                                       \
                        if (l < *n && less(&a[l], best)) {                              \
                                m = l;                                                  \
                                best = &a[l];                                           \
                        }                                                               \
                        if (l + 1 < *n && less(&a[l + 1], best))                        \
                                m = l + 1;                                              \
                        if (m == i)                                                     \
                                break;                                                  \
                        a[i] = a[m];                                                    \
                        i = m;                                                          \
                }                                                                       \
                if (*n)                                                                 \
                        a[i] = last;                                                    \
                return top;                                                             \
        }

#endif
