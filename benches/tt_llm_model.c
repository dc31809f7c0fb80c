/* benches/tt_llm_model.c: the host model of a whole decoder as
 * tt-transformers deploys it (tt_llm_model.h, docs/adr/0030): its precision
 * configurations, the DRAM it needs, and the device programs of a decode
 * iteration and of a prefill, in tt-transformers' order.
 *
 * Precision and fidelity: tenstorrent/tt-metal
 * models/tt_transformers/tt/model_config.py (commit 0039cbf0, class
 * ModelOptimizations: TensorGroup, OpGroup, _default_settings,
 * performance(), accuracy()) and models/tt_transformers/PERF.md, "Llama 3
 * model precision and math fidelity" (the performance row: ff1_3 and ff2
 * bfp4 at LoFi, wqkv, wo and kv_cache bfp8, attention HiFi2, SDPA prefill
 * HiFi4). The LM head is bfp8 at HiFi2 (tt_transformers/tt/lm_head.py),
 * bf16 in the bf16 configuration. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "base/ckd.h"
#include "tt_llm_model.h"

const char *const tt_precision_names[] = { "performance", "accuracy", "ff13_bfp4", "bf16", NULL };

const char *tt_dtype_name(tl_dtype dt)
{
        return dt == TL_BFP8_B ? "bfp8_b" : dt == TL_BFP4_B ? "bfp4_b" : "bf16";
}

static const char *const fid_names[] = { "lofi", "lofi", "hifi2", "hifi3", "hifi4" };

/* model_config.py's _default_settings: bfp8 weights and KV cache, HiFi2
 * everywhere (the MLP at HiFi2 with fp16 accumulation), SDPA prefill HiFi4. */
static void defaults(struct tt_precision *p)
{
        for (int i = 0; i < TT_W_COUNT; i++)
                p->w[i] = TL_BFP8_B;
        for (int i = 0; i < TT_F_COUNT; i++)
                p->fid[i] = 2;
        p->fid[TT_F_SDPA_PRE] = 4;
        p->last_mlp_bfp8 = false;
}

/* bf16 attention weights and KV cache at HiFi4 (model_config.py: Qwen2.5-7B
 * in performance, models other than Llama 3 / Mistral in accuracy). */
static void bf16_attention(struct tt_precision *p)
{
        p->w[TT_W_QKV] = p->w[TT_W_O] = p->w[TT_W_KV] = TL_BF16;
        p->fid[TT_F_QKV_DEC] = p->fid[TT_F_QKV_PRE] = p->fid[TT_F_O_DEC] = 4;
        p->fid[TT_F_O_PRE] = p->fid[TT_F_SDPA_DEC] = p->fid[TT_F_SDPA_PRE] = 4;
}

static bool name_is(const struct llm_model *m, const char *name)
{
        return m && m->name && strcmp(m->name, name) == 0;
}

bool tt_precision_get(const char *name, const struct llm_model *m, struct tt_precision *p)
{
        int i = 0;
        while (tt_precision_names[i] && strcmp(tt_precision_names[i], name) != 0)
                i++;
        if (!tt_precision_names[i])
                return false;
        p->name = tt_precision_names[i];
        defaults(p);
        bool qwen7 = name_is(m, "qwen2.5-7b");
        bool large = name_is(m, "llama3.1-70b") || name_is(m, "qwen2.5-72b");
        bool llama_like = m && m->name && (strncmp(m->name, "llama3", 6) == 0 ||
                                           strncmp(m->name, "mistral", 7) == 0);
        switch (i) {
        case 0:              /* performance: PERF.md's row; Qwen2.5-7B degrades there */
                if (qwen7) {
                        bf16_attention(p);
                        break;
                }
                p->w[TT_W_FF13] = p->w[TT_W_FF2] = TL_BFP4_B;
                p->fid[TT_F_FF13] = p->fid[TT_F_FF2] = 1;
                /* calibration README: Llama-3.1-8B keeps bfp8 MLP weights in
                 * its last decoder (performance_decoder_config.json) */
                p->last_mlp_bfp8 = name_is(m, "llama3.1-8b");
                break;
        case 1:              /* accuracy */
                if (large) {
                        p->w[TT_W_FF13] = TL_BFP4_B;
                        p->fid[TT_F_FF13] = 1;
                } else if (!llama_like) {
                        bf16_attention(p);
                }
                break;
        case 2:              /* ff13_bfp4: model_config.py's performance for Llama 3 */
                p->w[TT_W_FF13] = TL_BFP4_B;
                p->fid[TT_F_FF13] = 1;
                break;
        default:             /* bf16: every weight and the cache, HiFi4 */
                for (int j = 0; j < TT_W_COUNT; j++)
                        p->w[j] = TL_BF16;
                for (int j = 0; j < TT_F_COUNT; j++)
                        p->fid[j] = 4;
                break;
        }
        return true;
}

