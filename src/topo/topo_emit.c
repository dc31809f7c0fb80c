/* topo/topo_emit.c: a component graph as JSON (machine, nodes, edges,
 * totals), graphviz DOT, or text.
 *
 * JSON is canonical: keys in a fixed order, integers only (ps, bytes,
 * bytes/s, Hz), one node or edge per line, so snapshots diff well. The
 * text form is the resolved machine as a complete YAML topology
 * (`base: none`, the file's units) followed by the graph's counts and the
 * totals as comments: loading it back gives the same machine. */
#include "topo/topo_int.h"

#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"

static const void *cslot(const struct topo *t, const struct topo__field *f)
{
        return (const char *)t + f->offset;
}

static bool is_leaf_stored(const struct topo__field *f)
{
        return f->type != FT_MAP && f->store != FS_NONE && f->store != FS_BASE;
}

/* ---- JSON ---- */

struct named_obj {
        const char *path;            /* schema path of the map */
        json_t *obj;                 /* borrowed from the tree */
};

static json_t *leaf_json(const struct topo *t, const struct topo__field *f)
{
        const void *p = cslot(t, f);
        switch (f->store) {
        case FS_U32: return json_integer(*(const uint32_t *)p);
        case FS_NAME: return json_string((const char *)p);
        case FS_NET: return json_string(topo__net_words[*(const enum topo_net *)p]);
        case FS_SHAPE: return json_string(topo__shape_words[*(const enum topo_noc_shape *)p]);
        case FS_COORDS: {
                const struct topo_coords *c = p;
                json_t *a = json_array();
                for (uint32_t i = 0; i < c->n; i++)
                        json_array_append_new(a, json_pack("[ii]", c->at[i].row, c->at[i].col));
                return a;
        }
        case FS_COST:
                if (*(const sim_ps *)p == TOPO_COST_NONE)
                        return json_null();
                return json_integer((json_int_t) * (const sim_ps *)p);
        case FS_PJ:
                if (f->type == FT_PJ_DT && *(const uint64_t *)p == TOPO_FJ_DERIVED)
                        return json_integer((json_int_t)llround(topo_gemm_mac_fj(
                                &t->pe.gemm, (enum topo_mac_dt)(((const uint64_t *)p -
                                                                 t->pe.gemm.mac_fj)))));
                return json_integer((json_int_t) * (const uint64_t *)p);
        default: return json_integer((json_int_t) * (const uint64_t *)p);
        }
}

static json_t *machine_json(const struct topo *t)
{
        json_t *root = json_object();
        struct named_obj maps[64];
        size_t n_maps = 0;
        for (size_t i = 0; i < topo__n_fields; i++) {
                const struct topo__field *f = &topo__fields[i];
                if (f->type != FT_MAP && !is_leaf_stored(f))
                        continue;
                const char *dot = strrchr(f->path, '.');
                json_t *parent = root;
                if (dot) {
                        size_t plen = (size_t)(dot - f->path);
                        for (size_t j = 0; j < n_maps; j++)
                                if (strlen(maps[j].path) == plen &&
                                    strncmp(maps[j].path, f->path, plen) == 0)
                                        parent = maps[j].obj;
                }
                char key[96];
                topo__stored_name(dot ? dot + 1 : f->path, key, sizeof key);
                if (f->type == FT_MAP) {
                        json_t *o = json_object();
                        json_object_set_new(parent, key, o);
                        CS_ASSERT(n_maps < ARRAY_LEN(maps));
                        maps[n_maps++] = (struct named_obj){ f->path, o };
                } else {
                        json_object_set_new(parent, key, leaf_json(t, f));
                }
        }
        return root;
}

static json_t *node_json(const struct topo_graph *g, uint32_t i)
{
        const struct topo_node *n = &g->nodes[i];
        char name[96];
        topo_node_name(g, i, name, sizeof name);
        json_t *o = json_object();
        json_object_set_new(o, "id", json_integer(i));
        json_object_set_new(o, "name", json_string(name));
        json_object_set_new(o, "kind", json_string(topo_node_kind_name(n->kind)));
        json_object_set_new(o, "sip", json_integer(n->sip));
        if (n->cube != TOPO_NONE)
                json_object_set_new(o, "cube", json_integer(n->cube));
        if (n->kind == TOPO_NODE_HBM_CHANNEL)
                json_object_set_new(o, "channel", json_integer(n->index));
        else if (n->kind == TOPO_NODE_ROUTER)
                json_object_set_new(o, "router", json_integer(n->index));
        else if (n->index != TOPO_NONE)
                json_object_set_new(o, "pe", json_integer(n->index));
        json_object_set_new(o, "node_overhead_ps", json_integer((json_int_t)n->node_overhead_ps));
        return o;
}

