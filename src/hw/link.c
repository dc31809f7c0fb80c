/* hw/link.c: moving bytes over the component graph: links (cut-through,
 * packets, served at arrival) and HBM channels (interleaved), and the PE's
 * engines' costs. See hw.h for the model. */
#include "base/ckd.h"
#include "base/list.h"
#include "base/muldiv.h"
#include "base/util.h"
#include "hw/hw.h"

sim_ps hw_bytes_ps(uint64_t bytes, uint64_t bw_bytes_per_s)
{
        CS_ASSERT(bw_bytes_per_s > 0);
        return muldiv_ceil(bytes, 1000000000000ull, bw_bytes_per_s);
}

/* A fabric packet of payload bytes with its header, and the overhead of
 * the Ethernet frames it is cut into. */
static uint64_t packet_overhead(const struct topo_system *y, uint64_t payload)
{
        uint64_t framed = payload + y->inter_sip_header_bytes;
        uint64_t frames = y->inter_sip_frame_bytes ? div_up(framed, y->inter_sip_frame_bytes) : 1;
        return y->inter_sip_header_bytes + frames * y->inter_sip_frame_overhead_bytes;
}

/* bytes over an inter-SIP link with the fabric's framing: packets of at
 * most p bytes, each with its header, cut into Ethernet frames. */
static uint64_t inter_sip_wire_bytes(const struct topo_system *y, uint64_t bytes, uint64_t p)
{
        if (!p)
                return bytes;
        uint64_t full = bytes / p, rest = bytes % p;
        uint64_t wire = sat_add_u64(bytes, sat_mul_u64(full, packet_overhead(y, p)));
        return rest || !bytes ? sat_add_u64(wire, packet_overhead(y, rest)) : wire;
}

/* The fabric's payload a packet: the transfer's, else the machine's. */
static uint64_t fabric_payload(const struct topo_system *y, uint32_t payload)
{
        uint32_t p = y->inter_sip_packet_bytes;
        return payload && payload < p ? payload : p;
}

uint64_t hw_wire_bytes_at(const struct topo *t, enum topo_edge_class cls, uint64_t bytes,
                          uint32_t payload)
{
        if (cls == TOPO_EDGE_INTER_SIP)
                return inter_sip_wire_bytes(&t->system, bytes,
                                            fabric_payload(&t->system, payload));
        if (cls != TOPO_EDGE_NOC)
                return bytes;
        return bytes + div_up(bytes, t->cube.noc.packet_bytes) * t->cube.noc.header_bytes;
}

uint64_t hw_wire_bytes(const struct topo *t, enum topo_edge_class cls, uint64_t bytes)
{
        return hw_wire_bytes_at(t, cls, bytes, 0);
}

/* A pass of bytes at the link's Ethernet cores: its fabric packets, and
 * the handling of each (system.inter_sip.core_ns). */
static void eth_costs(const struct hw_sim *s, struct hw_link *l, uint64_t bytes)
{
        uint64_t p = fabric_payload(&s->topo->system, s->fabric_payload);
        l->last_packets = p && bytes ? div_up(bytes, p) : 1;
}

/* The reverse edge's demand on the link's Ethernet cores within [w0,
 * w1), ps: over each of its passes' time on the wire there, the handling
 * its packets would need at the wire's pace (its work over its drain),
 * whether the pass was slowed or not. */
static sim_ps eth_reverse_demand(const struct hw_link *r, sim_ps w0, sim_ps w1)
{
        sim_ps demand = 0;
        for (uint32_t i = 0; i < HW_ETH_RECENT; i++) {
                const struct hw_eth_pass *p = &r->recent[i];
                sim_ps lo = p->begin > w0 ? p->begin : w0, hi = p->end < w1 ? p->end : w1;
                if (hi > lo && p->drain)
                        demand += (sim_ps)((unsigned __int128)p->work * (hi - lo) / p->drain);
        }
        return demand;
}

/* The link's Ethernet cores handle both directions' packets (core_ns
 * each), shared as a processor: this pass's demand (its packets at the
 * wire's pace) and the reverse's over the last core_horizon_ns add up,
 * and past the cores' capacity the pass's packets follow each other that
 * much slower; its end moves to match. Throughput only: an idle reverse
 * direction, or one packet, costs nothing. The reverse's load is taken
 * from the recent past, not from its bookings ahead, so neither direction
 * gains by booking first; senders book at most system.inter_sip.slots
 * packets ahead of the wire, so the past is a fair guess. */
