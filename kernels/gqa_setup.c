/* kernels/gqa_setup.c: the GQA kernels' host side (see gqa_common.h), run
 * before the launch: parameters and model presets, the tile sizes, the
 * shapes a PE's scratch cannot hold, and the HBM tensors q, k, v and o.
 * The device code the PEs run is kernels/gqa_common.c. */
#include "gqa_common.h"

const char *const gqa_dtypes[] = { "fp32", "bf16", "fp16", NULL };
const char *const gqa_models[] = { "none", "llama3-8b", "llama3-70b", "llama31-405b",
                                   "qwen2-72b", "mistral-7b", NULL };

/* Published configurations (config.json: num_attention_heads,
 * num_key_value_heads, hidden_size / num_attention_heads), in gqa_models
 * order after "none". */
static const struct {
        int64_t hq, hkv, d;          /* query heads, KV heads, head dim */
} presets[] = {
        { 32, 8, 128 },              /* Llama-3-8B */
        { 64, 8, 128 },              /* Llama-3-70B */
        { 128, 8, 128 },             /* Llama-3.1-405B */
        { 64, 8, 128 },              /* Qwen2-72B */
        { 32, 8, 128 },              /* Mistral-7B */
};

/* ---- setup -------------------------------------------------------------------- */

static double sqrt_pos(double x)
{
        /* Newton from above; the setup's only square root (no libm in kernels). */
        double r = x > 1 ? x : 1;
        for (int i = 0; i < 64; i++)
                r = 0.5 * (r + x / r);
        return r;
}

/* A shape parameter: --set, else the model preset, else the input file, else the default. */
static int64_t shape_param(tl_setup *s, int model, const char *param, int64_t preset,
                           const char *tensor, int axis)
{
        if (model > 0 && !tl_setup_is_set(s, param))
                return preset;
        return tl_setup_dim(s, param, tensor, axis);
}

/* Scratch bytes of one decode tile step with g rows and t keys. */
static int64_t decode_scratch(int64_t g, int64_t t, int64_t d, int64_t es, bool lazy)
{
        return 4 * g * t * 4 + 3 * g * d * 4 + 16 * g * 4 + (lazy ? 2 * t * d * es : 0);
}

/* Most state rows of a prefill block whose tile step fits the scratch budget. */
static int64_t prefill_rows_max(int64_t t, int64_t d, int64_t es)
{
        int64_t fixed = 2 * t * d * es;          /* K and V tiles received from the ring */
        int64_t per_row = 4 * t * 4 + 3 * d * 4 + 16 * 4;
        if (fixed >= GQA_SCRATCH_BUDGET)
                return 0;
        return min64(256, (GQA_SCRATCH_BUDGET - fixed) / per_row);
}

