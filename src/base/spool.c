/* base/spool.c: see spool.h. C11's threads (glibc's, on pthreads). */
#include "base/spool.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <threads.h>

struct spool_ring {
        unsigned char *mem;          /* n blocks of size bytes */
        size_t size;                 /* a block's bytes */
        unsigned n;                  /* blocks */
        size_t *len;                 /* per block: bytes written, when handed over */
        spool_fn *fn;                /* the consumer */
        void *ctx;
        /* The writer's side. */
        unsigned w;                  /* the block being written */
        unsigned long long handed;   /* blocks handed over */
        /* Shared, under lock. */
        bool threaded;               /* the consumer runs on thr */
        thrd_t thr;
        mtx_t lock;
        cnd_t full;                  /* a block was handed over, or stop */
        cnd_t done;                  /* a block was consumed */
        unsigned long long consumed; /* blocks consumed */
        bool stop;                   /* no more blocks: the consumer returns */
};

static unsigned char *block(const struct spool_ring *r, unsigned long long k)
{
        return r->mem + (size_t)(k % r->n) * r->size;
}

/* The consumer's thread: each block handed over, in order. */
static int consume(void *arg)
{
        struct spool_ring *r = arg;
        unsigned long long k = 0;
        for (;;) {
                mtx_lock(&r->lock);
                while (r->handed == k && !r->stop)
                        cnd_wait(&r->full, &r->lock);
                if (r->handed == k) {
                        mtx_unlock(&r->lock);
                        return 0;
                }
                size_t len = r->len[k % r->n];
                mtx_unlock(&r->lock);
                r->fn(r->ctx, block(r, k), len);
                mtx_lock(&r->lock);
                r->consumed = ++k;
                cnd_signal(&r->done);
                mtx_unlock(&r->lock);
        }
}

struct spool *spool_new(size_t block_bytes, unsigned n_blocks, bool thread, spool_fn *fn,
                        void *ctx)
{
        struct spool *sp = calloc(1, sizeof *sp);
        struct spool_ring *r = calloc(1, sizeof *r);
        if (n_blocks < 2)
                n_blocks = 2;
        if (!sp || !r || !(r->mem = malloc(block_bytes * n_blocks)) ||
            !(r->len = calloc(n_blocks, sizeof *r->len))) {
                if (r)
                        free(r->mem);
                free(r);
                free(sp);
                return NULL;
        }
        r->size = block_bytes;
        r->n = n_blocks;
        r->fn = fn;
        r->ctx = ctx;
        sp->ring = r;
        sp->at = r->mem;
        sp->end = r->mem + block_bytes;
        if (thread && mtx_init(&r->lock, mtx_plain) == thrd_success) {
                if (cnd_init(&r->full) == thrd_success) {
                        if (cnd_init(&r->done) == thrd_success) {
                                if (thrd_create(&r->thr, consume, r) == thrd_success) {
                                        r->threaded = true;
                                        return sp;
                                }
                                cnd_destroy(&r->done);
                        }
                        cnd_destroy(&r->full);
                }
                mtx_destroy(&r->lock);
        }
        return sp;                   /* consumed on the writer's thread */
}

/* Hand over the block being written (its bytes up to sp->at). */
static void hand_over(struct spool *sp)
{
        struct spool_ring *r = sp->ring;
        unsigned char *b = block(r, r->handed);
        size_t len = (size_t)(sp->at - b);
        if (!r->threaded) {
                if (len)
                        r->fn(r->ctx, b, len);
                r->handed++;
                return;
        }
        /* The writer's stores past the cache (x86's non-temporal ones),
         * which a release alone does not order, before the hand-over. */
        atomic_thread_fence(memory_order_seq_cst);
        mtx_lock(&r->lock);
        r->len[r->handed % r->n] = len;
        r->handed++;
        cnd_signal(&r->full);
        /* The next block is free once the one n back is consumed. */
        while (r->handed - r->consumed >= r->n)
                cnd_wait(&r->done, &r->lock);
        mtx_unlock(&r->lock);
}

void spool_turn(struct spool *sp)
{
        struct spool_ring *r = sp->ring;
        hand_over(sp);
        sp->at = block(r, r->handed);
        sp->end = sp->at + r->size;
}

void spool_drain(struct spool *sp)
{
        struct spool_ring *r = sp->ring;
        if (sp->at != block(r, r->handed))
                spool_turn(sp);
        if (!r->threaded)
                return;
        mtx_lock(&r->lock);
        while (r->consumed != r->handed)
                cnd_wait(&r->done, &r->lock);
        mtx_unlock(&r->lock);
}

bool spool_threaded(const struct spool *sp)
{
        return sp->ring->threaded;
}

void spool_free(struct spool *sp)
{
        if (!sp)
                return;
        struct spool_ring *r = sp->ring;
        spool_drain(sp);
        if (r->threaded) {
                mtx_lock(&r->lock);
                r->stop = true;
                cnd_signal(&r->full);
                mtx_unlock(&r->lock);
                thrd_join(r->thr, NULL);
                cnd_destroy(&r->done);
                cnd_destroy(&r->full);
                mtx_destroy(&r->lock);
        }
        free(r->len);
        free(r->mem);
        free(r);
        free(sp);
}
