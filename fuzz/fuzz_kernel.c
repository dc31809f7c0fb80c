/* fuzz/fuzz_kernel.c: libFuzzer harness for the kernel language (tl/):
 * what a user kernel and its setup can do to cubesim through the tl_*
 * entry points.
 *
 * Each input is a program, run in data mode. Its first bytes are a header:
 * which PEs run the kernel (PE 0 alone, two PEs of a cube, two PEs of two
 * cubes, or all eight), the machine (topologies/small.yaml, 2 cubes of
 * 2x2 PEs, or an inline one of 2 SIPs x 2 cubes x 1x2 PEs), and the
 * setup's extra actions: HBM tensors and TCM-sharded launch tensors of
 * fuzzed names, dtypes (block floats too) and shapes (0-D too), their
 * placement (tl_setup_replicate, tl_setup_shard with any axis and block,
 * tl_setup_interleave, on the launch's tensors, temps, or NULL), and the
 * GEMM's fidelity. The rest is the kernel: a sequence of tl_* calls that
 * every running PE decodes from the same bytes with its own cursor (an
 * `only` op makes the next call one PE's, so the PEs can diverge).
 * Tensor arguments are slots of a table of what the PE has made so far
 * (first the launch's tensors), NULL, tensors whose scratch scope has
 * ended, or another PE's tensors; shapes, starts, offsets, ranks, tags,
 * dtypes, spaces and epilogues are mostly small and valid, sometimes
 * extremes (INT64_MAX, 2^40, -1) or values none of the enums has. Ranks
 * are mostly relative among the running PEs (send to the k-th next,
 * receive from the k-th previous), so exchanges and multicasts meet. A few
 * ops build well-formed operands first and then bend one thing: GEMM
 * composites with epilogues (RMSNORM weights of any rank, 0-D operands),
 * softmax_merge with aliased operands, block-float tensors read and
 * written through views at unaligned columns, 0-D tensors in every op.
 *
 * An input whose first byte is 0xff is a program of the harness's first
 * encoding (PE 0 alone on small.yaml, the launch's four HBM tensors, the
 * first 24 ops, three dtypes): the programs kept from then still replay
 * as they did.
 *
 * The run may succeed or stop with a kernel error, a setup error (exit
 * status 2), a deadlock or the event budget; the outcome must be
 * consistent: 0 exactly when no error was reported, and a kernel error
 * names this file's line and one of the PEs that ran the program. A crash,
 * a sanitizer report or a leak is a finding. Pointers that never were
 * tensors are not fed: nothing can check those.
 * Build and run: fuzz/README.md or scripts/fuzz.sh. */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/diag.h"
#include "tl/tl_int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#ifndef CUBESIM_SOURCE_DIR
#error "build with -DCUBESIM_SOURCE_DIR='\"/path/to/the/tree\"' (scripts/fuzz.sh does)"
#endif
/* (The CMake build defines it too: tests/unit/test_fuzz_replay.c includes
 * this file to replay the corpus.) */

/* ---- the program's bytes and state ---- */

#define N_SLOTS 32
#define N_HANDLES 4
#define N_PES 8                      /* both machines have 8 PEs */
#define LEGACY 0xff                  /* first byte of a first-encoding program */

/* A reader of the program's bytes and the state of one running PE (the
 * setup has one too, for the header). */
struct fuzz_pe {
        size_t at;                   /* its next byte */
        tl_ctx *tl;                  /* its PE (NULL: the setup) */
        int idx;                     /* its index among the running PEs */
        int only;                    /* the next op runs only on running PE #only; -1: on all */
        tl_tensor *slots[N_SLOTS];   /* tensors made so far, a ring */
        size_t n_made;               /* tensors ever put in the ring */
        tl_handle handles[N_HANDLES]; /* composites issued, a ring */
        size_t n_handles;            /* handles ever put in the ring */
};

static const uint8_t *prog;          /* the input */
static size_t prog_len;              /* its length */
static size_t prog_start;            /* where the kernel's ops start (after the header) */
static bool legacy;                  /* the first encoding */
static int n_run;                    /* PEs running the program */
static int run_rank[N_PES];          /* their ranks */
static struct fuzz_pe pes[N_PES];    /* their state, by index in run_rank */
static struct fuzz_pe host;          /* the header's reader */

static uint8_t u8(struct fuzz_pe *p)
{
        return p->at < prog_len ? prog[p->at++] : 0;
}

/* An extent, start or offset: mostly 0..23, sometimes an extreme, rarely
 * any 64 bits. */
static int64_t i64(struct fuzz_pe *p)
{
        static const int64_t extremes[] = {
                -1, -2, INT64_MAX, INT64_MIN, INT64_MAX - 2, INT64_C(1) << 40,
                (INT64_C(1) << 40) + 1, INT64_C(1) << 24, INT64_C(1) << 32, 64, 128, 4096,
                INT64_C(1) << 62, -(INT64_C(1) << 40),
        };
        uint8_t b = u8(p);
        if (b < 200)
                return b % 24;
        if (b < 255)
                return extremes[(b - 200) % (sizeof extremes / sizeof extremes[0])];
        uint64_t v = 0;
        for (int i = 0; i < 8; i++)
                v = v << 8 | u8(p);
        return (int64_t)v;
}

