/* kernels/llm.h: the decoder layer kernel llm_layer (Llama-3 family):
 * its argument block, model presets and budgets. Host side: llm_setup.c;
 * device side: llm_layer.c.
 *
 * Shapes: batch B, query length Sq (1: decode), past length P, hidden H,
 * query heads Hq, KV heads Hkv, group G = Hq / Hkv, head dim D, FFN width
 * F, T = B * Sq token rows. Weights are [in, out] (y = x . W). Tensor
 * parallelism over tp ranks (Megatron): rank r owns query heads
 * r * Hq / tp .., KV heads r * Hkv / tp .., FFN columns r * F / tp ..
 * (column slices of wq, wk, wv, w_gate, w_up; row slices of wo, w_down),
 * and the two row-parallel GEMMs end in an all-reduce over the ranks. */
#ifndef CUBESIM_KERNELS_LLM_H
#define CUBESIM_KERNELS_LLM_H

#include <stdbool.h>
#include <cubesim/tl.h>

#define LLM_ROPE_THETA 500000.0      /* RoPE base (Llama 3) */
#define LLM_EPS 1e-5f                /* RMSNorm epsilon */
#define LLM_KV_TILE 128              /* keys per attention tile */
#define LLM_Q_ROWS 128               /* query rows per attention block (prefill) */
#define LLM_ATTN_ROWS 256            /* prefill: most stacked query rows of one attention item */
#define LLM_RAMP_ROWS(sq) ((sq) == 1 ? 64 : LLM_Q_ROWS) /* RoPE ramp rows (decode: its old size) */
#define LLM_MAX_GROUP 64             /* most query heads per KV head (rows of a decode block) */
#define LLM_TM 256                   /* rows of a GEMM output block */
#define LLM_TN 128                   /* columns of a GEMM output block */
#define LLM_TK 128                   /* K step of a GEMM */
#define LLM_PTN 256                  /* prefill: columns of a GEMM output sub-block */
#define LLM_PTK 64                   /* prefill: K step of a GEMM */
#define LLM_NB 2                     /* prefill: sub-blocks sharing each A tile */
#define LLM_BUFS 4                   /* most GEMM operand buffers (loads in flight + 1) */
#define LLM_DECODE_BUFS 4            /* decode: operand buffers (loads three steps ahead) */
#define LLM_PREFILL_BUFS 4           /* prefill: B buffers (loads three steps ahead; one
                                      * fewer A buffers; docs/adr/0042) */
#define LLM_ROW_MCAST_ROWS 16        /* one grid row: fewest token rows whose A tiles a NoC row shares */
#define LLM_STAGE_ROWS 64            /* prefill, tp > 1: accumulator rows all-reduced at once */
#define LLM_SPLIT_SUBS 16            /* decode, K split over a NoC row: most sub-blocks a PE
                                      * computes (the row's PEs x the GEMM's sub-blocks) */
#define LLM_SPLIT_STEP_BYTES 131072  /* decode, K split: most B bytes of one K step */
#define LLM_SPLIT_ROWS 64            /* decode, K split: most token rows (TCM: larger batches
                                      * share A tiles by multicast) */
#define LLM_NORM_ELEMS 32768         /* elements of one RMSNorm block in scratch */

/* How a PE blocks its GEMMs. Decode (Sq = 1) is weight-bandwidth bound:
 * one LLM_TM x LLM_TN output per A tile, K steps of LLM_TK, the loads of
 * three steps in flight (LLM_DECODE_BUFS buffers: one left the HBM and
 * NoC latency of every step unhidden, docs/adr/0036; two, 2% slower at
 * batch 32, docs/adr/0050), its accumulators as many rows as the batch
 * (at most LLM_TM). Prefill is
 * compute bound if each operand byte feeds enough MACs: LLM_NB output
 * sub-blocks of LLM_TM x LLM_PTN (LLM_TN for 4-byte types, to fit TCM)
 * share each A tile, in K steps of LLM_PTK, so a K step moves
 * (TM + NB x TN) x TK operand elements for TM x NB x TN x TK MACs.
 * Prefill keeps its accumulators in scratch while a GEMM phase runs
 * (acc_scratch), leaving persistent TCM to attention's stacked heads
 * (docs/adr/0042). */
struct llm_gemm_plan {
        int64_t tk;                  /* K step */
        int64_t tn;                  /* columns of one sub-block */
        int nb;                      /* sub-blocks (B tiles and accumulators) per A tile */
        bool acc_in_place;           /* K steps accumulate in the GEMM (no MATH add pass) */
        int bufs;                    /* B operand buffers: loads run bufs - 1 steps ahead */
        int abufs;                   /* A operand buffers (<= bufs), likewise; an unshared
                                      * GEMM runs its B tiles as deep (gemm_multi) */
        bool acc_scratch;            /* accumulators in scratch, per GEMM phase (else TCM) */
};

