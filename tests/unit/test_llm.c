/* tests/unit/test_llm.c: the llm_layer kernel in data mode against a
 * float64 reference of the layer computed here from the run's own inputs
 * (as the kernel saw them, rounded to their dtypes): decode and Sq > 1
 * with a cache, no cache, tails (hidden, ffn and keys that divide neither
 * the PE counts nor the tiles; more query rows than one attention block),
 * tp = 1 and 2, fp32 (atol 1e-3 + rtol 1e-3) and bf16 (3e-2 + 3e-2); the
 * shapes the kernel must reject; and the decode roofline: the simulated
 * time is never below (weight bytes + KV bytes) / the HBM bandwidth of the
 * machine. Inputs are written as .npy files with weights scaled by
 * 1 / sqrt(fan-in), as a trained model's are, so values stay O(1). All on
 * topologies/small.yaml (2 cubes x 2x2 PEs). */
#include <criterion/criterion.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/npy.h"
#include "fixture.h"

TestSuite(llm, .init = fixture_small, .fini = fixture_fini);

/* The layer's shapes for one test. */
struct shape {
        int64_t b, sq, p, hd, hq, hkv, d, f;   /* batch, q_len, past_len, hidden, heads, dim, ffn */
        int tp;                                 /* tensor-parallel ranks */
        const char *dtype;                      /* dtype and weight_dtype */
};

static uint64_t rng_state;

static double uniform(void)
{
        rng_state = rng_state * 6364136223846793005ULL + 1442695040888963407ULL;
        return (double)(rng_state >> 11) * 0x1.0p-53 * 2.0 - 1.0;
}

/* Write DIR/name.npy with n uniform values in [-1, 1) times scale plus offset. */
static void write_input(const char *dir, const char *name, int ndim, const int64_t *shape,
                        double scale, double offset)
{
        int64_t n = 1;
        for (int i = 0; i < ndim; i++)
                n *= shape[i];
        float *v = malloc((size_t)n * sizeof *v);
        cr_assert_not_null(v);
        for (int64_t i = 0; i < n; i++)
                v[i] = (float)(uniform() * scale + offset);
        char path[512];
        snprintf(path, sizeof path, "%s/%s.npy", dir, name);
        cr_assert_eq(npy_write(path, NPY_F32, ndim, shape, v, &d), 0, "cannot write %s", path);
        free(v);
}

static char dir[64];

/* Run llm_layer in data mode on inputs written for s. */
static int run_layer(const struct shape *s)
{
        snprintf(dir, sizeof dir, "/tmp/cubesim_llm_XXXXXX");
        cr_assert_not_null(mkdtemp(dir));
        rng_state = 12345;
        int64_t qd = s->hq * s->d, kd = s->hkv * s->d;
        double wh = 1 / sqrt((double)s->hd);
        write_input(dir, "x", 3, (int64_t[]){ s->b, s->sq, s->hd }, 1, 0);
        write_input(dir, "wq", 2, (int64_t[]){ s->hd, qd }, 2 * wh, 0);
        write_input(dir, "wk", 2, (int64_t[]){ s->hd, kd }, 2 * wh, 0);
        write_input(dir, "wv", 2, (int64_t[]){ s->hd, kd }, wh, 0);
        write_input(dir, "wo", 2, (int64_t[]){ qd, s->hd }, 1 / sqrt((double)qd), 0);
        write_input(dir, "w_gate", 2, (int64_t[]){ s->hd, s->f }, 2 * wh, 0);
        write_input(dir, "w_up", 2, (int64_t[]){ s->hd, s->f }, wh, 0);
        write_input(dir, "w_down", 2, (int64_t[]){ s->f, s->hd }, 1 / sqrt((double)s->f), 0);
        write_input(dir, "attn_norm", 1, (int64_t[]){ s->hd }, 0.2, 1);
        write_input(dir, "mlp_norm", 1, (int64_t[]){ s->hd }, 0.2, 1);
        if (s->p > 0) {
                write_input(dir, "k_cache", 4, (int64_t[]){ s->b, s->hkv, s->p, s->d }, 2, 0);
                write_input(dir, "v_cache", 4, (int64_t[]){ s->b, s->hkv, s->p, s->d }, 1, 0);
        }
        static char sets[12][48];
        static const char *setp[12];
        int n = 0;
        snprintf(sets[n++], 48, "batch=%lld", (long long)s->b);
        snprintf(sets[n++], 48, "q_len=%lld", (long long)s->sq);
        snprintf(sets[n++], 48, "past_len=%lld", (long long)s->p);
        snprintf(sets[n++], 48, "hidden=%lld", (long long)s->hd);
        snprintf(sets[n++], 48, "q_heads=%lld", (long long)s->hq);
        snprintf(sets[n++], 48, "kv_heads=%lld", (long long)s->hkv);
        snprintf(sets[n++], 48, "head_dim=%lld", (long long)s->d);
        snprintf(sets[n++], 48, "ffn=%lld", (long long)s->f);
        snprintf(sets[n++], 48, "tp=%d", s->tp);
        snprintf(sets[n++], 48, "dtype=%s", s->dtype);
        snprintf(sets[n++], 48, "weight_dtype=%s", s->dtype);
        for (int i = 0; i < n; i++)
                setp[i] = sets[i];
        struct tl_run_opts o = *fixture_opts(TL_MODE_DATA, 3);
        o.inputs_dir = dir;
        int rc = fixture_run(tl_kernel_find("llm_layer"), &o, setp, (size_t)n);
        if (rc != 0)
                diag_print(&d, stderr);
        char cmd[128];
        snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
        cr_assert_eq(system(cmd), 0);
        return rc;
}

