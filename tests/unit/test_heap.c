/* tests/unit/test_heap.c: HEAP_DEFINE (base/heap.h) against sorting: the
 * pops come out in order, pushes and pops interleaved, duplicates kept. */
#include <criterion/criterion.h>

#include <stdint.h>
#include <stdlib.h>

#include "base/heap.h"

struct item {
        uint32_t key;                /* the order */
        uint32_t tag;                /* which push it was */
};

static bool item_less(const struct item *a, const struct item *b)
{
        return a->key < b->key;
}

HEAP_DEFINE(items, struct item, item_less, 2)

static uint32_t next(uint32_t *s)
{
        *s ^= *s << 13;
        *s ^= *s >> 17;
        *s ^= *s << 5;
        return *s;
}

Test(heap, pops_in_order_and_keeps_every_item)
{
        struct item *h = NULL;
        size_t n = 0, cap = 0;
        uint32_t seed = 12345, count[64] = { 0 };
        for (uint32_t i = 0; i < 1000; i++) {
                struct item x = { next(&seed) % 64, i };
                cr_assert_eq(items_push(&h, &n, &cap, x), 0);
                count[x.key]++;
        }
        cr_assert_eq(n, 1000);
        cr_assert_geq(cap, n);
        uint32_t last = 0;
        while (n) {
                struct item x = items_pop(h, &n);
                cr_assert_geq(x.key, last, "popped %u after %u", x.key, last);
                last = x.key;
                count[x.key]--;
        }
        for (int k = 0; k < 64; k++)
                cr_assert_eq(count[k], 0, "key %d", k);
        free(h);
}

Test(heap, interleaved_pushes_and_pops_give_the_least)
{
        struct item *h = NULL;
        size_t n = 0, cap = 0;
        uint32_t seed = 777;
        uint32_t live[512];
        size_t n_live = 0;
        for (int step = 0; step < 5000; step++) {
                if (n_live < 512 && (n_live == 0 || next(&seed) % 3 != 0)) {
                        uint32_t k = next(&seed) % 1000;
                        cr_assert_eq(items_push(&h, &n, &cap, (struct item){ k, 0 }), 0);
                        live[n_live++] = k;
                } else {
                        size_t least = 0;
                        for (size_t i = 1; i < n_live; i++)
                                if (live[i] < live[least])
                                        least = i;
                        struct item x = items_pop(h, &n);
                        cr_assert_eq(x.key, live[least]);
                        live[least] = live[--n_live];
                }
                cr_assert_eq(n, n_live);
        }
        free(h);
}
