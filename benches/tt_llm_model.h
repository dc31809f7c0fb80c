/* benches/tt_llm_model.h: the host model of a whole decoder as
 * tt-transformers deploys it on a Tenstorrent machine (docs/adr/0030):
 * precision configurations, the DRAM a deployment needs, and the device
 * programs (kernel tt_llm_op, kernels/tt_llm.h, or tt_matmul) of a decode
 * iteration and of a prefill, in tt-transformers' order. */
#ifndef CUBESIM_BENCHES_TT_LLM_MODEL_H
#define CUBESIM_BENCHES_TT_LLM_MODEL_H

#include <stdbool.h>

#include "../kernels/tt_llm.h"

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
enum tt_kernel { TT_K_OP, TT_K_MATMUL, TT_K_ALL_GATHER, TT_K_REDUCE_SCATTER };

/* One device program of a decoder step: its kernel's --set values. */
struct tt_prog {
        char sets[10][40];           /* "key=value" */
        int n;                       /* used */
        const char *label;           /* what it is, for the breakdown */
        int kernel;                  /* enum tt_kernel */
};
#define TT_MAX_PROGS 32

/* How the chips of a tensor-parallel group talk: tp chips (1: none, no
 * collective), the collectives' algo (ring or line). */
struct tt_tp {
        int64_t tp;                  /* chips the model is split over */
        const char *algo;            /* "ring" or "line" */
};
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

#endif
