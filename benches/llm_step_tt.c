/* benches/llm_step_tt.c: bench llm-step on a Tenstorrent machine file
 * (--topo topologies/tt_*.yaml, a machine of Tensix cores): one whole
 * model as tt-transformers deploys it, predicted by the same code as
 * validate-tt-llm (tt_predict, src/llm/tt_llm_model.c, docs/adr/0030):
 * the DRAM check, then the decode iteration at its growing context and
 * one user's prefill as sequences of device programs (tt_llm_op,
 * tt_matmul, the collectives), with the machine's --set keys applied.
 *
 * It reports t/s/u (1 / the mean decode iteration over the gen_tokens
 * generated tokens, each at its own context), TTFT (one user's prefill;
 * for batch > 1 the mean per-user prefill, no queueing, as PERF.md's
 * batch-32 table), tokens/s in all (t/s/u x batch) and per chip (over the
 * tp x dp chips used), and a decode iteration's energy on every chip used
 * (each program's energy_j, summed as its time is; docs/energy.md), its
 * average power beside the machine's system.tdp_w, and J/token; and
 * where the decode iteration's time goes: its programs by label
 * (src/llm/tt_llm_model.c), each label's count, device time and
 * per-program costs (--json: the prefill's too). The default machine
 * keeps llm-step's sweep of the fused llm_layer (benches/llm_step.c). */
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "topo/topo.h"
#include "llm/tt_llm_model.h"

const char *const llm_step_tt_params[] = { "model", "precision", "batch", "prompt_len",
                                           "gen_tokens", "tp", "dp", "samples",
                                           "decode_program_ns", "prefill_program_ns",
                                           "prefill_trace", NULL };

bool llm_step_tt_key(const char *key)
{
        for (const char *const *k = llm_step_tt_params; *k; k++)
                if (strcmp(*k, key) == 0)
                        return true;
        return false;
}

/* What was asked: the parameters, checked. 0 or 2. */
static int ask(const struct bench_ctx *c, const struct topo *t, struct tt_ask *a,
               struct tt_runner *r)
{
        const char *model, *prec;
        uint64_t batch, prompt, gen, tp, dp;
        params_str(c->params, "model", "llama3.1-8b", &model);
        params_str(c->params, "precision", "performance", &prec);
        params_u64(c->params, "batch", 1, 1, 32, &batch, c->diag);
        params_u64(c->params, "prompt_len", 128, 1, 131072, &prompt, c->diag);
        params_u64(c->params, "gen_tokens", 128, 1, 131072, &gen, c->diag);
        params_u64(c->params, "tp", 0, 0, 64, &tp, c->diag);
        params_u64(c->params, "dp", 1, 1, 32, &dp, c->diag);
        *r = (struct tt_runner){ 0 };
        tt_runner_options(c->params, c->diag, r);
        params_check_unused(c->params, llm_step_tt_params, "llm-step on a Tenstorrent machine",
                            c->diag);
        *a = (struct tt_ask){ .m = llm_model_find(model), .batch = (int64_t)batch,
                              .prompt = (int64_t)prompt, .gen = (int64_t)gen, .tp = (int64_t)tp,
                              .dp = (int64_t)dp, .machine = t->name };
        if (!a->m)
                diag_error(c->diag, "--set model=%s: no model preset '%s'", model, model);
        else if (!tt_precision_get(prec, a->m, &a->prec))
                diag_error(c->diag, "--set precision=%s: expected one of performance, accuracy, "
                           "ff13_bfp4, bf16", prec);
        return c->diag->n_errors ? 2 : 0;
}

/* Whether label x runs longer than y. */
static bool part_after(const struct tt_part *x, const struct tt_part *y)
{
        return x->ns < y->ns;
}

/* in's labels by time, the longest first (the first run first among
 * equals), into out. */
static void parts_sorted(const struct tt_parts *in, struct tt_parts *out)
{
        *out = *in;
        for (int i = 1; i < out->n; i++)
                for (int j = i; j > 0 && part_after(&out->p[j - 1], &out->p[j]); j--) {
                        struct tt_part t = out->p[j];
                        out->p[j] = out->p[j - 1];
                        out->p[j - 1] = t;
                }
}

/* The decode iteration's table: a label a line, the longest first. */
static void print_parts(FILE *f, const struct tt_parts *in, double iter_ms)
{
        struct tt_parts ps;
        parts_sorted(in, &ps);
        fprintf(f, "decode iteration by program label (programs an iteration; ms = device + "
                "per-program costs):\n");
        fprintf(f, "  %-17s %7s %9s %9s %10s %6s\n", "label", "count", "ms", "device_ms",
                "program_ms", "share");
        for (int i = 0; i < ps.n; i++) {
                const struct tt_part *t = &ps.p[i];
                fprintf(f, "  %-17s %7.0f %9.3f %9.3f %10.3f %5.1f%%\n", t->label, t->count,
                        t->ns / 1e6, (t->ns - t->program_ns) / 1e6, t->program_ns / 1e6,
                        iter_ms > 0 ? 100 * t->ns / 1e6 / iter_ms : 0);
        }
}

