/* tests/unit/test_npy.c: NumPy .npy files (base/npy.h) and the float16 /
 * bfloat16 conversions.
 *
 * - Conversions: every one of the 65536 float16 and bfloat16 bit patterns
 *   survives widening and narrowing (NaN stays NaN); hand-computed rounding
 *   cases (ties to even, subnormals, overflow); NumPy's own float32->float16
 *   results (tests/data/npy/f2_rounding_*.npy); and a sweep of float32 bit
 *   patterns against a float64 reference.
 * - Files: write/read round trips for each dtype and rank 0..4; the bytes we
 *   write equal NumPy's; files written by NumPy (tests/data/npy/, made by
 *   make_reference.py there) read back right, including 2.0/3.0 headers;
 *   every file in tests/bad/npy/ gives the messages its NAME.npy.expect
 *   states (one substring per line), through all three readers. */
#include <criterion/criterion.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/diag.h"
#include "base/fp.h"
#include "base/fsutil.h"
#include "base/npy.h"

/* ---- helpers ---- */

static const char *source_dir(void)
{
        const char *s = getenv("CUBESIM_SOURCE_DIR");
        return s && *s ? s : CUBESIM_SOURCE_DIR;
}

static void data_path(char *buf, size_t size, const char *name)
{
        snprintf(buf, size, "%s/tests/data/npy/%s", source_dir(), name);
}

static uint8_t *read_all(const char *path, size_t *len)
{
        char *buf;
        cr_assert_eq(fs_read_capped(path, 1u << 30, &buf, len, NULL), 0, "cannot read %s", path);
        return (uint8_t *)buf;
}

/* All of d's messages, one per line (caller frees). */
static char *messages(const struct diag *d)
{
        char *buf = NULL;
        size_t n = 0;
        FILE *m = open_memstream(&buf, &n);
        diag_print(d, m);
        fclose(m);
        return buf;
}

/* Same float, or both NaN. */
static bool same(float a, float b)
{
        return (isnan(a) && isnan(b)) || fp_f32_bits(a) == fp_f32_bits(b);
}

/* The data of the plain float32 reference files (see make_reference.py). */
static float ramp(uint64_t i)
{
        return (float)(((double)i - 7) * 0.375);
}

static char tmpdir[64];

static void make_tmpdir(void)
{
        snprintf(tmpdir, sizeof tmpdir, "/tmp/test_npy.XXXXXX");
        cr_assert(mkdtemp(tmpdir), "mkdtemp: %s", strerror(errno));
}

static void remove_tmpdir(void)
{
        DIR *dir = opendir(tmpdir);
        if (!dir)
                return;
        struct dirent *e;
        char path[512];
        while ((e = readdir(dir))) {
                if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
                        continue;
                snprintf(path, sizeof path, "%s/%s", tmpdir, e->d_name);
                if (unlink(path) < 0)
                        rmdir(path);
        }
        closedir(dir);
        rmdir(tmpdir);
}

static unsigned count_entries(const char *dirpath)
{
        DIR *dir = opendir(dirpath);
        cr_assert(dir);
        unsigned n = 0;
        struct dirent *e;
        while ((e = readdir(dir)))
                n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
        closedir(dir);
        return n;
}

static void read_ok(const char *path, struct npy_array *a)
{
        struct diag d;
        diag_init(&d);
        int rc = npy_read(path, a, &d);
        char *msg = messages(&d);
        cr_assert_eq(rc, 0, "%s: rc %d\n%s", path, rc, msg);
        cr_assert_eq(d.n_errors, 0);
        free(msg);
        diag_fini(&d);
}

static void read_data_ok(const char *name, struct npy_array *a)
{
        char path[512];
        data_path(path, sizeof path, name);
        read_ok(path, a);
}

/* ---- conversions ---- */

Test(conv, bf16_all_patterns_round_trip)
{
        for (uint32_t b = 0; b < 65536; b++) {
                float x = fp_bf16_to_f32((uint16_t)b);
                cr_assert_eq(fp_f32_bits(x), b << 16, "widening 0x%04x", b);
                uint16_t back = fp_f32_to_bf16(x);
                if (isnan(x))
                        cr_assert(isnan(fp_bf16_to_f32(back)), "NaN 0x%04x lost", b);
                cr_assert_eq(back, b, "0x%04x came back as 0x%04x", b, back);
        }
}

Test(conv, f16_all_patterns_round_trip)
{
        unsigned n_nan = 0;
        for (uint32_t h = 0; h < 65536; h++) {
                float x = fp_f16_to_f32((uint16_t)h);
                uint16_t back = fp_f32_to_f16(x);
                bool nan16 = (h & 0x7c00) == 0x7c00 && (h & 0x3ff);
                cr_assert_eq(isnan(x), nan16, "0x%04x: NaN-ness", h);
                if (nan16) {
                        n_nan++;
                        cr_assert((back & 0x7c00) == 0x7c00 && (back & 0x3ff),
                                  "NaN 0x%04x came back as 0x%04x", h, back);
                }
                cr_assert_eq(back, h, "0x%04x came back as 0x%04x", h, back);
        }
        cr_assert_eq(n_nan, 2 * 1023);
}

