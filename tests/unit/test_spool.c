/* tests/unit/test_spool.c: records written to a spool (base/spool.h) are
 * consumed whole, once each, in the order written, on a thread of the
 * consumer's own or on the writer's, through many turns of its ring of
 * blocks (the writer waiting for the consumer when the ring is full). */
#include <criterion/criterion.h>

#include <stdint.h>
#include <string.h>
#include <threads.h>

#include "base/spool.h"

/* What the consumer saw. */
struct seen {
        uint64_t next;               /* the number the next record must carry */
        uint64_t bad;                /* records out of order, or torn */
        uint64_t calls;              /* blocks consumed */
        size_t max_len;              /* the largest block */
        unsigned slow;               /* sleep this many microseconds a block (a slow consumer) */
};

/* A record: its number, then its length - 8 bytes of its number's low byte. */
static void consume(void *ctx, const unsigned char *buf, size_t len)
{
        struct seen *s = ctx;
        s->calls++;
        if (len > s->max_len)
                s->max_len = len;
        for (size_t at = 0; at < len;) {
                uint64_t n;
                memcpy(&n, buf + at, 8);
                size_t size = 8 + 8 * (n % 5);
                if (n != s->next)
                        s->bad++;
                for (size_t k = 8; k < size; k++)
                        if (buf[at + k] != (unsigned char)n)
                                s->bad++;
                s->next = n + 1;
                at += size;
        }
        if (s->slow)
                thrd_sleep(&(struct timespec){ .tv_nsec = 1000L * s->slow }, NULL);
}

static void write_records(struct spool *sp, uint64_t from, uint64_t to)
{
        for (uint64_t n = from; n < to; n++) {
                size_t size = 8 + 8 * (n % 5);
                unsigned char *p = spool_put(sp, size);
                memcpy(p, &n, 8);
                memset(p + 8, (unsigned char)n, size - 8);
        }
}

static void round_trip(bool thread, unsigned slow)
{
        struct seen s = { .slow = slow };
        /* 256-byte blocks, 3 of them: thousands of turns of the ring. */
        struct spool *sp = spool_new(256, 3, thread, consume, &s);
        cr_assert(sp);
        cr_assert_eq(spool_threaded(sp), thread);
        write_records(sp, 0, 5000);
        spool_drain(sp);
        cr_assert_eq(s.next, 5000, "consumed %llu of 5000", (unsigned long long)s.next);
        cr_assert_eq(s.bad, 0);
        cr_assert_leq(s.max_len, 256);
        cr_assert_gt(s.calls, 100, "%llu blocks", (unsigned long long)s.calls);
        /* Writing goes on after a drain; freeing consumes the rest. */
        write_records(sp, 5000, 5003);
        spool_free(sp);
        cr_assert_eq(s.next, 5003);
        cr_assert_eq(s.bad, 0);
}

Test(spool, records_in_order_on_a_thread_of_their_own)
{
        round_trip(true, 0);
}

Test(spool, records_in_order_when_the_writer_waits_for_a_slow_consumer)
{
        round_trip(true, 20);
}

Test(spool, records_in_order_on_the_writers_thread)
{
        round_trip(false, 0);
}

Test(spool, a_drain_of_nothing_and_a_free_of_nothing)
{
        struct seen s = { 0 };
        struct spool *sp = spool_new(64, 2, true, consume, &s);
        cr_assert(sp);
        spool_drain(sp);
        spool_drain(sp);
        spool_free(sp);
        cr_assert_eq(s.calls, 0);
        spool_free(NULL);
}
