/* benches/validate_tt_llm.c: validate-tt-llm, whole-model inference as
 * tt-transformers deploys it, against measured Tenstorrent figures.
 *
 * Each row of the table (benches/data/tt_llm.csv by default: model,
 * machine, precision, batch, prompt_len, gen_tokens, measured_tps_u,
 * measured_ttft_ms) is checked for DRAM first: the weights, the KV cache
 * of batch x (prompt + generated) positions and a prefill chunk's
 * activations against the machine's DRAM (tt_mem_need); a model that does
 * not fit is an error naming the sizes (exit 2), before any timing.
 * Then it is predicted as a sequence of device programs
 * (src/llm/tt_llm_model.c's tt_predict, which llm-step runs too on a
 * Tenstorrent machine file; kernel tt_llm_op and tt_matmul), each run as
 * its own launch on the machine file in op_log mode and paying the
 * machine's program cost, here set per launch from the bench's
 * decode_program_ns and prefill_program_ns (docs/adr/0030):
 *   - decode: the layer's programs at batch B; the decoder layers are
 *     identical, so one is simulated and scaled by the layer count (the
 *     last layer's MLP simulated again where its precision differs), plus
 *     the final norm and the LM head. Only SDPA depends on the context:
 *     it is simulated at `samples` contexts evenly spread over prompt ..
 *     prompt + gen_tokens - 1 and interpolated linearly in between.
 *     t/s/u = 1 / the mean iteration time over the gen_tokens iterations.
 *   - TTFT: one user's prefill of prompt_len tokens, layer x layers, plus
 *     the final norm and LM head on the last tile of rows. Prompts longer
 *     than TT_PREFILL_SIM tokens are simulated at that length and scaled:
 *     linearly, SDPA quadratically (said in the output).
 * On a machine of several chips (n300, t3k, galaxy) the `dp` replicas
 * split its chips and each replica splits the model over tp = chips / dp
 * chips as tt-transformers does on a 1D mesh (src/llm/tt_llm_model.c,
 * tt_shard_model): a chip's programs run on one chip of the machine
 * (system.sips=1; every chip runs the same), the all-gathers and
 * reduce-scatters over the links on tp chips (kernels/ccl.c); each chip's
 * share is checked against its DRAM; batch is the users in all, batch /
 * dp a replica's. tokens/s = t/s/u x batch, per chip / chips.
 * Energy (docs/energy.md): each program's energy_j (docs/adr/0024), a
 * chip's program counted once per chip of its group, a collective once
 * per group running it (it runs on the group's chips: the tensor-parallel
 * group's, or on the Galaxy's 2D split each mesh row's or column's), x dp
 * replicas, summed and averaged over the decode
 * iterations as the time is; a decode iteration's energy over its time is
 * its average power, beside the machine's system.tdp_w (the n150's board
 * power). Static power accrues over every program's kernel time,
 * its program cost included.
 * error = (predicted - measured) / measured x 100; the MAPEs are the means
 * of |error| over the rows. Machines: n150, n300 and p150 name their
 * files; any other name NAME is topologies/tt_NAME.yaml. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "base/ckd.h"
#include "bench.h"
#include "report/summary.h"
#include "sweep/sweep.h"
#include "tl/tl_run.h"
#include "llm/tt_llm_model.h"

#define MAX_ROWS 256

static const char *const vl_params[] = { "csv", "figures", "samples", "decode_program_ns",
                                         "prefill_program_ns", "prefill_trace", "dp", NULL };

static const char *const needed[] = { "model", "machine", "precision", "batch", "prompt_len",
                                      "gen_tokens", "measured_tps_u", "measured_ttft_ms" };
enum { C_MODEL, C_MACHINE, C_PREC, C_BATCH, C_PROMPT, C_GEN, C_TPS, C_TTFT, N_NEEDED };

struct vl_row {
        char field[N_NEEDED][32];    /* the columns as written */
        unsigned line;               /* where it is in the table, 1-based */
        unsigned col[N_NEEDED];      /* each needed column's 1-based position on the line */
        const struct llm_model *m;   /* the model's preset */
        struct tt_precision prec;    /* its precision configuration */
        int64_t batch, prompt, gen;  /* users, prompt tokens, generated tokens */
        double meas_tps, meas_ttft;  /* measured t/s/u and TTFT (ms) */
        struct tt_pred p;            /* predicted (tt_predict) */
        double err_tps, err_ttft;    /* (predicted - measured) / measured x 100 */
};