Test(conv, f16_widening_values)
{
        static const struct {
                uint16_t h;          /* half bits */
                uint32_t f;          /* the float32 it is, bits */
        } cases[] = {
                { 0x0000, 0x00000000 }, { 0x8000, 0x80000000 },
                { 0x3c00, 0x3f800000 },        /* 1 */
                { 0xc000, 0xc0000000 },        /* -2 */
                { 0x7bff, 0x477fe000 },        /* 65504 */
                { 0x0001, 0x33800000 },        /* 2^-24, least subnormal */
                { 0x0200, 0x38000000 },        /* 2^-15 */
                { 0x03ff, 0x387fc000 },        /* 1023 * 2^-24, greatest subnormal */
                { 0x0400, 0x38800000 },        /* 2^-14, least normal */
                { 0x3555, 0x3eaaa000 },        /* 0.333251953125 */
                { 0x7c00, 0x7f800000 }, { 0xfc00, 0xff800000 },
                { 0x7e00, 0x7fc00000 },        /* quiet NaN */
        };
        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
                cr_assert_eq(fp_f32_bits(fp_f16_to_f32(cases[i].h)), cases[i].f, "0x%04x",
                             cases[i].h);
}

/* Narrowing, computed by hand: float32 bits in, half / bfloat16 bits out. */
struct narrow_case {
        uint32_t in;                 /* float32 bits */
        uint16_t out;                /* expected result bits */
};

Test(conv, bf16_rounding_by_hand)
{
        static const struct narrow_case cases[] = {
                { 0x3f800000, 0x3f80 },        /* 1 */
                { 0x3f808000, 0x3f80 },        /* 1 + 2^-8: tie, down to even */
                { 0x3f818000, 0x3f82 },        /* 1 + 3*2^-8: tie, up to even */
                { 0x3f808001, 0x3f81 },        /* just above the tie */
                { 0x3f80ffff, 0x3f81 },
                { 0x3dcccccd, 0x3dcd },        /* 0.1f */
                { 0xbdcccccd, 0xbdcd },        /* -0.1f */
                { 0x7f7f7fff, 0x7f7f },        /* just under a tie: largest finite */
                { 0x7f7f8000, 0x7f80 },        /* tie, to even: infinity */
                { 0x7f7fffff, 0x7f80 },        /* FLT_MAX overflows */
                { 0xff7f8000, 0xff80 },
                { 0x7f800000, 0x7f80 }, { 0xff800000, 0xff80 },
                { 0x80000000, 0x8000 },
                { 0x00000001, 0x0000 },        /* float32 subnormals */
                { 0x00008000, 0x0000 },        /* tie, to even 0 */
                { 0x00008001, 0x0001 },
                { 0x00018000, 0x0002 },        /* tie, to even 2 */
                { 0x007fffff, 0x0080 },        /* up to the least normal */
                { 0x7fc00000, 0x7fc0 },        /* quiet NaN */
                { 0x7fa00000, 0x7fa0 },        /* NaN payload kept */
                { 0x7f800001, 0x7fc0 },        /* payload below bf16: quiet bit set */
                { 0xff800001, 0xffc0 },
        };
        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
                uint16_t got = fp_f32_to_bf16(fp_bits_f32(cases[i].in));
                cr_assert_eq(got, cases[i].out, "0x%08x -> 0x%04x, expected 0x%04x",
                             cases[i].in, got, cases[i].out);
        }
}

Test(conv, f16_rounding_by_hand)
{
        static const struct narrow_case cases[] = {
                { 0x3f800000, 0x3c00 },        /* 1 */
                { 0x3f801000, 0x3c00 },        /* 1 + 2^-11: tie, down to even */
                { 0x3f803000, 0x3c02 },        /* 1 + 3*2^-11: tie, up to even */
                { 0x3f801001, 0x3c01 },
                { 0x3dcccccd, 0x2e66 },        /* 0.1f */
                { 0x477fe000, 0x7bff },        /* 65504, largest half */
                { 0x477fefff, 0x7bff },        /* just under the tie */
                { 0x477ff000, 0x7c00 },        /* 65520: tie, to even: infinity */
                { 0xc77ff000, 0xfc00 },
                { 0x7f7fffff, 0x7c00 },        /* FLT_MAX overflows */
                { 0x7f800000, 0x7c00 }, { 0xff800000, 0xfc00 },
                { 0x80000000, 0x8000 },
                { 0x33800000, 0x0001 },        /* 2^-24, least subnormal */
                { 0xb3800000, 0x8001 },
                { 0x33000000, 0x0000 },        /* 2^-25: tie, to even 0 */
                { 0x33000001, 0x0001 },        /* just above */
                { 0x33400000, 0x0001 },        /* 0.75 * 2^-24 */
                { 0x33c00000, 0x0002 },        /* 1.5 * 2^-24: tie, up to even */
                { 0x38000000, 0x0200 },        /* 2^-15 */
                { 0x387fc000, 0x03ff },        /* greatest subnormal */
                { 0x387fe000, 0x0400 },        /* 1023.5 * 2^-24: tie, to least normal */
                { 0x38800000, 0x0400 },        /* 2^-14 */
                { 0x2edbe6ff, 0x0000 },        /* 1e-10 */
                { 0x00000001, 0x0000 },        /* float32 subnormal */
                { 0x7fc00000, 0x7e00 },        /* quiet NaN */
                { 0xffc00000, 0xfe00 },
                { 0x7fa00000, 0x7d00 },        /* NaN payload kept */
                { 0x7f800001, 0x7e00 },        /* payload below half: quiet bit set */
        };
        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
                uint16_t got = fp_f32_to_f16(fp_bits_f32(cases[i].in));
                cr_assert_eq(got, cases[i].out, "0x%08x -> 0x%04x, expected 0x%04x",
                             cases[i].in, got, cases[i].out);
        }
}

