/* hw/sim.c: building and tearing down the machine's components from its
 * topology graph; what an engine op costs (the GEMM array, the MATH lanes,
 * the TCM banks; the model is in hw.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/ckd.h"
#include "base/util.h"
#include "hw/hw.h"

/* A TCM bank's bandwidth. */
static uint64_t tcm_bank_bw(const struct topo_tcm *tc)
{
        uint64_t bw = tc->bw_bytes_per_s / tc->banks;
        return bw ? bw : 1;
}

/* A channel's rate at pct % of its bandwidth (0: all of it). */
static uint64_t channel_rate(const struct topo_hbm *h, uint32_t pct)
{
        if (!pct || pct >= 100)
                return h->channel_bw_bytes_per_s;
        uint64_t r = (uint64_t)((unsigned __int128)h->channel_bw_bytes_per_s * pct / 100);
        return r ? r : 1;
}

/* Per channel, the PE of a cube at its attach point (UINT32_MAX: the
 * channels line the edges, no PE is next to one). */
static uint32_t *channel_attach_pes(const struct topo *t)
{
        const struct topo_hbm *h = &t->cube.hbm;
        uint32_t *a = malloc(h->channels * sizeof *a);
        if (!a)
                return NULL;
        for (uint32_t ch = 0; ch < h->channels; ch++) {
                a[ch] = UINT32_MAX;
                if (h->attach.n) {
                        const struct topo_coord *c = &h->attach.at[ch % h->attach.n];
                        a[ch] = (uint32_t)c->row * t->cube.noc.cols + c->col;
                }
        }
        return a;
}

/* Each SIP's inter-SIP links out, in the graph's order (the k-th link to
 * a neighbour is the k-th of them that leads there), at s->sip_links:
 * their peer and the PE at their router. 0 or -1 (out of memory). */
static int sip_links_init(struct hw_sim *s)
{
        const struct topo_graph *g = &s->graph;
        s->sip_link_first = calloc(s->n_sips + 1, sizeof *s->sip_link_first);
        if (!s->sip_link_first)
                return -1;
        for (uint32_t e = 0; e < g->n_edges; e++)
                if (g->edges[e].cls == TOPO_EDGE_INTER_SIP)
                        s->sip_link_first[g->nodes[g->edges[e].src].sip + 1]++;
        for (uint32_t i = 0; i < s->n_sips; i++)
                s->sip_link_first[i + 1] += s->sip_link_first[i];
        uint32_t n = s->sip_link_first[s->n_sips], *at = calloc(s->n_sips, sizeof *at);
        s->sip_links = malloc((n ? n : 1) * sizeof *s->sip_links);
        if (!at || !s->sip_links) {
                free(at);
                return -1;
        }
        for (uint32_t e = 0; e < g->n_edges; e++) {
                const struct topo_edge *te = &g->edges[e];
                if (te->cls != TOPO_EDGE_INTER_SIP)
                        continue;
                const struct topo_node *src = &g->nodes[te->src];
                s->sip_links[s->sip_link_first[src->sip] + at[src->sip]++] = (struct hw_sip_link){
                        .peer = g->nodes[te->dst].sip,
                        .pe = src->kind == TOPO_NODE_ROUTER ? src->index : UINT32_MAX,
                };
        }
        free(at);
        return 0;
}