/* The bench's run: its options and the prediction's state. */
struct vl_ctx {
        const char *csv;             /* the table */
        int64_t dp;                  /* data-parallel replicas on every machine */
        struct tt_runner run;        /* the prediction (tt_llm_model.h) */
};

static const char *model_name_at(size_t i)
{
        return llm_models[i].name;
}

static bool parse_i64_in(const char *v, int64_t lo, int64_t hi, int64_t *out)
{
        return params_parse_i64(v, out) && *out >= lo && *out <= hi;
}

static bool parse_pos(const char *v, double *out)
{
        return params_parse_double(v, out) && isfinite(*out) && *out > 0;
}

/* Check a row's cells; problems at csv:line:col. */
static void check_row(struct vl_row *r, const char *path, struct diag *d)
{
        const char *f;
        f = r->field[C_MODEL];
        r->m = llm_model_find(f);
        if (!r->m) {
                const char *s = diag_suggest_at(f, model_name_at);
                diag_error_at(d, path, r->line, r->col[C_MODEL], "model: unknown preset '%s'%s%s%s",
                              f, s ? " (did you mean '" : "", s ? s : "", s ? "'?)" : "");
                return;
        }
        if (!tt_precision_get(r->field[C_PREC], r->m, &r->prec)) {
                diag_error_at(d, path, r->line, r->col[C_PREC], "precision: expected one of "
                              "performance, accuracy, ff13_bfp4, bf16 (got '%s')", r->field[C_PREC]);
                return;
        }
        static const struct { int c; int64_t lo, hi; } ints[] = {
                { C_BATCH, 1, 32 }, { C_PROMPT, 1, 131072 }, { C_GEN, 1, 131072 } };
        int64_t *dst[] = { &r->batch, &r->prompt, &r->gen };
        for (int i = 0; i < 3; i++) {
                if (parse_i64_in(r->field[ints[i].c], ints[i].lo, ints[i].hi, dst[i]))
                        continue;
                diag_error_at(d, path, r->line, r->col[ints[i].c], "%s: expected an integer in "
                              "[%lld, %lld] (got '%s')", needed[ints[i].c], (long long)ints[i].lo,
                              (long long)ints[i].hi, r->field[ints[i].c]);
                return;
        }
        double *meas[] = { &r->meas_tps, &r->meas_ttft };
        for (int i = 0; i < 2; i++)
                if (!parse_pos(r->field[C_TPS + i], meas[i])) {
                        diag_error_at(d, path, r->line, r->col[C_TPS + i], "%s: expected a finite "
                                      "number > 0 (got '%s')", needed[C_TPS + i],
                                      r->field[C_TPS + i]);
                        return;
                }
}

/* Row n of the rows at ctx: its cells copied and checked. */
static void read_row(void *ctx, const char *path, int n, unsigned ln, char **cell,
                     const unsigned *at, struct diag *d)
{
        struct vl_row *row = (struct vl_row *)ctx + n;
        memset(row, 0, sizeof *row);
        row->line = ln;
        for (int i = 0; i < N_NEEDED; i++) {
                snprintf(row->field[i], sizeof row->field[i], "%s", cell[i]);
                row->col[i] = at[i];
        }
        check_row(row, path, d);
}

/* Read and check the table; the number of rows (at least one) or -1. */
static int read_rows(const char *path, struct vl_row *r, struct diag *d)
{
        return bench_csv_read(path, needed, N_NEEDED, MAX_ROWS, sizeof r->field[0], read_row, r, d);
}

/* The machine file of a machine name. */
static void machine_file(const char *name, char *buf, size_t len)
{
        if (strcmp(name, "n150") == 0)
                snprintf(buf, len, "topologies/tt_wormhole_n150.yaml");
        else if (strcmp(name, "n300") == 0)
                snprintf(buf, len, "topologies/tt_wormhole_n300.yaml");
        else if (strcmp(name, "p150") == 0)
                snprintf(buf, len, "topologies/tt_blackhole_p150.yaml");
        else
                snprintf(buf, len, "topologies/tt_%s.yaml", name);
}

/* Load row r's machine into t; 0, or 2 with the problem located at the row. */
static int load_machine(const struct vl_ctx *c, const struct vl_row *r, struct topo *t)
{
        char path[128];
        struct stat st;
        machine_file(r->field[C_MACHINE], path, sizeof path);
        if (stat(path, &st) != 0) {
                diag_error_at(c->run.d, c->csv, r->line, r->col[C_MACHINE], "machine '%s': no machine "
                              "file %s (n150, n300, t3k, galaxy and p150 have one)",
                              r->field[C_MACHINE], path);
                return 2;
        }
        if (topo_load_file(path, t, c->run.d) < 0)
                return 2;
        return 0;
}

