/* topo/topo_route.c: routes and path latencies over a component graph,
 * computed on demand and cached per (src, dst).
 *
 * Cost of a route = sum of its edges' latencies + the node overhead of
 * every node it enters (intermediates and dst, not src): a message pays a
 * node's overhead when it arrives there. Routes minimise that cost with
 * Dijkstra's algorithm; ties go to fewer hops, then to the lower index of
 * the edge entering the node, so routes are deterministic.
 *
 * Inside a cube's NoC, routing is dimension-ordered. A mesh goes X
 * (columns) first, then Y (rows). A torus does the same, each axis the
 * shorter way round (east or south on a tie). A dual torus is two
 * unidirectional tori: NoC 0 goes east then south, NoC 1 (every link
 * reversed) north then west; a route takes the one with fewer hops, NoC 0
 * on a tie. Below, "XY path" means this walk (whatever the shape).
 * Dijkstra never walks mesh links one by one: from a router it jumps straight to the cube's portal routers (those with links leaving
 * the mesh) and to the destination's router, each jump costing its XY path,
 * and a router reached by a jump may only leave the mesh: one XY segment per
 * visit to a mesh, so no route turns from Y back to X (two jumps A -> P -> B
 * can cost the same as A -> B when P lies on a shortest path; it must not
 * win the tie). With uniform hop latency and router overhead an XY path is
 * a shortest path of its NoC's links (on a dual torus, of the links its NoC
 * may use), so this finds the true optimum among XY-in-mesh routes while
 * visiting only a few nodes per cube; the route is then expanded into mesh
 * edges. A search touches O(cubes on the way) nodes, not the whole graph,
 * so routes stay cheap on 10^6-PE machines; nothing is all-pairs.
 *
 * Memory: a scratch array of n_nodes entries (allocated at the first query)
 * and the cache, which grows with the number of distinct pairs asked for. */
#include "topo/topo_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/heap.h"
#include "base/list.h"
#include "base/util.h"

#define EMPTY_KEY UINT64_MAX
#define CHUNK_WORDS (64u * 1024u)

enum { DIR_E, DIR_W, DIR_S, DIR_N };

struct entry {
        uint64_t key;                /* src << 32 | dst; EMPTY_KEY if free */
        const uint32_t *edges;       /* the route, in the pool */
        uint32_t n_edges;            /* its length */
        sim_ps latency_ps;           /* its path latency */
};

struct chunk {
        struct chunk *next;          /* older chunks */
        uint32_t used;               /* words of data in use */
        uint32_t cap;                /* words of data */
        uint32_t data[];             /* route edge indices */
};

struct heap_item {
        uint64_t dist;               /* cost so far, ps */
        uint32_t hops;               /* edges so far */
        uint32_t node;               /* the node */
};

/* A node as a search sees it: what one relaxation reads and writes
 * together. */
struct node_state {
        uint64_t dist;               /* best cost, valid if seen == stamp */
        uint32_t hops;               /* edges on the best route */
        uint32_t prev_node;          /* predecessor (a router for an XY jump) */
        uint32_t prev_edge;          /* last edge entering it */
        uint32_t seen;               /* stamp when first reached */
        uint32_t done;               /* stamp when settled */
};

struct topo_route_cache {
        struct entry *table;         /* open addressing, linear probing */
        size_t cap;                  /* slots, a power of two */
        size_t n;                    /* used slots */
        struct chunk *chunks;        /* newest first; routes never move */

        struct node_state *node;     /* per node: the search's state */
        uint32_t stamp;              /* the current search */
        struct heap_item *heap;      /* binary min-heap by (dist, hops, node) */
        size_t heap_n;               /* items in heap */
        size_t heap_cap;             /* allocated items */
        uint32_t *tmp;               /* route assembly */
        size_t tmp_cap;              /* allocated words of tmp */
};

void topo__route_cache_free(struct topo_route_cache *c)
{
        if (!c)
                return;
        LIST_FREE(c->chunks, struct chunk, next);
        free(c->table);
        free(c->node);
        free(c->heap);
        free(c->tmp);
        free(c);
}

