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

#endif
