/* tl/thread.c: kernel threads on a PE's issuing cores, the NoC a thread's
 * transfers take, and circular buffers between threads (include/cubesim/
 * tl.h; docs/adr/0025). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "tl/tensor.h"
#include "tl/tl_int.h"

/* A circular buffer: pages in TCM, made by one thread of the PE and used
 * by its others. */
struct tl_cb {
        uint32_t magic;              /* TL_CB_MAGIC */
        const struct hw_pe *pe;      /* the PE whose TCM holds it */
        struct tl_cb *next;          /* the PE's next (older) buffer */
        tl_tensor *page[TL_CB_MAX_PAGES]; /* the pages, kernel-level TCM tensors */
        int n_pages;                 /* entries of page */
        int head;                    /* the front page (the oldest pushed) */
        int n_pushed;                /* pushed and not popped */
        bool reserved;               /* the back page is reserved, not yet pushed */
        bool armed;                  /* a thread waits on changed */
        struct ev_future changed;    /* completed at the next push or pop */
        char name[32];               /* the kernel's name for it */
        char front_note[96];         /* deadlock notes of its waits */
        char back_note[96];
};

#define TL_CB_MAGIC 0xcb0ffe11u

/* ---- ends and draining ------------------------------------------------------ */

void tl__drain(tl_ctx *tl, const char *what, const char *file, int line)
{
        tl__wait_inflight(tl, 0, what);
        if (tl->busy_until > ev_now(&tl->sim->ev)) {
                ev_proc_note(tl->proc, "%s: outstanding DMA", what);
                sim_ps since = ev_now(&tl->sim->ev);
                ev_sleep_until(tl->proc, tl->busy_until);
                tl__waited(tl, since, what, file ? file : tl->proc->at_file,
                           file ? line : tl->proc->at_line);
        }
}

void tl__kernel_end(tl_ctx *tl)
{
        if (tl->n_scopes) {
                const struct tl_scope *open_scope = &tl->scopes[tl->n_scopes - 1];
                tl__fail(tl, open_scope->file, open_scope->line, "kernel end",
                         "%d scratch scope%s still open at the kernel's end; this "
                         "tl_scratch_scope_begin has no tl_scratch_scope_end", tl->n_scopes,
                         tl->n_scopes == 1 ? "" : "s");
        }
        /* The kernel is done when its stores and sends have left. */
        tl__drain(tl, "outstanding ops at the kernel's end", NULL, 0);
}

/* ---- threads ------------------------------------------------------------------ */

static void thread_main(struct ev_proc *p, void *arg)
{
        struct tl_thread *th = arg;
        tl_ctx *tl = &th->ctx, *first = tl->first;
        (void)p;
        th->fn(tl, th->arg);
        tl__kernel_end(tl);
        if (--first->threads_live == 0 && first->threads_waited) {
                first->threads_waited = false;
                ev_future_complete(&tl->sim->ev, &first->threads_done, 0);
        }
}

void tl__join_threads(tl_ctx *tl)
{
        if (!tl->threads_live)
                return;
        ev_future_init(&tl->threads_done, "kernel threads");
        tl->threads_waited = true;
        ev_proc_note(tl->proc, "kernel end: waits for %d of its threads to return",
                     tl->threads_live);
        sim_ps since = ev_now(&tl->sim->ev);
        ev_wait(tl->proc, &tl->threads_done);
        tl__waited(tl, since, "the kernel's threads", tl->proc->at_file, tl->proc->at_line);
}

