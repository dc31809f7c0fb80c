/* serve/serve.c: a `cubesim serve` run: the model and the machine, the
 * KV cache's capacity, the requests, the run (or the capacity search)
 * and its outputs. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/diag.h"
#include "base/util.h"
#include "serve/serve_int.h"

void serve_opts_init(struct serve_opts *o)
{
        *o = (struct serve_opts){
                .tp = 1, .dp = 1, .precision = NULL, .requests = 1000,
                .prompt = { SERVE_FIXED, 512, 0 }, .output = { SERVE_FIXED, 128, 0 },
                .max_batch = 0, .max_batch_tokens = 8192, .chunk_tokens = 512,
                .kv_block = 16, .policy = SERVE_VLLM, .router = SERVE_ROUND_ROBIN, .seed = 1,
                .figures = true,
        };
}

/* The integer options' ranges. */
static const struct {
        const char *name;            /* option */
        int64_t min, max;            /* allowed values */
} int_ranges[] = {
        { "--tp", 1, 4096 },         { "--dp", 1, 1024 },
        { "--requests", 1, 10000000 }, { "--max-batch", 1, 65536 },
        { "--max-batch-tokens", 1, 1 << 20 }, { "--chunk-tokens", 1, 1 << 20 },
        { "--kv-block", 1, 65536 },  { "--check-steps", 1, 100000 },
};

void serve_int_range(const char *opt, int64_t *min, int64_t *max)
{
        for (size_t i = 0; i < ARRAY_LEN(int_ranges); i++)
                if (strcmp(int_ranges[i].name, opt) == 0) {
                        *min = int_ranges[i].min;
                        *max = int_ranges[i].max;
                }
}

const char *const serve_policy_names[] = { "vllm", "sarathi", "static", NULL };
const char *const serve_router_names[] = { "round-robin", "least-loaded", NULL };

int serve_choice(const char *opt, const char *v, const char *const *words, struct diag *d)
{
        int n = 0;
        for (; words[n]; n++)
                if (strcmp(v, words[n]) == 0)
                        return n;
        if (n == 2)
                diag_error(d, "%s %s: expected %s or %s", opt, v, words[0], words[1]);
        else
                diag_error(d, "%s %s: expected %s, %s or %s", opt, v, words[0], words[1],
                           words[2]);
        return 0;
}

static const char *model_at(size_t i)
{
        return llm_models[i].name;
}

/* An integer option outside its range. */
static void check_int(const char *opt, int64_t v, bool zero_ok, struct diag *d)
{
        int64_t lo = 1, hi = 1;
        serve_int_range(opt, &lo, &hi);
        if ((v < lo || v > hi) && !(zero_ok && v == 0))
                diag_error(d, "%s %lld: expected an integer in [%lld, %lld]", opt, (long long)v,
                           (long long)lo, (long long)hi);
}

/* A number option outside (0, 1e9] (0: not given, when zero_ok). */
static void check_pos(const char *opt, double v, bool zero_ok, struct diag *d)
{
        if (!(v > 0 && v <= 1e9) && !(zero_ok && v == 0))
                diag_error(d, "%s %g: expected a number in (0, 1e9]", opt, v);
}

void serve_opts_check(const struct serve_opts *o, bool quiet_arrivals, struct diag *d)
{
        if (!o->model) {
                diag_error(d, "which model? --model M (llama3-8b, llama3-70b, llama31-405b, "
                           "qwen2-72b, mistral-7b)");
        } else if (!llm_model_find(o->model)) {
                const char *hint = diag_suggest_at(o->model, model_at);
                if (hint)
                        diag_error(d, "--model %s: no model preset '%s'; did you mean '%s'?",
                                   o->model, o->model, hint);
                else
                        diag_error(d, "--model %s: no model preset '%s' (llama3-8b, llama3-70b, "
                                   "llama31-405b, qwen2-72b, mistral-7b)", o->model, o->model);
        }
        if (o->qps > 0 && o->trace_path)
                diag_error(d, "--qps and --trace exclude each other: arrivals come from one");
        else if (o->qps <= 0 && !o->trace_path && !o->find_capacity && !quiet_arrivals)
                diag_error(d, "which arrivals? --qps X or --trace FILE");
        if (o->find_capacity && o->trace_path)
                diag_error(d, "--find-capacity searches a --qps; it cannot take --trace");
        if (o->find_capacity && (o->slo_ttft_ms <= 0 || o->slo_tpot_ms <= 0))
                diag_error(d, "--find-capacity needs both --slo-ttft-ms and --slo-tpot-ms");
        if (o->exact_steps && o->check_steps)
                diag_error(d, "--check-steps compares the grid with --exact-steps: give one");
        if (o->requests == 0 && o->duration_s <= 0 && !o->trace_path)
                diag_error(d, "--requests 0: give --requests N or --duration-s T");
        check_int("--tp", o->tp, false, d);
        check_int("--dp", o->dp, false, d);
        check_int("--requests", (int64_t)(o->requests > INT64_MAX ? INT64_MAX : o->requests),
                  true, d);
        check_int("--max-batch", o->max_batch, true, d);
        check_int("--max-batch-tokens", o->max_batch_tokens, false, d);
        check_int("--chunk-tokens", o->chunk_tokens, false, d);
        check_int("--kv-block", o->kv_block, false, d);
        check_int("--check-steps", (int64_t)(o->check_steps > 100000 ? 100001 : o->check_steps),
                  true, d);
        check_pos("--qps", o->qps, true, d);
        check_pos("--duration-s", o->duration_s, true, d);
        check_pos("--slo-ttft-ms", o->slo_ttft_ms, true, d);
        check_pos("--slo-tpot-ms", o->slo_tpot_ms, true, d);
}

