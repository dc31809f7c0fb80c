/* topo/topo_graph.c: a machine's parameters -> its component graph.
 *
 * Nodes are numbered arithmetically (see struct topo_graph), so lookups by
 * (kind, sip, cube, index) cost nothing. Edges are made in a fixed order:
 * per SIP, per cube: per PE its ten intra-PE edges then its NoC port (both
 * ways); the mesh links per router (E, W, S, N); the HBM channels' attach
 * edges; M_CPU <-> the gateway router; then per SIP the host links
 * (IO_CPU <-> each M_CPU) and the inter-cube links; last the inter-SIP
 * links. Attachments:
 *   - PE p's DMA <-> router p (the PE's NoC port);
 *   - HBM channel ch <-> router (row (ch/2) % rows, col 0 if ch is even,
 *     cols-1 if odd): the channels line the west and east edges of the
 *     mesh, like HBM PHYs on two sides of a die, so HBM traffic enters the
 *     mesh through 2 * rows routers and 2 * rows links in each direction;
 *     or, when the file lists cube.hbm.attach, the router at
 *     attach[ch % count] (a DRAM tile's position on the NoC);
 *   - a torus (either shape) adds the wrap-around links: the E link of the
 *     last column goes to column 0, and so on, so every router has all four
 *     out-links along an axis of two or more routers;
 *   - M_CPU <-> the gateway router (router 0), with the mesh's hop latency
 *     and link bandwidth;
 *   - IO_CPU <-> each M_CPU of its SIP (class host);
 *   - inter-cube links between the gateway routers of neighbouring cubes
 *     (ring or full); inter-SIP links between the gateway routers of
 *     cube 0 of neighbouring SIPs.
 * Every link that carries traffic both ways is two directed edges. */
#include "topo/topo_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/ckd.h"
#include "base/util.h"

enum { DIR_E, DIR_W, DIR_S, DIR_N };

/* Each direction's step in rows and in columns. */
static const struct {
        int rows, cols;              /* -1, 0 or +1 */
} dir_step[4] = {
        [DIR_E] = { 0, 1 }, [DIR_W] = { 0, -1 }, [DIR_S] = { 1, 0 }, [DIR_N] = { -1, 0 },
};

/* The position one step (-1, 0, +1) from at on an axis of n routers:
 * false past the axis's end on a mesh (a torus wraps) or for a step on an
 * axis of one router. */
static bool axis_step(uint32_t at, uint32_t n, int step, bool wrap, uint32_t *to)
{
        *to = at;
        if (step == 0)
                return true;
        if (n < 2 || (!wrap && (step > 0 ? at + 1 == n : at == 0)))
                return false;
        *to = step > 0 ? (at + 1) % n : (at + n - 1) % n;
        return true;
}

static const char *const kind_names[TOPO_NODE_KIND_COUNT] = {
        "io_cpu", "m_cpu", "hbm_channel", "router", "pe_cpu", "pe_dma", "pe_gemm", "pe_math", "tcm",
};
static const char *const pe_suffix[5] = { "cpu", "dma", "gemm", "math", "tcm" };
static const char *const class_names[TOPO_EDGE_CLASS_COUNT] = {
        "intra_pe", "noc", "hbm", "inter_cube", "inter_sip", "host",
};

const char *topo_node_kind_name(enum topo_node_kind k)
{
        return (unsigned)k < TOPO_NODE_KIND_COUNT ? kind_names[k] : "?";
}

const char *topo_edge_class_name(enum topo_edge_class c)
{
        return (unsigned)c < TOPO_EDGE_CLASS_COUNT ? class_names[c] : "?";
}

/* The pairs of peers 0..n-1 that net links (cols: a mesh's row length),
 * in order; fills pair[2 * i], pair[2 * i + 1] when pair is not NULL.
 * Returns their count. */