void tl_impl_thread_start(tl_ctx *tl, tl_thread_fn fn, const void *arg, size_t arg_size,
                      const char *file, int line)
{
        tl__issue(tl, TOPO_OP_WAIT, file, line);
        if (!fn)
                tl__fail(tl, file, line, "tl_thread_start", "fn is NULL");
        if (arg_size > TL_THREAD_ARG_BYTES || (arg_size && !arg))
                tl__fail(tl, file, line, "tl_thread_start", "arg_size %zu: expected at most %d "
                         "bytes at a non-NULL arg", arg_size, TL_THREAD_ARG_BYTES);
        if (tl->thread)
                tl__fail(tl, file, line, "tl_thread_start",
                         "a thread cannot start threads; start them from the kernel");
        if (tl->n_threads + 1 >= TL_MAX_THREADS)
                tl__fail(tl, file, line, "tl_thread_start",
                         "more than %d threads on one PE (the kernel counts as one)",
                         TL_MAX_THREADS);
        struct tl_thread *th = calloc(1, sizeof *th);
        if (!th)
                tl__fail(tl, file, line, "tl_thread_start", "host out of memory");
        int index = ++tl->n_threads;
        uint32_t cores = tl->sim->topo->pe.cpu.cores ? tl->sim->topo->pe.cpu.cores : 1;
        snprintf(th->name, sizeof th->name, "%s.t%d", tl->pe->name, index);
        th->fn = fn;
        th->index = index;
        if (arg_size)
                memcpy(th->arg, arg, arg_size);
        th->next = tl->threads;
        tl->threads = th;
        tl_ctx *c = &th->ctx;
        c->pe = tl->pe;
        c->sim = tl->sim;
        c->proc = &th->proc;
        c->run = tl->run;
        c->rank = tl->rank;
        c->recv_src = -1;
        c->first = tl;
        c->thread = th;
        c->core = (unsigned)index % cores;
        c->noc = (unsigned)index % hw_dma_nocs(tl->sim->topo);
        if (ev_proc_start(&tl->sim->ev, &th->proc, th->name, thread_main, th) < 0)
                tl__fail(tl, file, line, "tl_thread_start",
                         "no stack could be mapped for the thread's process");
        tl->threads_live++;
}

void tl__threads_fini(tl_ctx *tl)
{
        struct tl_thread *th = tl->threads;
        while (th) {
                struct tl_thread *next = th->next;
                ev_proc_discard(&th->proc);
                tl__ctx_fini(&th->ctx);
                free(th);
                th = next;
        }
        tl->threads = NULL;
        struct tl_cb *cb = tl->cbs;
        while (cb) {
                struct tl_cb *next = cb->next;
                free(cb);
                cb = next;
        }
        tl->cbs = NULL;
}

void tl_impl_set_noc(tl_ctx *tl, int noc, const char *file, int line)
{
        unsigned n = hw_dma_nocs(tl->sim->topo);
        if (noc < 0 || (unsigned)noc >= n)
                tl__fail(tl, file, line, "tl_set_noc", "NoC %d: this machine's cores issue on "
                         "NoC 0%s", noc, n > 1 ? " or 1" : " only");
        tl->noc = (unsigned)noc;
}

void tl_impl_set_fabric_payload(tl_ctx *tl, int64_t bytes, const char *file, int line)
{
        if (bytes < 0 || bytes > UINT32_MAX)
                tl__fail(tl, file, line, "tl_set_fabric_payload",
                         "%lld bytes a packet: expected 0 (the machine's) to %u",
                         (long long)bytes, UINT32_MAX);
        tl->fabric_payload = (uint32_t)bytes;
}

/* ---- circular buffers ------------------------------------------------------ */

static void check_cb(tl_ctx *tl, const tl_cb *cb, const char *file, int line, const char *op)
{
        if (!cb)
                tl__fail(tl, file, line, op, "cb is NULL");
        if (cb->magic != TL_CB_MAGIC)
                tl__fail(tl, file, line, op, "cb is not a circular buffer (a wild pointer?)");
        if (cb->pe != tl->pe)
                tl__fail(tl, file, line, op, "circular buffer '%s' is another PE's (%s)",
                         cb->name, cb->pe->name);
}

