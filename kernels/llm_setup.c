/* kernels/llm_setup.c: llm_layer's host side (see llm.h), run before the
 * launch: the parameters and model presets, the checks of what the
 * tensor-parallel split needs, and the HBM tensors. The device code is
 * kernels/llm_layer.c. */
#include <math.h>
#include <stddef.h>
#include <string.h>

#include "llm.h"

/* The published configurations, from each model's config.json on the
 * Hugging Face hub (the `hf` field names the repository; the file is its
 * config.json): hidden_size, num_attention_heads, num_key_value_heads,
 * head_dim (hidden_size / num_attention_heads where config.json has no
 * head_dim), intermediate_size, num_hidden_layers, vocab_size,
 * rope_theta, rope_scaling.factor, tie_word_embeddings, and Qwen2's
 * attention biases (modeling_qwen2: q_proj, k_proj, v_proj with
 * bias=True). docs/models.md lists them. llm_layer computes Llama 3's
 * layer for all of them (no biases; RoPE at the preset's theta, without
 * the long-context scaling, which changes no shape); the biases, tied
 * embeddings and scaling matter to the whole-model programs
 * (src/llm/tt_llm_model.c). */
#define P(n, h, q, kv, d, f, l, v, th, fac, tied, bias, hf) \
        { n, h, q, kv, d, f, l, v, th, fac, tied, bias, hf }
const struct llm_model llm_models[] = {
        P("llama3-8b", 4096, 32, 8, 128, 14336, 32, 128256, 500000, 0, false, false,
          "meta-llama/Meta-Llama-3-8B"),
        P("llama3-70b", 8192, 64, 8, 128, 28672, 80, 128256, 500000, 0, false, false,
          "meta-llama/Meta-Llama-3-70B"),
        P("llama31-405b", 16384, 128, 8, 128, 53248, 126, 128256, 500000, 8, false, false,
          "meta-llama/Llama-3.1-405B"),
        P("qwen2-72b", 8192, 64, 8, 128, 29568, 80, 152064, 1000000, 0, false, true,
          "Qwen/Qwen2-72B"),
        P("mistral-7b", 4096, 32, 8, 128, 14336, 32, 32000, 10000, 0, false, false,
          "mistralai/Mistral-7B-v0.1"),
        P("llama3.2-1b", 2048, 32, 8, 64, 8192, 16, 128256, 500000, 32, true, false,
          "meta-llama/Llama-3.2-1B"),
        P("llama3.2-3b", 3072, 24, 8, 128, 8192, 28, 128256, 500000, 32, true, false,
          "meta-llama/Llama-3.2-3B"),
        P("llama3.1-8b", 4096, 32, 8, 128, 14336, 32, 128256, 500000, 8, false, false,
          "meta-llama/Llama-3.1-8B"),
        P("llama3.1-70b", 8192, 64, 8, 128, 28672, 80, 128256, 500000, 8, false, false,
          "meta-llama/Llama-3.1-70B"),
        P("llama3.3-70b", 8192, 64, 8, 128, 28672, 80, 128256, 500000, 8, false, false,
          "meta-llama/Llama-3.3-70B-Instruct"),
        P("qwen2.5-7b", 3584, 28, 4, 128, 18944, 28, 152064, 1000000, 0, false, true,
          "Qwen/Qwen2.5-7B"),
        P("qwen2.5-72b", 8192, 64, 8, 128, 29568, 80, 152064, 1000000, 0, false, true,
          "Qwen/Qwen2.5-72B"),
        P(NULL, 0, 0, 0, 0, 0, 0, 0, 0, 0, false, false, NULL),
};
#undef P

const struct llm_model *llm_model_find(const char *name)
{
        for (const struct llm_model *m = llm_models; m->name; m++)
                if (strcmp(m->name, name) == 0)
                        return m;
        return NULL;
}

/* "none", then llm_models' names in order (tests/tt_llm.sh checks it). */
static const char *const llm_model_names[] = {
        "none",        "llama3-8b",   "llama3-70b",   "llama31-405b", "qwen2-72b",
        "mistral-7b",  "llama3.2-1b", "llama3.2-3b",  "llama3.1-8b",  "llama3.1-70b",
        "llama3.3-70b", "qwen2.5-7b", "qwen2.5-72b",  NULL };