static uint64_t net_pairs(uint32_t n, enum topo_net net, uint32_t cols, uint32_t *pair)
{
        uint64_t k = 0;
#define PAIR(a, b) do { if (pair) { pair[2 * k] = (a); pair[2 * k + 1] = (b); } k++; } while (0)
        if (n <= 1)
                return 0;
        switch (net) {
        case TOPO_NET_FULL:
                for (uint32_t i = 0; i < n; i++)
                        for (uint32_t j = i + 1; j < n; j++)
                                PAIR(i, j);
                break;
        case TOPO_NET_RING:
        case TOPO_NET_LINE:
                for (uint32_t i = 0; i + 1 < n; i++)
                        PAIR(i, i + 1);
                if (net == TOPO_NET_RING && n > 2)
                        PAIR(n - 1, 0);
                break;
        case TOPO_NET_MESH:
                for (uint32_t i = 0; cols && i < n; i++) {
                        if ((i + 1) % cols != 0 && i + 1 < n)
                                PAIR(i, i + 1);
                        if (i + cols < n)
                                PAIR(i, i + cols);
                }
                break;
        }
#undef PAIR
        return k;
}

/* Directed edges of the net (cube nets: one per pair and direction). */
static uint64_t net_edges(uint64_t n, enum topo_net net)
{
        return 2 * net_pairs((uint32_t)n, net, 0, NULL);
}

/* Inter-SIP links per neighbouring pair, and the graph edges per pair:
 * with ports each link is an edge pair of its own, else the pair's links
 * are one edge pair of links x the bandwidth. */
static uint32_t sip_links(const struct topo *t)
{
        return t->system.inter_sip_links ? t->system.inter_sip_links : 1;
}

static uint64_t sip_net_edges(const struct topo *t)
{
        uint64_t pairs = net_pairs(t->system.sips, t->system.sip_net, t->system.mesh_cols, NULL);
        return 2 * pairs * (t->system.inter_sip_ports.n ? sip_links(t) : 1);
}

void topo_graph_size(const struct topo *t, uint64_t *n_nodes, uint64_t *n_edges,
                     uint64_t *bytes)
{
        uint64_t sips = t->system.sips, cubes = t->sip.cubes, ch = t->cube.hbm.channels;
        uint64_t rows = t->cube.noc.rows, cols = t->cube.noc.cols, r = rows * cols;
        uint64_t per_cube = 1 + ch + 6 * r;
        uint64_t nodes = sips * (1 + cubes * per_cube);
        uint64_t mesh = 2 * (rows * (cols - 1) + cols * (rows - 1));
        if (t->cube.noc.shape != TOPO_NOC_MESH)
                mesh = 2 * r * (cols > 1) + 2 * r * (rows > 1);
        uint64_t cube_edges = 12 * r + mesh + 2 * ch + 2;
        uint64_t edges = sips * (cubes * (cube_edges + 2) + net_edges(cubes, t->sip.cube_net)) +
                         sip_net_edges(t);
        /* Per node: the node, its CSR offset, and routing scratch (distance,
         * hops, predecessor node and edge, two visit stamps). Per edge: the
         * edge and its CSR entry. Per router: four mesh edges. */
        uint64_t per_node = sizeof(struct topo_node) + 4 + 8 + 4 * 5;
        uint64_t per_edge = sizeof(struct topo_edge) + 4;
        *n_nodes = nodes;
        *n_edges = edges;
        *bytes = nodes * per_node + edges * per_edge + sips * cubes * r * 16;
}

/* ---- building ---- */

struct build {
        struct topo_graph *g;        /* being built */
        uint32_t next_edge;          /* edges made so far */
        bool failed;                 /* out of memory on the way */
};

static uint32_t add_edge(struct build *b, uint32_t src, uint32_t dst, enum topo_edge_class cls,
                         const struct topo_link *l)
{
        struct topo_edge *e = &b->g->edges[b->next_edge];
        e->src = src;
        e->dst = dst;
        e->cls = (uint8_t)cls;
        e->latency_ps = l->latency_ps;
        e->bw_bytes_per_s = l->bw_bytes_per_s;
        return b->next_edge++;
}

static void add_pair(struct build *b, uint32_t x, uint32_t y, enum topo_edge_class cls,
                     const struct topo_link *l)
{
        add_edge(b, x, y, cls, l);
        add_edge(b, y, x, cls, l);
}

/* Pairs of peers 0..n-1 linked by a cube net (ring or full), each pair
 * (i, j) once, in order. */