/* What x rounds to, to nearest even, in a binary format with mant_bits
 * stored mantissa bits, least normal exponent min_exp and largest finite
 * value max_finite; computed in float64, where every step is exact. */
static float reference_round(float x, int mant_bits, int min_exp, double max_finite)
{
        if (isnan(x) || isinf(x) || x == 0)
                return x;
        double a = fabs((double)x);
        int e = ilogb(a);
        if (e < min_exp)
                e = min_exp;
        double ulp = ldexp(1.0, e - mant_bits);
        double v = nearbyint(a / ulp) * ulp;
        if (v > max_finite)
                return x < 0 ? -INFINITY : INFINITY;
        return (float)copysign(v, (double)x);
}

Test(conv, sweep_against_float64_reference)
{
        const double bf16_max = ldexp(255.0, 120);      /* 0x7f7f */
        for (uint64_t u = 0; u < ((uint64_t)1 << 32); u += 4099) {
                float x = fp_bits_f32((uint32_t)u);
                float h = fp_f16_to_f32(fp_f32_to_f16(x));
                float want = reference_round(x, 10, -14, 65504.0);
                cr_assert(same(h, want), "f16: 0x%08x gave 0x%08x, expected 0x%08x",
                          (uint32_t)u, fp_f32_bits(h), fp_f32_bits(want));
                float b = fp_bf16_to_f32(fp_f32_to_bf16(x));
                want = reference_round(x, 7, -126, bf16_max);
                cr_assert(same(b, want), "bf16: 0x%08x gave 0x%08x, expected 0x%08x",
                          (uint32_t)u, fp_f32_bits(b), fp_f32_bits(want));
        }
}

Test(conv, f16_matches_numpy)
{
        struct npy_array in, out;
        read_data_ok("f2_rounding_in.npy", &in);
        read_data_ok("f2_rounding_out.npy", &out);
        cr_assert_eq(in.dtype, NPY_F32);
        cr_assert_eq(out.dtype, NPY_F16);
        cr_assert_eq(in.count, out.count);
        cr_assert_gt(in.count, 3000);
        for (uint64_t i = 0; i < in.count; i++) {
                float got = fp_f16_to_f32(fp_f32_to_f16(in.data[i]));
                cr_assert(same(got, out.data[i]), "element %llu: 0x%08x -> 0x%08x, NumPy 0x%08x",
                          (unsigned long long)i, fp_f32_bits(in.data[i]), fp_f32_bits(got),
                          fp_f32_bits(out.data[i]));
        }
        npy_free(&in);
        npy_free(&out);
}

/* ---- reading NumPy's files ---- */

static void assert_ramp(const struct npy_array *a, int ndim, const int64_t *shape)
{
        cr_assert_eq(a->ndim, ndim);
        uint64_t count = 1;
        for (int i = 0; i < ndim; i++) {
                cr_assert_eq(a->shape[i], shape[i], "axis %d", i);
                count *= (uint64_t)shape[i];
        }
        cr_assert_eq(a->count, count);
        cr_assert_not_null(a->data);
        for (uint64_t i = 0; i < count; i++)
                cr_assert_eq(fp_f32_bits(a->data[i]), fp_f32_bits(ramp(i)), "element %llu",
                             (unsigned long long)i);
}

Test(read, numpy_float32_every_rank)
{
        static const struct {
                const char *name;    /* file in tests/data/npy */
                int ndim;            /* its rank */
                int64_t shape[4];    /* its shape */
        } files[] = {
                { "f4_scalar.npy", 0, { 0 } },
                { "f4_5.npy", 1, { 5 } },
                { "f4_2x3.npy", 2, { 2, 3 } },
                { "f4_2x3x4.npy", 3, { 2, 3, 4 } },
                { "f4_2x1x3x2.npy", 4, { 2, 1, 3, 2 } },
                { "f4_0x3.npy", 2, { 0, 3 } },
                { "f4_2x3_v2.npy", 2, { 2, 3 } },          /* format 2.0 */
                { "f4_2x3_v3.npy", 2, { 2, 3 } },          /* format 3.0 */
                { "f4_2x3_reordered.npy", 2, { 2, 3 } },   /* "shape" first, no comma */
                { "f4_2x3_py2.npy", 2, { 2L, 3L } },       /* (2L, 3L) */
        };
        for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
                struct npy_array a;
                read_data_ok(files[i].name, &a);
                cr_assert_eq(a.dtype, NPY_F32, "%s", files[i].name);
                assert_ramp(&a, files[i].ndim, files[i].shape);
                npy_free(&a);
                cr_assert_null(a.data);
        }
}

Test(read, numpy_version_bytes)
{
        char path[512];
        size_t len;
        data_path(path, sizeof path, "f4_2x3_v2.npy");
        uint8_t *v2 = read_all(path, &len);
        cr_assert_eq(v2[6], 2, "the 2.0 reference is not format 2.0");
        free(v2);
        data_path(path, sizeof path, "f4_2x3_v3.npy");
        uint8_t *v3 = read_all(path, &len);
        cr_assert_eq(v3[6], 3);
        free(v3);
}

