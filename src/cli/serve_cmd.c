/* cli/serve_cmd.c: `cubesim serve`: an LLM inference server under load on
 * the simulated machine (src/serve, docs/serving.md); a parser over
 * cubesim_serve. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "base/diag.h"
#include "base/params.h"
#include "base/util.h"
#include "cli/cli.h"

#include <cubesim/cubesim.h>

static const char about[] =
        "\n"
        "Serve requests for an LLM on the machine: Poisson arrivals at --qps (or a\n"
        "trace), a scheduler (vllm: continuous batching, prefill first; sarathi:\n"
        "chunked prefill mixed with decodes under a token budget; static: fixed\n"
        "batches) over a paged KV cache sized from the HBM the weights leave, with\n"
        "--dp replicas behind a router. Each iteration takes the simulated time of\n"
        "the model step of its batch (llm_layer x layers + llm_lm_head; on a\n"
        "Tenstorrent machine file, topologies/tt_*.yaml, tt-transformers' programs\n"
        "as llm-step runs them; each shape simulated once). Prints TTFT, TPOT, ITL\n"
        "and E2EL (mean, p50, p90, p99), throughput, goodput, KV use, queue, batch,\n"
        "preemptions and energy.\n"
        "DIST is N, uniform:A:B or lognormal:MEAN:SIGMA (tokens; drawn from --seed).\n"
        "The trace format and the step model are in docs/serving.md.\n";

static const char tail[] =
        "\n"
        "Exit status: 0 done; 1 a model step failed to simulate, or an output could\n"
        "not be written; 2 bad input (options, machine, trace file).\n";

/* What the options of cubesim serve set. */
struct serve_args {
        struct cubesim_serve_opts so; /* the run's options */
        struct cli_sets sets;        /* --set key=value */
        int no_figures;              /* --no-figures */
        bool requests_given;         /* --requests was given */
};

#define SO(f) (offsetof(struct serve_args, so) + offsetof(struct cubesim_serve_opts, f))
#define FIELD(c, o, type) ((type *)((char *)(c) + (o)->field))

/* v as an integer in the range of option o; false with a message. */
static bool ranged(const struct cli_opt *o, const char *v, int64_t *x, struct diag *d)
{
        int64_t lo = 1, hi = 1;
        cubesim_serve_int_range(o->name, &lo, &hi);
        if (params_parse_i64(v, x) && *x >= lo && *x <= hi)
                return true;
        diag_error(d, "%s %s: expected an integer in [%lld, %lld]", o->name, v, (long long)lo,
                   (long long)hi);
        return false;
}

/* --tp, --dp: an int in range. */
static void set_int(void *c, const struct cli_opt *o, char *v, struct diag *d)
{
        int64_t x;
        if (ranged(o, v, &x, d))
                *FIELD(c, o, int) = (int)x;
}

/* --max-batch, --max-batch-tokens, --chunk-tokens, --kv-block. */
static void set_i64(void *c, const struct cli_opt *o, char *v, struct diag *d)
{
        int64_t x;
        if (ranged(o, v, &x, d))
                *FIELD(c, o, int64_t) = x;
}

/* --requests (given: --duration-s alone no longer ends the run), and
 * --check-steps. */
static void set_count(void *c, const struct cli_opt *o, char *v, struct diag *d)
{
        int64_t x;
        if (!ranged(o, v, &x, d))
                return;
        *FIELD(c, o, uint64_t) = (uint64_t)x;
        if (o->field == SO(requests))
                ((struct serve_args *)c)->requests_given = true;
}

/* --qps, --duration-s, --slo-ttft-ms, --slo-tpot-ms: a number in (0, 1e9]. */
static void set_pos(void *c, const struct cli_opt *o, char *v, struct diag *d)
{
        double x = 0;
        if (!params_parse_double(v, &x) || x <= 0 || x > 1e9)
                diag_error(d, "%s %s: expected a number in (0, 1e9]", o->name, v);
        else
                *FIELD(c, o, double) = x;
}

