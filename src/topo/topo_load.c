/* topo/topo_load.c: the topology schema and the loader that walks a YAML
 * tree against it; `--set` overrides; machine-wide validation; totals.
 *
 * The schema is one table: each key's dotted path, type, valid range in
 * the file's unit, and where and how its value is stored in struct topo
 * (converted to ps, bytes/s, bytes, Hz). The walker reports every problem
 * it finds and keeps going: unknown keys (with a did-you-mean hint),
 * duplicate keys, wrong types, out-of-range values, missing required keys
 * (at the enclosing map), then the checks that span several keys (scratch
 * ceiling within the TCM, PE count, graph memory, 64-bit totals).
 *
 * Semantics (docs/adr/0002): a file is applied over the built-in default
 * machine unless it says `base: none`, in which case it must state every
 * key. `version: 1` is required in every file. */
#include "base/ckd.h"
#include "base/fsutil.h"
#include "base/muldiv.h"
#include "base/params.h"
#include "topo/topo_int.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"

/* ---- the schema ---- */

const char *const topo__net_words[] = { "ring", "full", "line", "mesh", NULL };
const char *const topo__shape_words[] = { "mesh", "torus", "dual_torus", NULL };
static const char *const base_words[] = { "default", "none", NULL };

#define OFF(m) offsetof(struct topo, m)
#define F_MAP(p) { p, FT_MAP, FS_NONE, false, 0, 0, 0, NULL, false }
#define F_INT(p, lo, hi, m) { p, FT_INT, FS_U32, false, lo, hi, OFF(m), NULL, false }
#define F_NS(p, m) { p, FT_NUM, FS_NS, false, 0, 1e9, OFF(m), NULL, false }
/* Optional keys (absent even with `base: none`: 0, the mechanism off). */
#define F_OPT_INT(p, lo, hi, m) { p, FT_INT, FS_U32, false, lo, hi, OFF(m), NULL, true }
#define F_OPT_NS(p, m) { p, FT_NUM, FS_NS, false, 0, 1e9, OFF(m), NULL, true }
/* Energy (docs/adr/0024): optional maps and keys, >= 0; 0 or absent: free. */
#define F_OPT_MAP(p) { p, FT_MAP, FS_NONE, false, 0, 0, 0, NULL, true }
#define F_PJ(p, m) { p, FT_NUM, FS_PJ, false, 0, 1e6, OFF(m), NULL, true }
#define F_W(p, m) { p, FT_NUM, FS_W, false, 0, 1e6, OFF(m), NULL, true }
/* A power limit (system.tdp_w, sip.tdp_w): optional, watts, 0: none. */
#define F_TDP(p, m) { p, FT_NUM, FS_W, false, 0, 1e9, OFF(m), NULL, true }
#define F_ENERGY(p, unit, m) F_OPT_MAP(p ".energy"), F_PJ(p ".energy.pj_per_" unit, m.dyn_fj), \
        F_W(p ".energy.idle_w", m.idle_mw), F_W(p ".energy.active_w", m.active_mw)
#define F_ENERGY_IDLE(p, unit, m) F_OPT_MAP(p ".energy"), \
        F_PJ(p ".energy.pj_per_" unit, m.dyn_fj), F_W(p ".energy.idle_w", m.idle_mw)
/* A GEMM operand class's energy per MAC: optional; absent or ~: derived. */
#define F_PJ_DT(p, c) { p, FT_PJ_DT, FS_PJ, false, 0, 1e6, OFF(pe.gemm.mac_fj[c]), NULL, true }
#define F_GBPS(p, m) { p, FT_NUM, FS_GBPS, true, 0, 1e6, OFF(m), NULL, false }
#define F_MHZ(p, m) { p, FT_NUM, FS_MHZ, true, 0, 1e5, OFF(m), NULL, false }
#define F_NET(p, m) { p, FT_ENUM, FS_NET, false, 0, 0, OFF(m), topo__net_words, false }
#define F_LINK(p, m) F_MAP(p), F_NS(p ".latency_ns", m.latency_ps), \
        F_GBPS(p ".bw_gbps", m.bw_bytes_per_s)
/* A network of SIPs or of cubes: its topology, each link's latency and
 * bandwidth, and its energy per byte; p's own keys follow (mesh_cols ...). */
#define F_NETWORK(p, net, link, energy) F_MAP(p), F_NET(p ".topology", net), \
        F_NS(p ".latency_ns", link.latency_ps), F_GBPS(p ".bw_gbps", link.bw_bytes_per_s), \
        F_OPT_MAP(p ".energy"), F_PJ(p ".energy.pj_per_byte", energy.dyn_fj)
