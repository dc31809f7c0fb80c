/* benches/validate_tt_ccl.c: validate-tt-ccl, the Ethernet links and the
 * collectives against tt-metal's measured Wormhole collectives.
 *
 * Each row of benches/data/tt_ccl.csv (op, topology, devices, bytes,
 * measured_us: tt-metal's CCL summary, cited in the file) is run as the
 * kernel of its op (kernels/ccl.c) in op_log mode, bf16, on 2 devices
 * topologies/tt_wormhole_n300.yaml, on 4 topologies/tt_t3k.yaml cut to a
 * 1 x 4 line (system.sips=4), on 8 the whole T3000 (its 2 x 4 mesh in ring
 * order); the row's topology is the kernel's algo, bidirectional as
 * tt-metal's are. bytes is the report's tensor T; each device's input is
 * T / devices for all_gather, T for the others, as rows of 1024 bf16 (a
 * 2 KiB tt-metal page; every row's input is whole pages). The host's
 * launch reaches the devices in turn (system.launch_skew_ns, fitted:
 * tt-metal's time is each device's own kernel time, the longest of them,
 * so a device that waits at a barrier for a later one counts the wait;
 * docs/adr/0055). The prediction is the run's kernel time, from the first
 * device's start.
 *
 * Coarser grain for the largest messages: a row above max_bytes (default
 * 1 GiB) is not simulated; it is the last simulated size of its op and
 * configuration plus the extra bytes at that configuration's steady
 * rate, the time between its two largest simulated sizes over their
 * bytes (the time is linear in the bytes there: fixed costs are paid once
 * and the links run at their rate). Rows of a configuration need two
 * simulated sizes for this.
 *
 * error_pct = (predicted - measured) / measured x 100; mape_pct is the
 * mean of |error_pct|. DIR (--out, default out/validate-tt-ccl) receives
 * table.md and figures/OP.{dat,gp,png,svg}: time against bytes, log-log,
 * measured and predicted per configuration, one figure per op. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/fsutil.h"
#include "bench.h"
#include "report/summary.h"
#include "sweep/sweep.h"
#include "tl/tl_run.h"

static const char *const vc_params[] = { "csv", "max_bytes", "workers", "chunk_bytes",
                                         "pipeline", "message_ns", "oneshot_bytes", "syncs",
                                         "mux", "mcast", "mcast_pages", "launch_skew_ns", "direct", "figures",
                                         "rs_rule", "direct_fixed_ns", "core_ns", "slots", NULL };

#define VC_MAX_ROWS 512

static const char *const ops[] = { "all_gather", "reduce_scatter", "all_reduce" };

struct vc_row {
        int op;                      /* index into ops */
        char topology[8];            /* "line" or "ring" */
        int devices;                 /* 2, 4 or 8 */
        int64_t bytes;               /* the tensor T */
        double measured_us;          /* tt-metal's kernel time */
        double predicted_us;         /* the model's */
        double error_pct;            /* (predicted - measured) / measured x 100 */
        bool simulated;              /* run, not extrapolated */
};

/* What the runs share. */
struct vc_cfg {
        int64_t max_bytes;           /* larger rows are extrapolated */
        int64_t workers;             /* PEs per flow and device */
        int64_t chunk_bytes;         /* bytes per message */
        int64_t pipeline;            /* at least this many messages a piece */
        int64_t oneshot_bytes;       /* ring reduce-scatters up to this input are one-shot */
        bool syncs;                  /* reduce-scatter syncs as tt-metal's (else none) */
        bool mux;                    /* the workers connect through a mux PE a flow */
        bool mcast;                  /* a line's gather multicasts through router PEs */
        bool direct;                 /* one-shot ring reduce-scatters are tt-metal's direct op */
        int64_t mcast_pages;         /* a ring's gathers multicast below this many pages */
        bool rs_rule;                /* a reduce-scatter's (all-reduce's) workers by tt-metal's
                                      * reduce-scatter rule, else the all-gather's */
        const char *message_ns;      /* the links' message cost, or NULL: the files' */
        const char *core_ns;         /* the links' Ethernet cores' cost a packet, or NULL:
                                      * the files' */
        const char *slots;           /* the packets a sender may have ahead of the wire, or
                                      * NULL: the files' */
        const char *direct_fixed_ns; /* the direct op's fixed cost, or NULL: the kernel's */
        int64_t launch_skew_ns;      /* system.launch_skew_ns: the host's launch of the
                                      * devices, in turn, the last this long after the
                                      * first */
};