/* The options of cubesim serve, in the order of its help. */
static const struct cli_opt serve_options[] = {
        { "--model", "M", NULL, 0,
          "the model: llama3-8b, llama3-70b, llama31-405b, qwen2-72b,\nmistral-7b or another "
          "preset of llm-step (llama3.1-8b,\nllama3.3-70b ...); required",
          cli_opt_text, SO(model) },
        { "--topo", "FILE", NULL, 0, "the machine of one replica (default: the built-in one)",
          cli_opt_text, SO(topo_path) },
        { "--set", "k=v", NULL, CLI_OPT_REPEAT, "change a topology parameter of the machine",
          cli_opt_set, offsetof(struct serve_args, sets) },
        { "--tp", "N", NULL, 0, "tensor-parallel ranks of a replica (default 1)", set_int,
          SO(tp) },
        { "--dp", "R", NULL, 0, "replicas of the machine behind the router (default 1)",
          set_int, SO(dp) },
        { "--precision", "P", NULL, 0,
          "weights, activations and KV cache: bf16 (default), fp16,\nfp32; on a Tenstorrent "
          "machine performance (default),\naccuracy, ff13_bfp4, bf16", cli_opt_text,
          SO(precision) },
        { "--qps", "X", NULL, 0, "Poisson arrivals at X requests per second", set_pos,
          SO(qps) },
        { "--trace", "FILE", NULL, CLI_OPT_ALT,
          "arrivals from a CSV or JSONL file: arrival_s,\nprompt_tokens, output_tokens a request",
          cli_opt_text, SO(trace_path) },
        { "--requests", "N", NULL, 0,
          "requests in all (default 1000; with --duration-s alone:\nas many as arrive)",
          set_count, SO(requests) },
        { "--duration-s", "T", NULL, 0, "only requests arriving before T seconds", set_pos,
          SO(duration_s) },
        { "--prompt-len", "DIST", NULL, 0, "prompt tokens (default 512)", cli_opt_text,
          SO(prompt_len) },
        { "--output-len", "DIST", NULL, 0, "output tokens (default 128)", cli_opt_text,
          SO(output_len) },
        { "--max-batch", "N", NULL, 0,
          "sequences in an iteration at most (default 256; 32, the\nmost, on a Tenstorrent "
          "machine)",
          set_i64, SO(max_batch) },
        { "--max-batch-tokens", "N", NULL, 0,
          "prompt tokens in a prefill iteration at most (vllm,\nstatic; default 8192)",
          set_i64, SO(max_batch_tokens) },
        { "--chunk-tokens", "N", NULL, 0,
          "sarathi's token budget per iteration (default 512)", set_i64,
          SO(chunk_tokens) },
        { "--kv-block", "N", NULL, 0, "tokens per KV-cache block (default 16)", set_i64,
          SO(kv_block) },
        { "--policy", "P", "vllm|sarathi|static", 0, "the scheduler (default vllm)",
          cli_opt_text, SO(policy) },
        { "--router", "R", "round-robin|least-loaded", 0,
          "how --dp replicas share requests (default round-robin)", cli_opt_text,
          SO(router) },
        { "--slo-ttft-ms", "X", NULL, 0, "time-to-first-token objective, for goodput",
          set_pos, SO(slo_ttft_ms) },
        { "--slo-tpot-ms", "Y", NULL, 0, "time-per-output-token objective, for goodput",
          set_pos, SO(slo_tpot_ms) },
        { "--seed", "N", NULL, 0, "arrivals and lengths (default 1)", cli_opt_u64, SO(seed) },
        { "--find-capacity", NULL, NULL, 0,
          "search the highest --qps at which both SLOs hold at p99\n(from --qps, default 1)",
          cli_opt_on, SO(find_capacity) },
        { "--out", "DIR", NULL, 0,
          "write requests.csv, iterations.csv, summary.json,\ntrace.json (Perfetto) and "
          "figures/",
          cli_opt_text, SO(out_dir) },
        { "--no-figures", NULL, NULL, 0, "with --out: write the figures' scripts, run no gnuplot",
          cli_opt_on, offsetof(struct serve_args, no_figures) },
        { "--exact-steps", NULL, NULL, 0,
          "simulate every iteration's exact shape (no grid; slow)", cli_opt_on,
          SO(exact_steps) },
        { "--check-steps", "N", NULL, 0,
          "after the run, simulate N of its off-grid iterations\nexactly and print the "
          "grid's error",
          set_count, SO(check_steps) },
        { "--progress", NULL, NULL, 0, "a line on stderr per --find-capacity probe",
          cli_opt_on, SO(progress) },
        { "--json", NULL, NULL, 0, "print the summary as JSON", cli_opt_on,
          SO(json) },
};

int cli_serve(int argc, char **argv)
{
        struct serve_args a = { .no_figures = 0 };
        cubesim_serve_opts_init(&a.so);
        struct diag d;
        diag_init(&d);
        const char *pos = NULL;
        int rc = cli_opts_parse("serve", serve_options, ARRAY_LEN(serve_options), argc, argv, &a,
                                &pos, &d);
        if (rc == CLI_OPTS_HELP) {
                cli_opts_help(stdout, "usage: cubesim serve", 80, 14, serve_options,
                              ARRAY_LEN(serve_options), about, tail);
                rc = CLI_OK;
                goto out;
        }
        if (rc != CLI_OK)
                goto out;
        if (pos)
                diag_error(&d, "unexpected argument '%s' (serve takes options only)", pos);
        struct cubesim_serve_opts *so = &a.so;
        so->sets = a.sets.v;
        so->n_sets = a.sets.n;
        so->figures = !a.no_figures;
        if (so->duration_s > 0 && !a.requests_given)
                so->requests = 0;
        if (d.n_errors) {
                /* The other problems too, all at once. */
                cubesim_serve_check(so, 1);
                cli_take_messages(&d, cubesim_messages());
                rc = CLI_BAD_INPUT;
        } else {
                so->print = cli_print_stdout;
                rc = cubesim_serve(so, NULL);
                cli_print_messages("serve", cubesim_messages());
        }
        cubesim_release();
out:
        cli_print_diag("serve", &d);
        diag_fini(&d);
        return rc;
}