static void add_net(struct build *b, uint32_t n, enum topo_net net, const uint32_t *peer,
                    enum topo_edge_class cls, const struct topo_link *l)
{
        uint64_t pairs = net_pairs(n, net, 0, NULL);
        uint32_t *pair = pairs ? malloc((size_t)pairs * 2 * sizeof *pair) : NULL;
        if (pairs && !pair) {
                b->failed = true;
                return;
        }
        net_pairs(n, net, 0, pair);
        for (uint64_t k = 0; k < pairs; k++)
                add_pair(b, peer[pair[2 * k]], peer[pair[2 * k + 1]], cls, l);
        free(pair);
}

/* The inter-SIP links: for each neighbouring pair (in net_pairs' order)
 * its links, the k-th link of a SIP (counted over its pairs in that
 * order) at inter_sip_ports[k % n] of its cube 0; without ports one edge
 * pair between the gateways of cube 0, links x the bandwidth. */
static void add_sip_links(struct build *b)
{
        struct topo_graph *g = b->g;
        const struct topo *t = &g->topo;
        const struct topo_coords *ports = &t->system.inter_sip_ports;
        uint64_t pairs = net_pairs(t->system.sips, t->system.sip_net, t->system.mesh_cols, NULL);
        uint32_t *pair = pairs ? malloc((size_t)pairs * 2 * sizeof *pair) : NULL;
        uint32_t *used = calloc(t->system.sips, sizeof *used);
        if ((pairs && !pair) || !used) {
                free(pair);
                free(used);
                b->failed = true;
                return;
        }
        net_pairs(t->system.sips, t->system.sip_net, t->system.mesh_cols, pair);
        struct topo_link l = t->system.inter_sip;
        uint32_t links = sip_links(t);
        if (!ports->n)
                l.bw_bytes_per_s = sat_mul_u64(l.bw_bytes_per_s, links);
        for (uint64_t k = 0; k < pairs; k++) {
                uint32_t x = pair[2 * k], y = pair[2 * k + 1];
                for (uint32_t j = 0; j < (ports->n ? links : 1); j++) {
                        uint32_t ex = topo_cube_gateway(g, x, 0), ey = topo_cube_gateway(g, y, 0);
                        if (ports->n) {
                                const struct topo_coord *px = &ports->at[used[x]++ % ports->n];
                                const struct topo_coord *py = &ports->at[used[y]++ % ports->n];
                                ex = topo_router_at(g, x, 0, px->row, px->col);
                                ey = topo_router_at(g, y, 0, py->row, py->col);
                        }
                        add_pair(b, ex, ey, TOPO_EDGE_INTER_SIP, &l);
                }
        }
        free(pair);
        free(used);
}

uint32_t topo_hbm_channel_router_index(const struct topo *t, uint32_t ch)
{
        uint32_t rows = t->cube.noc.rows, cols = t->cube.noc.cols;
        const struct topo_coords *at = &t->cube.hbm.attach;
        if (at->n)
                return at->at[ch % at->n].row * cols + at->at[ch % at->n].col;
        uint32_t row = (ch / 2) % rows, col = (ch % 2) ? cols - 1 : 0;
        return row * cols + col;
}

static void set_node(struct topo_node *n, enum topo_node_kind kind, uint32_t sip, uint32_t cube,
                     uint32_t index, sim_ps overhead)
{
        n->kind = (uint8_t)kind;
        n->sip = sip;
        n->cube = cube;
        n->index = index;
        n->node_overhead_ps = overhead;
}

static void make_nodes(struct topo_graph *g)
{
        const struct topo *t = &g->topo;
        uint32_t ch = t->cube.hbm.channels, r = t->cube.noc.rows * t->cube.noc.cols;
        const sim_ps pe_overhead[5] = {
                t->pe.cpu.node_overhead_ps, t->pe.dma.node_overhead_ps,
                t->pe.gemm.node_overhead_ps, t->pe.math.node_overhead_ps,
                t->pe.tcm.node_overhead_ps,
        };
        uint32_t i = 0;
        for (uint32_t s = 0; s < t->system.sips; s++) {
                set_node(&g->nodes[i++], TOPO_NODE_IO_CPU, s, TOPO_NONE, TOPO_NONE,
                         t->sip.io_cpu_node_overhead_ps);
                for (uint32_t c = 0; c < t->sip.cubes; c++) {
                        set_node(&g->nodes[i++], TOPO_NODE_M_CPU, s, c, TOPO_NONE,
                                 t->cube.m_cpu_node_overhead_ps);
                        for (uint32_t k = 0; k < ch; k++)
                                set_node(&g->nodes[i++], TOPO_NODE_HBM_CHANNEL, s, c, k,
                                         t->cube.hbm.node_overhead_ps);
                        for (uint32_t k = 0; k < r; k++)
                                set_node(&g->nodes[i++], TOPO_NODE_ROUTER, s, c, k,
                                         t->cube.noc.router_node_overhead_ps);
                        for (uint32_t p = 0; p < r; p++)
                                for (uint32_t k = 0; k < 5; k++)
                                        set_node(&g->nodes[i++],
                                                 (enum topo_node_kind)(TOPO_NODE_PE_CPU + k), s,
                                                 c, p, pe_overhead[k]);
                }
        }
        CS_ASSERT(i == g->n_nodes);
}