static int init_pe(struct hw_sim *s, struct hw_pe *pe, uint32_t sip, uint32_t cube, uint32_t idx)
{
        const struct topo_graph *g = &s->graph;
        pe->sim = s;
        pe->sip = sip;
        pe->cube = cube;
        pe->pe = idx;
        pe->global = (sip * s->topo->sip.cubes + cube) * s->pes_per_cube + idx;
        pe->global_cube = sip * s->topo->sip.cubes + cube;
        pe->node_cpu = topo_node_index(g, TOPO_NODE_PE_CPU, sip, cube, idx);
        pe->node_dma = topo_node_index(g, TOPO_NODE_PE_DMA, sip, cube, idx);
        pe->node_gemm = topo_node_index(g, TOPO_NODE_PE_GEMM, sip, cube, idx);
        pe->node_math = topo_node_index(g, TOPO_NODE_PE_MATH, sip, cube, idx);
        pe->node_tcm = topo_node_index(g, TOPO_NODE_TCM, sip, cube, idx);
        snprintf(pe->name, sizeof pe->name, "sip%u.cube%u.pe%u", sip, cube, idx);
        uint32_t ch = s->topo->pe.dma.channels;
        int rc = ev_resource_init(&pe->dma, &s->ev, "pe_dma", 1, EV_SPLIT);
        rc |= ev_resource_init(&pe->dma1, &s->ev, hw_dma1_name, 1, EV_SPLIT);
        rc |= ev_resource_init(&pe->dma_rx, &s->ev, hw_dma_rx_name, 1, EV_SPLIT);
        rc |= ev_resource_init(&pe->dma1_rx, &s->ev, hw_dma1_rx_name, 1, EV_SPLIT);
        rc |= ev_resource_init(&pe->dma_slots, &s->ev, "pe_dma_slot",
                               ch < EV_RESOURCE_MAX_SERVERS ? ch : EV_RESOURCE_MAX_SERVERS, EV_WHOLE);
        rc |= ev_resource_init(&pe->gemm, &s->ev, "pe_gemm", 1, EV_WHOLE);
        rc |= ev_resource_init(&pe->math, &s->ev, "pe_math", 1, EV_WHOLE);
        /* TCM bandwidth: divisible, like a link's. */
        rc |= ev_resource_init(&pe->tcm, &s->ev, "tcm", 1, EV_SPLIT);
        return rc ? -ENOMEM : 0;
}

/* The Ethernet cores of each inter-SIP link (system.inter_sip.core_ns):
 * a core at each end sends its chip's packets and receives the other's,
 * so each edge weighs its reverse's passes (link.c, eth_shared). Edges
 * are few: each edge's reverse is found by a search over the edges. 0 or
 * -1 (out of memory). */