static void eth_shared(struct hw_sim *s, struct hw_link *l, sim_ps drain, sim_ps begin,
                       sim_ps *end)
{
        const struct topo_system *y = &s->topo->system;
        uint64_t n = l->last_packets;
        sim_ps pk = y->inter_sip_core_ps, horizon = y->inter_sip_core_horizon_ps;
        if (!horizon)
                horizon = HW_ETH_HORIZON_PS;
        sim_ps now = ev_now(&s->ev), w0 = now > horizon ? now - horizon : 0, span = now - w0;
        sim_ps wp = drain / n;
        if (n > 1 && span > 0 && wp > 0) {
                /* the demand over the span, in ps of the cores' time */
                sim_ps want = (sim_ps)((unsigned __int128)pk * span / wp) +
                              eth_reverse_demand(&s->links[l->rev], w0, now);
                if (want > span)
                        *end += (sim_ps)((unsigned __int128)(n - 1) * wp * (want - span) / span);
        }
        l->recent[l->recent_at] = (struct hw_eth_pass){ begin, *end, (sim_ps)(n * pk), drain };
        l->recent_at = (l->recent_at + 1) % HW_ETH_RECENT;
}

/* The first inter-SIP pass of a transfer (system.inter_sip.slots), whose
 * wire is done with it at end: its last packet may go into the router's
 * slots once the wire has at most `slots` full packets' time left. */
__attribute__((noinline)) static void fabric_admit(struct hw_sim *s, const struct hw_link *l,
                                                   uint64_t bytes, sim_ps end)
{
        uint64_t p = fabric_payload(&s->topo->system, s->fabric_payload);
        uint64_t wire = hw_wire_bytes_at(s->topo, l->cls, p ? p : bytes, s->fabric_payload);
        sim_ps ahead = (sim_ps)sat_mul_u64(muldiv_by_ceil(&l->drain, wire),
                                           s->topo->system.inter_sip_slots);
        s->fabric_admit = end > ahead ? end - ahead : 1;
}

/* Inlined into the walk of a route, where most passes are made. */
__attribute__((always_inline)) static inline void link_pass(struct hw_sim *s, uint32_t edge,
                                                            uint64_t bytes, struct hw_front *f)
{
        /* Everything of the edge it needs is in its link (one place in
         * memory: a pass touched three). */
        struct hw_link *l = &s->links[edge];
        if (bytes != l->last_bytes || s->fabric_payload != l->last_payload) {
                l->last_drain = (l->overlap ? 0 : l->msg_ps) +
                                muldiv_by_ceil(&l->drain, hw_wire_bytes_at(s->topo, l->cls, bytes,
                                                                           s->fabric_payload));
                if (l->recent)
                        eth_costs(s, l, bytes);
                l->last_bytes = bytes;
                l->last_payload = s->fabric_payload;
        }
        sim_ps drain = l->last_drain, at = f->head;
        /* the Ethernet core handles the message, then the wire carries it */
        if (l->overlap)
                at = ev_resource_reserve(&l->core, at, l->msg_ps, NULL);
        sim_ps begin, end = ev_resource_reserve(&l->res, at, drain, &begin);
        if (l->recent) {
                /* the wire waits for packets the cores are late with */
                sim_ps wire_end = end;
                eth_shared(s, l, drain, begin, &end);
                if (end > wire_end)
                        ev_resource_reserve(&l->res, wire_end, end - wire_end, NULL);
        }
        l->n_bytes += bytes;
        s->class_bytes[l->cls] += bytes;
        if (l->pw != HW_PW_COUNT)
                hw_power_book(&s->power, l->cube, l->pw, begin, end);
        if (unlikely(s->on_busy))
                s->on_busy(s->on_busy_ctx, HW_BUSY_LINK, 0, edge, begin, end, bytes);
        if (l->cls == TOPO_EDGE_INTER_SIP && !s->fabric_admit && s->topo->system.inter_sip_slots)
                fabric_admit(s, l, bytes, end);
        sim_ps hop = l->hop_ps;
        f->head = begin + hop;
        f->tail = (end > f->tail ? end : f->tail) + hop;
}