static const char *const llm_dtypes[] = { "fp32", "bf16", "fp16", NULL };
/* Weights may also be block floats (tl_dtype order: the index is the dtype). */
static const char *const llm_wdtypes[] = { "fp32", "bf16", "fp16", "bfp8_b", "bfp4_b", NULL };
/* In enum llm_part order; "other" is never run alone. */
static const char *const llm_parts[] = { "all", "gemm", "attention", "norm", "allreduce", NULL };

const struct tl_param llm_params[] = {
        { "model", TL_PARAM_CHOICE, 0, 0, 0, llm_model_names,
          "preset of hidden, q_heads, kv_heads, head_dim, ffn (explicit values win)" },
        { "hidden", TL_PARAM_INT, 256, 2, 1 << 20, NULL, "hidden size H" },
        { "q_heads", TL_PARAM_INT, 4, 1, 65536, NULL, "query heads Hq" },
        { "kv_heads", TL_PARAM_INT, 2, 1, 65536, NULL, "KV heads Hkv (divides q_heads)" },
        { "head_dim", TL_PARAM_INT, 64, 2, 1024, NULL, "head dimension D (even)" },
        { "ffn", TL_PARAM_INT, 512, 1, 1 << 22, NULL, "MLP width F" },
        { "batch", TL_PARAM_INT, 1, 1, 65536, NULL, "batch B" },
        { "q_len", TL_PARAM_INT, 1, 1, 1 << 20, NULL, "new tokens Sq per sequence (1: decode)" },
        { "past_len", TL_PARAM_INT, 0, 0, 1 << 24, NULL, "cached positions P" },
        { "dtype", TL_PARAM_CHOICE, 1, 0, 0, llm_dtypes, "activations, KV cache and outputs" },
        { "weight_dtype", TL_PARAM_CHOICE, 1, 0, 0, llm_wdtypes, "weights and norm weights" },
        { "tp", TL_PARAM_INT, 1, 1, 4096, NULL,
          "tensor-parallel ranks: contiguous blocks of the machine's PEs (SIPs, else cubes)" },
        { "part", TL_PARAM_CHOICE, 0, 0, 0, llm_parts,
          "all: the layer; gemm, attention, norm, allreduce: that class of ops alone (timing)" },
        { NULL, 0, 0, 0, 0, NULL, NULL },
};

/* A shape parameter: --set, else the model preset, else the input file, else the default. */
static int64_t shape_param(tl_setup *s, const struct llm_model *m, const char *param,
                           int64_t preset, const char *tensor, int axis)
{
        if (m && !tl_setup_is_set(s, param))
                return preset;
        return tl_setup_dim(s, param, tensor, axis);
}

/* The preset --set model= chose, or NULL for none. */
static const struct llm_model *chosen_model(tl_setup *s)
{
        int mi = tl_setup_choice(s, "model");
        return mi > 0 ? &llm_models[mi - 1] : NULL;
}

static bool divides(tl_setup *s, const char *a, int64_t av, const char *b, int64_t bv)
{
        if (bv % av == 0)
                return true;
        tl_setup_error(s, "%s (%lld) must divide %s (%lld)", a, (long long)av, b, (long long)bv);
        return false;
}

/* ---- what a PE holds in TCM ------------------------------------------------------
 * The bytes llm_layer.c's phases allocate on a PE, so that a shape the
 * machine cannot hold is rejected before the launch (a run would stop at
 * its first PE). Each follows the phase's code: keep them in step. */

static uint64_t f32(int64_t n)
{
        return (uint64_t)n * 4;
}

/* RoPE of r rows of u [r, D] (rope()): the positions, angles, cos, sin
 * (one row when one_pos), and six [r, D/2] products and sums. */
static uint64_t rope_bytes(int64_t r, int64_t d, bool one_pos)
{
        int64_t pr = one_pos ? 1 : r, half = d / 2;
        return f32(pr) + 3 * f32(pr * half) + 6 * f32(r * half);
}