static int op_index(const char *s)
{
        for (int i = 0; i < 3; i++)
                if (!strcmp(s, ops[i]))
                        return i;
        return -1;
}

/* Read the table (comment lines '#', a header, rows) into r: the number
 * of rows, or -1 (problems to d, as FILE:LINE:COL). */
static int read_table(const char *path, struct vc_row *r, struct diag *d)
{
        FILE *f = bench_open_table(path, d);
        if (!f)
                return -1;
        char line[256];
        int n = 0;
        unsigned ln = 0;
        bool header = false;
        while (d->n_errors == 0 && fgets(line, sizeof line, f)) {
                ln++;
                line[strcspn(line, "\r\n")] = '\0';
                if (!line[0] || line[0] == '#')
                        continue;
                if (!header) {
                        if (strcmp(line, "op,topology,devices,bytes,measured_us") != 0)
                                diag_error_at(d, path, ln, 1, "expected the header "
                                              "op,topology,devices,bytes,measured_us");
                        header = true;
                        continue;
                }
                if (n == VC_MAX_ROWS) {
                        diag_error_at(d, path, ln, 1, "more than %d rows", VC_MAX_ROWS);
                        break;
                }
                struct vc_row *row = &r[n];
                char op[24], dev[16], bytes[32], us[32];
                int64_t devices = 0;
                if (sscanf(line, "%23[^,],%7[^,],%15[^,],%31[^,],%31s", op, row->topology, dev,
                           bytes, us) != 5 ||
                    (row->op = op_index(op)) < 0 ||
                    (strcmp(row->topology, "line") && strcmp(row->topology, "ring")) ||
                    !params_parse_i64(dev, &devices) ||
                    (devices != 2 && devices != 4 && devices != 8) ||
                    !params_parse_i64(bytes, &row->bytes) || row->bytes < 2 * devices ||
                    !params_parse_double(us, &row->measured_us) || !(row->measured_us > 0) ||
                    !isfinite(row->measured_us)) {
                        diag_error_at(d, path, ln, 1, "expected op (all_gather, reduce_scatter, "
                                      "all_reduce), topology (line, ring), devices (2, 4, 8), "
                                      "bytes (>= 2 x devices) and measured_us > 0 (got '%s')",
                                      line);
                        break;
                }
                row->devices = (int)devices;
                n++;
        }
        fclose(f);
        if (d->n_errors == 0 && n == 0)
                diag_error_at(d, path, ln + 1, 1, "no rows");
        return d->n_errors ? -1 : n;
}

/* The kernel time in us of row r simulated; -1 if the run failed (its
 * messages in d). */