/* A small int (mostly 0..3), sometimes an extreme. */
static int small(struct fuzz_pe *p)
{
        static const int extremes[] = { -1, INT32_MAX, INT32_MIN, 1 << 20 };
        uint8_t b = u8(p);
        return b < 240 ? b % 4 : extremes[b % 4];
}

/* A float operand (a scale, an epsilon, a fill value). */
static float factor_of(struct fuzz_pe *p)
{
        static const float special[] = { 0.0f, -0.0f, 1e-6f, -1.0f, 1e30f, INFINITY,
                                         -INFINITY, NAN };
        uint8_t b = u8(p);
        return b < 248 ? (float)(int8_t)b * 0.25f : special[b % 8];
}

/* ---- the program's state ---- */

struct fuzz_args {
        tl_tensor *hbm[TL_MAX_GLOBALS]; /* the launch's tensors */
        int n_hbm;                   /* entries of hbm */
};

static void keep(struct fuzz_pe *p, tl_tensor *t)
{
        p->slots[p->n_made++ % N_SLOTS] = t;
}

static void keep_handle(struct fuzz_pe *p, tl_handle h)
{
        p->handles[p->n_handles++ % N_HANDLES] = h;
}

static tl_tensor *slot(struct fuzz_pe *p)
{
        uint8_t b = u8(p);
        if (!legacy && b == 254 && n_run > 1)
                p = &pes[(p->idx + 1) % n_run];  /* another PE's tensor */
        size_t n = p->n_made < N_SLOTS ? p->n_made : N_SLOTS;
        if (b == 255 || n == 0)
                return NULL;
        return p->slots[b % n];
}

static int ndim_of(struct fuzz_pe *p)
{
        return u8(p) % 6;            /* 5: one more than TL_MAX_DIMS */
}

static void shape_of(struct fuzz_pe *p, int64_t *shape)
{
        for (int i = 0; i < TL_MAX_DIMS; i++)
                shape[i] = i64(p);
}

static tl_dtype dtype_of(struct fuzz_pe *p)
{
        uint8_t b = u8(p);
        if (b >= 240)
                return (tl_dtype)(int8_t)b;
        return (tl_dtype)(b % (legacy ? 3 : 5));     /* the block floats from the second */
}

static tl_op math_op(struct fuzz_pe *p)
{
        /* All of tl_op and a little past it. */
        return (tl_op)(u8(p) % (legacy ? 20 : TL_GEMM + 4));
}

/* A rank: mostly one of the running PEs, the k-th after this one (to
 * send) or before it (to receive: the two meet); else any of -1..8 or an
 * extreme. */
static int rank_of(struct fuzz_pe *p, int dir)
{
        uint8_t b = u8(p);
        if (b < 160)
                return run_rank[((p->idx + dir * (b % n_run)) % n_run + n_run) % n_run];
        if (b < 250)
                return b % 10 - 1;
        return b & 1 ? INT32_MAX : INT32_MIN;
}

static int tag_of(struct fuzz_pe *p)
{
        return legacy ? u8(p) % 4 : small(p);
}

/* The next op is this PE's: not skipped by an `only`. Every op decodes
 * its bytes first, so the PEs' cursors stay together. */
static bool go(struct fuzz_pe *p)
{
        bool mine = p->only < 0 || p->only == p->idx;
        p->only = -1;
        return mine;
}

/* ---- recipes: well-formed operands, one thing bent ---- */

static tl_tensor *fill2(tl_ctx *tl, tl_dtype dt, int64_t r, int64_t c, float v)
{
        return tl_fill(tl, dt, 2, ((int64_t[]){ r, c }), v);
}

/* A persistent TCM [r, c] tensor of dt holding v. */
static tl_tensor *tcm2(tl_ctx *tl, tl_dtype dt, int64_t r, int64_t c, float v)
{
        tl_tensor *t = tl_alloc(tl, TL_TCM, dt, 2, ((int64_t[]){ r, c }));
        tl_copy_to(tl, t, fill2(tl, TL_FP32, r, c, v));
        return t;
}

static tl_tensor *zero_d(tl_ctx *tl, float v)
{
        return tl_fill(tl, TL_FP32, 0, NULL, v);
}

/* An epilogue operand for an output [m, n] of a GEMM with k: one of the
 * shapes that broadcast, and some that do not. */
static tl_tensor *epi_tensor(tl_ctx *tl, tl_tensor *pick, uint8_t kind, int64_t m, int64_t n,
                             int64_t k, float v)
{
        switch (kind % 12) {
        case 0: return NULL;
        case 1: return tl_fill(tl, TL_FP32, 1, ((int64_t[]){ n }), v);
        case 2: return fill2(tl, TL_FP32, 1, n, v);
        case 3: return fill2(tl, TL_FP32, m, n, v);
        case 4: return zero_d(tl, v);
        case 5: return fill2(tl, TL_FP32, n, 1, v);             /* the wrong way round */
        case 6: return fill2(tl, TL_FP32, 2, n, v);
        case 7: return tl_fill(tl, TL_FP32, 1, ((int64_t[]){ (k + 63) / 64 }), v); /* K scales */
        case 8: return tl_fill(tl, TL_FP32, 3, ((int64_t[]){ 1, 1, n }), v); /* a rank too many */
        case 9: return tl_alloc(tl, TL_TCM, TL_BFP8_B, 1, ((int64_t[]){ n }));
        case 10: return tl_fill(tl, TL_FP32, 1, ((int64_t[]){ m }), v);
        default: return pick;
        }
}

