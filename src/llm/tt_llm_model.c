/* src/llm/tt_llm_model.c: the host model of a whole decoder as
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
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "base/ckd.h"
#include "base/jsonw.h"
#include "base/params.h"
#include "report/summary.h"
#include "tl/tl_run.h"
#include "topo/topo.h"
#include "llm/tt_llm_model.h"

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

bool tt_shard_model_2d(const struct llm_model *m, int64_t chips, int64_t mesh_cols,
                       struct llm_model *out, struct tt_tp *tp)
{
        /* TG: 32 devices as a mesh of 8 (axis 0) x 4 (axis 1); the KV heads
         * one group per axis-0 chip (num_devices_per_group = n_kv_heads) */
        if (chips != 32 || mesh_cols < 2 || chips % mesh_cols || chips / mesh_cols < 2)
                return false;
        int64_t a0 = mesh_cols, a1 = chips / mesh_cols;
        if (m->kv_heads % a0 || m->q_heads % a0 || m->hidden % (a1 * TT_TILE) ||
            m->ffn % a0 || m->vocab % a0)
                return false;
        *out = *m;
        out->q_heads = m->q_heads / a0;
        out->kv_heads = m->kv_heads / a0;
        out->hidden = m->hidden / a1;
        out->ffn = m->ffn / a0;
        out->vocab = m->vocab / a0;
        tp->tp = chips;
        tp->a0 = a0;
        tp->a1 = a1;
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
        p->fused = p->prefetched = false;
        p->group = p->group_cols = p->weight_bytes = 0;
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
 * tt-metal's workers, the fitted messages and pipelining), labelled by
 * its kernel. */