static uint32_t router_ordinal(const struct topo_graph *g, uint32_t node)
{
        const struct topo_node *n = &g->nodes[node];
        uint32_t r = g->topo.cube.noc.rows * g->topo.cube.noc.cols;
        return (n->sip * g->topo.sip.cubes + n->cube) * r + n->index;
}

static void make_cube_edges(struct build *b, uint32_t s, uint32_t c)
{
        struct topo_graph *g = b->g;
        const struct topo *t = &g->topo;
        const struct topo_pe_links *pl = &t->pe.links;
        uint32_t rows = t->cube.noc.rows, cols = t->cube.noc.cols, r = rows * cols;
        struct topo_link mesh = { t->cube.noc.hop_latency_ps, t->cube.noc.link_bw_bytes_per_s };

        for (uint32_t p = 0; p < r; p++) {
                uint32_t cpu = topo_node_index(g, TOPO_NODE_PE_CPU, s, c, p);
                uint32_t dma = cpu + 1, gemm = cpu + 2, math = cpu + 3, tcm = cpu + 4;
                add_pair(b, cpu, dma, TOPO_EDGE_INTRA_PE, &pl->cpu_dma);
                add_edge(b, cpu, gemm, TOPO_EDGE_INTRA_PE, &pl->cpu_gemm);
                add_edge(b, cpu, math, TOPO_EDGE_INTRA_PE, &pl->cpu_math);
                add_pair(b, dma, tcm, TOPO_EDGE_INTRA_PE, &pl->dma_tcm);
                add_edge(b, dma, gemm, TOPO_EDGE_INTRA_PE, &pl->dma_gemm);
                add_edge(b, gemm, math, TOPO_EDGE_INTRA_PE, &pl->gemm_math);
                add_edge(b, math, math, TOPO_EDGE_INTRA_PE, &pl->math_math);
                add_edge(b, math, dma, TOPO_EDGE_INTRA_PE, &pl->math_dma);
                add_pair(b, dma, topo_node_index(g, TOPO_NODE_ROUTER, s, c, p), TOPO_EDGE_NOC,
                         &pl->dma_noc);
        }
        bool wrap = t->cube.noc.shape != TOPO_NOC_MESH;
        for (uint32_t row = 0; row < rows; row++) {
                for (uint32_t col = 0; col < cols; col++) {
                        uint32_t here = topo_router_at(g, s, c, row, col);
                        uint32_t *out = &g->mesh_out[4 * router_ordinal(g, here)];
                        for (int dir = DIR_E; dir <= DIR_N; dir++) {
                                uint32_t r2, c2;
                                if (axis_step(row, rows, dir_step[dir].rows, wrap, &r2) &&
                                    axis_step(col, cols, dir_step[dir].cols, wrap, &c2))
                                        out[dir] = add_edge(b, here,
                                                            topo_router_at(g, s, c, r2, c2),
                                                            TOPO_EDGE_NOC, &mesh);
                        }
                }
        }
        struct topo_link hbm = { t->cube.hbm.latency_ps, t->cube.hbm.channel_bw_bytes_per_s };
        for (uint32_t k = 0; k < t->cube.hbm.channels; k++)
                add_pair(b, topo_node_index(g, TOPO_NODE_HBM_CHANNEL, s, c, k),
                         topo_node_index(g, TOPO_NODE_ROUTER, s, c,
                                         topo_hbm_channel_router_index(t, k)),
                         TOPO_EDGE_HBM, &hbm);
        add_pair(b, topo_node_index(g, TOPO_NODE_M_CPU, s, c, 0), topo_cube_gateway(g, s, c),
                 TOPO_EDGE_NOC, &mesh);
}