Test(read, numpy_bfloat16)
{
        static const int64_t shape4[] = { 4, 4 }, shape2[] = { 2, 2 };
        struct npy_array a;
        read_data_ok("u2_bf16_4x4.npy", &a);
        cr_assert_eq(a.dtype, NPY_BF16);
        assert_ramp(&a, 2, shape4);
        npy_free(&a);
        read_data_ok("bf16_named_2x2.npy", &a);
        cr_assert_eq(a.dtype, NPY_BF16);
        assert_ramp(&a, 2, shape2);
        npy_free(&a);
}

static void assert_same_data(const char *name, const char *ref_name, enum npy_dtype dtype)
{
        struct npy_array a, ref;
        read_data_ok(name, &a);
        read_data_ok(ref_name, &ref);
        cr_assert_eq(a.dtype, dtype);
        cr_assert_eq(ref.dtype, NPY_F32);
        cr_assert_eq(a.ndim, ref.ndim);
        cr_assert_eq(a.count, ref.count);
        for (int i = 0; i < a.ndim; i++)
                cr_assert_eq(a.shape[i], ref.shape[i]);
        for (uint64_t i = 0; i < a.count; i++)
                cr_assert(same(a.data[i], ref.data[i]), "%s element %llu: 0x%08x, NumPy 0x%08x",
                          name, (unsigned long long)i, fp_f32_bits(a.data[i]),
                          fp_f32_bits(ref.data[i]));
        npy_free(&a);
        npy_free(&ref);
}

Test(read, numpy_float16)
{
        assert_same_data("f2_5x7.npy", "f2_5x7_as_f4.npy", NPY_F16);
}

Test(read, numpy_float64_narrowed_like_numpy)
{
        assert_same_data("f8_mixed.npy", "f8_mixed_as_f4.npy", NPY_F64);
        struct npy_array a;
        read_data_ok("f8_mixed.npy", &a);
        cr_assert(isinf(a.data[3]) && a.data[3] > 0, "1e300 must overflow to +inf");
        cr_assert_eq(fp_f32_bits(a.data[10]), 0x7f800000u, "FLT_MAX + ulp/2 ties to infinity");
        cr_assert_eq(fp_f32_bits(a.data[9]), 0x7f7fffffu, "just under the tie stays FLT_MAX");
        npy_free(&a);
}

Test(read, parse_in_memory_equals_read)
{
        char path[512];
        size_t len;
        data_path(path, sizeof path, "f4_2x3x4.npy");
        uint8_t *buf = read_all(path, &len);
        struct npy_array a, b;
        struct diag d;
        diag_init(&d);
        cr_assert_eq(npy_parse("mem", buf, len, &a, &d), 0);
        read_ok(path, &b);
        cr_assert_eq(a.count, b.count);
        cr_assert_eq(memcmp(a.data, b.data, a.count * sizeof(float)), 0);
        cr_assert_eq(memcmp(a.shape, b.shape, sizeof a.shape), 0);
        npy_free(&a);
        npy_free(&b);
        free(buf);
        diag_fini(&d);
}

Test(read, header_only)
{
        char path[512];
        data_path(path, sizeof path, "f4_2x3x4.npy");
        struct npy_array a;
        struct diag d;
        diag_init(&d);
        cr_assert_eq(npy_read_header(path, &a, &d), 0);
        cr_assert_eq(a.ndim, 3);
        cr_assert_eq(a.shape[2], 4);
        cr_assert_eq(a.count, 24);
        cr_assert_null(a.data);
        diag_fini(&d);
}

/* A file in memory: a version 1.0 or 2.0 preamble, text padded with
 * spaces to header_len bytes ('\n' last), then payload. */
static uint8_t *build(int version, const char *text, size_t header_len, const void *payload,
                      size_t payload_len, size_t *len)
{
        size_t pre = version == 1 ? 10 : 12;
        *len = pre + header_len + payload_len;
        uint8_t *buf = malloc(*len);
        memcpy(buf, "\x93NUMPY", 6);
        buf[6] = (uint8_t)version;
        buf[7] = 0;
        for (int i = 0; i < (version == 1 ? 2 : 4); i++)
                buf[8 + i] = (uint8_t)(header_len >> (8 * i));
        memset(buf + pre, ' ', header_len);
        memcpy(buf + pre, text, strlen(text));
        buf[pre + header_len - 1] = '\n';
        if (payload_len)
                memcpy(buf + pre + header_len, payload, payload_len);
        return buf;
}

static int parse_text(const char *text, int version, size_t header_len, size_t payload_len,
                      struct npy_array *a, char **msg)
{
        uint8_t *payload = calloc(1, payload_len + 1);
        size_t len;
        uint8_t *buf = build(version, text, header_len ? header_len : strlen(text) + 1, payload,
                             payload_len, &len);
        struct diag d;
        diag_init(&d);
        int rc = npy_parse("mem.npy", buf, len, a, &d);
        *msg = messages(&d);
        cr_assert_eq(rc == 0, d.n_errors == 0, "rc %d but %u errors", rc, d.n_errors);
        diag_fini(&d);
        free(buf);
        free(payload);
        return rc;
}

