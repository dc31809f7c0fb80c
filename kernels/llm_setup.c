/* kernels/llm_setup.c: llm_layer's host side (see llm.h), run before the
 * launch: the parameters and model presets, the checks of what the
 * tensor-parallel split needs, and the HBM tensors. The device code is
 * kernels/llm_layer.c. */
#include <math.h>
#include <string.h>

#include "llm.h"

/* The published configurations, from each model's config.json on the
 * Hugging Face hub (hidden_size, num_attention_heads, num_key_value_heads,
 * head_dim = hidden_size / num_attention_heads, intermediate_size,
 * num_hidden_layers, vocab_size):
 *   meta-llama/Meta-Llama-3-8B, meta-llama/Meta-Llama-3-70B,
 *   meta-llama/Llama-3.1-405B, Qwen/Qwen2-72B, mistralai/Mistral-7B-v0.1.
 * The layer itself is Llama 3's (RoPE theta 500000, no biases) for all of
 * them: Qwen2's QKV biases and its and Mistral's RoPE bases change no
 * GEMM shape or byte count. */
const struct llm_model llm_models[] = {
        { "llama3-8b", 4096, 32, 8, 128, 14336, 32, 128256 },
        { "llama3-70b", 8192, 64, 8, 128, 28672, 80, 128256 },
        { "llama31-405b", 16384, 128, 8, 128, 53248, 126, 128256 },
        { "qwen2-72b", 8192, 64, 8, 128, 29568, 80, 152064 },
        { "mistral-7b", 4096, 32, 8, 128, 14336, 32, 32000 },
        { NULL, 0, 0, 0, 0, 0, 0, 0 },
};

const struct llm_model *llm_model_find(const char *name)
{
        for (const struct llm_model *m = llm_models; m->name; m++)
                if (strcmp(m->name, name) == 0)
                        return m;
        return NULL;
}

static const char *const llm_model_names[] = { "none", "llama3-8b", "llama3-70b",
                                               "llama31-405b", "qwen2-72b", "mistral-7b", NULL };
static const char *const llm_dtypes[] = { "fp32", "bf16", "fp16", NULL };
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
        { "weight_dtype", TL_PARAM_CHOICE, 1, 0, 0, llm_dtypes, "weights and norm weights" },
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

static void divides(tl_setup *s, const char *a, int64_t av, const char *b, int64_t bv)
{
        if (bv % av != 0)
                tl_setup_error(s, "%s (%lld) must divide %s (%lld)", a, (long long)av, b,
                               (long long)bv);
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
        divides(s, "kv_heads", a->hkv, "q_heads", a->hq);
        divides(s, "tp", a->tp, "kv_heads", a->hkv);
        divides(s, "tp", a->tp, "ffn", a->ffn);
        if (a->d % 2 != 0)
                tl_setup_error(s, "head_dim (%lld) must be even (RoPE rotates its halves)",
                               (long long)a->d);
        a->group = a->hq / a->hkv;
        if (a->group > LLM_MAX_GROUP)
                tl_setup_error(s, "q_heads / kv_heads (%lld) must be at most %d",
                               (long long)a->group, LLM_MAX_GROUP);
        a->scale = (float)(1.0 / sqrt((double)a->d));
        a->log_theta = (float)log(LLM_ROPE_THETA);

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
        a->n1 = tl_setup_tensor(s, "n1", TL_TEMP, dt, 2, (int64_t[]){ t, hd });
        a->n2 = tl_setup_tensor(s, "n2", TL_TEMP, dt, 2, (int64_t[]){ t, hd });
        a->h = tl_setup_tensor(s, "h", TL_TEMP, dt, 2, (int64_t[]){ t, hd });
        a->q = tl_setup_tensor(s, "q", TL_TEMP, dt, 2, (int64_t[]){ t, qd });
        a->attn = tl_setup_tensor(s, "attn", TL_TEMP, dt, 2, (int64_t[]){ t, qd });
        a->kt = tl_setup_tensor(s, "k", TL_TEMP, dt, 2, (int64_t[]){ t, kd });
        a->vt = tl_setup_tensor(s, "v", TL_TEMP, dt, 2, (int64_t[]){ t, kd });
        a->act = tl_setup_tensor(s, "act", TL_TEMP, dt, 2, (int64_t[]){ t, f });
        /* The outputs and temporaries are written by some PEs and read by
         * PEs of every cube: one copy, interleaved (replicated, a cube
         * would read its own copy, never written; docs/adr/0017). */
        tl_tensor *temps[] = { a->out, a->k_new, a->v_new, a->n1, a->n2, a->h,
                               a->q,   a->attn,  a->kt,    a->vt, a->act };
        for (size_t i = 0; i < sizeof temps / sizeof temps[0]; i++)
                tl_setup_interleave(s, temps[i]);
}

const struct tl_param llm_head_params[] = {
        { "model", TL_PARAM_CHOICE, 0, 0, 0, llm_model_names,
          "preset of hidden and vocab (explicit values win)" },
        { "hidden", TL_PARAM_INT, 256, 1, 1 << 20, NULL, "hidden size H" },
        { "vocab", TL_PARAM_INT, 1024, 1, 1 << 24, NULL, "vocabulary V" },
        { "batch", TL_PARAM_INT, 1, 1, 65536, NULL, "sequences B (one row each)" },
        { "dtype", TL_PARAM_CHOICE, 1, 0, 0, llm_dtypes, "x and logits" },
        { "weight_dtype", TL_PARAM_CHOICE, 1, 0, 0, llm_dtypes, "w_lm" },
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
