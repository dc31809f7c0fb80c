/* serve/serve.h: `cubesim serve`: an LLM inference server under load
 * (docs/serving.md, docs/adr/0027-serving.md).
 *
 * Requests arrive (Poisson at a rate, or from a trace file), are routed
 * to one of dp replicas of the machine, and are served by a scheduler
 * (vllm: continuous batching with prefill first; sarathi: chunked prefill
 * under a token budget mixed with decodes; static: fixed batches) over a
 * paged KV cache whose capacity is the machine's HBM less the model's
 * weights. Each iteration's time is the simulated time of the model step
 * of that batch: llm_layer x layers + llm_lm_head, run through the public
 * run API (cubesim_run) once per distinct shape and reused
 * (serve_steps.c); on a Tenstorrent machine tt-transformers' programs as
 * llm-step runs them (src/llm/tt_llm_model.h). The loop itself is a discrete-event loop over
 * arrivals and iteration ends (serve_sched.c); the metrics and the files
 * of --out are serve_out.c's. */
#ifndef CUBESIM_SERVE_SERVE_H
#define CUBESIM_SERVE_SERVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <cubesim/cubesim.h>

#include "base/diag.h"

enum serve_policy { SERVE_VLLM, SERVE_SARATHI, SERVE_STATIC };
enum serve_router { SERVE_ROUND_ROBIN, SERVE_LEAST_LOADED };
enum serve_dist_kind { SERVE_FIXED, SERVE_UNIFORM, SERVE_LOGNORMAL };

/* A length distribution: N, uniform:A:B or lognormal:MEAN:SIGMA. */
struct serve_dist {
        enum serve_dist_kind kind;   /* which */
        double a, b;                 /* fixed: a; uniform: [a, b]; lognormal: mean a, sigma b */
};

/* Parse text as a distribution for option opt; false with a message to
 * d ("OPT TEXT: expected ..."). */
bool serve_dist_parse(const char *opt, const char *text, struct serve_dist *out,
                      struct diag *d);

/* What a serve run is asked for: the options of `cubesim serve`. */
struct serve_opts {
        const char *model;           /* --model: a preset of kernels/llm.h */
        const char *topo_path;       /* --topo FILE; NULL: the built-in default */
        const char *const *sets;     /* --set key=value (topology parameters) */
        size_t n_sets;               /* entries of sets */
        int tp;                      /* --tp: tensor-parallel ranks of a replica */
        int dp;                      /* --dp: replicas */
        const char *precision;       /* --precision: bf16, fp16, fp32; on a Tenstorrent
                                      * machine performance, accuracy, ff13_bfp4, bf16
                                      * (NULL: bf16; performance there) */
        double qps;                  /* --qps (0: --trace) */
        const char *trace_path;      /* --trace FILE (NULL: --qps) */
        uint64_t requests;           /* --requests (0: no limit but duration_s) */
        double duration_s;           /* --duration-s (0: none) */
        struct serve_dist prompt, output; /* --prompt-len, --output-len */
        int64_t max_batch;           /* --max-batch: sequences per iteration (0: 256; 32
                                      * on a Tenstorrent machine, its most) */
        int64_t max_batch_tokens;    /* --max-batch-tokens: tokens per iteration */
        int64_t chunk_tokens;        /* --chunk-tokens: sarathi's token budget */
        int64_t kv_block;            /* --kv-block: tokens per KV block */
        enum serve_policy policy;    /* --policy */
        enum serve_router router;    /* --router */
        double slo_ttft_ms;          /* --slo-ttft-ms (0: none) */
        double slo_tpot_ms;          /* --slo-tpot-ms (0: none) */
        uint64_t seed;               /* --seed */
        const char *out_dir;         /* --out DIR (NULL: none) */
        bool figures;                /* draw the figures with gnuplot (--out) */
        bool exact_steps;            /* --exact-steps: simulate every shape, no grid */
        uint64_t check_steps;        /* --check-steps N: compare N grid shapes with exact */
        bool find_capacity;          /* --find-capacity */
        bool progress;               /* a line on stderr per capacity probe */
};

/* The defaults of `cubesim serve` (model NULL: required). */
void serve_opts_init(struct serve_opts *o);
/* Check what o's options need of one another and their ranges, in the
 * command's words ("--tp 0: expected an integer in [1, 4096]"); problems
 * to d. quiet_arrivals: say nothing of a missing --qps (one was refused). */
void serve_opts_check(const struct serve_opts *o, bool quiet_arrivals, struct diag *d);
/* The range of an integer option (--tp, --dp, --requests, --max-batch,
 * --max-batch-tokens, --chunk-tokens, --kv-block, --check-steps). */
void serve_int_range(const char *opt, int64_t *min, int64_t *max);
/* The words of --policy and --router, in enum order, NULL-ended. */
extern const char *const serve_policy_names[], *const serve_router_names[];
/* The index of v in words, or 0 with "OPT V: expected A, B or C" to d. */
int serve_choice(const char *opt, const char *v, const char *const *words, struct diag *d);

/* The topology of a machine of the run API (defined in src/api/cubesim.c,
 * not exported), for the step model of a Tenstorrent machine. */
struct topo;
const struct topo *cubesim_machine_topo(const cubesim_machine *m);

/* Run the server as o says. *json_out: the summary as --json prints it
 * (malloc'd; with --find-capacity the run at the capacity plus
 * "capacity_qps"); *text_out: the same as text. CUBESIM_OK,
 * CUBESIM_FAILED (a step's simulation failed, or an output could not be
 * written), CUBESIM_BAD_INPUT (options, machine, trace file); messages to
 * d. */
int serve_run(const struct serve_opts *o, char **json_out, char **text_out, struct diag *d);

/* Run o at each of rates[n] requests/s (for --qps), the shapes
 * simulated once for all: jsons[i] the summary at rates[i] as --json
 * prints it (malloc'd; NULL after a failure). Status as serve_run. */
int serve_run_rates(const struct serve_opts *o, const double *rates, size_t n, char **jsons,
                    struct diag *d);

#endif