static tl_op epi_op(struct fuzz_pe *p)
{
        static const tl_op ops[] = { TL_RMSNORM, TL_BIAS, TL_DEQUANT, TL_SCALE, TL_ADD_SCALAR,
                                     TL_RELU, TL_GELU, TL_ADD, TL_MUL, TL_MAX, TL_EXP,
                                     TL_ROWMAX, TL_GEMM, TL_NONE, TL_CAST, TL_WHERE };
        uint8_t b = u8(p);
        return b < 240 ? ops[b % 16] : (tl_op)(int8_t)b;
}

/* A GEMM (or MATH-only) composite on operands of fuzzed small shapes, with
 * up to four epilogue ops whose tensors are of the output's shape, a
 * row, a column, 0-D, of a wrong rank. */
static void gemm_recipe(struct fuzz_pe *p)
{
        uint8_t head = u8(p), ob = u8(p), ne = u8(p) % 6;
        int64_t m = 1 + u8(p) % 20, n = 1 + u8(p) % 40, k = 1 + u8(p) % 80;
        bool trans = u8(p) & 1;
        tl_dtype dta = dtype_of(p), dtb = dtype_of(p), dto = dtype_of(p);
        tl_tensor *pick_out = slot(p);
        struct { tl_op op; uint8_t kind; float factor; tl_cscope scope; tl_tensor *pick; } e[4];
        for (int i = 0; i < 4; i++) {
                e[i].op = epi_op(p);
                e[i].kind = u8(p);
                e[i].pick = slot(p);
                e[i].factor = factor_of(p);
                uint8_t s = u8(p);
                e[i].scope = s < 250 ? (tl_cscope)(s % 3) : (tl_cscope)(int8_t)s;
        }
        int64_t tm = i64(p), tn = i64(p), tk = i64(p);
        bool wait = u8(p) & 1;
        if (!go(p))
                return;
        tl_ctx *tl = p->tl;
        tl_tensor *a = fill2(tl, TL_FP32, m, k, 0.5f), *b = fill2(tl, TL_FP32, trans ? n : k,
                                                                    trans ? k : n, 0.25f);
        if (dta != TL_FP32 && (unsigned)dta <= TL_BFP4_B)
                a = tl_cast(tl, a, dta);
        if (dtb != TL_FP32 && (unsigned)dtb <= TL_BFP4_B)
                b = tl_cast(tl, b, dtb);
        tl_tensor *out;
        switch (ob % 8) {
        case 0: out = tl_alloc(tl, TL_TCM, (unsigned)dto <= TL_BFP4_B ? dto : TL_FP32, 2,
                               ((int64_t[]){ m, n })); break;
        case 1: out = tl_alloc(tl, TL_SCRATCH, TL_FP32, 2, ((int64_t[]){ m, n })); break;
        case 2: out = zero_d(tl, 1.0f); break;
        case 3: out = tl_alloc(tl, TL_TCM, TL_FP32, 3, ((int64_t[]){ 1, m, n })); break;
        case 4: out = tl_alloc(tl, TL_TCM, TL_FP32, 1, ((int64_t[]){ n })); break;
        case 5: {                                               /* a view at column 1 */
                tl_tensor *w = tl_alloc(tl, TL_TCM, (unsigned)dto <= TL_BFP4_B ? dto : TL_FP32, 2,
                                        ((int64_t[]){ m, n + 1 }));
                out = tl_view(tl, w, ((int64_t[]){ 0, 1 }), ((int64_t[]){ m, n }));
                break;
        }
        default: out = pick_out; break;
        }
        keep(p, out);
        tl_epilogue ep[4];
        for (int i = 0; i < 4; i++) {
                ep[i] = (tl_epilogue){ .op = e[i].op, .factor = e[i].factor, .scope = e[i].scope,
                                       .tensor = epi_tensor(tl, e[i].pick, e[i].kind, m, n, k, 1.0f) };
        }
        tl_composite_desc d = {
                .op = head < 160 ? TL_GEMM : head < 250 ? TL_NONE : (tl_op)(int8_t)head,
                .a = a, .b = b, .trans_b = trans, .out = out,
                .epilogue = ne == 5 ? NULL : ep, .n_epilogue = ne == 5 ? 1 : ne,
                .tile_m = tm, .tile_n = tn, .tile_k = tk,
        };
        tl_handle h = tl_composite(tl, &d);
        keep_handle(p, h);
        if (wait)
                tl_wait(tl, h);
}

/* softmax_merge on well-formed operands (s [M, N], v [N, D], m and l
 * [M, 1] and o [M, D] in TCM), then some aliased: l or o the same tensor
 * as m, s or v the same as o, two views of one tensor, or a 0-D tensor in
 * one operand's place. */
