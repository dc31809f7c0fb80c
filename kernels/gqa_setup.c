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

static bool same_name(const char *a, const char *b)
{
        while (*a && *a == *b)
                a++, b++;
        return *a == *b;
}

int gqa_model_shape(const char *name, int64_t *q_heads, int64_t *kv_heads, int64_t *head_dim)
{
        for (int i = 1; gqa_models[i]; i++) {
                if (!same_name(gqa_models[i], name))
                        continue;
                *q_heads = presets[i - 1].hq;
                *kv_heads = presets[i - 1].hkv;
                *head_dim = presets[i - 1].d;
                return 0;
        }
        return -1;
}

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

/* The most partial states a decode PE merges (gqa_common.c's plans): the
 * first PE of a group of pg in the binary tree, log2(pg) rounded up; in
 * the lazy variants' chain, its row, its column and the next cube. A
 * merge keeps the received state and its products in scratch until the
 * reduce ends (reduce_pair()). */
static int64_t reduce_children(const tl_machine *mc, const struct gqa_args *a, int kind,
                               bool lazy)
{
        int64_t pes = mc->pes_per_cube, n = pes * mc->cubes, np = a->batch * a->hkv;
        if (lazy) {
                int64_t cols = mc->mesh_cols > 0 && pes % mc->mesh_cols == 0 ? mc->mesh_cols : pes;
                return (cols > 1) + (pes / cols > 1) + (mc->cubes > 1);
        }
        int64_t pg = kind == GQA_DECODE_SHORT
                             ? (pes >= a->kv_per_cube ? pes / a->kv_per_cube : 1)
                             : n / min64(max64(np, 1), n);
        int64_t kids = 0;
        for (int64_t l = 1; l < pg && kids < GQA_MAX_CHILD; l *= 2)
                kids++;
        return kids;
}

/* Heads (*hb) and rows per head (*ql) of a prefill block of r rows:
 * heads_per_pe and q_tile when set, else the most heads of the group that
 * the rows allow and the rest of the rows per head. */
static void block_shape(int64_t g, int64_t hb_set, int64_t ql_set, int64_t r, int64_t *hb,
                        int64_t *ql)
{
        *hb = hb_set;
        if (!*hb) {
                *hb = 1;
                for (int64_t h = 1; h <= g; h++)
                        if (g % h == 0 && h * (ql_set ? ql_set : 1) <= r)
                                *hb = h;
        }
        *ql = ql_set ? ql_set : max64(1, r / *hb);
}

/* TCM and scratch bytes a prefill PE needs with blocks of r rows (two
 * sub-blocks of rs rows each, or one of r) and ql rows per head, t keys
 * per tile: the K/V ring, the running state of each sub-block (fp32 m, l,
 * O; sub-block 0 sized for a whole block) and two output buffers in TCM;
 * the score buffers (two per sub-block), the block's Q (loaded and
 * scaled), and the larger of the masked score tiles of its diagonal
 * (fewer than ql keys a row) and the normalisation's temporaries (one
 * sub-block at a time) in scratch. */
static void prefill_need(int64_t r, int64_t hb, int64_t ql, int64_t t, int64_t d, int64_t es,
                         int depth, int64_t *tcm, int64_t *scratch)
{
        int64_t rs = (r + 1) / 2;
        int64_t sbuf = gqa_one_sub_block(hb) ? 2 * r * t * 4 : 4 * rs * t * 4;
        int64_t sub = gqa_one_sub_block(hb) ? r : rs;
        *tcm = (int64_t)depth * 2 * t * d * es + (r + rs) * (d + 2) * 4 + 2 * r * d * es;
        *scratch = sbuf + r * d * (es + 4) + max64(r * ql * 4, sub * (d + 4) * 4) + r * 16;
}

/* Seconds per score element of a prefill block of r rows and t keys, by
 * the busiest of PE_GEMM (Q.K^T and P.V), PE_MATH (the online softmax,
 * 7 cycles an element at the default costs, and the rescale of O per
 * tile) and the PE's share of its cube's HBM (K and V per block). */
static double prefill_cost(const tl_machine *mc, int64_t r, int64_t t, int64_t d, int64_t es)
{
        double gemm = 4.0 * (double)d / mc->gemm_flops_per_s;
        double math = (7.0 + 2.0 * (double)d / (double)t) / (mc->math_lanes * mc->math_clock_hz);
        double hbm = (2.0 * (double)d * (double)es / (double)r) /
                     (mc->hbm_bytes_per_s / mc->pes_per_cube);
        double c = gemm > math ? gemm : math;
        return c > hbm ? c : hbm;
}

