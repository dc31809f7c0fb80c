/* kernels/gemm.c: C = A . B tiled over every PE of the machine.
 *
 * Output tiles (tile_m x tile_n) are dealt round-robin to the PEs by rank.
 * For each output tile the PE walks K in tile_k steps; the loads of step
 * s+1 are issued before the dot of step s, so DMA and GEMM overlap (double
 * buffering). Each step runs in a scratch scope; the accumulator lives in
 * persistent TCM. Inputs a.npy [M, K], b.npy [K, N]; output c.npy [M, N]. */
#include <cubesim/tl.h>

#include "gemm_tiles.h"

struct gemm_args {
        tl_tensor *a, *b, *c;        /* HBM operands */
        struct gemm_shape sh;        /* problem and tiles */
};

static const char *const dtypes[] = { "fp32", "bf16", "fp16", "bfp8_b", "bfp4_b", NULL };
static const struct tl_param gemm_params[] = {
        GEMM_PARAMS_SHAPE("C", "K step"),
        { "dtype", TL_PARAM_CHOICE, 1, 0, 0, dtypes, "element type of A, B and C" },
        GEMM_PARAM_FIDELITY,
        { NULL, 0, 0, 0, 0, NULL, NULL },
};

static void gemm_declare(tl_setup *s, void *argp)
{
        struct gemm_args *g = argp;
        tl_dtype dt = gemm_setup_ab(s, &g->sh, &g->a, &g->b);
        g->c = tl_setup_tensor(s, "c", TL_OUTPUT, dt, 2, (int64_t[]){ g->sh.m, g->sh.n });
}

static void gemm(tl_ctx *tl, const void *argp)
{
        const struct gemm_args *g = argp;
        const struct gemm_shape *sh = &g->sh;
        struct gemm_deal d;
        if (!gemm_deal_begin(tl, sh, &d))
                return;
        /* Persistent TCM: two A and two B buffers (ping-pong) and the accumulator. */
        struct gemm_kwalk w;
        GEMM_KWALK_INIT(tl, &w, g->a, g->b, sh, tl_dtype_of(g->a));
        int64_t steps = gemm_kwalk_steps(&w);
        tl_tensor *acc = tl_alloc(tl, TL_TCM, TL_FP32, 2, ((int64_t[]){ sh->tm, sh->tn }));
        while (gemm_deal_next(&d)) {
                tl_tensor *acc_v = gemm_block(tl, acc, 0, 0, d.mm, d.nn);
                gemm_kwalk_begin(tl, &w, &d);
                for (int64_t s = 0; s < steps; s++) {
                        tl_tensor *a, *b;
                        gemm_kwalk_step(tl, &w, s, &a, &b);
                        tl_scratch_scope_begin(tl);
                        tl_tensor *p = tl_dot(tl, a, b, false);
                        tl_copy_to(tl, acc_v, s == 0 ? p : tl_add(tl, acc_v, p));
                        tl_scratch_scope_end(tl);
                }
                tl_store(tl, gemm_block(tl, g->c, d.i0, d.j0, d.mm, d.nn), acc_v);
        }
}

/* Reject tiles a PE cannot hold (a run would stop at its first PE): in
 * persistent TCM the ping-pong buffers of A and B (GEMM_KWALK_INIT) and
 * the fp32 accumulator, all of whole tiles; in scratch a K step's product
 * and sum. */
static void check_tcm(tl_setup *s, const struct gemm_shape *sh, tl_dtype dt)
{
        tl_machine mc = tl_setup_machine(s);
        uint64_t bufs = gemm_kwalk_bytes(sh, dt);
        uint64_t acc = tl_dtype_bytes(TL_FP32, sh->tm * sh->tn, sh->tn);
        if (bufs + acc > (uint64_t)mc.tcm_alloc_bytes)
                tl_setup_error(s, "tile_m %lld x tile_n %lld x tile_k %lld: a PE needs %llu bytes "
                               "of TCM (%llu of A and B buffers, %llu of accumulator), more than "
                               "the %lld beside scratch; make the tiles smaller",
                               (long long)sh->tm, (long long)sh->tn, (long long)sh->tk,
                               (unsigned long long)(bufs + acc), (unsigned long long)bufs,
                               (unsigned long long)acc, (long long)mc.tcm_alloc_bytes);
        int64_t mm = min64(sh->tm, sh->m), nn = min64(sh->tn, sh->n);
        uint64_t step = 2 * tl_dtype_bytes(TL_FP32, mm * nn, nn);
        if (step > (uint64_t)mc.scratch_bytes)
                tl_setup_error(s, "tile_m %lld x tile_n %lld: a K step needs %llu bytes of "
                               "scratch, more than the %lld ceiling; make the tiles smaller",
                               (long long)sh->tm, (long long)sh->tn, (unsigned long long)step,
                               (long long)mc.scratch_bytes);
}

/* gemm_declare, then the check (defined here, below the body, so that
 * the body keeps its lines in op_logs). */
static void gemm_setup(tl_setup *s, void *argp)
{
        const struct gemm_args *g = argp;
        gemm_declare(s, argp);
        check_tcm(s, &g->sh, (tl_dtype)tl_setup_choice(s, "dtype"));
}

TL_KERNEL(gemm, gemm,
          "C = A . B, output tiles spread over every PE, double-buffered loads",
          "inputs a.npy [m, k], b.npy [k, n]; output c.npy [m, n]");