static void merge_recipe(struct fuzz_pe *p)
{
        int64_t mm = 1 + u8(p) % 8, nn = 1 + u8(p) % 20, dd = 1 + u8(p) % 8;
        uint8_t alias = u8(p), which = u8(p), sb = u8(p);
        tl_dtype dts = dtype_of(p);
        bool wait = u8(p) & 1;
        if (!go(p))
                return;
        tl_ctx *tl = p->tl;
        tl_tensor *s = fill2(tl, TL_FP32, mm, nn, 0.5f);
        if (sb % 4 == 1)
                s = tcm2(tl, (unsigned)dts <= TL_BFP4_B ? dts : TL_FP32, mm, nn, 0.5f);
        else if (sb % 4 == 2 && mm <= 16 && nn <= 16)      /* scores in HBM */
                s = tl_view(tl, pes[p->idx].slots[0], ((int64_t[]){ 0, 0 }),
                            ((int64_t[]){ mm, nn }));
        tl_tensor *v = fill2(tl, TL_FP32, nn, dd, 0.25f);
        tl_tensor *m, *l;
        if (alias & 0x40) {          /* m and l columns of one [M, 2] tensor */
                tl_tensor *ml = tcm2(tl, TL_FP32, mm, 2, -INFINITY);
                m = tl_view(tl, ml, ((int64_t[]){ 0, 0 }), ((int64_t[]){ mm, 1 }));
                l = tl_view(tl, ml, ((int64_t[]){ 0, (alias & 0x80) ? 0 : 1 }),
                            ((int64_t[]){ mm, 1 }));
        } else {
                m = tcm2(tl, TL_FP32, mm, 1, -INFINITY);
                l = tcm2(tl, TL_FP32, mm, 1, 0.0f);
        }
        tl_tensor *o = tcm2(tl, TL_FP32, mm, dd, 0.0f);
        if (alias & 1)
                l = m;
        if (alias & 2)
                o = m;
        if (alias & 4)
                s = o;
        if (alias & 8)
                v = o;
        if (alias & 16)
                o = l;
        if (alias & 32) {            /* a 0-D tensor in one operand's place */
                tl_tensor *z = zero_d(tl, 0.0f), **all[5] = { &s, &v, &m, &l, &o };
                *all[which % 5] = z;
        }
        keep(p, m);
        keep(p, o);
        tl_handle h = tl_softmax_merge(tl, s, v, m, l, o);
        keep_handle(p, h);
        if (wait)
                tl_wait(tl, h);
}

/* A block-float tensor [R, C] (TCM, scratch or the launch's), a view of it
 * at an unaligned column, and one op through the view: a store, a load,
 * a cast, a copy, a send, a dot. */
static void bfp_recipe(struct fuzz_pe *p)
{
        static const int64_t cols[] = { 16, 17, 20, 31, 32, 33, 40, 48 };
        uint8_t where = u8(p), act = u8(p);
        tl_dtype dt = u8(p) & 1 ? TL_BFP4_B : TL_BFP8_B;
        int64_t r = 1 + u8(p) % 6, c = cols[u8(p) % 8];
        int64_t r0 = u8(p) % r, c0 = u8(p) % c;
        int64_t vr = 1 + u8(p) % (r - r0), vc = 1 + u8(p) % (c - c0);
        float val = factor_of(p);
        int dst_rank = rank_of(p, 1);
        if (!go(p))
                return;
        tl_ctx *tl = p->tl;
        tl_tensor *t;
        switch (where % 4) {
        case 0: t = tl_alloc(tl, TL_TCM, dt, 2, ((int64_t[]){ r, c })); break;
        case 1: t = tl_alloc(tl, TL_SCRATCH, dt, 2, ((int64_t[]){ r, c })); break;
        case 2: t = tl_cast(tl, fill2(tl, TL_FP32, r, c, val), dt); break;
        default: {                   /* the launch's bfp tensors are [4, 40] */
                t = pes[p->idx].slots[where & 4 ? 5 : 6];
                if (r > 4)
                        r = 4, r0 = 0, vr = 1;
                c = 40;
                c0 %= 40;
                vc = 1 + vc % (40 - c0);
                break;
        }
        }
        keep(p, t);
        tl_tensor *v = tl_view(tl, t, ((int64_t[]){ r0, c0 }), ((int64_t[]){ vr, vc }));
        keep(p, v);
        tl_tensor *src = fill2(tl, TL_FP32, vr, vc, val);
        switch (act % 8) {
        case 0: tl_store(tl, v, src); break;
        case 1: tl_copy_to(tl, v, src); break;
        case 2: keep(p, tl_load(tl, v)); break;
        case 3: keep(p, tl_cast(tl, v, act & 8 ? TL_BFP4_B : TL_BFP8_B)); break;
        case 4: tl_send(tl, dst_rank, v, 0); break;
        case 5: keep(p, tl_dot(tl, v, tl_view(tl, t, ((int64_t[]){ r0, c0 }),
                                               ((int64_t[]){ vr, vc })), true)); break;
        case 6: tl_store(tl, v, tl_cast(tl, src, dt)); break;
        default: keep(p, tl_add(tl, v, src)); break;
        }
}

