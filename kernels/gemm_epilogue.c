/* kernels/gemm_epilogue.c: one composite per output tile:
 *     out = 0.5 * relu(sum_k dequant_k(A_k . B_k) + bias)
 * with dequant at K_TILE scope (one scale per K tile) and bias, relu and
 * scale at OUTPUT_TILE scope. Output tiles are dealt round-robin to the
 * PEs; A and B stream from HBM in the composite's tile loop. Inputs a.npy
 * [m, k], b.npy [k, n], s.npy [k / tile_k rounded up], bias.npy [1, n];
 * output out.npy [m, n].
 *
 * gemm_epilogue_prims does the same work with primitives and the same
 * overlap (the next K tile's loads issued before this one's dot, two
 * buffers): the timing model's "equal work, equal time" check
 * (tests/timing_props.sh) compares the two. Its only extra work is the
 * accumulating add the GEMM array does in the composite. */
#include <cubesim/tl.h>

#include "gemm_tiles.h"

struct ge_args {
        tl_tensor *a, *b, *s, *bias, *out; /* HBM tensors */
        struct gemm_shape sh;              /* problem and tiles */
};

static const char *const dtypes[] = { "fp32", "bf16", "fp16", NULL };
static const struct tl_param ge_params[] = {
        GEMM_PARAMS_SHAPE("out", "K tile of the pipeline (dequant scope)"),
        { "dtype", TL_PARAM_CHOICE, 1, 0, 0, dtypes, "element type of A, B and out" },
        GEMM_PARAM_FIDELITY,
        { NULL, 0, 0, 0, 0, NULL, NULL },
};

static const char ge_io_help[] = "inputs a.npy [m, k], b.npy [k, n], s.npy [ceil(k / tile_k)], "
                                 "bias.npy [1, n]; output out.npy [m, n]";

static void ge_declare(tl_setup *s, void *argp)
{
        struct ge_args *g = argp;
        tl_dtype dt = gemm_setup_ab(s, &g->sh, &g->a, &g->b);
        g->s = tl_setup_tensor(s, "s", TL_INPUT, TL_FP32, 1,
                               (int64_t[]){ (g->sh.k + g->sh.tk - 1) / g->sh.tk });
        g->bias = tl_setup_tensor(s, "bias", TL_INPUT, TL_FP32, 2, (int64_t[]){ 1, g->sh.n });
        g->out = tl_setup_tensor(s, "out", TL_OUTPUT, dt, 2, (int64_t[]){ g->sh.m, g->sh.n });
}

/* What each PE of gemm_epilogue and gemm_epilogue_prims starts with. */
struct ge_pe {
        struct gemm_deal tiles;      /* its output tiles */
        tl_tensor *s;                /* the per-K scales, TCM */
        tl_tensor *bias;             /* the bias [1, n], TCM */
};

/* If this PE has an output tile: its tiles, the per-K scales and the bias,
 * once, in TCM, and true. */
static bool ge_begin(tl_ctx *tl, const struct ge_args *g, struct ge_pe *pe)
{
        if (!gemm_deal_begin(tl, &g->sh, &pe->tiles))
                return false;
        int64_t nk = tl_dim(g->s, 0);
        pe->s = tl_alloc(tl, TL_TCM, TL_FP32, 1, &nk);
        tl_copy_to(tl, pe->s, g->s);
        pe->bias = tl_alloc(tl, TL_TCM, TL_FP32, 2, ((int64_t[]){ 1, g->sh.n }));
        tl_copy_to(tl, pe->bias, g->bias);
        return true;
}

static void gemm_epilogue(tl_ctx *tl, const void *argp)
{
        const struct ge_args *g = argp;
        struct ge_pe pe;
        if (!ge_begin(tl, g, &pe))
                return;
        struct gemm_deal *d = &pe.tiles;
        while (gemm_deal_next(d)) {
                int64_t i0 = d->i0, j0 = d->j0, mm = d->mm, nn = d->nn;
                tl_tensor *a = tl_view(tl, g->a, ((int64_t[]){ i0, 0 }), ((int64_t[]){ mm, g->sh.k }));
                tl_tensor *b = tl_view(tl, g->b, ((int64_t[]){ 0, j0 }), ((int64_t[]){ g->sh.k, nn }));
                tl_tensor *out = tl_view(tl, g->out, ((int64_t[]){ i0, j0 }), ((int64_t[]){ mm, nn }));
                tl_tensor *bias = tl_view(tl, pe.bias, ((int64_t[]){ 0, j0 }), ((int64_t[]){ 1, nn }));
                tl_handle h = tl_composite(tl, &(tl_composite_desc){
                        .op = TL_GEMM, .a = a, .b = b, .out = out,
                        .tile_m = mm, .tile_n = nn, .tile_k = g->sh.tk,
                        .epilogue = (tl_epilogue[]){
                                { .op = TL_DEQUANT, .tensor = pe.s, .scope = TL_SCOPE_K_TILE },
                                { .op = TL_BIAS, .tensor = bias },
                                { .op = TL_RELU },
                                { .op = TL_SCALE, .factor = 0.5f },
                        },
                        .n_epilogue = 4,
                });
                tl_wait(tl, h);
        }
}

