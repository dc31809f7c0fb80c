/* tl/sem.c: semaphores of a PE, incremented over the NoC by other PEs and
 * waited on by the PE's threads (include/cubesim/tl.h; docs/adr/0031):
 * the handshake of tt-metal's multicast senders and receivers. */
#include <stdio.h>
#include <stdlib.h>

#include "base/util.h"
#include "tl/tl_int.h"

/* Semaphore sem of the PE whose first core's context is pe, or a kernel
 * error for op at file:line. */
static struct tl_sem *sem_of(tl_ctx *tl, tl_ctx *pe, int sem, const char *file, int line,
                             const char *op)
{
        if (sem < 0 || sem >= TL_MAX_SEMS)
                tl__fail(tl, file, line, op, "semaphore %d: expected 0..%d", sem,
                         TL_MAX_SEMS - 1);
        return &pe->sems[sem];
}

static void sem_changed(tl_ctx *tl, struct tl_sem *s)
{
        if (s->armed) {
                s->armed = false;
                ev_future_complete(&tl->sim->ev, &s->changed, 0);
        }
}

static void inc_land(struct ev_loop *ev, struct ev_event *e)
{
        struct tl_sem_inc *in = container_of(e, struct tl_sem_inc, land);
        tl_ctx *dst = in->dst;
        struct tl_sem *s = &dst->sems[in->sem];
        (void)ev;
        s->value += in->n;
        sem_changed(dst, s);
        in->next_free = dst->run->free_incs;
        dst->run->free_incs = in;
}

void tl_impl_sem_inc(tl_ctx *tl, int rank, int sem, int n, const char *file, int line)
{
        tl__issue(tl, TOPO_OP_SEND, file, line);
        if (rank < 0 || (uint32_t)rank >= tl->sim->n_pes)
                tl__fail(tl, file, line, "tl_sem_inc", "rank %d: expected 0..%u", rank,
                         tl->sim->n_pes - 1);
        tl_ctx *dst = &tl->run->ctx[rank];
        struct tl_sem *s = sem_of(tl, dst, sem, file, line, "tl_sem_inc");
        if (n < 1)
                tl__fail(tl, file, line, "tl_sem_inc", "n %d: expected at least 1", n);
        struct hw_sim *hs = tl->sim;
        sim_ps now = ev_now(&hs->ev);
        if (dst->pe == tl->pe) {
                s->value += (uint32_t)n;
                tl__cp_signal(tl, file, line, "tl_sem_inc");
                sem_changed(tl, s);
                return;
        }
        /* A NoC atomic: one small packet along the route after the DMA's
         * setup; with cube.noc.atomic_vc a flit on a virtual channel of
         * its own (docs/adr/0047). */
        sim_ps at = (hs->topo->cube.noc.atomic_vc ? hw_xfer_flit : hw_xfer)(
                hs, tl->pe->node_dma, dst->pe->node_dma, sizeof(uint32_t),
                now + hs->topo->pe.dma.setup_ps);
        struct tl_sem_inc *in = tl->run->free_incs;
        if (in) {
                tl->run->free_incs = in->next_free;
        } else {
                in = calloc(1, sizeof *in);
                if (!in)
                        tl__fail(tl, file, line, "tl_sem_inc", "host out of memory");
                in->next_all = tl->run->all_incs;
                tl->run->all_incs = in;
        }
        if (at == TOPO_PS_NONE)
                tl__fail(tl, file, line, "tl_sem_inc", "host out of memory routing to PE %d",
                         rank);
        in->dst = dst;
        in->sem = sem;
        in->n = (uint32_t)n;
        in->land.fn = inc_land;
        tl__cp_remote(tl, (uint32_t)rank, "tl_sem_inc", now, at, file, line);
        ev_schedule_at(&hs->ev, &in->land, at);
}

void tl_impl_sem_wait(tl_ctx *tl, int sem, int value, const char *file, int line)
{
        tl__issue(tl, TOPO_OP_WAIT, file, line);
        struct tl_sem *s = sem_of(tl, tl->first, sem, file, line, "tl_sem_wait");
        if (value < 0)
                tl__fail(tl, file, line, "tl_sem_wait", "value %d: expected at least 0", value);
        while (s->value < (uint32_t)value) {
                if (!s->armed) {
                        ev_future_init(&s->changed, "semaphore");
                        s->armed = true;
                }
                snprintf(s->note, sizeof s->note, "tl_sem_wait on semaphore %d: at %u, waits "
                         "for %d", sem, s->value, value);
                tl__note_wait(tl, TL_NOTE_AT, file, line, s->note, NULL, 0);
                sim_ps since = ev_now(&tl->sim->ev);
                ev_wait(tl->proc, &s->changed);
                tl__waited(tl, since, "tl_sem_wait", file, line);
        }
}

void tl_impl_sem_set(tl_ctx *tl, int sem, int value, const char *file, int line)
{
        struct tl_sem *s = sem_of(tl, tl->first, sem, file, line, "tl_sem_set");
        if (value < 0)
                tl__fail(tl, file, line, "tl_sem_set", "value %d: expected at least 0", value);
        s->value = (uint32_t)value;
        tl__cp_signal(tl, file, line, "tl_sem_set");
        sem_changed(tl, s);
}

void tl__sems_fini(struct tl_run *r)
{
        struct tl_sem_inc *in = r->all_incs;
        while (in) {
                struct tl_sem_inc *next = in->next_all;
                free(in);
                in = next;
        }
        r->all_incs = r->free_incs = NULL;
}