/* A 0-D tensor (scratch, TCM or the launch's) through one op. */
static void zero_d_recipe(struct fuzz_pe *p)
{
        uint8_t where = u8(p), act = u8(p);
        tl_tensor *other = slot(p);
        int axis = (int8_t)u8(p) % 3;
        int dst = rank_of(p, 1), src = rank_of(p, -1);
        tl_dtype dt = dtype_of(p);
        if (!go(p))
                return;
        tl_ctx *tl = p->tl;
        tl_tensor *z;
        switch (where % 4) {
        case 0: z = zero_d(tl, 2.0f); break;
        case 1: z = tl_alloc(tl, TL_TCM, (unsigned)dt <= TL_BFP4_B ? dt : TL_FP32, 0, NULL); break;
        case 2: z = pes[p->idx].slots[4]; break;             /* the launch's 0-D input */
        default: z = tl_reshape(tl, tl_fill(tl, TL_FP32, 1, ((int64_t[]){ 1 }), 3.0f), 0, NULL);
        }
        keep(p, z);
        switch (act % 20) {
        case 0: keep(p, tl_exp(tl, z)); break;
        case 1: keep(p, tl_add(tl, z, other)); break;
        case 2: keep(p, tl_add(tl, other, z)); break;
        case 3: keep(p, tl_sum(tl, z, axis)); break;
        case 4: keep(p, tl_rowmax(tl, z)); break;
        case 5: keep(p, tl_cast(tl, z, dt)); break;
        case 6: keep(p, tl_mask_causal(tl, z, 0)); break;
        case 7: keep(p, tl_dot(tl, z, z, false)); break;
        case 8: tl_send(tl, dst, z, 3); break;
        case 9: keep(p, tl_recv(tl, src, 3)); break;
        case 10: tl_store(tl, z, zero_d(tl, 1.0f)); break;
        case 11: tl_copy_to(tl, other, z); break;
        case 12: keep(p, tl_load(tl, z)); break;
        case 13: keep(p, tl_view(tl, z, NULL, NULL)); break;
        case 14: keep(p, tl_reshape(tl, z, 1, ((int64_t[]){ 1 }))); break;
        case 15: keep(p, tl_where(tl, z, other, z)); break;
        case 16: tl_mcast(tl, 0, 0, 1, 2, z, 3); break;
        case 17: keep(p, tl_scale(tl, z, 2.0f)); break;
        case 18: keep(p, tl_mean(tl, z, axis)); break;
        default: keep(p, tl_reshape(tl, other, 0, NULL)); break;
        }
}

/* ---- the kernel ---- */

static void epilogue_of(struct fuzz_pe *p, tl_epilogue *e, int n)
{
        static const tl_op ops[] = { TL_DEQUANT, TL_BIAS, TL_RELU, TL_SCALE };
        for (int i = 0; i < n; i++) {
                uint8_t b = u8(p);
                tl_op op = b < 250 ? ops[b % 4] : (tl_op)b;
                tl_tensor *t = slot(p);
                e[i] = (tl_epilogue){ .op = op, .tensor = t, .factor = 0.5f,
                                      .scope = (tl_cscope)(u8(p) % 4) };
        }
}

#define N_OPS_LEGACY 24
#define N_OPS 36

