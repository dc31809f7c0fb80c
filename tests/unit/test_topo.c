/* tests/unit/test_topo.c: the topology module (topo/topo.h): loading,
 * validation with located messages, --set, the component graph, routes and
 * path latencies, totals, and the JSON snapshot.
 *
 * Snapshot: the default machine's JSON must equal tests/golden/topo_default.json.
 * After an intended change, regenerate it with
 *     CUBESIM_UPDATE_GOLDEN=1 build/test_topo --filter 'topo/golden_json'
 * (or `cubesim topo show --format json > tests/golden/topo_default.json`)
 * and review the diff. */
#include <criterion/criterion.h>

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/diag.h"
#include "base/fsutil.h"
#include "topo/topo.h"

#define NS 1000ull                   /* ps per ns */
#define GBPS 1000000000ull           /* bytes/s per GB/s */

static struct diag d;                /* the test's problems, empty when it starts */

static void diag_open(void) { diag_init(&d); }
static void diag_close(void) { diag_fini(&d); }

TestSuite(topo, .init = diag_open, .fini = diag_close);

static const char *source_dir(void)
{
        const char *s = getenv("CUBESIM_SOURCE_DIR");
        return s && *s ? s : CUBESIM_SOURCE_DIR;
}

static char *read_all(const char *path, size_t *len)
{
        char *buf;
        size_t n;
        if (fs_read_capped(path, 1u << 30, &buf, &n, NULL) < 0)
                return NULL;
        if (len)
                *len = n;
        return buf;
}

/* Load the file rel of the source tree (NULL: the built-in default) into
 * t; it must load without a problem. */
static void load_named(const char *rel, struct topo *t)
{
        char path[4096];
        struct diag ld;
        diag_init(&ld);
        int rc;
        if (rel) {
                snprintf(path, sizeof path, "%s/%s", source_dir(), rel);
                rc = topo_load_file(path, t, &ld);
        } else {
                rc = topo_load_default(t, &ld);
        }
        if (rc)
                diag_print(&ld, stderr);
        cr_assert_eq(rc, 0, "%s does not load", rel ? rel : "the default");
        cr_assert_eq(ld.n_errors, 0);
        diag_fini(&ld);
}

static void build(const struct topo *t, struct topo_graph *g)
{
        cr_assert_eq(topo_build_graph(t, g, &d), 0);
}

/* load_named, then build its graph into g. */
static void load_graph(const char *rel, struct topo *t, struct topo_graph *g)
{
        load_named(rel, t);
        build(t, g);
}

static void assert_has(const char *all, const char *want)
{
        cr_assert(strstr(all, want), "expected message\n  %s\nin\n%s", want, all);
}

/* Loading text as x.yaml must fail with -EINVAL and messages containing
 * each of want (NULL-terminated), in exactly n_lines lines if n_lines > 0. */
static void assert_load_fails(const char *text, unsigned n_lines, const char *const *want)
{
        struct diag ld;
        struct topo t;
        diag_init(&ld);
        int rc = topo_load_text("x.yaml", text, strlen(text), &t, &ld);
        char *all = NULL;
        size_t n = 0;
        FILE *m = open_memstream(&all, &n);
        diag_print(&ld, m);
        fclose(m);
        cr_assert_eq(rc == 0, ld.n_errors == 0, "rc and error count disagree");
        cr_assert_eq(rc, -EINVAL, "loaded: %s", text);
        for (; *want; want++)
                assert_has(all, *want);
        unsigned lines = 0;
        for (const char *p = all; *p; p++)
                lines += *p == '\n';
        cr_assert(n_lines == 0 || lines == n_lines, "%u messages, not %u:\n%s", lines, n_lines, all);
        free(all);
        diag_fini(&ld);
}

/* ---- loading ---- */

Test(topo, default_loads_without_errors)
{
        struct topo t;
        cr_assert_eq(topo_load_default(&t, &d), 0);
        cr_assert_eq(d.n_errors + d.n_warnings, 0);
        cr_assert_str_eq(t.name, "default");
        cr_assert_eq(t.system.sips, 1);
        cr_assert_eq(t.sip.cubes, 4);
        cr_assert_eq(t.cube.noc.rows, 4);
        cr_assert_eq(t.cube.noc.cols, 4);
        cr_assert_eq(t.pe.dma.bw_bytes_per_s, 64 * GBPS);
        cr_assert_eq(t.cube.hbm.channel_bw_bytes_per_s, 51200000000ull);
        cr_assert_eq(t.pe.tcm.scratch_ceiling_bytes, 1024u << 10);
        cr_assert_eq(t.pe.math.cycles_per_element[TOPO_OP_EXP], 4);
        cr_assert_eq(t.pe.math.cycles_per_element[TOPO_OP_ADD], 1);
        /* The issue-cost table: composite 40 ns, every primitive 5 ns. */
        for (int op = 0; op < TOPO_OP_COUNT; op++)
                cr_assert_eq(t.pe.cpu.issue_cost_ps[op], op == TOPO_OP_COMPOSITE ? 40 * NS : 5 * NS,
                             "issue cost of %s", topo_op_name((enum topo_op)op));
        cr_assert_eq(t.pe.links.math_math.latency_ps, 0);
}

Test(topo, embedded_default_is_the_file)
{
        char path[4096];
        size_t file_len, emb_len;
        snprintf(path, sizeof path, "%s/topologies/default.yaml", source_dir());
        char *file = read_all(path, &file_len);
        cr_assert(file, "cannot read %s", path);
        const char *emb = topo_default_yaml(&emb_len);
        cr_assert_eq(emb_len, file_len, "the embedded default is stale: rebuild");
        cr_assert(memcmp(emb, file, file_len) == 0, "the embedded default is stale: rebuild");
        cr_assert_eq(emb[emb_len], '\0');
        free(file);
}

Test(topo, shipped_topologies_load)
{
        struct topo t;
        load_named("topologies/default.yaml", &t);
        cr_assert_str_eq(t.name, "default");
        load_named("topologies/small.yaml", &t);
        cr_assert_str_eq(t.name, "small");
        load_named("topologies/multi_sip.yaml", &t);
        cr_assert_str_eq(t.name, "multi_sip");
        cr_assert_eq(t.system.sips, 4);
}

Test(topo, overlay_keeps_the_default_elsewhere)
{
        struct topo def, small;
        load_named(NULL, &def);
        load_named("topologies/small.yaml", &small);
        cr_assert_eq(small.sip.cubes, 2);
        cr_assert_eq(small.cube.noc.rows, 2);
        cr_assert_eq(small.cube.hbm.channels, 4);
        /* Everything not stated is the default's. */
        small.sip.cubes = def.sip.cubes;
        small.cube.noc.rows = def.cube.noc.rows;
        small.cube.noc.cols = def.cube.noc.cols;
        small.cube.hbm.channels = def.cube.hbm.channels;
        memcpy(small.name, def.name, sizeof small.name);
        cr_assert(memcmp(&small, &def, sizeof def) == 0);
}

/* ---- totals ---- */

