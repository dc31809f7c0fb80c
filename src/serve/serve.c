/* serve/serve.c: a `cubesim serve` run: the model and the machine, the
 * KV cache's capacity, the requests, the run (or the capacity search)
 * and its outputs. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "serve/serve_int.h"

void serve_opts_init(struct serve_opts *o)
{
        *o = (struct serve_opts){
                .tp = 1, .dp = 1, .precision = "bf16", .requests = 1000,
                .prompt = { SERVE_FIXED, 512, 0 }, .output = { SERVE_FIXED, 128, 0 },
                .max_batch = 256, .max_batch_tokens = 8192, .chunk_tokens = 512,
                .kv_block = 16, .policy = SERVE_VLLM, .router = SERVE_ROUND_ROBIN, .seed = 1,
                .figures = true,
        };
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

/* The highest rate at which both SLOs hold at p99: doubling, then
 * bisection to 1%. *best the run at it (or at the lowest rate tried). */
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
 * machine and --tp before any request). CUBESIM_OK or the failure. */
static int setup(const struct serve_opts *o, struct serve_steps *st, int64_t *blocks,
                 struct diag *d)
{
        const struct llm_model *m = llm_model_find(o->model);
        int bpe = precision_bytes(o->precision);
        if (!bpe)
                diag_error(d, "--precision %s: expected bf16, fp16 or fp32 (other precisions "
                           "wait for whole-model precision)", o->precision);
        if (!m)
                diag_error(d, "--model %s: no model preset '%s'", o->model ? o->model : "",
                           o->model ? o->model : "");
        if (!m || !bpe)
                return CUBESIM_BAD_INPUT;
        if (serve_steps_init(st, o, m, d) < 0)
                return CUBESIM_BAD_INPUT;
        *blocks = kv_capacity(o, st, bpe, d);
        if (*blocks < 0)
                return CUBESIM_BAD_INPUT;
        struct serve_batch one = { .n_dec = 1, .n_head = 1 };
        double ps, j;
        serve_steps_time(st, &one, true, &ps, &j);
        return st->rc;
}

int serve_run(const struct serve_opts *o, char **json_out, char **text_out, struct diag *d)
{
        *json_out = *text_out = NULL;
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
                if (o->check_steps && !o->exact) {
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

int serve_run_rates(const struct serve_opts *o, const double *rates, size_t n, char **jsons,
                    struct diag *d)
{
        for (size_t i = 0; i < n; i++)
                jsons[i] = NULL;
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
