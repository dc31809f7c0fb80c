/* hw/sim.c: building and tearing down the machine's components from its
 * topology graph. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hw/hw.h"

static int init_pe(struct hw_sim *s, struct hw_pe *pe, uint32_t sip, uint32_t cube, uint32_t idx)
{
        const struct topo_graph *g = &s->graph;
        pe->sim = s;
        pe->sip = sip;
        pe->cube = cube;
        pe->pe = idx;
        pe->global = (sip * s->topo->sip.cubes + cube) * s->pes_per_cube + idx;
        pe->node_cpu = topo_node_index(g, TOPO_NODE_PE_CPU, sip, cube, idx);
        pe->node_dma = topo_node_index(g, TOPO_NODE_PE_DMA, sip, cube, idx);
        pe->node_gemm = topo_node_index(g, TOPO_NODE_PE_GEMM, sip, cube, idx);
        pe->node_math = topo_node_index(g, TOPO_NODE_PE_MATH, sip, cube, idx);
        pe->node_tcm = topo_node_index(g, TOPO_NODE_TCM, sip, cube, idx);
        snprintf(pe->name, sizeof pe->name, "sip%u.cube%u.pe%u", sip, cube, idx);
        uint32_t ch = s->topo->pe.dma.channels;
        int rc = ev_resource_init(&pe->dma, &s->ev, "pe_dma", 1, EV_SPLIT);
        rc |= ev_resource_init(&pe->dma_slots, &s->ev, "pe_dma_slot",
                               ch < EV_RESOURCE_MAX_SERVERS ? ch : EV_RESOURCE_MAX_SERVERS, EV_WHOLE);
        rc |= ev_resource_init(&pe->gemm, &s->ev, "pe_gemm", 1, EV_WHOLE);
        rc |= ev_resource_init(&pe->math, &s->ev, "pe_math", 1, EV_WHOLE);
        return rc ? -ENOMEM : 0;
}

int hw_sim_init(struct hw_sim *s, const struct topo *t, const struct ev_config *cfg, struct diag *d)
{
        memset(s, 0, sizeof *s);
        int rc = topo_build_graph(t, &s->graph, d);
        if (rc < 0)
                return rc;
        s->topo = &s->graph.topo;
        const struct topo *tp = s->topo;
        s->n_sips = tp->system.sips;
        s->n_cubes = s->n_sips * tp->sip.cubes;
        s->pes_per_cube = tp->cube.noc.rows * tp->cube.noc.cols;
        s->n_pes = s->n_cubes * s->pes_per_cube;
        if (ev_loop_init(&s->ev, cfg) < 0)
                goto nomem_graph;
        s->links = calloc(s->graph.n_edges, sizeof *s->links);
        s->sips = calloc(s->n_sips, sizeof *s->sips);
        s->cubes = calloc(s->n_cubes, sizeof *s->cubes);
        s->pes = calloc(s->n_pes, sizeof *s->pes);
        if (!s->links || !s->sips || !s->cubes || !s->pes)
                goto nomem;
        for (uint32_t e = 0; e < s->graph.n_edges; e++)
                ev_resource_init(&s->links[e].res, &s->ev, "link", 1, EV_SPLIT);
        uint32_t n_ch = tp->cube.hbm.channels;
        for (uint32_t si = 0; si < s->n_sips; si++) {
                struct hw_sip *sp = &s->sips[si];
                sp->sim = s;
                sp->sip = si;
                sp->node_io_cpu = topo_node_index(&s->graph, TOPO_NODE_IO_CPU, si, 0, 0);
                for (uint32_t c = 0; c < tp->sip.cubes; c++) {
                        struct hw_cube *cb = &s->cubes[si * tp->sip.cubes + c];
                        cb->sim = s;
                        cb->sip = si;
                        cb->cube = c;
                        cb->node_m_cpu = topo_node_index(&s->graph, TOPO_NODE_M_CPU, si, c, 0);
                        cb->first_channel_node =
                                topo_node_index(&s->graph, TOPO_NODE_HBM_CHANNEL, si, c, 0);
                        cb->channels = calloc(n_ch, sizeof *cb->channels);
                        if (!cb->channels)
                                goto nomem;
                        for (uint32_t ch = 0; ch < n_ch; ch++)
                                ev_resource_init(&cb->channels[ch], &s->ev, "hbm_channel", 1,
                                                 EV_SPLIT);
                        for (uint32_t p = 0; p < s->pes_per_cube; p++)
                                if (init_pe(s, &s->pes[(si * tp->sip.cubes + c) * s->pes_per_cube + p],
                                            si, c, p) < 0)
                                        goto nomem;
                }
        }
        return 0;
nomem:
        hw_sim_fini(s);
        diag_error(d, "out of memory building the machine (%u PEs)", t->system.sips *
                   t->sip.cubes * t->cube.noc.rows * t->cube.noc.cols);
        return -ENOMEM;
nomem_graph:
        topo_graph_fini(&s->graph);
        diag_error(d, "out of memory building the event loop");
        return -ENOMEM;
}

void hw_sim_fini(struct hw_sim *s)
{
        /* First: unfinished processes live in s->pes. */
        ev_loop_fini(&s->ev);
        if (s->cubes)
                for (uint32_t c = 0; c < s->n_cubes; c++) {
                        for (uint32_t ch = 0; s->cubes[c].channels &&
                                              ch < s->topo->cube.hbm.channels; ch++)
                                ev_resource_fini(&s->cubes[c].channels[ch]);
                        free(s->cubes[c].channels);
                }
        if (s->pes)
                for (uint32_t i = 0; i < s->n_pes; i++) {
                        ev_resource_fini(&s->pes[i].dma);
                        ev_resource_fini(&s->pes[i].dma_slots);
                        ev_resource_fini(&s->pes[i].gemm);
                        ev_resource_fini(&s->pes[i].math);
                }
        if (s->links)
                for (uint32_t e = 0; e < s->graph.n_edges; e++)
                        ev_resource_fini(&s->links[e].res);
        free(s->cubes);
        free(s->sips);
        free(s->pes);
        free(s->links);
        topo_graph_fini(&s->graph);
        memset(s, 0, sizeof *s);
}
