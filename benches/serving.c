/* benches/serving: `cubesim serve` over a few request rates (a small QPS
 * sweep): llama3-8b on the built-in machine, vllm policy, prompt 512 and
 * output 128 tokens by default. Each rate is one serving run (src/serve),
 * the model-step shapes simulated once for all the rates. Writes
 * DIR/serving.json (each rate's summary, as `cubesim serve --json`),
 * DIR/report.md with a serving section, and DIR/figures/serving.{dat,gp}
 * (with gnuplot .png and .svg): throughput against the offered rate, and
 * p99 TTFT and TPOT against throughput. */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/fsutil.h"
#include "base/util.h"
#include "bench.h"
#include "serve/serve.h"
#include "sweep/sweep.h"

static const char *const serving_params[] = { "model", "qps", "requests", "prompt_len",
                                              "output_len", "policy", "max_batch", "figures",
                                              NULL };
#define MAX_RATES 16                 /* rates of one sweep */

/* The rates of a comma list into out; their count, or -1 with a message. */
static int parse_rates(const char *list, double *out, struct diag *d)
{
        int n = 0;
        for (const char *p = list; *p;) {
                char *end;
                double v = strtod(p, &end);
                if (end == p || !(v > 0 && v <= 1e6) || (*end && *end != ',') || n == MAX_RATES) {
                        diag_error(d, "--set qps=%s: expected up to %d rates in (0, 1e6], comma "
                                   "separated", list, MAX_RATES);
                        return -1;
                }
                out[n++] = v;
                p = *end ? end + 1 : end;
        }
        if (n == 0)
                diag_error(d, "--set qps=: expected at least one rate");
        return n ? n : -1;
}

static double num(json_t *j, const char *k1, const char *k2)
{
        json_t *v = json_object_get(j, k1);
        if (k2)
                v = json_object_get(v, k2);
        return json_is_number(v) ? json_number_value(v) : 0;
}

static int write_figure(const char *dir, json_t *const *runs, const double *rates, int n,
                        bool draw)
{
        char path[4400], *buf;
        size_t len;
        FILE *f = open_memstream(&buf, &len);
        if (!f)
                return -ENOMEM;
        fputs("# offered_rps throughput_rps throughput_tok_s ttft_p99_ms tpot_p99_ms "
              "e2el_p99_ms\n", f);
        for (int i = 0; i < n; i++)
                fprintf(f, "%g %g %g %g %g %g\n", rates[i], num(runs[i], "throughput_rps", NULL),
                        num(runs[i], "throughput_tok_s", NULL), num(runs[i], "ttft_ms", "p99"),
                        num(runs[i], "tpot_ms", "p99"), num(runs[i], "e2el_ms", "p99"));
        snprintf(path, sizeof path, "%s/serving.dat", dir);
        int rc = bench_save_stream(path, f, &buf, &len);
        if (rc < 0 || !(f = open_memstream(&buf, &len)))
                return rc < 0 ? rc : -ENOMEM;
        static const char plots[] =
                "set multiplot layout 1,2\n"
                "set xlabel 'offered load (requests/s)'\nset ylabel 'throughput (requests/s)'\n"
                "plot 'serving.dat' using 1:2 with linespoints lw 2 title 'served', "
                "'' using 1:1 with lines dt 2 title 'offered'\n"
                "set xlabel 'throughput (requests/s)'\nset ylabel 'p99 latency (ms)'\n"
                "set logscale y\n"
                "plot 'serving.dat' using 2:4 with linespoints lw 2 title 'p99 TTFT', "
                "'' using 2:5 with linespoints lw 2 title 'p99 TPOT'\n"
                "unset logscale y\nunset multiplot\n";
        fprintf(f, "# cubesim bench run serving: cd DIR/figures && gnuplot serving.gp\n"
                "reset\nset grid\nset key top left\n"
                "set terminal pngcairo size 1200,450\nset output 'serving.png'\n%s"
                "set terminal svg size 1200,450\nset output 'serving.svg'\n%s", plots, plots);
        snprintf(path, sizeof path, "%s/serving.gp", dir);
        rc = bench_save_stream(path, f, &buf, &len);
        if (rc == 0 && draw) {
                char scripts[1][300] = { "serving.gp" };
                sweep_gnuplot(dir, scripts, 1);
        }
        return rc;
}