static json_t *edge_json(const struct topo_graph *g, uint32_t i)
{
        const struct topo_edge *e = &g->edges[i];
        json_t *o = json_object();
        json_object_set_new(o, "src", json_integer(e->src));
        json_object_set_new(o, "dst", json_integer(e->dst));
        json_object_set_new(o, "latency_ps", json_integer((json_int_t)e->latency_ps));
        json_object_set_new(o, "bw_bytes_per_s", json_integer((json_int_t)e->bw_bytes_per_s));
        json_object_set_new(o, "class", json_string(topo_edge_class_name(e->cls)));
        return o;
}

static json_t *totals_json(const struct topo_totals *t)
{
        json_t *o = json_object();
        json_object_set_new(o, "pes", json_integer((json_int_t)t->pes));
        json_object_set_new(o, "cubes", json_integer((json_int_t)t->cubes));
        json_object_set_new(o, "sips", json_integer((json_int_t)t->sips));
        json_object_set_new(o, "peak_gemm_flops_per_s",
                            json_integer((json_int_t)t->peak_gemm_flops_per_s));
        json_object_set_new(o, "hbm_bw_bytes_per_s", json_integer((json_int_t)t->hbm_bw_bytes_per_s));
        json_object_set_new(o, "tcm_bytes", json_integer((json_int_t)t->tcm_bytes));
        return o;
}

/* Print j indented by two spaces after each newline. */
static int put_indented(json_t *j, size_t flags, FILE *out)
{
        char *s = json_dumps(j, flags | JSON_PRESERVE_ORDER);
        json_decref(j);
        if (!s)
                return -ENOMEM;
        for (const char *p = s; *p; p++) {
                fputc(*p, out);
                if (*p == '\n')
                        fputs("  ", out);
        }
        free(s);
        return 0;
}

int topo_graph_write_json(const struct topo_graph *g, FILE *out)
{
        int rc = 0;
        fputs("{\n  \"machine\": ", out);
        rc |= put_indented(machine_json(&g->topo), JSON_INDENT(2), out);
        fputs(",\n  \"nodes\": [", out);
        for (uint32_t i = 0; i < g->n_nodes; i++) {
                fputs(i ? ",\n    " : "\n    ", out);
                rc |= put_indented(node_json(g, i), JSON_COMPACT, out);
        }
        fputs("\n  ],\n  \"edges\": [", out);
        for (uint32_t i = 0; i < g->n_edges; i++) {
                fputs(i ? ",\n    " : "\n    ", out);
                rc |= put_indented(edge_json(g, i), JSON_COMPACT, out);
        }
        fputs("\n  ],\n  \"totals\": ", out);
        rc |= put_indented(totals_json(&g->totals), JSON_INDENT(2), out);
        fputs("\n}\n", out);
        if (rc || ferror(out))
                return rc ? rc : -EIO;
        return 0;
}

/* ---- DOT ---- */

static const char *const class_colour[TOPO_EDGE_CLASS_COUNT] = {
        "gray40", "steelblue", "darkorange", "forestgreen", "firebrick", "purple",
};

/* "1.5" for 1500: an exact decimal of num / den, trailing zeros dropped. */
static void fmt_ratio(uint64_t num, uint64_t den, unsigned digits, char *buf, size_t len)
{
        int n = snprintf(buf, len, "%" PRIu64, num / den);
        uint64_t frac = num % den;
        if (frac == 0 || n < 0 || (size_t)n >= len)
                return;
        char f[32];
        snprintf(f, sizeof f, "%0*" PRIu64, (int)digits, frac);
        size_t k = strlen(f);
        while (k > 0 && f[k - 1] == '0')
                f[--k] = '\0';
        snprintf(buf + n, len - (size_t)n, ".%s", f);
}

/* s as a DOT (and C) quoted string on one line: a quote or a backslash
 * escaped, a control character as a space. */
static void dot_quoted(FILE *out, const char *s)
{
        fputc('"', out);
        for (; *s; s++) {
                if (*s == '"' || *s == '\\')
                        fputc('\\', out);
                fputc((unsigned char)*s < 0x20 || *s == 0x7f ? ' ' : *s, out);
        }
        fputc('"', out);
}