static int link_pairs_init(struct hw_sim *s)
{
        const struct topo_graph *g = &s->graph;
        uint32_t n = 0, *inter = malloc(g->n_edges * sizeof *inter);
        if (!inter)
                return -1;
        for (uint32_t e = 0; e < g->n_edges; e++)
                if (g->edges[e].cls == TOPO_EDGE_INTER_SIP)
                        inter[n++] = e;
        int rc = 0;
        for (uint32_t i = 0; i < n && !rc; i++) {
                uint32_t e = inter[i];
                const struct topo_edge *te = &g->edges[e];
                for (uint32_t k = i + 1; k < n && !s->links[e].recent; k++) {
                        uint32_t r = inter[k];
                        if (g->edges[r].src != te->dst || g->edges[r].dst != te->src ||
                            s->links[r].recent)
                                continue;
                        s->links[e].recent = calloc(HW_ETH_RECENT, sizeof *s->links[e].recent);
                        s->links[r].recent = calloc(HW_ETH_RECENT, sizeof *s->links[r].recent);
                        if (!s->links[e].recent || !s->links[r].recent)
                                rc = -1;
                        s->links[e].rev = r;
                        s->links[r].rev = e;
                }
        }
        free(inter);
        return rc;
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
        if (!s->links || !s->sips || !s->cubes || !s->pes ||
            hw_power_init(&s->power, s->n_cubes) < 0)
                goto nomem;
        for (uint32_t e = 0; e < s->graph.n_edges; e++) {
                ev_resource_init(&s->links[e].res, &s->ev, "link", 1, EV_SPLIT);
                const struct topo_edge *te = &s->graph.edges[e];
                CS_ASSERT(te->bw_bytes_per_s > 0);
                s->links[e].drain = muldiv_by_make(1000000000000ull, te->bw_bytes_per_s);
                s->links[e].hop_ps = te->latency_ps + s->graph.nodes[te->dst].node_overhead_ps;
                s->links[e].cls = te->cls;
                if (te->cls == TOPO_EDGE_INTER_SIP) {
                        s->links[e].msg_ps = tp->system.inter_sip_message_ps;
                        /* the Ethernet core's handling, apart from the wire */
                        if (tp->system.inter_sip_message_overlap) {
                                if (ev_resource_init(&s->links[e].core, &s->ev, "link_core", 1,
                                                     EV_SPLIT) < 0)
                                        goto nomem;
                                s->links[e].overlap = true;
                        }
                }
                s->links[e].pw = te->cls == TOPO_EDGE_NOC ? HW_PW_NOC
                               : te->cls == TOPO_EDGE_INTER_CUBE ? HW_PW_INTER_CUBE
                               : te->cls == TOPO_EDGE_INTER_SIP ? HW_PW_INTER_SIP
                                                                 : HW_PW_COUNT;
                s->links[e].cube = hw_edge_cube(s, e);
                if (s->links[e].cube == TOPO_NONE)
                        s->links[e].pw = HW_PW_COUNT;
        }
        if (tp->system.inter_sip_core_ps && link_pairs_init(s) < 0)
                goto nomem;
        s->channel_ps = muldiv_by_make(1000000000000ull, tp->cube.hbm.channel_bw_bytes_per_s);
        s->dma_ps = muldiv_by_make(1000000000000ull, hw_dma_bw(tp));
        s->channel_near_ps = muldiv_by_make(1000000000000ull,
                                            channel_rate(&tp->cube.hbm,
                                                         tp->cube.hbm.near_efficiency_pct));
        s->channel_far_ps = muldiv_by_make(1000000000000ull,
                                           channel_rate(&tp->cube.hbm,
                                                        tp->cube.hbm.far_efficiency_pct));
        s->gemm_cycle_ps = muldiv_by_make(1000000000000ull, tp->pe.gemm.clock_hz);
        s->math_cycle_ps = muldiv_by_make(1000000000000ull, tp->pe.math.clock_hz);
        s->tcm_bank_ps = muldiv_by_make(1000000000000ull, tcm_bank_bw(&tp->pe.tcm));
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
        s->dma_node_pe = calloc(s->graph.n_nodes, sizeof *s->dma_node_pe);
        s->pe_in_batch = calloc(s->n_pes, sizeof *s->pe_in_batch);
        s->pe_hbm_until = calloc(s->n_pes, sizeof *s->pe_hbm_until);
        s->channel_attach_pe = channel_attach_pes(tp);
        if (!s->dma_node_pe || !s->pe_in_batch || !s->pe_hbm_until || !s->channel_attach_pe ||
            sip_links_init(s) < 0)
                goto nomem;
        for (uint32_t i = 0; i < s->n_pes; i++)
                if (s->pes[i].node_dma < s->graph.n_nodes)
                        s->dma_node_pe[s->pes[i].node_dma] = i + 1;
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
        hw_power_fini(&s->power);
        if (s->cubes)
                for (uint32_t c = 0; c < s->n_cubes; c++) {
                        for (uint32_t ch = 0; s->cubes[c].channels &&
                                              ch < s->topo->cube.hbm.channels; ch++)
                                ev_resource_fini(&s->cubes[c].channels[ch]);
                        free(s->cubes[c].channels);
                        free(s->cubes[c].routes);
                }
        if (s->pes)
                for (uint32_t i = 0; i < s->n_pes; i++) {
                        ev_resource_fini(&s->pes[i].dma);
                        ev_resource_fini(&s->pes[i].dma1);
                        ev_resource_fini(&s->pes[i].dma_rx);
                        ev_resource_fini(&s->pes[i].dma1_rx);
                        ev_resource_fini(&s->pes[i].dma_slots);
                        ev_resource_fini(&s->pes[i].gemm);
                        ev_resource_fini(&s->pes[i].math);
                        ev_resource_fini(&s->pes[i].tcm);
                }
        if (s->links)
                for (uint32_t e = 0; e < s->graph.n_edges; e++) {
                        ev_resource_fini(&s->links[e].res);
                        if (s->links[e].overlap)
                                ev_resource_fini(&s->links[e].core);
                        free(s->links[e].recent);
                }
        free(s->cubes);
        free(s->sips);
        free(s->pes);
        free(s->dma_node_pe);
        free(s->pe_in_batch);
        free(s->pe_hbm_until);
        free(s->channel_attach_pe);
        free(s->sip_link_first);
        free(s->sip_links);
        free(s->links);
        hw__mcast_free(s->mcast);
        topo_graph_fini(&s->graph);
        memset(s, 0, sizeof *s);
}

