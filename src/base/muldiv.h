/* base/muldiv.h: exact ceil(a * b / d) for time/bytes conversions
 * (bytes at a bandwidth to picoseconds, cycles at a clock to picoseconds).
 *
 * The product a * b may need 128 bits, and a 128-bit division is a library
 * call (__udivti3) several times slower than the processor's 64-bit divide.
 * Almost every conversion on the hot path has a product that fits in 64
 * bits (a transfer under 18 MB times 10^12 ps/s; a cycle count under
 * 1.8 * 10^7), so those take the 64-bit divide and only the rest pay for
 * 128 bits. Both paths give the same exact result: no rounding shortcut,
 * so op_logs and summaries stay bit for bit the same. Results past
 * UINT64_MAX saturate. */
#ifndef CUBESIM_BASE_MULDIV_H
#define CUBESIM_BASE_MULDIV_H

#include <stdint.h>

/* ceil(a * b / d), saturating at UINT64_MAX; d > 0. */
static inline uint64_t muldiv_ceil(uint64_t a, uint64_t b, uint64_t d)
{
        uint64_t p;
        if (__builtin_expect(!__builtin_mul_overflow(a, b, &p), 1))
                return p / d + (p % d != 0);
        __extension__ typedef unsigned __int128 u128;
        u128 q = ((u128)a * b + d - 1) / d;
        return q > UINT64_MAX ? UINT64_MAX : (uint64_t)q;
}

/* (x + q - 1) / q, q > 0 (the sum wraps past UINT64_MAX as the plain
 * expression does): a power of two, the usual packet, line and tile size,
 * by a shift. */
static inline uint64_t div_up(uint64_t x, uint64_t q)
{
        return q & (q - 1) ? (x + q - 1) / q : (x + q - 1) >> __builtin_ctzll(q);
}

/* ceil(a * b / d) for one (b, d) used many times (a link's bytes at its
 * bandwidth): b / d reduced by their gcd once, so the product fits in 64
 * bits more often and a power-of-two divisor (125 / 16 ps a byte at
 * 128 GB/s) is a shift. Exact: the same result as muldiv_ceil. */
struct muldiv_by {
        uint64_t b, d;               /* as given (for products past 64 bits) */
        uint64_t mul;                /* b / gcd(b, d) */
        uint64_t div;                /* d / gcd(b, d) */
        unsigned shift;              /* log2(div) when div is a power of two */
        int pow2;                    /* div is a power of two */
};

static inline struct muldiv_by muldiv_by_make(uint64_t b, uint64_t d)
{
        uint64_t x = b, y = d;
        while (y) {
                uint64_t r = x % y;
                x = y;
                y = r;
        }
        struct muldiv_by m = { .b = b, .d = d, .mul = x ? b / x : 0, .div = x ? d / x : 1 };
        m.pow2 = m.div && (m.div & (m.div - 1)) == 0;
        m.shift = m.pow2 ? (unsigned)__builtin_ctzll(m.div) : 0;
        return m;
}

/* ceil(a * m.b / m.d), saturating at UINT64_MAX (also when m.d is 0). */
static inline uint64_t muldiv_by_ceil(const struct muldiv_by *m, uint64_t a)
{
        uint64_t p;
        if (__builtin_expect(m->div == 0, 0))
                return UINT64_MAX;
        if (__builtin_expect(__builtin_mul_overflow(a, m->mul, &p), 0))
                return muldiv_ceil(a, m->b, m->d);
        if (m->pow2)
                return (p >> m->shift) + ((p & (m->div - 1)) != 0);
        return p / m->div + (p % m->div != 0);
}

#endif