/* Peak scratch of an RMSNorm block (rmsnorm_rows()) on a PE of a block
 * of `per`: x, x*x, mean, +eps, rsqrt, x*inv, the weights, the product. */
static uint64_t norm_bytes(const struct llm_args *a, int per, uint64_t tcm)
{
        (void)tcm;
        if (a->part != LLM_PART_ALL && a->part != LLM_PART_NORM)
                return 0;
        int64_t hd = a->hidden, share = (a->batch * a->sq + per - 1) / per;
        int64_t n = LLM_NORM_ELEMS / hd;
        n = n < 1 ? 1 : n > share ? share : n;
        return tl_dtype_bytes(a->dt, n * hd, hd) + 3 * f32(n * hd) + 3 * f32(n) +
               tl_dtype_bytes(a->wdt, hd, hd);
}

/* Peak scratch of a prefill GEMM phase (plan.acc_scratch): the two
 * accumulators and the epilogue of a block (silu(gate) and its product
 * with up; 0 for decode, whose accumulators are persistent TCM. */
static uint64_t gemm_scratch_bytes(const struct llm_args *a)
{
        struct llm_gemm_plan p = llm_gemm_plan_of(a->sq, a->dt, a->wdt);
        return p.acc_scratch ? 4 * f32(LLM_TM * p.tn) : 0;
}

/* Peak scratch of the phases whose blocks grow with head_dim: new keys
 * (new_kv()), an attention item's queries, one head at a time, its state
 * (queries()), its score tiles (attend(); prefill: beside its two score
 * buffers, attention()), and the merge of a decode unit's partial states
 * (merge_state()). */
static uint64_t head_bytes(const struct llm_args *a, int per, uint64_t tcm)
{
        (void)tcm;
        int64_t d = a->d, half = d / 2, nk = a->sq < LLM_Q_ROWS ? a->sq : LLM_Q_ROWS;
        bool decode = a->sq == 1, all = a->part == LLM_PART_ALL;
        uint64_t peak = 0, n;
        if (all || a->part == LLM_PART_OTHER) {
                n = 2 * tl_dtype_bytes(a->dt, nk * d, d) + rope_bytes(nk, d, false);
                peak = n > peak ? n : peak;
        }
        if (!all && a->part != LLM_PART_ATTENTION)
                return peak;
        int64_t r = decode ? a->group : nk, keys = a->past + (decode ? 1 : a->sq);
        int64_t rows = llm_attn_rows(a->sq, a->group);
        int64_t tile = keys < LLM_KV_TILE ? keys : LLM_KV_TILE;
        n = tl_dtype_bytes(a->dt, r * d, decode ? r * d : d) + rope_bytes(r, d, decode) +
            2 * f32(r * half) + 2 * f32(rows) + f32(rows * d);
        uint64_t tiles_n = f32(rows * tile);
        n = (n > tiles_n ? n : tiles_n) + (decode ? 0 : 2 * f32(rows * LLM_KV_TILE));
        peak = n > peak ? n : peak;
        int64_t units = a->batch * (a->hkv / a->tp), tiles = (keys + LLM_KV_TILE - 1) / LLM_KV_TILE;
        int64_t splits = units > 0 ? per / units : 0;
        if (decode && (splits < tiles ? splits : tiles) > 1) {
                n = 4 * f32(r * d) + 13 * f32(r);
                peak = n > peak ? n : peak;
        }
        return peak;
}

/* The largest multiple of step in [step, the field's value] that the
 * field of a (at byte offset off) may take for need(a, per) to fit in
 * cap; 0 if none. need grows with the field. */
static int64_t largest_fit(struct llm_args a, size_t off, int64_t step,
                           uint64_t (*need)(const struct llm_args *, int, uint64_t), int per,
                           uint64_t cap, uint64_t tcm)
{
        int64_t *field = (int64_t *)(void *)((char *)&a + off);
        int64_t lo = 0, hi = *field / step;  /* in steps: lo fits (0: none), hi does not */
        while (hi - lo > 1) {
                int64_t mid = lo + (hi - lo) / 2;
                *field = mid * step;
                if (need(&a, per, tcm) <= cap)
                        lo = mid;
                else
                        hi = mid;
        }
        return lo * step;
}

