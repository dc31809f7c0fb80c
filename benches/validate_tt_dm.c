/* benches/validate_tt_dm.c: validate-tt-dm, the data-movement model
 * against tt-metal's documented rates.
 *
 * Each row of the table (benches/data/tt_dm_ideal.csv: machine, pattern,
 * documented, unit) is run as the tt_dm kernel (kernels/tt_dm.c) in op_log
 * mode on the machine's file, with transfers of one NoC packet
 * (cube.noc.packet_bytes). The rate is measured in steady state: the
 * pattern runs with n1 and then n2 > n1 transfers per issuing PE, and the
 * rate is the extra bytes over the extra kernel time, so the launch and
 * the first transfer's latency cancel. Units: `B/cycle` (bytes per AI
 * clock cycle, pe.cpu.clock_mhz; a multicast's bytes count once, a
 * unicast to many destinations counts each) or `% of peak` (the rate over
 * cube.hbm.channels x channel_bw_gbps). error_pct = (predicted -
 * documented) / documented x 100; mape_pct is the mean of |error_pct|. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "report/summary.h"
#include "tl/tl_run.h"

static const char *const vd_params[] = { "csv", "wh", "bh", NULL };

#define VD_MAX_ROWS 64

struct vd_row {
        char machine[32];            /* wormhole_n150 or blackhole_p150 */
        char pattern[32];            /* a tt_dm pattern */
        char unit[32];               /* "B/cycle" or "% of peak" */
        double documented;           /* the documented figure */
        double predicted;            /* the model's */
        double error_pct;            /* (predicted - documented) / documented x 100 */
        char documented_text[32];    /* the documented cell as written */
        unsigned line;               /* the row's line in the table */
        unsigned col[4];             /* 1-based columns of machine, pattern, documented, unit */
};

/* One row of the table: its cells copied, their columns kept for the
 * checks of read_table. */
static void take_row(void *rows, const char *path, int n, unsigned ln, char **cell,
                     const unsigned *at, struct diag *d)
{
        struct vd_row *row = (struct vd_row *)rows + n;
        (void)path, (void)d;
        row->line = ln;
        memcpy(row->col, at, sizeof row->col);
        snprintf(row->machine, sizeof row->machine, "%s", cell[0]);
        snprintf(row->pattern, sizeof row->pattern, "%s", cell[1]);
        snprintf(row->documented_text, sizeof row->documented_text, "%s", cell[2]);
        snprintf(row->unit, sizeof row->unit, "%s", cell[3]);
}

/* Read the table into r: the number of rows, or -1 (problems to d, as
 * FILE:LINE:COL): a documented figure > 0 and one of the two units. */
static int read_table(const char *path, struct vd_row *r, struct diag *d)
{
        static const char *const needed[] = { "machine", "pattern", "documented", "unit" };
        int n = bench_csv_read(path, needed, 4, VD_MAX_ROWS, sizeof r->machine, take_row, r, d);
        for (int i = 0; i < n && d->n_errors == 0; i++) {
                struct vd_row *row = &r[i];
                if (!params_parse_double(row->documented_text, &row->documented) ||
                    !(row->documented > 0) || !isfinite(row->documented))
                        diag_error_at(d, path, row->line, row->col[2], "documented '%s': "
                                      "expected a figure > 0", row->documented_text);
                else if (strcmp(row->unit, "B/cycle") != 0 && strcmp(row->unit, "% of peak") != 0)
                        diag_error_at(d, path, row->line, row->col[3], "unit '%s': expected "
                                      "'B/cycle' or '%% of peak'", row->unit);
        }
        return d->n_errors ? -1 : n;
}

/* The kernel time in ps of pattern with n transfers of bytes on t; 0 if
 * the run failed (its messages in d). */
static double run_ps(const struct topo *t, const char *pattern, int64_t bytes, int64_t n,
                     struct diag *d)
{
        char kv[3][48];
        snprintf(kv[0], sizeof kv[0], "pattern=%s", pattern);
        snprintf(kv[1], sizeof kv[1], "bytes=%lld", (long long)bytes);
        snprintf(kv[2], sizeof kv[2], "n=%lld", (long long)n);
        const char *sets[3] = { kv[0], kv[1], kv[2] };
        struct tl_job job = { .kernel = tl_kernel_find("tt_dm"), .topo = t, .sets = sets,
                              .n_sets = 3, .opts = tl_run_opts_default() };
        double ps = 0;
        if (tl_job_run(&job, d) == 0) {
                json_t *s = rep_run_summary(&job.sim, &job.stats, "tt_dm");
                ps = (double)json_integer_value(json_object_get(s, "kernel_ps"));
                json_decref(s);
        }
        tl_job_fini(&job);
        return ps;
}

/* The bytes a run of pattern with n transfers of bytes moves on t. */
static double moved(const struct topo *t, const char *pattern, int64_t bytes, int64_t n)
{
        uint32_t gx = t->cube.compute_cols ? t->cube.compute_cols : t->cube.noc.cols;
        uint32_t gy = t->cube.compute_rows ? t->cube.compute_rows : t->cube.noc.rows;
        double per = (double)bytes * (double)n, others = (double)gx * gy - 1;
        if (!strcmp(pattern, "one_to_all") || !strcmp(pattern, "one_from_all"))
                return per * others;
        if (!strcmp(pattern, "grid_dram_read"))
                return per * (others + 1);
        if (!strncmp(pattern, "grid_dram_read_", 15))
                return per * t->cube.hbm.channels;
        return per;
}

/* Transfers per issuing PE of the two runs: a pattern with a transfer per
 * destination or source needs fewer. */
