/* llm/tt_llm_model.h: the host model of a whole decoder as
 * tt-transformers deploys it on a Tenstorrent machine (docs/adr/0030):
 * precision configurations, the DRAM a deployment needs, and the device
 * programs (kernel tt_llm_op, kernels/tt_llm.h, or tt_matmul) of a decode
 * iteration and of a prefill, in tt-transformers' order. Its users:
 * bench validate-tt-llm and bench llm-step (a whole run, tt_predict) and
 * `cubesim serve` (one step at a time, tt_prepare, tt_decode_step,
 * tt_prefill_step). The fitted per-program costs, TT_FIT_*, are below. */
#ifndef CUBESIM_LLM_TT_LLM_MODEL_H
#define CUBESIM_LLM_TT_LLM_MODEL_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "kernels/tt_llm.h"

/* ---- precision (tt-transformers' ModelOptimizations) ---- */

/* Tensor groups (TensorGroup) and op groups (OpGroup) of model_config.py. */
enum tt_groups_w { TT_W_QKV, TT_W_O, TT_W_FF13, TT_W_FF2, TT_W_KV, TT_W_LM, TT_W_COUNT };
enum tt_groups_op { TT_F_QKV_DEC, TT_F_O_DEC, TT_F_FF13, TT_F_FF2, TT_F_SDPA_DEC, TT_F_QKV_PRE,
                    TT_F_O_PRE, TT_F_SDPA_PRE, TT_F_COUNT };

struct tt_precision {
        const char *name;            /* performance, accuracy, ff13_bfp4, bf16 */
        tl_dtype w[TT_W_COUNT];      /* weights (and the KV cache) per tensor group */
        int fid[TT_F_COUNT];         /* math fidelity per op group, passes (LoFi 1, HiFi2 2, HiFi4 4) */
        bool last_mlp_bfp8;          /* the last decoder's FF1..FF3 in bfp8 (Llama-3.1-8B) */
};

extern const char *const tt_precision_names[]; /* ended by NULL */
/* The configuration called name for model m; false if the name is none. */
bool tt_precision_get(const char *name, const struct llm_model *m, struct tt_precision *p);
/* "bf16", "bfp8_b", "bfp4_b". */
const char *tt_dtype_name(tl_dtype dt);

/* ---- the whole model on a machine ---- */

/* DRAM a deployment needs, bytes. */
struct tt_mem {
        uint64_t weights;            /* every decoder, embedding and LM head */
        uint64_t kv;                 /* K and V of batch x (prompt + generated) positions */
        uint64_t act;                /* the largest step's activations (a prefill chunk) */
        uint64_t total;              /* the three */
        uint64_t capacity;           /* the machine's DRAM */
};
void tt_mem_need(const struct llm_model *m, const struct tt_precision *p, int64_t batch,
                 int64_t positions, int64_t chunk, uint64_t capacity, struct tt_mem *out);

/* Tensor parallelism over tp chips as tt-transformers runs it on an n300,
 * a T3000 or a Galaxy: m's share on each chip (q and KV heads, FF columns
 * and vocabulary divided by tp; fewer KV heads than chips are replicated,
 * one a chip) into *out, the hidden size kept. false, with why, when m's
 * heads or hidden size do not divide over tp chips. */
bool tt_shard_model(const struct llm_model *m, int64_t tp, struct llm_model *out, char *why,
                    size_t len);

/* The kernels of a device program. */
enum tt_kernel { TT_K_OP, TT_K_MATMUL, TT_K_ALL_GATHER, TT_K_REDUCE_SCATTER, TT_K_CCL_ASYNC };

/* One device program of a decoder step: its kernel's --set values. */
struct tt_prog {
        char sets[10][40];           /* "key=value" */
        int n;                       /* used */
        const char *label;           /* what it is, for the breakdown */
        int kernel;                  /* enum tt_kernel */
        bool fused;                  /* runs in the launch of the program before it (one op
                                      * of tt-metal): no per-program cost, not counted */
        int64_t group;               /* a collective's chips (0: the tensor-parallel group's) */
        int64_t group_cols;          /* their mesh's chips a row (0: the machine's) */
        bool prefetched;             /* an mm_ring whose weight the prefetcher streams into L1
                                      * (its op=prefetch program: the same sets) */
        int64_t weight_bytes;        /* that weight's bytes (in the prefetcher's buffer) */
};
#define TT_MAX_PROGS 32