static struct topo_route_cache *cache_of(struct topo_graph *g)
{
        if (g->cache)
                return g->cache;
        struct topo_route_cache *c = calloc(1, sizeof *c);
        if (!c)
                return NULL;
        size_t n = g->n_nodes;
        c->cap = 1024;
        c->table = malloc(c->cap * sizeof *c->table);
        c->node = calloc(n, sizeof *c->node);
        if (!c->table || !c->node) {
                topo__route_cache_free(c);
                return NULL;
        }
        for (size_t i = 0; i < c->cap; i++)
                c->table[i].key = EMPTY_KEY;
        g->cache = c;
        return c;
}

/* ---- the cache ---- */

static uint64_t mix(uint64_t x)
{
        x ^= x >> 30;
        x *= 0xbf58476d1ce4e5b9ull;
        x ^= x >> 27;
        x *= 0x94d049bb133111ebull;
        return x ^ (x >> 31);
}

static struct entry *slot_for(struct topo_route_cache *c, uint64_t key)
{
        size_t i = mix(key) & (c->cap - 1);
        while (c->table[i].key != EMPTY_KEY && c->table[i].key != key)
                i = (i + 1) & (c->cap - 1);
        return &c->table[i];
}

static int grow_table(struct topo_route_cache *c)
{
        struct entry *old = c->table;
        size_t old_cap = c->cap;
        c->table = malloc(2 * old_cap * sizeof *c->table);
        if (!c->table) {
                c->table = old;
                return -ENOMEM;
        }
        c->cap = 2 * old_cap;
        for (size_t i = 0; i < c->cap; i++)
                c->table[i].key = EMPTY_KEY;
        for (size_t i = 0; i < old_cap; i++)
                if (old[i].key != EMPTY_KEY)
                        *slot_for(c, old[i].key) = old[i];
        free(old);
        return 0;
}

static uint32_t *pool_alloc(struct topo_route_cache *c, uint32_t n)
{
        struct chunk *ch = c->chunks;
        if (!ch || ch->cap - ch->used < n) {
                uint32_t cap = n > CHUNK_WORDS ? n : CHUNK_WORDS;
                struct chunk *nc = malloc(sizeof *nc + (size_t)cap * sizeof nc->data[0]);
                if (!nc)
                        return NULL;
                nc->used = 0;
                nc->cap = cap;
                /* Keep a roomier current chunk in front for later routes. */
                if (ch && n > CHUNK_WORDS) {
                        nc->next = ch->next;
                        ch->next = nc;
                } else {
                        nc->next = ch;
                        c->chunks = nc;
                }
                ch = nc;
        }
        uint32_t *p = ch->data + ch->used;
        ch->used += n;
        return p;
}

/* ---- the search ---- */

static bool heap_less(const struct heap_item *a, const struct heap_item *b)
{
        if (a->dist != b->dist)
                return a->dist < b->dist;
        if (a->hops != b->hops)
                return a->hops < b->hops;
        return a->node < b->node;
}

HEAP_DEFINE(heap, struct heap_item, heap_less, 256)

static uint32_t router_ordinal(const struct topo_graph *g, const struct topo_node *n)
{
        uint32_t r = g->topo.cube.noc.rows * g->topo.cube.noc.cols;
        return (n->sip * g->topo.sip.cubes + n->cube) * r + n->index;
}

/* A straight run of a route inside a NoC. */
struct leg {
        int dir;                     /* DIR_E, DIR_W, DIR_S or DIR_N */
        uint32_t hops;               /* links to follow */
};

static struct leg shorter(int fwd, uint32_t n_fwd, int back, uint32_t n_back)
{
        return n_fwd <= n_back ? (struct leg){ fwd, n_fwd } : (struct leg){ back, n_back };
}

/* The two legs of the route from router index ia to ib, walked in order. */
static void noc_legs(const struct topo_noc *noc, uint32_t ia, uint32_t ib, struct leg leg[2])
{
        uint32_t rows = noc->rows, cols = noc->cols;
        uint32_t ra = ia / cols, ca = ia % cols, rb = ib / cols, cb = ib % cols;
        uint32_t e = (cb + cols - ca) % cols, w = (ca + cols - cb) % cols;
        uint32_t s = (rb + rows - ra) % rows, n = (ra + rows - rb) % rows;
        switch (noc->shape) {
        case TOPO_NOC_MESH:
                leg[0] = ca <= cb ? (struct leg){ DIR_E, e } : (struct leg){ DIR_W, w };
                leg[1] = ra <= rb ? (struct leg){ DIR_S, s } : (struct leg){ DIR_N, n };
                return;
        case TOPO_NOC_TORUS:
                leg[0] = shorter(DIR_E, e, DIR_W, w);
                leg[1] = shorter(DIR_S, s, DIR_N, n);
                return;
        case TOPO_NOC_DUAL_TORUS:
                if (e + s <= n + w) {
                        leg[0] = (struct leg){ DIR_E, e };
                        leg[1] = (struct leg){ DIR_S, s };
                } else {
                        leg[0] = (struct leg){ DIR_N, n };
                        leg[1] = (struct leg){ DIR_W, w };
                }
                return;
        }
}