/* ---- engine costs ---- */

static uint64_t round_up(uint64_t x, uint64_t q)
{
        return q > 1 ? div_up(x, q) * q : x;
}

static uint64_t sat_u64(unsigned __int128 x)
{
        return x > UINT64_MAX ? UINT64_MAX : (uint64_t)x;
}

/* Cycles the array works on an [m, k] x [k, n] op: every fidelity pass
 * over the operands rounded up to whole tiles and whole blocks. Fewer
 * rows of A than a tile are not padded to a tile, only to the array's
 * rows: A's tile is as short as its rows (a Tensix FPU pads a 1x16 in0 to
 * its 8x16 step, at 1/8 of the throughput). */
static uint64_t gemm_work_cycles(const struct topo_pe_gemm *g, uint64_t m, uint64_t n, uint64_t k)
{
        m = round_up(m < g->operand_tile ? m : round_up(m, g->operand_tile), g->array_m);
        n = round_up(round_up(n, g->operand_tile), g->array_n);
        k = round_up(round_up(k, g->operand_tile), g->array_k);
        unsigned __int128 macs = (unsigned __int128)m * n * k * g->fidelity_passes;
        if (macs <= UINT64_MAX - g->macs_per_cycle) /* a 64-bit division, not __udivti3 */
                return ((uint64_t)macs + g->macs_per_cycle - 1) / g->macs_per_cycle;
        return sat_u64((macs + g->macs_per_cycle - 1) / g->macs_per_cycle);
}

/* The operand tiles of an m x k by k x n op: A's and B's. */
static uint64_t gemm_operand_tiles(const struct topo_pe_gemm *g, uint64_t m, uint64_t n, uint64_t k)
{
        uint64_t rt = div_up(m, g->operand_tile), ct = div_up(n, g->operand_tile);
        uint64_t kt = div_up(k, g->operand_tile);
        return sat_mul_u64(kt, sat_add_u64(rt, ct));
}

/* The cycles from the engine's release of a source bank until a refilled
 * tile of an op's operands (operand_bytes of them) is its again: the
 * tile's UNPACR address cycles, its bytes at rate per cycle, and the
 * bank's hand-over beyond them (pe.gemm.src_handover_cycles). */
static uint64_t gemm_bank_refill_cycles(const struct topo_pe_gemm *g, uint64_t m, uint64_t n,
                                        uint64_t k, uint64_t operand_bytes, uint64_t rate)
{
        uint64_t tiles = gemm_operand_tiles(g, m, n, k);
        uint64_t bytes = div_up(tiles ? operand_bytes / tiles : 0, rate);
        return sat_add_u64(sat_add_u64(g->unpack_setup_cycles, bytes), g->src_handover_cycles);
}

/* The cycles the engine waits at the K steps of an op of work cycles with
 * operand_bytes of tiles (pe.gemm.unpack_shared_bytes_per_cycle): a
 * subblock of at least 2 x 2 tiles keeps both banks of one source register
 * for its whole K step (the paired tiles of tt-metal's matmul, each used
 * by every product of its row or column), so the next step's second tile
 * of that source is unpacked from the step's end, while the other unpacker
 * refills its own source (each at the shared rate); the engine does one
 * product meanwhile and then waits for the rest of the refill. */
