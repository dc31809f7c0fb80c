/* tests/unit/test_ops.c: the MATH ops beyond the basics (sqrt, rsqrt, log,
 * tanh, erf, sigmoid, silu, gelu in both forms, where, scalar add and mul,
 * reductions on any axis, counted from either end) in data mode against a float64 reference; their
 * cost from the topology's table; the composite epilogues gelu, silu,
 * residual add and rmsnorm against float64, and where the planner puts
 * them. */
#include <math.h>
#include <unistd.h>

#include "base/fp.h"
#include "fixture.h"

TestSuite(ops, .init = fixture_small, .fini = fixture_fini);

static int run_kernel(tl_kernel_fn fn, enum tl_mode mode, const char *oplog)
{
        static struct tl_kernel k;
        k = (struct tl_kernel){ .name = "test", .fn = fn };
        struct tl_run_opts o = *fixture_opts(mode, 1);
        o.oplog_path = oplog;
        int rc = fixture_run(&k, &o, NULL, 0);
        if (rc)
                diag_print(&d, stderr);
        return rc;
}

/* Run fn, which must succeed, with its op_log in a new file named by the
 * template path (its XXXXXX replaced); the caller removes the file. */
static void run_logged(tl_kernel_fn fn, enum tl_mode mode, char *path)
{
        int fd = mkstemp(path);
        cr_assert_geq(fd, 0, "cannot make %s", path);
        close(fd);
        cr_assert_eq(run_kernel(fn, mode, path), 0);
}

/* fn, run in op_log mode, is a kernel error with a message containing want. */
static void assert_kernel_error(tl_kernel_fn fn, const char *want)
{
        cr_assert_neq(run_kernel(fn, TL_MODE_OPLOG, NULL), 0, "no error: %s", want);
        cr_assert(diag_has(want), "no message containing '%s'", want);
}

/* A TCM tensor [r, c] holding lo + (hi - lo) * i / (r c - 1), element i. */
static tl_tensor *ramp(tl_ctx *tl, int64_t r, int64_t c, float lo, float hi)
{
        tl_tensor *x = tl_alloc(tl, TL_TCM, TL_FP32, 2, ((int64_t[]){ r, c }));
        for (int64_t i = 0; i < r * c; i++)
                x->base[i] = lo + (hi - lo) * (float)i / (float)(r * c - 1);
        return x;
}

/* ---- unary ops ------------------------------------------------------------------ */

#define N_UNARY 11
static const tl_op unary_ops[N_UNARY] = { TL_SQRT, TL_RSQRT, TL_LOG, TL_TANH, TL_ERF,
                                          TL_SIGMOID, TL_SILU, TL_GELU, TL_GELU_TANH,
                                          TL_SIN, TL_COS };
static float unary_in[256], unary_out[N_UNARY][256];

static double reference(tl_op op, double x)
{
        switch (op) {
        case TL_SQRT: return sqrt(x);
        case TL_RSQRT: return 1 / sqrt(x);
        case TL_LOG: return log(x);
        case TL_TANH: return tanh(x);
        case TL_ERF: return erf(x);
        case TL_SIN: return sin(x);
        case TL_COS: return cos(x);
        case TL_SIGMOID: return 1 / (1 + exp(-x));
        case TL_SILU: return x / (1 + exp(-x));
        case TL_GELU: return 0.5 * x * (1 + erf(x / sqrt(2)));
        case TL_GELU_TANH: return 0.5 * x * (1 + tanh(sqrt(2 / M_PI) * (x + 0.044715 * x * x * x)));
        default: return NAN;
        }
}

static bool positive_domain(tl_op op)
{
        return op == TL_SQRT || op == TL_RSQRT || op == TL_LOG;
}