/* ge_declare, then the check (defined here, below the body, so that the
 * body keeps its lines in op_logs). */
static void ge_setup(tl_setup *s, void *argp)
{
        struct ge_args *g = argp;
        ge_declare(s, argp);
        /* Every PE keeps the scales and the bias in TCM (ge_begin). */
        int64_t nk = (g->sh.k + g->sh.tk - 1) / g->sh.tk;
        uint64_t need = tl_dtype_bytes(TL_FP32, nk + g->sh.n, 1);
        int64_t room = tl_setup_machine(s).tcm_alloc_bytes;
        if (need > (uint64_t)room)
                tl_setup_error(s, "n (%lld) and k / tile_k (%lld): the bias [1, n] and the "
                               "scales every PE keeps need %llu bytes of TCM, more than the %lld "
                               "beside scratch", (long long)g->sh.n, (long long)nk,
                               (unsigned long long)need, (long long)room);
}

/* gemm_epilogue and gemm_epilogue_prims share their parameters and files. */
TL_KERNEL(gemm_epilogue, ge,
          "composite GEMM + dequant (K tile) + bias + relu + scale 0.5 per output tile", ge_io_help);

static void gemm_epilogue_prims(tl_ctx *tl, const void *argp)
{
        const struct ge_args *g = argp;
        struct ge_pe pe;
        if (!ge_begin(tl, g, &pe))
                return;
        struct gemm_kwalk w;
        GEMM_KWALK_INIT(tl, &w, g->a, g->b, &g->sh, tl_dtype_of(g->a));
        int64_t steps = gemm_kwalk_steps(&w);
        struct gemm_deal *d = &pe.tiles;
        while (gemm_deal_next(d)) {
                gemm_kwalk_begin(tl, &w, d);
                tl_scratch_scope_begin(tl);
                tl_tensor *acc = NULL;
                for (int64_t st = 0; st < steps; st++) {
                        tl_tensor *a, *b;
                        gemm_kwalk_step(tl, &w, st, &a, &b);
                        tl_tensor *p = tl_dot(tl, a, b, false);
                        tl_tensor *sk = tl_view(tl, pe.s, ((int64_t[]){ st }), ((int64_t[]){ 1 }));
                        p = tl_mul(tl, p, sk); /* dequant, this K tile's scale */
                        acc = acc ? tl_add(tl, acc, p) : p;
                }
                tl_tensor *bias = gemm_block(tl, pe.bias, 0, d->j0, 1, d->nn);
                tl_tensor *y = tl_scale(tl, tl_relu(tl, tl_add(tl, acc, bias)), 0.5f);
                tl_store(tl, gemm_block(tl, g->out, d->i0, d->j0, d->mm, d->nn), y);
                tl_scratch_scope_end(tl);
        }
}

/* gemm_epilogue_prims also holds the K walk's buffers, and keeps every K
 * step's product, scaled product and sum in one scratch scope until the
 * tile's bias, relu and scale. */
static void gep_setup(tl_setup *s, void *argp)
{
        struct ge_args *g = argp;
        ge_setup(s, argp);
        const struct gemm_shape *sh = &g->sh;
        tl_machine mc = tl_setup_machine(s);
        int64_t nk = (sh->k + sh->tk - 1) / sh->tk;
        tl_dtype dt = (tl_dtype)tl_setup_choice(s, "dtype");
        uint64_t bufs = gemm_kwalk_bytes(sh, dt), rest = tl_dtype_bytes(TL_FP32, nk + sh->n, 1);
        if (rest <= (uint64_t)mc.tcm_alloc_bytes && bufs + rest > (uint64_t)mc.tcm_alloc_bytes)
                tl_setup_error(s, "tile_m %lld x tile_n %lld x tile_k %lld: a PE needs %llu bytes "
                               "of TCM (%llu of A and B buffers), more than the %lld beside "
                               "scratch; make the tiles smaller", (long long)sh->tm,
                               (long long)sh->tn, (long long)sh->tk,
                               (unsigned long long)(bufs + rest), (unsigned long long)bufs,
                               (long long)mc.tcm_alloc_bytes);
        int64_t mm = min64(sh->tm, sh->m), nn = min64(sh->tn, sh->n);
        uint64_t tile = (uint64_t)(3 * nk + 2) * tl_dtype_bytes(TL_FP32, mm * nn, nn);
        if (tile > (uint64_t)mc.scratch_bytes)
                tl_setup_error(s, "tile_m %lld x tile_n %lld over %lld K steps (k / tile_k): a "
                               "tile keeps %llu bytes of scratch, more than the %lld ceiling; "
                               "make the tiles smaller or tile_k larger", (long long)sh->tm,
                               (long long)sh->tn, (long long)nk, (unsigned long long)tile,
                               (long long)mc.scratch_bytes);
}

const struct tl_kernel tl_kernel_gemm_epilogue_prims = {
        .name = "gemm_epilogue_prims",
        .summary = "gemm_epilogue's work as primitives with the same overlap (double-buffered "
                   "loads)",
        .fn = gemm_epilogue_prims,
        .params = ge_params,
        .args_size = sizeof(struct ge_args),
        .setup = gep_setup,
        .io_help = ge_io_help,
};