static void figure(const char *dir, const struct vl_row *r, int n, double mt, double mf,
                   bool draw, struct diag *d)
{
        struct bench_outputs bo = { 0 };
        FILE *f = bench_outputs_open(&bo, dir, d);
        if (!f)
                return;
        fprintf(f, "# measured_tps_u predicted_tps_u measured_ttft_ms predicted_ttft_ms label\n");
        for (int i = 0; i < n; i++)
                fprintf(f, "%.3f %.3f %.3f %.3f %s/%s\n", r[i].meas_tps, r[i].p.tps_u,
                        r[i].meas_ttft, r[i].p.ttft_ms, r[i].m->name, r[i].field[C_MACHINE]);
        bench_write_stream(bo.figs, "pred_vs_meas.dat", f, &bo.buf, &bo.len);
        f = open_memstream(&bo.buf, &bo.len);
        fprintf(f, "# Predicted against measured t/s/u and TTFT. Redraw: gnuplot pred_vs_meas.gp\n"
                   "reset\nset encoding utf8\n"
                   "set terminal pngcairo size 1400,700 font \"DejaVu Sans,12\" noenhanced\n"
                   "set output \"pred_vs_meas.png\"\n"
                   "set multiplot layout 1,2\nset logscale xy\nset size square\nset grid\n"
                   "set key top left\n"
                   "do for [p=0:1] {\n"
                   "  c = 1 + 2 * p\n"
                   "  stats \"pred_vs_meas.dat\" using c nooutput\n"
                   "  lo = STATS_min / 1.5; hi = STATS_max * 1.5\n"
                   "  set xrange [lo:hi]; set yrange [lo:hi]\n"
                   "  set xlabel (p == 0 ? \"measured t/s/u\" : \"measured TTFT (ms)\")\n"
                   "  set ylabel (p == 0 ? \"predicted t/s/u\" : \"predicted TTFT (ms)\")\n"
                   "  set title (p == 0 ? \"decode: MAPE %.1f%%\" : \"TTFT: MAPE %.1f%%\")\n"
                   "  plot \"+\" using 1:(0.9 * $1):(1.1 * $1) with filledcurves "
                   "fillcolor rgb \"#dddddd\" title \"+-10%%\", \\\n"
                   "       x with lines lc rgb \"black\" title \"y = x\", \\\n"
                   "       \"pred_vs_meas.dat\" using c:(column(c + 1)) with points pt 7 "
                   "title \"rows\", \\\n"
                   "       \"pred_vs_meas.dat\" using c:(column(c + 1)):5 with labels offset 1,1 "
                   "left notitle\n"
                   "}\nunset multiplot\nunset output\n", mt, mf);
        bench_write_stream(bo.figs, "pred_vs_meas.gp", f, &bo.buf, &bo.len);
        char scripts[1][300] = { "pred_vs_meas.gp" };
        if (draw)
                bench_draw(bo.figs, scripts, 1);
}

static json_t *row_json(const struct vl_row *r)
{
        json_t *o = json_pack("{s:o, s:o, s:o, s:I, s:I, s:o, s:o, s:o, s:o, s:o, s:o, s:I, s:I, "
                              "s:o, s:o, s:o}",
                         "model", jsonw_string(r->m->name),
                         "machine", jsonw_string(r->field[C_MACHINE]),
                         "precision", jsonw_string(r->prec.name),
                         "batch", (json_int_t)r->batch, "prompt_len", (json_int_t)r->prompt,
                         "measured_tps_u", jsonw_fixed(r->meas_tps, 2),
                         "predicted_tps_u", jsonw_fixed(r->p.tps_u, 2),
                         "error_tps_pct", jsonw_fixed(r->err_tps, 2),
                         "measured_ttft_ms", jsonw_fixed(r->meas_ttft, 2),
                         "predicted_ttft_ms", jsonw_fixed(r->p.ttft_ms, 2),
                         "error_ttft_pct", jsonw_fixed(r->err_ttft, 2),
                         "chips", (json_int_t)r->p.chips, "tp", (json_int_t)r->p.tp,
                         "weights_per_chip_gb", jsonw_fixed((double)r->p.mem.weights / 1e9, 3),
                         "tokens_per_s", jsonw_fixed(r->p.tok_s, 2),
                         "tokens_per_s_per_chip", jsonw_fixed(r->p.tok_s_chip, 2));
        return tt_energy_json(o, &r->p);
}

