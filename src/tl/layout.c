/* tl/layout.c: which elements of its owner's storage a tensor or view
 * covers, for the checks that depend on it: whether two operands of one op
 * share elements (an op's outputs must not, nor an input and the output it
 * is read with), and whether a block-float store starts at a block of its
 * destination (docs/adr/0019).
 *
 * Owners are contiguous (row-major strides, offset 0); tl_view keeps its
 * tensor's strides and tl_reshape makes contiguous ones, so every view's
 * strides are nested: sorted by size, each is larger than the span of the
 * axes below it. An element is then found in a view by peeling the strides
 * from the largest down (one way only). Offsets and extents are in
 * elements. */
#include <string.h>

#include "tl/tl_int.h"

/* The first and last element of t, as offsets into its owner. */
static void span(const tl_tensor *t, int64_t *lo, int64_t *hi)
{
        int64_t h = t->offset;
        for (int i = 0; i < t->ndim; i++)
                h += (t->shape[i] - 1) * t->stride[i];
        *lo = t->offset;
        *hi = h;
}

/* t's axes of extent > 1, by stride from the largest, into ax; their
 * number, or -1 if the strides are not nested (then nothing is known). */
static int nested_axes(const tl_tensor *t, int *ax)
{
        int n = 0;
        for (int i = 0; i < t->ndim; i++) {
                if (t->shape[i] == 1)
                        continue;
                int j = n++;
                for (; j > 0 && t->stride[ax[j - 1]] < t->stride[i]; j--)
                        ax[j] = ax[j - 1];
                ax[j] = i;
        }
        int64_t below = 0;           /* the span of the axes after the k-th */
        for (int k = n - 1; k >= 0; k--) {
                if (t->stride[ax[k]] <= below)
                        return -1;
                below += (t->shape[ax[k]] - 1) * t->stride[ax[k]];
        }
        return n;
}

/* Is element at (an offset into t's owner) one of t's? ax: nested_axes. */
static bool holds(const tl_tensor *t, const int *ax, int n, int64_t at)
{
        int64_t rel = at - t->offset;
        if (rel < 0)
                return false;
        for (int k = 0; k < n; k++) {
                int64_t s = t->stride[ax[k]], q = rel / s;
                if (q >= t->shape[ax[k]])
                        return false;
                rel -= q * s;
        }
        return rel == 0;
}

bool tl__same_view(const tl_tensor *a, const tl_tensor *b)
{
        if (a->owner != b->owner || a->offset != b->offset || a->ndim != b->ndim)
                return false;
        for (int i = 0; i < a->ndim; i++)
                if (a->shape[i] != b->shape[i] || (a->shape[i] > 1 && a->stride[i] != b->stride[i]))
                        return false;
        return true;
}

bool tl__overlap(const tl_tensor *a, const tl_tensor *b)
{
        if (a->owner != b->owner)
                return false;
        int64_t alo, ahi, blo, bhi;
        span(a, &alo, &ahi);
        span(b, &blo, &bhi);
        if (ahi < blo || bhi < alo)
                return false;
        /* Their spans cross: look for an element of the smaller in the
         * other (the cost of copying it, and rare: views side by side). */
        if (tl__elems(a) > tl__elems(b)) {
                const tl_tensor *t = a;
                a = b;
                b = t;
        }
        int ax[TL_MAX_DIMS];
        int n = nested_axes(b, ax);
        if (n < 0)
                return true;
        int64_t idx[TL_MAX_DIMS] = { 0 };
        for (;;) {
                int64_t at = a->offset;
                for (int i = 0; i < a->ndim; i++)
                        at += idx[i] * a->stride[i];
                if (holds(b, ax, n, at))
                        return true;
                int i = a->ndim - 1;
                for (; i >= 0 && ++idx[i] == a->shape[i]; i--)
                        idx[i] = 0;
                if (i < 0)
                        return false;
        }
}

void tl__check_apart(tl_ctx *tl, const char *file, int line, const char *op, const tl_tensor *a,
                     const char *an, const tl_tensor *b, const char *bn, const char *why)
{
        if (tl__overlap(a, b))
                tl__fail(tl, file, line, op, "%s and %s share elements (views of one tensor): %s",
                         an, bn, why);
}

static const char *bfp_name(tl_dtype dt)
{
        return dt == TL_BFP8_B ? "bfp8_b" : "bfp4_b";
}

void tl__check_block_start(tl_ctx *tl, const char *file, int line, const char *op,
                           const tl_tensor *t, const char *which)
{
        if (!tl__is_bfp(t->dtype) || t->owner == t)
                return;
        const tl_tensor *o = t->owner;
        int nd = t->ndim;
        int64_t row_len = o->ndim ? o->shape[o->ndim - 1] : 1;
        int64_t n = nd ? t->shape[nd - 1] : 1, st = nd ? t->stride[nd - 1] : 1;
        int64_t idx[TL_MAX_DIMS] = { 0 };
        for (;;) {
                int64_t at = t->offset;
                for (int i = 0; i + 1 < nd; i++)
                        at += idx[i] * t->stride[i];
                if ((n > 1 && st != 1) || at % row_len % TL_BFP_BLOCK != 0)
                        tl__fail(tl, file, line, op,
                                 "%s: a %s view with a row starting at column %lld of %lld: a "
                                 "block float is written in whole blocks of %d along the last "
                                 "axis, so a view written to starts each row at a multiple of "
                                 "%d", which, bfp_name(t->dtype),
                                 (long long)(at % row_len), (long long)row_len, TL_BFP_BLOCK,
                                 TL_BFP_BLOCK);
                /* A row past its owner's row (a reshape) would group the
                 * end of one owner row with the start of the next. */
                if (row_len % TL_BFP_BLOCK && at % row_len + n > row_len)
                        tl__fail(tl, file, line, op,
                                 "%s: a %s view with a row of %lld from column %lld, past the "
                                 "end of its tensor's rows of %lld: a block float's blocks of %d "
                                 "end with each row, so a row written to ends with it too",
                                 which, bfp_name(t->dtype),
                                 (long long)n, (long long)(at % row_len), (long long)row_len,
                                 TL_BFP_BLOCK);
                int i = nd - 2;
                for (; i >= 0 && ++idx[i] == t->shape[i]; i--)
                        idx[i] = 0;
                if (i < 0)
                        return;
        }
}