Test(topo, totals_by_hand)
{
        static const struct {
                const char *file;            /* the machine (NULL: the default) */
                struct topo_totals want;     /* its totals, worked out by hand */
        } cases[] = {
                { NULL, { .sips = 1, .cubes = 4,
                          .pes = 64,                                    /* 1 x 4 x 4 x 4 */
                          .peak_gemm_flops_per_s = 786432000000000ull,  /* 2 x 4096 x 1.5e9 x 64 */
                          .hbm_bw_bytes_per_s = 3276800000000ull,       /* 4 cubes x 16 x 51.2e9 */
                          .tcm_bytes = 134217728ull } },                /* 64 x 2 MiB */
                { "topologies/small.yaml", { .sips = 1, .cubes = 2,
                          .pes = 8,                                     /* 1 x 2 x 2 x 2 */
                          .peak_gemm_flops_per_s = 98304000000000ull,   /* 2 x 4096 x 1.5e9 x 8 */
                          .hbm_bw_bytes_per_s = 409600000000ull,        /* 2 cubes x 4 x 51.2e9 */
                          .tcm_bytes = 16777216ull } },                 /* 8 x 2 MiB */
        };
        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
                const struct topo_totals *w = &cases[i].want;
                const char *what = cases[i].file ? cases[i].file : "the default";
                struct topo t;
                struct topo_totals tt;
                load_named(cases[i].file, &t);
                topo_totals(&t, &tt);
                cr_assert_eq(tt.sips, w->sips, "%s", what);
                cr_assert_eq(tt.cubes, w->cubes, "%s", what);
                cr_assert_eq(tt.pes, w->pes, "%s", what);
                cr_assert_eq(tt.peak_gemm_flops_per_s, w->peak_gemm_flops_per_s, "%s", what);
                cr_assert_eq(tt.hbm_bw_bytes_per_s, w->hbm_bw_bytes_per_s, "%s", what);
                cr_assert_eq(tt.tcm_bytes, w->tcm_bytes, "%s", what);
        }
}

Test(topo, graph_counts)
{
        struct topo t;
        struct topo_graph g;
        load_graph(NULL, &t, &g);
        /* per cube: m_cpu + 16 channels + 16 routers + 16 x 5 PE nodes = 113 */
        cr_assert_eq(g.n_nodes, 1 + 4 * 113);
        /* per cube: 16 x 12 PE + 48 mesh + 32 hbm + 2 m_cpu + 2 host; ring of 4: 8 */
        cr_assert_eq(g.n_edges, 4 * (192 + 48 + 32 + 2 + 2) + 8);
        uint64_t nn, ne, bytes;
        topo_graph_size(&t, &nn, &ne, &bytes);
        cr_assert_eq(nn, g.n_nodes);
        cr_assert_eq(ne, g.n_edges);
        topo_graph_fini(&g);

        load_graph("topologies/multi_sip.yaml", &t, &g);
        unsigned inter_sip = 0;
        for (uint32_t e = 0; e < g.n_edges; e++)
                inter_sip += g.edges[e].cls == TOPO_EDGE_INTER_SIP;
        cr_assert_eq(inter_sip, 8, "a ring of 4 SIPs is 4 links, 8 edges");
        cr_assert_eq(g.totals.pes, 256);
        topo_graph_fini(&g);
}

/* ---- the snapshot ---- */

static char *default_json(void)
{
        struct topo t;
        struct topo_graph g;
        load_graph(NULL, &t, &g);
        char *buf = NULL;
        size_t n = 0;
        FILE *m = open_memstream(&buf, &n);
        cr_assert_eq(topo_graph_write_json(&g, m), 0);
        fclose(m);
        topo_graph_fini(&g);
        return buf;
}

Test(topo, golden_json)
{
        char path[4096];
        snprintf(path, sizeof path, "%s/tests/golden/topo_default.json", source_dir());
        char *got = default_json();
        const char *update = getenv("CUBESIM_UPDATE_GOLDEN");
        if (update && *update && strcmp(update, "0") != 0) {
                FILE *f = fopen(path, "wb");
                cr_assert(f, "cannot write %s", path);
                fputs(got, f);
                fclose(f);
        }
        char *want = read_all(path, NULL);
        cr_assert(want, "cannot read %s (regenerate: CUBESIM_UPDATE_GOLDEN=1)", path);
        cr_assert(strcmp(got, want) == 0,
                  "the default graph's JSON differs from %s; if intended, regenerate it "
                  "with CUBESIM_UPDATE_GOLDEN=1 and review the diff",
                  path);
        free(got);
        free(want);
}

static json_int_t node_id(json_t *nodes, const char *name)
{
        size_t i;
        json_t *n;
        json_array_foreach(nodes, i, n)
                if (strcmp(json_string_value(json_object_get(n, "name")), name) == 0)
                        return json_integer_value(json_object_get(n, "id"));
        cr_assert_fail("no node %s", name);
        return -1;
}

static bool has_edge(json_t *edges, json_int_t src, json_int_t dst, const char *cls)
{
        size_t i;
        json_t *e;
        json_array_foreach(edges, i, e)
                if (json_integer_value(json_object_get(e, "src")) == src &&
                    json_integer_value(json_object_get(e, "dst")) == dst &&
                    strcmp(json_string_value(json_object_get(e, "class")), cls) == 0)
                        return true;
        return false;
}

Test(topo, json_has_pipeline_edges)
{
        char *text = default_json();
        json_error_t err;
        json_t *root = json_loads(text, 0, &err);
        cr_assert(root, "JSON does not parse: %s at %d:%d", err.text, err.line, err.column);
        json_t *nodes = json_object_get(root, "nodes"), *edges = json_object_get(root, "edges");
        cr_assert(json_is_array(nodes) && json_is_array(edges));
        static const char *const pes[] = { "sip0.cube0.pe0", "sip0.cube3.pe15" };
        for (int k = 0; k < 2; k++) {
                char a[64], b[64];
#define ID(sfx) (snprintf(a, sizeof a, "%s.%s", pes[k], sfx), node_id(nodes, a))
                json_int_t dma = ID("dma"), gemm = ID("gemm"), math = ID("math");
                cr_assert(has_edge(edges, dma, gemm, "intra_pe"), "DMA->GEMM");
                cr_assert(has_edge(edges, gemm, math, "intra_pe"), "GEMM->MATH");
                cr_assert(has_edge(edges, math, math, "intra_pe"), "MATH->MATH self-edge");
                cr_assert(has_edge(edges, math, dma, "intra_pe"), "MATH->DMA");
                snprintf(b, sizeof b, "%s", pes[k]);
#undef ID
        }
        json_t *tot = json_object_get(root, "totals");
        cr_assert_eq(json_integer_value(json_object_get(tot, "pes")), 64);
        cr_assert_eq(json_integer_value(json_object_get(tot, "hbm_bw_bytes_per_s")),
                     3276800000000ll);
        json_t *m = json_object_get(root, "machine");
        cr_assert_eq(json_integer_value(json_object_get(
                             json_object_get(json_object_get(m, "pe"), "dma"), "bw_bytes_per_s")),
                     64000000000ll);
        json_decref(root);
        free(text);
}

/* ---- routes ---- */

static void routers_on(struct topo_graph *g, uint32_t src, uint32_t dst, uint32_t *out,
                       uint32_t *n)
{
        const uint32_t *edges;
        uint32_t ne;
        cr_assert_eq(topo_route(g, src, dst, &edges, &ne), 0);
        *n = 0;
        for (uint32_t i = 0; i < ne; i++) {
                uint32_t v = g->edges[edges[i]].dst;
                if (g->nodes[v].kind == TOPO_NODE_ROUTER)
                        out[(*n)++] = g->nodes[v].index;
        }
}