static void dot_node(const struct topo_graph *g, uint32_t i, const char *indent, FILE *out)
{
        char name[96];
        topo_node_name(g, i, name, sizeof name);
        const char *shape = g->nodes[i].kind == TOPO_NODE_ROUTER ? "circle" : "box";
        fprintf(out, "%sn%u [label=", indent, i);
        dot_quoted(out, name);
        fprintf(out, ", shape=%s];\n", shape);
}

int topo_graph_write_dot(const struct topo_graph *g, FILE *out)
{
        const struct topo *t = &g->topo;
        uint32_t ch = t->cube.hbm.channels, r = t->cube.noc.rows * t->cube.noc.cols;
        fputs("digraph ", out);
        dot_quoted(out, t->name);
        fputs(" {\n  node [fontsize=9];\n  edge [fontsize=7];\n", out);
        for (uint32_t s = 0; s < t->system.sips; s++) {
                fprintf(out, "  subgraph cluster_sip%u {\n    label=\"sip%u\";\n", s, s);
                dot_node(g, topo_node_index(g, TOPO_NODE_IO_CPU, s, 0, 0), "    ", out);
                for (uint32_t c = 0; c < t->sip.cubes; c++) {
                        fprintf(out, "    subgraph cluster_sip%u_cube%u {\n      label=\"cube%u\";\n",
                                s, c, c);
                        dot_node(g, topo_node_index(g, TOPO_NODE_M_CPU, s, c, 0), "      ", out);
                        for (uint32_t k = 0; k < ch; k++)
                                dot_node(g, topo_node_index(g, TOPO_NODE_HBM_CHANNEL, s, c, k),
                                         "      ", out);
                        for (uint32_t k = 0; k < r; k++)
                                dot_node(g, topo_node_index(g, TOPO_NODE_ROUTER, s, c, k),
                                         "      ", out);
                        for (uint32_t p = 0; p < r; p++) {
                                fprintf(out,
                                        "      subgraph cluster_sip%u_cube%u_pe%u {\n"
                                        "        label=\"pe%u\";\n",
                                        s, c, p, p);
                                for (int k = 0; k < 5; k++)
                                        dot_node(g,
                                                 topo_node_index(g, (enum topo_node_kind)(TOPO_NODE_PE_CPU + k),
                                                                 s, c, p),
                                                 "        ", out);
                                fputs("      }\n", out);
                        }
                        fputs("    }\n", out);
                }
                fputs("  }\n", out);
        }
        for (uint32_t i = 0; i < g->n_edges; i++) {
                const struct topo_edge *e = &g->edges[i];
                char lat[32], bw[32];
                fmt_ratio(e->latency_ps, 1000, 3, lat, sizeof lat);
                fmt_ratio(e->bw_bytes_per_s, 1000000000, 9, bw, sizeof bw);
                fprintf(out, "  n%u -> n%u [label=\"%s ns\\n%s GB/s\", color=%s];\n", e->src,
                        e->dst, lat, bw, class_colour[e->cls]);
        }
        fputs("}\n", out);
        return ferror(out) ? -EIO : 0;
}

/* ---- text: the machine as YAML, in the file's units ---- */