/* ---- memory ------------------------------------------------------------------------- */

static uint64_t bytes(tl_dtype dt, int64_t rows, int64_t cols)
{
        uint64_t n = 0;
        if (!ckd_mul_u64(&n, (uint64_t)rows, (uint64_t)cols) || n > (UINT64_C(1) << 48))
                return UINT64_MAX;
        return tl_dtype_bytes(dt, (int64_t)n, cols);
}

void tt_mem_need(const struct llm_model *m, const struct tt_precision *p, int64_t batch,
                 int64_t positions, int64_t chunk, uint64_t capacity, struct tt_mem *out)
{
        int64_t h = m->hidden, qd = m->q_heads * m->head_dim, kd = m->kv_heads * m->head_dim;
        uint64_t layer = bytes(p->w[TT_W_QKV], h, qd + 2 * kd) + bytes(p->w[TT_W_O], qd, h) +
                         2 * bytes(p->w[TT_W_FF13], h, m->ffn) + bytes(p->w[TT_W_FF2], m->ffn, h) +
                         bytes(TL_BF16, 2, h) + (m->qkv_bias ? bytes(TL_BF16, 1, qd + 2 * kd) : 0);
        uint64_t w = sat_mul_u64(layer, (uint64_t)m->layers);
        /* The embedding stays bf16 on the device; the LM head is its own
         * tensor unless it is the same bf16 matrix (tied, bf16 head). */
        uint64_t emb = bytes(TL_BF16, m->vocab, h);
        bool shared = m->tied && p->w[TT_W_LM] == TL_BF16;
        w = sat_add_u64(w, emb);
        if (!shared)
                w = sat_add_u64(w, bytes(p->w[TT_W_LM], h, m->vocab));
        out->weights = w;
        uint64_t rows = sat_mul_u64(sat_mul_u64((uint64_t)batch, (uint64_t)m->kv_heads),
                                    (uint64_t)positions);
        out->kv = sat_mul_u64(sat_mul_u64(2 * (uint64_t)m->layers, rows),
                              tl_dtype_bytes(p->w[TT_W_KV], m->head_dim, m->head_dim));
        /* A prefill chunk's live activations: x, the residual, q | k | v and
         * the two MLP products, bf16. */
        int64_t widest = m->ffn > qd + 2 * kd ? m->ffn : qd + 2 * kd;
        out->act = sat_mul_u64(bytes(TL_BF16, chunk, 2 * h + widest), 3);
        out->total = sat_add_u64(sat_add_u64(out->weights, out->kv), out->act);
        out->capacity = capacity;
}

/* ---- tensor parallelism ------------------------------------------------------------- */

static int64_t cdiv(int64_t a, int64_t b)
{
        return (a + b - 1) / b;
}

/* tt-transformers' split (mlp.py, attention.py, lm_head.py): W1 and W3
 * by columns and W2 by rows (hidden_dim / num_devices a chip), WQKV by
 * heads and WO by rows, the LM head by vocabulary columns. */
