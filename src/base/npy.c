/* base/npy.c: see npy.h.
 *
 * File layout (NumPy's format.py and NEP 1):
 *     "\x93NUMPY" major minor HLEN HEADER PAYLOAD
 * HLEN is a little-endian uint16 in version 1.0 and a uint32 in 2.0 and 3.0;
 * HEADER is a Python dict literal, ASCII (3.0: UTF-8), padded with spaces
 * and ended by '\n'; PAYLOAD is prod(shape) elements in C order.
 *
 * The header is parsed by a small recursive-descent reader that accepts only
 * what NumPy writes and Python's literal_eval would read back: keys 'descr',
 * 'fortran_order' and 'shape' in any order, either quote, spaces, a trailing
 * comma; also Python 2's "3L" shape entries, which old NumPy wrote. Columns
 * in messages count bytes of HEADER from 1. A syntax error ends parsing;
 * semantic errors (dtype, order, shape) are all reported, then parsing of
 * the payload is refused.
 *
 * Sizes are checked before anything is allocated: a payload is allocated
 * only once the file is known to hold exactly the bytes the header claims,
 * so no header can make the reader allocate more than the file's size
 * times two (float16 to float32). */
#include "base/npy.h"
#include "base/ckd.h"
#include "base/fp.h"
#include "base/fsutil.h"

#include <errno.h>
#include <fcntl.h>
#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAGIC "\x93NUMPY"
#define MAGIC_LEN 6
#define ALIGN 64                     /* NumPy's ARRAY_ALIGN for the payload offset */
#define GROWTH_DIGITS 21             /* NumPy's GROWTH_AXIS_MAX_DIGITS */
#define CHUNK_BYTES 65536            /* payload read/write granularity */
#define SHOW_MAX 40                  /* longest user string echoed in a message */

static const char SUPPORTED[] =
        "supported: '<f4', '<f2', '<u2' (bfloat16 bits), 'bfloat16', '<f8'";

/* ---- conversions ---- */

/* Round a double to float32, to nearest even; out of range gives infinity
 * (done by hand: a C conversion out of range is undefined). */
static float f64_to_f32(double x)
{
        if (isnan(x))
                return (float)x;
        double limit = 0x1.ffffffp127;   /* FLT_MAX + half an ulp: rounds up */
        if (x >= limit)
                return INFINITY;
        if (x <= -limit)
                return -INFINITY;
        return (float)x;
}

static uint16_t load_le16(const uint8_t *p)
{
        return (uint16_t)(p[0] | (p[1] << 8));
}

static uint32_t load_le32(const uint8_t *p)
{
        return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
               (uint32_t)p[3] << 24;
}

static uint64_t load_le64(const uint8_t *p)
{
        return (uint64_t)load_le32(p) | (uint64_t)load_le32(p + 4) << 32;
}

static void store_le16(uint8_t *p, uint16_t v)
{
        p[0] = (uint8_t)v;
        p[1] = (uint8_t)(v >> 8);
}

static void store_le32(uint8_t *p, uint32_t v)
{
        store_le16(p, (uint16_t)v);
        store_le16(p + 2, (uint16_t)(v >> 16));
}

size_t npy_dtype_size(enum npy_dtype t)
{
        switch (t) {
        case NPY_F32: return 4;
        case NPY_F16: return 2;
        case NPY_BF16: return 2;
        case NPY_F64: return 8;
        }
        return 0;
}

const char *npy_dtype_name(enum npy_dtype t)
{
        switch (t) {
        case NPY_F32: return "float32";
        case NPY_F16: return "float16";
        case NPY_BF16: return "bfloat16";
        case NPY_F64: return "float64";
        }
        return "?";
}

