/* kernels/gqa_decode.c: the long-context GQA decode kernels, one table
 * of three that share their mapping and differ in how a tile is issued.
 *
 * gqa_decode: the G = Hq / Hkv query heads of a KV head are folded into
 * the GEMM's M dimension (one [G, D] x [D, T] product per KV tile). Every
 * PE of every cube takes a slice of the keys of every (batch, KV head)
 * pair and keeps a partial online-softmax state (m, l, O) per pair in
 * TCM; K/V tiles stream through a TCM prefetch ring. After each pair a
 * two-level chain reduce brings the partial states to one root: level 2
 * inside a cube along each PE row to its head, then up the column of row
 * heads to PE 0; level 1 from cube to cube down to cube 0. Only the root
 * (PE 0 of cube 0) normalises and writes o.
 *
 * gqa_decode_opt3: every per-tile step issued as a primitive: lazy loads
 * of K and V, Q.K^T dot, scale, rowmax, max with the running m, exp,
 * rowsum, the rescale of l and O, P.V dot, add, and the state written
 * back with tl_copy_to. It is the primitive form of what gqa_decode_opt2
 * issues as two composites per tile: those stream K and V through their
 * tile loop in hardware tiles (64 keys by default), so opt3 issues its
 * loads, dots and per-chunk MATH per prim_tile keys (0: one of each per
 * KV tile). The figure of merit is PE_CPU issue time per tile (bench
 * gqa-decode-dispatch), so K and V are loaded inside the tile, as the
 * composites stream them, not prefetched ahead. By default the tile step
 * is issued for each query head of the group in turn (fold=0): without a
 * fused GEMM there is nothing to fold the heads into, which is the
 * command count the composites save; fold=1 issues each primitive on all
 * G heads at once.
 *
 * gqa_decode_opt2: the per-tile attention step issued as two composites:
 * a Q.K^T GEMM composite (K streamed in its tile loop, the score scale as
 * its epilogue) and the softmax_merge recipe (online max/sum merge as its
 * prologue, P.V with V streamed in its tile loop, the rescale-and-add
 * into the running O after it). */
#include "gqa_common.h"

#define TILE_FRAC_PARAM                                                                    \
        { "tile_frac", TL_PARAM_FLOAT, 0, 0, 1, NULL,                                      \
          "kv_tile as a fraction R of a PE's key span; 0: use kv_tile" }

#define OPT3_PARAMS                                                                        \
        { "prim_tile", TL_PARAM_INT, 64, 0, 1 << 20, NULL,                                 \
          "keys per primitive load and dot (the composites' tile); 0: the whole KV tile" }, \
        { "fold", TL_PARAM_INT, 0, 0, 1, NULL,                                             \
          "1: M-fold the group's heads into each primitive; 0: one head at a time" }

/* One long-context decode kernel: how it issues a tile. */
struct variant {
        bool lazy;                   /* K/V loaded inside the tile; tile_frac applies */
        bool composite;              /* the tile step as two composites (opt2) */
};

static void decode(tl_ctx *tl, const void *args, const struct variant *v)
{
        struct gqa_decode_plan p;
        gqa_decode_long_plan(tl, args, &p, v->lazy);
        p.composite = v->composite;
        gqa_decode_run(tl, args, &p);
}

/* X(name, setup kind, lazy, composite, summary, parameters...) */
#define GQA_DECODE_KERNELS(X)                                                              \
        X(gqa_decode, GQA_DECODE, false, false,                                            \
          "GQA decode, long context: M-fold, keys over every PE, chain reduce to one root", \
          GQA_PARAMS_SHAPE(4096))                                                          \
        X(gqa_decode_opt3, GQA_DECODE_OPT3, true, false,                                   \
          "GQA decode, each per-tile attention step issued as primitives (lazy K/V loads)", \
          GQA_PARAMS_SHAPE(4096), TILE_FRAC_PARAM, OPT3_PARAMS)                            \
        X(gqa_decode_opt2, GQA_DECODE_OPT2, true, true,                                    \
          "GQA decode, per tile one Q.K^T GEMM composite + one softmax_merge recipe",      \
          GQA_PARAMS_SHAPE(4096), TILE_FRAC_PARAM)

#define DEFINE_KERNEL(name_, kind_, lazy_, composite_, summary_, ...)                      \
        static void name_##_body(tl_ctx *tl, const void *args)                             \
        {                                                                                  \
                static const struct variant v = { lazy_, composite_ };                     \
                decode(tl, args, &v);                                                      \
        }                                                                                  \
        GQA_KERNEL(name_, summary_, name_##_body, kind_, GQA_DECODE_IO_HELP, __VA_ARGS__);

GQA_DECODE_KERNELS(DEFINE_KERNEL)