Test(topo, mesh_routes_are_x_then_y)
{
        struct topo t;
        struct topo_graph g;
        load_graph(NULL, &t, &g);
        uint32_t r[64], n;
        /* pe0 (0,0) -> pe15 (3,3): east along row 0, then south along col 3. */
        routers_on(&g, topo_node_index(&g, TOPO_NODE_PE_DMA, 0, 1, 0),
                   topo_node_index(&g, TOPO_NODE_PE_DMA, 0, 1, 15), r, &n);
        uint32_t want1[] = { 0, 1, 2, 3, 7, 11, 15 };
        cr_assert_eq(n, 7);
        cr_assert_arr_eq(r, want1, sizeof want1);
        /* pe14 (3,2) -> pe1 (0,1): west to col 1, then north. */
        routers_on(&g, topo_node_index(&g, TOPO_NODE_PE_DMA, 0, 2, 14),
                   topo_node_index(&g, TOPO_NODE_PE_DMA, 0, 2, 1), r, &n);
        uint32_t want2[] = { 14, 13, 9, 5, 1 };
        cr_assert_eq(n, 5);
        cr_assert_arr_eq(r, want2, sizeof want2);
        /* The whole route of the first pair, edge by edge. */
        const uint32_t *e;
        uint32_t ne;
        uint32_t src = topo_node_index(&g, TOPO_NODE_PE_DMA, 0, 1, 0);
        cr_assert_eq(topo_route(&g, src, topo_node_index(&g, TOPO_NODE_PE_DMA, 0, 1, 15), &e, &ne),
                     0);
        cr_assert_eq(ne, 8);
        cr_assert_eq(g.edges[e[0]].src, src);
        cr_assert_eq(g.edges[e[0]].dst, topo_router_at(&g, 0, 1, 0, 0));
        cr_assert_eq(g.edges[e[4]].dst, topo_router_at(&g, 0, 1, 1, 3));
        topo_graph_fini(&g);
}

static sim_ps lat(struct topo_graph *g, const char *a, const char *b)
{
        uint32_t x = topo_node_by_name(g, a), y = topo_node_by_name(g, b);
        cr_assert_neq(x, TOPO_NONE, "%s", a);
        cr_assert_neq(y, TOPO_NONE, "%s", b);
        return topo_path_latency(g, x, y);
}

Test(topo, path_latency_closed_form)
{
        struct topo t;
        struct topo_graph g;
        load_graph(NULL, &t, &g);
        /* Default: hop 1 ns, router 1 ns, PE port 1 ns, DMA overhead 2 ns,
         * CPU overhead 2 ns, cpu_dma 1 ns, host link 50 ns, M_CPU 50 ns,
         * HBM 100 ns, inter-cube 20 ns. Overheads of src are not counted. */
        cr_assert_eq(lat(&g, "sip0.cube0.pe0.dma", "sip0.cube0.pe0.dma"), 0);
        /* port 1 + 6 hops x 1 + port 1; 7 routers x 1 + dst DMA 2 */
        cr_assert_eq(lat(&g, "sip0.cube0.pe0.dma", "sip0.cube0.pe15.dma"), 17 * NS);
        /* host 50 + M_CPU 50 + M_CPU->r0 1 + r0 1 + 2 hops x (1 + 1) + port 1 + DMA 2
         * + cpu_dma 1 + CPU 2 */
        cr_assert_eq(lat(&g, "sip0.io_cpu", "sip0.cube2.pe5.cpu"), 112 * NS);
        /* ch3 attaches to router 7 (row 1, east edge): 100 + r7 1 + 4 hops x 2 + port 1
         * + DMA 2 */
        cr_assert_eq(topo_hbm_channel_router_index(&t, 3), 7);
        cr_assert_eq(lat(&g, "sip0.cube0.hbm.ch3", "sip0.cube0.pe0.dma"), 112 * NS);
        /* Neighbouring cubes: port 1 + r0 1 + link 20 + r0' 1 + port 1 + DMA 2 */
        cr_assert_eq(lat(&g, "sip0.cube0.pe0.dma", "sip0.cube1.pe0.dma"), 26 * NS);
        /* Two ring hops away: one more link and router */
        cr_assert_eq(lat(&g, "sip0.cube0.pe0.dma", "sip0.cube2.pe0.dma"), 47 * NS);
        /* GEMM -> MATH -> DMA -> TCM inside a PE: edges 1 + 1 + 1, MATH 1 + DMA 2 + TCM 1 */
        cr_assert_eq(lat(&g, "sip0.cube0.pe3.gemm", "sip0.cube0.pe3.tcm"), 7 * NS);
        topo_graph_fini(&g);
}

/* Plain Dijkstra over every edge (mesh links one by one): the reference. */
static void reference_dists(const struct topo_graph *g, uint32_t src, uint64_t *dist)
{
        bool *done = calloc(g->n_nodes, 1);
        for (uint32_t i = 0; i < g->n_nodes; i++)
                dist[i] = UINT64_MAX;
        dist[src] = 0;
        for (;;) {
                uint32_t u = TOPO_NONE;
                for (uint32_t i = 0; i < g->n_nodes; i++)
                        if (!done[i] && dist[i] != UINT64_MAX && (u == TOPO_NONE || dist[i] < dist[u]))
                                u = i;
                if (u == TOPO_NONE)
                        break;
                done[u] = true;
                for (uint32_t j = g->out_first[u]; j < g->out_first[u + 1]; j++) {
                        const struct topo_edge *e = &g->edges[g->out_edge[j]];
                        uint64_t nd = dist[u] + e->latency_ps + g->nodes[e->dst].node_overhead_ps;
                        if (nd < dist[e->dst])
                                dist[e->dst] = nd;
                }
        }
        free(done);
}

static void check_routes_from(struct topo_graph *g, uint32_t src)
{
        uint64_t *dist = malloc(g->n_nodes * sizeof *dist);
        reference_dists(g, src, dist);
        for (uint32_t dst = 0; dst < g->n_nodes; dst++) {
                const uint32_t *e;
                uint32_t n;
                cr_assert_eq(topo_route(g, src, dst, &e, &n), 0);
                sim_ps sum = 0;
                uint32_t at = src;
                for (uint32_t i = 0; i < n; i++) {
                        cr_assert_eq(g->edges[e[i]].src, at, "route %u->%u is not contiguous", src,
                                     dst);
                        at = g->edges[e[i]].dst;
                        sum += g->edges[e[i]].latency_ps + g->nodes[at].node_overhead_ps;
                }
                cr_assert_eq(at, dst);
                cr_assert_eq(topo_path_latency(g, src, dst), sum);
                cr_assert_eq(sum, dist[dst], "route %u->%u costs %llu, shortest is %llu", src, dst,
                             (unsigned long long)sum, (unsigned long long)dist[dst]);
        }
        /* One search for all destinations gives the same latencies. */
        uint32_t *all = malloc(g->n_nodes * sizeof *all);
        sim_ps *lats = malloc(g->n_nodes * sizeof *lats);
        for (uint32_t i = 0; i < g->n_nodes; i++)
                all[i] = g->n_nodes - 1 - i;
        cr_assert_eq(topo_path_latencies(g, src, all, g->n_nodes, lats), 0);
        for (uint32_t i = 0; i < g->n_nodes; i++)
                cr_assert_eq(lats[i], dist[all[i]], "batch latency %u->%u", src, all[i]);
        free(all);
        free(lats);
        free(dist);
}