static void k_unary(tl_ctx *tl, const void *args)
{
        if (tl->rank != 0)
                return;
        tl_tensor *neg = ramp(tl, 4, 64, -6.0f, 6.0f), *pos = ramp(tl, 4, 64, 0.01f, 50.0f);
        memcpy(unary_in, neg->base, sizeof unary_in);
        for (int i = 0; i < N_UNARY; i++) {
                tl_tensor *y = tl_impl_math1(tl, unary_ops[i], positive_domain(unary_ops[i]) ? pos : neg,
                                         __FILE__, __LINE__);
                tl_wait_tensor(tl, y);
                memcpy(unary_out[i], y->base, sizeof unary_out[i]);
        }
}

Test(ops, unary_ops_match_float64)
{
        cr_assert_eq(run_kernel(k_unary, TL_MODE_DATA, NULL), 0);
        for (int i = 0; i < N_UNARY; i++)
                for (int j = 0; j < 256; j++) {
                        tl_op op = unary_ops[i];
                        double x = positive_domain(op) ? 0.01 + (50.0 - 0.01) * j / 255.0 :
                                                         unary_in[j];
                        double want = reference(op, (float)x);
                        cr_assert_float_eq(unary_out[i][j], want, 2e-6 + 2e-6 * fabs(want),
                                           "%s(%.9g) = %.9g, want %.9g", tl__op_name(op), x,
                                           unary_out[i][j], want);
                }
}

/* ---- cost and names --------------------------------------------------------------- */

Test(ops, every_math_op_has_a_cost_in_the_default_machine)
{
        struct topo def;
        cr_assert_eq(topo_load_default(&def, &d), 0);
        for (int op = TOPO_OP_MATH_FIRST; op < TOPO_OP_COUNT; op++) {
                cr_assert_geq(def.pe.math.cycles_per_element[op], 1, "%s has no cycles per element",
                              topo_op_name((enum topo_op)op));
                cr_assert_neq(def.pe.cpu.issue_cost_ps[op], TOPO_COST_NONE, "%s has no issue cost",
                              topo_op_name((enum topo_op)op));
        }
        cr_assert_eq(topo_op_from_name("gelu_tanh"), TOPO_OP_GELU_TANH);
        topo_fini(&def);
}

static sim_ps measured;

static void k_gelu_time(tl_ctx *tl, const void *args)
{
        if (tl->rank != 0)
                return;
        tl_tensor *x = tl_alloc(tl, TL_TCM, TL_FP32, 2, ((int64_t[]){ 96, 72 }));
        sim_ps t0 = ev_now(&tl->sim->ev);
        tl_wait_tensor(tl, tl_gelu(tl, x));
        measured = ev_now(&tl->sim->ev) - t0;
}

Test(ops, gelu_costs_its_table_entries_and_is_logged_by_name)
{
        char path[] = "/tmp/cubesim_test_ops_XXXXXX";
        run_logged(k_gelu_time, TL_MODE_OPLOG, path);
        sim_ps issue = topo_issue_cost_ps(&t.pe.cpu, TOPO_OP_GELU);
        cr_assert_eq(measured, issue + hw_math_ps(&t, TOPO_OP_GELU, 96 * 72, false));
        cr_assert_gt(hw_math_ps(&t, TOPO_OP_GELU, 96 * 72, false),
                     hw_math_ps(&t, TOPO_OP_EXP, 96 * 72, false));
        FILE *f = fopen(path, "r");
        char line[1024];
        int n_cpu = 0, n_math = 0;
        while (f && fgets(line, sizeof line, f)) {
                n_cpu += strstr(line, "\"component\":\"pe_cpu\",\"op\":\"gelu\"") != NULL;
                n_math += strstr(line, "\"component\":\"pe_math\",\"op\":\"gelu\"") != NULL;
        }
        if (f)
                fclose(f);
        unlink(path);
        cr_assert_eq(n_cpu, 1);
        cr_assert_eq(n_math, 1);
}

/* ---- where, scalars, reductions ---------------------------------------------------- */

static float where_out[4 * 8], scalar_out[2][4 * 8];

