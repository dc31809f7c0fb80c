/* serve/serve_int.h: the parts of `cubesim serve` between its files: the
 * step model (serve_steps.c), the requests and the event loop
 * (serve_sched.c), the metrics and the outputs (serve_out.c). */
#ifndef CUBESIM_SERVE_SERVE_INT_H
#define CUBESIM_SERVE_SERVE_INT_H

#include "../kernels/llm.h"
#include "engine/ev.h"
#include "llm/tt_llm_model.h"
#include "serve/serve.h"

/* ---- the step model (serve_steps.c) ---- */

/* The families of simulated shapes: a decode batch (llm_layer batch x,
 * q_len 1, past y), a prefill chunk (batch 1, q_len x, past y), each
 * whole or its attention alone, and the LM head of x sequences. On a
 * Tenstorrent machine only the two whole ones, each tt-transformers'
 * programs of every layer and the LM head (tt_decode_step,
 * tt_prefill_step). */
enum serve_family {
        SERVE_DEC_ALL,               /* llm_layer batch=x q_len=1 past_len=y */
        SERVE_DEC_ATT,               /* the same, part=attention */
        SERVE_CHUNK_ALL,             /* llm_layer batch=1 q_len=x past_len=y */
        SERVE_CHUNK_ATT,             /* the same, part=attention */
        SERVE_HEAD,                  /* llm_lm_head batch=x */
        SERVE_FAMILIES,
};

/* One simulated shape. */
struct serve_shape {
        int64_t x, y;                /* the family's two extents (-1: empty slot) */
        int family;                  /* enum serve_family */
        double ps;                   /* its kernel time, ps */
        double j;                    /* its energy, joules */
};

/* The cache of simulated shapes of one model on one machine. */
struct serve_steps {
        cubesim_machine *machine;    /* the replica's machine (owned) */
        const struct llm_model *model; /* the model */
        int tp;                      /* tensor-parallel ranks */
        const char *dtype;           /* llm_layer's dtype and weight_dtype */
        bool exact;                  /* simulate every shape asked for, no grid */
        struct tt_runner *tt;        /* a Tenstorrent machine's program model (NULL: llm_layer) */
        struct tt_ask ask;           /* with tt: the model, precision and split it runs */
        struct serve_shape *tab;     /* open-addressing table */
        size_t cap, n;               /* slots (a power of two), used */
        uint64_t sims;               /* simulations run */
        double sim_wall_s;           /* host seconds in them */
        int rc;                      /* first failure (CUBESIM_*), CUBESIM_OK if none */
        struct diag *d;              /* where a failure is reported */
        bool off_grid;               /* the last serve_steps_time interpolated */
        struct serve_batch *samples; /* off-grid iterations kept for --check-steps */
        size_t n_samples, want;      /* kept, wanted */
        uint64_t seen;               /* off-grid iterations seen (reservoir sampling) */
        uint64_t rng;                /* the reservoir's random state */
};

/* What one iteration computes. */
struct serve_chunk {
        int64_t q;                   /* new tokens of one sequence */
        int64_t past;                /* tokens already in its KV cache */
};

struct serve_batch {
        int64_t n_dec;               /* decoding sequences (one token each) */
        int64_t dec_past;            /* their KV tokens, summed */
        struct serve_chunk *chunks;  /* prefill chunks */
        size_t n_chunks;             /* entries of chunks */
        int64_t n_head;              /* sequences that emit a token (LM head rows) */
};

int serve_steps_init(struct serve_steps *s, const struct serve_opts *o,
                     const struct llm_model *m, struct diag *d);
void serve_steps_fini(struct serve_steps *s);
/* On a Tenstorrent machine (s->tt): o's precision configuration, the
 * split over --tp chips and the DRAM check of the weights, the
 * activations of the longest prefill step and one KV block of one user
 * (tt_prepare), the KV blocks into *blocks, o->max_batch checked against
 * tt-transformers' 32 users (0: 32). 0, or -1 with messages in d. */
int serve_steps_tt(struct serve_steps *s, struct serve_opts *o, int64_t *blocks,
                   struct diag *d);
/* The time (ps) and energy (J) of iteration b: layers x one layer + the
 * LM head, from the cache (simulating what it lacks; on the grid unless
 * exact, or s->exact). A failed simulation sets s->rc and gives 0. */
void serve_steps_time(struct serve_steps *s, const struct serve_batch *b, bool exact,
                      double *ps, double *j);
/* Compare the kept off-grid iterations' grid times with exact
 * simulation: the largest and the mean relative error, and how many. */
void serve_steps_check(struct serve_steps *s, double *max_err, double *mean_err, size_t *n);
/* Bytes of the model's weights (every layer, the embedding, the LM head)
 * and of one token's K and V over all layers, at bytes_per_elem. */
double serve_weight_bytes(const struct llm_model *m, int bytes_per_elem);
double serve_kv_token_bytes(const struct llm_model *m, int bytes_per_elem);