/* The same as an array of {label, count, device_ms, program_ms}. */
static json_t *parts_json(const struct tt_parts *in)
{
        struct tt_parts ps;
        parts_sorted(in, &ps);
        json_t *arr = json_array();
        for (int i = 0; arr && i < ps.n; i++) {
                const struct tt_part *t = &ps.p[i];
                json_array_append_new(arr, json_pack("{s:o, s:o, s:o, s:o}", "label",
                                                     jsonw_string(t->label), "count",
                                                     jsonw_fixed(t->count, 2), "device_ms",
                                                     jsonw_fixed((t->ns - t->program_ns) / 1e6, 4),
                                                     "program_ms",
                                                     jsonw_fixed(t->program_ns / 1e6, 4)));
        }
        return arr;
}

static void print(const struct bench_ctx *c, const char *topo, const struct tt_ask *a,
                  const struct tt_pred *p)
{
        fprintf(c->out, "llm-step: %s, %s precision, on %s (%s): %lld chips, tp %lld x dp %lld\n",
                a->m->name, a->prec.name, a->machine, topo, (long long)p->chips,
                (long long)p->tp, (long long)a->dp);
        fprintf(c->out, "batch %lld, prompt %lld, %lld generated: t/s/u %.2f (decode iteration "
                "%.3f ms), TTFT %.1f ms, tokens/s %.1f, per chip %.1f\n", (long long)a->batch,
                (long long)a->prompt, (long long)a->gen, p->tps_u, p->iter_ms, p->ttft_ms,
                p->tok_s, p->tok_s_chip);
        char tdp[16];
        tt_tdp_text(tdp, sizeof tdp, p);
        fprintf(c->out, "decode iteration energy %.4f J on %lld chip%s: average power %.1f W "
                "(system.tdp_w %s), %.4f J/token\n", p->step_j, (long long)p->chips,
                p->chips == 1 ? "" : "s", p->step_w, tdp, p->j_per_token);
        fprintf(c->out, "a chip's DRAM: weights %.2f GB + KV cache %.2f GB + activations %.2f GB "
                "of %.2f GB\n", (double)p->mem.weights / 1e9, (double)p->mem.kv / 1e9,
                (double)p->mem.act / 1e9, (double)p->mem.capacity / 1e9);
        fprintf(c->out, "(tt-transformers' device programs, src/llm/tt_llm_model.c: one layer "
                "simulated and scaled by the layer count, SDPA at sampled contexts%s%s; %s)\n",
                p->scaled ? "; the prefill simulated at 8192 tokens and scaled" : "",
                p->galaxy_demo ? "; the decode as tt-metal's llama3_70b_galaxy demo runs it, "
                "its weight prefetcher and collectives included, docs/adr/0046 and 0049" : "",
                p->prefill_traced ? "the prefill replayed from a trace, each program at the "
                "decode's cost, docs/adr/0053" : "the prefill's ops dispatched from the host, "
                "each program at prefill_program_ns");
        print_parts(c->out, &p->decode, p->iter_ms);
}

static json_t *pred_json(const char *topo, const struct tt_ask *a, const struct tt_pred *p)
{
        json_t *o = json_pack("{s:s, s:o, s:o, s:o, s:o, s:I, s:I, s:I, s:I, s:I, s:I, s:o, s:o, "
                              "s:o, s:o, s:o, s:o, s:o, s:o, s:b, s:b}",
                              "bench", "llm-step", "machine", jsonw_string(a->machine),
                              "topo", jsonw_string(topo), "model", jsonw_string(a->m->name),
                              "precision", jsonw_string(a->prec.name),
                              "batch", (json_int_t)a->batch, "prompt_len", (json_int_t)a->prompt,
                              "gen_tokens", (json_int_t)a->gen, "chips", (json_int_t)p->chips,
                              "tp", (json_int_t)p->tp, "dp", (json_int_t)a->dp,
                              "tps_u", jsonw_fixed(p->tps_u, 3),
                              "decode_iteration_ms", jsonw_fixed(p->iter_ms, 4),
                              "ttft_ms", jsonw_fixed(p->ttft_ms, 3),
                              "tokens_per_s", jsonw_fixed(p->tok_s, 3),
                              "tokens_per_s_per_chip", jsonw_fixed(p->tok_s_chip, 3),
                              "weights_per_chip_gb", jsonw_fixed((double)p->mem.weights / 1e9, 3),
                              "kv_per_chip_gb", jsonw_fixed((double)p->mem.kv / 1e9, 3),
                              "dram_per_chip_gb", jsonw_fixed((double)p->mem.capacity / 1e9, 3),
                              "prefill_scaled", p->scaled, "prefill_traced", p->prefill_traced);
        if (o) {
                json_object_set_new(o, "decode_programs", parts_json(&p->decode));
                json_object_set_new(o, "prefill_programs", parts_json(&p->prefill));
        }
        return tt_energy_json(o, p);
}

int llm_step_tt(const struct bench_ctx *c, const char *topo, const struct topo *t)
{
        struct tt_ask a;
        struct tt_runner *r = calloc(1, sizeof *r);
        if (!r) {
                diag_error(c->diag, "llm-step: out of memory");
                return 1;
        }
        int rc = ask(c, t, &a, r);
        struct tt_pred p;
        if (!rc)
                rc = tt_predict(r, t, &a, &p);
        if (rc && r->fail != TT_FAIL_NONE)
                diag_error(c->diag, "llm-step: %s", r->why);
        free(r);
        if (rc)
                return rc;
        if (c->json)
                return bench_print_json(c, pred_json(topo, &a, &p));
        print(c, topo, &a, &p);
        return 0;
}