static uint64_t gemm_refill_cycles(const struct topo_pe_gemm *g, uint64_t m, uint64_t n, uint64_t k,
                                   uint64_t operand_bytes, uint64_t work)
{
        if (!g->unpack_shared_bytes_per_cycle)
                return 0;
        uint64_t rt = div_up(m, g->operand_tile), ct = div_up(n, g->operand_tile);
        uint64_t kt = div_up(k, g->operand_tile);
        if (rt < 2 || ct < 2 || kt == 0)
                return 0;
        uint64_t refill = gemm_bank_refill_cycles(g, m, n, k, operand_bytes,
                                                  g->unpack_shared_bytes_per_cycle);
        uint64_t product = work / sat_mul_u64(sat_mul_u64(rt, ct), kt);
        return refill > product ? sat_mul_u64(kt, refill - product) : 0;
}

/* The cycles the engine waits on an op of rt x ct tiles with one row or
 * column of tiles (tt-metal's matmul: t_dim 1) for the banks of its
 * streamed source (pe.gemm.src_handover_cycles): each tile product takes
 * a new tile of that source, which the unpacker may write only once the
 * engine has given the bank back (an UNPACR waits at its Wait Gate for
 * its bank; the product's end op gives it back), so the bank the next
 * product but one needs is free from the end of the last one, and the
 * engine waits for what its refill takes beyond one product. A 1 x 1 op
 * refills both sources at each product, both unpackers at the shared
 * rate. The ops of more rows and columns hold their reused source's tiles
 * for a K step and pay the hand-over in their refill (gemm_refill_cycles). */
static uint64_t gemm_handover_cycles(const struct topo_pe_gemm *g, uint64_t m, uint64_t n,
                                     uint64_t k, uint64_t a_bytes, uint64_t b_bytes,
                                     uint64_t work)
{
        if (!g->src_handover_cycles || !g->operand_bytes_per_cycle)
                return 0;
        uint64_t rt = div_up(m, g->operand_tile), ct = div_up(n, g->operand_tile);
        uint64_t kt = div_up(k, g->operand_tile);
        if ((rt > 1 && ct > 1) || kt == 0)
                return 0;
        uint64_t rate = rt * ct == 1 && g->unpack_shared_bytes_per_cycle
                                ? g->unpack_shared_bytes_per_cycle
                                : g->operand_bytes_per_cycle;
        /* The streamed source's tiles (LLK: reuse_a when ct >= rt, so B's
         * with one row of A, A's with one column of B), each at its own
         * format's bytes; a 1 x 1 op refills both, the larger binding. */
        uint64_t tile = rt * ct == 1 ? (a_bytes > b_bytes ? a_bytes : b_bytes) / kt
                        : ct >= rt  ? b_bytes / (ct * kt)
                                    : a_bytes / (rt * kt);
        uint64_t all = sat_mul_u64(tile, sat_mul_u64(kt, rt + ct));
        uint64_t refill = gemm_bank_refill_cycles(g, m, n, k, all, rate);
        uint64_t products = sat_mul_u64(sat_mul_u64(rt, ct), kt);
        uint64_t product = work / products;
        return refill > product ? sat_mul_u64(products, refill - product) : 0;
}

/* The instructions tt-metal's matmul (_llk_math_matmul_ in tt-llk's
 * llk_math_matmul.h) has the math thread issue beside its MVMULs on an
 * m x k by k x n op of tiles, at each K step: before each tile product
 * the Dst address (SETC16); after it, at more than one fidelity phase,
 * the MOP's end op that resets the phase (SETRWC); and the moves to the
 * next source banks. With one row or column of tiles in the reused
 * source (t_dim 1) the streamed source's bank is released once, after
 * the last product (SETRWC). Otherwise the products go in pairs of reused
 * tiles t, t + 1: between the two a move of the paired source's bank
 * (SETRWC or CLEARDVALID), after the second a move of both (SETRWC), and
 * after each pair's last product one more (CLEARDVALID). Each takes
 * the thread's one issue slot of its cycle (pe.gemm.math_issue_cycles). */