/* ---- requests (serve_sched.c) ---- */

struct serve_req {
        uint32_t id;                 /* index in arrival order */
        uint32_t replica;            /* where the router sent it */
        sim_ps arrival_ps;           /* when it arrives */
        int64_t prompt, output;      /* tokens */
        int64_t computed;            /* tokens in its KV cache (prompt, then outputs) */
        int64_t generated;           /* output tokens emitted */
        int64_t blocks;              /* KV blocks held */
        sim_ps first_tok_ps, last_tok_ps; /* its first token, its latest */
        sim_ps finish_ps;            /* its last token (when done) */
        sim_ps max_itl_ps;           /* its longest gap between tokens */
        bool done;                   /* every output token emitted */
        bool started;                /* in an iteration yet */
        uint32_t preemptions;        /* times it was preempted */
        bool dropped;                /* could never fit the KV cache */
        bool prefilling;             /* its next work is a prefill of prompt + generated tokens */
        double energy_j;             /* its share of its iterations' energy, joules: each
                                      * iteration's by the tokens it computes for each */
};

/* One iteration, for the time series and the trace. */
struct serve_iter {
        uint32_t replica;            /* which */
        sim_ps start_ps, end_ps;     /* when it runs */
        int32_t batch;               /* sequences */
        int32_t n_dec;               /* of them decoding */
        int64_t prefill_tokens;      /* prompt tokens computed */
        int32_t waiting;             /* requests queued at its start */
        double kv_frac;              /* KV blocks in use / blocks, at its end */
};

/* A request's first and last iteration, for the trace's flows. */
struct serve_flow {
        uint32_t first, last;        /* iteration indexes */
};

/* The outcome of one simulated serving run. */
struct serve_outcome {
        struct serve_req *reqs;      /* requests, arrival order */
        size_t n_reqs;               /* entries of reqs */
        struct serve_iter *iters;    /* iterations, in start order per replica */
        size_t n_iters, cap_iters;   /* entries of iters, its capacity */
        struct serve_flow *flows;    /* per request */
        sim_ps *itl_ps;              /* every gap between tokens */
        size_t n_itl, cap_itl;       /* entries of itl_ps, its capacity */
        int64_t kv_blocks;           /* blocks per replica */
        int64_t kv_peak;             /* most blocks in use on a replica */
        uint64_t preemptions;        /* in all */
        double energy_j;             /* every iteration's */
        double in_system_area;       /* integral of requests in the system over time, s */
        double queue_area;           /* integral of waiting requests over time, s */
        double batch_sum;            /* sequences over all iterations */
        sim_ps t_first_ps, t_last_ps; /* first arrival, last completion */
        double wall_s;               /* host seconds of the run */
};

/* The requests of o (Poisson at qps, or the trace), into *reqs; qps
 * overrides o->qps when > 0 (capacity search). 0 or -1 (messages in d). */
int serve_requests(const struct serve_opts *o, double qps, struct serve_req **reqs,
                   size_t *n, struct diag *d);
/* Serve reqs (reset first) on o's replicas; steps gives iteration times. */
int serve_simulate(const struct serve_opts *o, struct serve_steps *steps, int64_t kv_blocks,
                   struct serve_req *reqs, size_t n, struct serve_outcome *out);
void serve_outcome_fini(struct serve_outcome *out);

/* ---- metrics and outputs (serve_out.c) ---- */

/* A latency's mean and percentiles. */
struct serve_stat {
        double mean, p50, p90, p99;  /* ms */
        size_t n;                    /* samples */
};

/* What a run prints (docs/serving.md names each). */
struct serve_summary {
        uint64_t requests, completed; /* arrived; served to the last token */
        double duration_s;           /* first arrival to last completion, simulated s */
        double throughput_rps, throughput_tok_s, goodput_rps; /* over duration_s */
        struct serve_stat ttft, tpot, itl, e2el; /* latencies, ms */
        double mean_in_system, mean_queue, mean_batch; /* time averages; per iteration */
        double kv_peak_frac;         /* most KV blocks in use / blocks */
        uint64_t preemptions, iterations; /* counts */
        double energy_j, j_per_token; /* simulated energy; per output token */
        double j_per_request;        /* mean energy_j of the completed requests */
        double wall_s;               /* host seconds of the serving loop */
};

void serve_summarise(const struct serve_opts *o, struct serve_outcome *oc,
                     struct serve_summary *s);
/* Whether s meets both SLOs at p99. */
bool serve_meets_slo(const struct serve_opts *o, const struct serve_summary *s);
/* The summary as --json prints it, and as text. */
char *serve_summary_json(const struct serve_summary *s, double capacity_qps);
char *serve_summary_text(const struct serve_opts *o, const struct serve_summary *s,
                         const struct serve_steps *st, double capacity_qps);
/* --out DIR's files. 0, or -1 with a message in d. */
int serve_write_outputs(const struct serve_opts *o, const struct serve_outcome *oc,
                        const char *summary_json, struct diag *d);

#endif
