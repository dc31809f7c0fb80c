/* kernels/tt_llm_setup.c: tt_llm_op's host side (tt_llm.h): its
 * parameters, their checks and the launch's tensors. Row counts are padded
 * to tiles here, so a program of 1 row costs what 32 do, as in ttnn. */
#include <math.h>
#include <stdio.h>

#include "tt_llm.h"

static const char *const ops[] = { "mm_dram", "norm", "add", "silu_mul", "rotary", "copy",
                                   "sdpa_decode", "sdpa_prefill", "mm_ring", "prefetch", NULL };
static const char *const dtypes[] = { "bf16", "bfp8_b", "bfp4_b", NULL };
static const tl_dtype dtype_of[] = { TL_BF16, TL_BFP8_B, TL_BFP4_B };
static const char *const fidelities[] = { "lofi", "hifi2", "hifi3", "hifi4", NULL };

const struct tl_param tt_op_params[] = {
        { "op", TL_PARAM_CHOICE, 0, 0, 0, ops, "the device program" },
        { "m", TL_PARAM_INT, 32, 1, 1 << 20, NULL, "mm_dram: rows of in0 (padded to 32)" },
        { "k", TL_PARAM_INT, 2048, 1, 1 << 20, NULL, "mm_dram: K" },
        { "n", TL_PARAM_INT, 2048, 1, 1 << 24, NULL,
          "mm_dram: N (padded to 32 x the DRAM channels)" },
        { "rows", TL_PARAM_INT, 32, 1, 1 << 24, NULL, "tile-wise ops: rows (padded to 32)" },
        { "cols", TL_PARAM_INT, 2048, 1, 1 << 24, NULL, "tile-wise ops: columns (padded to 32)" },
        { "batch", TL_PARAM_INT, 1, 1, 4096, NULL, "SDPA: users" },
        { "q_heads", TL_PARAM_INT, 32, 1, 1024, NULL, "SDPA: query heads" },
        { "kv_heads", TL_PARAM_INT, 8, 1, 1024, NULL, "SDPA: KV heads (divides q_heads)" },
        { "head_dim", TL_PARAM_INT, 128, 32, 1024, NULL, "SDPA: head dimension" },
        { "keys", TL_PARAM_INT, 128, 1, 1 << 24, NULL,
          "sdpa_decode: cached keys seen; sdpa_prefill: the prompt's length" },
        { "wdtype", TL_PARAM_CHOICE, 1, 0, 0, dtypes, "mm_dram: the weights" },
        { "kvdtype", TL_PARAM_CHOICE, 1, 0, 0, dtypes, "SDPA: the KV cache" },
        { "fidelity", TL_PARAM_CHOICE, 1, 0, 0, fidelities, "math fidelity of the launch" },
        { "receivers", TL_PARAM_INT, 2, 1, 8, NULL,
          "mm_ring, prefetch: L1 receiver cores per DRAM reader (the ring: channels x this)" },
        { NULL, 0, 0, 0, 0, NULL, NULL },
};

static int64_t pad(int64_t v, int64_t to)
{
        return (v + to - 1) / to * to;
}

