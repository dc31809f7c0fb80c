/* tests/unit/test_muldiv.c: muldiv_ceil (base/muldiv.h) against a plain
 * 128-bit reference, on both sides of the 64-bit product boundary. */
#include <criterion/criterion.h>

#include <stdint.h>

#include "base/ckd.h"
#include "base/muldiv.h"

__extension__ typedef unsigned __int128 u128;

static uint64_t reference(uint64_t a, uint64_t b, uint64_t d)
{
        u128 q = ((u128)a * b + d - 1) / d;
        return q > UINT64_MAX ? UINT64_MAX : (uint64_t)q;
}

static uint64_t next(uint64_t *s)
{
        *s ^= *s << 13;
        *s ^= *s >> 7;
        *s ^= *s << 17;
        return *s;
}

Test(muldiv, exact_ceiling_on_edges)
{
        const uint64_t ps = 1000000000000ull;
        cr_assert_eq(muldiv_ceil(0, ps, 7), 0);
        cr_assert_eq(muldiv_ceil(1, ps, ps), 1);
        cr_assert_eq(muldiv_ceil(1, ps, ps + 1), 1);
        cr_assert_eq(muldiv_ceil(3, 1, 2), 2);
        cr_assert_eq(muldiv_ceil(4, 1, 2), 2);
        /* The largest product that fits in 64 bits, and the next one. */
        cr_assert_eq(muldiv_ceil(UINT64_MAX, 1, 3), UINT64_MAX / 3);
        cr_assert_eq(muldiv_ceil(UINT64_MAX / ps, ps, 7), reference(UINT64_MAX / ps, ps, 7));
        cr_assert_eq(muldiv_ceil(UINT64_MAX / ps + 1, ps, 7), reference(UINT64_MAX / ps + 1, ps, 7));
        /* Saturation. */
        cr_assert_eq(muldiv_ceil(UINT64_MAX, ps, 1), UINT64_MAX);
        cr_assert_eq(muldiv_ceil(UINT64_MAX, 2, 2), UINT64_MAX);
        cr_assert_eq(muldiv_ceil(UINT64_MAX, UINT64_MAX, UINT64_MAX), UINT64_MAX);
}

Test(muldiv, matches_128_bit_reference)
{
        uint64_t s = 0x9e3779b97f4a7c15ull;
        for (int i = 0; i < 200000; i++) {
                /* Mix magnitudes so both paths are taken often. */
                uint64_t a = next(&s) >> (next(&s) % 64);
                uint64_t b = (i & 1) ? 1000000000000ull : next(&s) >> (next(&s) % 64);
                uint64_t d = next(&s) >> (next(&s) % 64);
                if (d == 0)
                        d = 1;
                cr_assert_eq(muldiv_ceil(a, b, d), reference(a, b, d), "a=%llu b=%llu d=%llu",
                             (unsigned long long)a, (unsigned long long)b,
                             (unsigned long long)d);
        }
}

Test(muldiv, by_a_fixed_ratio_matches_the_reference)
{
        const uint64_t ps = 1000000000000ull;
        /* Bandwidths of the machines (power-of-two and other reduced
         * divisors), then random ones. */
        const uint64_t bws[] = { 128000000000ull, 51200000000ull, 64000000000ull,
                                 100000000000ull, 1536000000000ull, 273066666666ull,
                                 1500000000ull, 3, 1, ps, ps + 1, UINT64_MAX };
        uint64_t s = 0x2545f4914f6cdd1dull;
        for (int i = 0; i < 100000; i++) {
                uint64_t b = i % 3 ? ps : next(&s) >> (next(&s) % 64);
                uint64_t d = i < 12 * 64 ? bws[i % 12] : next(&s) >> (next(&s) % 64);
                if (d == 0)
                        d = 1;
                struct muldiv_by m = muldiv_by_make(b, d);
                uint64_t a = next(&s) >> (next(&s) % 64);
                cr_assert_eq(muldiv_by_ceil(&m, a), reference(a, b, d), "a=%llu b=%llu d=%llu",
                             (unsigned long long)a, (unsigned long long)b,
                             (unsigned long long)d);
        }
        struct muldiv_by z = muldiv_by_make(ps, 0);
        cr_assert_eq(muldiv_by_ceil(&z, 5), UINT64_MAX, "no rate: never");
        struct muldiv_by m = muldiv_by_make(ps, 128000000000ull);
        cr_assert(m.pow2);
        cr_assert_eq(m.mul, 125);
        cr_assert_eq(m.div, 16);
}

Test(muldiv, div_up_matches_the_plain_expression)
{
        uint64_t s = 0x853c49e6748fea9bull;
        for (int i = 0; i < 100000; i++) {
                uint64_t x = next(&s) >> (next(&s) % 64);
                /* Powers of two (the shift) and others (the division). */
                uint64_t q = i % 2 ? UINT64_C(1) << (next(&s) % 64) : next(&s) >> (next(&s) % 64);
                if (q == 0)
                        q = 3;
                cr_assert_eq(div_up(x, q), (x + q - 1) / q, "x=%llu q=%llu",
                             (unsigned long long)x, (unsigned long long)q);
        }
        cr_assert_eq(div_up(4097, 4096), 2);
        cr_assert_eq(div_up(4096, 4096), 1);
        cr_assert_eq(div_up(0, 64), 0);
        cr_assert_eq(div_up(100, 1), 100);
}

Test(ckd, checked_arithmetic_reports_overflow_and_saturates)
{
        uint64_t r, s = 0x9e3779b97f4a7c15u;
        for (int i = 0; i < 100000; i++) {
                uint64_t a = next(&s) >> (next(&s) & 63), b = next(&s) >> (next(&s) & 63);
                u128 p = (u128)a * b, q = (u128)a + b;
                cr_assert_eq(ckd_mul_u64(&r, a, b), p <= UINT64_MAX);
                cr_assert_eq(r, p <= UINT64_MAX ? (uint64_t)p : UINT64_MAX);
                cr_assert_eq(sat_mul_u64(a, b), r);
                cr_assert_eq(ckd_add_u64(&r, a, b), q <= UINT64_MAX);
                cr_assert_eq(r, q <= UINT64_MAX ? (uint64_t)q : UINT64_MAX);
                cr_assert_eq(sat_add_u64(a, b), r);
        }
        cr_assert(!ckd_muladd_u64(&r, UINT64_MAX / 2, 2, 2));
        cr_assert_eq(r, UINT64_MAX);
        cr_assert(ckd_muladd_u64(&r, 3, 5, 7));
        cr_assert_eq(r, 22);
        int64_t ok[] = { 4, 1 << 20, 3 }, neg[] = { 4, -1 }, big[] = { INT64_MAX, 4 };
        cr_assert(ckd_prod_i64(&r, ok, 3));
        cr_assert_eq(r, 12u << 20);
        cr_assert(ckd_prod_i64(&r, ok, 0));
        cr_assert_eq(r, 1);
        cr_assert(!ckd_prod_i64(&r, neg, 2));
        cr_assert(!ckd_prod_i64(&r, big, 2));
        cr_assert_eq(r, UINT64_MAX);
}