static bool inside_cube(const struct topo_node *n, uint32_t s, uint32_t c)
{
        return n->sip == s && n->cube == c && n->kind != TOPO_NODE_M_CPU &&
               n->kind != TOPO_NODE_IO_CPU;
}

/* CSR adjacency, mesh portals. */
static int index_edges(struct topo_graph *g)
{
        for (uint32_t e = 0; e < g->n_edges; e++)
                g->out_first[g->edges[e].src + 1]++;
        for (uint32_t i = 0; i < g->n_nodes; i++)
                g->out_first[i + 1] += g->out_first[i];
        uint32_t *fill = calloc(g->n_nodes, sizeof *fill);
        if (!fill)
                return -ENOMEM;
        for (uint32_t e = 0; e < g->n_edges; e++) {
                uint32_t s = g->edges[e].src;
                g->out_edge[g->out_first[s] + fill[s]++] = e;
        }
        free(fill);

        uint32_t n_cubes = g->topo.system.sips * g->topo.sip.cubes;
        uint32_t r = g->topo.cube.noc.rows * g->topo.cube.noc.cols;
        size_t cap = n_cubes, n = 0;
        g->portals = malloc(cap * sizeof *g->portals);
        if (!g->portals)
                return -ENOMEM;
        for (uint32_t cube = 0; cube < n_cubes; cube++) {
                uint32_t s = cube / g->topo.sip.cubes, c = cube % g->topo.sip.cubes;
                g->portal_first[cube] = (uint32_t)n;
                for (uint32_t k = 0; k < r; k++) {
                        uint32_t node = topo_node_index(g, TOPO_NODE_ROUTER, s, c, k);
                        bool portal = false;
                        for (uint32_t j = g->out_first[node]; j < g->out_first[node + 1]; j++)
                                if (!inside_cube(&g->nodes[g->edges[g->out_edge[j]].dst], s, c))
                                        portal = true;
                        if (!portal)
                                continue;
                        if (n == cap) {
                                uint32_t *np = realloc(g->portals, 2 * cap * sizeof *np);
                                if (!np)
                                        return -ENOMEM;
                                g->portals = np;
                                cap *= 2;
                        }
                        g->portals[n++] = node;
                }
        }
        g->portal_first[n_cubes] = (uint32_t)n;
        return 0;
}