Test(topo, routes_are_shortest_and_consistent)
{
        struct topo t;
        struct topo_graph g;
        load_graph("topologies/small.yaml", &t, &g);
        for (uint32_t s = 0; s < g.n_nodes; s++)
                check_routes_from(&g, s);
        topo_graph_fini(&g);

        load_graph("topologies/multi_sip.yaml", &t, &g);
        static const char *const srcs[] = { "sip0.io_cpu", "sip1.cube2.pe7.gemm",
                                            "sip3.cube0.hbm.ch5", "sip2.cube3.m_cpu",
                                            "sip0.cube1.router10" };
        for (size_t i = 0; i < sizeof srcs / sizeof srcs[0]; i++)
                check_routes_from(&g, topo_node_by_name(&g, srcs[i]));
        topo_graph_fini(&g);
}

/* Degenerate meshes, full networks, odd channel counts: every route is
 * still shortest and contiguous. */
Test(topo, routes_on_odd_shapes)
{
        static const char *const shapes[][6] = {
                { "cube.noc.rows=1", "cube.noc.cols=5", "sip.cubes=3", "sip.inter_cube.topology=full",
                  "cube.hbm.channels=3", NULL },
                { "cube.noc.rows=3", "cube.noc.cols=1", "system.sips=3",
                  "system.inter_sip.topology=full", "sip.cubes=2", NULL },
                { "cube.noc.rows=1", "cube.noc.cols=1", "cube.hbm.channels=1", "system.sips=2",
                  "sip.cubes=1", NULL },
                { "cube.noc.rows=3", "cube.noc.cols=2", "sip.cubes=2", "cube.hbm.channels=7",
                  "sip.inter_cube.latency_ns=500", NULL },
        };
        for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
                struct topo t;
                struct topo_graph g;
                load_named(NULL, &t);
                for (int k = 0; shapes[i][k]; k++)
                        cr_assert_eq(topo_set_kv(&t, shapes[i][k], &d), 0, "%s", shapes[i][k]);
                build(&t, &g);
                for (uint32_t s = 0; s < g.n_nodes; s++)
                        check_routes_from(&g, s);
                topo_graph_fini(&g);
        }
}

Test(topo, batch_latencies_for_a_launch)
{
        struct topo t;
        struct topo_graph g;
        load_graph("topologies/multi_sip.yaml", &t, &g);
        uint32_t io = topo_node_index(&g, TOPO_NODE_IO_CPU, 1, 0, 0);
        uint32_t cpus[64 + 2];
        sim_ps lats[64 + 2];
        for (uint32_t c = 0; c < 4; c++)
                for (uint32_t p = 0; p < 16; p++)
                        cpus[c * 16 + p] = topo_node_index(&g, TOPO_NODE_PE_CPU, 1, c, p);
        cpus[64] = cpus[3];                              /* duplicates are fine */
        cpus[65] = io;                                   /* so is the source */
        cr_assert_eq(topo_path_latencies(&g, io, cpus, 66, lats), 0);
        sim_ps worst = 0;
        for (int i = 0; i < 66; i++) {
                cr_assert_eq(lats[i], topo_path_latency(&g, io, cpus[i]), "target %d", i);
                if (lats[i] > worst)
                        worst = lats[i];
        }
        /* The farthest PE: pe15 (3,3) of any cube, 6 hops from the gateway:
         * host 50 + M_CPU 50 + 1 + r0 1 + 6 x 2 + port 1 + DMA 2 + 1 + CPU 2 */
        cr_assert_eq(worst, 120 * NS);
        cr_assert_eq(lats[65], 0);
        cr_assert_eq(topo_path_latencies(&g, io, (uint32_t[]){ g.n_nodes }, 1, lats), -EINVAL);
        topo_graph_fini(&g);
}

Test(topo, bad_route_arguments)
{
        struct topo t;
        struct topo_graph g;
        load_graph("topologies/small.yaml", &t, &g);
        const uint32_t *e;
        uint32_t n;
        cr_assert_eq(topo_route(&g, g.n_nodes, 0, &e, &n), -EINVAL);
        cr_assert_eq(topo_path_latency(&g, 0, g.n_nodes), TOPO_PS_NONE);
        cr_assert_eq(topo_node_index(&g, TOPO_NODE_PE_CPU, 0, 2, 0), TOPO_NONE);
        cr_assert_eq(topo_node_index(&g, TOPO_NODE_PE_CPU, 0, 1, 4), TOPO_NONE);
        cr_assert_eq(topo_node_by_name(&g, "sip0.cube1.pe4.cpu"), TOPO_NONE);
        cr_assert_eq(topo_node_by_name(&g, "sip0.cube1.pe3.cpux"), TOPO_NONE);
        topo_graph_fini(&g);
}

Test(topo, node_names_round_trip)
{
        struct topo t;
        struct topo_graph g;
        load_graph("topologies/multi_sip.yaml", &t, &g);
        for (uint32_t i = 0; i < g.n_nodes; i++) {
                char name[96];
                topo_node_name(&g, i, name, sizeof name);
                cr_assert_eq(topo_node_by_name(&g, name), i, "%s", name);
        }
        topo_graph_fini(&g);
}

/* With every PE of a cube reading from (then, separately, writing to)
 * every HBM channel, all channels at full bandwidth, no link on the routes
 * may be over its bandwidth. HBM bandwidth is shared by reads and writes,
 * so any read/write mix loads a link at most as much as one of the two. */
Test(topo, default_machine_is_balanced)
{
        struct topo t;
        struct topo_graph g;
        load_graph(NULL, &t, &g);
        uint32_t ch = t.cube.hbm.channels, pes = t.cube.noc.rows * t.cube.noc.cols;
        cr_assert_geq((uint64_t)pes * t.pe.dma.bw_bytes_per_s,
                      (uint64_t)ch * t.cube.hbm.channel_bw_bytes_per_s,
                      "the PE DMAs cannot take the cube's HBM bandwidth");
        double *load = calloc(g.n_edges, sizeof *load);
        double flow = (double)t.cube.hbm.channel_bw_bytes_per_s / pes;
        double worst = 0;
        for (int dir = 0; dir < 2; dir++) {
                memset(load, 0, g.n_edges * sizeof *load);
                for (uint32_t k = 0; k < ch; k++) {
                        for (uint32_t p = 0; p < pes; p++) {
                                uint32_t a = topo_node_index(&g, TOPO_NODE_HBM_CHANNEL, 0, 0, k);
                                uint32_t b = topo_node_index(&g, TOPO_NODE_PE_DMA, 0, 0, p);
                                const uint32_t *e;
                                uint32_t n;
                                cr_assert_eq(dir ? topo_route(&g, b, a, &e, &n)
                                                 : topo_route(&g, a, b, &e, &n),
                                             0);
                                /* NoC links carry a header per packet too. */
                                for (uint32_t i = 0; i < n; i++)
                                        load[e[i]] += g.edges[e[i]].cls == TOPO_EDGE_NOC
                                                              ? flow * (1.0 + (double)t.cube.noc.header_bytes /
                                                                                      t.cube.noc.packet_bytes)
                                                              : flow;
                        }
                }
                for (uint32_t e = 0; e < g.n_edges; e++) {
                        double u = load[e] / (double)g.edges[e].bw_bytes_per_s;
                        if (u > worst)
                                worst = u;
                        char a[64], b[64];
                        topo_node_name(&g, g.edges[e].src, a, sizeof a);
                        topo_node_name(&g, g.edges[e].dst, b, sizeof b);
                        cr_assert(u <= 1.0 + 1e-9, "%s: %s -> %s carries %.1f GB/s of %.1f",
                                  dir ? "writes" : "reads", a, b, load[e] / 1e9,
                                  (double)g.edges[e].bw_bytes_per_s / 1e9);
                }
        }
        cr_assert_gt(worst, 0.5, "the test should load some link substantially");
        free(load);
        topo_graph_fini(&g);
}