/* The XY path between two routers of one NoC: its cost (edges' latencies
 * plus overheads of the routers entered), its length, its last edge; the
 * edges go to out when out is not NULL. */
static uint32_t xy_walk(const struct topo_graph *g, uint32_t a, uint32_t b, uint32_t *out,
                        sim_ps *cost, uint32_t *last)
{
        struct leg leg[2];
        noc_legs(&g->topo.cube.noc, g->nodes[a].index, g->nodes[b].index, leg);
        uint32_t cur = a, n = 0;
        sim_ps sum = 0;
        for (int k = 0; k < 2; k++) {
                for (uint32_t h = 0; h < leg[k].hops; h++) {
                        uint32_t e = g->mesh_out[4 * router_ordinal(g, &g->nodes[cur]) +
                                                 leg[k].dir];
                        const struct topo_edge *ed = &g->edges[e];
                        sum += ed->latency_ps + g->nodes[ed->dst].node_overhead_ps;
                        cur = ed->dst;
                        if (out)
                                out[n] = e;
                        n++;
                        *last = e;
                }
        }
        *cost = sum;
        return n;
}

static int relax(struct topo_route_cache *c, uint32_t from, uint32_t v, uint64_t d, uint32_t h,
                 uint32_t edge)
{
        struct node_state *nv = &c->node[v];
        if (nv->done == c->stamp)
                return 0;
        if (nv->seen == c->stamp) {
                bool better = d < nv->dist || (d == nv->dist && h < nv->hops);
                if (!better) {
                        if (d == nv->dist && h == nv->hops && edge < nv->prev_edge) {
                                nv->prev_node = from;
                                nv->prev_edge = edge;
                        }
                        return 0;
                }
        }
        nv->seen = c->stamp;
        nv->dist = d;
        nv->hops = h;
        nv->prev_node = from;
        nv->prev_edge = edge;
        return heap_push(&c->heap, &c->heap_n, &c->heap_cap, (struct heap_item){ d, h, v });
}

static int jump(struct topo_graph *g, uint32_t a, uint32_t b, uint64_t d, uint32_t h)
{
        sim_ps cost;
        uint32_t last = TOPO_NONE;
        uint32_t n = xy_walk(g, a, b, NULL, &cost, &last);
        return relax(g->cache, a, b, d + cost, h + n, last);
}

static bool same_cube(const struct topo_node *x, const struct topo_node *y)
{
        return x->sip == y->sip && x->cube == y->cube;
}

/* What a search looks for: one destination, or a set of them (want_*). */
struct goal {
        uint32_t dst;                /* the destination; TOPO_NONE for a set */
        uint32_t dst_router;         /* its router, or TOPO_NONE */
        uint32_t src_group;          /* leaf group of the source, or TOPO_NONE */
        uint32_t dst_group;          /* leaf group of the destination, or TOPO_NONE */
        const uint8_t *want_node;    /* set: per node, 1 if a destination */
        const uint8_t *want_router;  /* set: per node, 1 for routers of destinations */
        size_t n_left;               /* set: destinations not settled yet */
};

/* PE components and HBM channels are leaves: no route passes through
 * them (a PE has one router, a channel one attach edge). A leaf's group is
 * its router (PE components) or itself (a channel); TOPO_NONE otherwise. */
static uint32_t leaf_group(const struct topo_graph *g, uint32_t v)
{
        switch (g->nodes[v].kind) {
        case TOPO_NODE_HBM_CHANNEL:
                return v;
        case TOPO_NODE_IO_CPU:
        case TOPO_NODE_M_CPU:
        case TOPO_NODE_ROUTER:
                return TOPO_NONE;
        default:
                return topo_node_router(g, v);
        }
}

/* May the search enter v? Leaves only on the way out of src or into a
 * destination's group: it keeps searches from spreading into every PE. */