static double run_us(const struct vc_cfg *cfg, const struct vc_row *r, struct diag *d)
{
        struct topo t;
        const char *file = r->devices == 2 ? "topologies/tt_wormhole_n300.yaml"
                                           : "topologies/tt_t3k.yaml";
        if (topo_load_file(file, &t, d) < 0)
                return -1;
        char msg[64];
        if (r->devices == 4 && topo_set_kv(&t, "system.sips=4", d) < 0)
                return -1;
        /* tt-metal's benchmark runs a line on a line fabric (FABRIC_1D), a
         * ring on a ring fabric (docs/tt-sources.md CCL) */
        if (!strcmp(r->topology, "line") &&
            topo_set_kv(&t, "system.inter_sip.message_overlap=1", d) < 0)
                return -1;
        snprintf(msg, sizeof msg, "system.inter_sip.message_ns=%s",
                 cfg->message_ns ? cfg->message_ns : "");
        if (cfg->message_ns && topo_set_kv(&t, msg, d) < 0)
                return -1;
        snprintf(msg, sizeof msg, "system.inter_sip.core_ns=%s", cfg->core_ns ? cfg->core_ns : "");
        if (cfg->core_ns && topo_set_kv(&t, msg, d) < 0)
                return -1;
        snprintf(msg, sizeof msg, "system.inter_sip.slots=%s", cfg->slots ? cfg->slots : "");
        if (cfg->slots && topo_set_kv(&t, msg, d) < 0)
                return -1;
        snprintf(msg, sizeof msg, "system.launch_skew_ns=%lld", (long long)cfg->launch_skew_ns);
        if (topo_set_kv(&t, msg, d) < 0)
                return -1;
        int64_t each = r->op == 0 ? r->bytes / r->devices : r->bytes;
        char kv[13][48];
        snprintf(kv[0], sizeof kv[0], "bytes=%lld", (long long)each);
        snprintf(kv[1], sizeof kv[1], "algo=%s", r->topology);
        snprintf(kv[2], sizeof kv[2], "workers=%lld", (long long)cfg->workers);
        snprintf(kv[3], sizeof kv[3], "chunk_bytes=%lld", (long long)cfg->chunk_bytes);
        snprintf(kv[4], sizeof kv[4], "pipeline=%lld", (long long)cfg->pipeline);
        snprintf(kv[5], sizeof kv[5], "oneshot_bytes=%lld", (long long)cfg->oneshot_bytes);
        snprintf(kv[6], sizeof kv[6], "sync_packets=%d", cfg->syncs ? 0 : -1);
        snprintf(kv[7], sizeof kv[7], "mux=%d", cfg->mux ? 1 : 0);
        snprintf(kv[8], sizeof kv[8], "mcast=%d", cfg->mcast ? 1 : 0);
        snprintf(kv[9], sizeof kv[9], "direct=%d", cfg->direct ? 1 : 0);
        snprintf(kv[10], sizeof kv[10], "mcast_pages=%lld", (long long)cfg->mcast_pages);
        snprintf(kv[11], sizeof kv[11], "rs_rule=%d", cfg->rs_rule ? 1 : 0);
        snprintf(kv[12], sizeof kv[12], "direct_fixed_ns=%s",
                 cfg->direct_fixed_ns ? cfg->direct_fixed_ns : "");
        const char *sets[13] = { kv[0], kv[1], kv[2], kv[3], kv[4],  kv[5], kv[6],
                                 kv[7], kv[8], kv[9], kv[10], kv[11], kv[12] };
        struct tl_job job = { .kernel = tl_kernel_find(ops[r->op]), .topo = &t, .sets = sets,
                              .n_sets = cfg->direct_fixed_ns ? 13 : 12,
                              .opts = tl_run_opts_default() };
        double us = -1;
        if (tl_job_run(&job, d) == 0) {
                json_t *s = rep_run_summary(&job.sim, &job.stats, ops[r->op]);
                us = (double)json_integer_value(json_object_get(s, "kernel_ps")) / 1e6;
                json_decref(s);
        }
        tl_job_fini(&job);
        return us;
}

static bool same_cfg(const struct vc_row *a, const struct vc_row *b)
{
        return a->op == b->op && a->devices == b->devices && !strcmp(a->topology, b->topology);
}

/* Predict every row: 0, 1 (a run failed) or 2 (a row cannot be
 * extrapolated). */