static void run_one(struct fuzz_pe *p)
{
        tl_ctx *tl = p->tl;
        int64_t shape[TL_MAX_DIMS], start[TL_MAX_DIMS];
        tl_epilogue ep[3];
        uint8_t op = u8(p);
        switch (op % (legacy ? N_OPS_LEGACY : N_OPS)) {
        case 0: {
                uint8_t sp = u8(p);
                tl_space space = sp < 250 ? (tl_space)(1 + sp % 2) : (tl_space)sp;
                tl_dtype dt = dtype_of(p);
                int nd = ndim_of(p);
                shape_of(p, shape);
                if (go(p))
                        keep(p, tl_alloc(tl, space, dt, nd, shape));
                break;
        }
        case 1: {
                tl_dtype dt = dtype_of(p);
                int nd = ndim_of(p);
                shape_of(p, shape);
                float v = (float)(int8_t)u8(p);
                if (go(p))
                        keep(p, tl_fill(tl, dt, nd, shape, v));
                break;
        }
        case 2: {
                tl_tensor *t = slot(p);
                if (go(p))
                        keep(p, tl_load(tl, t));
                break;
        }
        case 3: {
                tl_tensor *dst = slot(p), *src = slot(p);
                if (go(p))
                        tl_store(tl, dst, src);
                break;
        }
        case 4: {
                tl_tensor *dst = slot(p), *src = slot(p);
                if (go(p))
                        tl_copy_to(tl, dst, src);
                break;
        }
        case 5: {
                tl_tensor *t = slot(p);
                shape_of(p, start);
                shape_of(p, shape);
                bool null = !legacy && (op & 0xc0) == 0xc0;     /* NULL start or shape */
                if (go(p))
                        keep(p, tl_view(tl, t, null && (op & 0x20) ? NULL : start,
                                        null && !(op & 0x20) ? NULL : shape));
                break;
        }
        case 6: {
                tl_tensor *t = slot(p);
                int nd = ndim_of(p);
                shape_of(p, shape);
                if (go(p))
                        keep(p, tl_reshape(tl, t, nd, shape));
                break;
        }
        case 7: {
                tl_op o = math_op(p);
                tl_tensor *x = slot(p);
                if (go(p))
                        keep(p, tl_impl_math1(tl, o, x, __FILE__, __LINE__));
                break;
        }
        case 8: {
                tl_op o = math_op(p);
                tl_tensor *a = slot(p), *b = slot(p);
                if (go(p))
                        keep(p, tl_impl_math2(tl, o, a, b, __FILE__, __LINE__));
                break;
        }
        case 9: {
                tl_tensor *x = slot(p);
                if (go(p))
                        keep(p, tl_scale(tl, x, 0.25f));
                break;
        }
        case 10: {
                tl_tensor *a = slot(p), *b = slot(p);
                bool trans = u8(p) & 1;
                if (go(p))
                        keep(p, tl_dot(tl, a, b, trans));
                break;
        }
        case 11: {
                tl_tensor *x = slot(p);
                tl_dtype dt = dtype_of(p);
                if (go(p))
                        keep(p, tl_cast(tl, x, dt));
                break;
        }
        case 12: {
                tl_tensor *x = slot(p);
                int64_t off = i64(p);
                if (go(p))
                        keep(p, tl_mask_causal(tl, x, off));
                break;
        }
        case 13:
                if (go(p))
                        tl_scratch_scope_begin(tl);
                break;
        case 14:
                if (go(p))
                        tl_scratch_scope_end(tl);
                break;
        case 15: {
                int rank = legacy ? u8(p) % 10 - 1 : rank_of(p, 1); /* 8 PEs, and either side */
                tl_tensor *t = slot(p);
                int tag = tag_of(p);
                if (go(p))
                        tl_send(tl, rank, t, tag);
                break;
        }
        case 16: {
                /* The first encoding: only PE 0 runs, so only it sends. */
                int rank = legacy ? (u8(p) % 9 == 0 ? 0 : 1) : rank_of(p, -1);
                int tag = tag_of(p);
                if (go(p))
                        keep(p, tl_recv(tl, rank, tag));
                break;
        }
        case 17: {
                tl_tensor *t = slot(p);
                if (go(p))
                        tl_wait_tensor(tl, t);
                break;
        }
        case 18: {
                uint8_t o = u8(p);
                tl_tensor *a = slot(p), *b = slot(p), *out = slot(p);
                int n = u8(p) % 4;
                epilogue_of(p, ep, n < 3 ? n : 3);
                bool trans = u8(p) & 1;
                int64_t tm = i64(p), tn = i64(p), tk = i64(p);
                bool null = u8(p) == 255;
                tl_composite_desc d = {
                        .op = o < 128 ? TL_GEMM : o < 250 ? TL_NONE : (tl_op)o, .a = a, .b = b,
                        .trans_b = trans, .out = out, .epilogue = n == 3 ? NULL : ep,
                        .n_epilogue = n, .tile_m = tm, .tile_n = tn, .tile_k = tk };
                if (go(p))
                        keep_handle(p, tl_composite(tl, null ? NULL : &d));
                break;
        }
        case 19: {
                tl_tensor *s = slot(p), *v = slot(p), *m = slot(p), *l = slot(p), *o = slot(p);
                if (go(p))
                        keep_handle(p, tl_softmax_merge(tl, s, v, m, l, o));
                break;
        }
        case 20: {
                tl_tensor *t = slot(p);
                bool pin = u8(p) & 1;
                if (go(p))
                        tl_set_pinned(t, pin);
                break;
        }
        case 21: {
                tl_tensor *t = slot(p);
                int axis = (int8_t)u8(p);
                if (!go(p))
                        break;
                if (tl_numel(t) < 0 || tl_ndim(t) < 0 || tl_dim(t, axis) < 0)
                        abort();     /* metadata of a live tensor is never negative */
                (void)tl_dtype_of(t);
                (void)tl_space_of(t);
                break;
        }
        case 22: {
                size_t n = p->n_handles < N_HANDLES ? p->n_handles : N_HANDLES;
                uint8_t b = u8(p);
                if (go(p))
                        tl_wait(tl, n && b != 255 ? p->handles[b % n] : (tl_handle){ 0 });
                break;
        }
        case 23: {
                int axis = (int8_t)u8(p) % 4;
                if (go(p))
                        (void)tl_program_id(tl, axis);
                break;
        }
        /* ---- the second encoding's ---- */
        case 24: {
                static const tl_op red[] = { TL_SUM, TL_AMAX, TL_MEAN, TL_ROWMAX, TL_ROWSUM };
                uint8_t b = u8(p);
                tl_op o = b < 200 ? red[b % 5] : math_op(p);
                tl_tensor *x = slot(p);
                int axis = (int8_t)u8(p);
                axis = axis > -100 ? axis % 6 : axis;
                if (go(p))
                        keep(p, tl_impl_reduce(tl, o, x, axis, __FILE__, __LINE__));
                break;
        }
        case 25: {
                uint8_t b = u8(p);
                tl_op o = b < 200 ? (b & 1 ? TL_SCALE : TL_ADD_SCALAR) : math_op(p);
                tl_tensor *x = slot(p);
                float s = factor_of(p);
                if (go(p))
                        keep(p, tl_impl_scalar(tl, o, x, s, __FILE__, __LINE__));
                break;
        }
        case 26: {
                tl_tensor *mask = slot(p), *a = slot(p), *b = slot(p);
                if (go(p))
                        keep(p, tl_where(tl, mask, a, b));
                break;
        }
        case 27: {
                int r0 = small(p), c0 = small(p), nr = small(p), nc = small(p);
                tl_tensor *t = slot(p);
                int tag = tag_of(p);
                if (go(p))
                        tl_mcast(tl, r0, c0, nr, nc, t, tag);
                break;
        }
        case 28: p->only = u8(p) % n_run; break;
        case 29: merge_recipe(p); break;
        case 30: gemm_recipe(p); break;
        case 31: bfp_recipe(p); break;
        case 32: zero_d_recipe(p); break;
        case 33: {
                int a = small(p), b = small(p), c = small(p);   /* -1: this PE's */
                a = a == 3 ? -1 : a;
                b = b == 3 ? -1 : b;
                c = c == 3 ? -1 : c;
                uint8_t which = u8(p);
                if (!go(p))
                        break;
                switch (which % 4) {
                case 0: (void)tl_mesh_dim(tl, a); break;
                case 1: (void)tl_num_programs(tl, a); break;
                case 2: (void)tl_rank(tl, a, b, c); break;
                default: (void)tl_machine_info(tl); break;
                }
                break;
        }
        case 34: {                   /* a tensor made here, kept for another PE to misuse */
                tl_tensor *t = slot(p);
                uint8_t b = u8(p);
                if (go(p) && t)
                        keep(&pes[(p->idx + 1 + b % n_run) % n_run], t);
                break;
        }
        default: {                   /* a message's tensor straight into an op */
                int src = rank_of(p, -1), tag = tag_of(p);
                tl_tensor *other = slot(p);
                if (!go(p))
                        break;
                tl_tensor *t = tl_recv(tl, src, tag);
                keep(p, t);
                keep(p, tl_add(tl, t, other));
                break;
        }
        }
}