Test(read, header_spelling_python_accepts)
{
        static const char *const ok[] = {
                "{'descr':'<f4','fortran_order':False,'shape':(2,3)}",
                "  { 'shape' : ( 2 , 3 , ) ,\t'descr' : \"<f4\" , 'fortran_order' : False , }",
                "{\n'descr': '<f4',\n'fortran_order': False,\n'shape': (2, 3)\n}\r\n",
                "{'fortran_order': False, 'shape': (2L, 3), 'descr': '<f4'}",
        };
        for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
                struct npy_array a;
                char *msg;
                cr_assert_eq(parse_text(ok[i], 1, 0, 24, &a, &msg), 0, "%s\n%s", ok[i], msg);
                cr_assert_eq(a.ndim, 2);
                cr_assert_eq(a.shape[0], 2);
                cr_assert_eq(a.shape[1], 3);
                free(msg);
                npy_free(&a);
        }
        struct npy_array a;
        char *msg;
        cr_assert_eq(parse_text("{'descr': '<f2', 'fortran_order': False, 'shape': (), }", 1, 0,
                                2, &a, &msg), 0, "%s", msg);
        cr_assert_eq(a.ndim, 0);
        cr_assert_eq(a.count, 1);
        free(msg);
        npy_free(&a);
}

Test(read, header_length_limit)
{
        const char *text = "{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }";
        struct npy_array a;
        char *msg;
        cr_assert_eq(parse_text(text, 2, NPY_MAX_HEADER_BYTES, 4, &a, &msg), 0, "%s", msg);
        free(msg);
        npy_free(&a);
        cr_assert_neq(parse_text(text, 2, NPY_MAX_HEADER_BYTES + 1, 4, &a, &msg), 0);
        cr_assert(strstr(msg, "mem.npy: error: header length 10001 exceeds the limit of 10000 "
                          "bytes"), "%s", msg);
        free(msg);
}

Test(read, every_problem_in_the_header_reported)
{
        struct npy_array a;
        char *msg;
        cr_assert_neq(parse_text("{'descr': '>f8', 'fortran_order': True, 'shape': (-2, 3), }",
                                 1, 0, 0, &a, &msg), 0);
        cr_assert(strstr(msg, "header column 11: big-endian dtype '>f8'"), "%s", msg);
        cr_assert(strstr(msg, "header column 35: Fortran order"), "%s", msg);
        cr_assert(strstr(msg, "header column 51: negative extent -2"), "%s", msg);
        cr_assert_null(a.data);
        cr_assert_eq(a.ndim, 0);
        free(msg);
}

/* A float64 file larger than the read chunk, whose payload does not start
 * on an element boundary within the first read: exercises the carry. */
Test(read, large_float64_streams)
{
        enum { N = 20001 };
        double *v = malloc(N * sizeof *v);
        for (int i = 0; i < N; i++)
                v[i] = i * 0.5 - 1000.25;
        size_t len;
        uint8_t *buf = build(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (20001,), }",
                             118, v, N * sizeof *v, &len);
        make_tmpdir();
        char path[512];
        snprintf(path, sizeof path, "%s/big.npy", tmpdir);
        FILE *f = fopen(path, "wb");
        cr_assert_eq(fwrite(buf, 1, len, f), len);
        fclose(f);
        struct npy_array a;
        read_ok(path, &a);
        cr_assert_eq(a.count, N);
        for (int i = 0; i < N; i++)
                cr_assert_eq(a.data[i], (float)v[i], "element %d", i);
        npy_free(&a);
        remove_tmpdir();
        free(buf);
        free(v);
}

/* A pipe has no size to check up front: the streaming checks must do. */
static void read_from_fifo(const uint8_t *buf, size_t len, bool header_only, int *rc,
                           char **msg, struct npy_array *a)
{
        char path[512];
        snprintf(path, sizeof path, "%s/fifo.npy", tmpdir);
        unlink(path);
        cr_assert_eq(mkfifo(path, 0600), 0);
        pid_t pid = fork();
        cr_assert_neq(pid, -1);
        if (pid == 0) {
                int fd = open(path, O_WRONLY);
                size_t off = 0;
                while (fd >= 0 && off < len) {
                        ssize_t w = write(fd, buf + off, len - off);
                        if (w <= 0)
                                break;
                        off += (size_t)w;
                }
                _exit(0);
        }
        struct diag d;
        diag_init(&d);
        *rc = header_only ? npy_read_header(path, a, &d) : npy_read(path, a, &d);
        *msg = messages(&d);
        diag_fini(&d);
        int status;
        waitpid(pid, &status, 0);
}

Test(read, from_a_pipe)
{
        char path[512];
        size_t len;
        data_path(path, sizeof path, "f4_2x3.npy");
        uint8_t *good = read_all(path, &len);
        uint8_t *longer = malloc(len + 3);
        memcpy(longer, good, len);
        memset(longer + len, 0, 3);
        make_tmpdir();
        static const int64_t shape[] = { 2, 3 };
        struct npy_array a;
        int rc;
        char *msg;

        read_from_fifo(good, len, false, &rc, &msg, &a);
        cr_assert_eq(rc, 0, "%s", msg);
        assert_ramp(&a, 2, shape);
        npy_free(&a);
        free(msg);

        read_from_fifo(good, len, true, &rc, &msg, &a);
        cr_assert_eq(rc, 0, "%s", msg);
        cr_assert_null(a.data);
        free(msg);

        read_from_fifo(good, len - 5, false, &rc, &msg, &a);
        cr_assert_neq(rc, 0);
        cr_assert(strstr(msg, "truncated: 19 bytes of data, expected 24"), "%s", msg);
        free(msg);

        read_from_fifo(longer, len + 3, false, &rc, &msg, &a);
        cr_assert_neq(rc, 0);
        cr_assert(strstr(msg, "trailing garbage: 27 bytes of data, expected 24"), "%s", msg);
        cr_assert_null(a.data);
        free(msg);

        read_from_fifo(longer, len + 3, true, &rc, &msg, &a);
        cr_assert_neq(rc, 0);
        cr_assert(strstr(msg, "trailing garbage"), "%s", msg);
        free(msg);

        remove_tmpdir();
        free(good);
        free(longer);
}