/* How the chips of a tensor-parallel group talk: tp chips (1: none, no
 * collective), the collectives' algo (ring or line), and on a Galaxy the
 * 2D split's mesh axes (a0 x a1 = tp; 0: a 1D split). */
struct tt_tp {
        int64_t tp;                  /* chips the model is split over */
        const char *algo;            /* "ring" or "line" */
        int64_t a0;                  /* 2D: chips along axis 0, a mesh row (heads, FF columns) */
        int64_t a1;                  /* 2D: chips along axis 1, a mesh column (hidden) */
};
/* tt-transformers' 2D split of a Galaxy (models/tt_transformers/tt/
 * attention.py, mlp.py: TG): the machine's chips as a mesh of a1 rows of
 * a0, the model's KV heads a multiple of a0. m's share on each chip into
 * *out (q and KV heads and FF columns / a0, hidden / a1, vocabulary / a0
 * so that the LM head's hidden x vocabulary is 1 / tp of it) and the
 * axes into *tp; false (nothing changed) when the machine or the model
 * does not split so (the 1D split applies). */
bool tt_shard_model_2d(const struct llm_model *m, int64_t chips, int64_t mesh_cols,
                       struct llm_model *out, struct tt_tp *tp);
/* The programs of one decoder layer on one chip: decode at context `past`
 * (keys cached) for `batch` users when prefill is false, else the prefill
 * of one user's `past` tokens. m is the chip's share (tt_shard_model);
 * ff13 and ff2 are the layer's FF weights. With tp->tp > 1 the residual
 * is split by columns over the chips: an all-gather before each norm, a
 * reduce-scatter after WO and after FF2 (tt-transformers' DistributedNorm
 * and tt_all_reduce on a 1D mesh). Returns their count. */
int tt_layer_progs(const struct llm_model *m, const struct tt_precision *p, const struct tt_tp *tp,
                   bool prefill, int64_t batch, int64_t past, tl_dtype ff13, tl_dtype ff2,
                   struct tt_prog *out);
/* The programs after the last layer: (the all-gather,) the final norm and
 * the LM head, its vocabulary split over the chips (prefill: on the last
 * tile of rows only). */
int tt_head_progs(const struct llm_model *m, const struct tt_precision *p, const struct tt_tp *tp,
                  int64_t batch, struct tt_prog *out);

/* ---- a whole run on a machine: validate-tt-llm and llm-step ---- */

/* The per-program costs scripts/fit_tt_llm.py fits to the two calibration
 * rows (it prints them): a traced decode's and an untraced prefill's. The
 * rows' tt-transformers traces decode and dispatches each prefill op from
 * the host, so the prefill's cost includes the host's dispatch; it is paid
 * only where a deployment does not trace its prefill (tt_runner's
 * prefill_trace, docs/adr/0053). */
#define TT_FIT_DECODE_PROGRAM_NS 22195
#define TT_FIT_PREFILL_PROGRAM_NS 65554
/* The per-program cost of the llama3_70b_galaxy demo's traced decode: the
 * mean op-to-op gap of its 16 decoder ops in tt-metal's
 * models/demos/llama3_70b_galaxy/tests/decoder_perf_targets_6u.json
 * (599-868 ns, mean 727.6; docs/adr/0046). Documented, not fitted. */
#define TT_GALAXY_DEMO_PROGRAM_NS 728
/* The llama3_70b_galaxy demo's global circular buffer, bytes: 728 x 1088
 * (728 bfp8 tiles) on each of its 24 receiver cores (12 DRAM readers x 2)
 * (prefetcher_common.py, global_cb_size; docs/adr/0049). Documented. */
#define TT_GALAXY_GLOBAL_CB_BYTES (728LL * 1088 * 24)
/* The longest prompt whose prefill the llama3_70b_galaxy demo replays from
 * a trace: its generator pads a prompt to 128 tokens, to 1024, then to the
 * next power of 2 (get_padded_prefill_len) and traces the padded lengths
 * its TT_CCL has persistent buffers for (support_seqlens 128, 1024, 2048,
 * 4096, 8192), every prompt up to 8192 tokens (docs/adr/0053). */