void hw__link_pass(struct hw_sim *s, uint32_t edge, uint64_t bytes, struct hw_front *f)
{
        link_pass(s, edge, bytes, f);
}

sim_ps hw__front_arrival(const struct hw_front *f)
{
        return f->tail > f->head ? f->tail : f->head;
}

/* bytes over route[n] from start: their arrival. */
static sim_ps walk(struct hw_sim *s, const uint32_t *route, uint32_t n, uint64_t bytes,
                   sim_ps start)
{
        struct hw_front f = { .head = start, .tail = start };
        for (uint32_t i = 0; i < n; i++)
                link_pass(s, route[i], bytes, &f);
        if (unlikely(s->dep_on)) {
                s->dep_route = route;
                s->dep_route_n = n;
        }
        return hw__front_arrival(&f);
}

/* Of d's time, ps of class pace (an HBM transfer's two rates: the HBM's
 * fair share and the DMA's) went at rate; at the other class's, alt_rate,
 * they would take pace_alt. */
static void dep_paced(struct hw_dep *d, enum hw_dep_class pace, sim_ps ps, uint64_t rate,
                      uint64_t alt_rate)
{
        d->pace = ps;
        d->pace_alt = (sim_ps)((unsigned __int128)ps * rate / (alt_rate ? alt_rate : 1));
        d->pace_cls = (uint8_t)pace;
        d->alt_cls = pace == HW_DEP_HBM ? HW_DEP_DMA : HW_DEP_HBM;
}

/* How long a request that arrived at `at` waited before its service began. */
static sim_ps queued(sim_ps begin, sim_ps at)
{
        return begin > at ? begin - at : 0;
}

/* An HBM access from start (dep_on): its split so far none, and what its
 * pieces share: their pacing, at rate, the HBM's fair share (share) or
 * the DMA's (dma_bw), whichever is slower, on the data path pace (or
 * none). */
__attribute__((noinline)) static void dep_begin(struct hw_sim *s, struct ev_resource *pace,
                                                uint64_t rate, uint64_t dma_bw, uint64_t share,
                                                bool write, sim_ps start)
{
        s->dep_access = (struct hw_dep){ .start = start, .end = start };
        /* The pacing is the HBM's when its fair share is the slower. */
        enum hw_dep_class pc = rate < dma_bw ? HW_DEP_HBM : HW_DEP_DMA;
        s->dep_piece = (struct hw_dep_piece){ .pace_path = pace, .rate = rate,
                                              .alt_rate = pc == HW_DEP_HBM ? dma_bw : share,
                                              .start = start, .pace = (uint8_t)pc,
                                              .write = write };
}

/* A piece of the access that ends last so far: its figures for dep_piece,
 * which splits only the last such piece of the access. */
__attribute__((noinline)) static void dep_keep(struct hw_sim *s, sim_ps at, sim_ps served,
                                               sim_ps t, sim_ps queue)
{
        struct hw_dep_piece *p = &s->dep_piece;
        p->at = at;
        p->served = served;
        p->t = t;
        p->queue = queue;
        p->set = true;
        /* The route walked last: its hop latencies, its HBM edges' bursts. */
        sim_ps hops = 0, hbm = 0;
        for (uint32_t i = 0; i < s->dep_route_n; i++) {
                const struct hw_link *l = &s->links[s->dep_route[i]];
                hops += l->hop_ps;
                if (l->cls == TOPO_EDGE_HBM)
                        hbm += l->last_drain;
        }
        p->hops = hops;
        p->hbm = hbm;
}

/* The critical path's split of an HBM piece (hbm_access) that ends last,
 * from the access's start: paced until at (class pace), then a read is
 * served by its channel until served and carried until t; a write is
 * carried until served and then served until t. The carriage is the
 * route's hop latencies, the bursts over the channel's own edge, the rest
 * NoC bandwidth and queues. queue: of the channel's time, the wait there
 * behind other requests. */