bool tt_shard_model(const struct llm_model *m, int64_t tp, struct llm_model *out, char *why,
                    size_t len)
{
        *out = *m;
        if (tp <= 1)
                return true;
        if (m->q_heads % tp || m->hidden % tp || (m->kv_heads > tp && m->kv_heads % tp)) {
                snprintf(why, len, "%s's %lld query heads, %lld KV heads and hidden size %lld do "
                         "not split over %lld chips", m->name, (long long)m->q_heads,
                         (long long)m->kv_heads, (long long)m->hidden, (long long)tp);
                return false;
        }
        out->q_heads = m->q_heads / tp;
        out->kv_heads = m->kv_heads > tp ? m->kv_heads / tp : 1;
        out->ffn = cdiv(m->ffn, tp);
        out->vocab = cdiv(m->vocab, tp);
        return true;
}

/* ---- programs ----------------------------------------------------------------------- */

static int64_t pad32(int64_t v)
{
        return (v + TT_TILE - 1) / TT_TILE * TT_TILE;
}

/* Append a program with the sets of fmt ("k=v k=v ..."). */
static void prog(struct tt_prog *out, int *n, int kernel, const char *label, const char *fmt, ...)
        __attribute__((format(printf, 5, 6)));

static void prog(struct tt_prog *out, int *n, int kernel, const char *label, const char *fmt, ...)
{
        struct tt_prog *p = &out[(*n)++];
        char line[400];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(line, sizeof line, fmt, ap);
        va_end(ap);
        p->n = 0;
        p->label = label;
        p->kernel = kernel;
        for (char *t = strtok(line, " "); t && p->n < 10; t = strtok(NULL, " "))
                snprintf(p->sets[p->n++], sizeof p->sets[0], "%s", t);
}

/* A matmul: DRAM-sharded in decode, tt_matmul (2D multicast, DRAM
 * interleaved) in prefill. */
static void matmul(struct tt_prog *out, int *n, bool prefill, const char *label, int64_t m,
                   int64_t k, int64_t nn, tl_dtype dt, int fid)
{
        if (prefill)
                prog(out, n, 1, label, "m=%lld k=%lld n=%lld dtype=%s fidelity=%s in0=dram "
                     "in1=dram out=dram", (long long)m, (long long)k, (long long)nn,
                     tt_dtype_name(dt), fid_names[fid]);
        else
                prog(out, n, 0, label, "op=mm_dram m=%lld k=%lld n=%lld wdtype=%s fidelity=%s",
                     (long long)m, (long long)k, (long long)nn, tt_dtype_name(dt), fid_names[fid]);
}

static void elt(struct tt_prog *out, int *n, const char *label, const char *op, int64_t rows,
                int64_t cols)
{
        prog(out, n, 0, label, "op=%s rows=%lld cols=%lld", op, (long long)rows, (long long)cols);
}

/* A collective over the tp chips on the bf16 [rows, cols] each chip holds
 * (kernels/ccl.c, along the columns, as validate-tt-ccl runs them:
 * tt-metal's workers, the fitted messages and pipelining). */
static void ccl(struct tt_prog *out, int *n, const struct tt_tp *tp, int kernel, int64_t rows,
                int64_t cols)
{
        prog(out, n, kernel, "ccl", "bytes=%lld cols=%lld dim=1 algo=%s bidir=1 workers=0 "
             "chunk_bytes=65536 pipeline=2", (long long)(rows * cols * 2), (long long)cols,
             tp->algo);
}

/* The norm of a layer's or the head's input: the residual's column pieces
 * gathered first when it is split over chips (DistributedNorm, not
 * distributed: the all-gather on dim 3, then the norm on every chip). */
static void gathered_norm(struct tt_prog *out, int *n, const struct tt_tp *tp, int64_t rows,
                          int64_t h)
{
        if (tp->tp > 1)
                ccl(out, n, tp, TT_K_ALL_GATHER, rows, h / tp->tp);
        elt(out, n, "norm", "norm", rows, h);
}

/* The reduction of a row-split matmul's partial sums (tt_all_reduce: a
 * reduce-scatter on an n300 or T3000), then the residual add on the
 * chip's piece. */
