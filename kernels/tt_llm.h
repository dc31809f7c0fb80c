/* kernels/tt_llm.h: a decoder as tt-transformers runs it on a Tenstorrent
 * machine (docs/adr/0030): one kernel, tt_llm_op, that runs one device
 * program of the decoder per launch (device side tt_llm_op.c, host side
 * tt_llm_setup.c). The host model of a whole run (precision
 * configurations, the programs of a decode iteration and of a prefill,
 * the DRAM the model needs) is src/llm/tt_llm_model.h.
 *
 * Every op runs on 32 x 32 tiles: row counts are padded to 32 (a decode
 * step of batch B <= 32 is 32 rows), as ttnn pads them. */
#ifndef CUBESIM_KERNELS_TT_LLM_H
#define CUBESIM_KERNELS_TT_LLM_H

#include <cubesim/tl.h>

#include "llm.h"

#define TT_TILE 32                   /* rows and columns of a ttnn tile */
#define TT_KV_CHUNK 128              /* keys per SDPA chunk */
#define TT_Q_CHUNK 64                /* query rows per SDPA prefill item */
#define TT_MM_NB 1024                /* most output columns a worker holds at once */
#define TT_MM_PAD (7 * TT_TILE)      /* most columns tt_mm_subblock pads a worker's compute by */
#define TT_ELT_W 8                   /* most tiles of a row an elementwise block takes */

/* The widest output subblock of at most 8 tiles that divides nt tiles
 * (1 if none does): the subblock of a matmul that does not pad. */
static inline int64_t tt_mm_subblock_dividing(int64_t nt)
{
        for (int64_t c = 8; c > 1; c--)
                if (nt % c == 0)
                        return c;
        return 1;
}

/* The output subblock of a DRAM-sharded matmul on a worker's nt tiles of
 * columns (tt-metal's matmul_multicore_reuse_dram_sharded program
 * factory): one row of tiles, the widest of at most 8 dividing nt; when
 * that is narrower than 8, the narrowest up to 8 that needs the fewest
 * subblocks, the worker's compute then padded to whole subblocks ("it is
 * bad for compute, pad per_core_N"). The width in tiles; *nt_compute the
 * tiles the compute runs over (at least nt). 8 is the limit without fp32
 * destination accumulation (tt-transformers' MLP configs); with it the
 * factory's limit is 4. */
static inline int64_t tt_mm_subblock(int64_t nt, int64_t *nt_compute)
{
        int64_t w = tt_mm_subblock_dividing(nt);
        int64_t subblocks = nt / w, best = w;
        for (int64_t c = w + 1; c <= 8; c++)
                if ((nt + c - 1) / c < subblocks) {
                        subblocks = (nt + c - 1) / c;
                        best = c;
                }
        *nt_compute = best * subblocks;
        return best;
}

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
        TT_OP_MM_RING,               /* decode matmul from the prefetcher's L1 buffer, in0 round a ring */
        TT_OP_PREFETCH,              /* the prefetcher: a weight from the DRAM banks into L1 */
        TT_OP_COUNT
};

/* The argument block of tt_llm_op. */
struct tt_op_args {
        enum tt_op op;               /* which program */
        int64_t m, k, n;             /* matmul: rows (padded), K, N */
        int64_t rows, cols;          /* elementwise ops: the [rows, cols] operands */
        int64_t batch, hq, hkv, d;   /* SDPA: users, query and KV heads, head dim */
        int64_t keys;                /* SDPA decode: cached keys seen; prefill: prompt length */
        float scale;                 /* SDPA: 1 / sqrt(head dim) */
        int workers;                 /* matmul: one per DRAM channel; mm_ring: the ring's cores */
        int shards;                  /* matmul: cores in0 is width-sharded over */
        int64_t kb;                  /* matmul: K rows of a step (in0_block_w tiles) */
        int64_t nb;                  /* matmul: output columns a worker holds at once */
        int grid_x, grid_y;          /* the compute grid */
        int ins;                     /* elementwise: [rows, cols] inputs (1 to 3) */
        tl_dtype wdt, kvdt;          /* weight and KV-cache dtypes */
        tl_tensor *a;                /* matmul: in0 [m, k], L1-sharded over `shards` cores */
        tl_tensor *w[64];            /* matmul: per worker [k, n / workers] in its channel */
        tl_tensor *wl;               /* mm_ring: [workers, k, n / workers], each core's in its L1 */
        tl_tensor *in[3];            /* elementwise inputs [rows, cols] */
        tl_tensor *wrow;             /* RMSNorm weight [1, cols] */
        tl_tensor *out;              /* result: matmul [workers, m, n / workers] L1-sharded; elt [rows, cols] */
        tl_tensor *q, *kc, *vc;      /* SDPA: queries, keys, values */
        tl_tensor *o;                /* SDPA output */
};

extern const struct tl_param tt_op_params[];
void tt_op_setup(tl_setup *s, void *args);

#endif