static void dep_piece(struct hw_sim *s)
{
        const struct hw_dep_piece *p = &s->dep_piece;
        if (!p->set)
                return;
        if (p->pace_path) {
                /* pace is any of the PE's data paths (dma_rx, dma1 ...) */
                struct hw_pe *pp = hw_path_pe(p->pace_path);
                pp->dep_pace = p->pace;
                pp->dep_pace_rate = p->rate;
                pp->dep_pace_alt = p->alt_rate;
        }
        struct hw_dep *d = &s->dep_access;
        *d = (struct hw_dep){ .start = p->start, .end = p->t };
        d->part[p->pace] = p->at - p->start;
        /* Paced at the HBM's fair share, the piece waits at its channel
         * behind the other streams of the cube, paced at the same share:
         * that wait is theirs, it shrinks as their pacing does (to the
         * DMA's rate at most), not as the channel's own service. */
        dep_paced(d, p->pace, p->at - p->start + (p->pace == HW_DEP_HBM ? p->queue : 0), p->rate,
                  p->alt_rate);
        sim_ps carried = p->write ? p->served - p->at : p->t - p->served;
        sim_ps lat = carried < p->hops ? carried : p->hops;
        /* The channel's own edge moves its bursts at the channel's rate. */
        sim_ps burst = carried - lat < p->hbm ? carried - lat : p->hbm;
        d->part[HW_DEP_LATENCY] += lat;
        d->part[HW_DEP_HBM] += burst;
        d->part[HW_DEP_NOC] += carried - lat - burst;
        d->part[HW_DEP_HBM] += p->write ? p->t - p->served : p->served - p->at;
}

/* The route from src to dst in *route, *n; false (the loop's out-of-memory
 * flag set) if it cannot be had. */
static bool route_of(struct hw_sim *s, uint32_t src, uint32_t dst, const uint32_t **route,
                     uint32_t *n)
{
        if (topo_route(&s->graph, src, dst, route, n) < 0) {
                ev_set_nomem(&s->ev);
                return false;
        }
        return true;
}

sim_ps hw_xfer(struct hw_sim *s, uint32_t src, uint32_t dst, uint64_t bytes, sim_ps start)
{
        const uint32_t *route;
        uint32_t n;
        if (!route_of(s, src, dst, &route, &n))
                return TOPO_PS_NONE;
        return walk(s, route, n, bytes, start);
}

sim_ps hw_xfer_flit(struct hw_sim *s, uint32_t src, uint32_t dst, uint64_t bytes, sim_ps start)
{
        const uint32_t *route;
        uint32_t n;
        if (!route_of(s, src, dst, &route, &n))
                return TOPO_PS_NONE;
        sim_ps at = start;
        for (uint32_t i = 0; i < n; i++) {
                struct hw_link *l = &s->links[route[i]];
                at += l->msg_ps +
                      muldiv_by_ceil(&l->drain, hw_wire_bytes_at(s->topo, l->cls, bytes,
                                                                 s->fabric_payload)) +
                      l->hop_ps;
                l->n_bytes += bytes;
                s->class_bytes[l->cls] += bytes;
        }
        return at;
}

/* bytes between a cube's channel ch and node (to the channel when
 * to_channel), from start: their arrival, or TOPO_PS_NONE (no memory).
 * The route of a PE of the cube is kept in the cube's table (looked up
 * once, not once a piece: the table of the graph's routes is large and
 * every probe of it missed the cache); any other node's is looked up. */
static sim_ps channel_xfer(struct hw_sim *s, struct hw_cube *c, uint32_t ch, uint32_t node,
                           bool to_channel, uint64_t bytes, sim_ps start)
{
        uint32_t ch_node = c->first_channel_node + ch;
        uint32_t src = to_channel ? node : ch_node, dst = to_channel ? ch_node : node;
        uint32_t pe = s->dma_node_pe[node]; /* global PE + 1, or 0 */
        uint32_t channels = s->topo->cube.hbm.channels;
        /* The PE's index in this cube (wraps to a large number below it). */
        uint32_t local = pe - 1 - (uint32_t)(c - s->cubes) * s->pes_per_cube;
        if (!pe || local >= s->pes_per_cube)
                return hw_xfer(s, src, dst, bytes, start);
        if (!c->routes && !(c->routes = calloc((size_t)s->pes_per_cube * channels * 2,
                                               sizeof *c->routes))) {
                ev_set_nomem(&s->ev);
                return TOPO_PS_NONE;
        }
        struct hw_route *r = &c->routes[(local * channels + ch) * 2 + to_channel];
        if (!r->known) {
                if (topo_route(&s->graph, src, dst, &r->edges, &r->n) < 0) {
                        ev_set_nomem(&s->ev);
                        return TOPO_PS_NONE;
                }
                r->known = true;
        }
        return walk(s, r->edges, r->n, bytes, start);
}