int topo_build_graph(const struct topo *t, struct topo_graph *g, struct diag *d)
{
        memset(g, 0, sizeof *g);
        uint64_t n_nodes, n_edges, bytes;
        topo_graph_size(t, &n_nodes, &n_edges, &bytes);
        if (bytes > TOPO_MAX_GRAPH_BYTES || n_nodes >= TOPO_NONE || n_edges >= TOPO_NONE) {
                diag_error(d, "machine '%s': the component graph would need %llu MiB; the "
                              "limit is %llu MiB",
                           t->name, (unsigned long long)(bytes >> 20),
                           (unsigned long long)(TOPO_MAX_GRAPH_BYTES >> 20));
                return -EINVAL;
        }
        g->topo = *t;
        topo_totals(t, &g->totals);
        g->n_nodes = (uint32_t)n_nodes;
        g->n_edges = (uint32_t)n_edges;
        uint32_t ch = t->cube.hbm.channels, r = t->cube.noc.rows * t->cube.noc.cols;
        uint32_t n_cubes = t->system.sips * t->sip.cubes;
        g->nodes_per_cube = 1 + ch + 6 * r;
        g->nodes_per_sip = 1 + t->sip.cubes * g->nodes_per_cube;
        g->nodes = calloc(g->n_nodes, sizeof *g->nodes);
        g->edges = calloc(g->n_edges ? g->n_edges : 1, sizeof *g->edges);
        g->out_first = calloc((size_t)g->n_nodes + 1, sizeof *g->out_first);
        g->out_edge = calloc(g->n_edges ? g->n_edges : 1, sizeof *g->out_edge);
        g->mesh_out = malloc((size_t)n_cubes * r * 4 * sizeof *g->mesh_out);
        g->portal_first = calloc((size_t)n_cubes + 1, sizeof *g->portal_first);
        if (!g->nodes || !g->edges || !g->out_first || !g->out_edge || !g->mesh_out ||
            !g->portal_first)
                goto out_of_memory;
        memset(g->mesh_out, 0xff, (size_t)n_cubes * r * 4 * sizeof *g->mesh_out);

        make_nodes(g);
        struct build b = { .g = g };
        uint32_t *peer = malloc((size_t)(t->sip.cubes > t->system.sips ? t->sip.cubes
                                                                         : t->system.sips) *
                                sizeof *peer);
        if (!peer)
                goto out_of_memory;
        for (uint32_t s = 0; s < t->system.sips; s++) {
                for (uint32_t c = 0; c < t->sip.cubes; c++)
                        make_cube_edges(&b, s, c);
                uint32_t io = topo_node_index(g, TOPO_NODE_IO_CPU, s, 0, 0);
                for (uint32_t c = 0; c < t->sip.cubes; c++)
                        add_pair(&b, io, topo_node_index(g, TOPO_NODE_M_CPU, s, c, 0),
                                 TOPO_EDGE_HOST, &t->sip.host_link);
                for (uint32_t c = 0; c < t->sip.cubes; c++)
                        peer[c] = topo_cube_gateway(g, s, c);
                add_net(&b, t->sip.cubes, t->sip.cube_net, peer, TOPO_EDGE_INTER_CUBE,
                        &t->sip.inter_cube);
        }
        add_sip_links(&b);
        free(peer);
        if (b.failed)
                goto out_of_memory;
        CS_ASSERT(b.next_edge == g->n_edges);
        if (index_edges(g))
                goto out_of_memory;
        return 0;

out_of_memory:
        diag_error(d, "machine '%s': out of memory building the component graph (%llu MiB)",
                   t->name, (unsigned long long)(bytes >> 20));
        topo_graph_fini(g);
        return -ENOMEM;
}

void topo_graph_fini(struct topo_graph *g)
{
        topo__route_cache_free(g->cache);
        free(g->nodes);
        free(g->edges);
        free(g->out_first);
        free(g->out_edge);
        free(g->mesh_out);
        free(g->portal_first);
        free(g->portals);
        memset(g, 0, sizeof *g);
}

/* ---- lookups ---- */

uint32_t topo_node_index(const struct topo_graph *g, enum topo_node_kind kind, uint32_t sip,
                         uint32_t cube, uint32_t idx)
{
        const struct topo *t = &g->topo;
        uint32_t ch = t->cube.hbm.channels, r = t->cube.noc.rows * t->cube.noc.cols;
        if (sip >= t->system.sips)
                return TOPO_NONE;
        uint32_t base = sip * g->nodes_per_sip;
        if (kind == TOPO_NODE_IO_CPU)
                return base;
        if (cube >= t->sip.cubes)
                return TOPO_NONE;
        base += 1 + cube * g->nodes_per_cube;
        switch (kind) {
        case TOPO_NODE_M_CPU:
                return base;
        case TOPO_NODE_HBM_CHANNEL:
                return idx < ch ? base + 1 + idx : TOPO_NONE;
        case TOPO_NODE_ROUTER:
                return idx < r ? base + 1 + ch + idx : TOPO_NONE;
        case TOPO_NODE_PE_CPU:
        case TOPO_NODE_PE_DMA:
        case TOPO_NODE_PE_GEMM:
        case TOPO_NODE_PE_MATH:
        case TOPO_NODE_TCM:
                return idx < r ? base + 1 + ch + r + 5 * idx + (kind - TOPO_NODE_PE_CPU)
                               : TOPO_NONE;
        default:
                return TOPO_NONE;
        }
}

uint32_t topo_node_router(const struct topo_graph *g, uint32_t node)
{
        if (node >= g->n_nodes)
                return TOPO_NONE;
        const struct topo_node *n = &g->nodes[node];
        switch (n->kind) {
        case TOPO_NODE_ROUTER:
                return node;
        case TOPO_NODE_HBM_CHANNEL:
                return topo_node_index(g, TOPO_NODE_ROUTER, n->sip, n->cube,
                                       topo_hbm_channel_router_index(&g->topo, n->index));
        case TOPO_NODE_IO_CPU:
        case TOPO_NODE_M_CPU:
                return TOPO_NONE;
        default:
                return topo_node_index(g, TOPO_NODE_ROUTER, n->sip, n->cube, n->index);
        }
}

