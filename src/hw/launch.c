/* hw/launch.c: the launch path host -> IO_CPU -> M_CPU -> PE_CPU, the
 * common start barrier, and completions back to the IO_CPU. See hw.h. */
#include <errno.h>
#include <stdlib.h>

#include "base/util.h"
#include "hw/hw.h"

/* Path latency a -> b into *out; -ENOMEM when the route cannot be made
 * (the route cache could not grow: the graph is connected). */
static int lat(struct hw_sim *s, uint32_t a, uint32_t b, sim_ps *out)
{
        *out = topo_path_latency(&s->graph, a, b);
        return *out == TOPO_PS_NONE ? -ENOMEM : 0;
}

static struct hw_cube *cube_of(struct hw_sim *s, const struct hw_sip *sp, uint32_t c)
{
        return &s->cubes[sp->sip * s->topo->sip.cubes + c];
}

/* ---- completions ---- */

static void sip_cube_done(struct hw_sim *s, struct hw_sip *sp)
{
        if (++sp->n_done < s->topo->sip.cubes)
                return;
        if (++s->n_sips_done == s->n_sips)
                s->done_ps = ev_now(&s->ev);
}

static void cube_done_arrives(struct ev_loop *ev, struct ev_event *e)
{
        struct hw_cube *c = container_of(e, struct hw_cube, done_ev);
        (void)ev;
        sip_cube_done(c->sim, &c->sim->sips[c->sip]);
}

static void pe_done_arrives(struct ev_loop *ev, struct ev_event *e)
{
        struct hw_pe *pe = container_of(e, struct hw_pe, done_ev);
        struct hw_sim *s = pe->sim;
        struct hw_cube *c = hw_pe_cube(pe);
        if (++c->n_done < s->pes_per_cube)
                return;
        c->done_ev.fn = cube_done_arrives;
        ev_schedule(ev, &c->done_ev, c->done_lat_ps);
}

static void pe_exited(struct ev_loop *ev, struct ev_event *e)
{
        struct hw_pe *pe = container_of(e, struct hw_pe, done_ev);
        pe->done_ev.fn = pe_done_arrives;
        ev_schedule(ev, &pe->done_ev, pe->done_lat_ps);
}

/* ---- launch ---- */

/* How much later than SIP 0's the host's launch reaches SIP sip's PEs
 * (system.launch_skew_ns: the host launches the chips in turn, the last
 * that much after the first). */
sim_ps hw_launch_skew(const struct hw_sim *s, uint32_t sip)
{
        uint32_t n = s->topo->system.sips;
        if (n < 2 || !s->topo->system.launch_skew_ps)
                return 0;
        return s->topo->system.launch_skew_ps * sip / (n - 1);
}

static void pe_main(struct ev_proc *p, void *arg)
{
        struct hw_pe *pe = arg;
        struct hw_sim *s = pe->sim;
        CS_ASSERT(ev_now(&s->ev) <= s->target_start_ps);
        ev_sleep_until(p, s->target_start_ps + hw_launch_skew(s, pe->sip));
        pe->exec_start_ps = ev_now(&s->ev);
        pe->started = true;
        /* The program's fixed launch and end (pe.cpu.program_ns), paid
         * before the body: only their sum shows in kernel time. */
        if (s->topo->pe.cpu.program_ps)
                ev_sleep_until(p, pe->exec_start_ps + s->topo->pe.cpu.program_ps);
        s->body(pe, s->body_arg);
        pe->exec_end_ps = ev_now(&s->ev);
        pe->finished = true;
}

static void pe_launch_arrives(struct ev_loop *ev, struct ev_event *e)
{
        struct hw_pe *pe = container_of(e, struct hw_pe, launch_ev);
        if (ev_proc_start(ev, &pe->proc, pe->name, pe_main, pe) < 0) {
                /* No stack: the PE never runs, so the run cannot be right;
                 * stop it here (its caller reports no_stack). */
                if (!pe->sim->no_stack) {
                        pe->sim->no_stack = pe;
                        pe->sim->no_stack_errno = errno;
                }
                ev_stop(ev);
                return;
        }
        pe->done_ev.fn = pe_exited;
        pe->proc.on_exit = &pe->done_ev;
}