static void leaf_text(const struct topo *t, const struct topo__field *f, char *buf, size_t len)
{
        const void *p = cslot(t, f);
        uint64_t v = f->store == FS_U32 ? *(const uint32_t *)p : 0;
        switch (f->store) {
        case FS_NONE: snprintf(buf, len, "1"); return;               /* version */
        case FS_BASE: snprintf(buf, len, "none"); return;
        case FS_U32: snprintf(buf, len, "%" PRIu64, v); return;
        case FS_NET: snprintf(buf, len, "%s", topo__net_words[*(const enum topo_net *)p]); return;
        case FS_SHAPE:
                snprintf(buf, len, "%s", topo__shape_words[*(const enum topo_noc_shape *)p]);
                return;
        case FS_COORDS: {
                const struct topo_coords *c = p;
                size_t at = (size_t)snprintf(buf, len, "[");
                for (uint32_t i = 0; i < c->n && at < len; i++)
                        at += (size_t)snprintf(buf + at, len - at, "%s[%u, %u]", i ? ", " : "",
                                               c->at[i].row, c->at[i].col);
                if (at < len)
                        snprintf(buf + at, len - at, "]");
                return;
        }
        case FS_NAME: {
                const char *s = p;
                bool plain = *s != '\0';
                for (const char *c = s; *c; c++)
                        if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
                              (*c >= '0' && *c <= '9') || *c == '_' || *c == '-'))
                                plain = false;
                if (plain) {
                        snprintf(buf, len, "%s", s);
                        return;
                }
                size_t at = 0;
                buf[at++] = '"';
                for (const char *c = s; *c && at + 4 < len; c++) {
                        if (*c == '"' || *c == '\\')
                                buf[at++] = '\\';
                        buf[at++] = *c;
                }
                buf[at++] = '"';
                buf[at] = '\0';
                return;
        }
        case FS_COST:
                if (*(const sim_ps *)p == TOPO_COST_NONE) {
                        snprintf(buf, len, "~");
                        return;
                }
                fmt_ratio(*(const sim_ps *)p, 1000, 3, buf, len);
                return;
        case FS_NS: fmt_ratio(*(const uint64_t *)p, 1000, 3, buf, len); return;
        case FS_GBPS: fmt_ratio(*(const uint64_t *)p, 1000000000, 9, buf, len); return;
        case FS_MHZ: fmt_ratio(*(const uint64_t *)p, 1000000, 6, buf, len); return;
        case FS_PJ:
                if (f->type == FT_PJ_DT && *(const uint64_t *)p == TOPO_FJ_DERIVED) {
                        snprintf(buf, len, "~");
                        return;
                }
                fmt_ratio(*(const uint64_t *)p, 1000, 3, buf, len);
                return;
        case FS_W: fmt_ratio(*(const uint64_t *)p, 1000, 3, buf, len); return;
        case FS_KIB: snprintf(buf, len, "%" PRIu64, *(const uint64_t *)p >> 10); return;
        case FS_GIB: snprintf(buf, len, "%" PRIu64, *(const uint64_t *)p >> 30); return;
        }
}

int topo_graph_write_text(const struct topo_graph *g, FILE *out)
{
        const struct topo *t = &g->topo;
        fputs("# machine ", out);
        dot_quoted(out, t->name);    /* one line, whatever the name holds */
        fputs(", resolved: a complete topology in the file's units\n", out);
        for (size_t i = 0; i < topo__n_fields; i++) {
                const struct topo__field *f = &topo__fields[i];
                unsigned depth = 0;
                for (const char *c = f->path; *c; c++)
                        depth += *c == '.';
                const char *dot = strrchr(f->path, '.');
                fprintf(out, "%*s%s:", (int)(2 * depth), "", dot ? dot + 1 : f->path);
                if (f->type != FT_MAP) {
                        char v[16 * TOPO_MAX_ATTACH];
                        leaf_text(t, f, v, sizeof v);
                        fprintf(out, " %s", v);
                }
                fputc('\n', out);
        }
        uint64_t per_class[TOPO_EDGE_CLASS_COUNT] = { 0 };
        for (uint32_t i = 0; i < g->n_edges; i++)
                per_class[g->edges[i].cls]++;
        fprintf(out, "# graph: %u nodes, %u edges (", g->n_nodes, g->n_edges);
        for (int c = 0; c < TOPO_EDGE_CLASS_COUNT; c++)
                fprintf(out, "%s%s %" PRIu64, c ? ", " : "",
                        topo_edge_class_name((enum topo_edge_class)c), per_class[c]);
        const struct topo_totals *tt = &g->totals;
        char flops[48], hbm[48];
        fmt_ratio(tt->peak_gemm_flops_per_s, 1000000000000u, 12, flops, sizeof flops);
        fmt_ratio(tt->hbm_bw_bytes_per_s, 1000000000, 9, hbm, sizeof hbm);
        fprintf(out,
                ")\n# totals: %" PRIu64 " PE%s, %" PRIu64 " cube%s, %" PRIu64 " SIP%s; peak GEMM "
                "%s TFLOP/s; HBM %s GB/s; TCM %" PRIu64 " KiB\n",
                tt->pes, tt->pes == 1 ? "" : "s", tt->cubes, tt->cubes == 1 ? "" : "s", tt->sips,
                tt->sips == 1 ? "" : "s", flops, hbm, tt->tcm_bytes >> 10);
        return ferror(out) ? -EIO : 0;
}
