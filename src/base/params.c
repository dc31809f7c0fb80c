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
        char *end;
        errno = 0;
        unsigned long long v = strtoull(s, &end, 10);
        if (*s == '\0' || *s == '-' || *s == '+' || *end != '\0' || errno == ERANGE ||
            v < min || v > max) {
                diag_error(d, "--set %s=%s: expected an integer in [%" PRIu64 ", %" PRIu64 "]",
                           key, s, min, max);
                return -EINVAL;
        }
        *out = v;
        return 0;
}

int params_double(struct params *ps, const char *key, double def, double min, double max,
                  double *out, struct diag *d)
{
        struct param *p = find(ps, key);
        *out = def;
        if (!p)
                return 0;
        const char *s = p->value;
        char *end;
        errno = 0;
        double v = strtod(s, &end);
        if (*s == '\0' || *end != '\0' || errno == ERANGE || !isfinite(v) || v < min || v > max) {
                diag_error(d, "--set %s=%s: expected a number in [%g, %g]", key, s, min, max);
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