/* ---- the float64 reference ---------------------------------------------------------- */

static const float *in(const char *name) { return fixture_global(name)->data; }

/* y[t][n] = sum_k x[t][k] w[k][n] */
static void matmul(const double *x, const float *w, int64_t rows, int64_t k, int64_t n, double *y)
{
        for (int64_t i = 0; i < rows; i++)
                for (int64_t j = 0; j < n; j++) {
                        double s = 0;
                        for (int64_t c = 0; c < k; c++)
                                s += x[i * k + c] * w[c * n + j];
                        y[i * n + j] = s;
                }
}

static void rmsnorm(const double *x, const float *w, int64_t rows, int64_t hd, double *y)
{
        for (int64_t i = 0; i < rows; i++) {
                double ss = 0;
                for (int64_t c = 0; c < hd; c++)
                        ss += x[i * hd + c] * x[i * hd + c];
                double inv = 1 / sqrt(ss / (double)hd + 1e-5);
                for (int64_t c = 0; c < hd; c++)
                        y[i * hd + c] = x[i * hd + c] * inv * w[c];
        }
}

/* Rotate-half RoPE of the D values at u, position pos, theta 500000. */
static void rope(double *u, int64_t dim, double pos)
{
        for (int64_t i = 0; i < dim / 2; i++) {
                double f = pow(500000.0, -2.0 * (double)i / (double)dim), c = cos(pos * f),
                       s = sin(pos * f);
                double a = u[i], b = u[i + dim / 2];
                u[i] = a * c - b * s;
                u[i + dim / 2] = b * c + a * s;
        }
}

static double *zeros(int64_t n)
{
        double *p = calloc((size_t)n, sizeof *p);
        cr_assert_not_null(p);
        return p;
}

/* Largest violation of |got - ref| <= atol + rtol |ref| over n values (<= 0: all within). */
static double check(const char *what, const float *got, const double *ref, int64_t n, double tol)
{
        double worst = -1;
        int64_t at = 0;
        for (int64_t i = 0; i < n; i++) {
                double ex = fabs(got[i] - ref[i]) - (tol + tol * fabs(ref[i]));
                if (!(ex <= worst)) {
                        worst = ex;
                        at = i;
                }
        }
        cr_expect_leq(worst, 0, "%s[%lld] = %g, reference %g (tolerance %g + %g |ref|)", what,
                      (long long)at, got[at], ref[at], tol, tol);
        return worst;
}

/* Element c of key (or value) j of KV head kv of sequence b: from the
 * cache [B, Hkv, P, D] below P, else from the new ones [B, Hkv, Sq, D]. */