#define F_COST(id, nm, key, form) { "pe.cpu.issue_cost_ns." #nm, FT_COST, FS_COST, false, 0, 1e9, \
        OFF(pe.cpu.issue_cost_ps[TOPO_OP_##id]), NULL, false },
#define F_LAT(id, nm, key, form) { "pe.math.latency_cycles." #nm, FT_INT, FS_U32, false, 0, 1e6, \
        OFF(pe.math.latency_cycles[TOPO_OP_##id]), NULL, false },
#define F_CPE(id, nm, key, form) { "pe.math.cycles_per_element." #nm, FT_INT, FS_U32, false, 1, 1e6, \
        OFF(pe.math.cycles_per_element[TOPO_OP_##id]), NULL, false },

/* Parents come before their children (the JSON output relies on it). */
const struct topo__field topo__fields[] = {
        { "version", FT_INT, FS_NONE, false, 1, 1, 0, NULL, false },
        { "name", FT_STR, FS_NAME, false, 0, 0, OFF(name), NULL, false },
        { "base", FT_ENUM, FS_BASE, false, 0, 0, 0, base_words, false },

        F_MAP("system"),
        F_INT("system.sips", 1, 4096, system.sips),
        F_NETWORK("system.inter_sip", system.sip_net, system.inter_sip, system.inter_sip_energy),
        F_OPT_INT("system.inter_sip.mesh_cols", 0, 4096, system.mesh_cols),
        F_OPT_INT("system.inter_sip.links", 1, 64, system.inter_sip_links),
        F_OPT_NS("system.inter_sip.message_ns", system.inter_sip_message_ps),
        F_OPT_INT("system.inter_sip.message_overlap", 0, 1, system.inter_sip_message_overlap),
        F_OPT_NS("system.inter_sip.core_ns", system.inter_sip_core_ps),
        F_OPT_NS("system.inter_sip.core_horizon_ns", system.inter_sip_core_horizon_ps),
        F_OPT_INT("system.inter_sip.slots", 0, 1 << 20, system.inter_sip_slots),
        F_OPT_INT("system.inter_sip.packet_bytes", 0, 1 << 20, system.inter_sip_packet_bytes),
        F_OPT_INT("system.inter_sip.header_bytes", 0, 1 << 20, system.inter_sip_header_bytes),
        F_OPT_INT("system.inter_sip.frame_bytes", 0, 1 << 20, system.inter_sip_frame_bytes),
        F_OPT_INT("system.inter_sip.frame_overhead_bytes", 0, 1 << 20,
                  system.inter_sip_frame_overhead_bytes),
        { "system.inter_sip.ports", FT_COORDS, FS_COORDS, false, 0, 1023,
          OFF(system.inter_sip_ports), NULL, true },
        F_OPT_NS("system.launch_skew_ns", system.launch_skew_ps),
        F_TDP("system.tdp_w", system.tdp_mw),

        F_MAP("sip"),
        F_INT("sip.cubes", 1, 4096, sip.cubes),
        F_MAP("sip.io_cpu"),
        F_NS("sip.io_cpu.node_overhead_ns", sip.io_cpu_node_overhead_ps),
        F_LINK("sip.host_link", sip.host_link),
        F_NETWORK("sip.inter_cube", sip.cube_net, sip.inter_cube, sip.inter_cube_energy),
        F_TDP("sip.tdp_w", sip.tdp_mw),

        F_MAP("cube"),
        F_MAP("cube.m_cpu"),
        F_NS("cube.m_cpu.node_overhead_ns", cube.m_cpu_node_overhead_ps),
        { "cube.compute_cols", FT_INT, FS_U32, false, 0, 1024, OFF(cube.compute_cols), NULL,
          true },
        { "cube.compute_rows", FT_INT, FS_U32, false, 0, 1024, OFF(cube.compute_rows), NULL,
          true },
        F_MAP("cube.hbm"),
        F_INT("cube.hbm.channels", 1, 1024, cube.hbm.channels),
        F_GBPS("cube.hbm.channel_bw_gbps", cube.hbm.channel_bw_bytes_per_s),
        F_NS("cube.hbm.latency_ns", cube.hbm.latency_ps),
        { "cube.hbm.size_gib", FT_INT, FS_GIB, false, 1, 1 << 20, OFF(cube.hbm.size_bytes), NULL,
          false },
        F_NS("cube.hbm.node_overhead_ns", cube.hbm.node_overhead_ps),
        { "cube.hbm.page_kib", FT_INT, FS_KIB, false, 1, 1 << 20, OFF(cube.hbm.page_bytes), NULL,
          false },
        { "cube.hbm.attach", FT_COORDS, FS_COORDS, false, 0, 1023, OFF(cube.hbm.attach), NULL,
          true },
        F_OPT_INT("cube.hbm.near_efficiency_pct", 0, 100, cube.hbm.near_efficiency_pct),
        F_OPT_INT("cube.hbm.far_efficiency_pct", 0, 100, cube.hbm.far_efficiency_pct),
        F_ENERGY_IDLE("cube.hbm", "byte", cube.hbm.energy),
        F_MAP("cube.noc"),
        F_INT("cube.noc.rows", 1, 1024, cube.noc.rows),
        F_INT("cube.noc.cols", 1, 1024, cube.noc.cols),
        { "cube.noc.shape", FT_ENUM, FS_SHAPE, false, 0, 0, OFF(cube.noc.shape),
          topo__shape_words, true },
        F_NS("cube.noc.hop_latency_ns", cube.noc.hop_latency_ps),
        F_GBPS("cube.noc.link_bw_gbps", cube.noc.link_bw_bytes_per_s),
        F_NS("cube.noc.router_node_overhead_ns", cube.noc.router_node_overhead_ps),
        F_INT("cube.noc.packet_bytes", 1, 1 << 20, cube.noc.packet_bytes),
        F_INT("cube.noc.header_bytes", 0, 1 << 20, cube.noc.header_bytes),
        F_OPT_INT("cube.noc.atomic_vc", 0, 1, cube.noc.atomic_vc),
        F_ENERGY_IDLE("cube.noc", "byte_hop", cube.noc.energy),

        F_MAP("pe"),
        F_MAP("pe.cpu"),
        F_MHZ("pe.cpu.clock_mhz", pe.cpu.clock_hz),
        F_INT("pe.cpu.dispatch_cycles", 0, 1e6, pe.cpu.dispatch_cycles),
        F_NS("pe.cpu.node_overhead_ns", pe.cpu.node_overhead_ps),
        F_NS("pe.cpu.program_ns", pe.cpu.program_ps),
        F_OPT_INT("pe.cpu.cores", 0, 16, pe.cpu.cores),
        F_MAP("pe.cpu.issue_cost_ns"),
        TOPO_CTRL_OPS(F_COST)
        TOPO_MATH_OPS(F_COST)
        F_ENERGY("pe.cpu", "op", pe.cpu.energy),
        F_MAP("pe.dma"),
        F_INT("pe.dma.channels", 1, 64, pe.dma.channels),
        F_GBPS("pe.dma.bw_gbps", pe.dma.bw_bytes_per_s),
        F_NS("pe.dma.setup_ns", pe.dma.setup_ps),
        F_NS("pe.dma.node_overhead_ns", pe.dma.node_overhead_ps),
        F_OPT_INT("pe.dma.thread_nocs", 0, 64, pe.dma.thread_nocs),
        F_OPT_INT("pe.dma.duplex", 0, 1, pe.dma.duplex),
        F_OPT_NS("pe.dma.request_ns", pe.dma.request_ps),
        F_OPT_NS("pe.dma.mcast_dest_ns", pe.dma.mcast_dest_ps),
        F_OPT_NS("pe.dma.mcast_linked_dest_ns", pe.dma.mcast_linked_dest_ps),
        F_OPT_MAP("pe.dma.energy"),
        F_W("pe.dma.energy.idle_w", pe.dma.energy.idle_mw),
        F_W("pe.dma.energy.active_w", pe.dma.energy.active_mw),
        F_MAP("pe.gemm"),
        F_INT("pe.gemm.macs_per_cycle", 1, 1 << 20, pe.gemm.macs_per_cycle),
        F_MHZ("pe.gemm.clock_mhz", pe.gemm.clock_hz),
        F_NS("pe.gemm.node_overhead_ns", pe.gemm.node_overhead_ps),
        F_INT("pe.gemm.array_m", 1, 1 << 16, pe.gemm.array_m),
        F_INT("pe.gemm.array_k", 1, 1 << 16, pe.gemm.array_k),
        F_INT("pe.gemm.array_n", 1, 1 << 16, pe.gemm.array_n),
        F_INT("pe.gemm.operand_tile", 0, 1 << 16, pe.gemm.operand_tile),
        F_INT("pe.gemm.fill_cycles", 0, 1e6, pe.gemm.fill_cycles),
        F_INT("pe.gemm.drain_cycles", 0, 1e6, pe.gemm.drain_cycles),
        F_INT("pe.gemm.fidelity_passes", 1, 4, pe.gemm.fidelity_passes),
        F_OPT_INT("pe.gemm.operand_bytes_per_cycle", 0, 1 << 20, pe.gemm.operand_bytes_per_cycle),
        F_OPT_INT("pe.gemm.unpack_setup_cycles", 0, 1 << 16, pe.gemm.unpack_setup_cycles),
        F_OPT_INT("pe.gemm.unpack_shared_bytes_per_cycle", 0, 1 << 20,
                  pe.gemm.unpack_shared_bytes_per_cycle),
        F_OPT_INT("pe.gemm.math_issue_cycles", 0, 1 << 16, pe.gemm.math_issue_cycles),
        F_OPT_INT("pe.gemm.src_handover_cycles", 0, 1 << 16, pe.gemm.src_handover_cycles),
        F_ENERGY("pe.gemm", "mac", pe.gemm.energy),
        F_PJ_DT("pe.gemm.energy.pj_per_mac_fp32", TOPO_MAC_FP32),
        F_PJ_DT("pe.gemm.energy.pj_per_mac_bfp8", TOPO_MAC_BFP8),
        F_PJ_DT("pe.gemm.energy.pj_per_mac_bfp4", TOPO_MAC_BFP4),
        F_MAP("pe.math"),
        F_INT("pe.math.lanes", 1, 1 << 16, pe.math.lanes),
        F_MHZ("pe.math.clock_mhz", pe.math.clock_hz),
        F_NS("pe.math.node_overhead_ns", pe.math.node_overhead_ps),
        F_MAP("pe.math.cycles_per_element"),
        TOPO_MATH_OPS(F_CPE)
        F_MAP("pe.math.latency_cycles"),
        TOPO_MATH_OPS(F_LAT)
        F_ENERGY("pe.math", "element_cycle", pe.math.energy),
        F_MAP("pe.tcm"),
        { "pe.tcm.size_kib", FT_INT, FS_KIB, false, 1, 1 << 30, OFF(pe.tcm.size_bytes), NULL,
          false },
        { "pe.tcm.scratch_ceiling_kib", FT_INT, FS_KIB, false, 0, 1 << 30,
          OFF(pe.tcm.scratch_ceiling_bytes), NULL, false },
        F_GBPS("pe.tcm.bw_gbps", pe.tcm.bw_bytes_per_s),
        F_NS("pe.tcm.node_overhead_ns", pe.tcm.node_overhead_ps),
        F_INT("pe.tcm.banks", 1, 1 << 16, pe.tcm.banks),
        F_INT("pe.tcm.line_bytes", 1, 1 << 20, pe.tcm.line_bytes),
        F_ENERGY("pe.tcm", "byte", pe.tcm.energy),
        F_MAP("pe.links"),
        F_LINK("pe.links.cpu_dma", pe.links.cpu_dma),
        F_LINK("pe.links.cpu_gemm", pe.links.cpu_gemm),
        F_LINK("pe.links.cpu_math", pe.links.cpu_math),
        F_LINK("pe.links.dma_tcm", pe.links.dma_tcm),
        F_LINK("pe.links.dma_gemm", pe.links.dma_gemm),
        F_LINK("pe.links.gemm_math", pe.links.gemm_math),
        F_LINK("pe.links.math_math", pe.links.math_math),
        F_LINK("pe.links.math_dma", pe.links.math_dma),
        F_LINK("pe.links.dma_noc", pe.links.dma_noc),
};
const size_t topo__n_fields = ARRAY_LEN(topo__fields);
#define N_FIELDS ARRAY_LEN(topo__fields)

#define OP_NAME(id, nm, key, form) #nm,
static const char *const op_names[TOPO_OP_COUNT] = {
        TOPO_CTRL_OPS(OP_NAME) TOPO_MATH_OPS(OP_NAME)
};

const char *topo_op_name(enum topo_op op)
{
        return (unsigned)op < TOPO_OP_COUNT ? op_names[op] : NULL;
}

int topo_op_from_name(const char *name)
{
        for (int i = 0; i < TOPO_OP_COUNT; i++)
                if (strcmp(op_names[i], name) == 0)
                        return i;
        return -1;
}

void topo__stored_name(const char *yaml_name, char *buf, size_t len)
{
        static const struct { const char *from, *to; } suffixes[] = {
                { "_ns", "_ps" }, { "_gbps", "_bytes_per_s" }, { "_kib", "_bytes" },
                { "_gib", "_bytes" }, { "_mhz", "_hz" }, { "_w", "_mw" },
        };
        size_t n = strlen(yaml_name);
        if (strncmp(yaml_name, "pj_per_", 7) == 0) { /* energy: stored in fJ */
                snprintf(buf, len, "fj_per_%s", yaml_name + 7);
                return;
        }
        for (size_t i = 0; i < ARRAY_LEN(suffixes); i++) {
                size_t s = strlen(suffixes[i].from);
                if (n > s && strcmp(yaml_name + n - s, suffixes[i].from) == 0) {
                        snprintf(buf, len, "%.*s%s", (int)(n - s), yaml_name, suffixes[i].to);
                        return;
                }
        }
        snprintf(buf, len, "%s", yaml_name);
}

/* ---- schema lookups ---- */

static int find_field(const char *path)
{
        for (size_t i = 0; i < N_FIELDS; i++)
                if (strcmp(topo__fields[i].path, path) == 0)
                        return (int)i;
        return -1;
}

/* Is field f a direct child of the map at path ("" for the top level)? */
static bool is_child(const struct topo__field *f, const char *path)
{
        const char *dot = strrchr(f->path, '.');
        if (!*path)
                return dot == NULL;
        size_t n = strlen(path);
        return dot && (size_t)(dot - f->path) == n && strncmp(f->path, path, n) == 0;
}

static const char *last_name(const char *path)
{
        const char *dot = strrchr(path, '.');
        return dot ? dot + 1 : path;
}

static const char *where_name(const char *path)
{
        return *path ? path : "the top-level map";
}

/* ---- the loader ---- */

struct where {
        unsigned line;               /* 1-based; 0 if not from the file */
        unsigned col;                /* 1-based */
        bool set;                    /* the key appeared in this file */
};

struct loader {
        const char *file;            /* label of messages */
        struct diag *d;              /* where problems go */
        struct topo *t;              /* being filled */
        bool full;                   /* `base: none`: every key is required */
        struct where where[N_FIELDS]; /* per field: where this file set it */
};

static bool is_null(const struct ynode *v)
{
        if (v->kind != YN_SCALAR || !v->plain)
                return false;
        const char *s = v->text;
        return v->len == 0 || strcmp(s, "~") == 0 || strcmp(s, "null") == 0 ||
               strcmp(s, "Null") == 0 || strcmp(s, "NULL") == 0;
}

static void describe(const struct ynode *v, char *buf, size_t len)
{
        switch (v->kind) {
        case YN_MAP: snprintf(buf, len, "a map"); return;
        case YN_SEQ: snprintf(buf, len, "a list"); return;
        case YN_ALIAS: snprintf(buf, len, "an alias"); return;
        case YN_SCALAR: break;
        }
        if (is_null(v))
                snprintf(buf, len, "null");
        else if (v->plain)
                snprintf(buf, len, "'%.48s%s'", v->text, v->len > 48 ? "..." : "");
        else
                snprintf(buf, len, "the string \"%.48s%s\"", v->text, v->len > 48 ? "..." : "");
}

static const char *expected(const struct topo__field *f, char *buf, size_t len)
{
        switch (f->type) {
        case FT_MAP: return "a map";
        case FT_INT: return "an integer";
        case FT_NUM: return "a number";
        case FT_COST: return "a number of ns, or ~ (not in the table)";
        case FT_PJ_DT: return "a number of pJ, or ~ (derived from pj_per_mac)";
        case FT_STR: return "a string";
        case FT_COORDS: return "a list of [row, col] pairs";
        case FT_ENUM: {
                size_t at = (size_t)snprintf(buf, len, "one of");
                for (const char *const *w = f->words; *w && at < len; w++)
                        at += (size_t)snprintf(buf + at, len - at, "%s %s",
                                               w == f->words ? "" : ",", *w);
                return buf;
        }
        }
        return "a value";
}

/* [+-]?[0-9]+ */
static bool looks_int(const char *s)
{
        if (*s == '+' || *s == '-')
                s++;
        if (!*s)
                return false;
        for (; *s; s++)
                if (*s < '0' || *s > '9')
                        return false;
        return true;
}

/* A bound for messages: integral values without exponent. */
static void fmt_bound(double x, char *buf, size_t len)
{
        if (x == floor(x) && fabs(x) < 1e15)
                snprintf(buf, len, "%.0f", x);
        else
                snprintf(buf, len, "%g", x);
}

static void error_at(struct loader *L, unsigned line, unsigned col, const char *fmt, ...)
        __attribute__((format(printf, 4, 5)));

static void error_at(struct loader *L, unsigned line, unsigned col, const char *fmt, ...)
{
        char body[900];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(body, sizeof body, fmt, ap);
        va_end(ap);
        diag_error_at(L->d, L->file, line, col, "%s", body);
}

static void *slot(struct topo *t, const struct topo__field *f)
{
        return (char *)t + f->offset;
}

/* Convert x (in the file's unit) and store it; false if a positive value
 * would round to zero in the stored unit. */
static bool store_num(struct topo *t, const struct topo__field *f, double x)
{
        void *p = slot(t, f);
        switch (f->store) {
        case FS_U32: *(uint32_t *)p = (uint32_t)x; return true;
        case FS_NS:
        case FS_COST: *(sim_ps *)p = (sim_ps)llround(x * 1e3); return true;
        case FS_GBPS: *(uint64_t *)p = (uint64_t)llround(x * 1e9); return *(uint64_t *)p > 0;
        case FS_MHZ: *(uint64_t *)p = (uint64_t)llround(x * 1e6); return *(uint64_t *)p > 0;
        case FS_KIB: *(uint64_t *)p = (uint64_t)x << 10; return true;
        case FS_GIB: *(uint64_t *)p = (uint64_t)x << 30; return true;
        case FS_PJ:
        case FS_W: *(uint64_t *)p = (uint64_t)llround(x * 1e3); return true;
        default: return true;
        }
}

/* One [row, col] item of a coordinate list; false (reported) if bad. */
static bool coord_item(struct loader *L, const struct topo__field *f, size_t i,
                       const struct ynode *it, struct topo_coord *out)
{
        uint16_t v[2] = { 0, 0 };
        bool ok = it->kind == YN_SEQ && it->n_kids == 2;
        for (size_t k = 0; ok && k < 2; k++) {
                const struct ynode *x = it->kids[k];
                ok = x->kind == YN_SCALAR && x->plain && looks_int(x->text) && x->text[0] != '-' &&
                     x->len <= 5 && strtol(x->text, NULL, 10) <= f->hi;
                if (ok)
                        v[k] = (uint16_t)strtol(x->text, NULL, 10);
        }
        if (!ok) {
                char got[128];
                describe(it, got, sizeof got);
                error_at(L, it->line, it->col,
                         "%s[%zu]: expected [row, col] with integers in [0, %.0f], got %s",
                         f->path, i, f->hi, got);
                return false;
        }
        out->row = v[0];
        out->col = v[1];
        return true;
}

static void set_coords(struct loader *L, const struct topo__field *f, const struct ynode *v)
{
        struct topo_coords *c = slot(L->t, f);
        if (v->kind == YN_SCALAR && is_null(v)) {
                c->n = 0;
                return;
        }
        if (v->kind != YN_SEQ) {
                char got[128];
                describe(v, got, sizeof got);
                error_at(L, v->line, v->col, "%s: expected %s, got %s", f->path,
                         "a list of [row, col] pairs", got);
                return;
        }
        if (v->n_kids > TOPO_MAX_ATTACH) {
                error_at(L, v->line, v->col, "%s has %zu entries; at most %d", f->path, v->n_kids,
                         TOPO_MAX_ATTACH);
                return;
        }
        struct topo_coords tmp = { 0 };
        for (size_t i = 0; i < v->n_kids; i++)
                if (v->kids[i]->kind != YN_ALIAS &&
                    coord_item(L, f, i, v->kids[i], &tmp.at[tmp.n]))
                        tmp.n++;
        if (tmp.n == v->n_kids)
                *c = tmp;
}

static void set_leaf(struct loader *L, int fi, const struct ynode *v)
{
        const struct topo__field *f = &topo__fields[fi];
        char got[128], exp[128];
        if (v->kind == YN_ALIAS)
                return;                 /* already reported */
        if (f->type == FT_COORDS) {
                set_coords(L, f, v);
                return;
        }
        if (v->kind != YN_SCALAR || (is_null(v) && f->type != FT_COST && f->type != FT_PJ_DT) ||
            memchr(v->text, '\0', v->len)) {
                describe(v, got, sizeof got);
                error_at(L, v->line, v->col, "%s: expected %s, got %s", f->path,
                         expected(f, exp, sizeof exp), got);
                return;
        }
        const char *s = v->text;

        if (f->type == FT_STR) {
                if (v->len >= TOPO_NAME_MAX) {
                        error_at(L, v->line, v->col, "%s is too long (%zu bytes; at most %d)",
                                 f->path, v->len, TOPO_NAME_MAX - 1);
                        return;
                }
                /* Printable ASCII only: the name is written back into YAML,
                 * JSON and DOT and must read the same there. */
                for (size_t i = 0; i < v->len; i++) {
                        unsigned char c = (unsigned char)s[i];
                        if (c < 0x20 || c > 0x7e) {
                                error_at(L, v->line, v->col, "%s: expected printable ASCII "
                                         "(byte %zu is 0x%02x)", f->path, i + 1, c);
                                return;
                        }
                }
                snprintf((char *)slot(L->t, f), TOPO_NAME_MAX, "%s", s);
                return;
        }
        if (f->type == FT_ENUM) {
                size_t n = 0;
                while (f->words[n])
                        n++;
                for (size_t i = 0; i < n; i++) {
                        if (strcmp(s, f->words[i]) == 0) {
                                if (f->store == FS_NET)
                                        *(enum topo_net *)slot(L->t, f) = (enum topo_net)i;
                                else if (f->store == FS_SHAPE)
                                        *(enum topo_noc_shape *)slot(L->t, f) =
                                                (enum topo_noc_shape)i;
                                return;
                        }
                }
                const char *hint = diag_suggest(s, (const char *const *)f->words, n);
                describe(v, got, sizeof got);
                if (hint)
                        error_at(L, v->line, v->col, "%s must be %s (got %s); did you mean '%s'?",
                                 f->path, expected(f, exp, sizeof exp), got, hint);
                else
                        error_at(L, v->line, v->col, "%s must be %s (got %s)", f->path,
                                 expected(f, exp, sizeof exp), got);
                return;
        }
        if (f->type == FT_COST && is_null(v)) {
                *(sim_ps *)slot(L->t, f) = TOPO_COST_NONE;
                return;
        }
        if (f->type == FT_PJ_DT && is_null(v)) {
                *(uint64_t *)slot(L->t, f) = TOPO_FJ_DERIVED;
                return;
        }

        /* Numbers: plain scalars only. */
        double x;
        if (f->type == FT_INT) {
                if (!v->plain || !looks_int(s)) {
                        describe(v, got, sizeof got);
                        if (v->plain && params_number_syntax(s, true))
                                snprintf(got, sizeof got, "%s", s);
                        error_at(L, v->line, v->col, "%s: expected an integer, got %s", f->path,
                                 got);
                        return;
                }
                errno = 0;
                long long i = strtoll(s, NULL, 10);
                x = errno == ERANGE ? (i < 0 ? -INFINITY : INFINITY) : (double)i;
        } else {
                if (!v->plain || !params_number_syntax(s, true)) {
                        describe(v, got, sizeof got);
                        error_at(L, v->line, v->col, "%s: expected %s, got %s", f->path,
                                 expected(f, exp, sizeof exp), got);
                        return;
                }
                x = strtod(s, NULL);     /* overflow gives +-HUGE_VAL: out of range below */
        }
        char bound[32];
        if (f->lo == f->hi && x != f->lo) {
                fmt_bound(f->lo, bound, sizeof bound);
                error_at(L, v->line, v->col, "%s must be %s (got %.48s)", f->path, bound, s);
                return;
        }
        if (f->lo_open ? !(x > f->lo) : !(x >= f->lo)) {
                fmt_bound(f->lo, bound, sizeof bound);
                error_at(L, v->line, v->col, "%s must be %s %s (got %.48s)", f->path,
                         f->lo_open ? ">" : ">=", bound, s);
                return;
        }
        if (!(x <= f->hi)) {
                fmt_bound(f->hi, bound, sizeof bound);
                error_at(L, v->line, v->col, "%s must be <= %s (got %.48s)", f->path, bound, s);
                return;
        }
        if (!store_num(L->t, f, x))
                error_at(L, v->line, v->col, "%s must be > 0 (got %.48s, which rounds to 0 %s)",
                         f->path, s, f->store == FS_GBPS ? "bytes/s" : "Hz");
}

static void unknown_key(struct loader *L, const struct ynode *k, const char *path)
{
        const char *cands[N_FIELDS];
        size_t n = 0;
        for (size_t i = 0; i < N_FIELDS; i++)
                if (is_child(&topo__fields[i], path))
                        cands[n++] = last_name(topo__fields[i].path);
        const char *hint = diag_suggest(k->text, cands, n);
        if (hint) {
                error_at(L, k->line, k->col, "unknown key '%.64s' in %s; did you mean '%s'?",
                         k->text, where_name(path), hint);
                return;
        }
        char list[600];
        size_t at = 0;
        list[0] = '\0';
        for (size_t i = 0; i < n && at < sizeof list; i++)
                at += (size_t)snprintf(list + at, sizeof list - at, "%s%s", i ? ", " : "",
                                       cands[i]);
        error_at(L, k->line, k->col, "unknown key '%.64s' in %s (known keys: %s)", k->text,
                 where_name(path), list);
}

static void walk_map(struct loader *L, const struct ynode *map, const char *path)
{
        for (size_t i = 0; i + 1 < map->n_kids; i += 2) {
                const struct ynode *k = map->kids[i], *v = map->kids[i + 1];
                if (k->kind == YN_ALIAS)
                        continue;
                if (k->kind != YN_SCALAR || memchr(k->text, '\0', k->len) || k->len > 128) {
                        char got[128];
                        describe(k, got, sizeof got);
                        error_at(L, k->line, k->col, "a key in %s must be a plain word, got %s",
                                 where_name(path), got);
                        continue;
                }
                bool dup = false;
                for (size_t j = 0; j < i && !dup; j += 2) {
                        const struct ynode *o = map->kids[j];
                        if (o->kind == YN_SCALAR && strcmp(o->text, k->text) == 0) {
                                error_at(L, k->line, k->col,
                                         "duplicate key '%s' in %s (first given at %u:%u)",
                                         k->text, where_name(path), o->line, o->col);
                                dup = true;
                        }
                }
                if (dup)
                        continue;
                char full[256];
                snprintf(full, sizeof full, "%s%s%s", path, *path ? "." : "", k->text);
                int fi = find_field(full);
                if (fi < 0) {
                        unknown_key(L, k, path);
                        continue;
                }
                const struct topo__field *f = &topo__fields[fi];
                L->where[fi] = (struct where){ v->line, v->col, true };
                if (f->store == FS_BASE || v->kind == YN_ALIAS)
                        continue;       /* base: read before the walk */
                if (f->type != FT_MAP) {
                        set_leaf(L, fi, v);
                } else if (v->kind != YN_MAP) {
                        char got[128];
                        describe(v, got, sizeof got);
                        error_at(L, v->line, v->col, "%s: expected a map, got %s", f->path, got);
                } else {
                        walk_map(L, v, f->path);
                }
        }
        for (size_t i = 0; i < N_FIELDS; i++) {
                const struct topo__field *f = &topo__fields[i];
                if (!is_child(f, path) || L->where[i].set || f->optional)
                        continue;
                if (L->full || strcmp(f->path, "version") == 0)
                        error_at(L, map->line, map->col, "missing required key '%s' in %s",
                                 last_name(f->path), where_name(path));
        }
}

/* ---- machine-wide checks ---- */

/* The latest place among paths where this file set one of them. */
static struct where latest(const struct loader *L, const char *const *paths, size_t n)
{
        struct where w = { 0, 0, false };
        for (size_t i = 0; i < n; i++) {
                int fi = find_field(paths[i]);
                if (fi < 0 || !L->where[fi].set)
                        continue;
                const struct where *c = &L->where[fi];
                if (!w.set || c->line > w.line || (c->line == w.line && c->col > w.col))
                        w = *c;
        }
        return w;
}

/* Every position of the list at key lies on the NoC. */
static void check_on_grid(struct loader *L, const char *key, const struct topo_coords *at)
{
        const struct topo *t = L->t;
        for (uint32_t i = 0; i < at->n; i++) {
                if (at->at[i].row < t->cube.noc.rows && at->at[i].col < t->cube.noc.cols)
                        continue;
                const char *const p[] = { key, "cube.noc.rows", "cube.noc.cols" };
                struct where w = latest(L, p, 3);
                error_at(L, w.line, w.col,
                         "%s[%u] = [%u, %u] is outside the %u x %u NoC (rows 0..%u, "
                         "cols 0..%u)",
                         key, i, at->at[i].row, at->at[i].col, t->cube.noc.rows,
                         t->cube.noc.cols, t->cube.noc.rows - 1, t->cube.noc.cols - 1);
        }
}

/* The SIP network: a mesh needs its row length (its last row may be
 * short); cubes are a ring or full. */
static void check_sip_net(struct loader *L)
{
        const struct topo *t = L->t;
        const struct topo_system *sy = &t->system;
        if (sy->sip_net == TOPO_NET_MESH && !sy->mesh_cols) {
                static const char *const p[] = { "system.inter_sip.topology",
                                                 "system.inter_sip.mesh_cols" };
                struct where w = latest(L, p, 2);
                error_at(L, w.line, w.col,
                         "system.inter_sip.topology mesh needs system.inter_sip.mesh_cols, the "
                         "SIPs of a mesh row (> 0)");
        }
        if (t->sip.cube_net == TOPO_NET_LINE || t->sip.cube_net == TOPO_NET_MESH) {
                static const char *const p[] = { "sip.inter_cube.topology" };
                struct where w = latest(L, p, 1);
                error_at(L, w.line, w.col,
                         "sip.inter_cube.topology must be ring or full (got %s): line and mesh "
                         "are for system.inter_sip",
                         topo__net_words[t->sip.cube_net]);
        }
}

static void validate(struct loader *L)
{
        const struct topo *t = L->t;
        struct where w;
        /* Absent (optional): one link per pair. */
        if (!L->t->system.inter_sip_links)
                L->t->system.inter_sip_links = 1;

        if (t->pe.tcm.scratch_ceiling_bytes > t->pe.tcm.size_bytes) {
                static const char *const p[] = { "pe.tcm.size_kib", "pe.tcm.scratch_ceiling_kib" };
                w = latest(L, p, 2);
                error_at(L, w.line, w.col,
                         "pe.tcm.scratch_ceiling_kib (%llu) must be <= pe.tcm.size_kib (%llu)",
                         (unsigned long long)(t->pe.tcm.scratch_ceiling_bytes >> 10),
                         (unsigned long long)(t->pe.tcm.size_bytes >> 10));
        }

        if (t->cube.compute_cols > t->cube.noc.cols || t->cube.compute_rows > t->cube.noc.rows) {
                static const char *const p[] = { "cube.compute_cols", "cube.compute_rows",
                                                 "cube.noc.rows", "cube.noc.cols" };
                w = latest(L, p, 4);
                error_at(L, w.line, w.col,
                         "the compute grid (cube.compute_cols %u x cube.compute_rows %u) must fit "
                         "in the %u x %u NoC",
                         t->cube.compute_cols, t->cube.compute_rows, t->cube.noc.cols,
                         t->cube.noc.rows);
        }
        if (t->pe.dma.thread_nocs > t->pe.dma.channels) {
                static const char *const p[] = { "pe.dma.thread_nocs", "pe.dma.channels" };
                w = latest(L, p, 2);
                error_at(L, w.line, w.col,
                         "pe.dma.thread_nocs (%u) must be <= pe.dma.channels (%u): a core issues "
                         "on some of the PE's NoCs",
                         t->pe.dma.thread_nocs, t->pe.dma.channels);
        }
        const struct topo_coords *at = &t->cube.hbm.attach;
        if (at->n > t->cube.hbm.channels) {
                /* channel ch sits at attach[ch % n]: entries past the
                 * channels would place nothing */
                static const char *const p[] = { "cube.hbm.attach", "cube.hbm.channels" };
                w = latest(L, p, 2);
                error_at(L, w.line, w.col,
                         "cube.hbm.attach has %u entries but cube.hbm.channels is %u; "
                         "entries [%u..%u] would place no channel",
                         at->n, t->cube.hbm.channels, t->cube.hbm.channels, at->n - 1);
        }
        check_on_grid(L, "cube.hbm.attach", at);
        check_on_grid(L, "system.inter_sip.ports", &t->system.inter_sip_ports);
        check_sip_net(L);

        static const char *const counts[] = { "system.sips", "sip.cubes", "cube.noc.rows",
                                              "cube.noc.cols", "cube.hbm.channels",
                                              "system.inter_sip.topology",
                                              "sip.inter_cube.topology" };
        uint64_t pes = (uint64_t)t->system.sips * t->sip.cubes * t->cube.noc.rows *
                       t->cube.noc.cols;   /* <= 2^44 by the key ranges */
        if (pes > TOPO_MAX_PES) {
                w = latest(L, counts, 4);
                error_at(L, w.line, w.col,
                         "the machine has %llu PEs (system.sips %u x sip.cubes %u x "
                         "cube.noc.rows %u x cube.noc.cols %u); the limit is %u",
                         (unsigned long long)pes, t->system.sips, t->sip.cubes, t->cube.noc.rows,
                         t->cube.noc.cols, (unsigned)TOPO_MAX_PES);
                return;
        }
        uint64_t n_nodes, n_edges, bytes;
        topo_graph_size(t, &n_nodes, &n_edges, &bytes);
        if (bytes > TOPO_MAX_GRAPH_BYTES) {
                w = latest(L, counts, ARRAY_LEN(counts));
                error_at(L, w.line, w.col,
                         "the component graph would need %llu MiB (%llu nodes, %llu edges); "
                         "the limit is %llu MiB",
                         (unsigned long long)(bytes >> 20), (unsigned long long)n_nodes,
                         (unsigned long long)n_edges,
                         (unsigned long long)(TOPO_MAX_GRAPH_BYTES >> 20));
                return;
        }

        uint64_t cubes = (uint64_t)t->system.sips * t->sip.cubes;
        const struct {
                uint64_t a, b;          /* the per-unit factors */
                uint64_t units;         /* how many units (PEs or cubes) */
                const char *units_name; /* "PEs" or "cubes" */
                const char *keys[2];    /* the fields of the factors (NULL: none) */
                const char *what;       /* the total and its formula */
                const char *of;         /* what the 64 bits count */
        } totals[] = {
                { 2 * (uint64_t)t->pe.gemm.macs_per_cycle, t->pe.gemm.clock_hz, pes, "PEs",
                  { "pe.gemm.macs_per_cycle", "pe.gemm.clock_mhz" },
                  "peak GEMM throughput (2 x pe.gemm.macs_per_cycle x pe.gemm.clock_mhz",
                  "FLOP/s" },
                { t->cube.hbm.channel_bw_bytes_per_s, t->cube.hbm.channels, cubes, "cubes",
                  { "cube.hbm.channels", "cube.hbm.channel_bw_gbps" },
                  "total HBM bandwidth (cube.hbm.channels x cube.hbm.channel_bw_gbps",
                  "bytes/s" },
                { t->pe.tcm.size_bytes, 1, pes, "PEs", { "pe.tcm.size_kib", NULL },
                  "total TCM (pe.tcm.size_kib", "bytes" },
        };
        for (size_t i = 0; i < ARRAY_LEN(totals); i++) {
                uint64_t x;
                if (ckd_mul_u64(&x, totals[i].a, totals[i].b) && ckd_mul_u64(&x, x, totals[i].units))
                        continue;
                w = latest(L, totals[i].keys, totals[i].keys[1] ? 2 : 1);
                error_at(L, w.line, w.col, "the %s x %llu %s) overflows 64 bits of %s",
                         totals[i].what, (unsigned long long)totals[i].units,
                         totals[i].units_name, totals[i].of);
        }
}

/* ---- entry points ---- */

#define DEFAULT_LABEL "topologies/default.yaml (built-in)"

static int load_text(const char *name, const char *text, size_t len, struct topo *out,
                     struct diag *d, bool is_default)
{
        unsigned errors_before = d->n_errors;
        struct ynode *root;
        memset(out, 0, sizeof *out);
        for (int c = 0; c < TOPO_MAC_COUNT; c++)
                out->pe.gemm.mac_fj[c] = TOPO_FJ_DERIVED;
        static const struct ytree_limits limits = {
                .max_depth = TOPO_MAX_DEPTH,
                .max_nodes = TOPO_MAX_YAML_NODES,
                .doc = "a topology file",
                .depth_hint = "a topology needs at most 5",
                .nodes_hint = "a topology needs a few hundred",
                .empty = "the file is empty; expected a topology map (at least 'version: 1')",
        };
        if (ytree_parse(name, text, len, &limits, &root, d))
                return -EINVAL;

        struct loader *L = calloc(1, sizeof *L);
        if (!L) {
                ytree_free(root);
                diag_error(d, "%s: out of memory", name);
                return -ENOMEM;
        }
        L->file = name;
        L->d = d;
        L->t = out;

        if (root->kind != YN_MAP) {
                char got[128];
                describe(root, got, sizeof got);
                error_at(L, root->line, root->col,
                         "expected a map of topology keys at the top level, got %s", got);
                goto free_loader;
        }

        /* The base decides where the walk starts from. */
        for (size_t i = 0; i + 1 < root->n_kids; i += 2) {
                const struct ynode *k = root->kids[i], *v = root->kids[i + 1];
                if (k->kind == YN_SCALAR && strcmp(k->text, "base") == 0) {
                        set_leaf(L, find_field("base"), v);
                        L->full = v->kind == YN_SCALAR && strcmp(v->text, "none") == 0;
                        break;
                }
        }
        if (is_default && !L->full) {
                error_at(L, root->line, root->col, "the built-in default must say 'base: none'");
                goto free_loader;
        }
        if (!L->full) {
                struct diag dd;
                diag_init(&dd);
                size_t dlen;
                const char *dtext = topo_default_yaml(&dlen);
                if (load_text(DEFAULT_LABEL, dtext, dlen, out, &dd, true)) {
                        diag_move(d, &dd);
                        goto free_loader;
                }
                diag_fini(&dd);
        }
        walk_map(L, root, "");
        if (!L->where[find_field("name")].set && !L->full) {
                /* An overlay is named after its file: topologies/small.yaml -> small. */
                const char *base = strrchr(name, '/');
                base = base ? base + 1 : name;
                size_t n = strcspn(base, ".");
                if (n >= TOPO_NAME_MAX)
                        n = TOPO_NAME_MAX - 1;
                memcpy(out->name, base, n);
                out->name[n] = '\0';
        }
        if (d->n_errors == errors_before)
                validate(L);

free_loader:
        free(L);
        ytree_free(root);
        return d->n_errors > errors_before ? -EINVAL : 0;
}

int topo_load_text(const char *name, const char *text, size_t len, struct topo *out,
                   struct diag *d)
{
        if (len > TOPO_MAX_FILE_BYTES) {
                memset(out, 0, sizeof *out);
                diag_error_at(d, name, 0, 0,
                              "the file is larger than %u MiB; a topology file is a few KiB",
                              (unsigned)(TOPO_MAX_FILE_BYTES >> 20));
                return -EINVAL;
        }
        return load_text(name, text, len, out, d, false);
}

int topo_load_default(struct topo *out, struct diag *d)
{
        size_t len;
        const char *text = topo_default_yaml(&len);
        return load_text(DEFAULT_LABEL, text, len, out, d, true);
}

static int parse_file(const char *path, const char *text, size_t len, void *out,
                      struct diag *d)
{
        return topo_load_text(path, text, len, out, d);
}

int topo_load_file(const char *path, struct topo *out, struct diag *d)
{
        memset(out, 0, sizeof *out);
        return fs_parse_file(path, TOPO_MAX_FILE_BYTES, parse_file, out, d);
}

static int set_labelled(struct topo *t, const char *key, const char *value, const char *label,
                        struct diag *d);

/* The messages of src, located at label (an option, not a file), into d
 * unlocated with label before their text: "error: --set k=v: WHAT", so
 * that a command prints them in its own form. */
static void unlocate(struct diag *d, struct diag *src, const char *label)
{
        size_t n = strlen(label);
        for (const struct diag_msg *m = src->head; m; m = m->next) {
                const char *body = strncmp(m->text, label, n) == 0 && m->text[n] == ':'
                                           ? strstr(m->text + n, ": ")
                                           : NULL;
                const char *lv = body ? strstr(body + 2, ": ") : NULL;
                if (lv)
                        diag_report(d, m->level, NULL, 0, 0, "%s: %s", label, lv + 2);
                else
                        diag_add_text(d, m->level, m->text, strlen(m->text));
        }
}

int topo_set(struct topo *t, const char *key, const char *value, struct diag *d)
{
        char label[512];
        snprintf(label, sizeof label, "--set %s=%s", key, value);
        struct diag tmp;
        diag_init(&tmp);
        int rc = set_labelled(t, key, value, label, &tmp);
        unlocate(d, &tmp, label);
        diag_fini(&tmp);
        return rc;
}

static int set_labelled(struct topo *t, const char *key, const char *value, const char *label,
                        struct diag *d)
{
        int fi = find_field(key);
        const struct topo__field *f = fi >= 0 ? &topo__fields[fi] : NULL;
        if (!f || f->store == FS_NONE || f->store == FS_BASE || f->store == FS_COORDS) {
                const char *cands[N_FIELDS];
                size_t n = 0;
                for (size_t i = 0; i < N_FIELDS; i++)
                        if (topo__fields[i].type != FT_MAP && topo__fields[i].store != FS_NONE &&
                            topo__fields[i].store != FS_BASE && topo__fields[i].store != FS_COORDS)
                                cands[n++] = topo__fields[i].path;
                const char *hint = diag_suggest(key, cands, n);
                if (f && f->type == FT_MAP) {
                        char list[600];
                        size_t at = 0;
                        list[0] = '\0';
                        for (size_t i = 0; i < N_FIELDS && at < sizeof list; i++)
                                if (is_child(&topo__fields[i], key))
                                        at += (size_t)snprintf(list + at, sizeof list - at,
                                                               "%s%s", at ? ", " : "",
                                                               topo__fields[i].path);
                        diag_error_at(d, label, 0, 0,
                                      "'%s' is a group of parameters; set one of: %s", key, list);
                } else if (f) {
                        diag_error_at(d, label, 0, 0, "'%s' can only be given in a file", key);
                } else if (hint) {
                        diag_error_at(d, label, 0, 0,
                                      "unknown topology parameter '%s'; did you mean '%s'?", key,
                                      hint);
                } else {
                        diag_error_at(d, label, 0, 0,
                                      "unknown topology parameter '%s' (parameters are YAML "
                                      "paths like pe.dma.bw_gbps)",
                                      key);
                }
                return -EINVAL;
        }

        unsigned errors_before = d->n_errors;
        struct topo tmp = *t;
        struct loader *L = calloc(1, sizeof *L);
        if (!L) {
                diag_error_at(d, label, 0, 0, "out of memory");
                return -ENOMEM;
        }
        L->file = label;
        L->d = d;
        L->t = &tmp;
        struct ynode v = { .kind = YN_SCALAR, .plain = true, .len = strlen(value),
                           .text = (char *)value };
        set_leaf(L, fi, &v);
        if (d->n_errors == errors_before)
                validate(L);
        free(L);
        if (d->n_errors > errors_before)
                return -EINVAL;
        *t = tmp;
        return 0;
}

int topo_set_kv(struct topo *t, const char *kv, struct diag *d)
{
        const char *eq = strchr(kv, '=');
        if (!eq || eq == kv) {
                diag_error(d, "--set %s: expected key=value (e.g. pe.dma.bw_gbps=128)", kv);
                return -EINVAL;
        }
        char key[256];
        if ((size_t)(eq - kv) >= sizeof key) {
                diag_error(d, "--set %.64s...: the key is too long", kv);
                return -EINVAL;
        }
        memcpy(key, kv, (size_t)(eq - kv));
        key[eq - kv] = '\0';
        return topo_set(t, key, eq + 1, d);
}

void topo_fini(struct topo *t)
{
        memset(t, 0, sizeof *t);
}

/* ---- figures ---- */

void topo_totals(const struct topo *t, struct topo_totals *out)
{
        out->sips = t->system.sips;
        out->cubes = (uint64_t)t->system.sips * t->sip.cubes;
        out->pes = out->cubes * t->cube.noc.rows * t->cube.noc.cols;
        out->peak_gemm_flops_per_s =
                sat_mul_u64(sat_mul_u64(2 * (uint64_t)t->pe.gemm.macs_per_cycle,
                                        t->pe.gemm.clock_hz),
                            out->pes);
        out->hbm_bw_bytes_per_s = sat_mul_u64(
                sat_mul_u64(t->cube.hbm.channel_bw_bytes_per_s, t->cube.hbm.channels), out->cubes);
        out->tcm_bytes = sat_mul_u64(t->pe.tcm.size_bytes, out->pes);
}

/* ---- energy per MAC by operand class ---- */

/* The class of each tl_dtype (in tl_dtype order), and each class's rank
 * by its multiplier's width, widest highest. */
static const enum topo_mac_dt dtype_class[] = { TOPO_MAC_FP32, TOPO_MAC_BF16, TOPO_MAC_BF16,
                                                TOPO_MAC_BFP8, TOPO_MAC_BFP4 };
static const int class_width[TOPO_MAC_COUNT] = { [TOPO_MAC_FP32] = 3, [TOPO_MAC_BF16] = 2,
                                                 [TOPO_MAC_BFP8] = 1, [TOPO_MAC_BFP4] = 0 };

static enum topo_mac_dt class_of(tl_dtype d)
{
        return (unsigned)d < ARRAY_LEN(dtype_class) ? dtype_class[d] : TOPO_MAC_FP32;
}

enum topo_mac_dt topo_mac_dt_of(tl_dtype a, tl_dtype b)
{
        enum topo_mac_dt ca = class_of(a), cb = class_of(b);
        return class_width[ca] >= class_width[cb] ? ca : cb;
}

const char *topo_mac_dt_name(enum topo_mac_dt c)
{
        static const char *const names[TOPO_MAC_COUNT] = { "bf16", "fp32", "bfp8_b", "bfp4_b" };
        return (unsigned)c < TOPO_MAC_COUNT ? names[c] : "?";
}

/* The derivation (docs/energy-sources.md, [E-H14] and [E-MAC]): a MAC is a
 * multiply of the class's operands and a 32-bit FP accumulate (0.9 pJ;
 * compute is fp32); 45 nm multiplies: fp32 3.7 pJ, 16-bit FP 1.1, 8-bit
 * integer 0.2 (a block float's mantissas), 4-bit 0.05 (8-bit's x (4/8)^2,
 * an assumption). pj_per_mac is bf16's 1.1 + 0.9, so class c costs
 * pj_per_mac x (mult_c + 0.9) / 2.0. */
static const double mult_fj_45nm[TOPO_MAC_COUNT] = {
        [TOPO_MAC_BF16] = 1100, [TOPO_MAC_FP32] = 3700, [TOPO_MAC_BFP8] = 200,
        [TOPO_MAC_BFP4] = 50,
};
#define ACC_FJ_45NM 900.0

double topo_gemm_mac_fj(const struct topo_pe_gemm *g, enum topo_mac_dt c)
{
        if ((unsigned)c >= TOPO_MAC_COUNT)
                c = TOPO_MAC_FP32;
        if (c != TOPO_MAC_BF16 && g->mac_fj[c] != TOPO_FJ_DERIVED)
                return (double)g->mac_fj[c];
        return (double)g->energy.dyn_fj * (mult_fj_45nm[c] + ACC_FJ_45NM) /
               (mult_fj_45nm[TOPO_MAC_BF16] + ACC_FJ_45NM);
}

sim_ps topo_cycles_to_ps(uint64_t cycles, uint64_t clock_hz)
{
        if (clock_hz == 0)
                return TOPO_PS_NONE;
        return muldiv_ceil(cycles, 1000000000000u, clock_hz);
}

sim_ps topo_issue_cost_ps(const struct topo_pe_cpu *cpu, enum topo_op op)
{
        if ((unsigned)op < TOPO_OP_COUNT && cpu->issue_cost_ps[op] != TOPO_COST_NONE)
                return cpu->issue_cost_ps[op];
        return topo_cycles_to_ps(cpu->dispatch_cycles, cpu->clock_hz);
}