static void k_where_scalar(tl_ctx *tl, const void *args)
{
        if (tl->rank != 0)
                return;
        tl_tensor *mask = tl_alloc(tl, TL_TCM, TL_FP32, 2, ((int64_t[]){ 4, 1 }));
        for (int i = 0; i < 4; i++)
                mask->base[i] = i % 2 ? 0.0f : 1.0f;
        tl_tensor *a = ramp(tl, 4, 8, -1.0f, 1.0f), *b = ramp(tl, 1, 8, 10.0f, 17.0f);
        tl_tensor *w = tl_where(tl, mask, a, b);
        tl_tensor *s1 = tl_add_scalar(tl, a, 2.5f), *s2 = tl_mul_scalar(tl, a, -3.0f);
        tl_wait_tensor(tl, w);
        tl_wait_tensor(tl, s1);
        tl_wait_tensor(tl, s2);
        memcpy(where_out, w->base, sizeof where_out);
        memcpy(scalar_out[0], s1->base, sizeof scalar_out[0]);
        memcpy(scalar_out[1], s2->base, sizeof scalar_out[1]);
}

Test(ops, where_selects_with_a_broadcast_mask_and_scalars_apply)
{
        cr_assert_eq(run_kernel(k_where_scalar, TL_MODE_DATA, NULL), 0);
        for (int i = 0; i < 4; i++)
                for (int j = 0; j < 8; j++) {
                        double a = -1.0 + 2.0 * (i * 8 + j) / 31.0;
                        double want = i % 2 ? 10.0 + j : a;
                        cr_assert_float_eq(where_out[i * 8 + j], want, 1e-6, "(%d, %d)", i, j);
                        cr_assert_float_eq(scalar_out[0][i * 8 + j], a + 2.5, 1e-6);
                        cr_assert_float_eq(scalar_out[1][i * 8 + j], a * -3.0, 1e-5);
                }
}

/* The axes tried: each axis, and each from the end (-1 .. -ndim). */
#define N_AXES 6
static const int red_axes[N_AXES] = { 0, 1, 2, -1, -2, -3 };
static float red_in[3 * 4 * 5], red_out[3][N_AXES][3 * 4 * 5];

static void k_reduce(tl_ctx *tl, const void *args)
{
        if (tl->rank != 0)
                return;
        tl_tensor *x = tl_alloc(tl, TL_TCM, TL_FP32, 3, ((int64_t[]){ 3, 4, 5 }));
        for (int i = 0; i < 60; i++)
                x->base[i] = red_in[i] = sinf((float)i * 0.7f) * 3.0f;
        const tl_op ops[3] = { TL_SUM, TL_AMAX, TL_MEAN };
        for (int o = 0; o < 3; o++)
                for (int a = 0; a < N_AXES; a++) {
                        tl_tensor *y = tl_impl_reduce(tl, ops[o], x, red_axes[a], __FILE__, __LINE__);
                        tl_wait_tensor(tl, y);
                        memcpy(red_out[o][a], y->base, (size_t)tl_numel(y) * sizeof(float));
                }
}

Test(ops, reductions_on_any_axis_match_float64)
{
        cr_assert_eq(run_kernel(k_reduce, TL_MODE_DATA, NULL), 0);
        const int ext[3] = { 3, 4, 5 }, stride[3] = { 20, 5, 1 };
        for (int o = 0; o < 3; o++)
                for (int a = 0; a < N_AXES; a++) {
                        int ax = red_axes[a] < 0 ? red_axes[a] + 3 : red_axes[a];
                        int oe[3] = { 3, 4, 5 };
                        oe[ax] = 1;
                        for (int i = 0; i < oe[0]; i++)
                                for (int j = 0; j < oe[1]; j++)
                                        for (int k = 0; k < oe[2]; k++) {
                                                double acc = o == 1 ? -INFINITY : 0;
                                                int base = i * 20 + j * 5 + k;
                                                for (int r = 0; r < ext[ax]; r++) {
                                                        double v = red_in[base + r * stride[ax]];
                                                        acc = o == 1 ? fmax(acc, v) : acc + v;
                                                }
                                                if (o == 2)
                                                        acc /= ext[ax];
                                                float got = red_out[o][a][(i * oe[1] + j) * oe[2] + k];
                                                cr_assert_float_eq(got, acc, 1e-5, "op %d axis %d", o,
                                                                   red_axes[a]);
                                        }
                }
}