static double key_or_value(const float *cache, const double *fresh, int64_t b, int64_t kv,
                           int64_t j, int64_t c, const struct shape *s)
{
        if (j < s->p)
                return cache[((b * s->hkv + kv) * s->p + j) * s->d + c];
        return fresh[((b * s->hkv + kv) * s->sq + j - s->p) * s->d + c];
}

/* Compare out, k_new and v_new with the reference of the last run, the
 * case called name. */
static void check_layer(const char *name, const struct shape *s)
{
        int64_t b_ = s->b, sq = s->sq, p = s->p, hd = s->hd, hq = s->hq, hkv = s->hkv, dd = s->d;
        int64_t f = s->f, tt = b_ * sq, qd = hq * dd, kd = hkv * dd, g = hq / hkv;
        double tol = strcmp(s->dtype, "fp32") == 0 ? 1e-3 : 3e-2;
        const float *x = in("x");
        double *xd = zeros(tt * hd), *n1 = zeros(tt * hd), *q = zeros(tt * qd), *k = zeros(tt * kd);
        double *v = zeros(tt * kd), *att = zeros(tt * qd), *h = zeros(tt * hd);
        double *n2 = zeros(tt * hd);
        double *gt = zeros(tt * f), *up = zeros(tt * f), *out = zeros(tt * hd), *w = zeros(p + sq);
        for (int64_t i = 0; i < tt * hd; i++)
                xd[i] = x[i];
        rmsnorm(xd, in("attn_norm"), tt, hd, n1);
        matmul(n1, in("wq"), tt, hd, qd, q);
        matmul(n1, in("wk"), tt, hd, kd, k);
        matmul(n1, in("wv"), tt, hd, kd, v);
        for (int64_t r = 0; r < tt; r++) {
                for (int64_t hh = 0; hh < hq; hh++)
                        rope(q + r * qd + hh * dd, dd, (double)(p + r % sq));
                for (int64_t hh = 0; hh < hkv; hh++)
                        rope(k + r * kd + hh * dd, dd, (double)(p + r % sq));
        }
        /* k_new, v_new [B, Hkv, Sq, D] */
        double *kn = zeros(tt * kd), *vn = zeros(tt * kd);
        for (int64_t b = 0; b < b_; b++)
                for (int64_t hh = 0; hh < hkv; hh++)
                        for (int64_t i = 0; i < sq; i++)
                                for (int64_t c = 0; c < dd; c++) {
                                        int64_t dst = ((b * hkv + hh) * sq + i) * dd + c;
                                        kn[dst] = k[(b * sq + i) * kd + hh * dd + c];
                                        vn[dst] = v[(b * sq + i) * kd + hh * dd + c];
                                }
        const float *kc = p ? in("k_cache") : NULL, *vc = p ? in("v_cache") : NULL;
        for (int64_t b = 0; b < b_; b++)
                for (int64_t hh = 0; hh < hq; hh++)
                        for (int64_t i = 0; i < sq; i++) {
                                int64_t kv = hh / g, n = p + i + 1;
                                const double *qi = q + (b * sq + i) * qd + hh * dd;
                                double mx = -INFINITY, sum = 0;
                                for (int64_t j = 0; j < n; j++) {
                                        double sc = 0;
                                        for (int64_t c = 0; c < dd; c++)
                                                sc += qi[c] * key_or_value(kc, kn, b, kv, j, c, s);
                                        w[j] = sc / sqrt((double)dd);
                                        mx = fmax(mx, w[j]);
                                }
                                for (int64_t j = 0; j < n; j++)
                                        sum += (w[j] = exp(w[j] - mx));
                                for (int64_t c = 0; c < dd; c++) {
                                        double o = 0;
                                        for (int64_t j = 0; j < n; j++)
                                                o += w[j] * key_or_value(vc, vn, b, kv, j, c, s);
                                        att[(b * sq + i) * qd + hh * dd + c] = o / sum;
                                }
                        }
        matmul(att, in("wo"), tt, qd, hd, h);
        for (int64_t i = 0; i < tt * hd; i++)
                h[i] += xd[i];
        rmsnorm(h, in("mlp_norm"), tt, hd, n2);
        matmul(n2, in("w_gate"), tt, hd, f, gt);
        matmul(n2, in("w_up"), tt, hd, f, up);
        for (int64_t i = 0; i < tt * f; i++)
                gt[i] = gt[i] / (1 + exp(-gt[i])) * up[i];
        matmul(gt, in("w_down"), tt, f, hd, out);
        for (int64_t i = 0; i < tt * hd; i++)
                out[i] += h[i];
        const char *names[] = { "out", "k_new", "v_new" };
        const double *refs[] = { out, kn, vn };
        int64_t sizes[] = { tt * hd, tt * kd, tt * kd };
        for (int i = 0; i < 3; i++) {
                char what[128];
                snprintf(what, sizeof what, "%s: %s", name, names[i]);
                check(what, in(names[i]), refs[i], sizes[i], tol);
        }
        double *all[] = { xd, n1, q, k, v, att, h, n2, gt, up, out, w, kn, vn };
        for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
                free(all[i]);
}

