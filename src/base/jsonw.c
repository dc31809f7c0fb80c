/* base/jsonw.c: escaping, non-finite numbers and printing of JSON. */
#include "base/jsonw.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "base/fsutil.h"
#include "base/util.h"

json_t *jsonw_real(double x)
{
        return isfinite(x) ? json_real(x) : json_null();
}

json_t *jsonw_fixed(double x, int decimals)
{
        double scale = pow(10, decimals);
        double r = round(x * scale) / scale;
        return jsonw_real(isfinite(r) ? r : x);
}

/* Length of the valid UTF-8 sequence at p (1..4), or 0 if none starts
 * there (RFC 3629: no overlong forms, no surrogates, nothing past
 * U+10FFFF). */
static size_t utf8_len(const unsigned char *p)
{
        unsigned char c = p[0];
        if (c < 0x80)
                return 1;
        size_t n = c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3
                   : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
        for (size_t i = 1; i < n; i++)
                if ((p[i] & 0xc0) != 0x80)
                        return 0;
        if ((c == 0xe0 && p[1] < 0xa0) || (c == 0xed && p[1] > 0x9f) ||
            (c == 0xf0 && p[1] < 0x90) || (c == 0xf4 && p[1] > 0x8f))
                return 0;
        return n;
}

static const char replacement[] = "\xef\xbf\xbd";   /* U+FFFD */

json_t *jsonw_string(const char *s)
{
        if (!s)
                return json_null();
        json_t *v = json_string(s);
        if (v)
                return v;
        /* Not UTF-8: each stray byte becomes U+FFFD (three bytes). */
        size_t len = strlen(s);
        char *fixed = malloc(3 * len + 1), *q = fixed;
        if (!fixed)
                return NULL;
        for (const unsigned char *p = (const unsigned char *)s; *p;) {
                size_t n = utf8_len(p);
                if (n) {
                        memcpy(q, p, n);
                        q += n;
                        p += n;
                } else {
                        memcpy(q, replacement, 3);
                        q += 3;
                        p++;
                }
        }
        *q = '\0';
        v = json_string(fixed);
        free(fixed);
        return v;
}

/* Printed reals carry 15 significant digits (29.67 stays 29.67); saved
 * ones 17, so a file read back gives the very same doubles (a resumed
 * sweep's records equal a fresh one's). */
static size_t flags(int indent, int digits)
{
        return JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(digits) |
               (indent > 0 ? JSON_INDENT(indent) : 0);
}

int jsonw_save(const char *path, const json_t *v, int indent)
{
        char *text = v ? json_dumps(v, flags(indent, 17)) : NULL;
        if (!text)
                return -ENOMEM;
        size_t len = strlen(text);
        text[len] = '\n';  /* json_dumps leaves room only for the NUL: rewrite it */
        int rc = fs_write_atomic(path, text, len + 1);
        free(text);
        return rc;
}

int jsonw_print(FILE *f, json_t *v, int indent)
{
        if (!v)
                return -1;
        int rc = json_dumpf(v, f, flags(indent, 15));
        json_decref(v);
        /* The newline even after a failed dump: the stream's owner sees
         * the write error (and its errno) when it flushes. */
        if (fputc('\n', f) == EOF)
                rc = -1;
        return rc == 0 && !ferror(f) ? 0 : -1;
}

/* Bytes copied as they are: RFC 8259 requires escaping only '"', '\\'
 * and U+0000..U+001F. */
static inline bool plain(unsigned char c)
{
        return c >= 0x20 && c < 0x80 && c != '"' && c != '\\';
}

void jsonw_put_string(FILE *f, const char *s)
{
        static const char hex[] = "0123456789abcdef";
        if (unlikely(!s)) {
                fwrite_unlocked("null", 1, 4, f);
                return;
        }
        putc_unlocked('"', f);
        for (const unsigned char *p = (const unsigned char *)s; *p;) {
                unsigned char c = *p;
                if (likely(plain(c))) {
                        putc_unlocked(c, f);
                        p++;
                } else if (c == '"' || c == '\\') {
                        putc_unlocked('\\', f);
                        putc_unlocked(c, f);
                        p++;
                } else if (c < 0x20) {
                        char e[6] = { '\\', 'u', '0', '0', hex[c >> 4], hex[c & 15] };
                        fwrite_unlocked(e, 1, sizeof e, f);
                        p++;
                } else {
                        size_t n = utf8_len(p);
                        fwrite_unlocked(n ? (const char *)p : replacement, 1, n ? n : 3, f);
                        p += n ? n : 1;
                }
        }
        putc_unlocked('"', f);
}
