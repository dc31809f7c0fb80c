/* kernels/gqa_decode.c: GQA decode, long context.
 *
 * The G = Hq / Hkv query heads of a KV head are folded into the GEMM's M
 * dimension (one [G, D] x [D, T] product per KV tile). Every PE of every
 * cube takes a slice of the keys of every (batch, KV head) pair and keeps
 * a partial online-softmax state (m, l, O) per pair in TCM; K/V tiles
 * stream through a TCM prefetch ring. After each pair a two-level chain
 * reduce brings the partial states to one root: level 2 inside a cube
 * along each PE row to its head, then up the column of row heads to PE 0;
 * level 1 from cube to cube down to cube 0. Only the root (PE 0 of cube 0)
 * normalises and writes o. */
#include "gqa_common.h"

static const struct tl_param params[] = {
        GQA_PARAMS_SHAPE(4096),
        GQA_PARAMS_DECODE,
        GQA_PARAMS_END,
};

static void setup(tl_setup *s, void *args)
{
        gqa_setup(s, args, GQA_DECODE);
}

static void decode(tl_ctx *tl, const void *args)
{
        struct gqa_decode_plan p;
        gqa_decode_long_plan(tl, args, &p, false);
        gqa_decode_run(tl, args, &p);
}

const struct tl_kernel tl_kernel_gqa_decode = {
        .name = "gqa_decode",
        .summary = "GQA decode, long context: M-fold, keys over every PE, chain reduce to one root",
        .fn = decode,
        .params = params,
        .args_size = sizeof(struct gqa_args),
        .setup = setup,
        .io_help = "inputs q.npy [batch, q_heads, 1, head_dim], k.npy and v.npy "
                   "[batch, kv_heads, seq_len, head_dim]; "
                   "output o.npy [batch, q_heads, 1, head_dim]",
};