static void layer_matches(const char *name, const struct shape *s)
{
        cr_assert_eq(run_layer(s), 0, "%s: llm_layer failed", name);
        check_layer(name, s);
}

/* ---- numerics ------------------------------------------------------------------------ */

/* A layer run checked against the float64 reference. */
struct layer_case {
        const char *name;               /* what it covers, named in a failure */
        struct shape s;                 /* the layer's shape */
};

static const struct layer_case layer_cases[] = {
        /* 200 past keys: two tiles and a tail; hidden 70 and ffn 90 split unevenly. */
        { "decode_with_cache_fp32", { 2, 1, 200, 70, 4, 2, 16, 90, 1, "fp32" } },
        /* Sq > 1 with P > 0: the causal mask over the new keys, after the cache. */
        { "prefill_after_cache_fp32", { 2, 5, 7, 64, 4, 2, 16, 96, 1, "fp32" } },
        /* 140 query rows: a block of 128 (LLM_Q_ROWS) and a tail of 12; no cache. */
        { "prefill_no_cache_query_tail_fp32", { 1, 140, 0, 32, 2, 1, 16, 48, 1, "fp32" } },
        { "tp2_decode_fp32", { 1, 1, 130, 64, 4, 2, 16, 96, 2, "fp32" } },
        { "tp2_prefill_fp32", { 2, 3, 9, 48, 8, 2, 8, 40, 2, "fp32" } },
        { "decode_bf16", { 2, 1, 150, 64, 8, 2, 16, 96, 1, "bf16" } },
        /* No cache: the only key is the new one, which attention rotates
         * and writes itself (docs/adr/0050). */
        { "decode_no_cache_bf16", { 3, 1, 0, 64, 8, 2, 16, 96, 1, "bf16" } },
        { "tp2_prefill_bf16", { 1, 4, 20, 64, 4, 2, 16, 64, 2, "bf16" } },
        /* Prefill blocks (llm.h): output blocks of two sub-blocks sharing each A
         * tile, K steps of 64 with a tail (600, 520), sub-block tails. */
        { "prefill_wide_blocks_bf16", { 1, 33, 0, 2100, 8, 2, 64, 600, 1, "bf16" } },
        { "prefill_wide_blocks_fp32", { 1, 20, 0, 1100, 4, 2, 32, 520, 1, "fp32" } },
        /* 512 rows: the 8 PEs as a 2 x 4 grid whose cubes' NoC rows share A
         * tiles by multicast (docs/adr/0036, 0042); K of 200 (three steps
         * and a tail), shares of 50 columns of H. */
        { "prefill_cube_shared_bf16", { 1, 512, 0, 200, 4, 2, 16, 96, 1, "bf16" } },
        /* tp 2 (a cube per rank): ffn / tp = 45 splits unevenly, so gate,
         * up and the K of w_down run unshared beside shared GEMMs. */
        { "tp2_prefill_cube_shared_fp32", { 1, 512, 3, 70, 4, 2, 16, 90, 2, "fp32" } },
        /* 2048 rows: 8 x 1 would not tile the cubes' 2 x 2 NoCs; the grid
         * halves its rows to 4 x 2, two blocks of 256 rows a PE. */
        { "prefill_cube_grid_halved_bf16", { 1, 2048, 0, 32, 2, 1, 16, 32, 1, "bf16" } },
        /* Decode of 16 rows (LLM_ROW_MCAST_ROWS): a NoC row's PEs split
         * K (docs/adr/0050); q, k, v, H and the FFN split evenly. */
        { "decode_rows_shared_bf16", { 16, 1, 40, 64, 4, 2, 16, 96, 1, "bf16" } },
        /* Decode of 16 rows with K of 600 and 200: a NoC row's two PEs split
         * each GEMM's K (300: steps of 128 and a tail), exchange their
         * partial sums (docs/adr/0050); shares of 75 and 25 columns. */
        { "decode_rows_split_k_bf16", { 16, 1, 40, 600, 4, 2, 16, 200, 1, "bf16" } },
        /* The same with ffn 1600: gate and up take two blocks of a PE (200
         * columns: 128 and 72), the second's first K steps loading during
         * the first's exchange, both from the A tiles the first loaded, as
         * k and v after q; the GEMMs apply the RMSNorms, their rows' sums
         * of squares added over the NoC row (docs/adr/0050's second
         * amendment). */
        { "decode_rows_split_k_blocks_bf16", { 16, 1, 40, 600, 4, 2, 16, 1600, 1, "bf16" } },
        /* The same with hidden 70: the shares of H differ, wo and w_down
         * run unshared beside shared GEMMs; a cache of 130 keys. */
        { "decode_rows_shared_uneven_fp32", { 16, 1, 130, 70, 4, 2, 16, 96, 1, "fp32" } },
        /* 8 PEs in 3 ranks of 2: PEs 6 and 7 take no part. */
        { "tp3_leaves_pes_idle_fp32", { 1, 2, 6, 48, 6, 3, 8, 48, 3, "fp32" } },
};