static void k_bad_axis(tl_ctx *tl, const void *args)
{
        tl_tensor *x = tl_alloc(tl, TL_TCM, TL_FP32, 2, ((int64_t[]){ 3, 4 }));
        tl_sum(tl, x, 2);
}

Test(ops, a_reduction_axis_out_of_range_is_a_kernel_error)
{
        assert_kernel_error(k_bad_axis, "sum: axis 2 of a 2D tensor: expected -2..1");
}

static void k_bad_negative_axis(tl_ctx *tl, const void *args)
{
        tl_tensor *x = tl_alloc(tl, TL_TCM, TL_FP32, 3, ((int64_t[]){ 3, 4, 5 }));
        tl_mean(tl, x, -4); /* -ndim - 1 */
}

Test(ops, a_negative_axis_past_the_first_is_a_kernel_error)
{
        assert_kernel_error(k_bad_negative_axis, "mean: axis -4 of a 3D tensor: expected -3..2");
}

static void k_reduce_0d(tl_ctx *tl, const void *args)
{
        tl_amax(tl, tl_alloc(tl, TL_TCM, TL_FP32, 0, NULL), -1);
}

Test(ops, a_reduction_of_a_0d_tensor_says_it_has_no_axis)
{
        assert_kernel_error(k_reduce_0d, "amax: axis -1 of a 0-D tensor: it has no axis to reduce");
}

static void k_broadcast_bad(tl_ctx *tl, const void *args)
{
        tl_tensor *a = tl_alloc(tl, TL_TCM, TL_FP32, 2, ((int64_t[]){ 3, 4 }));
        tl_add(tl, a, tl_alloc(tl, TL_TCM, TL_FP32, 1, ((int64_t[]){ 5 })));
}

Test(ops, shapes_that_do_not_broadcast_are_named_whole)
{
        assert_kernel_error(k_broadcast_bad, "add: shapes do not broadcast: a [3, 4] and b [5]");
}

static void k_where_shapes(tl_ctx *tl, const void *args)
{
        tl_tensor *a = tl_alloc(tl, TL_TCM, TL_FP32, 2, ((int64_t[]){ 3, 4 }));
        tl_tensor *m = tl_alloc(tl, TL_TCM, TL_FP32, 0, NULL);
        tl_where(tl, m, a, tl_alloc(tl, TL_TCM, TL_FP32, 1, ((int64_t[]){ 3 })));
}

Test(ops, where_names_the_shapes_that_do_not_broadcast)
{
        assert_kernel_error(k_where_shapes,
                            "where: shapes do not broadcast: mask [], a [3, 4] and b [3]");
}

/* ---- composite epilogues ------------------------------------------------------------- */

#define EM 48
#define EN 40
#define EK 100
static float ea[EM * EK], eb[EK * EN], eres[EM * EN], egamma[EN], eout[EM * EN];

static tl_tensor *from(tl_ctx *tl, float *host, int64_t r, int64_t c, uint32_t seed)
{
        tl_tensor *x = tl_alloc(tl, TL_TCM, TL_FP32, 2, ((int64_t[]){ r, c }));
        uint32_t s = seed;
        for (int64_t i = 0; i < r * c; i++) {
                s = s * 1664525u + 1013904223u;
                host[i] = x->base[i] = (float)((s >> 8) & 0xffff) / 32768.0f - 1.0f;
        }
        return x;
}