/* Bytes per element of a --precision, or 0 if it is not supported. */
static int precision_bytes(const char *p)
{
        if (strcmp(p, "bf16") == 0 || strcmp(p, "fp16") == 0)
                return 2;
        if (strcmp(p, "fp32") == 0)
                return 4;
        return 0;
}

/* The KV blocks of one replica: its HBM less the weights; -1 with a
 * message if none are left. */
static int64_t kv_capacity(const struct serve_opts *o, const struct serve_steps *st,
                           int bpe, struct diag *d)
{
        double hbm = (double)cubesim_machine_hbm_bytes(st->machine);
        double w = serve_weight_bytes(st->model, bpe);
        double block = serve_kv_token_bytes(st->model, bpe) * (double)o->kv_block;
        double blocks = floor((hbm - w) / block);
        if (blocks < 1) {
                diag_error(d, "--model %s: its weights (%.1f GB at %s) leave no room for a KV "
                           "block in the machine's %.1f GB of HBM (tp %d)", o->model, w / 1e9,
                           o->precision, hbm / 1e9, o->tp);
                return -1;
        }
        return blocks > 1e15 ? (int64_t)1e15 : (int64_t)blocks;
}

/* One run at rate qps (0: o's): its summary in *s, its outcome in *oc
 * (the caller finis it). */
static int run_once(const struct serve_opts *o, struct serve_steps *st, int64_t blocks,
                    double qps, struct serve_outcome *oc, struct serve_summary *s,
                    struct diag *d)
{
        struct serve_req *reqs;
        size_t n;
        *oc = (struct serve_outcome){ 0 };
        if (serve_requests(o, qps, &reqs, &n, d) < 0)
                return CUBESIM_BAD_INPUT;
        if (serve_simulate(o, st, blocks, reqs, n, oc) < 0 || st->rc != CUBESIM_OK) {
                free(reqs);
                oc->reqs = NULL;
                return st->rc != CUBESIM_OK ? st->rc : CUBESIM_FAILED;
        }
        serve_summarise(o, oc, s);
        return CUBESIM_OK;
}

static void outcome_free(struct serve_outcome *oc)
{
        free(oc->reqs);
        oc->reqs = NULL;
        serve_outcome_fini(oc);
}

/* Whether every request of oc arrived before its first iteration ended:
 * a faster rate then only packs the same burst tighter, and cannot miss
 * SLOs this rate meets. */
static bool one_burst(const struct serve_outcome *oc)
{
        if (!oc->n_reqs || !oc->n_iters)
                return false;
        sim_ps first_end = oc->iters[0].end_ps;
        for (size_t i = 1; i < oc->n_iters; i++)
                if (oc->iters[i].end_ps < first_end)
                        first_end = oc->iters[i].end_ps;
        return oc->reqs[oc->n_reqs - 1].arrival_ps <= first_end;
}

/* The highest rate at which both SLOs hold at p99: doubling, then
 * bisection to 1%. *best the run at it (or at the lowest rate tried).
 * CUBESIM_BAD_INPUT if the SLOs still hold once the requests arrive as
 * one burst (too few --requests for a rate to matter). */
static int find_capacity(const struct serve_opts *o, struct serve_steps *st, int64_t blocks,
                         double *cap, struct serve_outcome *best, struct serve_summary *bs,
                         struct diag *d)
{
        double lo = 0, hi = 0, q = o->qps > 0 ? o->qps : 1;
        *best = (struct serve_outcome){ 0 };
        for (int it = 0; it < 80; it++) {
                if (hi > 0 && lo > 0 && hi - lo <= 0.01 * lo)
                        break;
                if (hi > 0 && lo == 0 && q < 1e-6)
                        break;
                struct serve_outcome oc;
                struct serve_summary s;
                int rc = run_once(o, st, blocks, q, &oc, &s, d);
                if (rc != CUBESIM_OK)
                        return rc;
                bool ok = serve_meets_slo(o, &s);
                if (o->progress)
                        fprintf(stderr, "cubesim serve: %.4g req/s: p99 TTFT %.2f ms, p99 TPOT "
                                "%.2f ms: %s\n", q, s.ttft.p99, s.tpot.p99,
                                ok ? "meets the SLOs" : "misses");
                if (ok && hi == 0 && one_burst(&oc)) {
                        bool one = oc.n_reqs == 1;
                        diag_error(d, "--find-capacity: the SLOs hold even when the %zu "
                                   "request%s arrive%s before the first iteration ends (at "
                                   "%.4g req/s), so no rate is too high for %s; raise "
                                   "--requests or give --duration-s", oc.n_reqs, one ? "" : "s",
                                   one ? "s" : "", q, one ? "it" : "them");
                        outcome_free(&oc);
                        outcome_free(best);
                        return CUBESIM_BAD_INPUT;
                }
                if (ok || !best->reqs) {
                        outcome_free(best);
                        *best = oc;
                        *bs = s;
                } else {
                        outcome_free(&oc);
                }
                if (ok)
                        lo = q;
                else
                        hi = q;
                q = hi == 0 ? q * 2 : lo == 0 ? q / 2 : (lo + hi) / 2;
        }
        *cap = lo;
        return CUBESIM_OK;
}