/* Persistent TCM (llm_persistent_bytes), with the split GEMM's buffers
 * when they fit the machine's tcm bytes (llm_split_fits). */
static uint64_t persistent_need(const struct llm_args *a, int per, uint64_t tcm)
{
        (void)per;
        return llm_persistent_bytes(a, llm_split_fits(a, tcm));
}

/* Reject a layer the machine cannot run: more ranks than PEs, or (when
 * shape_ok: the shape passed its own checks) blocks that do not fit a
 * PE's TCM, naming the parameter and its largest value that fits. */
static void check_machine(tl_setup *s, const struct llm_args *a, bool shape_ok)
{
        tl_machine mc = tl_setup_machine(s);
        int64_t pes = (int64_t)mc.cubes * mc.pes_per_cube;
        if (a->tp > pes) {
                tl_setup_error(s, "tp (%d) must be at most the machine's PEs (%lld)", a->tp,
                               (long long)pes);
                return;
        }
        if (!shape_ok)
                return;              /* the sizes below assume the shape's rules */
        int per = (int)(pes / a->tp);
        const struct {
                const char *param;   /* the parameter blamed */
                size_t off;          /* its field in struct llm_args */
                int64_t step;        /* the values it may take: multiples of this */
                uint64_t (*need)(const struct llm_args *, int, uint64_t); /* bytes, growing with it
                                      * (given the persistent TCM) */
                uint64_t cap;        /* what the machine has */
                const char *what;    /* what needs the bytes */
                const char *mem;     /* "TCM" or "scratch" */
                const char *cap_name; /* what cap is: "beside scratch", "ceiling" */
                const char *with;    /* the other parameters the limit depends on */
        } checks[] = {
                { "head_dim", offsetof(struct llm_args, d), 2, persistent_need,
                  (uint64_t)mc.tcm_alloc_bytes,
                  "a PE's GEMM and attention buffers need", "TCM", "beside scratch",
                  "dtype and q_heads / kv_heads" },
                { "hidden", offsetof(struct llm_args, hidden), 1, norm_bytes,
                  (uint64_t)mc.scratch_bytes,
                  "an RMSNorm block needs", "scratch", "ceiling",
                  "dtype and weight_dtype" },
                { "head_dim", offsetof(struct llm_args, d), 2, head_bytes,
                  (uint64_t)mc.scratch_bytes,
                  "RoPE and attention blocks need", "scratch", "ceiling",
                  "dtype, q_len and q_heads / kv_heads" },
        };
        for (size_t i = 0; i < sizeof checks / sizeof checks[0]; i++) {
                uint64_t n = checks[i].need(a, per, (uint64_t)mc.tcm_alloc_bytes);
                if (n <= checks[i].cap)
                        continue;
                int64_t value = *(const int64_t *)(const void *)((const char *)a + checks[i].off);
                tl_setup_error(s, "%s (%lld): %s %llu bytes of %s, more than the %llu %s; %s at "
                               "most %lld fits (with this %s)", checks[i].param, (long long)value,
                               checks[i].what, (unsigned long long)n, checks[i].mem,
                               (unsigned long long)checks[i].cap, checks[i].cap_name,
                               checks[i].param,
                               (long long)largest_fit(*a, checks[i].off, checks[i].step,
                                                      checks[i].need, per, checks[i].cap,
                                                      (uint64_t)mc.tcm_alloc_bytes),
                               checks[i].with);
        }
        uint64_t g = gemm_scratch_bytes(a);
        if (g > (uint64_t)mc.scratch_bytes)
                tl_setup_error(s, "q_len (%lld): prefill GEMM accumulators and their epilogue "
                               "need %llu bytes of scratch, more than the %llu ceiling (with "
                               "this dtype and weight_dtype; decode, q_len 1, keeps them in TCM)",
                               (long long)a->sq, (unsigned long long)g,
                               (unsigned long long)mc.scratch_bytes);
}

