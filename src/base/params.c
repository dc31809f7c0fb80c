/* base/params.c: see params.h. */
#include "base/params.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

void params_init(struct params *ps)
{
        memset(ps, 0, sizeof *ps);
}

int params_add(struct params *ps, const char *kv, struct diag *d)
{
        const char *eq = strchr(kv, '=');
        if (!eq || eq == kv) {
                diag_error(d, "--set %s: expected key=value", kv);
                return -EINVAL;
        }
        if (ps->n == PARAMS_MAX) {
                diag_error(d, "--set %s: too many parameters (at most %d)", kv, PARAMS_MAX);
                return -EINVAL;
        }
        ps->items[ps->n++] = (struct param){ .key = kv, .key_len = (size_t)(eq - kv),
                                             .value = eq + 1 };
        return 0;
}

/* ---- strict numbers ---- */

/* digits only: at least one, nothing else. */
static bool all_digits(const char *s)
{
        if (*s < '0' || *s > '9')
                return false;
        while (*s >= '0' && *s <= '9')
                s++;
        return *s == '\0';
}

bool params_parse_u64(const char *s, uint64_t *out)
{
        if (!all_digits(s))
                return false;
        errno = 0;
        unsigned long long v = strtoull(s, NULL, 10);
        if (errno == ERANGE)
                return false;
        *out = v;
        return true;
}

bool params_parse_i64(const char *s, int64_t *out)
{
        bool neg = *s == '-';
        if (!all_digits(s + neg))
                return false;
        errno = 0;
        long long v = strtoll(s, NULL, 10);
        if (errno == ERANGE)
                return false;
        *out = v;
        return true;
}

bool params_number_syntax(const char *s, bool plus)
{
        /* [sign] (digits [. digits*] | . digits) ([eE] [+-] digits)? */
        bool digits = false;
        if (*s == '-' || (plus && *s == '+'))
                s++;
        for (; *s >= '0' && *s <= '9'; s++)
                digits = true;
        if (*s == '.')
                for (s++; *s >= '0' && *s <= '9'; s++)
                        digits = true;
        if (!digits)
                return false;
        if (*s == 'e' || *s == 'E') {
                s++;
                if (*s == '+' || *s == '-')
                        s++;
                return all_digits(s);
        }
        return *s == '\0';
}

bool params_parse_double(const char *s, double *out)
{
        if (!params_number_syntax(s, false))
                return false;
        errno = 0;
        double v = strtod(s, NULL);
        if (errno == ERANGE || !isfinite(v))
                return false;
        *out = v;
        return true;
}

static struct param *find(struct params *ps, const char *key)
{
        size_t len = strlen(key);
        struct param *found = NULL;
        for (size_t i = 0; i < ps->n; i++) {
                struct param *p = &ps->items[i];
                if (p->key_len == len && memcmp(p->key, key, len) == 0) {
                        p->used = true;
                        found = p;
                }
        }
        return found;
}

int params_u64(struct params *ps, const char *key, uint64_t def, uint64_t min, uint64_t max,
               uint64_t *out, struct diag *d)
{
        struct param *p = find(ps, key);
        *out = def;
        if (!p)
                return 0;
        const char *s = p->value;
        uint64_t v;
        if (!params_parse_u64(s, &v) || v < min || v > max) {
                diag_error(d, "--set %s=%s: expected an integer in [%" PRIu64 ", %" PRIu64 "]",
                           key, s, min, max);
                return -EINVAL;
        }
        *out = v;
        return 0;
}

int params_str(struct params *ps, const char *key, const char *def, const char **out)
{
        struct param *p = find(ps, key);
        *out = p ? p->value : def;
        return 0;
}

unsigned params_check_unused(struct params *ps, const char *const *known, const char *what,
                             struct diag *d)
{
        size_t n_known = 0;
        while (known && known[n_known])
                n_known++;
        unsigned n = 0;
        for (size_t i = 0; i < ps->n; i++) {
                struct param *p = &ps->items[i];
                if (p->used)
                        continue;
                char key[128];
                size_t len = p->key_len < sizeof key - 1 ? p->key_len : sizeof key - 1;
                memcpy(key, p->key, len);
                key[len] = '\0';
                const char *hint = diag_suggest(key, known, n_known);
                if (hint)
                        diag_error(d, "--set %s: %s has no parameter '%s'; did you mean '%s'?",
                                   p->key, what, key, hint);
                else
                        diag_error(d, "--set %s: %s has no parameter '%s'", p->key, what, key);
                n++;
        }
        return n;
}