/* The kernel: PEs that run the program run it; the launch's tensors are
 * in their slots already (setup), argp is not read. */
static void body(tl_ctx *tl, const void *argp)
{
        (void)argp;
        int rank = tl_rank(tl, -1, -1, -1), idx = -1;
        for (int i = 0; i < n_run; i++)
                if (run_rank[i] == rank)
                        idx = i;
        if (idx < 0)
                return;
        struct fuzz_pe *p = &pes[idx];
        p->tl = tl;
        for (int n = 0; p->at < prog_len && n < 256; n++)
                run_one(p);
        while (tl->n_scopes)     /* a program may leave scopes open: close them */
                tl_scratch_scope_end(tl);
}

/* ---- the setup ---- */

/* An extent of a setup tensor: mostly 1..20 or a block float's awkward
 * 33 or 48, sometimes one the setup must refuse. */
static int64_t setup_extent(struct fuzz_pe *p)
{
        static const int64_t extremes[] = { 0, -1, (INT64_C(1) << 32) + 1, INT64_MAX,
                                            INT64_C(1) << 40, 33, 48, 1 };
        uint8_t b = u8(p);
        return b < 240 ? 1 + b % 20 : extremes[b % 8];
}

static void setup_action(tl_setup *s, struct fuzz_args *a)
{
        /* Mostly a fresh name (n0, n1, ...); sometimes one that is taken
         * or breaks the name rule. */
        static const char *const names[] = { "a", "b", "x", "t0", "", NULL,
                                              "a_name_longer_than_thirty_one_bytes_x", "a/b",
                                              "../up", "-opt", "line\nbreak" };
        char fresh[16];
        struct fuzz_pe *p = &host;
        uint8_t kind = u8(p), b = u8(p);
        tl_tensor *t = b == 255 || a->n_hbm == 0 ? NULL : a->hbm[b % a->n_hbm];
        switch (kind % 7) {
        case 0:
        case 1: {
                uint8_t pick = u8(p);
                snprintf(fresh, sizeof fresh, "n%d", a->n_hbm);
                const char *name = pick < 192 ? fresh : names[pick % 11];
                uint8_t io = u8(p);
                tl_dtype dt = dtype_of(p);
                int nd = ndim_of(p);
                int64_t shape[TL_MAX_DIMS + 1];
                for (int i = 0; i <= TL_MAX_DIMS; i++)
                        shape[i] = setup_extent(p);
                tl_io tio = io < 250 ? (tl_io)(io % 3) : (tl_io)(int8_t)io;
                tl_tensor *nt = kind % 7 == 0 ? tl_setup_tensor(s, name, tio, dt, nd, shape)
                                              : tl_setup_tensor_sharded(s, name, tio, dt, nd, shape);
                if (a->n_hbm < TL_MAX_GLOBALS)
                        a->hbm[a->n_hbm++] = nt;
                break;
        }
        case 2: tl_setup_replicate(s, t); break;
        case 3: {
                int axis = (int8_t)u8(p) % 6;
                int64_t block = i64(p);
                tl_setup_shard(s, t, axis, block);
                break;
        }
        case 4: tl_setup_interleave(s, t); break;
        case 5: tl_setup_gemm_fidelity(s, (int8_t)u8(p) % 6); break;
        default: (void)tl_setup_machine(s); (void)tl_setup_grid(s, b % 3); break;
        }
}