static uint64_t gemm_math_issue_cycles(const struct topo_pe_gemm *g, uint64_t m, uint64_t n,
                                       uint64_t k)
{
        if (!g->math_issue_cycles)
                return 0;
        uint64_t rt = div_up(m, g->operand_tile), ct = div_up(n, g->operand_tile);
        uint64_t kt = div_up(k, g->operand_tile);
        bool reuse_a = ct >= rt;
        uint64_t t_dim = reuse_a ? rt : ct, rut = reuse_a ? ct : rt;
        uint64_t per_product = 1 + (g->fidelity_passes > 1);
        uint64_t moves = 1;
        if (t_dim > 1) {
                /* Pairs t, t + 1 (an odd last one alone): per reused tile
                 * the move between the two products, if there are two, and
                 * the one after; each pair's last reused tile one more. */
                uint64_t pairs = t_dim / 2, single = t_dim % 2;
                moves = sat_add_u64(sat_mul_u64(pairs, sat_add_u64(sat_mul_u64(rut, 2), 1)),
                                    sat_mul_u64(single, rut + 1));
        }
        uint64_t step = sat_add_u64(sat_mul_u64(sat_mul_u64(rt, ct), per_product), moves);
        return sat_mul_u64(sat_mul_u64(kt, step), g->math_issue_cycles);
}

sim_ps hw_gemm_ps(const struct topo *t, uint64_t m, uint64_t n, uint64_t k)
{
        const struct topo_pe_gemm *g = &t->pe.gemm;
        unsigned __int128 cycles = (unsigned __int128)g->fill_cycles + g->drain_cycles +
                                   gemm_work_cycles(g, m, n, k);
        return topo_cycles_to_ps(sat_u64(cycles), g->clock_hz);
}

/* ceil(log2(n)), n >= 1. */
static uint32_t ceil_log2(uint64_t n)
{
        uint32_t steps = 0;
        while (steps < 64 && (UINT64_C(1) << steps) < n)
                steps++;
        return steps;
}

/* Cycles the lanes work on op over elements: one pass of the lanes, and
 * for a reduction across them the tree that combines their partial
 * results. */
static uint64_t math_work_cycles(const struct topo_pe_math *m, enum topo_op op, uint64_t elements,
                                 bool across_lanes)
{
        uint64_t cpe = m->cycles_per_element[op];
        uint64_t passes = (elements + m->lanes - 1) / m->lanes;
        if (across_lanes)
                passes += ceil_log2(m->lanes);
        return sat_u64((unsigned __int128)passes * cpe);
}

sim_ps hw_math_ps(const struct topo *t, enum topo_op op, uint64_t elements, bool across_lanes)
{
        const struct topo_pe_math *m = &t->pe.math;
        unsigned __int128 cycles = (unsigned __int128)m->latency_cycles[op] +
                                   math_work_cycles(m, op, elements, across_lanes);
        return topo_cycles_to_ps(sat_u64(cycles), m->clock_hz);
}

/* The time of an access of bytes: spread over the banks its lines use,
 * each bank's share at the bank's bandwidth (bank_ps: bytes to ps). */
static sim_ps tcm_ps(const struct topo_tcm *tc, const struct muldiv_by *bank_ps, uint64_t bytes)
{
        uint64_t lines = div_up(bytes, tc->line_bytes);
        uint32_t n = lines < tc->banks ? (uint32_t)lines : tc->banks;
        return n ? muldiv_by_ceil(bank_ps, (bytes + n - 1) / n) : 0;
}

