/* base/fp.c: see fp.h. */
#include <string.h>

#include "base/fp.h"

uint32_t fp_f32_bits(float x)
{
        uint32_t u;
        memcpy(&u, &x, sizeof u);
        return u;
}

float fp_bits_f32(uint32_t u)
{
        float x;
        memcpy(&x, &u, sizeof x);
        return x;
}

uint16_t fp_f32_to_bf16(float x)
{
        uint32_t u = fp_f32_bits(x);
        if ((u & 0x7fffffffu) > 0x7f800000u) {
                /* NaN: keep sign and the payload's top bits; if those are all
                 * zero the result would read as infinity, so set the quiet bit. */
                uint16_t b = (uint16_t)(u >> 16);
                if (!(b & 0x7f))
                        b |= 0x40;
                return b;
        }
        /* Add just under half an ulp, plus one if the kept part is odd: ties
         * go to even. A carry into the exponent is the correct next binade;
         * from the largest finite value it gives infinity. */
        u += 0x7fffu + ((u >> 16) & 1);
        return (uint16_t)(u >> 16);
}

float fp_bf16_to_f32(uint16_t b)
{
        return fp_bits_f32((uint32_t)b << 16);
}

uint16_t fp_f32_to_f16(float x)
{
        uint32_t u = fp_f32_bits(x);
        uint16_t sign = (uint16_t)((u >> 16) & 0x8000);
        u &= 0x7fffffffu;
        if (u > 0x7f800000u) {
                uint16_t mant = (uint16_t)((u >> 13) & 0x3ff);
                return (uint16_t)(sign | 0x7c00 | (mant ? mant : 0x200));
        }
        /* 65520 is halfway between 65504 (the largest half) and 65536; the
         * tie goes to the even neighbour, 65536, which is infinity. */
        if (u >= 0x477ff000u)
                return (uint16_t)(sign | 0x7c00);
        if (u < 0x38800000u) {
                /* Below 2^-14: a half subnormal, m * 2^-24 with m < 1024. The
                 * f32 value is mant * 2^(e - 150), so m = mant >> (126 - e). */
                uint32_t e = u >> 23;
                if (e < 102)         /* below 2^-25, half the least subnormal */
                        return sign;
                uint32_t mant = (u & 0x7fffffu) | 0x800000u;
                uint32_t shift = 126 - e;        /* 14..24 */
                uint32_t q = mant >> shift;
                uint32_t rem = mant & ((1u << shift) - 1);
                uint32_t half = 1u << (shift - 1);
                if (rem > half || (rem == half && (q & 1)))
                        q++;         /* 0x3ff + 1 is the least normal, 0x400 */
                return (uint16_t)(sign | q);
        }
        uint32_t h = (u >> 13) - ((127u - 15u) << 10);
        uint32_t rem = u & 0x1fffu;
        if (rem > 0x1000u || (rem == 0x1000u && (h & 1)))
                h++;
        return (uint16_t)(sign | h);
}

float fp_f16_to_f32(uint16_t h)
{
        uint32_t sign = (uint32_t)(h & 0x8000) << 16;
        uint32_t exp = (h >> 10) & 0x1f;
        uint32_t mant = h & 0x3ff;
        if (exp == 0x1f)
                return fp_bits_f32(sign | 0x7f800000u | (mant << 13));
        if (exp != 0)
                return fp_bits_f32(sign | ((exp + 127 - 15) << 23) | (mant << 13));
        if (mant == 0)
                return fp_bits_f32(sign);
        /* Subnormal half: normalise mant * 2^-24 into an f32 normal. */
        uint32_t e = 127 - 15 + 1;
        while (!(mant & 0x400)) {
                mant <<= 1;
                e--;
        }
        return fp_bits_f32(sign | (e << 23) | ((mant & 0x3ff) << 13));
}
