/* benches/validate_tt_gemm.c: validate-tt-gemm, the model against measured
 * Tenstorrent matmuls.
 *
 * Each row of the calibration table (benches/data/tt_n150_matmul_bf16.csv:
 * shape, dtype, math fidelity, operand placement, grid and the measured
 * on-device time device_ns) is run as tt_matmul in op_log mode on the
 * machine file (topologies/tt_wormhole_n150.yaml); the prediction is the
 * run's kernel_ps. error_pct = (predicted - measured) / measured x 100;
 * mape_pct is the mean of |error_pct| over the rows. Nothing is fitted
 * here. The fidelity of a row is passed to the kernel when the kernel has
 * a `fidelity` parameter; until the GEMM engine models fidelity passes it
 * has none, the rows run at one pass, and the output says so
 * (fidelity_modelled false).
 *
 * DIR (--out, default out/validate-tt-gemm) receives table.md (every row)
 * and figures/pred_vs_meas.{dat,gp,png,svg}: predicted against measured
 * time, log-log, with the y = x line and a +-10% band. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/fsutil.h"
#include "bench.h"
#include "report/summary.h"
#include "sweep/sweep.h"
#include "tl/tl_run.h"

static const char *const vt_params[] = { "csv", "topo", "figures", NULL };

#define MAX_ROWS 1024

/* The columns a row needs, in this order. */
static const char *const needed[] = { "m", "k", "n", "dtype", "fidelity", "in0", "in1", "out",
                                      "grid_x", "grid_y", "device_ns" };
enum { C_M, C_K, C_N, C_DTYPE, C_FID, C_IN0, C_IN1, C_OUT, C_GX, C_GY, C_NS, N_NEEDED };

struct vt_row {
        char field[N_NEEDED][24];    /* the needed columns, as written (integers normalised) */
        int64_t num[N_NEEDED];       /* the integer columns' values (the kernel's INT parameters) */
        unsigned line;               /* where it is in the table, 1-based */
        double measured_ns;          /* device_ns */
        double predicted_ns;         /* the model's kernel time */
        double error_pct;            /* (predicted - measured) / measured x 100 */
};

/* Check cell i of row against the kernel's parameter of that name (an
 * integer in its range, normalised; one of its choices); a problem is
 * located at path:ln:col. */
static void check_cell(const struct tl_kernel *k, struct vt_row *row, int i, const char *path,
                       unsigned ln, unsigned col, struct diag *d)
{
        const struct tl_param *p = tl_kernel_param(k, needed[i], strlen(needed[i]));
        const char *v = row->field[i];
        if (!p)
                return;              /* a column the kernel does not take (fidelity, for now) */
        if (p->kind == TL_PARAM_INT) {
                int64_t x = 0;
                if (!params_parse_i64(v, &x) || x < (int64_t)p->min || x > (int64_t)p->max)
                        diag_error_at(d, path, ln, col, "%s: expected an integer in [%.0f, %.0f] "
                                      "(got '%s')", needed[i], p->min, p->max, v);
                row->num[i] = x;
                snprintf(row->field[i], sizeof row->field[i], "%" PRId64, x);
                return;
        }
        if (p->kind != TL_PARAM_CHOICE)
                return;
        char list[256] = "";
        for (const char *const *c = p->choices; *c; c++) {
                if (strcmp(*c, v) == 0)
                        return;
                size_t used = strlen(list);
                snprintf(list + used, sizeof list - used, "%s%s", used ? ", " : "", *c);
        }
        diag_error_at(d, path, ln, col, "%s: expected one of %s (got '%s')", needed[i], list, v);
}

/* What read_rows' rows need: the kernel, the rows. */
struct vt_read {
        const struct tl_kernel *k;   /* the kernel whose parameters check the cells */
        struct vt_row *r;            /* the rows */
};