static int predict_all(const struct vc_cfg *cfg, struct vc_row *r, int n, const char *csv,
                       struct diag *d)
{
        for (int i = 0; i < n; i++) {
                if (r[i].bytes > cfg->max_bytes)
                        continue;
                r[i].predicted_us = run_us(cfg, &r[i], d);
                if (r[i].predicted_us < 0)
                        return 1;
                r[i].simulated = true;
        }
        for (int i = 0; i < n; i++) {
                if (r[i].simulated)
                        continue;
                const struct vc_row *a = NULL, *b = NULL; /* the two largest simulated */
                for (int j = 0; j < n; j++) {
                        if (!r[j].simulated || !same_cfg(&r[i], &r[j]))
                                continue;
                        if (!b || r[j].bytes > b->bytes) {
                                a = b;
                                b = &r[j];
                        } else if (!a || r[j].bytes > a->bytes) {
                                a = &r[j];
                        }
                }
                if (!a || a->bytes == b->bytes) {
                        diag_error_at(d, csv, 0, 0, "%s %s %d devices, %lld bytes: above "
                                      "max_bytes (%lld) with fewer than two simulated sizes to "
                                      "extrapolate from", ops[r[i].op], r[i].topology,
                                      r[i].devices, (long long)r[i].bytes,
                                      (long long)cfg->max_bytes);
                        return 2;
                }
                double slope = (b->predicted_us - a->predicted_us) / (double)(b->bytes - a->bytes);
                r[i].predicted_us = b->predicted_us + slope * (double)(r[i].bytes - b->bytes);
        }
        for (int i = 0; i < n; i++)
                r[i].error_pct = (r[i].predicted_us - r[i].measured_us) / r[i].measured_us * 100;
        return 0;
}

/* table.md and, per op, the figure's data and script. */
static void write_outputs(const char *dir, const struct vc_row *r, int n, double mape,
                          bool draw, struct diag *d)
{
        struct bench_outputs bo = { 0 };
        FILE *f = bench_outputs_open(&bo, dir, d);
        if (!f)
                return;
        fprintf(f, "# validate-tt-ccl\n\nMAPE %.1f%% over %d rows.\n\n", mape, n);
        for (int o = 0; o < 3; o++)
                for (int i = 0; i < n; i++)
                        if (r[i].op == o) {
                                fprintf(f, "![%s](figures/%s.png)\n", ops[o], ops[o]);
                                break;
                        }
        fprintf(f, "\n| op | topology | devices | bytes | measured us | predicted us | error %% "
                   "| simulated |\n|---|---|---|---|---|---|---|---|\n");
        for (int i = 0; i < n; i++)
                fprintf(f, "| %s | %s | %d | %lld | %.2f | %.2f | %+.1f | %s |\n", ops[r[i].op],
                        r[i].topology, r[i].devices, (long long)r[i].bytes, r[i].measured_us,
                        r[i].predicted_us, r[i].error_pct, r[i].simulated ? "yes" : "no");
        bench_write_stream(dir, "table.md", f, &bo.buf, &bo.len);
        char scripts[3][300];
        int n_scripts = 0;
        int *idx = malloc((size_t)n * sizeof *idx);
        if (!idx) {
                diag_error(d, "out of memory");
                return;
        }
        for (int o = 0; o < 3; o++) {
                /* one data block per configuration, in the order the
                 * configurations first appear, its rows by size: bytes
                 * measured predicted */
                f = open_memstream(&bo.buf, &bo.len);
                char titles[8][32];
                int blocks = 0;
                for (int i = 0; i < n; i++) {
                        bool seen = r[i].op != o;
                        for (int j = 0; j < i && !seen; j++)
                                seen = same_cfg(&r[i], &r[j]);
                        if (seen)
                                continue;
                        if (blocks)
                                fprintf(f, "\n\n");
                        if (blocks < 8)
                                snprintf(titles[blocks], sizeof titles[0], "%s %d",
                                         r[i].topology, r[i].devices);
                        blocks++;
                        int m = 0;
                        for (int j = i; j < n; j++)
                                if (same_cfg(&r[i], &r[j]))
                                        idx[m++] = j;
                        for (int a = 1; a < m; a++)     /* by size: insertion, rows are few */
                                for (int b = a; b > 0 && r[idx[b]].bytes < r[idx[b - 1]].bytes;
                                     b--) {
                                        int t = idx[b];
                                        idx[b] = idx[b - 1];
                                        idx[b - 1] = t;
                                }
                        for (int k = 0; k < m; k++)
                                fprintf(f, "%lld %.3f %.3f\n", (long long)r[idx[k]].bytes,
                                        r[idx[k]].measured_us, r[idx[k]].predicted_us);
                }
                char name[64];
                if (!blocks) {
                        /* the table has no row of this op: no figure */
                        fclose(f);
                        free(bo.buf);
                        bo.buf = NULL;
                        continue;
                }
                snprintf(name, sizeof name, "%s.dat", ops[o]);
                bench_write_stream(bo.figs, name, f, &bo.buf, &bo.len);
                f = open_memstream(&bo.buf, &bo.len);
                fprintf(f, "# %s: measured (points) and predicted (lines) time against the "
                           "tensor's bytes. Redraw: gnuplot %s.gp\nreset\nset encoding utf8\n"
                           "set terminal pngcairo size 900,650 font \"DejaVu Sans,12\" "
                           "noenhanced\nset output \"%s.png\"\nset logscale xy\nset grid\n"
                           "set key top left\nset xlabel \"tensor bytes (T)\"\n"
                           "set ylabel \"kernel time (us)\"\n"
                           "set title \"validate-tt-ccl: %s (MAPE over all rows %.1f%%)\"\nplot ",
                        ops[o], ops[o], ops[o], ops[o], mape);
                for (int b = 0; b < blocks && b < 8; b++)
                        fprintf(f, "%s\"%s.dat\" index %d using 1:2 with points pt 7 lc %d "
                                   "title \"%s measured\", \"%s.dat\" index %d using 1:3 with "
                                   "lines lw 2 lc %d title \"%s predicted\"",
                                b ? ", \\\n     " : "", ops[o], b, b + 1, titles[b], ops[o], b,
                                b + 1, titles[b]);
                fprintf(f, "\nset terminal svg size 900,650 font \"DejaVu Sans,12\" noenhanced "
                           "background \"white\"\nset output \"%s.svg\"\nreplot\nunset output\n",
                        ops[o]);
                snprintf(name, sizeof name, "%s.gp", ops[o]);
                bench_write_stream(bo.figs, name, f, &bo.buf, &bo.len);
                snprintf(scripts[n_scripts++], sizeof scripts[0], "%s", name);
        }
        free(idx);
        if (draw && n_scripts)
                bench_draw(bo.figs, scripts, n_scripts);
}