/* Convert n elements of type t at src to float32. */
static void decode(enum npy_dtype t, const uint8_t *src, size_t n, float *dst)
{
        switch (t) {
        case NPY_F32:
                for (size_t i = 0; i < n; i++)
                        dst[i] = fp_bits_f32(load_le32(src + 4 * i));
                break;
        case NPY_F16:
                for (size_t i = 0; i < n; i++)
                        dst[i] = fp_f16_to_f32(load_le16(src + 2 * i));
                break;
        case NPY_BF16:
                for (size_t i = 0; i < n; i++)
                        dst[i] = fp_bf16_to_f32(load_le16(src + 2 * i));
                break;
        case NPY_F64:
                for (size_t i = 0; i < n; i++) {
                        uint64_t u = load_le64(src + 8 * i);
                        double x;
                        memcpy(&x, &u, sizeof x);
                        dst[i] = f64_to_f32(x);
                }
                break;
        }
}

/* Convert n float32 values to type t (not F64) at dst. */
static void encode(enum npy_dtype t, const float *src, size_t n, uint8_t *dst)
{
        for (size_t i = 0; i < n; i++) {
                if (t == NPY_F32)
                        store_le32(dst + 4 * i, fp_f32_bits(src[i]));
                else if (t == NPY_F16)
                        store_le16(dst + 2 * i, fp_f32_to_f16(src[i]));
                else
                        store_le16(dst + 2 * i, fp_f32_to_bf16(src[i]));
        }
}

/* ---- the header dict ---- */

enum key { KEY_DESCR, KEY_FORTRAN, KEY_SHAPE, N_KEYS };

static const char *const KEY_NAMES[N_KEYS] = { "descr", "fortran_order", "shape" };

struct lex {
        const char *name;            /* file name for messages */
        struct diag *d;              /* where errors go */
        const uint8_t *s;            /* header text, not NUL-terminated */
        size_t len;                  /* its length in bytes */
        size_t pos;                  /* next byte to read */
        unsigned n_errors;           /* errors reported by this parse */
};

struct header {
        bool seen[N_KEYS];           /* key already given (duplicates are errors) */
        enum npy_dtype dtype;        /* from descr, if it named a supported one */
        int ndim;                    /* extents given (may exceed NPY_MAX_DIMS) */
        int64_t shape[NPY_MAX_DIMS]; /* the first NPY_MAX_DIMS extents */
};

/* Report an error at byte pos of the header (column pos + 1). */
static void __attribute__((format(printf, 3, 4)))
err_at(struct lex *l, size_t pos, const char *fmt, ...)
{
        char msg[512];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(msg, sizeof msg, fmt, ap);
        va_end(ap);
        diag_error_at(l->d, l->name, 0, 0, "header column %zu: %s", pos + 1, msg);
        l->n_errors++;
}

static int peek(const struct lex *l)
{
        return l->pos < l->len ? l->s[l->pos] : -1;
}