/* The step model, the KV capacity and a first step (which checks the
 * machine and --tp before any request); o->max_batch 0 becomes the
 * machine's default (256; 32 on a Tenstorrent machine). CUBESIM_OK or the
 * failure. */
static int setup(struct serve_opts *o, struct serve_steps *st, int64_t *blocks,
                 struct diag *d)
{
        const struct llm_model *m = llm_model_find(o->model);
        if (!m) {
                diag_error(d, "--model %s: no model preset '%s'", o->model ? o->model : "",
                           o->model ? o->model : "");
                return CUBESIM_BAD_INPUT;
        }
        if (serve_steps_init(st, o, m, d) < 0)
                return CUBESIM_BAD_INPUT;
        if (st->tt) {
                if (serve_steps_tt(st, o, blocks, d) < 0)
                        return CUBESIM_BAD_INPUT;
        } else {
                if (!o->precision)
                        o->precision = st->dtype = "bf16";
                int bpe = precision_bytes(o->precision);
                if (!bpe) {
                        diag_error(d, "--precision %s: expected bf16, fp16 or fp32 (the "
                                   "precision configurations performance, accuracy and "
                                   "ff13_bfp4 are a Tenstorrent machine's)", o->precision);
                        return CUBESIM_BAD_INPUT;
                }
                *blocks = kv_capacity(o, st, bpe, d);
                if (*blocks < 0)
                        return CUBESIM_BAD_INPUT;
                if (!o->max_batch)
                        o->max_batch = 256;
        }
        struct serve_batch one = { .n_dec = 1, .n_head = 1 };
        double ps, j;
        serve_steps_time(st, &one, true, &ps, &j);
        return st->rc;
}

int serve_run(const struct serve_opts *opts, char **json_out, char **text_out, struct diag *d)
{
        *json_out = *text_out = NULL;
        struct serve_opts run = *opts, *o = &run;
        struct serve_steps st = { 0 };
        int64_t blocks = 0;
        int rc = setup(o, &st, &blocks, d);
        struct serve_outcome oc = { 0 };
        struct serve_summary s;
        double cap = -1;
        if (rc == CUBESIM_OK)
                rc = o->find_capacity ? find_capacity(o, &st, blocks, &cap, &oc, &s, d)
                                      : run_once(o, &st, blocks, 0, &oc, &s, d);
        if (rc == CUBESIM_OK) {
                char *extra = NULL;
                if (o->check_steps && !o->exact_steps) {
                        double mx, mean;
                        size_t n;
                        serve_steps_check(&st, &mx, &mean, &n);
                        rc = st.rc;
                        if (asprintf(&extra, "step check: %zu off-grid iterations, grid vs "
                                     "exact simulation: max %.3f%%, mean %.3f%%\n", n, 100 * mx,
                                     100 * mean) < 0)
                                extra = NULL;
                }
                *json_out = serve_summary_json(&s, cap);
                char *text = serve_summary_text(o, &s, &st, cap);
                if (text && extra && asprintf(text_out, "%s%s", text, extra) >= 0)
                        free(text);
                else
                        *text_out = text;
                free(extra);
                if (!*json_out || !*text_out) {
                        diag_error(d, "out of memory for the summary");
                        rc = CUBESIM_FAILED;
                }
        }
        if (rc == CUBESIM_OK && o->out_dir && serve_write_outputs(o, &oc, *json_out, d) < 0)
                rc = CUBESIM_FAILED;
        outcome_free(&oc);
        serve_steps_fini(&st);
        return rc;
}

int serve_run_rates(const struct serve_opts *opts, const double *rates, size_t n, char **jsons,
                    struct diag *d)
{
        for (size_t i = 0; i < n; i++)
                jsons[i] = NULL;
        struct serve_opts run = *opts, *o = &run;
        struct serve_steps st = { 0 };
        int64_t blocks = 0;
        int rc = setup(o, &st, &blocks, d);
        for (size_t i = 0; i < n && rc == CUBESIM_OK; i++) {
                struct serve_outcome oc;
                struct serve_summary s;
                rc = run_once(o, &st, blocks, rates[i], &oc, &s, d);
                if (rc == CUBESIM_OK && !(jsons[i] = serve_summary_json(&s, -1))) {
                        diag_error(d, "out of memory for the summary");
                        rc = CUBESIM_FAILED;
                }
                outcome_free(&oc);
        }
        serve_steps_fini(&st);
        return rc;
}