static int write_report(const char *out_dir, const struct serve_opts *so, json_t *const *runs,
                        const double *rates, int n, bool drawn, FILE *out, bool quiet)
{
        char path[4200];
        snprintf(path, sizeof path, "%s/report.md", out_dir);
        char *buf;
        size_t len;
        FILE *f = open_memstream(&buf, &len);
        if (!f)
                return -ENOMEM;
        fprintf(f, "# serving\n\n## serving: latency under load\n\n"
                "`cubesim serve --model %s --policy %s --max-batch %lld` at each rate (Poisson "
                "arrivals, %llu requests, docs/serving.md): every iteration takes the simulated "
                "time of its model step (llm_layer x layers + llm_lm_head). Times in ms; "
                "throughput over the window from the first arrival to the last completion.\n\n"
                "| offered req/s | served req/s | output tok/s | TTFT p50 | TTFT p99 | TPOT p50 "
                "| TPOT p99 | E2EL p99 | in system | KV peak | preemptions | J/token |\n"
                "|---|---|---|---|---|---|---|---|---|---|---|---|\n", so->model,
                so->policy == SERVE_VLLM ? "vllm" : so->policy == SERVE_SARATHI ? "sarathi"
                                                                                : "static",
                (long long)so->max_batch, (unsigned long long)so->requests);
        for (int i = 0; i < n; i++) {
                json_t *j = runs[i];
                fprintf(f, "| %g | %.3f | %.1f | %.2f | %.2f | %.3f | %.3f | %.1f | %.2f | %.1f%% "
                        "| %.0f | %.4g |\n", rates[i], num(j, "throughput_rps", NULL),
                        num(j, "throughput_tok_s", NULL), num(j, "ttft_ms", "p50"),
                        num(j, "ttft_ms", "p99"), num(j, "tpot_ms", "p50"),
                        num(j, "tpot_ms", "p99"), num(j, "e2el_ms", "p99"),
                        num(j, "mean_in_system", NULL), 100 * num(j, "kv_peak_frac", NULL),
                        num(j, "preemptions", NULL), num(j, "j_per_token", NULL));
                if (!quiet)
                        fprintf(out, "serving %6g req/s offered: %7.3f served, %8.1f tok/s, TTFT "
                                "p99 %9.2f ms, TPOT p99 %7.3f ms\n", rates[i],
                                num(j, "throughput_rps", NULL), num(j, "throughput_tok_s", NULL),
                                num(j, "ttft_ms", "p99"), num(j, "tpot_ms", "p99"));
        }
        fprintf(f, "\n%s`figures/serving.gp` draws throughput against the offered rate and p99 "
                "latency against throughput%s.\n",
                drawn ? "![serving](figures/serving.png)\n\n" : "",
                drawn ? "" : " (not drawn: figures=0)");
        return bench_save_stream(path, f, &buf, &len);
}