tl_cb *tl_impl_cb_make(tl_ctx *tl, const char *name, tl_dtype dt, int ndim, const int64_t *page_shape,
                   int n_pages, const char *file, int line)
{
        tl__issue(tl, TOPO_OP_WAIT, file, line);
        if (!name)
                tl__fail(tl, file, line, "tl_cb_make", "name is NULL");
        if (n_pages < 1 || n_pages > TL_CB_MAX_PAGES)
                tl__fail(tl, file, line, "tl_cb_make", "circular buffer '%s': %d pages: expected "
                         "1..%d", name, n_pages, TL_CB_MAX_PAGES);
        if (tl->n_scopes)
                tl__fail(tl, file, line, "tl_cb_make", "circular buffer '%s' made inside a "
                         "scratch scope; make it at the thread's top level", name);
        tl_cb *cb = calloc(1, sizeof *cb);
        if (!cb)
                tl__fail(tl, file, line, "tl_cb_make", "host out of memory");
        cb->magic = TL_CB_MAGIC;
        cb->pe = tl->pe;
        cb->next = tl->first->cbs;
        tl->first->cbs = cb;
        snprintf(cb->name, sizeof cb->name, "%s", name);
        snprintf(cb->front_note, sizeof cb->front_note,
                 "tl_cb_wait_front on circular buffer '%s': nothing pushed", cb->name);
        snprintf(cb->back_note, sizeof cb->back_note,
                 "tl_cb_reserve_back on circular buffer '%s': all %d pages full", cb->name,
                 n_pages);
        for (int i = 0; i < n_pages; i++)
                cb->page[i] = tl_impl_alloc(tl, TL_TCM, dt, ndim, page_shape, file, line);
        cb->n_pages = n_pages;
        return cb;
}

/* Block tl until cb changes (a push or a pop), noting note at file:line
 * for a deadlock report. */
static void cb_block(tl_ctx *tl, tl_cb *cb, const char *note, const char *file, int line)
{
        if (!cb->armed) {
                ev_future_init(&cb->changed, "circular buffer");
                cb->armed = true;
        }
        tl__note_wait(tl, TL_NOTE_AT, file, line, note, NULL, 0);
        sim_ps since = ev_now(&tl->sim->ev);
        ev_wait(tl->proc, &cb->changed);
        tl__waited(tl, since, note, file, line);
}

static void cb_changed(tl_ctx *tl, tl_cb *cb)
{
        if (cb->armed) {
                cb->armed = false;
                ev_future_complete(&tl->sim->ev, &cb->changed, 0);
        }
}

tl_tensor *tl_impl_cb_reserve_back(tl_ctx *tl, tl_cb *cb, const char *file, int line)
{
        tl__issue(tl, TOPO_OP_WAIT, file, line);
        check_cb(tl, cb, file, line, "tl_cb_reserve_back");
        if (cb->reserved)
                tl__fail(tl, file, line, "tl_cb_reserve_back", "circular buffer '%s': its back "
                         "page is already reserved; push it first", cb->name);
        while (cb->n_pushed == cb->n_pages)
                cb_block(tl, cb, cb->back_note, file, line);
        cb->reserved = true;
        return cb->page[(cb->head + cb->n_pushed) % cb->n_pages];
}

void tl_impl_cb_push_back(tl_ctx *tl, tl_cb *cb, const char *file, int line)
{
        tl__issue(tl, TOPO_OP_WAIT, file, line);
        check_cb(tl, cb, file, line, "tl_cb_push_back");
        if (!cb->reserved)
                tl__fail(tl, file, line, "tl_cb_push_back", "circular buffer '%s': no page "
                         "reserved; call tl_cb_reserve_back first", cb->name);
        cb->reserved = false;
        cb->n_pushed++;
        tl__cp_signal(tl, file, line, "tl_cb_push_back");
        cb_changed(tl, cb);
}

tl_tensor *tl_impl_cb_wait_front(tl_ctx *tl, tl_cb *cb, const char *file, int line)
{
        tl__issue(tl, TOPO_OP_WAIT, file, line);
        check_cb(tl, cb, file, line, "tl_cb_wait_front");
        while (cb->n_pushed == 0)
                cb_block(tl, cb, cb->front_note, file, line);
        return cb->page[cb->head];
}

void tl_impl_cb_pop_front(tl_ctx *tl, tl_cb *cb, const char *file, int line)
{
        tl__issue(tl, TOPO_OP_WAIT, file, line);
        check_cb(tl, cb, file, line, "tl_cb_pop_front");
        if (cb->n_pushed == 0)
                tl__fail(tl, file, line, "tl_cb_pop_front", "circular buffer '%s': nothing "
                         "pushed to pop", cb->name);
        /* The page is free once this thread's ops that read it are done. */
        tl__drain(tl, "tl_cb_pop_front", file, line);
        cb->head = (cb->head + 1) % cb->n_pages;
        cb->n_pushed--;
        tl__cp_signal(tl, file, line, "tl_cb_pop_front");
        cb_changed(tl, cb);
}