static void ccl(struct tt_prog *out, int *n, const struct tt_tp *tp, int kernel, int64_t rows,
                int64_t cols)
{
        const char *label = kernel == TT_K_ALL_GATHER ? "all_gather" : "reduce_scatter";
        prog(out, n, kernel, label, "bytes=%lld cols=%lld dim=1 algo=%s bidir=1 workers=0 "
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

/* The attention between the QKV matmul and WO of `users` users (decode)
 * or one user's `past` tokens (prefill) on rows rows: create heads,
 * rotary, the cache update, SDPA, concat heads. */
static void attention(struct tt_prog *out, int *n, const struct llm_model *m,
                      const struct tt_precision *p, bool prefill, int64_t users, int64_t past,
                      int64_t rows)
{
        int64_t d = m->head_dim, hq = m->q_heads, hkv = m->kv_heads;
        const char *kv = tt_dtype_name(p->w[TT_W_KV]);
        elt(out, n, "heads", "copy", rows, (hq + 2 * hkv) * d);
        if (prefill) {
                elt(out, n, "rotary", "rotary", hq * rows, d);
                elt(out, n, "rotary", "rotary", hkv * rows, d);
                elt(out, n, "kv_cache", "copy", hkv * rows, d);
                elt(out, n, "kv_cache", "copy", hkv * rows, d);
                prog(out, n, 0, "sdpa", "op=sdpa_prefill batch=1 q_heads=%lld kv_heads=%lld "
                     "head_dim=%lld keys=%lld kvdtype=%s fidelity=%s", (long long)hq,
                     (long long)hkv, (long long)d, (long long)past, kv,
                     fid_names[p->fid[TT_F_SDPA_PRE]]);
        } else {
                /* q and k heads padded to a tile of rows per user, one fused op */
                elt(out, n, "rotary", "rotary", users * (pad32(hq) + pad32(hkv)), d);
                elt(out, n, "kv_cache", "copy", 2 * users * pad32(hkv), d);
                prog(out, n, 0, "sdpa", "op=sdpa_decode batch=%lld q_heads=%lld kv_heads=%lld "
                     "head_dim=%lld keys=%lld kvdtype=%s fidelity=%s", (long long)users,
                     (long long)hq, (long long)hkv, (long long)d, (long long)(past + 1), kv,
                     fid_names[p->fid[TT_F_SDPA_DEC]]);
        }
        elt(out, n, "heads", "copy", rows, hq * d);
}

/* ---- the Galaxy's 2D split (tt-transformers' TG) ---- */

/* A collective along one axis of the 2D mesh: axis 0 a mesh row of a0
 * chips, axis 1 a column of a1 (ccl.py's cluster_axis). */
static void ccl_axis(struct tt_prog *out, int *n, const struct tt_tp *tp, int axis, int kernel,
                     int64_t rows, int64_t cols)
{
        ccl(out, n, tp, kernel, rows, cols);
        out[*n - 1].group = axis ? tp->a1 : tp->a0;
        out[*n - 1].group_cols = axis ? 1 : tp->a0;
}

/* tt_all_reduce along an axis: a reduce-scatter of the partial sums, then
 * an all-gather of the pieces, every chip of the axis with the sum. */
static void all_reduce_axis(struct tt_prog *out, int *n, const struct tt_tp *tp, int axis,
                            int64_t rows, int64_t cols)
{
        ccl_axis(out, n, tp, axis, TT_K_REDUCE_SCATTER, rows, cols);
        ccl_axis(out, n, tp, axis, TT_K_ALL_GATHER, rows, cols / (axis ? tp->a1 : tp->a0));
        out[*n - 2].label = out[*n - 1].label = "all_reduce";
}

/* The distributed RMSNorm of the residual's axis-1 pieces: each chip's
 * partial statistics (a tile's column) gathered along axis 1, then the
 * norm of the chip's piece. */
static void norm_2d(struct tt_prog *out, int *n, const struct tt_tp *tp, int64_t rows, int64_t h)
{
        ccl_axis(out, n, tp, 1, TT_K_ALL_GATHER, rows, TT_TILE);
        out[*n - 1].label = "norm_gather";
        elt(out, n, "norm", "norm", rows, h);
}

/* One layer on one chip of the 2D split (attention.py, mlp.py with TG):
 * m is the chip's share (tt_shard_model_2d). WQKV [hidden / a1, qkv / a0]
 * then an all-reduce along axis 1; each axis-1 group of chips attends for
 * batch / a1 users with its KV heads, the users gathered back along axis
 * 1; WO [heads / a0, hidden / a1] and an all-reduce along axis 0; FF1 and
 * FF3 [hidden / a1, ffn / a0] reduced along axis 1 (a reduce-scatter, the
 * product, an all-gather, for a hidden size of 8192 and in prefill; else
 * an all-reduce each), FF2 [ffn / a0, hidden / a1] and an all-reduce along
 * axis 0. */
static int layer_progs_2d(const struct llm_model *m, const struct tt_precision *p,
                          const struct tt_tp *tp, bool prefill, int64_t batch, int64_t past,
                          tl_dtype ff13, tl_dtype ff2, struct tt_prog *out)
{
        int n = 0;
        int64_t h = m->hidden, f = m->ffn, qd = m->q_heads * m->head_dim;
        int64_t qkv = qd + 2 * m->kv_heads * m->head_dim, rows = prefill ? pad32(past) : pad32(batch);
        int64_t users = batch / tp->a1 > 1 ? batch / tp->a1 : 1;
        int fq = p->fid[prefill ? TT_F_QKV_PRE : TT_F_QKV_DEC];
        int fo = p->fid[prefill ? TT_F_O_PRE : TT_F_O_DEC];
        norm_2d(out, &n, tp, rows, h);
        matmul(out, &n, prefill, "qkv", rows, h, qkv, p->w[TT_W_QKV], fq);
        all_reduce_axis(out, &n, tp, 1, rows, qkv);
        if (!prefill)        /* the group's users sliced out (a matmul by slice_mat) */
                elt(out, &n, "heads", "copy", rows, qkv);
        attention(out, &n, m, p, prefill, users, past, prefill ? rows : pad32(users));
        if (!prefill) {      /* the users gathered along axis 1 and selected */
                ccl_axis(out, &n, tp, 1, TT_K_ALL_GATHER, pad32(users), qd);
                elt(out, &n, "heads", "copy", rows, qd);
        }
        matmul(out, &n, prefill, "wo", rows, qd, h, p->w[TT_W_O], fo);
        all_reduce_axis(out, &n, tp, 0, rows, h);
        elt(out, &n, "residual", "add", rows, h);
        norm_2d(out, &n, tp, rows, h);
        matmul(out, &n, prefill, "ff1", rows, h, f, ff13, p->fid[TT_F_FF13]);
        matmul(out, &n, prefill, "ff3", rows, h, f, ff13, p->fid[TT_F_FF13]);
        if (prefill || h * tp->a1 == 8192) {
                ccl_axis(out, &n, tp, 1, TT_K_REDUCE_SCATTER, rows, f);
                ccl_axis(out, &n, tp, 1, TT_K_REDUCE_SCATTER, rows, f);
                elt(out, &n, "silu_mul", "silu_mul", rows, f / tp->a1);
                ccl_axis(out, &n, tp, 1, TT_K_ALL_GATHER, rows, f / tp->a1);
        } else {
                all_reduce_axis(out, &n, tp, 1, rows, f);
                all_reduce_axis(out, &n, tp, 1, rows, f);
                elt(out, &n, "silu_mul", "silu_mul", rows, f);
        }
        matmul(out, &n, prefill, "ff2", rows, f, h, ff2, p->fid[TT_F_FF2]);
        all_reduce_axis(out, &n, tp, 0, rows, h);
        elt(out, &n, "residual", "add", rows, h);
        return n;
}

/* ---- the llama3_70b_galaxy demo's decode (docs/adr/0046, 0049) ---- */

/* Whether a decode on the 2D split runs as the llama3_70b_galaxy demo
 * does: the whole Galaxy, a model of hidden size 8192 (the 70B models). */
static bool galaxy_demo(const struct llm_model *m, const struct tt_tp *tp)
{
        return tp->a0 && m->hidden * tp->a1 == 8192;
}

/* The last k programs of out[0, n) run in the launch of the one before
 * them, under its label: one op of the demo. */
static void fuse(struct tt_prog *out, int n, int k)
{
        for (int i = n - k; i < n; i++) {
                out[i].fused = true;
                out[i].label = out[n - k - 1].label;
        }
}

/* The programs' labels from out[from] on, the fused ones included. */
static void relabel(struct tt_prog *out, int from, int n, const char *label)
{
        for (int i = from; i < n; i++)
                out[i].label = label;
}

/* One of the demo's collectives along an axis of the 2D mesh on [rows,
 * cols] of dtype (kernels/ccl_async.c: ttnn's all_reduce_async,
 * llama_reduce_scatter and all_gather_async on persistent buffers, a line
 * of the axis' chips, the demo's 4 links), labelled label. */
static void ccl_demo(struct tt_prog *out, int *n, const struct tt_tp *tp, int axis,
                     const char *op, const char *label, int64_t rows, int64_t cols,
                     const char *dtype)
{
        prog(out, n, TT_K_CCL_ASYNC, label, "op=%s rows=%lld cols=%lld dim=1 dtype=%s", op,
             (long long)rows, (long long)cols, dtype);
        out[*n - 1].group = axis ? tp->a1 : tp->a0;
        out[*n - 1].group_cols = axis ? 1 : tp->a0;
}

/* A decode matmul as the demo runs it: matmul_1d_ring from the weight the
 * prefetcher streamed into L1 (the program's prefetch: the same sets). */
static void matmul_ring(struct tt_prog *out, int *n, const char *label, int64_t m, int64_t k,
                        int64_t nn, tl_dtype dt, int fid)
{
        prog(out, n, 0, label, "op=mm_ring m=%lld k=%lld n=%lld wdtype=%s fidelity=%s",
             (long long)m, (long long)k, (long long)nn, tt_dtype_name(dt), fid_names[fid]);
        out[*n - 1].prefetched = true;
        out[*n - 1].weight_bytes = (int64_t)bytes(dt, k, nn);
}

/* RMSAllGather: the residual add, the norm's statistics (a tile's column
 * a chip, bf16: llama_ccl.py's LAYERNORM buffer) gathered along axis 1
 * and the norm, one op. */
static void rms_all_gather(struct tt_prog *out, int *n, const struct tt_tp *tp, int64_t rows,
                           int64_t h)
{
        elt(out, n, "rms_allgather", "add", rows, h);
        ccl_demo(out, n, tp, 1, "all_gather", "rms_allgather", rows, TT_TILE, "bf16");
        elt(out, n, "norm", "norm", rows, h);
        fuse(out, *n, 2);
}

/* One decode layer as the demo runs it (llama_decoder.py, llama_attention.py
 * forward_decode, llama_mlp.py forward; the 16 ops of a layer in
 * tests/decoder_perf_targets_6u.json): RMSAllGather, QKV matmul,
 * LlamaReduceScatterCreateHeads (the QKV partial sums reduce-scattered
 * along axis 1, each chip of a column left with its batch / 4 users'
 * heads), rotary, the cache update, SDPA, AllGatherConcat (the users
 * gathered back along axis 1 and the heads concatenated), WO matmul,
 * AllReduceAsync along axis 0, RMSAllGather, FF1 and FF3 matmuls fused
 * with FF1's reduce-scatter along axis 1, FF3's reduce-scatter, SiLU x
 * mul, the all-gather of the product along axis 1, FF2 matmul and
 * AllReduceAsync along axis 0. Each op is one program; its parts are
 * the programs this model has for them, the first paying the per-program
 * cost. The matmuls compute from the prefetcher's L1 buffer (mm_ring;
 * the prefetcher's stream over the layer is the runner's, docs/adr/0049)
 * and the collectives are the demo's (ccl_async) on the buffers' dtypes
 * (llama_ccl.py: bfp8 all-reduce, reduce-scatter and SiLU-product
 * buffers; bf16 create-heads, SDPA and statistics buffers). W2 is bfp8
 * at HiFi2 where the precision's FF2 is bfp4 (llama_mlp.py keeps it
 * bfp8); a bfp8 or bf16 FF2 stays as the precision has it. */
static int layer_progs_demo(const struct llm_model *m, const struct tt_precision *p,
                            const struct tt_tp *tp, int64_t batch, int64_t past, tl_dtype ff13,
                            tl_dtype ff2, struct tt_prog *out)
{
        int n = 0, at;
        int64_t h = m->hidden, f = m->ffn, d = m->head_dim, qd = m->q_heads * d;
        int64_t qkv = qd + 2 * m->kv_heads * d, rows = pad32(batch);
        int64_t users = batch / tp->a1 > 1 ? batch / tp->a1 : 1;
        const char *kv = tt_dtype_name(p->w[TT_W_KV]);
        int fid2 = p->fid[TT_F_FF2];
        if (ff2 == TL_BFP4_B) {
                ff2 = TL_BFP8_B;
                fid2 = 2;
        }
        rms_all_gather(out, &n, tp, rows, h);
        matmul_ring(out, &n, "qkv", rows, h, qkv, p->w[TT_W_QKV], p->fid[TT_F_QKV_DEC]);
        at = n;
        ccl_demo(out, &n, tp, 1, "reduce_scatter", "rs_create_heads", rows, qkv, "bf16");
        elt(out, &n, "heads", "copy", pad32(users), qkv);
        fuse(out, n, 1);
        relabel(out, at, n, "rs_create_heads");
        elt(out, &n, "rotary", "rotary", users * (pad32(m->q_heads) + pad32(m->kv_heads)), d);
        elt(out, &n, "kv_cache", "copy", 2 * users * pad32(m->kv_heads), d);
        prog(out, &n, 0, "sdpa", "op=sdpa_decode batch=%lld q_heads=%lld kv_heads=%lld "
             "head_dim=%lld keys=%lld kvdtype=%s fidelity=%s", (long long)users,
             (long long)m->q_heads, (long long)m->kv_heads, (long long)d, (long long)(past + 1),
             kv, fid_names[p->fid[TT_F_SDPA_DEC]]);
        at = n;
        ccl_demo(out, &n, tp, 1, "all_gather", "all_gather_concat", pad32(users), qd, "bf16");
        elt(out, &n, "heads", "copy", rows, qd);
        fuse(out, n, 1);
        relabel(out, at, n, "all_gather_concat");
        matmul_ring(out, &n, "wo", rows, qd, h, p->w[TT_W_O], p->fid[TT_F_O_DEC]);
        ccl_demo(out, &n, tp, 0, "all_reduce", "all_reduce", rows, h, "bfp8_b");
        rms_all_gather(out, &n, tp, rows, h);
        at = n;
        matmul_ring(out, &n, "ff1", rows, h, f, ff13, p->fid[TT_F_FF13]);
        matmul_ring(out, &n, "ff3", rows, h, f, ff13, p->fid[TT_F_FF13]);
        ccl_demo(out, &n, tp, 1, "reduce_scatter", "reduce_scatter", rows, f, "bfp8_b");
        fuse(out, n, 2);
        relabel(out, at, n, "ff1_ff3_rs");
        ccl_demo(out, &n, tp, 1, "reduce_scatter", "reduce_scatter", rows, f, "bfp8_b");
        elt(out, &n, "silu_mul", "silu_mul", rows, f / tp->a1);
        ccl_demo(out, &n, tp, 1, "all_gather", "all_gather", rows, f / tp->a1, "bfp8_b");
        matmul_ring(out, &n, "ff2", rows, f, h, ff2, fid2);
        ccl_demo(out, &n, tp, 0, "all_reduce", "all_reduce", rows, h, "bfp8_b");
        return n;
}

/* ---- the layer and the head ---- */

int tt_layer_progs(const struct llm_model *m, const struct tt_precision *p, const struct tt_tp *tp,
                   bool prefill, int64_t batch, int64_t past, tl_dtype ff13, tl_dtype ff2,
                   struct tt_prog *out)
{
        if (tp->a0 && !prefill && galaxy_demo(m, tp))
                return layer_progs_demo(m, p, tp, batch, past, ff13, ff2, out);
        if (tp->a0)
                return layer_progs_2d(m, p, tp, prefill, batch, past, ff13, ff2, out);
        int n = 0;
        int64_t h = m->hidden, qd = m->q_heads * m->head_dim;
        int64_t qkv = qd + 2 * m->kv_heads * m->head_dim, rows = prefill ? pad32(past) : pad32(batch);
        int fq = p->fid[prefill ? TT_F_QKV_PRE : TT_F_QKV_DEC];
        int fo = p->fid[prefill ? TT_F_O_PRE : TT_F_O_DEC];
        gathered_norm(out, &n, tp, rows, h);
        matmul(out, &n, prefill, "qkv", rows, h, qkv, p->w[TT_W_QKV], fq);
        attention(out, &n, m, p, prefill, batch, past, rows);
        matmul(out, &n, prefill, "wo", rows, qd, h, p->w[TT_W_O], fo);
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
        if (tp->a0) {        /* the residual gathered along axis 1; the vocabulary / tp */
                ccl_axis(out, &n, tp, 1, TT_K_ALL_GATHER, rows, m->hidden);
                elt(out, &n, "norm", "norm", rows, m->hidden * tp->a1);
                matmul(out, &n, false, "lm_head", rows, m->hidden * tp->a1, m->vocab / tp->a1,
                       p->w[TT_W_LM], 2);
                return n;
        }
        gathered_norm(out, &n, tp, rows, m->hidden);
        matmul(out, &n, false, "lm_head", rows, m->hidden, m->vocab, p->w[TT_W_LM], 2);
        return n;
}

/* ---- a whole run on a machine ------------------------------------------------------- */

bool tt_machine_is_tensix(const struct topo *t)
{
        return t->pe.gemm.operand_tile == TT_TILE;
}

static double gb(uint64_t b)
{
        return (double)b / 1e9;
}

/* The replicas, the chips of one and its chips' share of the model (r->tp,
 * r->shard); false with r->fail and r->why. */
static bool split(struct tt_runner *r, const struct tt_ask *a, struct tt_pred *o)
{
        int64_t chips = (int64_t)r->t->system.sips;
        o->tp = a->tp ? a->tp : chips / a->dp;
        r->fail = TT_FAIL_SPLIT;
        if (r->t->sip.cubes != 1 || (!a->tp && chips % a->dp) || a->batch % a->dp) {
                snprintf(r->why, sizeof r->why, "machine '%s': %lld chips of %u cubes and batch "
                         "%lld do not split into dp %lld replicas (a chip is a SIP of one cube; "
                         "dp must divide both)", a->machine, (long long)chips, r->t->sip.cubes,
                         (long long)a->batch, (long long)a->dp);
                return false;
        }
        if (o->tp * a->dp > chips) {
                snprintf(r->why, sizeof r->why, "machine '%s': tp %lld x dp %lld chips, more than "
                         "its %lld", a->machine, (long long)o->tp, (long long)a->dp,
                         (long long)chips);
                return false;
        }
        o->chips = o->tp * a->dp;
        o->ubatch = a->batch / a->dp;
        /* model_config.py's ccl_topology: a ring on the T3000's 8 chips, a
         * line on every other machine */
        r->tp.tp = o->tp;
        r->tp.algo = o->tp == 8 && r->t->system.sip_net == TOPO_NET_MESH ? "ring" : "line";
        r->tp.a0 = r->tp.a1 = 0;
        /* the whole Galaxy, a 2D mesh: tt-transformers' TG split */
        if (o->tp == chips && r->t->system.sip_net == TOPO_NET_MESH &&
            tt_shard_model_2d(a->m, chips, (int64_t)r->t->system.mesh_cols, &r->shard, &r->tp)) {
                r->tp.algo = "line";
                r->fail = TT_FAIL_NONE;
                return true;
        }
        char why[200];
        r->fail = TT_FAIL_SHARD;
        if (!tt_shard_model(a->m, o->tp, &r->shard, why, sizeof why)) {
                snprintf(r->why, sizeof r->why, "%s (machine '%s', dp %lld)", why, a->machine,
                         (long long)a->dp);
                return false;
        }
        r->fail = TT_FAIL_NONE;
        return true;
}

/* The DRAM check, before any timing; false with r->why naming the sizes. */
static bool fits(struct tt_runner *r, const struct tt_ask *a, struct tt_pred *o)
{
        struct tt_mem *mem = &o->mem;
        char share[96] = "";
        uint64_t cap = r->t->cube.hbm.size_bytes;
        int64_t chunk = a->chunk ? a->chunk : a->prompt;
        chunk = chunk < TT_PREFILL_SIM ? chunk : TT_PREFILL_SIM;
        /* 2D: an axis-1 group's chips hold the cache of its batch / a1 users */
        int64_t users = r->tp.a0 && o->ubatch / r->tp.a1 > 1 ? o->ubatch / r->tp.a1 :
                        r->tp.a0 ? 1 : o->ubatch;
        /* the demo keeps W2 in bfp8 where the precision has bfp4 (layer_progs_demo) */
        struct tt_precision prec = a->prec;
        if (r->tp.a0 && galaxy_demo(&r->shard, &r->tp) && prec.w[TT_W_FF2] == TL_BFP4_B)
                prec.w[TT_W_FF2] = TL_BFP8_B;
        tt_mem_need(&r->shard, &prec, users, a->prompt + a->gen, chunk, cap, mem);
        if (mem->total <= cap)
                return true;
        if (o->tp > 1)
                snprintf(share, sizeof share, " (a chip's share, tensor parallel over %lld chips)",
                         (long long)o->tp);
        r->fail = TT_FAIL_FIT;
        snprintf(r->why, sizeof r->why, "%s in %s precision does not fit %s%s: weights %.2f GB + "
                 "KV cache %.2f GB (batch %lld x %lld positions) + activations %.2f GB = %.2f GB, "
                 "more than its %.2f GB (%.1f GiB) of DRAM", a->m->name, a->prec.name, a->machine,
                 share, gb(mem->weights), gb(mem->kv), (long long)users,
                 (long long)(a->prompt + a->gen), gb(mem->act), gb(mem->total), gb(cap),
                 (double)cap / (double)(UINT64_C(1) << 30));
        return false;
}

/* Run one program; its kernel time and energy into *out. A chip's
 * program is simulated on one chip and every chip of the group runs it:
 * its energy counts tp times. A collective runs on its group's chips, and
 * every group of the tensor-parallel chips runs it at once (tp / group of
 * them: one on a 1D split, a mesh row's or column's on the 2D). 0, 2 or
 * 1. */
static int run_prog(struct tt_runner *c, const struct tt_prog *p, double program_ns,
                    struct tt_cost *out)
{
        static const char *const kernels[] = { "tt_llm_op", "tt_matmul", "all_gather",
                                               "reduce_scatter", "ccl_async" };
        char key[420] = "", cost[64], sips[40];
        snprintf(cost, sizeof cost, "pe.cpu.program_ns=%.0f", program_ns);
        /* a chip's program runs on one chip (every chip runs the same);
         * a collective on the tensor-parallel group's chips */
        snprintf(sips, sizeof sips, "system.sips=%lld",
                 p->kernel < TT_K_ALL_GATHER ? 1LL : p->group ? (long long)p->group :
                 (long long)c->tp.tp);
        /* a collective along one axis of a 2D mesh: a row or a column of it */
        char cols[48] = "";
        if (p->group_cols)
                snprintf(cols, sizeof cols, "system.inter_sip.mesh_cols=%lld",
                         (long long)p->group_cols);
        const char *sets[15];
        size_t n = 0;
        if (c->t->system.sips > 1)
                sets[n++] = sips;
        if (p->group_cols)
                sets[n++] = cols;
        for (int i = 0; i < p->n; i++) {
                sets[n++] = p->sets[i];
                size_t used = strlen(key);
                snprintf(key + used, sizeof key - used, "%s ", p->sets[i]);
        }
        sets[n++] = cost;
        size_t used = strlen(key);
        snprintf(key + used, sizeof key - used, "%d %s %s %s", p->kernel, cost, sips, cols);
        for (int i = 0; i < c->n_memo; i++)
                if (strcmp(c->memo[i].key, key) == 0) {
                        *out = c->memo[i].cost;
                        return 0;
                }
        const struct tl_kernel *k = tl_kernel_find(kernels[p->kernel]);
        struct tl_job job = { .kernel = k, .topo = c->t, .sets = sets, .n_sets = n,
                              .opts = tl_run_opts_default() };
        int rc = tl_job_run(&job, c->d);
        if (rc == 0) {
                json_t *s = rep_run_summary(&job.sim, &job.stats, k->name);
                int64_t group = p->group ? p->group : c->tp.tp;
                double copies = p->kernel < TT_K_ALL_GATHER ? (double)c->tp.tp :
                                (double)(c->tp.tp / group);
                out->ns = (double)json_integer_value(json_object_get(s, "kernel_ps")) / 1000.0;
                out->j = json_number_value(json_object_get(s, "energy_j")) * copies;
                out->dyn_j = out->j - json_number_value(json_object_get(s, "static_j")) * copies;
                json_decref(s);
                if (c->n_memo < TT_MAX_MEMO) {
                        snprintf(c->memo[c->n_memo].key, sizeof c->memo[0].key, "%s", key);
                        c->memo[c->n_memo++].cost = *out;
                }
        }
        tl_job_fini(&job);
        return rc == 0 ? 0 : rc == -EINVAL ? 2 : 1;
}

/* Add count programs of label costing ns, program_ns of it their
 * per-program costs, to the breakdown ps (a new label at its end; one
 * beyond TT_MAX_PARTS counted in the last). */
static void parts_add(struct tt_parts *ps, const char *label, double count, double ns,
                      double program_ns)
{
        int i = 0;
        while (i < ps->n && strcmp(ps->p[i].label, label) != 0)
                i++;
        if (i == ps->n) {
                if (ps->n == TT_MAX_PARTS)
                        i = ps->n - 1;
                else
                        ps->p[ps->n++] = (struct tt_part){ .label = label };
        }
        ps->p[i].count += count;
        ps->p[i].ns += ns;
        ps->p[i].program_ns += program_ns;
}

/* The programs' total cost, with or without those labelled "sdpa"; each
 * added c->part_w times to the breakdown c->parts, if any. */
static int run_progs(struct tt_runner *c, const struct tt_prog *p, int n, double program_ns,
                     int sdpa, struct tt_cost *sum)
{
        *sum = (struct tt_cost){ 0 };
        for (int i = 0; i < n; i++) {
                bool is_sdpa = strcmp(p[i].label, "sdpa") == 0;
                if (sdpa >= 0 && is_sdpa != (sdpa == 1))
                        continue;
                struct tt_cost t;
                double pns = p[i].fused ? 0 : program_ns;
                int rc = run_prog(c, &p[i], pns, &t);
                if (rc)
                        return rc;
                sum->ns += t.ns;
                sum->j += t.j;
                if (c->parts)
                        parts_add(c->parts, p[i].label, p[i].fused ? 0 : c->part_w,
                                  c->part_w * t.ns, c->part_w * pns);
        }
        return 0;
}

/* ---- the demo's prefetcher (docs/adr/0049) ---- */

#define PF_LAYERS 3                  /* layers in a row the stream is followed over */

/* The earliest time from t at which a weight of `need` bytes fits the
 * buffer beside the weights [0, q) fetched before it, each held from its
 * fetch until its matmul's end done[]: at t or at one of those ends. */
static double pf_room(const double *done, const int64_t *size, int q, int64_t need, double t)
{
        double best = -1;
        for (int c = -1; c < q; c++) {
                double at = c < 0 ? t : done[c];
                if (at < t || (best >= 0 && at >= best))
                        continue;
                int64_t held = 0;
                for (int r = 0; r < q; r++)
                        if (done[r] > at)
                                held += size[r];
                if (held + need <= TT_GALAXY_GLOBAL_CB_BYTES)
                        best = at;
        }
        return best < 0 ? t : best;
}

/* The time a layer of the programs p[0, n) waits on the prefetcher, ns,
 * in the steady state of PF_LAYERS layers in a row: the prefetcher reads
 * the matmuls' weights in their order, layer after layer, without a
 * pause but for room in the global circular buffer (TT_GALAXY_GLOBAL_
 * CB_BYTES; a weight held from its fetch until its matmul ends, one
 * larger than the buffer taken as the buffer's size); a matmul ends
 * at its own time after it starts, or one ring step (its time / 24)
 * after the last of its weight arrives, whichever is later. Every
 * program's time (the SDPA's at the layer's context) and each weight's
 * fetch (its op=prefetch program) are the runner's; *fetch_j is the
 * fetches' energy above the static power (which the layer's programs
 * count already). 0, 2 or 1. */
static int prefetch_wait(struct tt_runner *c, const struct tt_prog *p, int n, double program_ns,
                         double *wait, double *fetch_j)
{
        double d[TT_MAX_PROGS], fetch[TT_MAX_PROGS], sum = 0;
        int w = 0;
        int64_t size[TT_MAX_PROGS];
        *wait = *fetch_j = 0;
        for (int i = 0; i < n; i++) {
                struct tt_cost t;
                int rc = run_prog(c, &p[i], p[i].fused ? 0 : program_ns, &t);
                if (rc)
                        return rc;
                d[i] = t.ns;
                sum += t.ns;
                if (!p[i].prefetched)
                        continue;
                struct tt_prog f = p[i];
                snprintf(f.sets[0], sizeof f.sets[0], "op=prefetch");
                f.prefetched = false;
                if ((rc = run_prog(c, &f, 0, &t)))
                        return rc;
                fetch[w] = t.ns;
                *fetch_j += t.dyn_j;
                size[w] = p[i].weight_bytes < TT_GALAXY_GLOBAL_CB_BYTES ? p[i].weight_bytes :
                          TT_GALAXY_GLOBAL_CB_BYTES;
                w++;
        }
        if (!w)
                return 0;
        double done[PF_LAYERS * TT_MAX_PROGS], got[PF_LAYERS * TT_MAX_PROGS], t = 0, pf = 0;
        int64_t sizes[PF_LAYERS * TT_MAX_PROGS];
        double ends[PF_LAYERS];
        int q = 0, fetched = 0;
        for (int l = 0; l < PF_LAYERS; l++) {
                for (int i = 0; i < n; i++) {
                        if (!p[i].prefetched) {
                                t += d[i];
                                continue;
                        }
                        /* the prefetcher catches up to this weight (it ran ahead
                         * as far as the buffer let it) */
                        for (; fetched <= q; fetched++) {
                                sizes[fetched] = size[fetched % w];
                                double start = pf_room(done, sizes, fetched, sizes[fetched], pf);
                                pf = got[fetched] = start + fetch[fetched % w];
                                done[fetched] = 1e300;
                        }
                        double end = t + d[i], paced = got[q] + d[i] / 24;
                        t = done[q] = end > paced ? end : paced;
                        q++;
                }
                ends[l] = t;
        }
        double layer = ends[PF_LAYERS - 1] - ends[PF_LAYERS - 2];
        *wait = layer > sum ? layer - sum : 0;
        return 0;
}

/* One layer's programs at (ff13, ff2) for `batch` users: all but SDPA
 * (sdpa 0) or SDPA alone (1) (the last layer's MLP differs from the
 * others' in some configurations). */
static int layer_time(struct tt_runner *c, const struct tt_ask *a, int64_t batch, bool prefill,
                      int64_t past, tl_dtype ff13, tl_dtype ff2, double program_ns, int sdpa,
                      struct tt_cost *ns)
{
        struct tt_prog p[TT_MAX_PROGS];
        int n = tt_layer_progs(&c->shard, &a->prec, &c->tp, prefill, batch, past, ff13, ff2, p);
        int rc = run_progs(c, p, n, program_ns, sdpa, ns);
        double wait = 0, fetch_j = 0;
        if (!rc && sdpa == 0)
                rc = prefetch_wait(c, p, n, program_ns, &wait, &fetch_j);
        ns->ns += wait;
        ns->j += fetch_j;
        if (c->parts && wait >= 1)
                parts_add(c->parts, "prefetch_wait", 0, c->part_w * wait, 0);
        return rc;
}

static int head_time(struct tt_runner *c, const struct tt_ask *a, int64_t rows, double program_ns,
                     struct tt_cost *ns)
{
        struct tt_prog p[TT_MAX_PROGS];
        int n = tt_head_progs(&c->shard, &a->prec, &c->tp, rows, p);
        return run_progs(c, p, n, program_ns, -1, ns);
}

/* Layers x one layer's non-SDPA programs, the last layer's difference,
 * all lf times (a prefill simulated shorter and scaled), and the head:
 * the part of an iteration that does not grow with context. */
static int fixed_part(struct tt_runner *c, const struct tt_ask *a, int64_t batch, bool prefill,
                      int64_t len, double pns, double lf, struct tt_cost *ns)
{
        const struct tt_precision *p = &a->prec;
        struct tt_cost layer, last = { 0 }, head;
        double layers = (double)a->m->layers, others = p->last_mlp_bfp8 ? layers - 1 : layers;
        c->part_w = others * lf;
        int rc = layer_time(c, a, batch, prefill, len, p->w[TT_W_FF13], p->w[TT_W_FF2], pns, 0,
                            &layer);
        c->part_w = lf;
        if (!rc && p->last_mlp_bfp8)
                rc = layer_time(c, a, batch, prefill, len, TL_BFP8_B, TL_BFP8_B, pns, 0, &last);
        c->part_w = 1;
        if (!rc)
                rc = head_time(c, a, prefill ? 1 : batch, pns, &head);
        if (rc)
                return rc;
        ns->ns = (others * layer.ns + last.ns) * lf + head.ns;
        ns->j = (others * layer.j + last.j) * lf + head.j;
        return 0;
}

static int sdpa_time(struct tt_runner *c, const struct tt_ask *a, int64_t batch, bool prefill,
                     int64_t len, double pns, struct tt_cost *ns)
{
        const struct tt_precision *p = &a->prec;
        return layer_time(c, a, batch, prefill, len, p->w[TT_W_FF13], p->w[TT_W_FF2], pns, 1, ns);
}

/* The per-program cost of a decode: the demo's documented one for its
 * programs on a Galaxy, unless --set decode_program_ns; else the fit's. */
static double decode_cost(const struct tt_runner *r)
{
        return !r->decode_ns_given && galaxy_demo(&r->shard, &r->tp) ?
               TT_GALAXY_DEMO_PROGRAM_NS : r->decode_ns;
}

/* Whether the prefill of a prompt's first n tokens runs from a trace:
 * --set prefill_trace, else as the deployment does. The llama3_70b_galaxy
 * demo captures and replays its prefill up to TT_GALAXY_TRACED_PREFILL_MAX
 * tokens (its generator's prefill_forward_text). tt-transformers, as the
 * calibration rows ran it, traces its decode only (docs/adr/0053). */
static bool prefill_traced(const struct tt_runner *r, int64_t n)
{
        if (r->prefill_trace != TT_TRACE_AUTO)
                return r->prefill_trace == TT_TRACE_ON;
        return galaxy_demo(&r->shard, &r->tp) && n <= TT_GALAXY_TRACED_PREFILL_MAX;
}

/* The per-program cost of that prefill: a traced program's is the
 * deployment's traced decode cost (decode_cost); an untraced one's is
 * prefill_program_ns, the host's dispatch of each op included. */
static double prefill_cost(const struct tt_runner *r, int64_t n)
{
        return prefill_traced(r, n) ? decode_cost(r) : r->prefill_ns;
}

/* t/s/u: 1 / the mean decode iteration over the generated tokens, SDPA
 * at `samples` contexts over prompt .. prompt + gen - 1, interpolated;
 * the iteration's mean energy alike, every replica's, and its average
 * power over the mean iteration (docs/energy.md). */
static int predict_decode(struct tt_runner *c, const struct tt_ask *a, struct tt_pred *o)
{
        struct tt_cost fixed, s[64];
        double layers = (double)a->m->layers, w[64] = { 0 };
        int64_t at[64];
        int k = a->gen < c->samples ? (int)a->gen : c->samples;
        if (k > 64)
                k = 64;
        o->galaxy_demo = galaxy_demo(&c->shard, &c->tp);
        c->parts = &o->decode;
        int rc = fixed_part(c, a, o->ubatch, false, a->prompt, decode_cost(c), 1, &fixed);
        c->parts = NULL;
        for (int i = 0; i < k && !rc; i++) {
                at[i] = a->prompt + (k > 1 ? (a->gen - 1) * i / (k - 1) : 0);
                rc = sdpa_time(c, a, o->ubatch, false, at[i], decode_cost(c), &s[i]);
        }
        if (rc)
                return rc;
        double sum = 0, sum_j = 0;
        for (int64_t t = 0, j = 0; t < a->gen; t++) {
                int64_t past = a->prompt + t;
                while (j + 1 < k - 1 && at[j + 1] < past)
                        j++;
                double v = s[j].ns, vj = s[j].j, x = 0, span = 1;
                if (k > 1 && at[j + 1] > at[j]) {
                        x = (double)(past - at[j]);
                        span = (double)(at[j + 1] - at[j]);
                        v += (s[j + 1].ns - s[j].ns) * x / span;
                        vj += (s[j + 1].j - s[j].j) * x / span;
                        w[j + 1] += x / span;
                }
                w[j] += 1 - x / span;
                sum += fixed.ns + layers * v;
                sum_j += fixed.j + layers * vj;
        }
        /* the breakdown's SDPA: each sampled context's programs as often as
         * the interpolation weighs them (their costs remembered) */
        c->parts = &o->decode;
        for (int i = 0; i < k && !rc; i++) {
                c->part_w = layers * w[i] / (double)a->gen;
                if (w[i] > 0)
                        rc = sdpa_time(c, a, o->ubatch, false, at[i], decode_cost(c), &s[i]);
        }
        c->parts = NULL;
        if (rc)
                return rc;
        o->iter_ms = sum / (double)a->gen / 1e6;
        o->tps_u = 1e3 / o->iter_ms;
        /* every replica decodes its own users: dp x a replica's energy */
        o->step_j = sum_j / (double)a->gen * (double)a->dp;
        o->step_w = o->step_j / (o->iter_ms * 1e-3);
        o->j_per_token = o->step_j / (double)a->batch;
        o->tdp_w = (double)c->t->system.tdp_mw / 1e3;
        return 0;
}

/* Every layer's SDPA of a causal prefill of len tokens: simulated at
 * TT_PREFILL_SIM tokens at most and scaled quadratically past it; sign
 * times that in the breakdown. */
static int prefill_sdpa(struct tt_runner *c, const struct tt_ask *a, int64_t len, double sign,
                        double pns, struct tt_cost *out)
{
        int64_t sim = len < TT_PREFILL_SIM ? len : TT_PREFILL_SIM;
        double f = (double)len / (double)sim, layers = (double)a->m->layers;
        struct tt_cost s;
        c->part_w = sign * layers * f * f;
        int rc = sdpa_time(c, a, 1, true, sim, pns, &s);
        out->ns = layers * s.ns * f * f;
        out->j = layers * s.j * f * f;
        return rc;
}

int tt_prefill_step(struct tt_runner *c, const struct tt_ask *a, int64_t q, int64_t past,
                    struct tt_cost *out)
{
        /* the programs but SDPA at q tokens (TT_PREFILL_SIM at most, scaled
         * linearly past it), the LM head once */
        int64_t len = q < TT_PREFILL_SIM ? q : TT_PREFILL_SIM;
        double f = (double)q / (double)len, pns = prefill_cost(c, past + q);
        struct tt_cost fixed, sdpa, before = { 0 };
        int rc = fixed_part(c, a, 1, true, len, pns, f, &fixed);
        if (!rc)
                rc = prefill_sdpa(c, a, past + q, 1, pns, &sdpa);
        if (!rc && past > 0)
                rc = prefill_sdpa(c, a, past, -1, pns, &before);
        if (rc)
                return rc;
        out->ns = fixed.ns + sdpa.ns - before.ns;
        out->j = fixed.j + sdpa.j - before.j;
        return 0;
}

/* TTFT: one user's prefill (simulated at TT_PREFILL_SIM tokens and scaled
 * past it: linearly, SDPA quadratically). */
static int predict_ttft(struct tt_runner *c, const struct tt_ask *a, struct tt_pred *o)
{
        struct tt_cost cost = { 0 };
        o->scaled = a->prompt > TT_PREFILL_SIM;
        o->prefill_traced = prefill_traced(c, a->prompt);
        c->parts = &o->prefill;
        int rc = tt_prefill_step(c, a, a->prompt, 0, &cost);
        c->parts = NULL;
        o->ttft_ms = cost.ns / 1e6;
        return rc;
}

int tt_decode_step(struct tt_runner *r, const struct tt_ask *a, int64_t batch, int64_t past,
                   struct tt_cost *out)
{
        struct tt_cost fixed, sdpa;
        int rc = fixed_part(r, a, batch, false, past, decode_cost(r), 1, &fixed);
        if (!rc)
                rc = sdpa_time(r, a, batch, false, past, decode_cost(r), &sdpa);
        if (rc)
                return rc;
        out->ns = fixed.ns + (double)a->m->layers * sdpa.ns;
        out->j = fixed.j + (double)a->m->layers * sdpa.j;
        return 0;
}

json_t *tt_energy_json(json_t *o, const struct tt_pred *p)
{
        if (!o)
                return NULL;
        json_object_set_new(o, "decode_step_j", jsonw_real(p->step_j));
        json_object_set_new(o, "decode_power_w", jsonw_fixed(p->step_w, 2));
        json_object_set_new(o, "j_per_token", jsonw_real(p->j_per_token));
        json_object_set_new(o, "tdp_w", p->tdp_w > 0 ? jsonw_real(p->tdp_w) : json_null());
        return o;
}

void tt_tdp_text(char *buf, size_t len, const struct tt_pred *p)
{
        if (p->tdp_w > 0)
                snprintf(buf, len, "%.0f", p->tdp_w);
        else
                snprintf(buf, len, "-");
}

void tt_runner_options(struct params *ps, struct diag *d, struct tt_runner *r)
{
        uint64_t samples = 5, dns = TT_FIT_DECODE_PROGRAM_NS, pns = TT_FIT_PREFILL_PROGRAM_NS;
        params_u64(ps, "samples", 5, 1, 64, &samples, d);
        params_u64(ps, "decode_program_ns", TT_FIT_DECODE_PROGRAM_NS, 0, 10000000, &dns, d);
        params_u64(ps, "prefill_program_ns", TT_FIT_PREFILL_PROGRAM_NS, 0, 10000000, &pns, d);
        const char *given = NULL, *trace = "auto";
        params_str(ps, "decode_program_ns", NULL, &given);
        params_str(ps, "prefill_trace", "auto", &trace);
        r->decode_ns_given = given != NULL;
        r->prefill_trace = strcmp(trace, "1") == 0 ? TT_TRACE_ON :
                           strcmp(trace, "0") == 0 ? TT_TRACE_OFF : TT_TRACE_AUTO;
        if (strcmp(trace, "auto") != 0 && r->prefill_trace == TT_TRACE_AUTO)
                diag_error(d, "--set prefill_trace=%s: expected auto, 0 or 1", trace);
        r->d = d;
        r->samples = (int)samples;
        r->decode_ns = (double)dns;
        r->prefill_ns = (double)pns;
}

int tt_prepare(struct tt_runner *r, const struct topo *t, const struct tt_ask *a,
               struct tt_pred *out)
{
        memset(out, 0, sizeof *out);
        r->t = t;
        r->n_memo = 0;
        r->parts = NULL;
        r->fail = TT_FAIL_NONE;
        r->why[0] = 0;
        return split(r, a, out) && fits(r, a, out) ? 0 : 2;
}

int64_t tt_kv_blocks(const struct tt_runner *r, const struct tt_pred *p)
{
        const struct tt_mem *m = &p->mem;
        uint64_t used = sat_add_u64(m->weights, m->act);
        if (m->kv == 0 || used >= m->capacity)
                return 0;
        uint64_t blocks = (m->capacity - used) / m->kv;
        blocks = sat_mul_u64(blocks, r->tp.a0 ? (uint64_t)r->tp.a1 : 1);
        return blocks > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)blocks;
}

int tt_predict(struct tt_runner *r, const struct topo *t, const struct tt_ask *a,
               struct tt_pred *out)
{
        if (tt_prepare(r, t, a, out))
                return 2;
        int rc = predict_decode(r, a, out);
        if (!rc)
                rc = predict_ttft(r, a, out);
        if (rc)
                return rc;
        out->tok_s = out->tps_u * (double)a->batch;
        out->tok_s_chip = out->tok_s / (double)out->chips;
        return 0;
}