/* One row: its cells copied and checked against the kernel. */
static void read_row(void *ctx, const char *path, int n, unsigned ln, char **cell,
                     const unsigned *at, struct diag *d)
{
        struct vt_read *rd = ctx;
        struct vt_row *row = &rd->r[n];
        row->line = ln;
        for (int i = 0; i < N_NEEDED && d->n_errors == 0; i++) {
                snprintf(row->field[i], sizeof row->field[i], "%s", cell[i]);
                if (i != C_NS)
                        check_cell(rd->k, row, i, path, ln, at[i], d);
        }
        if (d->n_errors == 0 &&
            (!params_parse_double(row->field[C_NS], &row->measured_ns) ||
             !isfinite(row->measured_ns) || !(row->measured_ns > 0)))
                diag_error_at(d, path, ln, at[C_NS],
                              "device_ns: expected a finite time in ns > 0 (got '%s')",
                              row->field[C_NS]);
}

/* Read the table: rows into r (at most MAX_ROWS), each cell checked
 * against kernel k; problems located FILE:LINE:COL to d. Returns the
 * number of rows (at least one), or -1. */
static int read_rows(const char *path, const struct tl_kernel *k, struct vt_row *r,
                     struct diag *d)
{
        struct vt_read rd = { k, r };
        return bench_csv_read(path, needed, N_NEEDED, MAX_ROWS, sizeof r->field[0], read_row, &rd,
                              d);
}

static bool has_param(const struct tl_kernel *k, const char *name)
{
        return tl_kernel_param(k, name, strlen(name)) != NULL;
}

/* Run row on the machine t: its kernel time in ns. 0, 2 (bad row) or 1.
 * The row's problems are located at path:LINE of the row. */
static int predict(const struct topo *t, const struct tl_kernel *k, struct vt_row *row,
                   const char *path, struct diag *d)
{
        static const char *const keys[] = { "m", "k", "n", "dtype", "fidelity", "in0", "in1",
                                            "out", "grid_x", "grid_y" };
        char kv[C_NS][48];           /* the job's sets, borrowed until tl_job_fini */
        const char *sets[C_NS];
        size_t n = 0;
        for (int i = 0; i < C_NS; i++) {
                if (i == C_FID && !has_param(k, "fidelity"))
                        continue;
                snprintf(kv[i], sizeof kv[i], "%s=%s", keys[i], row->field[i]);
                sets[n++] = kv[i];
        }
        struct tl_job job = { .kernel = k, .topo = t, .sets = sets, .n_sets = n,
                              .opts = tl_run_opts_default() };
        struct diag rd;
        diag_init(&rd);
        int rc = tl_job_run(&job, &rd);
        if (rc == -EINVAL) {
                /* The kernel refused the row: its messages name --set
                 * values, but the values came from the table. */
                for (const struct diag_msg *m = rd.head; m; m = m->next) {
                        const char *text = m->text;
                        if (strncmp(text, "error: ", 7) == 0)
                                text += 7;
                        if (m->level == DIAG_ERROR)
                                diag_error_at(d, path, row->line, 1, "the row is refused: %s",
                                              text);
                }
        } else {
                diag_move(d, &rd);
        }
        diag_fini(&rd);
        if (rc == 0) {
                json_t *s = rep_run_summary(&job.sim, &job.stats, k->name);
                row->predicted_ns = (double)json_integer_value(json_object_get(s, "kernel_ps")) /
                                    1000.0;
                row->error_pct = (row->predicted_ns - row->measured_ns) / row->measured_ns * 100;
                json_decref(s);
        }
        tl_job_fini(&job);
        return rc == 0 ? 0 : rc == -EINVAL ? 2 : 1;
}