/* ---- costs ---- */

Test(topo, issue_cost_fallback_and_cycles)
{
        struct topo t;
        load_named(NULL, &t);
        cr_assert_eq(topo_issue_cost_ps(&t.pe.cpu, TOPO_OP_COMPOSITE), 40 * NS);
        cr_assert_eq(topo_set(&t, "pe.cpu.issue_cost_ns.load", "~", &d), 0);
        cr_assert_eq(t.pe.cpu.issue_cost_ps[TOPO_OP_LOAD], TOPO_COST_NONE);
        cr_assert_eq(topo_set(&t, "pe.cpu.dispatch_cycles", "7", &d), 0);
        cr_assert_eq(topo_issue_cost_ps(&t.pe.cpu, TOPO_OP_LOAD), 7 * NS); /* 7 cycles at 1 GHz */
        cr_assert_eq(topo_cycles_to_ps(1, 1500000000), 667);  /* 666.67 rounded up */
        cr_assert_eq(topo_cycles_to_ps(3, 1500000000), 2000);
        cr_assert_eq(topo_op_from_name("copy_to"), TOPO_OP_COPY_TO);
        cr_assert_eq(topo_op_from_name("nope"), -1);
        cr_assert(topo_op_is_math(TOPO_OP_ROWSUM));
        cr_assert(!topo_op_is_math(TOPO_OP_WAIT));
        cr_assert_eq(d.n_errors, 0);
}

/* ---- bad input, in process ---- */

Test(topo, three_problems_three_messages)
{
        assert_load_fails("version: 1\n"
                          "pe:\n"
                          "  dma:\n"
                          "    bw_gbps: -3\n"
                          "  links:\n"
                          "    cpu_dma:\n"
                          "      latncy_ns: 2\n"
                          "cube:\n"
                          "  noc:\n"
                          "    rows: many\n",
                          3,
                          (const char *const[]){
                                  "x.yaml:4:14: error: pe.dma.bw_gbps must be > 0 (got -3)",
                                  "x.yaml:7:7: error: unknown key 'latncy_ns' in pe.links.cpu_dma; "
                                  "did you mean 'latency_ns'?",
                                  "x.yaml:10:11: error: cube.noc.rows: expected an integer, got 'many'",
                                  NULL });
}

Test(topo, many_kinds_of_bad_input)
{
        static const struct {
                const char *text;            /* the file */
                const char *want;            /* one expected message */
        } cases[] = {
                { "", "x.yaml:1:1: error: the file is empty" },
                { "# only a comment\n", "x.yaml:1:1: error: the file is empty" },
                { "pe: {}\n", "x.yaml:1:1: error: missing required key 'version' in the top-level map" },
                { "version: 2\n", "x.yaml:1:10: error: version must be 1 (got 2)" },
                { "- a\n- b\n", "expected a map of topology keys at the top level, got a list" },
                { "version: 1\nbase: none\n", "x.yaml:1:1: error: missing required key 'system' in the top-level map" },
                { "version: 1\nbase: nothing\n", "base must be one of default, none (got 'nothing')" },
                { "version: 1\nsystem: {sips: 0}\n", "x.yaml:2:16: error: system.sips must be >= 1 (got 0)" },
                { "version: 1\nsystem: {sips: \"2\"}\n", "system.sips: expected an integer, got the string \"2\"" },
                { "version: 1\nsystem: {sips: 1e400}\n", "system.sips: expected an integer, got 1e400" },
                { "version: 1\npe: {dma: {bw_gbps: 1e400}}\n", "pe.dma.bw_gbps must be <= 1000000 (got 1e400)" },
                { "version: 1\npe: {dma: {bw_gbps: 1e-30}}\n", "which rounds to 0 bytes/s" },
                { "version: 1\npe: {dma: {bw_gbps: .inf}}\n", "pe.dma.bw_gbps: expected a number, got '.inf'" },
                { "version: 1\npe: {dma: {bw_gbps: }}\n", "pe.dma.bw_gbps: expected a number, got null" },
                { "version: 1\npe: {dma: [1, 2]}\n", "pe.dma: expected a map, got a list" },
                { "version: 1\npe: {tcm: {scratch_ceiling_kib: 4096}}\n",
                  "x.yaml:2:33: error: pe.tcm.scratch_ceiling_kib (4096) must be <= pe.tcm.size_kib (2048)" },
                { "version: 1\nsip: {inter_cube: {topology: rng}}\n", "did you mean 'ring'?" },
                { "version: 1\nsip: {cubes: !!int 3}\n", "YAML tags are not supported" },
                { "version: 1\nx: &a 1\ny: *a\n", "x.yaml:3:4: error: aliases are not supported" },
                { "version: 1\n? [a]\n: 1\n", "a key in the top-level map must be a plain word, got a list" },
                { "version: 1\n---\nversion: 1\n", "a second YAML document" },
                { "version: 1\npe: {dma: {bw_gbps: 3\n", "YAML syntax error" },
                { "version: 1\ncube: {noc: {rows: 1024, cols: 1024}}\n",
                  "the machine has 4194304 PEs (system.sips 1 x sip.cubes 4 x cube.noc.rows 1024 x cube.noc.cols 1024); the limit is 1048576" },
                { "version: 1\nsystem: {sips: 4096}\ncube: {hbm: {channels: 1024}}\n",
                  "the component graph would need" },
                { "version: 1\npe: {gemm: {macs_per_cycle: 1048576, clock_mhz: 100000}}\n"
                  "system: {sips: 16}\nsip: {cubes: 16}\n",
                  "overflows 64 bits of FLOP/s" },
                { "version: 1\nname: \"a\\0b\"\n", "name: expected a string" },
                { "version: 1\npe:\n  cpu:\n    issue_cost_ns:\n      lod: 3\n",
                  "x.yaml:5:7: error: unknown key 'lod' in pe.cpu.issue_cost_ns; did you mean 'load'?" },
        };
        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
                assert_load_fails(cases[i].text, 0, (const char *const[]){ cases[i].want, NULL });
}