static void setup_mm(tl_setup *s, struct tt_op_args *a)
{
        tl_machine mc = tl_setup_machine(s);
        a->workers = mc.hbm_channels;
        if (a->workers < 1 || a->workers > 64) {
                tl_setup_error(s, "op=mm_dram needs 1 to 64 DRAM channels (the machine has %d)",
                               a->workers);
                return;
        }
        a->m = pad(tl_setup_int(s, "m"), TT_TILE);
        a->k = pad(tl_setup_int(s, "k"), TT_TILE);
        int64_t kt = a->k / TT_TILE, nt = pad(tl_setup_int(s, "n"), TT_TILE) / TT_TILE;
        a->n = pad(tl_setup_int(s, "n"), (int64_t)TT_TILE * a->workers);
        int64_t nw = a->n / a->workers;
        /* tt-transformers' dram_matmul_config: in0 over the most cores (at
         * most the grid's, 64) that divide K's and N's tiles; in0_block_w
         * the largest divisor of a shard's tiles up to 8. */
        int cores = a->grid_x * a->grid_y;
        a->shards = 1;
        for (int c = cores < 64 ? cores : 64; c > 1 && a->shards == 1; c--)
                if (kt % c == 0 && nt % c == 0)
                        a->shards = c;
        int64_t per = kt / a->shards, bw = 1;
        for (int64_t w = 8; w > 1 && bw == 1; w--)
                if (per % w == 0)
                        bw = w;
        a->kb = bw * TT_TILE;
        /* The columns a worker holds at once: up to TT_MM_NB, fewer (in
         * tiles) while its three weight blocks and fp32 accumulator would
         * not fit the TCM beside the scratch arena (bf16 weights). */
        a->nb = nw < TT_MM_NB ? nw : TT_MM_NB;
        while (a->nb > TT_TILE &&
               3 * tl_dtype_bytes(a->wdt, a->kb * (a->nb + TT_MM_PAD), a->nb + TT_MM_PAD) +
                               (uint64_t)(a->m * (a->nb + TT_MM_PAD) * 4) >
                       (uint64_t)mc.tcm_alloc_bytes)
                a->nb -= TT_TILE;
        a->a = tl_setup_tensor_sharded(s, "a", TL_INPUT, TL_BF16, 2, (int64_t[]){ a->m, a->k });
        for (int c = 0; c < a->workers; c++) {
                char name[16];
                snprintf(name, sizeof name, "w%d", c);
                a->w[c] = tl_setup_tensor(s, name, TL_INPUT, a->wdt, 2, (int64_t[]){ a->k, nw });
                tl_setup_hbm_channel(s, a->w[c], c);
        }
        a->out = tl_setup_tensor_sharded(s, "out", TL_OUTPUT, TL_BF16, 3,
                                         (int64_t[]){ a->workers, a->m, nw });
}

static void setup_elt(tl_setup *s, struct tt_op_args *a)
{
        static const int ins[TT_OP_COUNT] = { [TT_OP_NORM] = 1, [TT_OP_ADD] = 2,
                                              [TT_OP_SILU_MUL] = 2, [TT_OP_ROTARY] = 3,
                                              [TT_OP_COPY] = 1 };
        a->rows = pad(tl_setup_int(s, "rows"), TT_TILE);
        a->cols = pad(tl_setup_int(s, "cols"), TT_TILE);
        a->ins = ins[a->op];
        int64_t shape[2] = { a->rows, a->cols };
        for (int i = 0; i < a->ins; i++) {
                char name[16];
                snprintf(name, sizeof name, "x%d", i);
                a->in[i] = tl_setup_tensor(s, name, TL_INPUT, TL_BF16, 2, shape);
        }
        if (a->op == TT_OP_NORM)
                a->wrow = tl_setup_tensor(s, "weight", TL_INPUT, TL_BF16, 2,
                                          (int64_t[]){ 1, a->cols });
        a->out = tl_setup_tensor(s, "out", TL_OUTPUT, TL_BF16, 2, shape);
}

static void setup_sdpa(tl_setup *s, struct tt_op_args *a)
{
        a->batch = tl_setup_int(s, "batch");
        a->hq = tl_setup_int(s, "q_heads");
        a->hkv = tl_setup_int(s, "kv_heads");
        a->d = tl_setup_int(s, "head_dim");
        a->keys = tl_setup_int(s, "keys");
        a->scale = (float)(1.0 / sqrt((double)a->d));
        if (a->hq % a->hkv != 0) {
                tl_setup_error(s, "kv_heads (%lld) must divide q_heads (%lld)", (long long)a->hkv,
                               (long long)a->hq);
                return;
        }
        if (a->hq / a->hkv > TT_TILE && a->op == TT_OP_SDPA_DECODE) {
                tl_setup_error(s, "q_heads / kv_heads (%lld) must be at most %d (one tile of rows)",
                               (long long)(a->hq / a->hkv), TT_TILE);
                return;
        }
        int64_t kv[4] = { a->batch, a->hkv, a->keys, a->d };
        int64_t q[4] = { a->batch, a->hkv, TT_TILE, a->d };
        if (a->op == TT_OP_SDPA_PREFILL) {
                q[1] = a->hq;
                q[2] = a->keys;
        }
        a->q = tl_setup_tensor(s, "q", TL_INPUT, TL_BF16, 4, q);
        a->kc = tl_setup_tensor(s, "k", TL_INPUT, a->kvdt, 4, kv);
        a->vc = tl_setup_tensor(s, "v", TL_INPUT, a->kvdt, 4, kv);
        a->o = tl_setup_tensor(s, "o", TL_OUTPUT, TL_BF16, 4, q);
}