/* table.md and the figure's data and script; gnuplot draws it if asked. */
static void write_outputs(const char *dir, const struct vt_row *r, int n, double mape,
                          bool modelled, bool draw, struct diag *d)
{
        struct bench_outputs bo = { 0 };
        FILE *f = bench_outputs_open(&bo, dir, d);
        if (!f)
                return;
        fprintf(f, "# validate-tt-gemm\n\nMAPE %.1f%% over %d rows%s.\n\n"
                   "![predicted vs measured](figures/pred_vs_meas.png)\n\n"
                   "| m | k | n | dtype | fidelity | in0 | in1 | out | grid | measured ns | "
                   "predicted ns | error %% |\n|---|---|---|---|---|---|---|---|---|---|---|---|\n",
                mape, n, modelled ? "" : " (math fidelity not modelled: one pass)");
        for (int i = 0; i < n; i++)
                fprintf(f, "| %s | %s | %s | %s | %s | %s | %s | %s | %sx%s | %.0f | %.0f | %+.1f |\n",
                        r[i].field[C_M], r[i].field[C_K], r[i].field[C_N], r[i].field[C_DTYPE],
                        r[i].field[C_FID], r[i].field[C_IN0], r[i].field[C_IN1],
                        r[i].field[C_OUT], r[i].field[C_GX], r[i].field[C_GY], r[i].measured_ns,
                        r[i].predicted_ns, r[i].error_pct);
        bench_write_stream(dir, "table.md", f, &bo.buf, &bo.len);

        f = open_memstream(&bo.buf, &bo.len);
        fprintf(f, "# measured_ns predicted_ns (one line per calibration row)\n");
        for (int i = 0; i < n; i++)
                fprintf(f, "%.1f %.1f\n", r[i].measured_ns, r[i].predicted_ns);
        bench_write_stream(bo.figs, "pred_vs_meas.dat", f, &bo.buf, &bo.len);

        f = open_memstream(&bo.buf, &bo.len);
        fprintf(f, "# Predicted against measured kernel time. Redraw: gnuplot pred_vs_meas.gp\n"
                   "reset\nset encoding utf8\n"
                   "set terminal pngcairo size 800,800 font \"DejaVu Sans,12\" noenhanced\n"
                   "set output \"pred_vs_meas.png\"\n"
                   "set logscale xy\nset size square\nset grid\nset key top left\n"
                   "set xlabel \"measured (ns)\"\nset ylabel \"predicted (ns)\"\n"
                   "set title \"validate-tt-gemm: MAPE %.1f%%\"\n"
                   "stats \"pred_vs_meas.dat\" using 1 nooutput\n"
                   "lo = STATS_min / 1.5; hi = STATS_max * 1.5\n"
                   "set xrange [lo:hi]\nset yrange [lo:hi]\n"
                   "plot \"+\" using 1:(0.9 * $1):(1.1 * $1) with filledcurves "
                   "fillcolor rgb \"#dddddd\" title \"+-10%%\", \\\n"
                   "     x with lines lc rgb \"black\" title \"y = x\", \\\n"
                   "     \"pred_vs_meas.dat\" using 1:2 with points pt 7 title \"rows\"\n"
                   "set terminal svg size 800,800 font \"DejaVu Sans,12\" noenhanced "
                   "background \"white\"\nset output \"pred_vs_meas.svg\"\nreplot\n"
                   "unset output\n",
                mape);
        bench_write_stream(bo.figs, "pred_vs_meas.gp", f, &bo.buf, &bo.len);
        char scripts[1][300] = { "pred_vs_meas.gp" };
        if (draw)
                bench_draw(bo.figs, scripts, 1);
}

/* A row for --json: the kernel's integer columns as numbers, the others
 * as strings, the times. */
static json_t *row_json(const struct tl_kernel *k, const struct vt_row *r)
{
        json_t *o = json_object();
        for (int i = 0; i < C_GX; i++) {
                const struct tl_param *p = tl_kernel_param(k, needed[i], strlen(needed[i]));
                json_object_set_new(o, needed[i], p && p->kind == TL_PARAM_INT
                                                          ? json_integer(r->num[i])
                                                          : jsonw_string(r->field[i]));
        }
        json_object_set_new(o, "measured_ns", jsonw_fixed(r->measured_ns, 1));
        json_object_set_new(o, "predicted_ns", jsonw_fixed(r->predicted_ns, 1));
        json_object_set_new(o, "error_pct", jsonw_fixed(r->error_pct, 2));
        return o;
}

