/* base/ckd.h: overflow-checked arithmetic for every size, extent, count and
 * byte total computed from user input (a kernel's shapes and blocks, a
 * machine file's counts, a CLI's numbers). Each helper returns true when
 * the exact result fits and stores it; on overflow it returns false and
 * stores UINT64_MAX (a saturated value that fails any later capacity check
 * instead of wrapping to a small one). C23's <stdckdint.h> names these
 * ckd_add/ckd_mul; gcc 12 has only the builtins they are made of.
 *
 * The rule (ADR 0019): a product or sum of user values is never written
 * with a raw `*` or `+` in a uint64_t; it goes through one of these, and the
 * caller reports the overflow as bad input naming the values. */
#ifndef CUBESIM_BASE_CKD_H
#define CUBESIM_BASE_CKD_H

#include <stdbool.h>
#include <stdint.h>

/* *out = a * b; false (and *out = UINT64_MAX) on overflow. */
static inline bool ckd_mul_u64(uint64_t *out, uint64_t a, uint64_t b)
{
        if (__builtin_mul_overflow(a, b, out)) {
                *out = UINT64_MAX;
                return false;
        }
        return true;
}

/* *out = a + b; false (and *out = UINT64_MAX) on overflow. */
static inline bool ckd_add_u64(uint64_t *out, uint64_t a, uint64_t b)
{
        if (__builtin_add_overflow(a, b, out)) {
                *out = UINT64_MAX;
                return false;
        }
        return true;
}

/* *out = a * b + c; false (and *out = UINT64_MAX) on overflow. */
static inline bool ckd_muladd_u64(uint64_t *out, uint64_t a, uint64_t b, uint64_t c)
{
        return ckd_mul_u64(out, a, b) && ckd_add_u64(out, *out, c);
}

/* *out = the product of the n extents ext[0..n) (1 when n is 0); false if
 * an extent is negative or the product overflows (*out = UINT64_MAX). */
static inline bool ckd_prod_i64(uint64_t *out, const int64_t *ext, int n)
{
        uint64_t p = 1;
        for (int i = 0; i < n; i++) {
                if (ext[i] < 0 || !ckd_mul_u64(&p, p, (uint64_t)ext[i])) {
                        *out = UINT64_MAX;
                        return false;
                }
        }
        *out = p;
        return true;
}

/* a * b, saturating at UINT64_MAX (for figures where saturation is the
 * right answer: a capacity that no machine has, a time past any budget). */
static inline uint64_t sat_mul_u64(uint64_t a, uint64_t b)
{
        uint64_t r;
        ckd_mul_u64(&r, a, b);
        return r;
}

/* a + b, saturating at UINT64_MAX. */
static inline uint64_t sat_add_u64(uint64_t a, uint64_t b)
{
        uint64_t r;
        ckd_add_u64(&r, a, b);
        return r;
}

#endif
