/* base/spool.h: records written by one thread and consumed, in the order
 * written, by a function on a thread of its own.
 *
 * The writer fills a block of a fixed ring of blocks; a full block goes
 * to the consumer's thread and the writer goes on in the next one,
 * waiting only when every block is still being consumed. Without a thread
 * (none asked for, or none could be started) each block is consumed on
 * the writer's thread when it is full: the same calls in the same order,
 * so what the consumer builds is the same either way.
 *
 * The critical path's log (report/critpath.c, docs/adr/0051) uses it: the
 * simulation writes what it did and the log is built beside it. */
#ifndef CUBESIM_BASE_SPOOL_H
#define CUBESIM_BASE_SPOOL_H

#include <stdbool.h>
#include <stddef.h>

/* Consume len bytes of records at buf (whole records, as written). */
typedef void spool_fn(void *ctx, const unsigned char *buf, size_t len);

struct spool_ring;

struct spool {
        unsigned char *at;           /* where the next record goes */
        unsigned char *end;          /* the end of the block being written */
        struct spool_ring *ring;     /* the blocks and the consumer */
};

/* A spool of n_blocks (at least 2) blocks of block_bytes, consumed by
 * fn(ctx, ...) on a thread of its own when thread is true and one can be
 * started (else on the writer's). NULL when out of memory. */
struct spool *spool_new(size_t block_bytes, unsigned n_blocks, bool thread, spool_fn *fn,
                        void *ctx);

/* Hand the block being written to the consumer and start the next (the
 * writer's slow path: spool_put's). */
void spool_turn(struct spool *sp);

/* Room for a record of n bytes (n at most block_bytes), to be written
 * before the next spool_put or spool_drain: its address. */
static inline void *spool_put(struct spool *sp, size_t n)
{
        if (__builtin_expect((size_t)(sp->end - sp->at) < n, 0))
                spool_turn(sp);
        void *p = sp->at;
        sp->at += n;
        return p;
}

/* Consume everything written, and wait until it is: after it, what fn
 * built may be read by the writer. */
void spool_drain(struct spool *sp);

/* Whether fn runs on a thread of its own. */
bool spool_threaded(const struct spool *sp);

/* Drain, stop the thread, free. NULL: nothing. */
void spool_free(struct spool *sp);

#endif
