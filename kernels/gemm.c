/* kernels/gemm.c: C = A . B tiled over every PE of the machine.
 *
 * Output tiles (tile_m x tile_n) are dealt round-robin to the PEs by rank.
 * For each output tile the PE walks K in tile_k steps; the loads of step
 * s+1 are issued before the dot of step s, so DMA and GEMM overlap (double
 * buffering). Each step runs in a scratch scope; the accumulator lives in
 * persistent TCM. Inputs a.npy [M, K], b.npy [K, N]; output c.npy [M, N]. */
#include <cubesim/tl.h>

struct gemm_args {
        tl_tensor *a, *b, *c;        /* HBM operands */
        int64_t m, n, k;             /* problem */
        int64_t tm, tn, tk;          /* tile */
};

static const char *const dtypes[] = { "fp32", "bf16", "fp16", "bfp8_b", "bfp4_b", NULL };
/* The GEMM engine's fidelity, passes 1..4; "topology": pe.gemm.fidelity_passes. */
static const char *const fidelities[] = { "topology", "lofi", "hifi2", "hifi3", "hifi4", NULL };

static const struct tl_param gemm_params[] = {
        { "m", TL_PARAM_INT, 256, 1, 1 << 20, NULL, "rows of A and C" },
        { "n", TL_PARAM_INT, 256, 1, 1 << 20, NULL, "columns of B and C" },
        { "k", TL_PARAM_INT, 256, 1, 1 << 20, NULL, "columns of A, rows of B" },
        { "tile_m", TL_PARAM_INT, 64, 1, 4096, NULL, "output tile rows" },
        { "tile_n", TL_PARAM_INT, 64, 1, 4096, NULL, "output tile columns" },
        { "tile_k", TL_PARAM_INT, 64, 1, 4096, NULL, "K step" },
        { "dtype", TL_PARAM_CHOICE, 1, 0, 0, dtypes, "element type of A, B and C" },
        { "fidelity", TL_PARAM_CHOICE, 0, 0, 0, fidelities, "GEMM math fidelity (passes per op)" },
        { NULL, 0, 0, 0, 0, NULL, NULL },
};

static void gemm_setup(tl_setup *s, void *argp)
{
        struct gemm_args *g = argp;
        g->m = tl_setup_dim(s, "m", "a", 0);
        g->k = tl_setup_dim(s, "k", "a", 1);
        g->n = tl_setup_dim(s, "n", "b", 1);
        g->tm = tl_setup_int(s, "tile_m");
        g->tn = tl_setup_int(s, "tile_n");
        g->tk = tl_setup_int(s, "tile_k");
        tl_dtype dt = (tl_dtype)tl_setup_choice(s, "dtype");
        if (tl_setup_choice(s, "fidelity") > 0)
                tl_setup_gemm_fidelity(s, tl_setup_choice(s, "fidelity"));
        g->a = tl_setup_tensor(s, "a", TL_INPUT, dt, 2, (int64_t[]){ g->m, g->k });
        g->b = tl_setup_tensor(s, "b", TL_INPUT, dt, 2, (int64_t[]){ g->k, g->n });
        g->c = tl_setup_tensor(s, "c", TL_OUTPUT, dt, 2, (int64_t[]){ g->m, g->n });
}

static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }

/* The block of a 2-D tensor at (r, c) of extent (nr, nc). */
static tl_tensor *block(tl_ctx *tl, tl_tensor *t, int64_t r, int64_t c, int64_t nr, int64_t nc)
{
        return tl_view(tl, t, ((int64_t[]){ r, c }), ((int64_t[]){ nr, nc }));
}

static void gemm(tl_ctx *tl, const void *argp)
{
        const struct gemm_args *g = argp;
        int rank = tl_rank(tl, -1, -1, -1);
        int n_ranks = tl_num_programs(tl, 0) * tl_num_programs(tl, 1) * tl_num_programs(tl, 2);
        int64_t tiles_m = (g->m + g->tm - 1) / g->tm, tiles_n = (g->n + g->tn - 1) / g->tn;
        int64_t steps = (g->k + g->tk - 1) / g->tk;
        if (rank >= tiles_m * tiles_n)
                return;
        tl_dtype dt = tl_dtype_of(g->a);
        /* Persistent TCM: two A and two B buffers (ping-pong) and the accumulator. */
        tl_tensor *abuf[2], *bbuf[2];
        for (int i = 0; i < 2; i++) {
                abuf[i] = tl_alloc(tl, TL_TCM, dt, 2, ((int64_t[]){ g->tm, g->tk }));
                bbuf[i] = tl_alloc(tl, TL_TCM, dt, 2, ((int64_t[]){ g->tk, g->tn }));
        }
        tl_tensor *acc = tl_alloc(tl, TL_TCM, TL_FP32, 2, ((int64_t[]){ g->tm, g->tn }));
        for (int64_t t = rank; t < tiles_m * tiles_n; t += n_ranks) {
                int64_t i0 = (t / tiles_n) * g->tm, j0 = (t % tiles_n) * g->tn;
                int64_t mm = min64(g->tm, g->m - i0), nn = min64(g->tn, g->n - j0);
                tl_tensor *acc_v = block(tl, acc, 0, 0, mm, nn);
                int64_t kk = min64(g->tk, g->k);
                tl_copy_to(tl, block(tl, abuf[0], 0, 0, mm, kk), block(tl, g->a, i0, 0, mm, kk));
                tl_copy_to(tl, block(tl, bbuf[0], 0, 0, kk, nn), block(tl, g->b, 0, j0, kk, nn));
                for (int64_t s = 0; s < steps; s++) {
                        int cur = (int)(s % 2), nxt = 1 - cur;
                        int64_t k0 = s * g->tk, kn = min64(g->tk, g->k - k0);
                        if (s + 1 < steps) {
                                /* Prefetch step s+1 while step s computes. */
                                int64_t k1 = k0 + g->tk, kn1 = min64(g->tk, g->k - k1);
                                tl_copy_to(tl, block(tl, abuf[nxt], 0, 0, mm, kn1),
                                           block(tl, g->a, i0, k1, mm, kn1));
                                tl_copy_to(tl, block(tl, bbuf[nxt], 0, 0, kn1, nn),
                                           block(tl, g->b, k1, j0, kn1, nn));
                        }
                        tl_scratch_scope_begin(tl);
                        tl_tensor *p = tl_dot(tl, block(tl, abuf[cur], 0, 0, mm, kn),
                                              block(tl, bbuf[cur], 0, 0, kn, nn), false);
                        tl_copy_to(tl, acc_v, s == 0 ? p : tl_add(tl, acc_v, p));
                        tl_scratch_scope_end(tl);
                }
                tl_store(tl, block(tl, g->c, i0, j0, mm, nn), acc_v);
        }
}

const struct tl_kernel tl_kernel_gemm = {
        .name = "gemm",
        .summary = "C = A . B, output tiles spread over every PE, double-buffered loads",
        .fn = gemm,
        .params = gemm_params,
        .args_size = sizeof(struct gemm_args),
        .setup = gemm_setup,
        .io_help = "inputs a.npy [m, k], b.npy [k, n]; output c.npy [m, n]",
};
