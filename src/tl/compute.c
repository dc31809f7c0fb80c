/* tl/compute.c: data mode: what each op computes. Values are fp32;
 * rounding to bf16/fp16 and the block floats happens where an op writes a
 * tensor of that dtype (stores, casts, fills). Tensors are strided, up to
 * 4-D; binary ops broadcast (NumPy rules: a missing or extent-1 axis
 * repeats). The dot accumulates in fp32 in k order. */
#include <math.h>
#include <string.h>

#include "base/fp.h"
#include "tl/tl_int.h"

bool tl__is_bfp(tl_dtype dt)
{
        return dt == TL_BFP8_B || dt == TL_BFP4_B;
}

void tl__bfp_round(float *x, int64_t n, int64_t stride, tl_dtype dt)
{
        int bits = dt == TL_BFP8_B ? 7 : 3;
        float q_max = (float)((1 << bits) - 1);
        for (int64_t b = 0; b < n; b += TL_BFP_BLOCK) {
                int64_t m = n - b < TL_BFP_BLOCK ? n - b : TL_BFP_BLOCK;
                float *v = x + b * stride;
                float big = 0.0f;
                for (int64_t i = 0; i < m; i++)
                        if (isfinite(v[i * stride]) && fabsf(v[i * stride]) > big)
                                big = fabsf(v[i * stride]);
                int e = 0;
                frexpf(big, &e);     /* big = f * 2^e, f in [0.5, 1): the step is 2^(e - bits) */
                for (int64_t i = 0; i < m; i++) {
                        float *p = &v[i * stride];
                        if (!isfinite(*p))
                                continue;
                        float q = big > 0.0f ? rintf(ldexpf(fabsf(*p), bits - e)) : 0.0f;
                        *p = copysignf(ldexpf(q < q_max ? q : q_max, e - bits), *p);
                }
        }
}

float tl__round(float v, tl_dtype dt)
{
        switch (dt) {
        case TL_FP32: return v;
        case TL_BF16: return fp_bf16_to_f32(fp_f32_to_bf16(v));
        case TL_FP16: return fp_f16_to_f32(fp_f32_to_f16(v));
        case TL_BFP8_B:
        case TL_BFP4_B: tl__bfp_round(&v, 1, 1, dt); return v;
        }
        return v;
}

/* Strides of t seen from an output of nd axes (broadcast axes stride 0). */
static void view_strides(const tl_tensor *t, int nd, int64_t *st)
{
        for (int i = 0; i < nd; i++) {
                int it = i - (nd - t->ndim);
                st[i] = it >= 0 && t->shape[it] != 1 ? t->stride[it] : 0;
        }
}

/* Call f(out_elem, a_elem, b_elem) over every element of out, in C order. */
#define FOR_EACH_4D(out, nd, sa, sb, body)                                                   \
        do {                                                                                  \
                int64_t e_[4] = { 1, 1, 1, 1 }, so_[4] = { 0, 0, 0, 0 };                      \
                int64_t a_[4] = { 0, 0, 0, 0 }, b_[4] = { 0, 0, 0, 0 };                        \
                for (int i_ = 0; i_ < (nd); i_++) {                                           \
                        e_[4 - (nd) + i_] = (out)->shape[i_];                                 \
                        so_[4 - (nd) + i_] = (out)->stride[i_];                               \
                        a_[4 - (nd) + i_] = (sa)[i_];                                         \
                        b_[4 - (nd) + i_] = (sb)[i_];                                         \
                }                                                                             \
                for (int64_t i0 = 0; i0 < e_[0]; i0++)                                        \
                        for (int64_t i1 = 0; i1 < e_[1]; i1++)                                \
                                for (int64_t i2 = 0; i2 < e_[2]; i2++)                        \
                                        for (int64_t i3 = 0; i3 < e_[3]; i3++) {              \
                                                int64_t o_ = i0 * so_[0] + i1 * so_[1] +      \
                                                             i2 * so_[2] + i3 * so_[3];       \
                                                int64_t ai_ = i0 * a_[0] + i1 * a_[1] +       \
                                                              i2 * a_[2] + i3 * a_[3];        \
                                                int64_t bi_ = i0 * b_[0] + i1 * b_[1] +       \
                                                              i2 * b_[2] + i3 * b_[3];        \
                                                (void)ai_;                                    \
                                                (void)bi_;                                    \
                                                body;                                         \
                                        }                                                     \
        } while (0)

static inline float *at(const tl_tensor *t)
{
        return t->base + t->offset;
}

/* A block-float row of view dst ended before element end (from dst's
 * first): if that is inside a block of its owner's row, the rest of the
 * block is padding, zeros. */