static inline struct llm_gemm_plan llm_gemm_plan_of(int64_t sq, tl_dtype dt, tl_dtype wdt)
{
        if (sq == 1)
                return (struct llm_gemm_plan){ LLM_TK, LLM_TN, 1, false, LLM_DECODE_BUFS,
                                               LLM_DECODE_BUFS, false };
        bool narrow = tl_dtype_size(dt) > 2 || tl_dtype_size(wdt) > 2;
        return (struct llm_gemm_plan){ LLM_PTK, narrow ? LLM_TN : LLM_PTN, LLM_NB, true,
                                       LLM_PREFILL_BUFS, LLM_PREFILL_BUFS, true };
}

/* Decode of a batch whose GEMMs split K over the PEs of a NoC row of
 * ncols (docs/adr/0050): the B tiles a PE loads per K step, 2 x ncols
 * (two sub-blocks of ncols shares, at most LLM_SPLIT_SUBS); 0 for none:
 * prefill, fewer than LLM_ROW_MCAST_ROWS token rows or more than
 * LLM_SPLIT_ROWS, one NoC column, 4-byte activations or weights (their
 * buffers would not fit TCM beside attention's). */
static inline int llm_split_slots(int64_t sq, int64_t batch, int ncols, tl_dtype dt,
                                  tl_dtype wdt)
{
        if (sq != 1 || batch < LLM_ROW_MCAST_ROWS || batch > LLM_SPLIT_ROWS || ncols < 2 ||
            2 * ncols > LLM_SPLIT_SUBS || tl_dtype_size(dt) > 2 || tl_dtype_size(wdt) > 2)
                return 0;
        return 2 * ncols;
}

/* The K step of a split GEMM with slots B tiles of LLM_TN columns of wdt
 * in LLM_SPLIT_STEP_BYTES: a multiple of 32 up to LLM_TK; 0 if none. */
static inline int64_t llm_split_tk(tl_dtype wdt, int slots)
{
        int64_t tk = LLM_TK;
        while (tk >= 32 && (uint64_t)slots * tl_dtype_bytes(wdt, tk * LLM_TN, LLM_TN) >
                                   LLM_SPLIT_STEP_BYTES)
                tk -= 32;
        return tk >= 32 ? tk : 0;
}

/* Prefill attention: the query heads of one KV head that an item stacks
 * (they share every key and value tile it loads), the largest divisor of
 * the group g with that many LLM_Q_ROWS blocks in LLM_ATTN_ROWS rows. */
static inline int64_t llm_attn_heads(int64_t g)
{
        int64_t nh = 1;
        for (int64_t i = 2; i <= g && i * LLM_Q_ROWS <= LLM_ATTN_ROWS; i++)
                if (g % i == 0)
                        nh = i;
        return nh;
}

/* Rows of a PE's attention state: decode folds the group's g heads into
 * one block; prefill stacks llm_attn_heads(g) blocks of up to LLM_Q_ROWS
 * query rows (sq of them when fewer). */
static inline int64_t llm_attn_rows(int64_t sq, int64_t g)
{
        return sq == 1 ? g : llm_attn_heads(g) * (sq < LLM_Q_ROWS ? sq : LLM_Q_ROWS);
}

/* Rows of a GEMM A tile buffer for t token rows: an output block's, or
 * all t when fewer. */
static inline int64_t llm_a_rows(int64_t t)
{
        return t < LLM_TM ? t : LLM_TM;
}

/* A published model configuration. */
struct llm_model {
        const char *name;            /* preset name, e.g. "llama3-70b" */
        int64_t hidden;              /* hidden_size */
        int64_t q_heads, kv_heads;   /* num_attention_heads, num_key_value_heads */
        int64_t head_dim;            /* head_dim, else hidden_size / num_attention_heads */
        int64_t ffn;                 /* intermediate_size */
        int64_t layers;              /* num_hidden_layers */
        int64_t vocab;               /* vocab_size */
        double rope_theta;           /* rope_theta */
        double rope_factor;          /* rope_scaling.factor (llama3 scaling), 0: none */
        bool tied;                   /* tie_word_embeddings: the LM head is the embedding */
        bool qkv_bias;               /* biases on q, k and v (Qwen2) */
        const char *hf;              /* the Hugging Face repository of its config.json */
};

extern const struct llm_model llm_models[];   /* ended by name NULL */
/* The preset called name, or NULL. */
const struct llm_model *llm_model_find(const char *name);

/* Which ops a run includes: all (the layer), or one class alone, to time
 * it (the breakdown of bench llm-step). Other is what no class covers:
 * barriers, RoPE of the new keys, residual adds, silu(gate) * up. */
enum llm_part {
        LLM_PART_ALL,                /* the whole layer */
        LLM_PART_GEMM,               /* the GEMMs (QKV, wo, gate, up, down) alone */
        LLM_PART_ATTENTION,          /* attention alone */
        LLM_PART_NORM,               /* the two RMSNorms alone */
        LLM_PART_ALLREDUCE,          /* the two all-reduces alone */
        LLM_PART_OTHER,              /* (never run alone: the rest of the layer) */
};