static void k_epilogues(tl_ctx *tl, const void *args)
{
        if (tl->rank != 0)
                return;
        tl_tensor *a = from(tl, ea, EM, EK, 1), *b = from(tl, eb, EK, EN, 2);
        tl_tensor *res = from(tl, eres, EM, EN, 3), *gamma = from(tl, egamma, 1, EN, 4);
        tl_tensor *out = tl_alloc(tl, TL_TCM, TL_FP32, 2, ((int64_t[]){ EM, EN }));
        tl_handle h = tl_composite(tl, &(tl_composite_desc){
                .op = TL_GEMM, .a = a, .b = b, .out = out, .tile_m = 32, .tile_n = 32, .tile_k = 64,
                .epilogue = (tl_epilogue[]){
                        { .op = TL_GELU },
                        { .op = TL_ADD, .tensor = res },
                        { .op = TL_SILU },
                        { .op = TL_RMSNORM, .tensor = gamma, .factor = 1e-5f,
                          .scope = TL_SCOPE_KERNEL },
                },
                .n_epilogue = 4,
        });
        tl_wait(tl, h);
        memcpy(eout, out->base, sizeof eout);
}

Test(ops, gelu_residual_silu_rmsnorm_epilogues_match_float64)
{
        char path[] = "/tmp/cubesim_test_ops_XXXXXX";
        run_logged(k_epilogues, TL_MODE_DATA, path);
        static double y[EM * EN];
        for (int i = 0; i < EM; i++) {
                double ss = 0;
                for (int j = 0; j < EN; j++) {
                        double c = 0;
                        for (int k = 0; k < EK; k++)
                                c += (double)ea[i * EK + k] * eb[k * EN + j];
                        c = reference(TL_GELU, c) + eres[i * EN + j];
                        c = reference(TL_SILU, c);
                        y[i * EN + j] = c;
                        ss += c * c;
                }
                double r = 1 / sqrt(ss / EN + 1e-5);
                for (int j = 0; j < EN; j++) {
                        double want = y[i * EN + j] * r * egamma[j];
                        cr_assert_float_eq(eout[i * EN + j], want, 1e-4 + 1e-4 * fabs(want),
                                           "(%d, %d): %.9g, want %.9g", i, j, eout[i * EN + j], want);
                }
        }
        /* The planner: gelu, add and silu once per output tile (2 x 2 of
         * them), rmsnorm once after the loop, each by its name. */
        FILE *f = fopen(path, "r");
        char line[1024];
        int n_gelu = 0, n_add = 0, n_silu = 0, n_rms = 0;
        while (f && fgets(line, sizeof line, f)) {
                bool tile = strstr(line, "\"scope\":\"output_tile\"") != NULL;
                n_gelu += tile && strstr(line, "\"stage_op\":\"gelu\"");
                n_add += tile && strstr(line, "\"stage_op\":\"add\"");
                n_silu += tile && strstr(line, "\"stage_op\":\"silu\"");
                n_rms += strstr(line, "\"scope\":\"kernel\"") && strstr(line, "\"stage_op\":\"rmsnorm\"");
        }
        if (f)
                fclose(f);
        unlink(path);
        cr_assert_eq(n_gelu, 4);
        cr_assert_eq(n_add, 4);
        cr_assert_eq(n_silu, 4);
        cr_assert_eq(n_rms, 1);
}

/* A composite with no operation and the one epilogue e, into a TCM [8, 8]. */
static void epilogue_alone(tl_ctx *tl, tl_epilogue e)
{
        tl_tensor *x = tl_alloc(tl, TL_TCM, TL_FP32, 2, ((int64_t[]){ 8, 8 }));
        tl_composite(tl, &(tl_composite_desc){ .out = x, .n_epilogue = 1, .epilogue = &e });
}

static void k_rmsnorm_tile(tl_ctx *tl, const void *args)
{
        epilogue_alone(tl, (tl_epilogue){ .op = TL_RMSNORM, .scope = TL_SCOPE_OUTPUT_TILE });
}

Test(ops, rmsnorm_needs_kernel_scope)
{
        assert_kernel_error(k_rmsnorm_tile,
                            "epilogue #0 (TL_RMSNORM) needs whole rows: give it scope TL_SCOPE_KERNEL");
}

static void k_residual_shape(tl_ctx *tl, const void *args)
{
        tl_tensor *r = tl_alloc(tl, TL_TCM, TL_FP32, 2, ((int64_t[]){ 8, 4 }));
        epilogue_alone(tl, (tl_epilogue){ .op = TL_ADD, .tensor = r });
}

