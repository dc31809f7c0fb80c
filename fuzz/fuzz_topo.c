/* fuzz/fuzz_topo.c: libFuzzer harness for the topology loader (topo/topo.h).
 *
 * Feeds arbitrary bytes to topo_load_text, then, on a machine it accepted:
 *   - applies every `#=key=value` line of the input with topo_set_kv (a YAML
 *     comment to the loader, so the same bytes fuzz both), which must either
 *     succeed or leave the machine unchanged;
 *   - writes the machine as text (topo_graph_write_text, the `topo show`
 *     form) and loads that back: the loader must accept it and give a
 *     machine that writes the same text (topo_emit.c's promise);
 *   - when its graph is small, builds the graph and asks for a route and a
 *     path latency from the first IO_CPU to the last PE's TCM.
 * A crash, a sanitizer report, a leak, an error code without a message (or
 * the reverse) or a broken round trip aborts. Build and run: fuzz/README.md
 * or scripts/fuzz.sh. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/diag.h"
#include "topo/topo.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Graphs above this many nodes are not built: the loader accepts machines
 * of up to TOPO_MAX_GRAPH_BYTES, which would make each run take seconds. */
#define FUZZ_MAX_NODES 4096u

/* The machine as `topo show` prints it, without building its graph: the
 * text form reads only the machine, the edge list and the totals. */
static char *machine_text(const struct topo *t, size_t *len)
{
        struct topo_graph g;
        memset(&g, 0, sizeof g);
        g.topo = *t;
        topo_totals(t, &g.totals);
        char *buf = NULL;
        FILE *f = open_memstream(&buf, len);
        if (!f)
                abort();
        if (topo_graph_write_text(&g, f) < 0)
                abort();
        fclose(f);
        return buf;
}

/* Apply the input's `#=key=value` lines; a rejected one must change nothing. */
static void apply_sets(struct topo *t, const uint8_t *data, size_t size)
{
        size_t at = 0;
        while (at < size) {
                const uint8_t *nl = memchr(data + at, '\n', size - at);
                size_t end = nl ? (size_t)(nl - data) : size;
                if (end - at > 2 && data[at] == '#' && data[at + 1] == '=') {
                        char *kv = strndup((const char *)data + at + 2, end - at - 2);
                        if (!kv)
                                abort();
                        struct topo before = *t;
                        struct diag d;
                        diag_init(&d);
                        int rc = topo_set_kv(t, kv, &d);
                        if ((rc == 0) != (d.n_errors == 0))
                                abort();
                        if (rc < 0 && memcmp(&before, t, sizeof before) != 0)
                                abort();     /* "on error t is unchanged" */
                        diag_fini(&d);
                        free(kv);
                }
                at = end + 1;
        }
}

static void round_trip(const struct topo *t)
{
        size_t len1, len2;
        char *text1 = machine_text(t, &len1);
        struct topo back;
        struct diag d;
        diag_init(&d);
        if (topo_load_text("shown.yaml", text1, len1, &back, &d) < 0) {
                diag_print(&d, stderr);
                fprintf(stderr, "--- the text that did not load back:\n%s", text1);
                abort();
        }
        char *text2 = machine_text(&back, &len2);
        if (len1 != len2 || memcmp(text1, text2, len1) != 0) {
                fprintf(stderr, "--- first:\n%s--- loaded back:\n%s", text1, text2);
                abort();
        }
        topo_fini(&back);
        diag_fini(&d);
        free(text1);
        free(text2);
}

static void exercise_graph(const struct topo *t)
{
        uint64_t n_nodes, n_edges, bytes;
        topo_graph_size(t, &n_nodes, &n_edges, &bytes);
        if (n_nodes > FUZZ_MAX_NODES)
                return;
        struct topo_graph g;
        struct diag d;
        diag_init(&d);
        if (topo_build_graph(t, &g, &d) < 0) {
                if (d.n_errors == 0)
                        abort();
                diag_fini(&d);
                return;
        }
        if (g.n_nodes != n_nodes || g.n_edges != n_edges)
                abort();     /* topo_graph_size must predict the graph */
        uint32_t sips = t->system.sips, cubes = t->sip.cubes;
        uint32_t pes = t->cube.noc.rows * t->cube.noc.cols;
        uint32_t src = topo_node_index(&g, TOPO_NODE_IO_CPU, 0, 0, 0);
        uint32_t dst = topo_node_index(&g, TOPO_NODE_TCM, sips - 1, cubes - 1, pes - 1);
        if (src == TOPO_NONE || dst == TOPO_NONE)
                abort();
        const uint32_t *edges;
        uint32_t n;
        if (topo_route(&g, src, dst, &edges, &n) == 0)
                for (uint32_t i = 0; i < n; i++)
                        if (edges[i] >= g.n_edges)
                                abort();
        sim_ps one = topo_path_latency(&g, src, dst), many;
        if (topo_path_latencies(&g, src, &dst, 1, &many) == 0 && many != one)
                abort();     /* the one-search form must agree */
        topo_graph_fini(&g);
        diag_fini(&d);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        struct topo t;
        struct diag d;
        diag_init(&d);
        int rc = topo_load_text("fuzz.yaml", (const char *)data, size, &t, &d);
        if ((rc == 0) != (d.n_errors == 0))
                abort();
        if (rc == 0) {
                apply_sets(&t, data, size);
                round_trip(&t);
                exercise_graph(&t);
        }
        topo_fini(&t);
        diag_fini(&d);
        return 0;
}