static bool may_enter(const struct topo_graph *g, const struct goal *goal, uint32_t v)
{
        uint32_t group = leaf_group(g, v);
        if (group == TOPO_NONE || group == goal->src_group)
                return true;
        if (!goal->want_node)
                return group == goal->dst_group;
        return group == v ? goal->want_node[v] : goal->want_router[group];
}

static int search(struct topo_graph *g, uint32_t src, struct goal *goal)
{
        struct topo_route_cache *c = g->cache;
        uint32_t r = g->topo.cube.noc.rows * g->topo.cube.noc.cols;
        if (++c->stamp == 0) {
                memset(c->node, 0, (size_t)g->n_nodes * sizeof *c->node);
                c->stamp = 1;
        }
        c->heap_n = 0;
        goal->src_group = leaf_group(g, src);
        int rc = relax(c, TOPO_NONE, src, 0, 0, TOPO_NONE);
        while (!rc && c->heap_n) {
                struct heap_item it = heap_pop(c->heap, &c->heap_n);
                uint32_t u = it.node;
                struct node_state *su = &c->node[u];
                if (su->done == c->stamp || it.dist != su->dist || it.hops != su->hops)
                        continue;
                su->done = c->stamp;
                if (u == goal->dst)
                        return 0;
                if (goal->want_node && goal->want_node[u] && --goal->n_left == 0)
                        return 0;
                const struct topo_node *nu = &g->nodes[u];
                bool router = nu->kind == TOPO_NODE_ROUTER;
                for (uint32_t j = g->out_first[u]; !rc && j < g->out_first[u + 1]; j++) {
                        uint32_t e = g->out_edge[j];
                        const struct topo_edge *ed = &g->edges[e];
                        const struct topo_node *nv = &g->nodes[ed->dst];
                        if (router && nv->kind == TOPO_NODE_ROUTER && same_cube(nu, nv))
                                continue;       /* mesh links: XY jumps below */
                        if (!may_enter(g, goal, ed->dst))
                                continue;
                        rc = relax(c, u, ed->dst, it.dist + ed->latency_ps + nv->node_overhead_ps,
                                   it.hops + 1, e);
                }
                /* One XY segment per visit to a mesh: a router entered from
                 * another router of its cube may only leave the mesh. */
                uint32_t from = su->prev_node;
                if (!router || (from != TOPO_NONE && g->nodes[from].kind == TOPO_NODE_ROUTER &&
                                same_cube(nu, &g->nodes[from])))
                        continue;
                uint32_t cube = nu->sip * g->topo.sip.cubes + nu->cube;
                for (uint32_t j = g->portal_first[cube]; !rc && j < g->portal_first[cube + 1]; j++)
                        if (g->portals[j] != u)
                                rc = jump(g, u, g->portals[j], it.dist, it.hops);
                if (goal->want_router) {
                        uint32_t first = u - nu->index;
                        for (uint32_t k = 0; !rc && k < r; k++)
                                if (goal->want_router[first + k] && first + k != u)
                                        rc = jump(g, u, first + k, it.dist, it.hops);
                } else if (!rc && goal->dst_router != TOPO_NONE && goal->dst_router != u &&
                           same_cube(nu, &g->nodes[goal->dst_router])) {
                        rc = jump(g, u, goal->dst_router, it.dist, it.hops);
                }
        }
        return rc ? rc : -ENOENT;
}

static int tmp_reserve(struct topo_route_cache *c, size_t n)
{
        if (n <= c->tmp_cap)
                return 0;
        size_t cap = c->tmp_cap ? c->tmp_cap : 256;
        while (cap < n)
                cap *= 2;
        uint32_t *t = realloc(c->tmp, cap * sizeof *t);
        if (!t)
                return -ENOMEM;
        c->tmp = t;
        c->tmp_cap = cap;
        return 0;
}