static void cube_launch_arrives(struct ev_loop *ev, struct ev_event *e)
{
        struct hw_cube *c = container_of(e, struct hw_cube, launch_ev);
        struct hw_sim *s = c->sim;
        struct hw_pe *first = &s->pes[(c->sip * s->topo->sip.cubes + c->cube) * s->pes_per_cube];
        for (uint32_t p = 0; p < s->pes_per_cube; p++) {
                struct hw_pe *pe = &first[p];
                pe->launch_ev.fn = pe_launch_arrives;
                ev_schedule(ev, &pe->launch_ev, pe->launch_lat_ps);
        }
}

static void sip_launch_arrives(struct ev_loop *ev, struct ev_event *e)
{
        struct hw_sip *sp = container_of(e, struct hw_sip, launch_ev);
        struct hw_sim *s = sp->sim;
        for (uint32_t c = 0; c < s->topo->sip.cubes; c++) {
                struct hw_cube *cb = cube_of(s, sp, c);
                cb->launch_ev.fn = cube_launch_arrives;
                ev_schedule(ev, &cb->launch_ev, cb->launch_lat_ps);
        }
}

int hw_launch(struct hw_sim *s, hw_pe_body body, void *arg)
{
        s->body = body;
        s->body_arg = arg;
        s->launch_ps = ev_now(&s->ev);
        s->n_sips_done = 0;
        s->no_stack = NULL;
        /* The barrier: the longest launch path IO_CPU -> M_CPU -> PE_CPU,
         * one route search per cube for all its PEs. */
        sim_ps worst = 0;
        uint32_t *dsts = malloc(s->pes_per_cube * sizeof *dsts);
        sim_ps *lats = malloc(s->pes_per_cube * sizeof *lats);
        if (!dsts || !lats) {
                free(dsts);
                free(lats);
                return -ENOMEM;
        }
        for (uint32_t c = 0; c < s->n_cubes; c++) {
                struct hw_cube *cb = &s->cubes[c];
                struct hw_pe *first = &s->pes[c * s->pes_per_cube];
                uint32_t io = s->sips[cb->sip].node_io_cpu;
                int rc = lat(s, io, cb->node_m_cpu, &cb->launch_lat_ps);
                if (rc == 0)
                        rc = lat(s, cb->node_m_cpu, io, &cb->done_lat_ps);
                for (uint32_t p = 0; p < s->pes_per_cube; p++)
                        dsts[p] = first[p].node_cpu;
                if (rc == 0 &&
                    topo_path_latencies(&s->graph, cb->node_m_cpu, dsts, s->pes_per_cube, lats) < 0)
                        rc = -ENOMEM;
                for (uint32_t p = 0; rc == 0 && p < s->pes_per_cube; p++)
                        rc = lat(s, first[p].node_cpu, cb->node_m_cpu, &first[p].done_lat_ps);
                if (rc < 0) {
                        free(dsts);
                        free(lats);
                        return rc;
                }
                for (uint32_t p = 0; p < s->pes_per_cube; p++) {
                        first[p].launch_lat_ps = lats[p];
                        first[p].started = first[p].finished = false;
                        if (cb->launch_lat_ps + lats[p] > worst)
                                worst = cb->launch_lat_ps + lats[p];
                }
        }
        free(dsts);
        free(lats);
        s->target_start_ps = s->launch_ps + worst;
        hw_power_start(&s->power, s->target_start_ps);
        for (uint32_t i = 0; i < s->n_cubes; i++)
                s->cubes[i].n_done = 0;
        for (uint32_t i = 0; i < s->n_sips; i++) {
                struct hw_sip *sp = &s->sips[i];
                sp->n_done = 0;
                sp->launch_ev.fn = sip_launch_arrives;
                if (ev_schedule(&s->ev, &sp->launch_ev, 0) < 0)
                        return -ENOMEM;
        }
        return 0;
}