/* mm_ring and prefetch (the llama3_70b_galaxy demo's prefetcher,
 * prefetcher_common.py: one DRAM reader a bank, `receivers` L1 cores
 * each, the matmul's ring those receivers): K and N padded to tiles x the
 * ring (pad_n_to_ring_size), in0 [m, K / ring] a core, the weight
 * [K, N / ring] a core (mm_ring: in its L1, the global circular buffer;
 * prefetch: each bank's [K, N / channels] as its receivers' [K, N /
 * ring] one after the other, a row each K step's tiles). */
static void setup_ring(tl_setup *s, struct tt_op_args *a)
{
        tl_machine mc = tl_setup_machine(s);
        int ch = mc.hbm_channels, ring = ch * (int)tl_setup_int(s, "receivers");
        if (ch < 1 || ch > 64 || ring > a->grid_x * a->grid_y) {
                tl_setup_error(s, "op=%s needs 1 to 64 DRAM channels and a grid of channels x "
                               "receivers (%d) cores (the machine has %d channels, %d cores)",
                               a->op == TT_OP_MM_RING ? "mm_ring" : "prefetch", ring, ch,
                               a->grid_x * a->grid_y);
                return;
        }
        a->workers = ring;
        a->m = pad(tl_setup_int(s, "m"), TT_TILE);
        a->k = pad(tl_setup_int(s, "k"), (int64_t)TT_TILE * ring);
        a->n = pad(tl_setup_int(s, "n"), (int64_t)TT_TILE * ring);
        a->kb = a->k / ring;
        a->nb = a->n / ring;
        a->shards = ch;
        if (a->op == TT_OP_PREFETCH) {
                /* a reader's three L1 buffers of a kb x nb block */
                uint64_t bufs = 3 * tl_dtype_bytes(a->wdt, a->kb * a->nb, a->kb * a->nb);
                if (bufs > (uint64_t)mc.tcm_alloc_bytes) {
                        tl_setup_error(s, "op=prefetch streams %lld x %lld blocks through three "
                                       "L1 buffers a reader: %llu bytes, more than the %lld a "
                                       "PE has (pe.tcm)", (long long)a->kb, (long long)a->nb,
                                       (unsigned long long)bufs, (long long)mc.tcm_alloc_bytes);
                        return;
                }
                for (int c = 0; c < ch; c++) {
                        char name[16];
                        snprintf(name, sizeof name, "w%d", c);
                        a->w[c] = tl_setup_tensor(s, name, TL_INPUT, a->wdt, 2,
                                                  (int64_t[]){ ring / ch * (a->k / a->kb),
                                                               a->kb * a->nb });
                        tl_setup_hbm_channel(s, a->w[c], c);
                }
                return;
        }
        a->a = tl_setup_tensor_sharded(s, "a", TL_INPUT, TL_BF16, 3,
                                       (int64_t[]){ ring, a->m, a->kb });
        a->wl = tl_setup_tensor_sharded(s, "w", TL_INPUT, a->wdt, 3,
                                        (int64_t[]){ ring, a->k, a->nb });
        a->out = tl_setup_tensor_sharded(s, "out", TL_OUTPUT, TL_BF16, 3,
                                         (int64_t[]){ ring, a->m, a->nb });
}

void tt_op_setup(tl_setup *s, void *argp)
{
        struct tt_op_args *a = argp;
        a->op = (enum tt_op)tl_setup_choice(s, "op");
        a->wdt = dtype_of[tl_setup_choice(s, "wdtype")];
        a->kvdt = dtype_of[tl_setup_choice(s, "kvdtype")];
        a->grid_x = tl_setup_grid(s, 0);
        a->grid_y = tl_setup_grid(s, 1);
        tl_setup_gemm_fidelity(s, tl_setup_choice(s, "fidelity") + 1);
        switch (a->op) {
        case TT_OP_MM_DRAM:
                setup_mm(s, a);
                return;
        case TT_OP_SDPA_DECODE:
        case TT_OP_SDPA_PREFILL:
                setup_sdpa(s, a);
                return;
        case TT_OP_MM_RING:
        case TT_OP_PREFETCH:
                setup_ring(s, a);
                return;
        default:
                setup_elt(s, a);
        }
}