/* Assemble the route found by search() into the cache. */
static int record(struct topo_graph *g, uint32_t src, uint32_t dst, struct entry *slot)
{
        struct topo_route_cache *c = g->cache;
        uint32_t n = c->node[dst].hops;
        /* tmp holds: the n route edges, then the settled nodes dst..src. */
        if (tmp_reserve(c, (size_t)2 * n + 2))
                return -ENOMEM;
        uint32_t *path = c->tmp + n, n_path = 0;
        for (uint32_t v = dst; v != src; v = c->node[v].prev_node)
                path[n_path++] = v;
        uint32_t at = 0;
        for (uint32_t i = n_path; i-- > 0;) {
                uint32_t v = path[i], u = c->node[v].prev_node, e = c->node[v].prev_edge;
                if (g->edges[e].src == u) {
                        c->tmp[at++] = e;
                } else {
                        sim_ps cost;
                        uint32_t last;
                        at += xy_walk(g, u, v, c->tmp + at, &cost, &last);
                }
        }
        uint32_t *edges = pool_alloc(c, n);
        if (!edges)
                return -ENOMEM;
        memcpy(edges, c->tmp, (size_t)n * sizeof *edges);
        slot->key = (uint64_t)src << 32 | dst;
        slot->edges = edges;
        slot->n_edges = n;
        slot->latency_ps = c->node[dst].dist;
        c->n++;
        return 0;
}

static int lookup(struct topo_graph *g, uint32_t src, uint32_t dst, const struct entry **out)
{
        if (src >= g->n_nodes || dst >= g->n_nodes)
                return -EINVAL;
        struct topo_route_cache *c = cache_of(g);
        if (!c)
                return -ENOMEM;
        uint64_t key = (uint64_t)src << 32 | dst;
        struct entry *slot = slot_for(c, key);
        if (slot->key == key) {
                *out = slot;
                return 0;
        }
        if (2 * (c->n + 1) > c->cap) {
                if (grow_table(c))
                        return -ENOMEM;
                slot = slot_for(c, key);
        }
        struct goal goal = { .dst = dst, .dst_router = topo_node_router(g, dst),
                             .dst_group = leaf_group(g, dst) };
        int rc = search(g, src, &goal);
        if (!rc)
                rc = record(g, src, dst, slot);
        if (rc)
                return rc;
        *out = slot;
        return 0;
}

int topo_route(struct topo_graph *g, uint32_t src, uint32_t dst, const uint32_t **edges,
               uint32_t *n_edges)
{
        *edges = NULL;
        *n_edges = 0;
        if (src >= g->n_nodes || dst >= g->n_nodes)
                return -EINVAL;
        if (src == dst)
                return 0;
        const struct entry *e;
        int rc = lookup(g, src, dst, &e);
        if (rc)
                return rc;
        *edges = e->edges;
        *n_edges = e->n_edges;
        return 0;
}

sim_ps topo_path_latency(struct topo_graph *g, uint32_t src, uint32_t dst)
{
        if (src >= g->n_nodes || dst >= g->n_nodes)
                return TOPO_PS_NONE;
        if (src == dst)
                return 0;
        const struct entry *e;
        return lookup(g, src, dst, &e) ? TOPO_PS_NONE : e->latency_ps;
}

int topo_path_latencies(struct topo_graph *g, uint32_t src, const uint32_t *dsts, size_t n,
                        sim_ps *out)
{
        if (src >= g->n_nodes)
                return -EINVAL;
        for (size_t i = 0; i < n; i++)
                if (dsts[i] >= g->n_nodes)
                        return -EINVAL;
        struct topo_route_cache *c = cache_of(g);
        uint8_t *want_node = calloc(g->n_nodes, 1), *want_router = calloc(g->n_nodes, 1);
        if (!c || !want_node || !want_router) {
                free(want_node);
                free(want_router);
                return -ENOMEM;
        }
        struct goal goal = { .dst = TOPO_NONE, .dst_router = TOPO_NONE, .dst_group = TOPO_NONE,
                             .want_node = want_node, .want_router = want_router };
        for (size_t i = 0; i < n; i++) {
                if (!want_node[dsts[i]])
                        goal.n_left++;
                want_node[dsts[i]] = 1;
                uint32_t router = topo_node_router(g, dsts[i]);
                if (router != TOPO_NONE)
                        want_router[router] = 1;
        }
        int rc = goal.n_left ? search(g, src, &goal) : 0;
        if (rc == -ENOENT)
                rc = 0;                 /* unreachable ones get TOPO_PS_NONE below */
        for (size_t i = 0; rc == 0 && i < n; i++)
                out[i] = c->node[dsts[i]].done == c->stamp ? c->node[dsts[i]].dist : TOPO_PS_NONE;
        free(want_node);
        free(want_router);
        return rc;
}