Test(read, directory_is_an_error)
{
        make_tmpdir();
        struct npy_array a;
        struct diag d;
        diag_init(&d);
        cr_assert_lt(npy_read(tmpdir, &a, &d), 0);
        char *msg = messages(&d);
        cr_assert(strstr(msg, ": error: is a directory"), "%s", msg);
        free(msg);
        diag_fini(&d);
        remove_tmpdir();
}

/* ---- the bad-input corpus ---- */

/* Check messages against every line of the .expect file at spec. */
static void assert_expected(const char *what, const char *msg, const char *spec)
{
        FILE *f = fopen(spec, "r");
        cr_assert(f, "cannot open %s", spec);
        char line[1024];
        unsigned n = 0;
        while (fgets(line, sizeof line, f)) {
                line[strcspn(line, "\n")] = '\0';
                if (!line[0])
                        continue;
                n++;
                cr_assert(strstr(msg, line), "%s: expected the message\n  %s\ngot\n%s", what,
                          line, msg);
        }
        fclose(f);
        cr_assert_gt(n, 0, "%s states no expected message", spec);
}

/* Every reader must refuse path, saying what spec expects. */
static void check_bad(const char *path, const char *spec, bool exists)
{
        struct npy_array a;
        struct diag d;
        diag_init(&d);
        int rc = npy_read(path, &a, &d);
        char *msg = messages(&d);
        cr_assert_lt(rc, 0, "npy_read accepted %s", path);
        cr_assert_geq(d.n_errors, 1);
        cr_assert_null(a.data);
        assert_expected("npy_read", msg, spec);
        free(msg);
        diag_fini(&d);

        diag_init(&d);
        rc = npy_read_header(path, &a, &d);
        msg = messages(&d);
        cr_assert_lt(rc, 0, "npy_read_header accepted %s", path);
        assert_expected("npy_read_header", msg, spec);
        free(msg);
        diag_fini(&d);

        if (!exists)
                return;
        size_t len;
        uint8_t *buf = read_all(path, &len);
        diag_init(&d);
        rc = npy_parse(path, buf, len, &a, &d);
        msg = messages(&d);
        cr_assert_eq(rc, -EINVAL, "npy_parse: rc %d for %s", rc, path);
        cr_assert_null(a.data);
        assert_expected("npy_parse", msg, spec);
        free(msg);
        diag_fini(&d);
        free(buf);
}

static bool ends_with(const char *s, const char *suffix)
{
        size_t n = strlen(s), m = strlen(suffix);
        return n >= m && strcmp(s + n - m, suffix) == 0;
}

Test(bad, every_file_gives_its_message)
{
        char dirpath[512], path[1024], spec[1100];
        snprintf(dirpath, sizeof dirpath, "%s/tests/bad/npy", source_dir());
        DIR *dir = opendir(dirpath);
        cr_assert(dir, "cannot open %s", dirpath);
        unsigned n_cases = 0;
        struct dirent *e;
        while ((e = readdir(dir))) {
                bool is_npy = ends_with(e->d_name, ".npy");
                bool is_spec = ends_with(e->d_name, ".npy.expect");
                if (!is_npy && !is_spec)
                        continue;
                snprintf(path, sizeof path, "%s/%.*s", dirpath,
                         (int)(strlen(e->d_name) - (is_spec ? 7 : 0)), e->d_name);
                snprintf(spec, sizeof spec, "%s.expect", path);
                bool exists = access(path, F_OK) == 0;
                if (is_npy) {
                        cr_assert_eq(access(spec, F_OK), 0, "%s has no .expect", path);
                } else if (exists) {
                        continue;    /* checked with its .npy */
                }
                check_bad(path, spec, exists);
                n_cases++;
        }
        closedir(dir);
        cr_assert_geq(n_cases, 40, "only %u bad cases found in %s", n_cases, dirpath);
}

/* ---- writing ---- */

static float sample(uint64_t i)
{
        static const float special[] = { 0.0f, -0.0f, 1.0f, INFINITY, -INFINITY, NAN,
                                         70000.0f, 1e-6f, 1e-40f, 0.1f };
        if (i < sizeof special / sizeof special[0])
                return special[i];
        return sinf((float)i * 1.3f) * 300.0f;
}

static float narrowed(enum npy_dtype t, float x)
{
        if (t == NPY_F16)
                return fp_f16_to_f32(fp_f32_to_f16(x));
        if (t == NPY_BF16)
                return fp_bf16_to_f32(fp_f32_to_bf16(x));
        return x;
}