#define TT_GALAXY_TRACED_PREFILL_MAX 8192
#define TT_PREFILL_SIM 8192          /* longest prefill simulated as is */
#define TT_MAX_MEMO 256              /* programs remembered per prediction */

struct topo;
struct diag;

/* Whether t is a machine of Tensix cores (its matrix unit takes 32 x 32
 * operand tiles): one that runs the decoder as tt-transformers does. */
bool tt_machine_is_tensix(const struct topo *t);

/* What to predict: a model at a precision, batch users in all, each with
 * a prompt of `prompt` tokens and `gen` generated, on `dp` replicas of
 * tp chips each (tp 0: the machine's chips / dp). */
struct tt_ask {
        const struct llm_model *m;   /* the model's preset */
        struct tt_precision prec;    /* its precision configuration */
        int64_t batch, prompt, gen;  /* users in all, prompt tokens, generated tokens */
        int64_t tp, dp;              /* chips a replica splits over (0: chips / dp), replicas */
        int64_t chunk;               /* the longest prefill step's tokens, for the activations
                                      * (0: the prompt's, at most TT_PREFILL_SIM) */
        const char *machine;         /* the machine's name in messages */
};

/* The programs of one label in a decode iteration or a prefill (the
 * breakdown of "where the time goes"): per iteration, their count and
 * their time, the per-program cost included and apart. */
struct tt_part {
        const char *label;           /* the programs' label (struct tt_prog) */
        double count;                /* programs launched */
        double ns;                   /* their time, ns, their per-program costs included */
        double program_ns;           /* those per-program costs, ns */
};
#define TT_MAX_PARTS 24

/* A breakdown by label, in the order the labels first run. */
struct tt_parts {
        struct tt_part p[TT_MAX_PARTS]; /* the labels */
        int n;                       /* used */
};

/* What was predicted. */
struct tt_pred {
        int64_t chips;               /* the chips used: tp x dp */
        int64_t tp;                  /* those one replica splits over */
        int64_t ubatch;              /* users a replica decodes: batch / dp */
        struct tt_mem mem;           /* one chip's DRAM need */
        double tps_u;                /* 1 / the mean decode iteration, tokens/s a user */
        double iter_ms;              /* that mean iteration */
        double ttft_ms;              /* one user's prefill and first token */
        double tok_s, tok_s_chip;    /* tokens/s in all and per chip */
        double step_j;               /* a decode iteration's energy on every chip used, joules:
                                      * the mean over gen, like its time (docs/energy.md) */
        double step_w;               /* step_j / iter_ms: the iteration's average power, W */
        double j_per_token;          /* step_j / batch */
        double tdp_w;                /* the machine's system.tdp_w (0: none) */
        bool scaled;                 /* the prefill was simulated shorter and scaled */
        bool galaxy_demo;            /* the decode ran the llama3_70b_galaxy demo's ops */
        bool prefill_traced;         /* the prefill was replayed from a trace */
        struct tt_parts decode;      /* the mean decode iteration by label: sums to iter_ms */
        struct tt_parts prefill;     /* the prefill by label: sums to ttft_ms */
};

/* Why a prediction failed before any timing. */
enum tt_fail { TT_FAIL_NONE, TT_FAIL_SPLIT, TT_FAIL_SHARD, TT_FAIL_FIT };

/* What a device program, or a sequence of them, costs: its kernel time
 * and the energy of every chip that runs it (the run's energy_j). */
struct tt_cost {
        double ns;                   /* kernel time, ns */
        double j;                    /* energy, joules */
        double dyn_j;                /* of j, the part above the chips' static power */
};

/* Whether a prefill runs from a trace (--set prefill_trace). */
enum tt_trace {
        TT_TRACE_AUTO,               /* as the deployment does: the Galaxy demo's up to
                                      * TT_GALAXY_TRACED_PREFILL_MAX tokens, no other */
        TT_TRACE_OFF,                /* every prefill op dispatched from the host */
        TT_TRACE_ON                  /* every prefill replayed from a trace */
};

/* A prediction's state: its options (set by the caller), the machine and
 * a memo of the program times. */