static json_t *row_json(const struct vc_row *r)
{
        return json_pack("{s:o, s:o, s:i, s:I, s:o, s:o, s:o}", "op", jsonw_string(ops[r->op]),
                         "topology", jsonw_string(r->topology), "devices", r->devices, "bytes",
                         (json_int_t)r->bytes, "measured_us", jsonw_fixed(r->measured_us, 2),
                         "predicted_us", jsonw_fixed(r->predicted_us, 2), "error_pct",
                         jsonw_fixed(r->error_pct, 2));
}

static json_t *rows_json(const struct vc_row *r, int n)
{
        json_t *a = json_array();
        for (int i = 0; i < n; i++)
                json_array_append_new(a, row_json(&r[i]));
        return a;
}

static int run(const struct bench_ctx *c)
{
        const char *csv;
        uint64_t max_bytes, workers, chunk, pipeline, oneshot, sync, mux, mcast, skew, figures;
        uint64_t direct, mcast_pages, rs_rule;
        struct vc_cfg cfg = { 0 };
        params_str(c->params, "csv", "benches/data/tt_ccl.csv", &csv);
        params_u64(c->params, "max_bytes", 1ull << 30, 1024, 1ull << 40, &max_bytes, c->diag);
        params_u64(c->params, "workers", 0, 0, 16, &workers, c->diag);
        params_u64(c->params, "chunk_bytes", 65536, 64, 1 << 20, &chunk, c->diag);
        params_u64(c->params, "pipeline", 2, 1, 1 << 20, &pipeline, c->diag);
        params_u64(c->params, "oneshot_bytes", 524288, 0, 1ull << 40, &oneshot, c->diag);
        params_u64(c->params, "syncs", 1, 0, 1, &sync, c->diag);
        params_u64(c->params, "mux", 1, 0, 1, &mux, c->diag);
        params_u64(c->params, "mcast", 1, 0, 1, &mcast, c->diag);
        params_u64(c->params, "launch_skew_ns", 1000, 0, 1000000, &skew, c->diag);
        params_u64(c->params, "direct", 1, 0, 1, &direct, c->diag);
        params_u64(c->params, "mcast_pages", 64, 0, 1ull << 40, &mcast_pages, c->diag);
        params_u64(c->params, "figures", 1, 0, 1, &figures, c->diag);
        params_u64(c->params, "rs_rule", 1, 0, 1, &rs_rule, c->diag);
        params_str(c->params, "message_ns", NULL, &cfg.message_ns);
        params_str(c->params, "core_ns", NULL, &cfg.core_ns);
        params_str(c->params, "slots", NULL, &cfg.slots);
        params_str(c->params, "direct_fixed_ns", NULL, &cfg.direct_fixed_ns);
        /* those four pass to the machine or the kernel as given: checked
         * here, so a bad one stops the bench before any run (status 2) */
        const struct { const char *key, *value; double max; bool integer; } given[] = {
                { "message_ns", cfg.message_ns, 1e9, false },
                { "core_ns", cfg.core_ns, 1e9, false },
                { "slots", cfg.slots, 1 << 20, true },
                { "direct_fixed_ns", cfg.direct_fixed_ns, 100000, true },
        };
        for (size_t i = 0; i < sizeof given / sizeof given[0]; i++) {
                const char *v = given[i].value;
                if (!v)
                        continue;
                uint64_t n = 0;
                double x = 0;
                bool ok = given[i].integer ? params_parse_u64(v, &n) : params_parse_double(v, &x);
                if (given[i].integer)
                        x = (double)n;
                if (!ok || x < 0 || x > given[i].max)
                        diag_error(c->diag, "--set %s=%s: expected %s in [0, %.0f]", given[i].key,
                                   v, given[i].integer ? "an integer" : "a number",
                                   given[i].max);
        }
        params_check_unused(c->params, vc_params, "validate-tt-ccl", c->diag);
        if (c->diag->n_errors)
                return 2;
        cfg.max_bytes = (int64_t)max_bytes;
        cfg.workers = (int64_t)workers;
        cfg.chunk_bytes = (int64_t)chunk;
        cfg.pipeline = (int64_t)pipeline;
        cfg.oneshot_bytes = (int64_t)oneshot;
        cfg.syncs = sync != 0;
        cfg.mux = mux != 0;
        cfg.mcast = mcast != 0;
        cfg.direct = direct != 0;
        cfg.mcast_pages = (int64_t)mcast_pages;
        cfg.launch_skew_ns = (int64_t)skew;
        cfg.rs_rule = rs_rule != 0;
        struct vc_row *rows = calloc(VC_MAX_ROWS, sizeof *rows);
        if (!rows) {
                diag_error(c->diag, "out of memory");
                return 1;
        }
        int n = read_table(csv, rows, c->diag), status = 2;
        if (n < 0)
                goto out;
        status = predict_all(&cfg, rows, n, csv, c->diag);
        if (status)
                goto out;
        double sum = 0;
        for (int i = 0; i < n; i++)
                sum += fabs(rows[i].error_pct);
        double mape = sum / n;
        const char *dir = c->out_dir ? c->out_dir : "out/validate-tt-ccl";
        write_outputs(dir, rows, n, mape, figures != 0, c->diag);
        status = c->diag->n_errors ? 2 : 0;
        if (status || c->json) {
                if (!status)
                        status = bench_print_json(c, json_pack("{s:o, s:o, s:o}", "rows",
                                                               rows_json(rows, n), "mape_pct",
                                                               jsonw_fixed(mape, 2), "out",
                                                               jsonw_string(dir)));
                goto out;
        }
        fprintf(c->out, "%-15s %-5s %3s %12s %12s %12s %8s\n", "op", "topo", "dev", "bytes",
                "measured_us", "predicted_us", "error_%");
        for (int i = 0; i < n; i++)
                fprintf(c->out, "%-15s %-5s %3d %12lld %12.2f %12.2f %+8.1f%s\n", ops[rows[i].op],
                        rows[i].topology, rows[i].devices, (long long)rows[i].bytes,
                        rows[i].measured_us, rows[i].predicted_us, rows[i].error_pct,
                        rows[i].simulated ? "" : "  (extrapolated)");
        fprintf(c->out, "MAPE %.1f%% over %d rows; table and figures in %s/\n", mape, n, dir);
out:
        free(rows);
        return status;
}