sim_ps hw_tcm_ps(const struct topo *t, uint64_t bytes)
{
        struct muldiv_by bank_ps = muldiv_by_make(1000000000000ull, tcm_bank_bw(&t->pe.tcm));
        return tcm_ps(&t->pe.tcm, &bank_ps, bytes);
}

/* bytes through the banks from at, taking ps (their tcm_ps): the end. */
static sim_ps tcm_book(struct hw_pe *pe, sim_ps at, uint64_t bytes, sim_ps ps)
{
        if (!bytes)
                return at;
        sim_ps end = ev_resource_reserve(&pe->tcm, at, ps, NULL);
        hw_power_book(&pe->sim->power, pe->global_cube, HW_PW_TCM, end - ps, end);
        pe->tcm_bytes += bytes;
        pe->sim->class_bytes[TOPO_EDGE_INTRA_PE] += bytes;
        return end;
}

sim_ps hw_tcm_reserve(struct hw_pe *pe, sim_ps at, uint64_t bytes)
{
        struct hw_sim *s = pe->sim;
        return tcm_book(pe, at, bytes, tcm_ps(&s->topo->pe.tcm, &s->tcm_bank_ps, bytes));
}

/* An op on engine e: busy for work (at least the TCM time of tcm_bytes),
 * the banks serving tcm_bytes from its start; ready latency after both. */
static sim_ps engine_run(struct hw_pe *pe, struct ev_resource *e, enum hw_pw_class pw,
                         sim_ps work, sim_ps latency, uint64_t tcm_bytes, sim_ps at, sim_ps *start)
{
        sim_ps tcm_alone = tcm_ps(&pe->sim->topo->pe.tcm, &pe->sim->tcm_bank_ps, tcm_bytes);
        sim_ps begin, end = ev_resource_reserve(e, at, work > tcm_alone ? work : tcm_alone, &begin);
        hw_power_book(&pe->sim->power, pe->global_cube, pw, begin, end);
        sim_ps tcm_end = tcm_book(pe, begin, tcm_bytes, tcm_alone);
        if (start)
                *start = begin;
        if (unlikely(pe->sim->dep_on)) {
                /* Busy for the work, or for the TCM when that is longer. */
                struct hw_dep *d = &pe->sim->dep;
                *d = (struct hw_dep){ .start = begin,
                                      .end = (tcm_end > end ? tcm_end : end) + latency };
                enum hw_dep_class ec = pw == HW_PW_GEMM ? HW_DEP_GEMM : HW_DEP_MATH;
                d->part[work >= tcm_alone ? ec : HW_DEP_TCM] = end - begin;
                if (work < 2 * tcm_alone && work > 0 && tcm_alone > 0) {
                        /* Twice as fast, the other could bind. */
                        d->pace = work >= tcm_alone ? work : tcm_alone;
                        d->pace_alt = work >= tcm_alone ? tcm_alone : work;
                        d->pace_cls = (uint8_t)(work >= tcm_alone ? ec : HW_DEP_TCM);
                        d->alt_cls = (uint8_t)(work >= tcm_alone ? HW_DEP_TCM : ec);
                }
                d->part[HW_DEP_TCM] += tcm_end > end ? tcm_end - end : 0;
                d->part[HW_DEP_LATENCY] = latency;
        }
        return (tcm_end > end ? tcm_end : end) + latency;
}

sim_ps hw_gemm_run(struct hw_pe *pe, uint64_t m, uint64_t n, uint64_t k, uint64_t tcm_bytes,
                   sim_ps at, sim_ps *start)
{
        return hw_gemm_run_fed(pe, m, n, k, tcm_bytes, 0, 0, at, start);
}

