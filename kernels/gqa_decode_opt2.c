/* kernels/gqa_decode_opt2.c: GQA decode with the per-tile attention step
 * issued as two composites: a Q.K^T GEMM composite (K streamed in its
 * tile loop, the score scale as its epilogue) and the softmax_merge recipe
 * (online max/sum merge as its prologue, P.V with V streamed in its tile
 * loop, the rescale-and-add into the running O after it). Mapping, tiles
 * and the chain reduce are gqa_decode's; compare with gqa_decode_opt3
 * (the same work as primitives) in bench gqa-decode-dispatch. */
#include "gqa_common.h"

static const struct tl_param params[] = {
        GQA_PARAMS_SHAPE(4096),
        GQA_PARAMS_DECODE,
        { "tile_frac", TL_PARAM_FLOAT, 0, 0, 1, NULL,
          "kv_tile as a fraction R of a PE's key span; 0: use kv_tile" },
        GQA_PARAMS_END,
};

static void setup(tl_setup *s, void *args)
{
        gqa_setup(s, args, GQA_DECODE_OPT2);
}

static void decode_opt2(tl_ctx *tl, const void *args)
{
        struct gqa_decode_plan p;
        gqa_decode_long_plan(tl, args, &p, true);
        p.composite = true;
        gqa_decode_run(tl, args, &p);
}

const struct tl_kernel tl_kernel_gqa_decode_opt2 = {
        .name = "gqa_decode_opt2",
        .summary = "GQA decode, per tile one Q.K^T GEMM composite + one softmax_merge recipe",
        .fn = decode_opt2,
        .params = params,
        .args_size = sizeof(struct gqa_args),
        .setup = setup,
        .io_help = "inputs q.npy [batch, q_heads, 1, head_dim], k.npy and v.npy "
                   "[batch, kv_heads, seq_len, head_dim]; "
                   "output o.npy [batch, q_heads, 1, head_dim]",
};