BENCH_DEFINE(bench_validate_tt_ccl, "validate-tt-ccl", vc_params,
             "all_gather, reduce_scatter, all_reduce on the n300 and T3000 against "
             "tt-metal's measured Wormhole collectives",
             "Parameters:\n"
             "  csv=FILE        the measured rows (default benches/data/tt_ccl.csv; columns\n"
             "                  op, topology, devices, bytes, measured_us; '#' comments)\n"
             "  max_bytes=N     rows above are extrapolated from the two largest simulated\n"
             "                  sizes of their configuration (default 1073741824)\n"
             "  workers=N       PEs per direction and device (default 0: tt-metal's rules\n"
             "                  by the bytes a link carries: the all-gather's 1, 2 or 4, a\n"
             "                  reduce-scatter's (and an all-reduce's) 1, 2, 4 or 8)\n"
             "  rs_rule=0       reduce-scatters and all-reduces take the all-gather's rule\n"
             "                  (default 1: tt-metal's reduce-scatter rule)\n"
             "  chunk_bytes=N   bytes per message (default 65536, fitted)\n"
             "  pipeline=N      at least N messages a piece (default 2, fitted)\n"
             "  message_ns=X    override the machine files' system.inter_sip.message_ns\n"
             "  core_ns=X       override their system.inter_sip.core_ns (0: no shared\n"
             "                  Ethernet cores)\n"
             "  slots=N         override their system.inter_sip.slots (0: senders never\n"
             "                  wait for the fabric's slots)\n"
             "  oneshot_bytes=N ring reduce-scatters (and all-reduces) of at most N bytes a\n"
             "                  device are one-shot (default 524288, tt-metal's; 0: never)\n"
             "  syncs=0         no reduce-scatter syncs (default 1: tt-metal's, one a\n"
             "                  neighbour per 4 packets on a ring, 20 on a line)\n"
             "  mux=0           no fabric connections (default 1: each flow's workers\n"
             "                  connect through a mux PE, tt-metal's handshakes)\n"
             "  mcast=0         gathers relay through the workers (default 1: a line's,\n"
             "                  and a ring's below mcast_pages a device, multicast as\n"
             "                  tt-metal's, a router PE a direction passes on)\n"
             "  mcast_pages=N   a ring's gathers multicast below N pages a device\n"
             "                  (default 64, tt-metal's; 0: never)\n"
             "  direct=0        one-shot ring reduce-scatters (and all-reduces' halves) run\n"
             "                  the one-shot path (default 1: tt-metal's direct op)\n"
             "  direct_fixed_ns=N the direct op's fixed cost a call (default: the kernel's,\n"
             "                  fitted)\n"
             "  launch_skew_ns=N the host's launch reaches the last device N ns after the\n"
             "                  first (system.launch_skew_ns; default 1000, fitted)\n"
             "  figures=0       skip gnuplot (the data and scripts are written)\n"
             "Runs each row as its op's kernel (kernels/ccl.c, bidirectional, the row's\n"
             "topology as algo) in op_log mode: 2 devices on tt_wormhole_n300.yaml, 4 on\n"
             "tt_t3k.yaml cut to 4 SIPs (a line), 8 on tt_t3k.yaml. Writes DIR/table.md\n"
             "and DIR/figures/{all_gather,reduce_scatter,all_reduce}.* (log-log time\n"
             "against bytes, measured and predicted; DIR: --out, default\n"
             "out/validate-tt-ccl). Prints a table, or (--json) {\"rows\": [{\"op\",\n"
             "\"topology\", \"devices\", \"bytes\", \"measured_us\", \"predicted_us\",\n"
             "\"error_pct\"}, ...], \"mape_pct\": x, \"out\": DIR}.\n");