/* Locate the prediction's failure before timing at the row: the machine's
 * split at its machine cell, the model's at its model cell, a model that
 * does not fit at the row. */
static void locate(const struct vl_ctx *c, const struct vl_row *r)
{
        int col = c->run.fail == TT_FAIL_SPLIT ? C_MACHINE : C_MODEL;
        unsigned at = c->run.fail == TT_FAIL_FIT ? 1 : r->col[col];
        diag_error_at(c->run.d, c->csv, r->line, at, "%s", c->run.why);
}

static int predict_rows(struct vl_ctx *c, struct vl_row *rows, int n)
{
        for (int i = 0; i < n; i++) {
                struct vl_row *r = &rows[i];
                struct topo t;
                int rc = load_machine(c, r, &t);
                if (rc)
                        return rc;
                struct tt_ask a = { .m = r->m, .prec = r->prec, .batch = r->batch,
                                    .prompt = r->prompt, .gen = r->gen, .dp = c->dp,
                                    .machine = r->field[C_MACHINE] };
                rc = tt_predict(&c->run, &t, &a, &r->p);
                topo_fini(&t);
                if (rc && c->run.fail != TT_FAIL_NONE)
                        locate(c, r);
                if (rc)
                        return rc;
                r->err_tps = (r->p.tps_u - r->meas_tps) / r->meas_tps * 100;
                r->err_ttft = (r->p.ttft_ms - r->meas_ttft) / r->meas_ttft * 100;
        }
        return 0;
}

static int run(const struct bench_ctx *bc)
{
        struct vl_ctx *c = calloc(1, sizeof *c);
        struct vl_row *rows = calloc(MAX_ROWS, sizeof *rows);
        uint64_t figures = 1, dp = 1;
        int status = 2;
        if (!c || !rows) {
                diag_error(bc->diag, "out of memory");
                status = 1;
                goto out;
        }
        params_str(bc->params, "csv", "benches/data/tt_llm.csv", &c->csv);
        params_u64(bc->params, "figures", 1, 0, 1, &figures, bc->diag);
        tt_runner_options(bc->params, bc->diag, &c->run);
        params_u64(bc->params, "dp", 1, 1, 32, &dp, bc->diag);
        params_check_unused(bc->params, vl_params, "validate-tt-llm", bc->diag);
        if (bc->diag->n_errors)
                goto out;
        c->dp = (int64_t)dp;
        int n = read_rows(c->csv, rows, c->run.d);
        if (n < 0)
                goto out;
        status = predict_rows(c, rows, n);
        if (status)
                goto out;
        double st = 0, sf = 0;
        bool scaled = false;
        for (int i = 0; i < n; i++) {
                st += fabs(rows[i].err_tps);
                sf += fabs(rows[i].err_ttft);
                scaled |= rows[i].p.scaled;
        }
        double mt = st / n, mf = sf / n;
        const char *dir = bc->out_dir ? bc->out_dir : "out/validate-tt-llm";
        figure(dir, rows, n, mt, mf, figures != 0, bc->diag);
        if (bc->diag->n_errors) {
                status = 2;
                goto out;
        }
        if (bc->json) {
                json_t *a = json_array();
                for (int i = 0; i < n; i++)
                        json_array_append_new(a, row_json(&rows[i]));
                status = bench_print_json(bc, json_pack("{s:o, s:o, s:o}", "rows", a,
                                                        "mape_tps_pct", jsonw_fixed(mt, 2),
                                                        "mape_ttft_pct", jsonw_fixed(mf, 2)));
                goto out;
        }
        fprintf(bc->out, "%-13s %-7s %-11s %5s %6s %9s %9s %7s %9s %9s %7s %3s %9s %9s %8s %9s "
                "%6s\n", "model", "machine", "precision", "batch", "prompt", "meas_tps", "pred_tps",
                "err_%", "meas_ttft", "pred_ttft", "err_%", "tp", "tok/s", "tok/s/chip", "step_W",
                "J/token", "TDP_W");
        for (int i = 0; i < n; i++) {
                const struct vl_row *r = &rows[i];
                char tdp[16];
                tt_tdp_text(tdp, sizeof tdp, &r->p);
                fprintf(bc->out, "%-13s %-7s %-11s %5lld %6lld %9.2f %9.2f %+7.1f %9.1f %9.1f "
                        "%+7.1f %3lld %9.1f %9.1f %8.1f %9.4f %6s\n", r->m->name,
                        r->field[C_MACHINE], r->prec.name, (long long)r->batch,
                        (long long)r->prompt, r->meas_tps, r->p.tps_u, r->err_tps, r->meas_ttft,
                        r->p.ttft_ms, r->err_ttft, (long long)r->p.tp, r->p.tok_s,
                        r->p.tok_s_chip, r->p.step_w, r->p.j_per_token, tdp);
        }
        fprintf(bc->out, "MAPE t/s/u %.1f%%, TTFT %.1f%% over %d rows (one layer simulated and "
                "scaled by the layer count; SDPA at %d sampled contexts, interpolated%s); "
                "figure in %s/figures\n", mt, mf, n, c->run.samples,
                scaled ? "; prefills past 8192 tokens simulated at 8192 and scaled" : "", dir);
out:
        free(rows);
        free(c);
        return status;
}