Test(write, round_trip_each_dtype_and_rank)
{
        static const int64_t shapes[][4] = {
                { 0 }, { 13 }, { 3, 5 }, { 2, 3, 4 }, { 2, 1, 3, 5 },
        };
        static const enum npy_dtype dtypes[] = { NPY_F32, NPY_F16, NPY_BF16 };
        make_tmpdir();
        char path[512];
        snprintf(path, sizeof path, "%s/x.npy", tmpdir);
        float data[64];
        for (int i = 0; i < 64; i++)
                data[i] = sample((uint64_t)i);
        for (size_t t = 0; t < 3; t++) {
                for (int ndim = 0; ndim <= 4; ndim++) {
                        enum npy_dtype dt = dtypes[t];
                        struct diag d;
                        diag_init(&d);
                        cr_assert_eq(npy_write(path, dt, ndim, shapes[ndim], data, &d), 0);
                        diag_fini(&d);
                        cr_assert_eq(count_entries(tmpdir), 1, "a temporary file was left");

                        struct npy_array a;
                        read_ok(path, &a);
                        cr_assert_eq(a.dtype, dt);
                        cr_assert_eq(a.ndim, ndim);
                        uint64_t count = 1;
                        for (int i = 0; i < ndim; i++) {
                                cr_assert_eq(a.shape[i], shapes[ndim][i]);
                                count *= (uint64_t)shapes[ndim][i];
                        }
                        cr_assert_eq(a.count, count);
                        for (uint64_t i = 0; i < count; i++)
                                cr_assert(same(a.data[i], narrowed(dt, data[i])),
                                          "%s ndim %d element %llu: 0x%08x, expected 0x%08x",
                                          npy_dtype_name(dt), ndim, (unsigned long long)i,
                                          fp_f32_bits(a.data[i]),
                                          fp_f32_bits(narrowed(dt, data[i])));
                        npy_free(&a);

                        /* NumPy's layout: 1.0 header padded to 64 bytes, '\n' last. */
                        size_t len;
                        uint8_t *buf = read_all(path, &len);
                        size_t hlen = (size_t)(buf[8] | buf[9] << 8);
                        cr_assert_eq(memcmp(buf, "\x93NUMPY\x01\x00", 8), 0);
                        cr_assert_eq((10 + hlen) % 64, 0);
                        cr_assert_eq(buf[10 + hlen - 1], '\n');
                        cr_assert_eq(len, 10 + hlen + count * npy_dtype_size(dt));
                        free(buf);
                }
        }
        remove_tmpdir();
}

Test(write, bytes_equal_numpy)
{
        static const struct {
                const char *name;    /* NumPy's file of ramp() */
                enum npy_dtype dtype;        /* to write it as */
                int ndim;            /* its rank */
                int64_t shape[4];    /* its shape */
        } files[] = {
                { "f4_scalar.npy", NPY_F32, 0, { 0 } },
                { "f4_5.npy", NPY_F32, 1, { 5 } },
                { "f4_2x3.npy", NPY_F32, 2, { 2, 3 } },
                { "f4_2x3x4.npy", NPY_F32, 3, { 2, 3, 4 } },
                { "f4_2x1x3x2.npy", NPY_F32, 4, { 2, 1, 3, 2 } },
                { "f4_0x3.npy", NPY_F32, 2, { 0, 3 } },
                { "u2_bf16_4x4.npy", NPY_BF16, 2, { 4, 4 } },
        };
        make_tmpdir();
        char path[512], ref[512];
        snprintf(path, sizeof path, "%s/x.npy", tmpdir);
        float data[64];
        for (int i = 0; i < 64; i++)
                data[i] = ramp((uint64_t)i);
        for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
                struct diag d;
                diag_init(&d);
                cr_assert_eq(npy_write(path, files[i].dtype, files[i].ndim, files[i].shape, data,
                                       &d), 0);
                diag_fini(&d);
                size_t n_ours, n_ref;
                uint8_t *ours = read_all(path, &n_ours);
                data_path(ref, sizeof ref, files[i].name);
                uint8_t *theirs = read_all(ref, &n_ref);
                cr_assert_eq(n_ours, n_ref, "%s: %zu bytes, NumPy wrote %zu", files[i].name,
                             n_ours, n_ref);
                cr_assert_eq(memcmp(ours, theirs, n_ref), 0, "%s differs from NumPy's",
                             files[i].name);
                free(ours);
                free(theirs);
        }

        /* float16: NumPy's narrowed values, written again, give its bytes. */
        struct npy_array a;
        read_data_ok("f2_5x7_as_f4.npy", &a);
        struct diag d;
        diag_init(&d);
        cr_assert_eq(npy_write(path, NPY_F16, a.ndim, a.shape, a.data, &d), 0);
        diag_fini(&d);
        size_t n_ours, n_ref;
        uint8_t *ours = read_all(path, &n_ours);
        data_path(ref, sizeof ref, "f2_5x7.npy");
        uint8_t *theirs = read_all(ref, &n_ref);
        cr_assert_eq(n_ours, n_ref);
        cr_assert_eq(memcmp(ours, theirs, n_ref), 0, "f2_5x7.npy differs from NumPy's");
        free(ours);
        free(theirs);
        npy_free(&a);
        remove_tmpdir();
}

Test(write, larger_than_a_chunk)
{
        enum { N = 100003 };
        float *v = malloc(N * sizeof *v);
        for (int i = 0; i < N; i++)
                v[i] = sample((uint64_t)i);
        make_tmpdir();
        char path[512];
        snprintf(path, sizeof path, "%s/big.npy", tmpdir);
        static const int64_t shape[] = { N };
        for (int t = 0; t < 3; t++) {
                enum npy_dtype dt = t == 0 ? NPY_F32 : t == 1 ? NPY_F16 : NPY_BF16;
                struct diag d;
                diag_init(&d);
                cr_assert_eq(npy_write(path, dt, 1, shape, v, &d), 0);
                diag_fini(&d);
                struct npy_array a;
                read_ok(path, &a);
                for (int i = 0; i < N; i++)
                        cr_assert(same(a.data[i], narrowed(dt, v[i])), "element %d", i);
                npy_free(&a);
        }
        remove_tmpdir();
        free(v);
}