FIXTURE_TABLE_TEST(llm, layer_matches_reference, struct layer_case, layer_cases)
{
        layer_matches(row->name, &row->s);
}

/* ---- bad shapes ----------------------------------------------------------------------- */

/* --set values llm_layer refuses, and a message it must give. */
struct reject_case {
        const char *sets[3];            /* --set values, NULL-terminated */
        const char *needle;             /* some message contains it */
};

static const struct reject_case reject_cases[] = {
        { { "kv_heads=2", "q_heads=4", "tp=4" }, "tp (4) must divide kv_heads (2)" },
        { { "head_dim=15" }, "head_dim (15) must be even" },
        { { "q_heads=5", "kv_heads=2" }, "kv_heads (2) must divide q_heads (5)" },
};

FIXTURE_TABLE_TEST(llm, rejects, struct reject_case, reject_cases)
{
        size_t n = 0;
        while (n < FIXTURE_N(row->sets) && row->sets[n])
                n++;
        cr_assert_eq(fixture_run(tl_kernel_find("llm_layer"), NULL, row->sets, n), -EINVAL,
                     "not refused: %s", row->needle);
        cr_assert(diag_has(row->needle), "no message containing '%s'", row->needle);
}

/* ---- one class of ops alone (part=) ----------------------------------------------- */

/* Ops of type op issued over every PE by the last run. */
static uint64_t ops(enum topo_op op) { return job.stats.n_ops[op]; }

Test(llm, part_runs_one_class_alone)
{
        const char *base[] = { "hidden=64", "q_heads=4", "kv_heads=2", "head_dim=16", "ffn=96",
                               "past_len=40", "tp=2", NULL };
        const char *parts[] = { "part=gemm", "part=attention", "part=norm", "part=allreduce" };
        for (int i = 0; i < 4; i++) {
                base[7] = parts[i];
                cr_assert_eq(fixture_run(tl_kernel_find("llm_layer"), NULL, base, 8), 0);
                bool gemm = i == 0, attn = i == 1, norm = i == 2, ar = i == 3;
                /* GEMM steps are composites; attention merges are too. */
                cr_expect_eq(ops(TOPO_OP_COMPOSITE) > 0, gemm || attn, "%s: composites", parts[i]);
                cr_expect_eq(ops(TOPO_OP_MASK) + ops(TOPO_OP_SIN) > 0, attn, "%s: RoPE", parts[i]);
                cr_expect_eq(ops(TOPO_OP_RSQRT) > 0, norm, "%s: rsqrt", parts[i]);
                /* No barriers: only the all-reduce sends. */
                cr_expect_eq(ops(TOPO_OP_SEND) > 0, ar, "%s: sends", parts[i]);
        }
        base[7] = "part=all";
        cr_assert_eq(fixture_run(tl_kernel_find("llm_layer"), NULL, base, 8), 0);
        cr_expect(ops(TOPO_OP_COMPOSITE) && ops(TOPO_OP_SIN) && ops(TOPO_OP_RSQRT) &&
                  ops(TOPO_OP_SEND), "part=all runs every class");
}