static void pad_block(const tl_tensor *dst, int64_t end)
{
        const tl_tensor *o = dst->owner;
        if (o == dst || o->base != dst->base || o->ndim == 0 || dst->ndim == 0 ||
            dst->stride[dst->ndim - 1] != 1)
                return;
        int64_t at = dst->offset + end, row_len = o->shape[o->ndim - 1];
        int64_t col = at % row_len, in_block = col % TL_BFP_BLOCK;
        if (!in_block)
                return;
        int64_t pad = TL_BFP_BLOCK - in_block;
        if (pad > row_len - col)
                pad = row_len - col;
        for (int64_t i = 0; i < pad; i++)
                dst->base[at + i] = 0.0f;
}

void tl__compute_copy(const tl_tensor *src, tl_tensor *dst, tl_dtype round_to)
{
        int64_t ss[4], zero[4] = { 0 };
        view_strides(src, dst->ndim, ss);
        const float *s = at(src);
        float *o = at(dst);
        if (!tl__is_bfp(round_to)) {
                FOR_EACH_4D(dst, dst->ndim, ss, zero, o[o_] = tl__round(s[ai_], round_to));
                return;
        }
        FOR_EACH_4D(dst, dst->ndim, ss, zero, o[o_] = s[ai_]);
        /* Every row of dst's last axis, in blocks of TL_BFP_BLOCK. */
        int nd = dst->ndim;
        int64_t rows = 1, n = nd ? dst->shape[nd - 1] : 1, st = nd ? dst->stride[nd - 1] : 1;
        for (int i = 0; i + 1 < nd; i++)
                rows *= dst->shape[i];
        for (int64_t r = 0; r < rows; r++) {
                int64_t off = 0, rest = r;
                for (int i = nd - 2; i >= 0; i--) {
                        off += (rest % dst->shape[i]) * dst->stride[i];
                        rest /= dst->shape[i];
                }
                tl__bfp_round(o + off, n, st, round_to);
                pad_block(dst, off + (n - 1) * st + 1);
        }
}

void tl__compute_fill(tl_tensor *out, float v)
{
        int64_t zero[4] = { 0 };
        float *o = at(out);
        FOR_EACH_4D(out, out->ndim, zero, zero, o[o_] = v);
}

void tl__compute_scalar(tl_math_op op, const tl_tensor *x, float v, tl_tensor *out)
{
        int64_t sx[4], zero[4] = { 0 };
        view_strides(x, out->ndim, sx);
        const float *a = at(x);
        float *o = at(out);
        if (op == TL_ADD_SCALAR)
                FOR_EACH_4D(out, out->ndim, sx, zero, o[o_] = a[ai_] + v);
        else
                FOR_EACH_4D(out, out->ndim, sx, zero, o[o_] = a[ai_] * v);
}

static float sigmoid(float v)
{
        return 1.0f / (1.0f + expf(-v));
}

static float apply1(tl_math_op op, float v)
{
        switch (op) {
        case TL_EXP: return expf(v);
        case TL_RELU: return v > 0.0f ? v : 0.0f;
        case TL_RECIP: return 1.0f / v;
        case TL_NEG: return -v;
        case TL_SQRT: return sqrtf(v);
        case TL_RSQRT: return 1.0f / sqrtf(v);
        case TL_LOG: return logf(v);
        case TL_TANH: return tanhf(v);
        case TL_ERF: return erff(v);
        case TL_SIN: return sinf(v);
        case TL_COS: return cosf(v);
        case TL_SIGMOID: return sigmoid(v);
        case TL_SILU: return v * sigmoid(v);
        case TL_GELU: return 0.5f * v * (1.0f + erff(v * (float)M_SQRT1_2));
        case TL_GELU_TANH: {
                const float k = 0.7978845608028654f; /* sqrt(2 / pi) */
                return 0.5f * v * (1.0f + tanhf(k * (v + 0.044715f * v * v * v)));
        }
        default: return v;
        }
}

void tl__compute_math1(tl_math_op op, const tl_tensor *x, tl_tensor *out)
{
        int64_t sx[4], zero[4] = { 0 };
        view_strides(x, out->ndim, sx);
        const float *a = at(x);
        float *o = at(out);
        FOR_EACH_4D(out, out->ndim, sx, zero, o[o_] = apply1(op, a[ai_]));
}