static void reduced_add(struct tt_prog *out, int *n, const struct tt_tp *tp, int64_t rows,
                        int64_t h)
{
        if (tp->tp > 1)
                ccl(out, n, tp, TT_K_REDUCE_SCATTER, rows, h);
        elt(out, n, "residual", "add", rows, h / tp->tp);
}

int tt_layer_progs(const struct llm_model *m, const struct tt_precision *p, const struct tt_tp *tp,
                   bool prefill, int64_t batch, int64_t past, tl_dtype ff13, tl_dtype ff2,
                   struct tt_prog *out)
{
        int n = 0;
        int64_t h = m->hidden, d = m->head_dim, hq = m->q_heads, hkv = m->kv_heads;
        int64_t qkv = (hq + 2 * hkv) * d, rows = prefill ? pad32(past) : pad32(batch);
        int fq = p->fid[prefill ? TT_F_QKV_PRE : TT_F_QKV_DEC];
        int fo = p->fid[prefill ? TT_F_O_PRE : TT_F_O_DEC];
        const char *kv = tt_dtype_name(p->w[TT_W_KV]);
        gathered_norm(out, &n, tp, rows, h);
        matmul(out, &n, prefill, "qkv", rows, h, qkv, p->w[TT_W_QKV], fq);
        elt(out, &n, "heads", "copy", rows, qkv);
        if (prefill) {
                elt(out, &n, "rotary", "rotary", hq * rows, d);
                elt(out, &n, "rotary", "rotary", hkv * rows, d);
                elt(out, &n, "kv_cache", "copy", hkv * rows, d);
                elt(out, &n, "kv_cache", "copy", hkv * rows, d);
                prog(out, &n, 0, "sdpa", "op=sdpa_prefill batch=1 q_heads=%lld kv_heads=%lld "
                     "head_dim=%lld keys=%lld kvdtype=%s fidelity=%s", (long long)hq,
                     (long long)hkv, (long long)d, (long long)past, kv,
                     fid_names[p->fid[TT_F_SDPA_PRE]]);
        } else {
                /* q and k heads padded to a tile of rows per user, one fused op */
                elt(out, &n, "rotary", "rotary", batch * (pad32(hq) + pad32(hkv)), d);
                elt(out, &n, "kv_cache", "copy", 2 * batch * pad32(hkv), d);
                prog(out, &n, 0, "sdpa", "op=sdpa_decode batch=%lld q_heads=%lld kv_heads=%lld "
                     "head_dim=%lld keys=%lld kvdtype=%s fidelity=%s", (long long)batch,
                     (long long)hq, (long long)hkv, (long long)d, (long long)(past + 1), kv,
                     fid_names[p->fid[TT_F_SDPA_DEC]]);
        }
        elt(out, &n, "heads", "copy", rows, hq * d);
        matmul(out, &n, prefill, "wo", rows, hq * d, h, p->w[TT_W_O], fo);
        reduced_add(out, &n, tp, rows, h);
        gathered_norm(out, &n, tp, rows, h);
        matmul(out, &n, prefill, "ff1", rows, h, m->ffn, ff13, p->fid[TT_F_FF13]);
        matmul(out, &n, prefill, "ff3", rows, h, m->ffn, ff13, p->fid[TT_F_FF13]);
        elt(out, &n, "silu_mul", "silu_mul", rows, m->ffn);
        matmul(out, &n, prefill, "ff2", rows, m->ffn, h, ff2, p->fid[TT_F_FF2]);
        reduced_add(out, &n, tp, rows, h);
        return n;
}

int tt_head_progs(const struct llm_model *m, const struct tt_precision *p, const struct tt_tp *tp,
                  int64_t batch, struct tt_prog *out)
{
        int n = 0;
        int64_t rows = pad32(batch);
        gathered_norm(out, &n, tp, rows, m->hidden);
        matmul(out, &n, false, "lm_head", rows, m->hidden, m->vocab, p->w[TT_W_LM], 2);
        return n;
}