uint32_t topo_router_at(const struct topo_graph *g, uint32_t sip, uint32_t cube, uint32_t row,
                        uint32_t col)
{
        const struct topo_noc *noc = &g->topo.cube.noc;
        if (row >= noc->rows || col >= noc->cols)
                return TOPO_NONE;
        return topo_node_index(g, TOPO_NODE_ROUTER, sip, cube, row * noc->cols + col);
}

uint32_t topo_cube_gateway(const struct topo_graph *g, uint32_t sip, uint32_t cube)
{
        return topo_node_index(g, TOPO_NODE_ROUTER, sip, cube, 0);
}

uint32_t topo_edge_between(const struct topo_graph *g, uint32_t src, uint32_t dst)
{
        if (src >= g->n_nodes)
                return TOPO_NONE;
        for (uint32_t j = g->out_first[src]; j < g->out_first[src + 1]; j++)
                if (g->edges[g->out_edge[j]].dst == dst)
                        return g->out_edge[j];
        return TOPO_NONE;
}

int topo_node_name(const struct topo_graph *g, uint32_t node, char *buf, size_t len)
{
        if (node >= g->n_nodes)
                return snprintf(buf, len, "node%u?", node);
        const struct topo_node *n = &g->nodes[node];
        switch (n->kind) {
        case TOPO_NODE_IO_CPU:
                return snprintf(buf, len, "sip%u.io_cpu", n->sip);
        case TOPO_NODE_M_CPU:
                return snprintf(buf, len, "sip%u.cube%u.m_cpu", n->sip, n->cube);
        case TOPO_NODE_HBM_CHANNEL:
                return snprintf(buf, len, "sip%u.cube%u.hbm.ch%u", n->sip, n->cube, n->index);
        case TOPO_NODE_ROUTER:
                return snprintf(buf, len, "sip%u.cube%u.router%u", n->sip, n->cube, n->index);
        default:
                return snprintf(buf, len, "sip%u.cube%u.pe%u.%s", n->sip, n->cube, n->index,
                                pe_suffix[n->kind - TOPO_NODE_PE_CPU]);
        }
}

/* Parse "<word><unsigned>" at *s; advance past it. */
static bool take_num(const char **s, const char *word, uint32_t *out)
{
        size_t n = strlen(word);
        if (strncmp(*s, word, n) != 0)
                return false;
        const char *p = *s + n;
        if (*p < '0' || *p > '9')
                return false;
        uint64_t v = 0;
        while (*p >= '0' && *p <= '9') {
                v = v * 10 + (uint64_t)(*p++ - '0');
                if (v > UINT32_MAX)
                        return false;
        }
        *out = (uint32_t)v;
        *s = p;
        return true;
}

uint32_t topo_node_by_name(const struct topo_graph *g, const char *name)
{
        const char *s = name;
        uint32_t sip, cube, idx;
        if (!take_num(&s, "sip", &sip) || *s++ != '.')
                return TOPO_NONE;
        if (strcmp(s, "io_cpu") == 0)
                return topo_node_index(g, TOPO_NODE_IO_CPU, sip, 0, 0);
        if (!take_num(&s, "cube", &cube) || *s++ != '.')
                return TOPO_NONE;
        if (strcmp(s, "m_cpu") == 0)
                return topo_node_index(g, TOPO_NODE_M_CPU, sip, cube, 0);
        if (take_num(&s, "hbm.ch", &idx))
                return *s ? TOPO_NONE : topo_node_index(g, TOPO_NODE_HBM_CHANNEL, sip, cube, idx);
        if (take_num(&s, "router", &idx))
                return *s ? TOPO_NONE : topo_node_index(g, TOPO_NODE_ROUTER, sip, cube, idx);
        if (!take_num(&s, "pe", &idx) || *s++ != '.')
                return TOPO_NONE;
        for (int k = 0; k < 5; k++)
                if (strcmp(s, pe_suffix[k]) == 0)
                        return topo_node_index(g, (enum topo_node_kind)(TOPO_NODE_PE_CPU + k), sip,
                                               cube, idx);
        return TOPO_NONE;
}