static void setup(tl_setup *s, void *argp)
{
        struct fuzz_args *a = argp;
        a->n_hbm = 0;
        a->hbm[a->n_hbm++] = tl_setup_tensor(s, "x", TL_INPUT, TL_FP32, 2, (int64_t[]){ 16, 16 });
        a->hbm[a->n_hbm++] = tl_setup_tensor(s, "w", TL_INPUT, TL_BF16, 2, (int64_t[]){ 16, 16 });
        a->hbm[a->n_hbm++] = tl_setup_tensor(s, "y", TL_OUTPUT, TL_FP32, 2, (int64_t[]){ 16, 16 });
        a->hbm[a->n_hbm++] = tl_setup_tensor(s, "v", TL_INPUT, TL_FP16, 1, (int64_t[]){ 8 });
        if (!legacy) {
                a->hbm[a->n_hbm++] = tl_setup_tensor(s, "z", TL_INPUT, TL_FP32, 0, NULL);
                a->hbm[a->n_hbm++] = tl_setup_tensor(s, "q8", TL_INPUT, TL_BFP8_B, 2,
                                                     (int64_t[]){ 4, 40 });
                a->hbm[a->n_hbm++] = tl_setup_tensor(s, "q4", TL_OUTPUT, TL_BFP4_B, 2,
                                                     (int64_t[]){ 4, 40 });
                a->hbm[a->n_hbm++] = tl_setup_tensor(s, "tmp", TL_TEMP, TL_FP32, 2,
                                                     (int64_t[]){ 16, 16 });
                a->hbm[a->n_hbm++] = tl_setup_tensor_sharded(s, "l1", TL_INPUT, TL_FP32, 2,
                                                             (int64_t[]){ 8, 16 });
                int n = u8(&host) % 8;
                for (int i = 0; i < n; i++)
                        setup_action(s, a);
        }
        /* Every running PE starts with the launch's tensors in its slots
         * and its cursor at the kernel's first op. */
        prog_start = host.at;
        for (int i = 0; i < n_run; i++) {
                struct fuzz_pe *p = &pes[i];
                *p = (struct fuzz_pe){ .at = prog_start, .idx = i, .only = -1 };
                for (int j = 0; j < a->n_hbm; j++)
                        keep(p, a->hbm[j]);
        }
}

static const struct tl_kernel fuzz_kernel = {
        .name = "fuzz", .fn = body, .args_size = sizeof(struct fuzz_args), .setup = setup,
};

/* ---- one input ---- */

/* The machines: topologies/small.yaml (1 SIP, 2 cubes of 2x2 PEs) and
 * one of 2 SIPs x 2 cubes x 1x2 PEs (4 cubes; reads across SIPs). */
static struct topo machines[2];

static const char quad_text[] =
        "version: 1\nname: quad\nsystem:\n  sips: 2\nsip:\n  cubes: 2\n"
        "cube:\n  hbm:\n    channels: 2\n  noc:\n    rows: 1\n    cols: 2\n";

static void load_machines(void)
{
        struct diag d;
        diag_init(&d);
        char path[4096];
        snprintf(path, sizeof path, "%s/topologies/small.yaml", CUBESIM_SOURCE_DIR);
        if (topo_load_file(path, &machines[0], &d) < 0 ||
            topo_load_text("quad", quad_text, sizeof quad_text - 1, &machines[1], &d) < 0) {
                diag_print(&d, stderr);
                abort();
        }
        diag_fini(&d);
}

/* The header: the first encoding's marker, or which PEs run and on which
 * machine. */
static int read_header(void)
{
        static const int sets[][N_PES + 1] = {
                { 1, 0 }, { 2, 0, 1 }, { 2, 0, 4 }, { 8, 0, 1, 2, 3, 4, 5, 6, 7 }, { 2, 6, 1 },
                { 3, 7, 0, 5 },
        };
        host = (struct fuzz_pe){ .at = 0, .idx = 0, .only = -1 };
        legacy = prog_len > 0 && prog[0] == LEGACY;
        if (legacy) {
                host.at = 1;
                n_run = 1;
                run_rank[0] = 0;
                return 0;
        }
        const int *set = sets[u8(&host) % 6];
        n_run = set[0];
        memcpy(run_rank, set + 1, (size_t)n_run * sizeof run_rank[0]);
        return u8(&host) % 2;
}

/* A first message names a PE that ran the program (after "error: PE "). */
static bool names_running_pe(const struct hw_sim *sim, const char *text)
{
        const char *at = strstr(text, "error: PE ");
        if (!at)
                return false;
        at += strlen("error: PE ");
        for (int i = 0; i < n_run; i++) {
                const char *name = sim->pes[run_rank[i]].name;
                size_t n = strlen(name);
                if (strncmp(at, name, n) == 0 && strncmp(at + n, ": ", 2) == 0)
                        return true;
        }
        return false;
}

/* Run the program in data; its first message (if any) into first[len]. */
static void run_program(const uint8_t *data, size_t size, char *first, size_t len)
{
        static bool loaded;
        if (!loaded) {
                load_machines();
                loaded = true;
        }
        prog = data;
        prog_len = size;
        int mi = read_header();
        memset(pes, 0, sizeof pes);
        struct diag d;
        diag_init(&d);
        struct hw_sim sim;
        if (hw_sim_init(&sim, &machines[mi], NULL, &d) < 0)
                abort();
        for (int i = 0; i < n_run; i++)
                if ((uint32_t)run_rank[i] >= sim.n_pes)
                        abort();
        struct tl_run_opts o = { .mode = TL_MODE_DATA, .seed = 1, .max_events = 100000,
                                 .max_time_ps = UINT64_C(10000000000) };
        struct tl_run run;
        int rc = tl_run_kernel(&sim, &fuzz_kernel, &o, &run, &d);
        if ((rc == 0) != (d.n_errors == 0))
                abort();     /* an outcome without its message, or the reverse */
        if (run.failed && (!d.head || !strstr(d.head->text, "fuzz_kernel.c:") ||
                           !names_running_pe(&sim, d.head->text)))
                abort();     /* a kernel error names the kernel's line and a running PE */
        snprintf(first, len, "%s", d.head ? d.head->text : "");
        tl_run_fini(&run);
        hw_sim_fini(&sim);
        diag_fini(&d);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        char first[512];
        run_program(data, size, first, sizeof first);
        return 0;
}