static int run(const struct bench_ctx *c)
{
        struct serve_opts so;
        serve_opts_init(&so);
        const char *rates_text, *prompt, *output, *policy;
        uint64_t requests, figures, max_batch;
        params_str(c->params, "model", "llama3-8b", &so.model);
        params_str(c->params, "qps", "0.5,1,2,4,8", &rates_text);
        params_u64(c->params, "requests", 100, 1, 100000, &requests, c->diag);
        params_str(c->params, "prompt_len", "512", &prompt);
        params_str(c->params, "output_len", "128", &output);
        params_str(c->params, "policy", "vllm", &policy);
        params_u64(c->params, "max_batch", 256, 1, 65536, &max_batch, c->diag);
        params_u64(c->params, "figures", 1, 0, 1, &figures, c->diag);
        params_check_unused(c->params, serving_params, "serving", c->diag);
        double rates[MAX_RATES];
        int n = parse_rates(rates_text, rates, c->diag);
        serve_dist_parse("--set prompt_len=", prompt, &so.prompt, c->diag);
        serve_dist_parse("--set output_len=", output, &so.output, c->diag);
        if (strcmp(policy, "vllm") == 0 || strcmp(policy, "sarathi") == 0 ||
            strcmp(policy, "static") == 0)
                so.policy = policy[0] == 'v' ? SERVE_VLLM
                            : policy[1] == 'a' ? SERVE_SARATHI : SERVE_STATIC;
        else
                diag_error(c->diag, "--set policy=%s: expected vllm, sarathi or static", policy);
        if (c->diag->n_errors)
                return 2;
        so.requests = requests;
        so.max_batch = (int64_t)max_batch;
        so.qps = rates[0];
        const char *out_dir = c->out_dir ? c->out_dir : "out/serving";
        char figs[4096];
        snprintf(figs, sizeof figs, "%s/figures", out_dir);
        if (fs_mkdir_p(figs) < 0) {
                diag_error(c->diag, "serving: cannot create %s", figs);
                return 2;
        }
        double t0 = util_now_s();
        char *jsons[MAX_RATES];
        int rc = serve_run_rates(&so, rates, (size_t)n, jsons, c->diag);
        json_t *runs[MAX_RATES], *all = json_array();
        for (int i = 0; i < n; i++) {
                runs[i] = jsons[i] ? json_loads(jsons[i], 0, NULL) : json_object();
                free(jsons[i]);
                json_t *r = json_copy(runs[i]);
                json_object_set_new(r, "offered_rps", jsonw_real(rates[i]));
                json_array_append_new(all, r);
        }
        if (rc == 0) {
                char path[4200];
                snprintf(path, sizeof path, "%s/serving.json", out_dir);
                bool ok = jsonw_save(path, all, 2) == 0 &&
                          write_figure(figs, runs, rates, n, figures) == 0 &&
                          write_report(out_dir, &so, runs, rates, n, figures, c->out,
                                       c->json) == 0;
                if (!ok) {
                        diag_error(c->diag, "serving: cannot write the results in %s", out_dir);
                        rc = 1;
                }
        }
        if (rc == 0 && c->json)
                rc = bench_print_json(c, json_pack("{s:s, s:o, s:O, s:o}", "bench", "serving",
                                                   "out", jsonw_string(out_dir), "runs", all,
                                                   "wall_s",
                                                   jsonw_fixed(util_now_s() - t0, 3)));
        else if (rc == 0)
                fprintf(c->out, "serving: %d rates in %.1f s; %s/report.md\n", n,
                        util_now_s() - t0, out_dir);
        for (int i = 0; i < n; i++)
                json_decref(runs[i]);
        json_decref(all);
        return rc;
}

BENCH_DEFINE(bench_serving, "serving", serving_params,
             "cubesim serve over a few request rates: throughput, TTFT and TPOT "
             "percentiles, KV use, joules per token",
             "Runs `cubesim serve` (docs/serving.md) at each rate of qps, the model-step\n"
             "shapes simulated once for all the rates: Poisson arrivals, the default\n"
             "machine, bf16. Writes DIR/serving.json (each rate's --json summary and its\n"
             "offered_rps), DIR/report.md with a serving section, and\n"
             "DIR/figures/serving.* (throughput against the offered rate, p99 TTFT and\n"
             "TPOT against throughput). DIR is --out, default out/serving.\n"
             "\n"
             "Parameters (--set):\n"
             "  model=llama3-8b     a model preset\n"
             "  qps=0.5,1,2,4,8     offered rates, requests/s\n"
             "  requests=100        requests per rate\n"
             "  prompt_len=512      prompt tokens (N, uniform:A:B, lognormal:MEAN:SIGMA)\n"
             "  output_len=128      output tokens (the same forms)\n"
             "  policy=vllm         vllm, sarathi or static\n"
             "  max_batch=256       sequences per iteration at most\n"
             "  figures=0           skip gnuplot\n");