static void counts(const char *pattern, int64_t *n1, int64_t *n2)
{
        bool many = !strcmp(pattern, "one_to_all") || !strcmp(pattern, "one_from_all");
        *n1 = many ? 2 : 8;
        *n2 = many ? 4 : 24;
}

/* Predict row on t: 0, or 1 (the run failed). */
static int predict(const struct topo *t, struct vd_row *row, struct diag *d)
{
        int64_t bytes = t->cube.noc.packet_bytes, n1, n2;
        counts(row->pattern, &n1, &n2);
        double t1 = run_ps(t, row->pattern, bytes, n1, d);
        double t2 = d->n_errors ? 0 : run_ps(t, row->pattern, bytes, n2, d);
        if (d->n_errors || !(t2 > t1))
                return 1;
        double b = moved(t, row->pattern, bytes, n2) - moved(t, row->pattern, bytes, n1);
        double bytes_per_s = b / ((t2 - t1) * 1e-12);
        if (!strcmp(row->unit, "% of peak"))
                row->predicted = bytes_per_s /
                                 ((double)t->cube.hbm.channels *
                                  (double)t->cube.hbm.channel_bw_bytes_per_s) * 100;
        else
                row->predicted = bytes_per_s / (double)t->pe.cpu.clock_hz;
        row->error_pct = (row->predicted - row->documented) / row->documented * 100;
        return 0;
}

static json_t *row_json(const struct vd_row *r)
{
        return json_pack("{s:o, s:o, s:o, s:o, s:o, s:o}", "machine", jsonw_string(r->machine),
                         "pattern", jsonw_string(r->pattern), "documented",
                         jsonw_fixed(r->documented, 2), "predicted", jsonw_fixed(r->predicted, 2),
                         "unit", jsonw_string(r->unit), "error_pct", jsonw_fixed(r->error_pct, 2));
}

static int run(const struct bench_ctx *c)
{
        const char *csv, *files[2];
        static const char *const machines[2] = { "wormhole_n150", "blackhole_p150" };
        params_str(c->params, "csv", "benches/data/tt_dm_ideal.csv", &csv);
        params_str(c->params, "wh", "topologies/tt_wormhole_n150.yaml", &files[0]);
        params_str(c->params, "bh", "topologies/tt_blackhole_p150.yaml", &files[1]);
        params_check_unused(c->params, vd_params, "validate-tt-dm", c->diag);
        if (c->diag->n_errors)
                return 2;
        struct vd_row rows[VD_MAX_ROWS];
        struct topo t[2];
        int n = read_table(csv, rows, c->diag);
        if (n < 0 || topo_load_file(files[0], &t[0], c->diag) < 0 ||
            topo_load_file(files[1], &t[1], c->diag) < 0)
                return 2;
        double sum = 0;
        for (int i = 0; i < n; i++) {
                int m = !strcmp(rows[i].machine, machines[0]) ? 0
                        : !strcmp(rows[i].machine, machines[1]) ? 1 : -1;
                if (m < 0) {
                        diag_error_at(c->diag, csv, rows[i].line, rows[i].col[0],
                                      "machine '%s': expected wormhole_n150 or blackhole_p150",
                                      rows[i].machine);
                        return 2;
                }
                if (predict(&t[m], &rows[i], c->diag))
                        return c->diag->n_errors ? 2 : 1;
                sum += fabs(rows[i].error_pct);
        }
        double mape = sum / n;
        if (c->json) {
                json_t *a = json_array();
                for (int i = 0; i < n; i++)
                        json_array_append_new(a, row_json(&rows[i]));
                return bench_print_json(c, json_pack("{s:o, s:o}", "rows", a, "mape_pct",
                                                     jsonw_fixed(mape, 2)));
        }
        fprintf(c->out, "%-15s %-24s %10s %10s %-10s %8s\n", "machine", "pattern", "documented",
                "predicted", "unit", "error_%");
        for (int i = 0; i < n; i++)
                fprintf(c->out, "%-15s %-24s %10.1f %10.1f %-10s %+8.1f\n", rows[i].machine,
                        rows[i].pattern, rows[i].documented, rows[i].predicted, rows[i].unit,
                        rows[i].error_pct);
        fprintf(c->out, "MAPE %.1f%% over %d rows\n", mape, n);
        return 0;
}

BENCH_DEFINE(bench_validate_tt_dm, "validate-tt-dm", vd_params,
             "tt-metal's data-movement patterns on the n150 and p150 against their "
             "documented rates",
             "Parameters:\n"
             "  csv=FILE   the documented rates (default benches/data/tt_dm_ideal.csv;\n"
             "             columns machine, pattern, documented, unit)\n"
             "  wh=FILE    the wormhole_n150 machine\n"
             "             (default topologies/tt_wormhole_n150.yaml)\n"
             "  bh=FILE    the blackhole_p150 machine\n"
             "             (default topologies/tt_blackhole_p150.yaml)\n"
             "Runs each row's pattern as the tt_dm kernel (kernels/tt_dm.c) in op_log\n"
             "mode, one NoC packet per transfer, twice (n1 and n2 transfers per issuing\n"
             "PE), and "
             "takes the steady-state rate: the extra bytes over the extra kernel time.\n"
             "Rates are bytes per AI clock cycle (B/cycle) or % of the DRAM peak\n"
             "(channels x channel_bw_gbps). Nothing is fitted here (scripts/fit_tt_dm.py\n"
             "fits the machine files' [FREE] data-movement keys to the same table).\n"
             "Prints a table, or (--json) {\"rows\": [{\"machine\", \"pattern\",\n"
             "\"documented\", \"predicted\", \"unit\", \"error_pct\"}, ...],\n"
             "\"mape_pct\": x}.\n");