void llm_setup(tl_setup *s, void *argp)
{
        struct llm_args *a = argp;
        const struct llm_model *m = chosen_model(s);
        a->hidden = shape_param(s, m, "hidden", m ? m->hidden : 0, "x", 2);
        a->hq = shape_param(s, m, "q_heads", m ? m->q_heads : 0, "wq", 1);
        a->hkv = shape_param(s, m, "kv_heads", m ? m->kv_heads : 0, "k_cache", 1);
        a->d = shape_param(s, m, "head_dim", m ? m->head_dim : 0, "k_cache", 3);
        a->ffn = shape_param(s, m, "ffn", m ? m->ffn : 0, "w_gate", 1);
        if (!m && !tl_setup_is_set(s, "q_heads") && a->d > 0 && tl_setup_input_dim(s, "wq", 1) > 0)
                a->hq = tl_setup_input_dim(s, "wq", 1) / a->d;
        a->batch = tl_setup_dim(s, "batch", "x", 0);
        a->sq = tl_setup_dim(s, "q_len", "x", 1);
        a->past = tl_setup_dim(s, "past_len", "k_cache", 2);
        a->dt = (tl_dtype)tl_setup_choice(s, "dtype");
        a->wdt = (tl_dtype)tl_setup_choice(s, "weight_dtype");
        a->tp = (int)tl_setup_int(s, "tp");
        a->part = (enum llm_part)tl_setup_choice(s, "part");
        if (a->hq <= 0 || a->hkv <= 0 || a->d <= 0) {
                tl_setup_error(s, "q_heads, kv_heads and head_dim must be positive");
                return;
        }
        bool ok = divides(s, "kv_heads", a->hkv, "q_heads", a->hq);
        ok &= divides(s, "tp", a->tp, "kv_heads", a->hkv);
        ok &= divides(s, "tp", a->tp, "ffn", a->ffn);
        if (a->d % 2 != 0) {
                tl_setup_error(s, "head_dim (%lld) must be even (RoPE rotates its halves)",
                               (long long)a->d);
                ok = false;
        }
        a->group = a->hq / a->hkv;
        if (a->group > LLM_MAX_GROUP) {
                tl_setup_error(s, "q_heads / kv_heads (%lld) must be at most %d",
                               (long long)a->group, LLM_MAX_GROUP);
                ok = false;
        }
        check_machine(s, a, ok);
        a->scale = (float)(1.0 / sqrt((double)a->d));
        a->log_theta = (float)log(m ? m->rope_theta : LLM_ROPE_THETA);

        int64_t b = a->batch, sq = a->sq, p = a->past, hd = a->hidden, d = a->d, f = a->ffn;
        int64_t qd = a->hq * d, kd = a->hkv * d, t = b * sq;
        tl_dtype dt = a->dt, wdt = a->wdt;
        a->x = tl_setup_tensor(s, "x", TL_INPUT, dt, 3, (int64_t[]){ b, sq, hd });
        a->wq = tl_setup_tensor(s, "wq", TL_INPUT, wdt, 2, (int64_t[]){ hd, qd });
        a->wk = tl_setup_tensor(s, "wk", TL_INPUT, wdt, 2, (int64_t[]){ hd, kd });
        a->wv = tl_setup_tensor(s, "wv", TL_INPUT, wdt, 2, (int64_t[]){ hd, kd });
        a->wo = tl_setup_tensor(s, "wo", TL_INPUT, wdt, 2, (int64_t[]){ qd, hd });
        a->wg = tl_setup_tensor(s, "w_gate", TL_INPUT, wdt, 2, (int64_t[]){ hd, f });
        a->wu = tl_setup_tensor(s, "w_up", TL_INPUT, wdt, 2, (int64_t[]){ hd, f });
        a->wd = tl_setup_tensor(s, "w_down", TL_INPUT, wdt, 2, (int64_t[]){ f, hd });
        a->attn_norm = tl_setup_tensor(s, "attn_norm", TL_INPUT, wdt, 1, (int64_t[]){ hd });
        a->mlp_norm = tl_setup_tensor(s, "mlp_norm", TL_INPUT, wdt, 1, (int64_t[]){ hd });
        if (p > 0) {
                int64_t cache[4] = { b, a->hkv, p, d };
                a->k_cache = tl_setup_tensor(s, "k_cache", TL_INPUT, dt, 4, cache);
                a->v_cache = tl_setup_tensor(s, "v_cache", TL_INPUT, dt, 4, cache);
        }
        a->out = tl_setup_tensor(s, "out", TL_OUTPUT, dt, 3, (int64_t[]){ b, sq, hd });
        int64_t knew[4] = { b, a->hkv, sq, d };
        a->k_new = tl_setup_tensor(s, "k_new", TL_OUTPUT, dt, 4, knew);
        a->v_new = tl_setup_tensor(s, "v_new", TL_OUTPUT, dt, 4, knew);
        /* the temporaries, [t, cols] each */
        struct {
                const char *name;    /* its file's stem */
                tl_tensor **at;      /* its field of a */
                int64_t cols;        /* its columns */
        } temps[] = { { "n1", &a->n1, hd },  { "n2", &a->n2, hd },     { "h", &a->h, hd },
                      { "q", &a->q, qd },    { "attn", &a->attn, qd }, { "k", &a->kt, kd },
                      { "v", &a->vt, kd },   { "act", &a->act, f } };
        size_t n_temps = sizeof temps / sizeof temps[0];
        for (size_t i = 0; i < n_temps; i++)
                *temps[i].at = tl_setup_tensor(s, temps[i].name, TL_TEMP, dt, 2,
                                               (int64_t[]){ t, temps[i].cols });
        /* The outputs and temporaries are written by some PEs and read by
         * PEs of every cube: one copy, interleaved (replicated, a cube
         * would read its own copy, never written; docs/adr/0017). */
        tl_setup_interleave(s, a->out);
        tl_tensor *kv_new[] = { a->k_new, a->v_new };
        for (size_t i = 0; i < 2; i++) {
                /* Prefill: new keys and values split by KV head over the
                 * cubes, so that attention reads them from its own cube's
                 * HBM (attention_prefill; docs/adr/0042). */
                if (a->sq > 1)
                        tl_setup_shard(s, kv_new[i], 1, 0);
                else
                        tl_setup_interleave(s, kv_new[i]);
        }
        for (size_t i = 0; i < n_temps; i++)
                tl_setup_interleave(s, *temps[i].at);
}