/* ---- the decode roofline -------------------------------------------------------------- */

Test(llm, decode_never_beats_hbm_roofline)
{
        /* bf16 weights and cache. A TP rank streams its share of the
         * weights and KV heads from the HBM of its own cubes. */
        for (int tp = 1; tp <= 2; tp++) {
                char tps[16];
                snprintf(tps, sizeof tps, "tp=%d", tp);
                const char *sets[] = { "hidden=512", "q_heads=8", "kv_heads=2", "head_dim=64",
                                       "ffn=1024", "past_len=2048", "batch=2", tps };
                cr_assert_eq(fixture_run(tl_kernel_find("llm_layer"), NULL, sets, 8), 0);
                double weights = (512.0 * (8 + 2 + 2) * 64 + 8.0 * 64 * 512 + 3.0 * 512 * 1024) * 2;
                double kv = 2.0 * 2 * 2 * 2048 * 64 * 2;
                double group_bw = (double)t.sip.cubes / tp * t.cube.hbm.channels *
                                  (double)t.cube.hbm.channel_bw_bytes_per_s;
                double floor_ps = (weights + kv) / tp / group_bw * 1e12;
                sim_ps end = 0;
                for (uint32_t i = 0; i < job.sim.n_pes; i++)
                        if (job.sim.pes[i].exec_end_ps > end)
                                end = job.sim.pes[i].exec_end_ps;
                double kernel_ps = (double)(end - job.sim.target_start_ps);
                cr_log_info("decode tp %d: %.0f ps, roofline %.0f ps (%.0f%%)", tp, kernel_ps,
                            floor_ps, 100 * floor_ps / kernel_ps);
                cr_assert_geq(kernel_ps, floor_ps, "tp %d: decode took %.0f ps, below the HBM "
                              "roofline %.0f ps", tp, kernel_ps, floor_ps);
        }
}

/* ---- the LM head ------------------------------------------------------------------------ */

Test(llm, lm_head_matches_float64)
{
        /* vocab 2100 over 8 PEs: 262 or 263 columns each, two blocks and a
         * tail; hidden 300: three K steps (two and a tail), x held in TCM
         * from the first block's steps for the others (docs/adr/0050). */
        const char *sets[] = { "hidden=300", "vocab=2100", "batch=3", "dtype=fp32",
                               "weight_dtype=fp32" };
        cr_assert_eq(fixture_run(tl_kernel_find("llm_lm_head"),
                                 fixture_opts(TL_MODE_DATA, 5), sets, 5),
                     0);
        const float *x = in("x"), *w = in("w_lm");
        double *ref = zeros(3 * 2100), *xd = zeros(3 * 300);
        for (int i = 0; i < 3 * 300; i++)
                xd[i] = x[i];
        matmul(xd, w, 3, 300, 2100, ref);
        check("logits", in("logits"), ref, 3 * 2100, 1e-3);
        free(ref);
        free(xd);
}

Test(llm, tp4_over_sips_fp32)
{
        /* topologies/multi_sip.yaml: tp 4, one rank per SIP (64 PEs each,
         * more PEs than columns: some PEs have no share); the all-reduce
         * crosses the inter-SIP links. */
        fixture_fini();
        fixture_load("multi_sip.yaml");
        layer_matches("tp4_over_sips_fp32", &(struct shape){ 1, 2, 5, 40, 8, 4, 8, 48, 4, "fp32" });
        cr_expect_gt(job.sim.class_bytes[TOPO_EDGE_INTER_SIP], 0, "no bytes crossed SIPs");
}
