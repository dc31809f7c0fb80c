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

/* s as a quoted JSON string: valid UTF-8 as it is, other bytes as U+FFFD,
 * '"' and '\\' escaped, and a control character as \u00xx (canonical:
 * lowercase hex) or as jansson escapes it (\b \f \n \r \t, else \u00XX). */
static void put_string(FILE *f, const char *s, bool canonical)
{
        static const char hex[] = "0123456789abcdef", HEX[] = "0123456789ABCDEF";
        static const char short_esc[0x20] = { ['\b'] = 'b', ['\f'] = 'f', ['\n'] = 'n',
                                              ['\r'] = 'r', ['\t'] = 't' };
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
                } else if (c < 0x20 && !canonical && short_esc[c]) {
                        putc_unlocked('\\', f);
                        putc_unlocked(short_esc[c], f);
                        p++;
                } else if (c < 0x20) {
                        const char *h = canonical ? hex : HEX;
                        char e[6] = { '\\', 'u', '0', '0', h[c >> 4], h[c & 15] };
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

void jsonw_put_string(FILE *f, const char *s)
{
        put_string(f, s, true);
}

/* ---- a member written in pieces, as jsonw_print prints ---- */

/* Before a member (key) or an element (key NULL) at the current depth. */
static void out_item(struct jsonw_out *o, const char *key)
{
        if (o->bare) {
                o->bare = false;     /* the value of a key already written */
                return;
        }
        uint64_t bit = UINT64_C(1) << (o->depth & 63);
        if (!(o->empty & bit))
                putc_unlocked(',', o->f);
        o->empty &= ~bit;
        putc_unlocked('\n', o->f);
        for (int i = 0; i < o->depth * o->indent; i++)
                putc_unlocked(' ', o->f);
        if (key) {
                put_string(o->f, key, false);
                fwrite_unlocked(": ", 1, 2, o->f);
        }
}

void jsonw_out_open(struct jsonw_out *o, const char *key, char bracket)
{
        out_item(o, key);
        putc_unlocked(bracket, o->f);
        o->depth++;
        o->empty |= UINT64_C(1) << (o->depth & 63);
}

void jsonw_out_close(struct jsonw_out *o, char bracket)
{
        bool empty = o->empty & (UINT64_C(1) << (o->depth & 63));
        o->depth--;
        if (!empty) {
                putc_unlocked('\n', o->f);
                for (int i = 0; i < o->depth * o->indent; i++)
                        putc_unlocked(' ', o->f);
        }
        putc_unlocked(bracket, o->f);
}

void jsonw_out_int(struct jsonw_out *o, const char *key, long long v)
{
        out_item(o, key);
        char b[24], *q = b + sizeof b;
        unsigned long long u = v < 0 ? 0ULL - (unsigned long long)v : (unsigned long long)v;
        do
                *--q = (char)('0' + u % 10);
        while (u /= 10);
        if (v < 0)
                *--q = '-';
        fwrite_unlocked(q, 1, (size_t)(b + sizeof b - q), o->f);
}

void jsonw_out_str(struct jsonw_out *o, const char *key, const char *s)
{
        out_item(o, key);
        put_string(o->f, s, false);
}

int jsonw_print_with(FILE *f, json_t *v, int indent, const char *key,
                     void (*put)(struct jsonw_out *, const void *), const void *ctx)
{
        if (!v)
                return -1;
        char *text = indent > 0 && json_is_object(v) && json_object_size(v)
                             ? json_dumps(v, flags(indent, 15)) : NULL;
        json_decref(v);
        size_t len = text ? strlen(text) : 0;
        /* jansson ends a non-empty object, indented, with "\n}". */
        if (len < 3 || text[len - 2] != '\n' || text[len - 1] != '}') {
                free(text);
                return -1;
        }
        fwrite(text, 1, len - 2, f);
        free(text);
        /* The new last member, at the top level's depth + 1. */
        struct jsonw_out o = { .f = f, .indent = indent, .depth = 1 };
        out_item(&o, key);
        o.bare = true;
        put(&o, ctx);
        fwrite_unlocked("\n}\n", 1, 3, f);
        return ferror(f) ? -1 : 0;
}
