/* hw/link.c: moving bytes over the component graph: links (cut-through,
 * FIFO per link) and HBM channels (interleaved). See hw.h for the model. */
#include "base/util.h"
#include "hw/hw.h"

sim_ps hw_bytes_ps(uint64_t bytes, uint64_t bw_bytes_per_s)
{
        CS_ASSERT(bw_bytes_per_s > 0);
        unsigned __int128 num = (unsigned __int128)bytes * 1000000000000ull + bw_bytes_per_s - 1;
        unsigned __int128 ps = num / bw_bytes_per_s;
        return ps > SIM_PS_MAX ? SIM_PS_MAX : (sim_ps)ps;
}

sim_ps hw_xfer(struct hw_sim *s, uint32_t src, uint32_t dst, uint64_t bytes, sim_ps start)
{
        const uint32_t *route;
        uint32_t n;
        if (topo_route(&s->graph, src, dst, &route, &n) < 0) {
                ev_set_nomem(&s->ev);
                return TOPO_PS_NONE;
        }
        sim_ps head = start, drain_max = 0;
        for (uint32_t i = 0; i < n; i++) {
                const struct topo_edge *e = &s->graph.edges[route[i]];
                struct hw_link *l = &s->links[route[i]];
                sim_ps drain = hw_bytes_ps(bytes, e->bw_bytes_per_s);
                sim_ps begin;
                ev_resource_reserve(&l->res, head, drain, &begin);
                l->n_bytes += bytes;
                s->class_bytes[e->cls] += bytes;
                head = begin + e->latency_ps + s->graph.nodes[e->dst].node_overhead_ps;
                if (drain > drain_max)
                        drain_max = drain;
        }
        return head + drain_max;
}

/* Bytes of piece ch when bytes are spread over n channels. */
static uint64_t piece(uint64_t bytes, uint32_t n, uint32_t ch)
{
        return bytes / n + (ch < bytes % n);
}

/* Move bytes between the cube's HBM and node, interleaved over the
 * channels: a read is served by each channel, then carried to node; a
 * write is carried to each channel, then served. */
static sim_ps hbm_access(struct hw_sim *s, struct hw_cube *c, uint32_t node, uint64_t bytes,
                         sim_ps start, bool write)
{
        const struct topo_hbm *h = &s->topo->cube.hbm;
        sim_ps done = start;
        for (uint32_t ch = 0; ch < h->channels; ch++) {
                uint64_t b = piece(bytes, h->channels, ch);
                if (b == 0)
                        continue;
                uint32_t ch_node = c->first_channel_node + ch;
                sim_ps service = hw_bytes_ps(b, h->channel_bw_bytes_per_s);
                sim_ps t;
                if (write) {
                        t = hw_xfer(s, node, ch_node, b, start);
                        t = ev_resource_reserve(&c->channels[ch], t == TOPO_PS_NONE ? start : t,
                                                service, NULL);
                } else {
                        sim_ps served = ev_resource_reserve(&c->channels[ch], start, service,
                                                            NULL);
                        t = hw_xfer(s, ch_node, node, b, served);
                        if (t == TOPO_PS_NONE)
                                t = served;
                }
                if (t > done)
                        done = t;
        }
        if (write)
                c->hbm_write_bytes += bytes;
        else
                c->hbm_read_bytes += bytes;
        return done;
}

sim_ps hw_hbm_read(struct hw_sim *s, struct hw_cube *c, uint32_t dst_node, uint64_t bytes,
                   sim_ps start)
{
        return hbm_access(s, c, dst_node, bytes, start, false);
}

sim_ps hw_hbm_write(struct hw_sim *s, struct hw_cube *c, uint32_t src_node, uint64_t bytes,
                    sim_ps start)
{
        return hbm_access(s, c, src_node, bytes, start, true);
}

sim_ps hw_gemm_ps(const struct topo *t, uint64_t m, uint64_t n, uint64_t k)
{
        unsigned __int128 macs = (unsigned __int128)m * n * k;
        unsigned __int128 cycles = (macs + t->pe.gemm.macs_per_cycle - 1) / t->pe.gemm.macs_per_cycle;
        return topo_cycles_to_ps(cycles > UINT64_MAX ? UINT64_MAX : (uint64_t)cycles,
                                 t->pe.gemm.clock_hz);
}

sim_ps hw_math_ps(const struct topo *t, enum topo_op op, uint64_t elements)
{
        uint64_t lanes = t->pe.math.lanes;
        uint64_t per_lane = (elements + lanes - 1) / lanes;
        return topo_cycles_to_ps(per_lane * t->pe.math.cycles_per_element[op], t->pe.math.clock_hz);
}

sim_ps hw_dma_ps(const struct topo *t, uint64_t bytes)
{
        uint32_t ch = t->pe.dma.channels;
        uint64_t per_channel_bw = t->pe.dma.bw_bytes_per_s / ch;
        return t->pe.dma.setup_ps + hw_bytes_ps(piece(bytes, ch, 0), per_channel_bw ? per_channel_bw : 1);
}

sim_ps hw_dma_reserve(struct hw_pe *pe, sim_ps at, uint64_t bytes, bool setup, sim_ps *start)
{
        const struct topo_pe_dma *dma = &pe->sim->topo->pe.dma;
        uint32_t ch = pe->dma.n_servers;
        uint64_t per_channel_bw = dma->bw_bytes_per_s / ch;
        if (!per_channel_bw)
                per_channel_bw = 1;
        sim_ps end = at, first = SIM_PS_MAX;
        for (uint32_t i = 0; i < ch; i++) {
                uint64_t b = piece(bytes, ch, i);
                if (b == 0 && i > 0)
                        break;
                sim_ps s0, e = ev_resource_reserve(&pe->dma, at,
                                                   (setup ? dma->setup_ps : 0) +
                                                           hw_bytes_ps(b, per_channel_bw), &s0);
                if (e > end)
                        end = e;
                if (s0 < first)
                        first = s0;
        }
        if (start)
                *start = first;
        return end;
}

sim_ps hw_dma_copy(struct hw_pe *pe, bool from_hbm, bool to_hbm, uint64_t bytes, sim_ps at,
                   sim_ps *start)
{
        struct hw_sim *s = pe->sim;
        sim_ps begin, end = hw_dma_reserve(pe, at, bytes, true, &begin);
        sim_ps t = begin + s->topo->pe.dma.setup_ps;
        struct hw_cube *c = hw_pe_cube(pe);
        if (from_hbm)
                t = hw_hbm_read(s, c, pe->node_dma, bytes, t);
        if (to_hbm)
                t = hw_hbm_write(s, c, pe->node_dma, bytes, t);
        if (t > end)
                end = t;
        if (start)
                *start = begin;
        return end;
}