Test(write, replaces_atomically_and_failure_keeps_the_old_file)
{
        make_tmpdir();
        char path[512], tmp[600];
        snprintf(path, sizeof path, "%s/x.npy", tmpdir);
        static const int64_t shape[] = { 3 };
        const float one[] = { 1, 2, 3 }, two[] = { 4, 5, 6 };
        struct diag d;
        diag_init(&d);
        cr_assert_eq(npy_write(path, NPY_F32, 1, shape, one, &d), 0);
        cr_assert_eq(npy_write(path, NPY_F32, 1, shape, two, &d), 0);
        struct npy_array a;
        read_ok(path, &a);
        cr_assert_eq(a.data[0], 4);
        npy_free(&a);

        /* A write that fails halfway (the file size limit, as a full disk
         * would) reports it and leaves the old file whole. */
        struct rlimit old_lim, small = { .rlim_cur = 64, .rlim_max = RLIM_INFINITY };
        cr_assert_eq(getrlimit(RLIMIT_FSIZE, &old_lim), 0);
        small.rlim_max = old_lim.rlim_max;
        void (*old_sig)(int) = signal(SIGXFSZ, SIG_IGN);
        cr_assert_eq(setrlimit(RLIMIT_FSIZE, &small), 0);
        int rc = npy_write(path, NPY_F32, 1, shape, one, &d);
        setrlimit(RLIMIT_FSIZE, &old_lim);
        signal(SIGXFSZ, old_sig);
        cr_assert_lt(rc, 0);
        char *msg = messages(&d);
        cr_assert(strstr(msg, "x.npy: error: cannot write: File too large"), "%s", msg);
        free(msg);
        read_ok(path, &a);
        cr_assert_eq(a.data[0], 4, "a failed write changed the file");
        npy_free(&a);

        /* A symlink planted at the old predictable temporary name, and one
         * at the target: neither is written through. */
        snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());
        char victim[600];
        snprintf(victim, sizeof victim, "%s/victim", tmpdir);
        FILE *vf = fopen(victim, "w");
        cr_assert_not_null(vf);
        fputs("keep", vf);
        fclose(vf);
        cr_assert_eq(symlink(victim, tmp), 0);
        cr_assert_eq(npy_write(path, NPY_F32, 1, shape, one, &d), 0);
        unlink(tmp);
        unlink(path);
        cr_assert_eq(symlink(victim, path), 0);
        cr_assert_eq(npy_write(path, NPY_F32, 1, shape, one, &d), 0);
        struct stat st;
        cr_assert_eq(lstat(path, &st), 0);
        cr_assert(S_ISREG(st.st_mode), "the symlink at the target was written through");
        read_ok(path, &a);
        cr_assert_eq(a.data[0], 1);
        npy_free(&a);
        char got[8] = "";
        vf = fopen(victim, "r");
        cr_assert_not_null(vf);
        cr_assert_not_null(fgets(got, sizeof got, vf));
        fclose(vf);
        cr_assert_str_eq(got, "keep", "a planted symlink was followed");
        unlink(victim);
        cr_assert_eq(count_entries(tmpdir), 1);
        diag_fini(&d);
        remove_tmpdir();
}

Test(write, refuses_bad_arguments)
{
        make_tmpdir();
        char path[512];
        snprintf(path, sizeof path, "%s/x.npy", tmpdir);
        static const int64_t neg[] = { 2, -1 }, five[] = { 1, 1, 1, 1, 1 };
        static const int64_t huge[] = { 1, ((int64_t)1 << 30) + 1 };   /* 4 GiB + 4 bytes */
        static const int64_t huger[] = { (int64_t)1 << 40, (int64_t)1 << 40, 1 << 20, 0 };
        const float v[2] = { 0, 0 };
        static const struct {
                enum npy_dtype dtype;        /* npy_write's arguments */
                int ndim;            /* rank */
                const int64_t *shape;        /* extents */
                const char *want;    /* message substring */
        } cases[] = {
                { NPY_F64, 1, neg, "cannot write float64" },
                { NPY_F32, 5, five, "cannot write 5 dimensions" },
                { NPY_F32, 2, neg, "cannot write: negative extent -1 at axis 1" },
                { NPY_F32, 2, huge, "cannot write: the array is over the 4 GiB limit" },
                { NPY_F16, 4, huger, "cannot write: the array is over the 4 GiB limit" },
        };
        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
                struct diag d;
                diag_init(&d);
                cr_assert_eq(npy_write(path, cases[i].dtype, cases[i].ndim, cases[i].shape, v,
                                       &d), -EINVAL);
                char *msg = messages(&d);
                cr_assert(strstr(msg, cases[i].want), "case %zu: %s", i, msg);
                free(msg);
                diag_fini(&d);
        }
        cr_assert_eq(count_entries(tmpdir), 0);

        struct diag d;
        diag_init(&d);
        cr_assert_eq(npy_write("/nonexistent/dir/x.npy", NPY_F32, 0, NULL, v, &d), -ENOENT);
        char *msg = messages(&d);
        cr_assert(strstr(msg, "/nonexistent/dir/x.npy: error: cannot create a temporary file "
                         "beside it: No such file or directory"), "%s", msg);
        free(msg);
        diag_fini(&d);
        remove_tmpdir();
}