sim_ps hw_gemm_run_fed(struct hw_pe *pe, uint64_t m, uint64_t n, uint64_t k, uint64_t tcm_bytes,
                       uint64_t a_bytes, uint64_t b_bytes, sim_ps at, sim_ps *start)
{
        uint64_t operand_bytes = sat_add_u64(a_bytes, b_bytes);
        /* hw_gemm_ps's figures, its cycles counted once. */
        const struct topo_pe_gemm *g = &pe->sim->topo->pe.gemm;
        uint64_t cycles = gemm_work_cycles(g, m, n, k);
        if (g->operand_tile) {
                cycles = sat_add_u64(cycles, gemm_math_issue_cycles(g, m, n, k));
                uint64_t math = cycles;
                cycles = sat_add_u64(cycles, gemm_refill_cycles(g, m, n, k, operand_bytes, math));
                cycles = sat_add_u64(cycles, gemm_handover_cycles(g, m, n, k, a_bytes, b_bytes,
                                                                   math));
        }
        /* The engine waits for operands it cannot be fed faster. */
        if (g->operand_bytes_per_cycle) {
                uint64_t fed = div_up(operand_bytes, g->operand_bytes_per_cycle);
                if (g->operand_tile)
                        fed = sat_add_u64(fed, sat_mul_u64(gemm_operand_tiles(g, m, n, k),
                                                           g->unpack_setup_cycles));
                if (fed > cycles)
                        cycles = fed;
        }
        sim_ps work = muldiv_by_ceil(&pe->sim->gemm_cycle_ps, cycles);
        sim_ps lone = muldiv_by_ceil(&pe->sim->gemm_cycle_ps,
                                     sat_u64((unsigned __int128)g->fill_cycles + g->drain_cycles +
                                             cycles));
        return engine_run(pe, &pe->gemm, HW_PW_GEMM, work, lone - work, tcm_bytes, at, start);
}

sim_ps hw_math_run(struct hw_pe *pe, enum topo_op op, uint64_t elements, bool across_lanes,
                   uint64_t tcm_bytes, sim_ps at, sim_ps *start)
{
        /* hw_math_ps's figures, its cycles counted once. */
        const struct topo_pe_math *m = &pe->sim->topo->pe.math;
        uint64_t cycles = math_work_cycles(m, op, elements, across_lanes);
        sim_ps work = muldiv_by_ceil(&pe->sim->math_cycle_ps, cycles);
        sim_ps lone = muldiv_by_ceil(&pe->sim->math_cycle_ps,
                                     sat_u64((unsigned __int128)m->latency_cycles[op] + cycles));
        return engine_run(pe, &pe->math, HW_PW_MATH, work, lone - work, tcm_bytes, at, start);
}

static uint32_t node_cube(const struct hw_sim *s, uint32_t node)
{
        const struct topo_node *n = &s->graph.nodes[node];
        return n->cube == TOPO_NONE ? TOPO_NONE : n->sip * s->topo->sip.cubes + n->cube;
}

uint32_t hw_edge_cube(const struct hw_sim *s, uint32_t edge)
{
        const struct topo_edge *e = &s->graph.edges[edge];
        uint32_t c = node_cube(s, e->src);
        return c == TOPO_NONE ? node_cube(s, e->dst) : c;
}

uint64_t hw_sim_bookings(const struct hw_sim *s)
{
        uint64_t n = 0;
        for (uint32_t e = 0; e < s->graph.n_edges; e++)
                n += s->links[e].res.n_requests;
        for (uint32_t c = 0; c < s->n_cubes; c++)
                for (uint32_t ch = 0; ch < s->topo->cube.hbm.channels; ch++)
                        n += s->cubes[c].channels[ch].n_requests;
        for (uint32_t i = 0; i < s->n_pes; i++) {
                const struct hw_pe *pe = &s->pes[i];
                n += pe->dma.n_requests + pe->dma1.n_requests + pe->dma_rx.n_requests +
                     pe->dma1_rx.n_requests + pe->dma_slots.n_requests + pe->gemm.n_requests +
                     pe->math.n_requests + pe->tcm.n_requests;
        }
        return n;
}