struct tt_runner {
        int samples;                 /* SDPA contexts sampled over the generated tokens */
        double decode_ns, prefill_ns; /* the per-program costs: a traced decode's, an
                                      * untraced prefill's (host dispatch included) */
        bool decode_ns_given;        /* decode_ns set by --set (else the demo's own on a Galaxy) */
        enum tt_trace prefill_trace; /* whether a prefill is traced: its programs then pay
                                      * the decode's traced cost, not prefill_ns */
        struct diag *d;              /* the programs' run problems */
        const struct topo *t;        /* the machine */
        struct tt_tp tp;             /* the tensor parallelism */
        struct llm_model shard;      /* one chip's share of the model */
        struct { char key[420]; struct tt_cost cost; } memo[TT_MAX_MEMO]; /* programs already run */
        int n_memo;                  /* used */
        struct tt_parts *parts;      /* the programs run add their costs here (NULL: none) */
        double part_w;               /* times each: how often per iteration they run */
        enum tt_fail fail;           /* what failed before timing, if anything */
        char why[512];               /* its message, unlocated */
};

struct params;
/* The runner's options from a bench's --set keys samples (SDPA contexts,
 * 5), decode_program_ns and prefill_program_ns (the fitted costs) and
 * prefill_trace (auto, 0 or 1), its problems to d. */
void tt_runner_options(struct params *ps, struct diag *d, struct tt_runner *r);

/* Predict a on machine t (its --set keys applied) into *out: the split
 * into replicas and chips' shares, the DRAM check, then the decode
 * iteration at its growing context and one user's prefill, each a
 * sequence of device programs run as launches, each program's energy
 * summed as its time is (a decode iteration's energy, average power and
 * J/token). 0; 2 with r->fail and r->why set (the caller locates the
 * message) or, with r->fail NONE, a program's bad setup in r->d; 1 when
 * a program's run failed (in r->d). */
int tt_predict(struct tt_runner *r, const struct topo *t, const struct tt_ask *a,
               struct tt_pred *out);

/* ---- one step at a time: cubesim serve (src/serve/serve_steps.c) ---- */

/* tt_predict's first steps for a on machine t: the split into replicas
 * and chips' shares, and the DRAM check of batch users of prompt + gen
 * positions (out->mem, out->tp, out->chips). 0; 2 with r->fail and r->why
 * (unlocated). The runner is then ready for the steps below. */
int tt_prepare(struct tt_runner *r, const struct topo *t, const struct tt_ask *a,
               struct tt_pred *out);
/* The KV-cache blocks a prepared replica holds, a block the positions of
 * one user that tt_prepare checked (a->prompt + a->gen, batch 1): what a
 * chip's DRAM leaves beside the weights and activations over one block's
 * share, times the axis-1 groups of the 2D split (each holds the cache of
 * its own users); 0 when not one fits. */
int64_t tt_kv_blocks(const struct tt_runner *r, const struct tt_pred *p);
/* One decode iteration of a prepared runner: batch users (at most 32, the
 * rows of a tile) at context past (keys past + 1), every layer and the LM
 * head; its time and energy. 0, 2 or 1 (tt_predict's). */
int tt_decode_step(struct tt_runner *r, const struct tt_ask *a, int64_t batch, int64_t past,
                   struct tt_cost *out);
/* The prefill of q prompt tokens of one user whose first past are in the
 * cache: the programs of a q-token prefill (the LM head included) and of
 * the causal SDPA, the attention of the q new rows taken as that of past +
 * q tokens less that of past (exact for past 0, when it is tt_predict's
 * TTFT); each prefill longer than TT_PREFILL_SIM simulated at it and
 * scaled as TTFT is. 0, 2 or 1. */
int tt_prefill_step(struct tt_runner *r, const struct tt_ask *a, int64_t q, int64_t past,
                    struct tt_cost *out);

/* A prediction's decode energy into the JSON object o (validate-tt-llm's
 * row, llm-step's summary): decode_step_j, decode_power_w, j_per_token
 * and tdp_w (null: the machine states none); o. */
json_t *tt_energy_json(json_t *o, const struct tt_pred *p);
/* The machine's system.tdp_w as text, "-" for none (the text tables). */
void tt_tdp_text(char *buf, size_t len, const struct tt_pred *p);

#endif