void tl__compute_reduce(tl_math_op op, const tl_tensor *x, int axis, tl_tensor *out)
{
        /* Iterate the output; walk x along axis from each output element. */
        int nd = x->ndim;
        int64_t n = x->shape[axis], sn = x->stride[axis];
        int64_t sx[4], zero[4] = { 0 };
        view_strides(x, nd, sx);
        sx[axis] = 0;
        bool is_max = op == TL_ROWMAX || op == TL_AMAX;
        const float *a = at(x);
        float *o = at(out);
        FOR_EACH_4D(out, nd, sx, zero, {
                float acc = is_max ? -INFINITY : 0.0f;
                for (int64_t j = 0; j < n; j++) {
                        float v = a[ai_ + j * sn];
                        acc = is_max ? (v > acc ? v : acc) : acc + v;
                }
                o[o_] = op == TL_MEAN ? acc / (float)n : acc;
        });
}

void tl__compute_where(const tl_tensor *mask, const tl_tensor *a, const tl_tensor *b,
                       tl_tensor *out)
{
        /* out = b, then a where the mask is set. */
        tl__compute_copy(b, out, TL_FP32);
        int64_t sm[4], sa[4];
        view_strides(mask, out->ndim, sm);
        view_strides(a, out->ndim, sa);
        const float *m = at(mask), *pa = at(a);
        float *o = at(out);
        FOR_EACH_4D(out, out->ndim, sm, sa, if (m[ai_] != 0.0f) o[o_] = pa[bi_]);
}

void tl__compute_rmsnorm(const tl_tensor *x, const tl_tensor *w, float eps, tl_tensor *out)
{
        int nd = x->ndim;
        int64_t n = x->shape[nd - 1], sn = x->stride[nd - 1], so = out->stride[nd - 1];
        int64_t sw = w && w->shape[w->ndim - 1] != 1 ? w->stride[w->ndim - 1] : 0;
        /* Iterate the rows: the output seen with its last axis of extent 1. */
        tl_tensor rows = *out;
        rows.shape[nd - 1] = 1;
        int64_t sx[4], zero[4] = { 0 };
        view_strides(x, nd, sx);
        sx[nd - 1] = 0;
        const float *a = at(x), *pw = w ? at(w) : NULL;
        float *o = at(out);
        FOR_EACH_4D(&rows, nd, sx, zero, {
                float ss = 0.0f;
                for (int64_t j = 0; j < n; j++)
                        ss += a[ai_ + j * sn] * a[ai_ + j * sn];
                float r = 1.0f / sqrtf(ss / (float)n + eps);
                for (int64_t j = 0; j < n; j++)
                        o[o_ + j * so] = a[ai_ + j * sn] * r * (pw ? pw[j * sw] : 1.0f);
        });
}

static float apply2(tl_math_op op, float a, float b)
{
        switch (op) {
        case TL_ADD: return a + b;
        case TL_SUB: return a - b;
        case TL_MUL: return a * b;
        case TL_DIV: return a / b;
        case TL_MAX: return a > b ? a : b;
        case TL_MIN: return a < b ? a : b;
        default: return a;
        }
}

void tl__compute_math2(tl_math_op op, const tl_tensor *x, const tl_tensor *y, tl_tensor *out)
{
        int64_t sa[4], sb[4];
        view_strides(x, out->ndim, sa);
        view_strides(y, out->ndim, sb);
        const float *a = at(x), *b = at(y);
        float *o = at(out);
        FOR_EACH_4D(out, out->ndim, sa, sb, o[o_] = apply2(op, a[ai_], b[bi_]));
}

void tl__compute_mask_causal(const tl_tensor *x, int64_t offset, tl_tensor *out)
{
        int nd = out->ndim;
        int64_t sx[4], zero[4] = { 0 };
        view_strides(x, nd, sx);
        const float *a = at(x);
        float *o = at(out);
        /* The last two axes are (i, j) = (i2, i3) of the 4-D walk; j - i
         * cannot overflow (extents are at most 2^40), i + offset could. */
        FOR_EACH_4D(out, nd, sx, zero, o[o_] = i3 - i2 > offset ? -INFINITY : a[ai_]);
}

void tl__compute_dot(const tl_tensor *a, const tl_tensor *b, bool trans_b, tl_tensor *out)
{
        int64_t m = a->shape[0], k = a->shape[1], n = out->shape[1];
        int64_t bsk = trans_b ? b->stride[1] : b->stride[0];  /* b's step along k */
        int64_t bsn = trans_b ? b->stride[0] : b->stride[1];  /* and along n */
        const float *pa = at(a), *pb = at(b);
        float *po = at(out);
        for (int64_t i = 0; i < m; i++) {
                float *row = po + i * out->stride[0];
                for (int64_t j = 0; j < n; j++)
                        row[j * out->stride[1]] = 0.0f;
                for (int64_t kk = 0; kk < k; kk++) {
                        float av = pa[i * a->stride[0] + kk * a->stride[1]];
                        const float *brow = pb + kk * bsk;
                        for (int64_t j = 0; j < n; j++)
                                row[j * out->stride[1]] += av * brow[j * bsn];
                }
        }
}