/* The size of the pieces an HBM request of bytes is cut into: NoC
 * packets, but at most HBM_PIECES_PER_CHANNEL per channel (bounds the
 * work of a large request). */
#define HBM_PIECES_PER_CHANNEL 4
uint64_t hw_hbm_piece_bytes(const struct topo *t, uint64_t bytes)
{
        uint64_t most = (uint64_t)t->cube.hbm.channels * HBM_PIECES_PER_CHANNEL;
        uint64_t even = (bytes + most - 1) / most;
        return even > t->cube.noc.packet_bytes ? even : t->cube.noc.packet_bytes;
}

/* The channel after ch of n (no division: a piece's step). */
static inline uint32_t next_channel(uint32_t ch, uint32_t n)
{
        return ch + 1 == n ? 0 : ch + 1;
}

/* Move bytes between the cube's HBM and node as pieces (hw_hbm_piece_bytes)
 * interleaved over the channels, from the channel after the one the cube's
 * last request started on (requests issued together start on different
 * channels, as a hashed address map spreads them). The requesting DMA
 * engine issues its pieces at its rate, at most its fair share of the
 * cube's HBM (the channels arbitrate fairly between the PEs: with n PEs
 * streaming, each gets 1/n), so the channels interleave the pieces of every
 * requester instead of serving one request whole. With pace (the engine's
 * data path), each piece holds it for its bytes at that rate, so the PE's
 * descriptors share it; without, piece i is issued at start + its offset /
 * the rate. A read piece is served by its channel, then carried to node; a
 * write piece is carried to its channel, then served. fixed: 0, or the one
 * channel + 1 that holds the bytes (every piece goes there). A channel
 * serves the PE at its attach point at cube.hbm.near_efficiency_pct of its
 * rate, every other requester at far_efficiency_pct. */