BENCH_DEFINE(bench_validate_tt_llm, "validate-tt-llm", vl_params,
             "whole-model decode t/s/u and TTFT as tt-transformers runs them, against "
             "measured Tenstorrent rows, MAPE",
             "Parameters:\n"
             "  csv=FILE    the measured rows (default benches/data/tt_llm.csv; columns\n"
             "              model, machine, precision, batch, prompt_len, gen_tokens,\n"
             "              measured_tps_u, measured_ttft_ms)\n"
             "  samples=N   SDPA contexts simulated per row, interpolated between (5)\n"
             "  decode_program_ns=NS, prefill_program_ns=NS\n"
             "              each device program's fixed cost in a decode iteration and in\n"
             "              an untraced prefill (default: the values\n"
             "              scripts/fit_tt_llm.py fits)\n"
             "  prefill_trace=auto|0|1\n"
             "              whether a prefill is replayed from a trace, its programs\n"
             "              then at the decode's cost (auto: as the deployment does;\n"
             "              the Galaxy demo's 70B up to 8192 tokens, docs/adr/0053)\n"
             "  figures=0   skip gnuplot (the figure's data and script are written)\n"
             "  dp=N        data-parallel replicas on each row's machine (1); each splits\n"
             "              the model over chips / N chips (tensor parallel); batch is the\n"
             "              users in all, batch / N a replica's\n"
             "Machines: n150 (topologies/tt_wormhole_n150.yaml), n300\n"
             "(tt_wormhole_n300.yaml), p150 (tt_blackhole_p150.yaml), any other NAME\n"
             "topologies/tt_NAME.yaml (t3k, galaxy); a missing file is an error (exit\n"
             "2). On several chips the layer's matmuls are split as tt-transformers\n"
             "splits them, with an all-gather before each norm and a reduce-scatter\n"
             "after WO and FF2 (kernels/ccl.c over the links). Each row is checked for\n"
             "DRAM first, per chip (weights + KV cache + activations; exit 2 naming the\n"
             "sizes when it does not fit). Decode: the layer's device programs\n"
             "(tt_llm_op) at batch B, one layer simulated and scaled, SDPA at sampled\n"
             "contexts; t/s/u = 1 / the mean iteration over gen_tokens. TTFT: one\n"
             "user's prefill (tt_matmul for its matmuls). tokens/s = t/s/u x batch.\n"
             "Writes DIR/figures/pred_vs_meas.* (DIR: --out, default\n"
             "out/validate-tt-llm). Prints (--json) {\"rows\": [{\"model\", \"machine\",\n"
             "\"precision\", \"batch\", \"prompt_len\", \"measured_tps_u\", \"predicted_tps_u\",\n"
             "\"error_tps_pct\", \"measured_ttft_ms\", \"predicted_ttft_ms\",\n"
             "\"error_ttft_pct\", \"chips\", \"tp\", \"weights_per_chip_gb\",\n"
             "\"tokens_per_s\", \"tokens_per_s_per_chip\", \"decode_step_j\",\n"
             "\"decode_power_w\", \"j_per_token\", \"tdp_w\"}, ...], \"mape_tps_pct\": x,\n"
             "\"mape_ttft_pct\": x}. Energy (docs/energy.md): decode_step_j is a decode\n"
             "iteration's energy on every chip (each program's energy_j, a chip's\n"
             "programs x the chips running them; the mean over gen_tokens, like its\n"
             "time), decode_power_w = decode_step_j / the iteration's time,\n"
             "j_per_token = decode_step_j / batch; tdp_w the machine's system.tdp_w\n"
             "(null: none). The text table prints them as step_W, J/token, TDP_W.\n");
