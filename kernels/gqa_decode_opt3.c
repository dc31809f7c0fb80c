/* kernels/gqa_decode_opt3.c: GQA decode with every per-tile step issued
 * as a primitive: lazy loads of K and V, Q.K^T dot, scale, rowmax, max
 * with the running m, exp, rowsum, the rescale of l and O, P.V dot, add,
 * and the state written back with tl_copy_to. It is the primitive form of
 * what gqa_decode_opt2 issues as two composites per tile (a Q.K^T GEMM
 * composite and a softmax_merge recipe): those stream K and V through
 * their tile loop in hardware tiles (64 keys by default), so opt3 issues
 * its loads, dots and per-chunk MATH per prim_tile keys (0: one of each
 * per KV tile). The mapping (keys split over every PE, chain reduce to
 * one root) is gqa_decode's. The figure of merit is PE_CPU issue time per
 * tile (bench gqa-decode-dispatch), so K and V are loaded inside the tile,
 * as the composites stream them, not prefetched ahead. By default the
 * tile step is issued for each query head of the group in turn (fold=0):
 * without a fused GEMM there is nothing to fold the heads into, which is
 * the command count the composites save; fold=1 issues each primitive on
 * all G heads at once. */
#include "gqa_common.h"

static const struct tl_param params[] = {
        GQA_PARAMS_SHAPE(4096),
        GQA_PARAMS_DECODE,
        { "tile_frac", TL_PARAM_FLOAT, 0, 0, 1, NULL,
          "kv_tile as a fraction R of a PE's key span; 0: use kv_tile" },
        { "prim_tile", TL_PARAM_INT, 64, 0, 1 << 20, NULL,
          "keys per primitive load and dot (the composites' tile); 0: the whole KV tile" },
        { "fold", TL_PARAM_INT, 0, 0, 1, NULL,
          "1: M-fold the group's heads into each primitive; 0: one head at a time" },
        GQA_PARAMS_END,
};

static void setup(tl_setup *s, void *args)
{
        gqa_setup(s, args, GQA_DECODE_OPT3);
}

static void decode_opt3(tl_ctx *tl, const void *args)
{
        struct gqa_decode_plan p;
        gqa_decode_long_plan(tl, args, &p, true);
        gqa_decode_run(tl, args, &p);
}

const struct tl_kernel tl_kernel_gqa_decode_opt3 = {
        .name = "gqa_decode_opt3",
        .summary = "GQA decode, each per-tile attention step issued as primitives (lazy K/V loads)",
        .fn = decode_opt3,
        .params = params,
        .args_size = sizeof(struct gqa_args),
        .setup = setup,
        .io_help = "inputs q.npy [batch, q_heads, 1, head_dim], k.npy and v.npy "
                   "[batch, kv_heads, seq_len, head_dim]; "
                   "output o.npy [batch, q_heads, 1, head_dim]",
};