static int run(const struct bench_ctx *c)
{
        const char *csv, *topo;
        uint64_t figures;
        params_str(c->params, "csv", "benches/data/tt_n150_matmul_bf16.csv", &csv);
        params_str(c->params, "topo", "topologies/tt_wormhole_n150.yaml", &topo);
        params_u64(c->params, "figures", 1, 0, 1, &figures, c->diag);
        params_check_unused(c->params, vt_params, "validate-tt-gemm", c->diag);
        if (c->diag->n_errors)
                return 2;
        const struct tl_kernel *k = tl_kernel_find("tt_matmul");
        struct vt_row *rows = calloc(MAX_ROWS, sizeof *rows);
        struct topo t;
        if (!rows) {
                diag_error(c->diag, "out of memory");
                return 1;
        }
        int n = read_rows(csv, k, rows, c->diag), status = 2;
        if (n < 0 || topo_load_file(topo, &t, c->diag) < 0)
                goto free_rows;
        status = 0;
        double sum = 0;
        for (int i = 0; i < n && status == 0; i++) {
                status = predict(&t, k, &rows[i], csv, c->diag);
                sum += fabs(rows[i].error_pct);
        }
        if (status)
                goto free_rows;
        double mape = sum / n;
        bool modelled = has_param(k, "fidelity");
        const char *dir = c->out_dir ? c->out_dir : "out/validate-tt-gemm";
        write_outputs(dir, rows, n, mape, modelled, figures != 0, c->diag);
        if (c->diag->n_errors) {
                status = 2;
                goto free_rows;
        }
        if (c->json) {
                json_t *a = json_array();
                for (int i = 0; i < n; i++)
                        json_array_append_new(a, row_json(k, &rows[i]));
                status = bench_print_json(c, json_pack("{s:o, s:o, s:b, s:o}", "rows", a,
                                                       "mape_pct", jsonw_fixed(mape, 2),
                                                       "fidelity_modelled", (int)modelled,
                                                       "out", jsonw_string(dir)));
        } else {
                fprintf(c->out, "%6s %6s %6s %-7s %-6s %-4s %-4s %-4s %12s %12s %8s\n", "m", "k",
                        "n", "dtype", "fid", "in0", "in1", "out", "measured_ns", "predicted_ns",
                        "error_%");
                for (int i = 0; i < n; i++) {
                        const struct vt_row *r = &rows[i];
                        fprintf(c->out, "%6s %6s %6s %-7s %-6s %-4s %-4s %-4s %12.0f %12.0f %+8.1f\n",
                                r->field[C_M], r->field[C_K], r->field[C_N], r->field[C_DTYPE],
                                r->field[C_FID], r->field[C_IN0], r->field[C_IN1], r->field[C_OUT],
                                r->measured_ns, r->predicted_ns, r->error_pct);
                }
                fprintf(c->out, "MAPE %.1f%% over %d rows; table and figure in %s/%s\n", mape, n,
                        dir, modelled ? "" : "\n(math fidelity not modelled yet: every row at one "
                                             "pass)");
        }
free_rows:
        free(rows);
        return status;
}

BENCH_DEFINE(bench_validate_tt_gemm, "validate-tt-gemm", vt_params,
             "tt_matmul on the Wormhole n150 against the measured calibration rows, MAPE",
             "Parameters:\n"
             "  csv=FILE    the measured rows (default benches/data/tt_n150_matmul_bf16.csv;\n"
             "              columns m, k, n, dtype, fidelity, in0, in1, out, grid_x, grid_y,\n"
             "              device_ns)\n"
             "  topo=FILE   the machine (default topologies/tt_wormhole_n150.yaml)\n"
             "  figures=0   skip gnuplot (the table and the figure's script are written)\n"
             "Every cell is checked first (an integer in the parameter's range, one of\n"
             "its choices, device_ns a finite time > 0; problems as FILE:LINE:COL, exit\n"
             "2; a table needs at least one row). Runs every row as tt_matmul in op_log\n"
             "mode; nothing is fitted. Writes\n"
             "DIR/table.md and DIR/figures/pred_vs_meas.* (log-log, y = x, +-10% band;\n"
             "DIR: --out, default out/validate-tt-gemm). Prints (--json)\n"
             "{\"rows\": [{\"m\", \"k\", \"n\", \"dtype\", \"fidelity\", \"in0\", \"in1\", \"out\",\n"
             "\"measured_ns\", \"predicted_ns\", \"error_pct\"}, ...], \"mape_pct\": x,\n"
             "\"fidelity_modelled\": b, \"out\": DIR}.\n");