/* The argument block of llm_layer. */
struct llm_args {
        tl_tensor *x;                /* input [B, Sq, H] */
        tl_tensor *wq, *wk, *wv, *wo; /* [H, Hq*D], [H, Hkv*D] x 2, [Hq*D, H] */
        tl_tensor *wg, *wu, *wd;     /* w_gate, w_up [H, F]; w_down [F, H] */
        tl_tensor *attn_norm, *mlp_norm; /* [H] */
        tl_tensor *k_cache, *v_cache; /* [B, Hkv, P, D]; NULL when P is 0 */
        tl_tensor *out;              /* output [B, Sq, H] */
        tl_tensor *k_new, *v_new;    /* outputs [B, Hkv, Sq, D]: keys after RoPE, values */
        tl_tensor *n1, *n2, *h;      /* temporaries [T, H]: the two norms, the residual */
        tl_tensor *q, *attn;         /* temporaries [T, Hq*D]: queries before RoPE, attention */
        tl_tensor *kt, *vt;          /* temporaries [T, Hkv*D]: new keys before RoPE, values */
        tl_tensor *act;              /* temporary [T, F]: silu(gate) * up */
        int64_t batch, sq, past;     /* B, Sq, P */
        int64_t hidden, hq, hkv, d, ffn; /* H, Hq, Hkv, D, F */
        int64_t group;               /* G = Hq / Hkv */
        int tp;                      /* tensor-parallel ranks */
        tl_dtype dt;                 /* activations, caches and outputs */
        tl_dtype wdt;                /* weights */
        float scale;                 /* 1 / sqrt(D) */
        float log_theta;             /* ln(RoPE theta) */
        enum llm_part part;          /* which ops run */
};

/* The argument block of llm_lm_head. */
struct llm_head_args {
        tl_tensor *x;                /* input [B, H]: each sequence's last hidden state */
        tl_tensor *w;                /* w_lm [H, V] */
        tl_tensor *logits;           /* output [B, V] */
        int64_t batch, hidden, vocab; /* B, H, V */
        tl_dtype dt, wdt;            /* activations and logits; weights */
};

/* Persistent TCM a PE of llm_layer allocates (tl_alloc TL_TCM): the RoPE
 * ramp and frequencies, the GEMM operand buffers and (decode)
 * accumulators, with split the B tiles of a split GEMM (at most
 * LLM_SPLIT_STEP_BYTES a step, whatever the NoC's columns) and its rows'
 * 1 / RMS (a fused RMSNorm's), the attention
 * buffers. The setup refuses a shape beyond the machine's; keep in step
 * with llm_layer.c. */
static inline uint64_t llm_persistent_bytes(const struct llm_args *a, bool split)
{
        int64_t d = a->d, half = d / 2, rows = llm_attn_rows(a->sq, a->group);
        int64_t t = llm_a_rows(a->batch * a->sq);
        struct llm_gemm_plan p = llm_gemm_plan_of(a->sq, a->dt, a->wdt);
        uint64_t tile_a = tl_dtype_bytes(a->dt, t * p.tk, p.tk);
        uint64_t tile_b = tl_dtype_bytes(a->wdt, p.tk * p.tn, p.tn);
        uint64_t n = 4 * (uint64_t)(LLM_RAMP_ROWS(a->sq) + 2 * half) +
                     (uint64_t)p.abufs * tile_a + (uint64_t)p.bufs * p.nb * tile_b +
                     (p.acc_scratch ? 0 : 2 * 4 * (uint64_t)(t * p.tn)) +
                     (p.acc_scratch && a->tp > 1 ? 4 * (uint64_t)(LLM_STAGE_ROWS * p.tn) : 0) +
                     (split ? (uint64_t)p.bufs * LLM_SPLIT_STEP_BYTES + 4 * (uint64_t)t : 0);
        if (a->part == LLM_PART_ALL || a->part == LLM_PART_ATTENTION)
                n += 2 * 4 * (uint64_t)(rows * d) + 6 * tl_dtype_bytes(a->dt, LLM_KV_TILE * d, d) +
                     2 * 4 * (uint64_t)rows;
        return n;
}

/* Whether decode of a's batch may split K (llm_split_slots, for some NoC
 * of two or more columns) with its buffers in tcm bytes of persistent
 * TCM: else its NoC rows share A tiles by multicast (docs/adr/0050). */
static inline bool llm_split_fits(const struct llm_args *a, uint64_t tcm)
{
        return llm_split_slots(a->sq, a->batch, 2, a->dt, a->wdt) > 0 &&
               llm_persistent_bytes(a, true) <= tcm;
}

/* Host side (llm_setup.c): the parameters, and the setup that reads them
 * and declares the tensors. */
extern const struct tl_param llm_params[], llm_head_params[];
void llm_setup(tl_setup *s, void *args);
void llm_head_setup(tl_setup *s, void *args);

#endif