Test(topo, hostile_sizes_and_nesting)
{
        struct topo t;
        /* Over the size cap: rejected before parsing. */
        size_t big = TOPO_MAX_FILE_BYTES + 1;
        char *text = malloc(big);
        memset(text, '#', big);
        cr_assert_eq(topo_load_text("big.yaml", text, big, &t, &d), -EINVAL);
        free(text);
        /* Deep nesting: stopped at the cap, no recursion blow-up. */
        size_t depth = 200000;
        text = malloc(2 * depth + 32);
        size_t n = (size_t)sprintf(text, "version: 1\nx: ");
        memset(text + n, '[', depth);
        memset(text + n + depth, ']', depth);
        n += 2 * depth;
        cr_assert_eq(topo_load_text("deep.yaml", text, n, &t, &d), -EINVAL);
        free(text);
        /* Many nodes. */
        FILE *m = open_memstream(&text, &n);
        fputs("version: 1\nx: [", m);
        for (int i = 0; i < TOPO_MAX_YAML_NODES + 10; i++)
                fputs("1,", m);
        fputs("1]\n", m);
        fclose(m);
        cr_assert_eq(topo_load_text("many.yaml", text, n, &t, &d), -EINVAL);
        free(text);
        /* Binary junk. */
        char junk[256];
        for (int i = 0; i < 256; i++)
                junk[i] = (char)(i * 37 + 11);
        cr_assert_eq(topo_load_text("junk.yaml", junk, sizeof junk, &t, &d), -EINVAL);
        cr_assert_geq(d.n_errors, 4);
        char *all = NULL;
        m = open_memstream(&all, &n);
        diag_print(&d, m);
        fclose(m);
        assert_has(all, "big.yaml: error: the file is larger than 16 MiB");
        assert_has(all, "deep.yaml:2:");
        assert_has(all, "nesting deeper than 32 levels");
        assert_has(all, "too many YAML nodes");
        assert_has(all, "junk.yaml:");
        free(all);
}

Test(topo, missing_file)
{
        struct topo t;
        cr_assert_eq(topo_load_file("/nonexistent/x.yaml", &t, &d), -EINVAL);
        cr_assert_eq(d.n_errors, 1);
        cr_assert(strstr(d.head->text, "/nonexistent/x.yaml: error: cannot open"));
}

/* ---- --set ---- */

Test(topo, set_overrides)
{
        struct topo t;
        load_named(NULL, &t);
        cr_assert_eq(topo_set(&t, "pe.dma.bw_gbps", "128", &d), 0);
        cr_assert_eq(t.pe.dma.bw_bytes_per_s, 128 * GBPS);
        cr_assert_eq(topo_set_kv(&t, "cube.noc.hop_latency_ns=0.25", &d), 0);
        cr_assert_eq(t.cube.noc.hop_latency_ps, 250);
        cr_assert_eq(topo_set_kv(&t, "system.inter_sip.topology=full", &d), 0);
        cr_assert_eq(t.system.sip_net, TOPO_NET_FULL);
        cr_assert_eq(topo_set_kv(&t, "name=tweaked", &d), 0);
        cr_assert_str_eq(t.name, "tweaked");
        cr_assert_eq(topo_set_kv(&t, "pe.math.cycles_per_element.exp=8", &d), 0);
        cr_assert_eq(t.pe.math.cycles_per_element[TOPO_OP_EXP], 8);
        cr_assert_eq(d.n_errors, 0);
}

Test(topo, bad_set_fails_and_leaves_machine_unchanged)
{
        static const struct {
                const char *kv;              /* the --set argument */
                const char *want;            /* expected message */
        } cases[] = {
                { "pe.dma.bw_gbps=-1", "error: --set pe.dma.bw_gbps=-1: pe.dma.bw_gbps must be > 0 (got -1)" },
                { "pe.dma.bw_gbp=3", "unknown topology parameter 'pe.dma.bw_gbp'; did you mean 'pe.dma.bw_gbps'?" },
                { "pe.dma=3", "'pe.dma' is a group of parameters; set one of: pe.dma.channels" },
                { "pe.dma.channels=two", "pe.dma.channels: expected an integer, got 'two'" },
                { "pe.tcm.scratch_ceiling_kib=4096", "pe.tcm.scratch_ceiling_kib (4096) must be <= pe.tcm.size_kib (2048)" },
                { "cube.noc.cols=0", "cube.noc.cols must be >= 1 (got 0)" },
                { "version=1", "'version' can only be given in a file" },
                { "nonsense", "--set nonsense: expected key=value" },
                { "pe.dma.bw_gbps=", "pe.dma.bw_gbps: expected a number, got null" },
        };
        struct topo t, before;
        load_named(NULL, &t);
        before = t;
        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
                struct diag e;
                diag_init(&e);
                int rc = topo_set_kv(&t, cases[i].kv, &e);
                cr_assert_eq(rc, -EINVAL, "--set %s succeeded", cases[i].kv);
                char *all = NULL;
                size_t n;
                FILE *m = open_memstream(&all, &n);
                diag_print(&e, m);
                fclose(m);
                assert_has(all, cases[i].want);
                free(all);
                diag_fini(&e);
                cr_assert(memcmp(&t, &before, sizeof t) == 0, "--set %s changed the machine",
                          cases[i].kv);
        }
        /* Limits hold across overrides: each is fine alone, not together. */
        cr_assert_eq(topo_set_kv(&t, "sip.cubes=4096", &d), 0);
        cr_assert_eq(topo_set_kv(&t, "cube.noc.rows=1024", &d), -EINVAL);
        assert_has(d.head->text, "error: --set cube.noc.rows=1024: the machine has 16777216 PEs");
        cr_assert_eq(t.cube.noc.rows, 4);
}

/* ---- text output is a complete topology ---- */

Test(topo, text_output_reloads_to_the_same_machine)
{
        struct topo t, back;
        struct topo_graph g, g2;
        load_named("topologies/multi_sip.yaml", &t);
        cr_assert_eq(topo_set(&t, "pe.cpu.issue_cost_ns.wait", "~", &d), 0);
        cr_assert_eq(topo_set(&t, "cube.noc.hop_latency_ns", "0.123", &d), 0);
        cr_assert_eq(topo_set(&t, "pe.dma.bw_gbps", "51.123456789", &d), 0);
        cr_assert_eq(topo_set(&t, "pe.cpu.clock_mhz", "1333.333333", &d), 0);
        build(&t, &g);
        char *text = NULL, *j1 = NULL, *j2 = NULL;
        size_t n, n1, n2;
        FILE *m = open_memstream(&text, &n);
        cr_assert_eq(topo_graph_write_text(&g, m), 0);
        fclose(m);
        int rc = topo_load_text("text.yaml", text, n, &back, &d);
        if (rc)
                diag_print(&d, stderr);
        cr_assert_eq(rc, 0);
        cr_assert(memcmp(&t, &back, sizeof t) == 0, "text output does not reload identically");
        build(&back, &g2);
        m = open_memstream(&j1, &n1);
        topo_graph_write_json(&g, m);
        fclose(m);
        m = open_memstream(&j2, &n2);
        topo_graph_write_json(&g2, m);
        fclose(m);
        cr_assert_str_eq(j1, j2);
        free(text);
        free(j1);
        free(j2);
        topo_graph_fini(&g);
        topo_graph_fini(&g2);
}