static bool is_space(int c)
{
        return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

static bool is_ident(int c)
{
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
               c == '_';
}

static void skip_space(struct lex *l)
{
        while (is_space(peek(l)))
                l->pos++;
}

/* What is at pos, for "expected X, got Y". */
static void describe(const struct lex *l, size_t pos, char *buf, size_t size)
{
        if (pos >= l->len)
                snprintf(buf, size, "the end of the header");
        else if (l->s[pos] == '\'')
                snprintf(buf, size, "\"'\"");
        else if (l->s[pos] >= 0x20 && l->s[pos] < 0x7f)
                snprintf(buf, size, "'%c'", l->s[pos]);
        else
                snprintf(buf, size, "byte 0x%02x", l->s[pos]);
}

static void expected(struct lex *l, const char *what)
{
        char got[32];
        describe(l, l->pos, got, sizeof got);
        err_at(l, l->pos, "expected %s, got %s", what, got);
}

/* Past the spaces, the character c and the spaces after it; else
 * "expected what" and false. */
static bool punct(struct lex *l, int c, const char *what)
{
        skip_space(l);
        if (peek(l) != c) {
                expected(l, what);
                return false;
        }
        l->pos++;
        skip_space(l);
        return true;
}

/* A user string made safe and short for a message. */
static void show(const uint8_t *s, size_t n, char *buf, size_t size)
{
        size_t o = 0;
        for (size_t i = 0; i < n && o + 5 < size; i++) {
                if (i == SHOW_MAX) {
                        o += (size_t)snprintf(buf + o, size - o, "...");
                        break;
                }
                if (s[i] >= 0x20 && s[i] < 0x7f && s[i] != '\'' && s[i] != '\\')
                        buf[o++] = (char)s[i];
                else
                        o += (size_t)snprintf(buf + o, size - o, "\\x%02x", s[i]);
        }
        buf[o < size ? o : size - 1] = '\0';
}

/* A quoted string, either quote, no escapes; str and n give its contents. */
static int string_lit(struct lex *l, const uint8_t **str, size_t *n)
{
        int q = peek(l);
        size_t start = l->pos;
        if (q != '\'' && q != '"') {
                expected(l, "a quoted string");
                return -1;
        }
        l->pos++;
        *str = l->s + l->pos;
        for (;;) {
                int c = peek(l);
                if (c < 0 || c == '\n') {
                        err_at(l, start, "unterminated string");
                        return -1;
                }
                if (c == q)
                        break;
                if (c == '\\') {
                        err_at(l, l->pos, "escape sequences are not supported in the header");
                        return -1;
                }
                if (c < 0x20 || c >= 0x7f) {
                        err_at(l, l->pos, "byte 0x%02x in a string: the header must be printable ASCII",
                               c);
                        return -1;
                }
                l->pos++;
        }
        *n = (size_t)(l->s + l->pos - *str);
        l->pos++;
        return 0;
}

static bool str_is(const uint8_t *s, size_t n, const char *want)
{
        return strlen(want) == n && memcmp(s, want, n) == 0;
}

static int descr_value(struct lex *l, struct header *h)
{
        size_t at = l->pos;
        if (peek(l) == '[') {
                err_at(l, at, "structured dtypes (a list descr) are not supported (%s)", SUPPORTED);
                return -1;
        }
        if (peek(l) == '(') {
                err_at(l, at, "subarray dtypes (a tuple descr) are not supported (%s)", SUPPORTED);
                return -1;
        }
        const uint8_t *s;
        size_t n;
        if (string_lit(l, &s, &n) < 0)
                return -1;
        static const struct {
                const char *descr;   /* as NumPy writes it */
                enum npy_dtype dtype;        /* what it reads as */
        } known[] = {
                { "<f4", NPY_F32 }, { "<f2", NPY_F16 }, { "<u2", NPY_BF16 },
                { "bfloat16", NPY_BF16 }, { "<f8", NPY_F64 },
        };
        for (size_t i = 0; i < sizeof known / sizeof known[0]; i++) {
                if (str_is(s, n, known[i].descr)) {
                        h->dtype = known[i].dtype;
                        return 0;
                }
        }
        char shown[4 * SHOW_MAX + 8];
        show(s, n, shown, sizeof shown);
        if (n == 3 && s[0] == '>' && (str_is(s + 1, 2, "f4") || str_is(s + 1, 2, "f2") ||
                                      str_is(s + 1, 2, "u2") || str_is(s + 1, 2, "f8")))
                err_at(l, at, "big-endian dtype '%s' is not supported; save with "
                       "arr.astype('<%s')", shown, shown + 1);
        else
                err_at(l, at, "dtype '%s' is not supported (%s)", shown, SUPPORTED);
        return 0;            /* a semantic error: the rest can still be checked */
}

static int fortran_value(struct lex *l)
{
        size_t at = l->pos, n = 0;
        while (is_ident(peek(l))) {
                l->pos++;
                n++;
        }
        if (str_is(l->s + at, n, "False"))
                return 0;
        if (str_is(l->s + at, n, "True")) {
                err_at(l, at, "Fortran order is not supported; save with np.ascontiguousarray");
                return 0;
        }
        l->pos = at;
        expected(l, "True or False for 'fortran_order'");
        return -1;
}

/* One shape extent: a decimal integer literal, optionally Python 2's 'L'. */
static int extent(struct lex *l, struct header *h)
{
        size_t at = l->pos;
        bool neg = peek(l) == '-';
        if (neg)
                l->pos++;
        int c = peek(l);
        if (c < '0' || c > '9') {
                l->pos = at;
                expected(l, "an integer extent");
                return -1;
        }
        size_t digits = l->pos;
        uint64_t v = 0;
        bool overflow = false;
        while ((c = peek(l)) >= '0' && c <= '9') {
                uint64_t dv = (uint64_t)(c - '0');
                if (v > (INT64_MAX - dv) / 10)
                        overflow = true;
                else
                        v = v * 10 + dv;
                l->pos++;
        }
        if (l->pos - digits > 1 && l->s[digits] == '0') {
                err_at(l, at, "leading zeros in an integer");
                return -1;
        }
        if (peek(l) == 'L')
                l->pos++;
        if (is_ident(peek(l)) || peek(l) == '.') {
                expected(l, "',' or ')' after an integer extent");
                return -1;
        }
        char shown[4 * SHOW_MAX + 8];
        show(l->s + at, l->pos - at, shown, sizeof shown);
        if (overflow) {
                err_at(l, at, "extent %s overflows int64", shown);
        } else if (neg && v) {
                err_at(l, at, "negative extent %s", shown);
        } else if (h->ndim < NPY_MAX_DIMS) {
                h->shape[h->ndim] = (int64_t)v;
        }
        h->ndim++;
        return 0;
}

static int shape_value(struct lex *l, struct header *h)
{
        size_t open = l->pos;
        if (peek(l) == '[') {
                err_at(l, open, "the shape must be a tuple such as (2, 3), not a list");
                return -1;
        }
        if (!punct(l, '(', "a tuple such as (2, 3) for 'shape'"))
                return -1;
        h->ndim = 0;
        bool comma = false;          /* a comma followed the last extent */
        while (peek(l) != ')') {
                if (extent(l, h) < 0)
                        return -1;
                skip_space(l);
                comma = peek(l) == ',';
                if (comma) {
                        l->pos++;
                        skip_space(l);
                } else if (peek(l) != ')') {
                        expected(l, "',' or ')' in the shape");
                        return -1;
                }
        }
        if (h->ndim == 1 && !comma) {
                err_at(l, open, "a shape of one extent is a tuple with a trailing comma, "
                       "like (%" PRId64 ",)", h->shape[0]);
                return -1;
        }
        l->pos++;
        if (h->ndim > NPY_MAX_DIMS) {
                err_at(l, open, "%d dimensions; at most %d are supported", h->ndim,
                       NPY_MAX_DIMS);
        }
        return 0;
}

static int entry(struct lex *l, struct header *h)
{
        size_t at = l->pos;
        if (peek(l) != '\'' && peek(l) != '"') {
                expected(l, "a quoted key or '}'");
                return -1;
        }
        const uint8_t *s;
        size_t n;
        if (string_lit(l, &s, &n) < 0)
                return -1;
        int key = -1;
        for (int k = 0; k < N_KEYS; k++)
                if (str_is(s, n, KEY_NAMES[k]))
                        key = k;
        if (key < 0) {
                char shown[4 * SHOW_MAX + 8];
                show(s, n, shown, sizeof shown);
                const char *hint = n <= SHOW_MAX ? diag_suggest(shown, KEY_NAMES, N_KEYS) : NULL;
                if (hint)
                        err_at(l, at, "unknown key '%s' (did you mean '%s'?)", shown, hint);
                else
                        err_at(l, at, "unknown key '%s' (the keys are 'descr', "
                               "'fortran_order' and 'shape')", shown);
                return -1;
        }
        if (h->seen[key]) {
                err_at(l, at, "duplicate key '%s'", KEY_NAMES[key]);
                return -1;
        }
        h->seen[key] = true;
        if (!punct(l, ':', "':' after the key"))
                return -1;
        switch (key) {
        case KEY_DESCR: return descr_value(l, h);
        case KEY_FORTRAN: return fortran_value(l);
        default: return shape_value(l, h);
        }
}

/* Parse the dict; 0 if it is well formed and every value supported. */
static int parse_dict(struct lex *l, struct header *h)
{
        if (!punct(l, '{', "'{' opening the header dict"))
                return -1;
        while (peek(l) != '}') {
                if (entry(l, h) < 0)
                        return -1;
                skip_space(l);
                if (peek(l) == ',') {
                        l->pos++;
                        skip_space(l);
                } else if (peek(l) != '}') {
                        expected(l, "',' or '}' after a value");
                        return -1;
                }
        }
        l->pos++;
        skip_space(l);
        if (l->pos < l->len) {
                char got[32];
                describe(l, l->pos, got, sizeof got);
                err_at(l, l->pos, "unexpected %s after the closing '}'", got);
                return -1;
        }
        for (int k = 0; k < N_KEYS; k++) {
                if (!h->seen[k]) {
                        diag_error_at(l->d, l->name, 0, 0, "the header lacks the key '%s'",
                                      KEY_NAMES[k]);
                        l->n_errors++;
                }
        }
        return l->n_errors ? -1 : 0;
}

/* ---- preamble, sizes, payload ---- */

struct layout {
        size_t data_off;             /* payload offset in the file, bytes */
        uint64_t data_bytes;         /* payload size the header implies */
};

/* Parse preamble and header from the first len bytes of a file; fill the
 * array's dtype, ndim, shape and count (data untouched) and the layout. */
static int parse_header(const char *name, const uint8_t *buf, size_t len,
                        struct npy_array *out, struct layout *lay, struct diag *d)
{
        size_t m = len < MAGIC_LEN ? len : MAGIC_LEN;
        if (len == 0) {
                diag_error_at(d, name, 0, 0, "empty file, not a .npy file");
                return -EINVAL;
        }
        if (memcmp(buf, MAGIC, m) != 0) {
                if (len >= 4 && memcmp(buf, "PK\x03\x04", 4) == 0)
                        diag_error_at(d, name, 0, 0, "not a .npy file: this is a zip archive "
                                      "(an .npz?); extract its arrays first");
                else
                        diag_error_at(d, name, 0, 0, "not a .npy file: it does not start "
                                      "with \"\\x93NUMPY\"");
                return -EINVAL;
        }
        if (len < MAGIC_LEN + 2) {
                diag_error_at(d, name, 0, 0, "truncated: %zu bytes, shorter than the "
                              ".npy preamble", len);
                return -EINVAL;
        }
        unsigned major = buf[6], minor = buf[7];
        if (major < 1 || major > 3 || minor != 0) {
                diag_error_at(d, name, 0, 0, "unsupported .npy format version %u.%u "
                              "(supported: 1.0, 2.0, 3.0)", major, minor);
                return -EINVAL;
        }
        size_t pre = major == 1 ? 10 : 12;
        if (len < pre) {
                diag_error_at(d, name, 0, 0, "truncated: %zu bytes, shorter than the "
                              ".npy preamble", len);
                return -EINVAL;
        }
        uint32_t hlen = major == 1 ? load_le16(buf + 8) : load_le32(buf + 8);
        if (hlen > NPY_MAX_HEADER_BYTES) {
                diag_error_at(d, name, 0, 0, "header length %" PRIu32 " exceeds the limit "
                              "of %d bytes", hlen, NPY_MAX_HEADER_BYTES);
                return -EINVAL;
        }
        if (len - pre < hlen) {
                diag_error_at(d, name, 0, 0, "truncated header: %zu bytes, expected %" PRIu32,
                              len - pre, hlen);
                return -EINVAL;
        }

        struct lex l = { .name = name, .d = d, .s = buf + pre, .len = hlen };
        struct header h = { .ndim = 0 };
        if (parse_dict(&l, &h) < 0)
                return -EINVAL;

        uint64_t count = 1;
        for (int i = 0; i < h.ndim; i++) {
                if (!ckd_mul_u64(&count, count, (uint64_t)h.shape[i])) {
                        diag_error_at(d, name, 0, 0, "the shape's element count overflows "
                                      "64 bits");
                        return -EINVAL;
                }
        }
        uint64_t bytes;
        if (!ckd_mul_u64(&bytes, count, (uint64_t)npy_dtype_size(h.dtype)) ||
            bytes > NPY_MAX_BYTES) {
                diag_error_at(d, name, 0, 0, "%" PRIu64 " elements of %s exceed the %llu GiB "
                              "limit on array data", count, npy_dtype_name(h.dtype),
                              NPY_MAX_BYTES >> 30);
                return -EINVAL;
        }
        out->dtype = h.dtype;
        out->ndim = h.ndim;
        memcpy(out->shape, h.shape, sizeof out->shape);
        out->count = count;
        lay->data_off = pre + hlen;
        lay->data_bytes = bytes;
        return 0;
}

static int check_size(const char *name, uint64_t have, const struct layout *lay,
                      struct diag *d)
{
        if (have < lay->data_bytes) {
                diag_error_at(d, name, 0, 0, "truncated: %" PRIu64 " bytes of data, expected "
                              "%" PRIu64, have, lay->data_bytes);
                return -EINVAL;
        }
        if (have > lay->data_bytes) {
                diag_error_at(d, name, 0, 0, "trailing garbage: %" PRIu64 " bytes of data, "
                              "expected %" PRIu64, have, lay->data_bytes);
                return -EINVAL;
        }
        return 0;
}

static float *alloc_floats(const char *name, uint64_t count, struct diag *d)
{
        uint64_t n = count ? count : 1;
        float *p = n <= SIZE_MAX / sizeof(float) ? malloc((size_t)n * sizeof(float)) : NULL;
        if (!p)
                diag_error_at(d, name, 0, 0, "out of memory for %" PRIu64 " elements", count);
        return p;
}

int npy_parse(const char *name, const uint8_t *buf, size_t len, struct npy_array *out,
              struct diag *d)
{
        memset(out, 0, sizeof *out);
        struct layout lay;
        int rc = parse_header(name, buf, len, out, &lay, d);
        if (rc == 0)
                rc = check_size(name, len - lay.data_off, &lay, d);
        if (rc == 0 && !(out->data = alloc_floats(name, out->count, d)))
                rc = -ENOMEM;
        if (rc) {
                memset(out, 0, sizeof *out);
                return rc;
        }
        decode(out->dtype, buf + lay.data_off, (size_t)out->count, out->data);
        return 0;
}

/* Read up to n bytes (fewer only at end of file). */
static ssize_t read_full(int fd, uint8_t *buf, size_t n)
{
        size_t got = 0;
        while (got < n) {
                ssize_t r = read(fd, buf + got, n - got);
                if (r < 0 && errno == EINTR)
                        continue;
                if (r < 0)
                        return -1;
                if (r == 0)
                        break;
                got += (size_t)r;
        }
        return (ssize_t)got;
}

static int io_error(const char *name, const char *what, struct diag *d)
{
        int e = errno ? errno : EIO;
        diag_error_at(d, name, 0, 0, "cannot %s: %s", what, strerror(e));
        return -e;
}

/* Stream the payload after the prefix bytes already read, converting as it
 * goes; the file must end exactly where the header says. */
static int read_payload(int fd, const char *name, const uint8_t *rest, size_t n_rest,
                        const struct layout *lay, struct npy_array *out, struct diag *d)
{
        size_t es = npy_dtype_size(out->dtype);
        uint8_t *chunk = malloc(CHUNK_BYTES);
        if (!chunk) {
                diag_error_at(d, name, 0, 0, "out of memory");
                return -ENOMEM;
        }
        /* The prefix holds at most NPY_MAX_HEADER_BYTES + 12 bytes, less
         * than a chunk. */
        memcpy(chunk, rest, n_rest);
        size_t have = n_rest;        /* unconverted bytes at the chunk's start */
        uint64_t seen = n_rest;      /* payload bytes read so far */
        uint64_t done = 0;           /* elements converted */
        int rc = 0;
        bool eof = false;
        while (!eof) {
                ssize_t r = read_full(fd, chunk + have, CHUNK_BYTES - have);
                if (r < 0) {
                        rc = io_error(name, "read", d);
                        goto free_chunk;
                }
                eof = (size_t)r < CHUNK_BYTES - have;
                have += (size_t)r;
                seen += (uint64_t)r;
                if (seen > lay->data_bytes)
                        break;       /* too long; counted below */
                size_t k = have / es;
                decode(out->dtype, chunk, k, out->data + done);
                done += k;
                memmove(chunk, chunk + k * es, have - k * es);
                have -= k * es;
        }
        if (seen > lay->data_bytes) {
                /* Count the rest for the message, unless it never ends. */
                ssize_t r;
                while (seen < lay->data_bytes + ((uint64_t)1 << 32) &&
                       (r = read_full(fd, chunk, CHUNK_BYTES)) > 0)
                        seen += (uint64_t)r;
        }
        rc = check_size(name, seen, lay, d);
free_chunk:
        free(chunk);
        return rc;
}

static int load(const char *path, struct npy_array *out, bool with_data, struct diag *d)
{
        memset(out, 0, sizeof *out);
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return io_error(path, "open", d);
        int rc;
        uint8_t *prefix = NULL;
        struct stat st;
        if (fstat(fd, &st) < 0) {
                rc = io_error(path, "stat", d);
                goto close_fd;
        }
        if (S_ISDIR(st.st_mode)) {
                diag_error_at(d, path, 0, 0, "is a directory, not a .npy file");
                rc = -EISDIR;
                goto close_fd;
        }
        size_t cap = 12 + NPY_MAX_HEADER_BYTES;
        prefix = malloc(cap);
        if (!prefix) {
                diag_error_at(d, path, 0, 0, "out of memory");
                rc = -ENOMEM;
                goto close_fd;
        }
        ssize_t got = read_full(fd, prefix, cap);
        if (got < 0) {
                rc = io_error(path, "read", d);
                goto free_prefix;
        }
        struct layout lay;
        rc = parse_header(path, prefix, (size_t)got, out, &lay, d);
        if (rc)
                goto free_prefix;
        if (S_ISREG(st.st_mode)) {
                /* Known size: refuse before allocating anything. */
                uint64_t size = (uint64_t)st.st_size;
                rc = check_size(path, size > lay.data_off ? size - lay.data_off : 0, &lay, d);
                if (rc || !with_data)
                        goto free_prefix;
        }
        if (!with_data) {
                /* Not seekable: the size is known only by reading it all. */
                uint64_t seen = (uint64_t)got - lay.data_off;
                ssize_t r;
                while (seen <= lay.data_bytes && (r = read_full(fd, prefix, cap)) > 0)
                        seen += (uint64_t)r;
                rc = check_size(path, seen, &lay, d);
                goto free_prefix;
        }
        if (!(out->data = alloc_floats(path, out->count, d))) {
                rc = -ENOMEM;
                goto free_prefix;
        }
        rc = read_payload(fd, path, prefix + lay.data_off, (size_t)got - lay.data_off, &lay,
                          out, d);
free_prefix:
        free(prefix);
close_fd:
        close(fd);
        if (rc) {
                free(out->data);
                memset(out, 0, sizeof *out);
        }
        return rc;
}

int npy_read(const char *path, struct npy_array *out, struct diag *d)
{
        return load(path, out, true, d);
}

int npy_read_header(const char *path, struct npy_array *out, struct diag *d)
{
        return load(path, out, false, d);
}

void npy_free(struct npy_array *a)
{
        free(a->data);
        memset(a, 0, sizeof *a);
}

/* ---- writing ---- */

/* The version 1.0 preamble and header exactly as NumPy 1.24 writes them:
 * sorted keys, room for the first extent to grow to 21 digits, spaces up
 * to a 64-byte boundary, '\n' last. Returns its length. */
static size_t format_header(enum npy_dtype dtype, int ndim, const int64_t *shape,
                            uint8_t *buf, size_t size)
{
        char text[256];
        const char *descr = dtype == NPY_F32 ? "<f4" : dtype == NPY_F16 ? "<f2" : "<u2";
        size_t n = (size_t)snprintf(text, sizeof text,
                                    "{'descr': '%s', 'fortran_order': False, 'shape': (", descr);
        for (int i = 0; i < ndim; i++)
                n += (size_t)snprintf(text + n, sizeof text - n, "%s%" PRId64, i ? ", " : "",
                                      shape[i]);
        n += (size_t)snprintf(text + n, sizeof text - n, "%s), }", ndim == 1 ? "," : "");
        if (ndim > 0) {
                int digits = snprintf(NULL, 0, "%" PRId64, shape[0]);
                for (int i = digits; i < GROWTH_DIGITS; i++)
                        text[n++] = ' ';
        }
        size_t hlen = n + 1;                         /* with the '\n' */
        size_t pad = ALIGN - (10 + hlen) % ALIGN;    /* 1..64, as NumPy */
        size_t total = 10 + hlen + pad;
        if (total > size)
                return 0;
        memcpy(buf, MAGIC, MAGIC_LEN);
        buf[6] = 1;
        buf[7] = 0;
        store_le16(buf + 8, (uint16_t)(hlen + pad));
        memcpy(buf + 10, text, n);
        memset(buf + 10 + n, ' ', pad);
        buf[total - 1] = '\n';
        return total;
}

int npy_write(const char *path, enum npy_dtype dtype, int ndim, const int64_t *shape,
              const float *data, struct diag *d)
{
        if (dtype != NPY_F32 && dtype != NPY_F16 && dtype != NPY_BF16) {
                diag_error_at(d, path, 0, 0, "cannot write %s: only float32, float16 and "
                              "bfloat16 are written", npy_dtype_name(dtype));
                return -EINVAL;
        }
        if (ndim < 0 || ndim > NPY_MAX_DIMS) {
                diag_error_at(d, path, 0, 0, "cannot write %d dimensions (0..%d)", ndim,
                              NPY_MAX_DIMS);
                return -EINVAL;
        }
        uint64_t count = 1;
        bool overflow = false;
        for (int i = 0; i < ndim; i++) {
                if (shape[i] < 0) {
                        diag_error_at(d, path, 0, 0, "cannot write: negative extent %" PRId64
                                      " at axis %d", shape[i], i);
                        return -EINVAL;
                }
                overflow |= !ckd_mul_u64(&count, count, (uint64_t)shape[i]);
        }
        size_t es = npy_dtype_size(dtype);
        if (overflow || count > NPY_MAX_BYTES / es) {
                diag_error_at(d, path, 0, 0, "cannot write: the array is over the %llu GiB "
                              "limit", NPY_MAX_BYTES >> 30);
                return -EINVAL;
        }

        uint8_t *buf = malloc(CHUNK_BYTES);
        if (!buf) {
                diag_error_at(d, path, 0, 0, "out of memory");
                return -ENOMEM;
        }
        struct fs_atomic f;
        fs_atomic_begin(&f, path);
        size_t n = format_header(dtype, ndim, shape, buf, CHUNK_BYTES);
        fs_atomic_write(&f, buf, n);
        size_t per = CHUNK_BYTES / es;
        for (uint64_t i = 0; i < count && !f.err; i += per) {
                size_t k = count - i < per ? (size_t)(count - i) : per;
                encode(dtype, data + i, k, buf);
                fs_atomic_write(&f, buf, k * es);
        }
        free(buf);
        int rc = fs_atomic_commit(&f);
        if (rc < 0)
                diag_error_at(d, path, 0, 0, "cannot %s%s: %s", f.failed,
                              strcmp(f.failed, "create") == 0 ? " a temporary file beside it"
                                                              : "",
                              strerror(-rc));
        return rc;
}
