/* kernels/gemm_tiles.h: what gemm, gemm_epilogue and gemm_epilogue_prims
 * share: the setup of A [m, k], B [k, n] and the tiles, the output tiles
 * (dealt round-robin to the PEs by gemm_deal), and one output tile's walk
 * over K in tile_k steps with double-buffered loads (the loads of step s+1
 * are issued before the caller's dot of step s, so DMA and GEMM overlap).
 * The buffers live in persistent TCM. */
#ifndef CUBESIM_KERNELS_GEMM_TILES_H
#define CUBESIM_KERNELS_GEMM_TILES_H

#include <cubesim/tl.h>

struct gemm_shape {
        int64_t m, n, k;                /* problem: A [m, k], B [k, n] */
        int64_t tm, tn, tk;             /* output tile and K step */
};

/* The setup the GEMM kernels share: m, k and n from a and b, the tiles,
 * the fidelity; declares inputs a [m, k] and b [k, n] of the chosen dtype,
 * which it returns. */
tl_dtype gemm_setup_ab(tl_setup *s, struct gemm_shape *sh, tl_tensor **a, tl_tensor **b);
/* The dtype parameter, for outputs tiled by sh (whose tile_n a block
 * float needs on its blocks of 16: else a setup error). */
tl_dtype gemm_setup_dtype(tl_setup *s, const struct gemm_shape *sh);

/* The output tiles dealt to this PE, round-robin by rank: tiles rank,
 * rank + ranks, ... (row-major over the tiles, the last ones clipped),
 * and the one at hand. */
struct gemm_deal {
        const struct gemm_shape *sh; /* the problem and its tiles */
        int64_t next;                /* the tile gemm_deal_next hands out next */
        int64_t stride;              /* ranks: the PEs of the launch */
        int64_t n_tiles;             /* output tiles of the problem */
        int64_t i0, j0;              /* the tile at hand: its first row and column */
        int64_t mm, nn;              /* its rows and columns */
};

/* Start dealing sh's output tiles to this PE; false if it gets none. */
bool gemm_deal_begin(tl_ctx *tl, const struct gemm_shape *sh, struct gemm_deal *d);
/* Step to this PE's next tile; false after its last. */
bool gemm_deal_next(struct gemm_deal *d);

/* The parameters gemm_setup_ab reads, in two parts around dtype (whose
 * choices are the kernel's): the problem and its tiles, `out` naming the
 * output and tile_k_help saying what the K step is to the kernel; then
 * the GEMM engine's fidelity. */
#define GEMM_PARAMS_SHAPE(out, tile_k_help)                                                     \
        { "m", TL_PARAM_INT, 256, 1, 1 << 20, NULL, "rows of A and " out },                     \
        { "n", TL_PARAM_INT, 256, 1, 1 << 20, NULL, "columns of B and " out },                  \
        { "k", TL_PARAM_INT, 256, 1, 1 << 20, NULL, "columns of A, rows of B" },                \
        { "tile_m", TL_PARAM_INT, 64, 1, 4096, NULL, "output tile rows" },                      \
        { "tile_n", TL_PARAM_INT, 64, 1, 4096, NULL, "output tile columns" },                   \
        { "tile_k", TL_PARAM_INT, 64, 1, 4096, NULL, tile_k_help }
extern const char *const gemm_fidelities[];
#define GEMM_PARAM_FIDELITY                                                                     \
        { "fidelity", TL_PARAM_CHOICE, 0, 0, 0, gemm_fidelities,                                \
          "GEMM math fidelity (passes per op)" }

struct gemm_kwalk {
        tl_tensor *a, *b;               /* HBM operands A [m, k], B [k, n] */
        tl_tensor *abuf[2], *bbuf[2];   /* TCM ping-pong buffers, tm x tk and tk x tn */
        int64_t k, tk;                  /* K and its step, elements */
        int64_t i0, j0;                 /* the output tile's first row and column */
        int64_t mm, nn;                 /* the output tile's rows and columns */
};

static inline int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }

/* The block of a 2-D tensor at (r, c) of extent (nr, nc). */
tl_tensor *gemm_block(tl_ctx *tl, tl_tensor *t, int64_t r, int64_t c, int64_t nr, int64_t nc);

/* Set w up for A and B with the tiles and K step of shape sh: its buffers of
 * element type dt allocated in persistent TCM. A macro, so that a TCM
 * error names the kernel's own line. */
#define GEMM_KWALK_INIT(tl, w, a_, b_, sh, dt)                                          \
        do {                                                                            \
                *(w) = (struct gemm_kwalk){ .a = (a_), .b = (b_), .k = (sh)->k,         \
                                            .tk = (sh)->tk };                           \
                for (int gemm_i_ = 0; gemm_i_ < 2; gemm_i_++) {                          \
                        (w)->abuf[gemm_i_] = tl_alloc((tl), TL_TCM, (dt), 2,             \
                                                      ((int64_t[]){ (sh)->tm, (sh)->tk })); \
                        (w)->bbuf[gemm_i_] = tl_alloc((tl), TL_TCM, (dt), 2,             \
                                                      ((int64_t[]){ (sh)->tk, (sh)->tn })); \
                }                                                                       \
        } while (0)
/* The persistent TCM GEMM_KWALK_INIT allocates: two A and two B buffers
 * of whole tiles, bytes. For the setups' checks. */
uint64_t gemm_kwalk_bytes(const struct gemm_shape *sh, tl_dtype dt);
/* How many K steps each output tile takes. */
int64_t gemm_kwalk_steps(const struct gemm_kwalk *w);
/* Start the tile at hand of d: load its step 0. */
void gemm_kwalk_begin(tl_ctx *tl, struct gemm_kwalk *w, const struct gemm_deal *d);
/* Step s: issue the loads of step s+1 (if any), then give the TCM blocks
 * of A (mm x kn) and B (kn x nn) that hold step s. */
void gemm_kwalk_step(tl_ctx *tl, struct gemm_kwalk *w, int64_t s, tl_tensor **a,
                     tl_tensor **b);

#endif