Test(topo, dot_output)
{
        struct topo t;
        struct topo_graph g;
        load_graph("topologies/small.yaml", &t, &g);
        char *text = NULL;
        size_t n;
        FILE *m = open_memstream(&text, &n);
        cr_assert_eq(topo_graph_write_dot(&g, m), 0);
        fclose(m);
        cr_assert(strncmp(text, "digraph \"small\" {", 17) == 0);
        unsigned arrows = 0;
        for (const char *p = text; (p = strstr(p, " -> ")); p++)
                arrows++;
        cr_assert_eq(arrows, g.n_edges);
        free(text);
        topo_graph_fini(&g);
}

/* ---- torus NoCs and DRAM attach points ---- */

/* Default machine with one cube of rows x cols routers of the given shape. */
static void noc_machine(struct topo *t, const char *shape, unsigned rows, unsigned cols)
{
        char kv[64];
        load_named(NULL, t);
        cr_assert_eq(topo_set(t, "sip.cubes", "1", &d), 0);
        cr_assert_eq(topo_set(t, "cube.noc.shape", shape, &d), 0);
        snprintf(kv, sizeof kv, "cube.noc.rows=%u", rows);
        cr_assert_eq(topo_set_kv(t, kv, &d), 0);
        snprintf(kv, sizeof kv, "cube.noc.cols=%u", cols);
        cr_assert_eq(topo_set_kv(t, kv, &d), 0);
}

/* Router hops of the route between the DMAs of PEs a and b. */
static uint32_t pe_hops(struct topo_graph *g, uint32_t a, uint32_t b, uint32_t *routers)
{
        uint32_t n;
        routers_on(g, topo_node_index(g, TOPO_NODE_PE_DMA, 0, 0, a),
                   topo_node_index(g, TOPO_NODE_PE_DMA, 0, 0, b), routers, &n);
        return n ? n - 1 : 0;        /* the routers entered, less the source's */
}

static uint32_t ring_min(uint32_t from, uint32_t to, uint32_t n)
{
        uint32_t fwd = (to + n - from) % n, back = (from + n - to) % n;
        return fwd < back ? fwd : back;
}

Test(topo, torus_routes_take_the_shorter_way_round)
{
        struct topo t;
        struct topo_graph g;
        noc_machine(&t, "torus", 5, 7);
        build(&t, &g);
        uint64_t n_nodes, n_edges, bytes;
        topo_graph_size(&t, &n_nodes, &n_edges, &bytes);
        cr_assert_eq(n_edges, g.n_edges);
        uint32_t r[64];
        for (uint32_t a = 0; a < 35; a++)
                for (uint32_t b = 0; b < 35; b++)
                        cr_assert_eq(pe_hops(&g, a, b, r),
                                     ring_min(a % 7, b % 7, 7) + ring_min(a / 7, b / 7, 5),
                                     "torus route %u -> %u", a, b);
        /* (0,0) -> (4,6): west across the wrap to col 6, then north to row 4. */
        uint32_t want[] = { 0, 6, 34 };
        cr_assert_eq(pe_hops(&g, 0, 34, r), 2);
        cr_assert_arr_eq(r, want, sizeof want);
        /* Every route is a shortest path of the torus, and contiguous. */
        check_routes_from(&g, topo_node_index(&g, TOPO_NODE_PE_DMA, 0, 0, 0));
        check_routes_from(&g, topo_node_index(&g, TOPO_NODE_HBM_CHANNEL, 0, 0, 3));
        /* Closed form: port 1 + 2 hops x (1 + 1) + router 1 + port 1 + DMA 2 = 9 ns. */
        cr_assert_eq(topo_path_latency(&g, topo_node_index(&g, TOPO_NODE_PE_DMA, 0, 0, 0),
                                       topo_node_index(&g, TOPO_NODE_PE_DMA, 0, 0, 34)),
                     9 * NS);
        topo_graph_fini(&g);
}

Test(topo, dual_torus_routes_use_one_direction_per_noc)
{
        struct topo t;
        struct topo_graph g;
        noc_machine(&t, "dual_torus", 10, 8);
        build(&t, &g);
        uint32_t r[64];
        for (uint32_t a = 0; a < 80; a++) {
                for (uint32_t b = 0; b < 80; b++) {
                        uint32_t ra = a / 8, ca = a % 8, rb = b / 8, cb = b % 8;
                        uint32_t noc0 = (cb + 8 - ca) % 8 + (rb + 10 - ra) % 10;
                        uint32_t noc1 = (ca + 8 - cb) % 8 + (ra + 10 - rb) % 10;
                        uint32_t n = pe_hops(&g, a, b, r);
                        cr_assert_eq(n, noc0 <= noc1 ? noc0 : noc1, "route %u -> %u", a, b);
                        /* NoC 0 only moves east or south, NoC 1 only north or west. */
                        for (uint32_t i = 0; i < n; i++) {
                                uint32_t x = r[i], y = r[i + 1];
                                bool east = y % 8 == (x % 8 + 1) % 8 && y / 8 == x / 8;
                                bool south = y / 8 == (x / 8 + 1) % 10 && y % 8 == x % 8;
                                bool west = x % 8 == (y % 8 + 1) % 8 && y / 8 == x / 8;
                                bool north = x / 8 == (y / 8 + 1) % 10 && y % 8 == x % 8;
                                if (noc0 <= noc1)
                                        cr_assert(east || south, "NoC 0 hop %u -> %u", x, y);
                                else
                                        cr_assert(north || west, "NoC 1 hop %u -> %u", x, y);
                        }
                }
        }
        /* (0,0) -> (0,7): one hop west over the wrap (NoC 1), not seven east. */
        uint32_t want[] = { 0, 7 };
        cr_assert_eq(pe_hops(&g, 0, 7, r), 1);
        cr_assert_arr_eq(r, want, sizeof want);
        /* (0,0) -> (1,1): a tie (2 against 16) goes east then south on NoC 0. */
        uint32_t want2[] = { 0, 1, 9 };
        cr_assert_eq(pe_hops(&g, 0, 9, r), 2);
        cr_assert_arr_eq(r, want2, sizeof want2);
        topo_graph_fini(&g);
}