void gqa_setup(tl_setup *s, struct gqa_args *a, enum gqa_kind kind)
{
        bool prefill = kind == GQA_PREFILL || kind == GQA_PREFILL_SHORT;
        bool shortk = kind == GQA_DECODE_SHORT || kind == GQA_PREFILL_SHORT;
        int model = tl_setup_choice(s, "model");
        int64_t phq = 0, phkv = 0, pd = 0;
        if (model > 0) {
                phq = presets[model - 1].hq;
                phkv = presets[model - 1].hkv;
                pd = presets[model - 1].d;
        }
        a->batch = tl_setup_dim(s, "batch", "q", 0);
        a->hq = shape_param(s, model, "q_heads", phq, "q", 1);
        a->hkv = shape_param(s, model, "kv_heads", phkv, "k", 1);
        a->d = shape_param(s, model, "head_dim", pd, "q", 3);
        a->s = tl_setup_dim(s, "seq_len", "k", 2);
        a->dt = (tl_dtype)tl_setup_choice(s, "dtype");
        a->depth = (int)tl_setup_int(s, "depth");
        a->sq = 1;
        if (prefill) {
                a->sq = tl_setup_dim(s, "q_len", "q", 2);
                if (a->sq == 0)
                        a->sq = a->s;
                a->causal = tl_setup_int(s, "causal") != 0;
                a->q_tile = tl_setup_int(s, "q_tile");
                a->heads_per_pe = tl_setup_int(s, "heads_per_pe");
        }
        if (kind == GQA_DECODE || kind == GQA_DECODE_OPT3 || kind == GQA_DECODE_OPT2)
                a->pe_cols = tl_setup_int(s, "pe_cols");
        if (kind == GQA_DECODE_OPT3 || kind == GQA_DECODE_OPT2)
                a->tile_frac = tl_setup_float(s, "tile_frac");
        if (kind == GQA_DECODE_OPT3) {
                a->prim_tile = tl_setup_int(s, "prim_tile");
                a->fold = tl_setup_int(s, "fold") != 0;
        }
        if (shortk) {
                a->kv_per_cube = tl_setup_int(s, "kv_per_cube");
                int64_t k = a->kv_per_cube;
                if (k != 1 && k != 2 && k != 4 && k != 8)
                        tl_setup_error(s, "kv_per_cube (%lld) must be 1, 2, 4 or 8", (long long)k);
        }
        if (a->hq % a->hkv != 0) {
                tl_setup_error(s, "q_heads (%lld) must be a multiple of kv_heads (%lld)",
                               (long long)a->hq, (long long)a->hkv);
                return;
        }
        a->group = a->hq / a->hkv;
        if (prefill && a->heads_per_pe && a->group % a->heads_per_pe != 0)
                tl_setup_error(s, "heads_per_pe (%lld) must divide the group q_heads / kv_heads "
                               "(%lld)",
                               (long long)a->heads_per_pe, (long long)a->group);
        double sc = tl_setup_float(s, "scale");
        a->scale = (float)(sc != 0 ? sc : 1.0 / sqrt_pos((double)a->d));

        /* Tile sizes: the K/V ring must fit its TCM budget and one tile
         * step its scratch budget. */
        int64_t es = (int64_t)tl_dtype_size(a->dt), d = a->d, g = a->group;
        bool lazy = kind == GQA_DECODE_OPT3 || kind == GQA_DECODE_OPT2;
        int64_t t = tl_setup_int(s, "kv_tile");
        if (t == 0) {
                t = prefill ? (es == 2 ? 256 : 128) : 512;
                for (; t > 16; t /= 2) {
                        bool ring_fits = (int64_t)a->depth * 2 * t * d * es <= GQA_RING_BUDGET;
                        int64_t step = decode_scratch(g, t, d, es, lazy);
                        bool step_fits = prefill ? prefill_rows_max(t, d, es) >= 64
                                                 : step <= GQA_SCRATCH_BUDGET;
                        if (ring_fits && step_fits)
                                break;
                }
        }
        a->kv_tile = t;
        int64_t ring = (int64_t)a->depth * 2 * t * d * es;
        if (!lazy && ring > GQA_RING_BUDGET)
                tl_setup_error(s, "kv_tile (%lld) x depth (%d) x head_dim (%lld): the K/V "
                               "prefetch ring needs %lld KiB of TCM, at most %d KiB (lower "
                               "kv_tile or depth)",
                               (long long)t, a->depth, (long long)d, (long long)(ring / 1024),
                               GQA_RING_BUDGET / 1024);
        if (prefill) {
                a->rows_max = prefill_rows_max(t, d, es);
                int64_t qt = a->q_tile ? a->q_tile : 1;
                int64_t hpp = a->heads_per_pe ? a->heads_per_pe : 1;
                if (a->rows_max < 1 || qt * hpp > a->rows_max)
                        tl_setup_error(s, "a query block of %lld rows (q_tile x heads_per_pe) "
                                       "with kv_tile (%lld) and head_dim (%lld) needs more "
                                       "than the %d KiB of scratch a tile step may use; at "
                                       "most %lld rows",
                                       (long long)(qt * hpp), (long long)t, (long long)d,
                                       GQA_SCRATCH_BUDGET / 1024, (long long)max64(a->rows_max, 0));
                /* TCM beside the ring: Q (dtype and scaled fp32), the output and the state. */
                int64_t r = max64(a->rows_max, 1);
                if (ring + r * d * (2 * es + 4) + r * (d + 2) * 4 > 1024 * 1024)
                        tl_setup_error(s, "head_dim (%lld): the TCM a PE needs exceeds 1 MiB",
                                       (long long)d);
        } else {
                int64_t need = decode_scratch(g, t, d, es, lazy);
                if (need > GQA_SCRATCH_BUDGET)
                        tl_setup_error(s, "group q_heads / kv_heads (%lld) x kv_tile (%lld): "
                                       "a tile step needs %lld KiB of scratch, at most %d KiB "
                                       "(lower kv_tile)",
                                       (long long)g, (long long)t, (long long)(need / 1024),
                                       GQA_SCRATCH_BUDGET / 1024);
                int64_t tcm = (lazy ? 0 : ring) + (int64_t)a->depth * g * d * es +
                              2 * g * (d + 2) * 4;
                if (tcm > 1024 * 1024)
                        tl_setup_error(s, "group q_heads / kv_heads (%lld) x head_dim (%lld): "
                                       "the TCM a PE needs (%lld KiB) exceeds 1 MiB", (long long)g,
                                       (long long)d, (long long)(tcm / 1024));
        }

        int64_t qshape[4] = { a->batch, a->hq, a->sq, a->d };
        int64_t kshape[4] = { a->batch, a->hkv, a->s, a->d };
        a->q = tl_setup_tensor(s, "q", TL_INPUT, a->dt, 4, qshape);
        a->k = tl_setup_tensor(s, "k", TL_INPUT, a->dt, 4, kshape);
        a->v = tl_setup_tensor(s, "v", TL_INPUT, a->dt, 4, kshape);
        a->o = tl_setup_tensor(s, "o", TL_OUTPUT, a->dt, 4, qshape);
        /* K and V live where they are read: the long kernels give cube c
         * the keys [c * S / C, (c + 1) * S / C) (gqa_split), the short ones
         * the (batch, KV head) pairs of its kv_per_cube slots in every
         * round (gqa_short_map). q and o stay replicated: every cube reads
         * q, and o is written where its rows are computed. */
        bool is_short = kind == GQA_DECODE_SHORT || kind == GQA_PREFILL_SHORT;
        tl_setup_shard(s, a->k, is_short ? 1 : 2, is_short ? a->kv_per_cube : 0);
        tl_setup_shard(s, a->v, is_short ? 1 : 2, is_short ? a->kv_per_cube : 0);
        if (kind == GQA_PREFILL) {
                /* What the ring brings a cube is written to its own copy
                 * for the later query blocks (replicated: cube c's PEs
                 * write and read cube c's). */
                a->k_kept = tl_setup_tensor(s, "k_kept", TL_TEMP, a->dt, 4, kshape);
                a->v_kept = tl_setup_tensor(s, "v_kept", TL_TEMP, a->dt, 4, kshape);
        }
}
