/* kernels/tt_llm.h: a decoder as tt-transformers runs it on a Tenstorrent
 * machine (docs/adr/0030): one kernel, tt_llm_op, that runs one device
 * program of the decoder per launch (device side tt_llm_op.c, host side
 * tt_llm_setup.c), and the host model of a whole run (tt_llm_model.c):
 * precision configurations, the sequence of programs of a decode
 * iteration and of a prefill, and the DRAM the model needs.
 *
 * Every op runs on 32 x 32 tiles: row counts are padded to 32 (a decode
 * step of batch B <= 32 is 32 rows), as ttnn pads them. */
#ifndef CUBESIM_KERNELS_TT_LLM_H
#define CUBESIM_KERNELS_TT_LLM_H

#include <stdbool.h>
#include <cubesim/tl.h>

#include "llm.h"

#define TT_TILE 32                   /* rows and columns of a ttnn tile */
#define TT_KV_CHUNK 128              /* keys per SDPA chunk */
#define TT_Q_CHUNK 64                /* query rows per SDPA prefill item */
#define TT_MM_KB 128                 /* K rows of a DRAM-sharded matmul step */
#define TT_MM_NB 1024                /* most output columns a worker holds at once */
#define TT_ELT_W 8                   /* most tiles of a row an elementwise block takes */

/* The programs of tt_llm_op (`op`). */
enum tt_op {
        TT_OP_MM_DRAM,               /* decode matmul, weights sharded one bank per worker */
        TT_OP_NORM,                  /* RMSNorm of [rows, cols] */
        TT_OP_ADD,                   /* residual add of two [rows, cols] */
        TT_OP_SILU_MUL,              /* silu(a) * b */
        TT_OP_ROTARY,                /* rotary embedding of [rows, cols] with cos, sin */
        TT_OP_COPY,                  /* a data-movement op (heads split or concat, fill cache) */
        TT_OP_SDPA_DECODE,           /* attention of one query row per user over the cache */
        TT_OP_SDPA_PREFILL,          /* causal attention of a prompt */
        TT_OP_COUNT
};

/* The argument block of tt_llm_op. */
struct tt_op_args {
        enum tt_op op;               /* which program */
        int64_t m, k, n;             /* matmul: rows (padded), K, N */
        int64_t rows, cols;          /* elementwise ops: the [rows, cols] operands */
        int64_t batch, hq, hkv, d;   /* SDPA: users, query and KV heads, head dim */
        int64_t keys;                /* SDPA decode: cached keys seen; prefill: prompt length */
        int workers;                 /* matmul: one per DRAM channel */
        int grid_x, grid_y;          /* the compute grid */
        int ins;                     /* elementwise: [rows, cols] inputs (1 to 3) */
        tl_dtype wdt, kvdt;          /* weight and KV-cache dtypes */
        tl_tensor *a;                /* matmul: [workers, m, k] L1-sharded in0, gathered; elt: input 0 */
        tl_tensor *w[64];            /* matmul: per worker [k, n / workers] in its channel */
        tl_tensor *in[3];            /* elementwise inputs [rows, cols] */
        tl_tensor *wrow;             /* RMSNorm weight [1, cols] */
        tl_tensor *out;              /* result: matmul [workers, m, n / workers] L1-sharded; elt [rows, cols] */
        tl_tensor *q, *kc, *vc;      /* SDPA: queries, keys, values */
        tl_tensor *o;                /* SDPA output */
};

extern const struct tl_param tt_op_params[];
void tt_op_setup(tl_setup *s, void *args);

/* ---- precision (tt-transformers' ModelOptimizations) ---- */

/* Math fidelity in passes (LoFi 1, HiFi2 2, HiFi4 4). */
enum tt_groups_w { TT_W_QKV, TT_W_O, TT_W_FF13, TT_W_FF2, TT_W_KV, TT_W_LM, TT_W_COUNT };
enum tt_groups_op { TT_F_QKV_DEC, TT_F_O_DEC, TT_F_FF13, TT_F_FF2, TT_F_SDPA_DEC, TT_F_QKV_PRE,
                    TT_F_O_PRE, TT_F_SDPA_PRE, TT_F_COUNT };

struct tt_precision {
        const char *name;            /* performance, accuracy, ff13_bfp4, bf16 */
        tl_dtype w[TT_W_COUNT];      /* weights (and the KV cache) per tensor group */
        int fid[TT_F_COUNT];         /* fidelity passes per op group */
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

/* One device program of a decoder step: tt_llm_op's --set values. */
struct tt_prog {
        char sets[10][40];           /* "key=value" */
        int n;                       /* used */
        const char *label;           /* what it is, for the breakdown */
        int kernel;                  /* 0: tt_llm_op, 1: tt_matmul */
};
#define TT_MAX_PROGS 24
/* The programs of one decoder layer: decode at context `past` (keys
 * cached) for `batch` users when prefill is false, else the prefill of one
 * user's `past` tokens. mlp_wdt is the layer's FF weights. Returns their
 * count. */
int tt_layer_progs(const struct llm_model *m, const struct tt_precision *p, bool prefill,
                   int64_t batch, int64_t past, tl_dtype ff13, tl_dtype ff2, struct tt_prog *out);
/* The programs after the last layer: the final norm and the LM head
 * (prefill: on the last tile of rows only). */
int tt_head_progs(const struct llm_model *m, const struct tt_precision *p, int64_t batch,
                  struct tt_prog *out);

#endif