Test(topo, dram_channels_attach_where_the_file_says)
{
        static const char text[] = "version: 1\n"
                                   "cube:\n"
                                   "  noc: {rows: 4, cols: 4, shape: dual_torus}\n"
                                   "  hbm:\n"
                                   "    channels: 5\n"
                                   "    attach: [[0, 0], [3, 2], [1, 3]]\n";
        struct topo t;
        struct topo_graph g;
        cr_assert_eq(topo_load_text("attach.yaml", text, strlen(text), &t, &d), 0);
        cr_assert_eq(t.cube.hbm.attach.n, 3);
        static const uint32_t want[5] = { 0, 14, 7, 0, 14 };    /* row * 4 + col, ch % 3 */
        build(&t, &g);
        for (uint32_t ch = 0; ch < 5; ch++) {
                cr_assert_eq(topo_hbm_channel_router_index(&t, ch), want[ch], "ch %u", ch);
                uint32_t c = topo_node_index(&g, TOPO_NODE_HBM_CHANNEL, 0, 0, ch);
                uint32_t r = topo_node_index(&g, TOPO_NODE_ROUTER, 0, 0, want[ch]);
                cr_assert_neq(topo_edge_between(&g, c, r), TOPO_NONE);
                cr_assert_neq(topo_edge_between(&g, r, c), TOPO_NONE);
                cr_assert_eq(topo_node_router(&g, c), r);
        }
        /* ch1 at (3,2) -> pe15 (3,3): 100 + router 1 + 1 hop x 2 + port 1 + DMA 2. */
        cr_assert_eq(topo_path_latency(&g, topo_node_index(&g, TOPO_NODE_HBM_CHANNEL, 0, 0, 1),
                                       topo_node_index(&g, TOPO_NODE_PE_DMA, 0, 0, 15)),
                     106 * NS);
        /* The text form lists them and reloads to the same machine. */
        char *out = NULL;
        size_t n;
        FILE *m = open_memstream(&out, &n);
        cr_assert_eq(topo_graph_write_text(&g, m), 0);
        fclose(m);
        assert_has(out, "attach: [[0, 0], [3, 2], [1, 3]]");
        assert_has(out, "shape: dual_torus");
        struct topo back;
        cr_assert_eq(topo_load_text("text.yaml", out, n, &back, &d), 0);
        cr_assert(memcmp(&t, &back, sizeof t) == 0);
        free(out);
        topo_graph_fini(&g);
}

Test(topo, bad_attach_and_shape_are_located)
{
        assert_load_fails("version: 1\n"
                          "cube:\n"
                          "  noc: {rows: 4, cols: 4, shape: toroid}\n"
                          "  hbm:\n"
                          "    attach: [[0, 0], [1], [2, x], 7, [4, 0]]\n",
                          4,
                          (const char *const[]){
                                  "x.yaml:3:34: error: cube.noc.shape must be one of mesh, torus, "
                                  "dual_torus (got 'toroid')",
                                  "x.yaml:5:22: error: cube.hbm.attach[1]: expected [row, col] with "
                                  "integers",
                                  "x.yaml:5:27: error: cube.hbm.attach[2]: expected [row, col]",
                                  "x.yaml:5:35: error: cube.hbm.attach[3]: expected [row, col]",
                                  NULL });
        assert_load_fails("version: 1\n"
                          "cube:\n"
                          "  noc: {rows: 4, cols: 4}\n"
                          "  hbm: {attach: [[0, 0], [4, 1]]}\n",
                          0,
                          (const char *const[]){
                                  "x.yaml:4:17: error: cube.hbm.attach[1] = [4, 1] is outside the "
                                  "4 x 4 NoC",
                                  NULL });
        assert_load_fails("version: 1\ncube: {hbm: {attach: 3}}\n", 0,
                          (const char *const[]){
                                  "cube.hbm.attach: expected a list of [row, col] pairs, got '3'",
                                  NULL });
        /* A list is not a --set value. */
        struct topo t;
        load_named(NULL, &t);
        cr_assert_eq(topo_set(&t, "cube.hbm.attach", "[[0, 0]]", &d), -EINVAL);
        cr_assert_eq(d.n_errors, 1);
}

Test(topo, compute_grid_fits_in_the_noc)
{
        assert_load_fails("version: 1\n"
                          "cube:\n"
                          "  compute_cols: 5\n"
                          "  noc: {rows: 4, cols: 4}\n",
                          0,
                          (const char *const[]){
                                  "x.yaml:4:24: error: the compute grid (cube.compute_cols 5 x "
                                  "cube.compute_rows 0) must fit in the 4 x 4 NoC",
                                  NULL });
        struct topo t;
        load_named("topologies/tt_wormhole_n150.yaml", &t);
        cr_assert_eq(t.cube.compute_cols, 8);
        cr_assert_eq(t.cube.compute_rows, 8);
        cr_assert_eq(t.cube.noc.rows, 10);
}

/* Inter-SIP links: a mesh of SIPs makes its east and south pairs; with
 * ports, each of a pair's links is an edge pair between the ports (a SIP's
 * k-th link at ports[k % n]); without, one edge pair of links x the
 * bandwidth between the gateways. */
static void count_sip_edges(const char *text, uint32_t want_edges, uint64_t want_bw,
                            uint32_t want_src_index)
{
        struct topo t;
        struct topo_graph g;
        cr_assert_eq(topo_load_text("x.yaml", text, strlen(text), &t, &d), 0, "%s", text);
        build(&t, &g);
        uint32_t n = 0, first = TOPO_NONE;
        for (uint32_t e = 0; e < g.n_edges; e++) {
                if (g.edges[e].cls != TOPO_EDGE_INTER_SIP)
                        continue;
                if (first == TOPO_NONE)
                        first = e;
                n++;
                cr_assert_eq(g.edges[e].bw_bytes_per_s, want_bw);
        }
        cr_assert_eq(n, want_edges);
        cr_assert_eq(g.nodes[g.edges[first].src].index, want_src_index);
        topo_graph_fini(&g);
}

Test(topo, inter_sip_links_mesh_and_ports)
{
        /* A 2 x 3 mesh: 2 rows x 2 east pairs + 3 south pairs = 7 pairs. */
        count_sip_edges("version: 1\nsystem: {sips: 6, inter_sip: {topology: mesh, mesh_cols: 3, "
                        "links: 2, bw_gbps: 12.5}}\n",
                        14, 25 * GBPS, 0);
        /* The same with ports: two edge pairs a pair; SIP 0's first link at
         * port 0 ([1, 2] = router 6 of the 4 x 4 NoC). */
        count_sip_edges("version: 1\nsystem: {sips: 6, inter_sip: {topology: mesh, mesh_cols: 3, "
                        "links: 2, bw_gbps: 12.5, ports: [[1, 2], [3, 3]]}}\n",
                        28, 12500000000ull, 6);
        /* A short last row: 6 SIPs in rows of 4 make 3 + 1 east and 2 south pairs. */
        count_sip_edges("version: 1\nsystem: {sips: 6, inter_sip: {topology: mesh, mesh_cols: 4}}\n",
                        12, 100 * GBPS, 0);
        /* A line of 4 has 3 pairs, a ring 4. */
        count_sip_edges("version: 1\nsystem: {sips: 4, inter_sip: {topology: line}}\n", 6,
                        100 * GBPS, 0);
        count_sip_edges("version: 1\nsystem: {sips: 4, inter_sip: {topology: ring}}\n", 8,
                        100 * GBPS, 0);
}

/* 8sip.yaml states its links as 9 of 25 GB/s without ports: still one
 * 225 GB/s edge pair per ring neighbour, 500 ns, at the gateways (its
 * timing before links were counted). */
Test(topo, eight_sip_links_keep_their_timing)
{
        struct topo t;
        struct topo_graph g;
        load_graph("topologies/8sip.yaml", &t, &g);
        uint32_t n = 0;
        for (uint32_t e = 0; e < g.n_edges; e++) {
                const struct topo_edge *x = &g.edges[e];
                if (x->cls != TOPO_EDGE_INTER_SIP)
                        continue;
                n++;
                cr_assert_eq(x->bw_bytes_per_s, 225 * GBPS);
                cr_assert_eq(x->latency_ps, 500 * NS);
                cr_assert_eq(x->src, topo_cube_gateway(&g, g.nodes[x->src].sip, 0));
        }
        cr_assert_eq(n, 16);
        topo_graph_fini(&g);
}