Test(ops, a_residual_that_does_not_broadcast_is_a_kernel_error)
{
        assert_kernel_error(k_residual_shape,
                            "epilogue #0 (TL_ADD): its tensor [8, 4] does not broadcast to the output [8, 8]");
}

/* ---- block floats: a write into a view -------------------------------------------- */

static float bfp_row[48];

/* [2, 48] bfp8_b holding 64; ones into columns 0..19 of it. */
static void k_bfp_partial_block(tl_ctx *tl, const void *args)
{
        if (tl->rank != 0)
                return;
        tl_tensor *bt = tl_alloc(tl, TL_TCM, TL_BFP8_B, 2, ((int64_t[]){ 2, 48 }));
        for (int i = 0; i < 96; i++)
                bt->base[i] = 64.0f;
        int64_t sh[2] = { 2, 20 };
        tl_copy_to(tl, tl_view(tl, bt, ((int64_t[]){ 0, 0 }), sh), tl_fill(tl, TL_FP32, 2, sh, 1.0f));
        tl_wait_tensor(tl, bt);
        memcpy(bfp_row, bt->base + 48, sizeof bfp_row);
}

Test(ops, a_block_float_row_ending_inside_a_block_pads_it_with_zeros)
{
        /* The packer writes the block of columns 16..31 whole: 16..19 are
         * the ones, 20..31 its padding; the next block keeps its values. */
        cr_assert_eq(run_kernel(k_bfp_partial_block, TL_MODE_DATA, NULL), 0);
        for (int j = 0; j < 48; j++)
                cr_assert_eq(bfp_row[j], j < 20 ? 1.0f : j < 32 ? 0.0f : 64.0f, "column %d: %g", j,
                             bfp_row[j]);
}

/* ---- a composite's in-place ops write its output's dtype ---------------------------- */

static float inplace_out[2][64];

/* A bf16 output scaled by 1/3 in place: by a MATH-only composite, and by
 * a GEMM's post-loop (KERNEL scope) op. */
static void k_inplace_bf16(tl_ctx *tl, const void *args)
{
        if (tl->rank != 0)
                return;
        int64_t sq[2] = { 8, 8 };
        tl_epilogue e = { .op = TL_SCALE, .factor = 1.0f / 3.0f, .scope = TL_SCOPE_KERNEL };
        tl_tensor *x = tl_alloc(tl, TL_TCM, TL_BF16, 2, sq);
        for (int i = 0; i < 64; i++)
                x->base[i] = (float)(i + 1);
        tl_wait(tl, tl_composite(tl, &(tl_composite_desc){ .out = x, .n_epilogue = 1,
                                                           .epilogue = &e }));
        tl_tensor *a = tl_fill(tl, TL_FP32, 2, sq, 0.5f);
        tl_tensor *y = tl_alloc(tl, TL_TCM, TL_BF16, 2, sq);
        tl_wait(tl, tl_composite(tl, &(tl_composite_desc){ .op = TL_GEMM, .a = a, .b = a,
                                                           .out = y, .n_epilogue = 1,
                                                           .epilogue = &e }));
        memcpy(inplace_out[0], x->base, sizeof inplace_out[0]);
        memcpy(inplace_out[1], y->base, sizeof inplace_out[1]);
}

Test(ops, a_composites_in_place_ops_round_to_the_outputs_dtype)
{
        cr_assert_eq(run_kernel(k_inplace_bf16, TL_MODE_DATA, NULL), 0);
        for (int w = 0; w < 2; w++)
                for (int i = 0; i < 64; i++) {
                        float v = inplace_out[w][i], want = (w ? 2.0f : (float)(i + 1)) / 3.0f;
                        cr_assert_eq(v, fp_bf16_to_f32(fp_f32_to_bf16(v)),
                                     "output %d [%d] = %.9g is not a bf16 value", w, i, v);
                        cr_assert_float_eq(v, want, want / 128, "output %d [%d]", w, i);
                }
}