static sim_ps hbm_access(struct hw_sim *s, struct hw_cube *c, uint32_t node, uint64_t bytes,
                         sim_ps start, bool write, struct ev_resource *pace, uint32_t fixed)
{
        const struct topo_hbm *h = &s->topo->cube.hbm;
        uint64_t size = hw_hbm_piece_bytes(s->topo, bytes);
        uint64_t dma_bw = hw_dma_bw(s->topo);
        sim_ps done = start, at = start, paced = 0, crit = start;
        /* Streaming: PEs whose HBM copies hold their data paths past start,
         * or in this instant's batch (a data path busy with TCM copies or
         * receive drains takes no share of the HBM). */
        size_t first = (size_t)(c - s->cubes) * s->pes_per_cube;
        size_t self = pace ? hw_path_pe(pace)->global : SIZE_MAX;
        uint64_t streaming = 1;
        for (size_t i = first; pace && i < first + s->pes_per_cube; i++)
                if (i != self && (s->pe_in_batch[i] || s->pe_hbm_until[i] > start))
                        streaming++;
        uint64_t share = h->channel_bw_bytes_per_s * h->channels / streaming;
        /* A request held in one channel (fixed) takes no share of the
         * others: that channel alone arbitrates between its requesters. */
        uint64_t rate = share < dma_bw && !fixed ? share : dma_bw;
        if (unlikely(s->dep_on))
                dep_begin(s, pace, rate, dma_bw, share, write, start);
        /* A tensor held in one channel (fixed = its index + 1) stays there;
         * else the pieces go round the channels. */
        uint32_t ch = fixed ? fixed - 1 : c->next_channel, step = fixed ? 0 : 1;
        if (!fixed)
                c->next_channel = next_channel(ch, h->channels);
        /* The requester's local PE index, to tell which channels it sits next to. */
        uint32_t pe = s->dma_node_pe[node];
        uint32_t local = pe ? pe - 1 - (uint32_t)(c - s->cubes) * s->pes_per_cube : UINT32_MAX;

        /* Every piece but maybe the last is whole: its times once. */
        sim_ps whole_paced = pace ? hw_bytes_ps(size, rate) + hw_dma_request_ps(s->topo, size)
                                  : 0;
        for (uint64_t off = 0; off < bytes; off += size, ch = step ? next_channel(ch, h->channels)
                                                                   : ch) {
                uint64_t b = bytes - off < size ? bytes - off : size;
                if (pace) {
                        sim_ps e = ev_resource_reserve(pace, at,
                                                       b == size ? whole_paced
                                                                 : hw_bytes_ps(b, rate) +
                                                                   hw_dma_request_ps(s->topo, b),
                                                       &at);
                        if (e > done)
                                done = e;
                        if (e > paced)
                                paced = e;
                } else {
                        at = start + hw_bytes_ps(off, rate);
                }
                bool near = local != UINT32_MAX && s->channel_attach_pe[ch] == local;
                sim_ps service = muldiv_by_ceil(near ? &s->channel_near_ps
                                                        : &s->channel_far_ps, b);
                sim_ps t, begin, mid;
                if (write) {
                        t = channel_xfer(s, c, ch, node, true, b, at);
                        mid = t == TOPO_PS_NONE ? at : t;
                        t = ev_resource_reserve(&c->channels[ch], mid, service, &begin);
                } else {
                        mid = ev_resource_reserve(&c->channels[ch], at, service, &begin);
                        t = channel_xfer(s, c, ch, node, false, b, mid);
                        if (t == TOPO_PS_NONE)
                                t = mid;
                }
                if (unlikely(s->dep_on) && (t >= crit || paced >= crit)) {
                        if (t >= paced)
                                dep_keep(s, at, mid, t, queued(begin, write ? mid : at));
                        else
                                dep_keep(s, paced, paced, paced, 0);
                        crit = t > paced ? t : paced;
                }
                hw_power_book(&s->power, c->sip * s->topo->sip.cubes + c->cube, HW_PW_HBM, begin,
                              begin + service);
                if (unlikely(s->on_busy))
                        s->on_busy(s->on_busy_ctx, HW_BUSY_HBM,
                                   c->sip * s->topo->sip.cubes + c->cube, ch, begin,
                                   begin + service, b);
                if (t > done)
                        done = t;
        }
        if (unlikely(s->dep_on))
                dep_piece(s);
        if (pace) {
                if (paced > s->pe_hbm_until[self])
                        s->pe_hbm_until[self] = paced;
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
        return hbm_access(s, c, dst_node, bytes, start, false, NULL, 0);
}

sim_ps hw_hbm_write(struct hw_sim *s, struct hw_cube *c, uint32_t src_node, uint64_t bytes,
                    sim_ps start)
{
        return hbm_access(s, c, src_node, bytes, start, true, NULL, 0);
}

uint64_t hw_dma_bw(const struct topo *t)
{
        const struct topo_pe_dma *dma = &t->pe.dma;
        if (!dma->thread_nocs || dma->thread_nocs >= dma->channels)
                return dma->bw_bytes_per_s;
        uint64_t bw = (uint64_t)((unsigned __int128)dma->bw_bytes_per_s * dma->thread_nocs /
                                 dma->channels);
        return bw ? bw : 1;
}

const char hw_dma1_name[] = "pe_dma_noc1";
const char hw_dma_rx_name[] = "pe_dma_rx";
const char hw_dma1_rx_name[] = "pe_dma_noc1_rx";

struct hw_pe *hw_path_pe(struct ev_resource *path)
{
        if (path->name == hw_dma1_name)
                return container_of(path, struct hw_pe, dma1);
        if (path->name == hw_dma_rx_name)
                return container_of(path, struct hw_pe, dma_rx);
        if (path->name == hw_dma1_rx_name)
                return container_of(path, struct hw_pe, dma1_rx);
        return container_of(path, struct hw_pe, dma);
}

unsigned hw_dma_nocs(const struct topo *t)
{
        const struct topo_pe_dma *dma = &t->pe.dma;
        return dma->thread_nocs && dma->channels >= 2 * dma->thread_nocs ? 2 : 1;
}

uint64_t hw_noc_packets(const struct topo *t, uint64_t bytes)
{
        return div_up(bytes ? bytes : 1, t->cube.noc.packet_bytes);
}

sim_ps hw_dma_request_ps(const struct topo *t, uint64_t bytes)
{
        if (!t->pe.dma.request_ps)
                return 0;
        return sat_mul_u64(hw_noc_packets(t, bytes), t->pe.dma.request_ps);
}

sim_ps hw_dma_ps(const struct topo *t, uint64_t bytes)
{
        return t->pe.dma.setup_ps + hw_dma_request_ps(t, bytes) + hw_bytes_ps(bytes, hw_dma_bw(t));
}

/* A descriptor slot from at for a transfer whose data path time is data:
 * held for the setup and that time (the descriptor's time on an idle
 * engine). Returns its start. */
static sim_ps dma_slot(struct hw_pe *pe, sim_ps at, sim_ps data)
{
        const struct topo_pe_dma *dma = &pe->sim->topo->pe.dma;
        sim_ps begin;
        ev_resource_reserve(&pe->dma_slots, at, dma->setup_ps + data, &begin);
        return begin;
}

sim_ps hw_dma_reserve(struct hw_pe *pe, unsigned noc, sim_ps at, uint64_t bytes, bool setup,
                      sim_ps extra_ps, sim_ps *start)
{
        const struct topo_pe_dma *dma = &pe->sim->topo->pe.dma;
        sim_ps begin = at, from = at;
        /* Each packet costs its request, at the sender's interface and at the
         * receiver's (a read's requests are the receiving core's). */
        sim_ps data = muldiv_by_ceil(&pe->sim->dma_ps, bytes) +
                      hw_dma_request_ps(pe->sim->topo, bytes);
        if (setup) {
                data += extra_ps;
                begin = dma_slot(pe, at, data);
                from = begin + dma->setup_ps;
        }
        sim_ps end = ev_resource_reserve(hw_dma_path(pe, noc, !setup), from, data, NULL);
        hw_power_book(&pe->sim->power, pe->global_cube, HW_PW_DMA, end - data, end);
        if (start)
                *start = begin;
        return end > from ? end : from;
}

sim_ps hw_hbm_span_access(struct hw_sim *s, const struct hw_hbm_span *span, uint32_t local,
                          uint32_t node, uint64_t bytes, bool write, sim_ps start,
                          struct ev_resource *pace)
{
        if (span->kind == HW_HOME_LOCAL)
                return hbm_access(s, &s->cubes[local], node, bytes, start, write, pace,
                                  span->channel_plus1);
        sim_ps done = start;
        struct hw_dep best = { .start = start, .end = start };
        uint32_t n = span->kind == HW_HOME_ALL ? s->n_cubes : span->n_parts;
        uint64_t left = bytes;
        for (uint32_t i = 0; i < n && left; i++) {
                uint64_t b;
                uint32_t c;
                if (span->kind == HW_HOME_ALL) {
                        c = i;
                        b = bytes / n + (i < bytes % n);
                } else {
                        c = span->cube[i];
                        b = i + 1 == n ? left
                                       : (uint64_t)((unsigned __int128)bytes * span->share[i] /
                                                    (span->total ? span->total : 1));
                }
                if (b > left)
                        b = left;
                left -= b;
                if (!b)
                        continue;
                if (c != local)
                        s->hbm_remote_bytes += b;
                sim_ps t = hbm_access(s, &s->cubes[c], node, b, start, write, pace,
                                      span->channel_plus1);
                if (t > done) {
                        done = t;
                        best = s->dep_access;
                }
        }
        s->dep_access = best;        /* the cube whose share ended last */
        return done;
}

/* Add the last HBM access's split to d (dep_on). */
static void dep_add_access(struct hw_sim *s, struct hw_dep *d)
{
        const struct hw_dep *a = &s->dep_access;
        for (int c = 0; c < HW_DEP_COUNT; c++)
                d->part[c] += a->part[c];
        if (a->pace_cls && (!d->pace_cls || d->pace_cls == a->pace_cls)) {
                d->pace += a->pace;
                d->pace_alt += a->pace_alt;
                d->pace_cls = a->pace_cls;
                d->alt_cls = a->alt_cls;
        }
}

sim_ps hw_dma_copy(struct hw_pe *pe, const struct hw_hbm_span *from, const struct hw_hbm_span *to,
                   uint64_t bytes, sim_ps at, sim_ps *start)
{
        return hw_dma_copy_on(pe, 0, from, to, bytes, at, start);
}

sim_ps hw_dma_copy_on(struct hw_pe *pe, unsigned noc, const struct hw_hbm_span *from,
                      const struct hw_hbm_span *to, uint64_t bytes, sim_ps at, sim_ps *start)
{
        struct hw_sim *s = pe->sim;
        /* A read from HBM comes in; a write to it, or a TCM copy, goes out. */
        struct ev_resource *path = hw_dma_path(pe, noc, from != NULL);
        uint32_t cube = pe->global / s->pes_per_cube;
        sim_ps begin = dma_slot(pe, at, muldiv_by_ceil(&s->dma_ps, bytes));
        sim_ps t = begin + s->topo->pe.dma.setup_ps;
        /* The TCM side of the copy: what it reads there and what it writes. */
        sim_ps tcm_end = hw_tcm_reserve(pe, t, (from ? 0 : bytes) + (to ? 0 : bytes));
        /* The critical path's split: the setup is a fixed latency. */
        struct hw_dep d = { .start = begin };
        d.part[HW_DEP_LATENCY] = t - begin;
        /* The data path paces the HBM side (reads, else writes), or moves a
         * TCM-to-TCM copy itself. */
        if (from) {
                t = hw_hbm_span_access(s, from, cube, pe->node_dma, bytes, false, t, path);
                if (unlikely(s->dep_on))
                        dep_add_access(s, &d);
        }
        if (to) {
                t = hw_hbm_span_access(s, to, cube, pe->node_dma, bytes, true, t,
                                       from ? NULL : path);
                if (unlikely(s->dep_on))
                        dep_add_access(s, &d);
        }
        if (!from && !to) {
                sim_ps e = ev_resource_reserve(path, t,
                                               muldiv_by_ceil(&s->dma_ps, bytes),
                                               NULL);
                /* Its own time on the data path, and the wait there behind
                 * the PE's transfers, paced as the last of them was. */
                sim_ps own = muldiv_by_ceil(&s->dma_ps, bytes), waited = e > t ? e - t : 0;
                d.part[HW_DEP_DMA] = waited < own ? waited : own;
                sim_ps behind = waited - d.part[HW_DEP_DMA];
                d.part[pe->dep_pace ? pe->dep_pace : HW_DEP_DMA] += behind;
                /* That wait shrinks as those transfers do: paced like them. */
                if (pe->dep_pace && behind)
                        dep_paced(&d, pe->dep_pace, behind, pe->dep_pace_rate, pe->dep_pace_alt);
                t = e > t ? e : t;
        }
        d.part[HW_DEP_TCM] = t < tcm_end ? tcm_end - t : 0;
        if (t < tcm_end)
                t = tcm_end;
        if (start)
                *start = begin;
        if (unlikely(s->dep_on)) {
                d.end = t;
                s->dep = d;
        }
        return t;
}

/* The end of an instant: place the cube's batch of HBM copies, every PE in
 * it counted as streaming. */
static void place_batch(struct ev_loop *ev, struct ev_event *e)
{
        (void)ev;
        struct hw_cube *c = container_of(e, struct hw_cube, batch_ev);
        struct hw_sim *s = c->sim;
        struct hw_dma_req *list = c->batch;
        c->batch = c->batch_tail = NULL;
        for (struct hw_dma_req *r = list; r; r = r->next)
                s->pe_in_batch[r->pe->global] = true;
        while (list) {
                struct hw_dma_req *r = list;
                list = r->next;
                sim_ps start, end = hw_dma_copy_on(r->pe, r->noc, r->from_hbm ? r->from_home : NULL,
                                                r->to_hbm ? r->to_home : NULL, r->bytes, r->at,
                                                &start);
                s->pe_in_batch[r->pe->global] = false;
                r->done(r, start, end);
        }
}

void hw_dma_copy_later(struct hw_dma_req *req)
{
        if (!req->from_hbm && !req->to_hbm) {
                sim_ps start, end = hw_dma_copy_on(req->pe, req->noc, NULL, NULL, req->bytes,
                                                   req->at, &start);
                req->done(req, start, end);
                return;
        }
        struct hw_cube *c = hw_pe_cube(req->pe);
        LIST_APPEND(c->batch, c->batch_tail, req, next);
        if (c->batch == req) {
                c->batch_ev.fn = place_batch;
                ev_schedule(&req->pe->sim->ev, &c->batch_ev, 0);
        }
}