/* The prefill block (*rows of *hb heads x *ql queries) and tile (*t) that
 * fit the PE's TCM and scratch at the least cost per score element; a
 * set kv_tile, heads_per_pe or q_tile is kept. *rows 0: nothing fits. */
static void prefill_size(const tl_machine *mc, int64_t g, int64_t hb_set, int64_t ql_set,
                         int64_t t_set, int64_t d, int64_t es, int depth, int64_t *rows,
                         int64_t *hb, int64_t *ql, int64_t *t)
{
        double best = 0;
        int64_t fixed = ql_set && hb_set ? ql_set * hb_set : 0;
        *rows = 0;
        *t = t_set ? t_set : 16;
        block_shape(g, hb_set, ql_set, max64(fixed, 1), hb, ql);
        for (int64_t tt = 256; tt >= 16; tt /= 2) {
                int64_t tk = t_set ? t_set : tt;
                for (int64_t r = fixed ? fixed : 512; r >= 1; r -= r > 16 ? 16 : 1) {
                        int64_t h, q, tcm, scratch;
                        block_shape(g, hb_set, ql_set, r, &h, &q);
                        int64_t rr = h * q;   /* the rows a block really has */
                        prefill_need(rr, h, q, tk, d, es, depth, &tcm, &scratch);
                        if (tcm > mc->tcm_alloc_bytes || scratch > mc->scratch_bytes) {
                                if (fixed)
                                        break;
                                continue;
                        }
                        double c = prefill_cost(mc, rr, tk, d, es);
                        if (*rows == 0 || c < best * 0.999) {
                                best = c;
                                *rows = rr;
                                *hb = h;
                                *ql = q;
                                *t = tk;
                        }
                        break;       /* the largest r that fits is the cheapest at this t */
                }
                if (t_set)
                        break;
        }
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

        /* Tile sizes, from what the machine's PEs hold. */
        tl_machine mc = tl_setup_machine(s);
        int64_t es = (int64_t)tl_dtype_size(a->dt), d = a->d, g = a->group;
        bool lazy = kind == GQA_DECODE_OPT3 || kind == GQA_DECODE_OPT2;
        int64_t t = tl_setup_int(s, "kv_tile");
        if (prefill) {
                int64_t rows, hb, ql;
                if (a->depth < 3)
                        tl_setup_error(s, "depth (%d): prefill needs at least 3 K/V prefetch "
                                       "slots (two tiles in use, one in flight)", a->depth);
                prefill_size(&mc, g, a->heads_per_pe, a->q_tile, t, d, es, a->depth, &rows, &hb,
                             &ql, &t);
                a->kv_tile = t;
                a->rows_max = rows;
                if (rows < 1) {
                        int64_t r = hb * ql, tcm, scratch;
                        prefill_need(r, hb, ql, t, d, es, a->depth, &tcm, &scratch);
                        tl_setup_error(s, "a query block of %lld rows (q_tile x heads_per_pe) "
                                       "with kv_tile (%lld), head_dim (%lld) and depth (%d) needs "
                                       "%lld KiB of TCM and %lld KiB of scratch; a PE has %lld "
                                       "and %lld KiB", (long long)r, (long long)t, (long long)d,
                                       a->depth, (long long)(tcm / 1024),
                                       (long long)(scratch / 1024),
                                       (long long)(mc.tcm_alloc_bytes / 1024),
                                       (long long)(mc.scratch_bytes / 1024));
                }
                a->heads_per_pe = hb;   /* resolved: the kernels take them as they are */
                a->q_tile = ql;
        } else {
                /* Decode: half of the TCM beside scratch for the K/V ring, the
                 * rest for Q slots and states; a tile step within scratch. */
                int64_t ring_budget = mc.tcm_alloc_bytes / 2, step_budget = mc.scratch_bytes;
                if (t == 0) {
                        /* At least 4 tiles of a PE's keys, so that its
                         * stream and its compute overlap. */
                        int64_t n = (int64_t)mc.pes_per_cube * mc.cubes, np = a->batch * a->hkv;
                        int64_t pg = kind == GQA_DECODE_SHORT
                                             ? max64(1, mc.pes_per_cube / max64(1, a->kv_per_cube))
                                             : n / min64(max64(np, 1), n);
                        int64_t span = lazy ? a->s / n : a->s / max64(pg, 1);
                        t = 512;
                        while (t > 16 && t * 4 > span)
                                t /= 2;
                        for (; t > 16; t /= 2) {
                                bool ring_fits = (int64_t)a->depth * 2 * t * d * es <= ring_budget;
                                if (ring_fits && decode_scratch(g, t, d, es, lazy) <= step_budget)
                                        break;
                        }
                }
                a->kv_tile = t;
                int64_t ring = (int64_t)a->depth * 2 * t * d * es;
                if (!lazy && ring > ring_budget)
                        tl_setup_error(s, "kv_tile (%lld) x depth (%d) x head_dim (%lld): the K/V "
                                       "prefetch ring needs %lld KiB of TCM, at most %lld KiB "
                                       "(lower kv_tile or depth)",
                                       (long long)t, a->depth, (long long)d,
                                       (long long)(ring / 1024), (long long)(ring_budget / 1024));
                int64_t need = decode_scratch(g, t, d, es, lazy);
                if (need > step_budget)
                        tl_setup_error(s, "group q_heads / kv_heads (%lld) x kv_tile (%lld): "
                                       "a tile step needs %lld KiB of scratch, at most %lld KiB "
                                       "(lower kv_tile)",
                                       (long long)g, (long long)t, (long long)(need / 1024),
                                       (long long)(step_budget / 1024));
                int64_t kids = reduce_children(&mc, a, kind, lazy);
                int64_t red = kids * (16 * g * d + 40 * g) + 4 * g * d + 12 * g;
                if (kids > 0 && red > step_budget)
                        tl_setup_error(s, "group q_heads / kv_heads (%lld) x head_dim (%lld): "
                                       "merging %lld partial states at the root of a reduce "
                                       "needs %lld KiB of scratch, at most %lld KiB",
                                       (long long)g, (long long)d, (long long)kids,
                                       (long long)(red / 1024), (long long)(step_budget / 1024));
                int64_t tcm = (lazy ? 0 : ring) + (int64_t)a->depth * g * d * es +
                              2 * g * (d + 2) * 4;
                if (tcm > mc.tcm_alloc_bytes)
                        tl_setup_error(s, "group q_heads / kv_heads (%lld) x head_dim (%lld): "
                                       "the TCM a PE needs (%lld KiB) exceeds its %lld KiB",
                                       (long long)g, (long long)d, (long long)(tcm / 1024),
                                       (long long)(mc.tcm_alloc_bytes / 1024));
        }

        int64_t qshape[4] = { a->batch, a->hq, a->sq, a->d };
        int64_t kshape[4] = { a->batch, a->hkv, a->s, a->d };
        a->q = tl_setup_tensor(s, "q", TL_INPUT, a->dt, 4, qshape);
        a->k = tl_setup_tensor(s, "k", TL_INPUT, a->dt, 4, kshape);
        a->v = tl_setup_tensor(s, "v", TL_INPUT, a->dt, 4, kshape);
        a->o = tl_setup_tensor(s, "o", TL_OUTPUT, a->dt, 4, qshape);
        /* K and V live where they are read. gqa_decode (and the short
         * kernels) give cube c whole (batch, KV head) pairs: block-cyclic
         * over the pairs, as many at a time as the cube has groups
         * (kv_per_cube for the short kernels); when groups span cubes, and
         * for opt2 and opt3, cube c has the keys [c * S / C, (c + 1) * S /
         * C) (gqa_split). gqa_prefill reads every key from its own cube:
         * replicated. q and o stay replicated: every cube reads q, and o
         * is written where its rows are computed. */
        int64_t n = (int64_t)mc.pes_per_cube * mc.cubes, np = a->batch * a->hkv;
        int64_t pg = n / max64(1, min64(np, n));
        int axis = 2;
        int64_t block = 0;
        if (shortk) {
                axis = 1;
                block = a->kv_per_cube;
        } else if (kind == GQA_DECODE && pg <= mc.pes_per_cube && mc.pes_per_cube % pg == 0) {
                axis = 1;
                block = mc.pes_per_cube / pg;
        }
        if (kind != GQA_PREFILL) {
                tl_setup_shard(s, a->k, axis, block);
                tl_setup_shard(s, a->v, axis, block);
        }
}