const struct tl_param llm_head_params[] = {
        { "model", TL_PARAM_CHOICE, 0, 0, 0, llm_model_names,
          "preset of hidden and vocab (explicit values win)" },
        { "hidden", TL_PARAM_INT, 256, 1, 1 << 20, NULL, "hidden size H" },
        { "vocab", TL_PARAM_INT, 1024, 1, 1 << 24, NULL, "vocabulary V" },
        { "batch", TL_PARAM_INT, 1, 1, 65536, NULL, "sequences B (one row each)" },
        { "dtype", TL_PARAM_CHOICE, 1, 0, 0, llm_dtypes, "x and logits" },
        { "weight_dtype", TL_PARAM_CHOICE, 1, 0, 0, llm_wdtypes, "w_lm" },
        { NULL, 0, 0, 0, 0, NULL, NULL },
};

void llm_head_setup(tl_setup *s, void *argp)
{
        struct llm_head_args *a = argp;
        const struct llm_model *m = chosen_model(s);
        a->hidden = shape_param(s, m, "hidden", m ? m->hidden : 0, "x", 1);
        a->vocab = shape_param(s, m, "vocab", m ? m->vocab : 0, "w_lm", 1);
        a->batch = tl_setup_dim(s, "batch", "x", 0);
        a->dt = (tl_dtype)tl_setup_choice(s, "dtype");
        a->wdt = (tl_dtype)tl_setup_choice(s, "weight_dtype");
        a->x = tl_setup_tensor(s, "x", TL_INPUT, a->dt, 2, (int64_t[]){ a->batch, a->hidden });
        a->w = tl_setup_tensor(s, "w_lm", TL_INPUT, a->wdt, 2, (int64_t[]){ a->hidden, a->vocab });
        a->logits = tl_setup_tensor(s, "logits", TL_OUTPUT, a->dt, 2,
                                    (int64_t[]){ a->batch, a->vocab });
}
