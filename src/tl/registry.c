/* tl/registry.c: the kernels by name: the built-in ones (kernels/builtin.c)
 * and those loaded from shared objects (--kernels lib.so) that export
 * cubesim_kernels; the one --set router; and the checks of a kernel's
 * parameter definitions and of a --set value against one. */
#include <dlfcn.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "tl/tl_int.h"

#define MAX_LOADED 256
static const struct tl_kernel *loaded[MAX_LOADED]; /* from shared objects, in load order */
static size_t n_loaded;

const struct tl_kernel *tl_kernel_at(size_t i)
{
        size_t n_builtin = 0;
        while (tl_builtin_kernels[n_builtin])
                n_builtin++;
        if (i < n_builtin)
                return tl_builtin_kernels[i];
        i -= n_builtin;
        return i < n_loaded ? loaded[i] : NULL;
}

const struct tl_kernel *tl_kernel_find(const char *name)
{
        /* Names are unique (tl_kernels_load refuses a second one). */
        for (size_t i = n_loaded; i-- > 0;)
                if (strcmp(loaded[i]->name, name) == 0)
                        return loaded[i];
        for (const struct tl_kernel *const *k = tl_builtin_kernels; *k; k++)
                if (strcmp((*k)->name, name) == 0)
                        return *k;
        return NULL;
}

int tl_kernels_load(const char *path, struct diag *d)
{
        /* dlopen needs a path with a slash to skip the library search. */
        char buf[4096];
        if (!strchr(path, '/')) {
                snprintf(buf, sizeof buf, "./%s", path);
                path = buf;
        }
        void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
        if (!h) {
                diag_error_at(d, path, 0, 0, "cannot load kernels: %s", dlerror());
                return -1;
        }
        const struct tl_kernel *const *list = dlsym(h, TL_KERNELS_SYMBOL);
        if (!list) {
                diag_error_at(d, path, 0, 0,
                              "no symbol '%s': a kernel library exports "
                              "const struct tl_kernel *const %s[] = { &k, ..., NULL };",
                              TL_KERNELS_SYMBOL, TL_KERNELS_SYMBOL);
                dlclose(h);
                return -1;
        }
        size_t n = 0, first = n_loaded;
        int clash = 0;
        for (; list[n]; n++) {
                if (n_loaded == MAX_LOADED) {
                        diag_error_at(d, path, 0, 0, "more than %d loaded kernels", MAX_LOADED);
                        return -1;
                }
                if (!list[n]->name || !list[n]->fn) {
                        diag_error_at(d, path, 0, 0, "%s[%zu] has no name or no body",
                                      TL_KERNELS_SYMBOL, n);
                        return -1;
                }
                if (tl_kernel_check(list[n], path, d) < 0)
                        goto fail;
                /* A library adds kernels; it never replaces one. */
                const struct tl_kernel *prev = tl_kernel_find(list[n]->name);
                if (prev) {
                        size_t j = 0;
                        while (j < n_loaded && loaded[j] != prev)
                                j++;
                        diag_error_at(d, path, 0, 0, "kernel '%s' is already %s: a kernel "
                                      "library adds kernels, it cannot replace one; rename it",
                                      list[n]->name, j == n_loaded ? "built in"
                                                     : j < first ? "loaded by an earlier --kernels"
                                                                 : "exported by this library");
                        clash = 1;
                        continue;
                }
                loaded[n_loaded++] = list[n];
        }
        if (n == 0)
                diag_error_at(d, path, 0, 0, "%s is empty", TL_KERNELS_SYMBOL);
        if (n == 0 || clash)
                goto fail;
        /* The handle stays open: the kernels live in it for the run. */
        return 0;
fail:
        n_loaded = first;   /* a library loads whole or not at all */
        return -1;
}

const struct tl_param *tl_kernel_param(const struct tl_kernel *k, const char *name,
                                       size_t name_len)
{
        for (const struct tl_param *p = k ? k->params : NULL; p && p->name; p++)
                if (strlen(p->name) == name_len && memcmp(p->name, name, name_len) == 0)
                        return p;
        return NULL;
}

bool tl_set_is_topo(const struct tl_kernel *k, const char *key, size_t key_len)
{
        return memchr(key, '.', key_len) && !tl_kernel_param(k, key, key_len);
}

const char *tl_set_topo_path(const char *key, size_t key_len, char *buf, size_t len)
{
        static const char alias[] = "issue_cost.";
        size_t a = sizeof alias - 1;
        if (key_len > a + 3 && memcmp(key, alias, a) == 0 &&
            memcmp(key + key_len - 3, "_ns", 3) == 0)
                snprintf(buf, len, "pe.cpu.issue_cost_ns.%.*s", (int)(key_len - a - 3), key + a);
        else
                snprintf(buf, len, "%.*s", (int)key_len, key);
        return buf;
}

/* ---- the checks of a kernel's parameters ---- */

/* One parameter definition of kernel k; problems to d at where. */
static int check_param_def(const struct tl_kernel *k, const struct tl_param *p, const char *where,
                           struct diag *d)
{
        const char *name = p->name;
        switch (p->kind) {
        case TL_PARAM_INT:
        case TL_PARAM_FLOAT:
                if (!(p->min <= p->def && p->def <= p->max) ||
                    (p->kind == TL_PARAM_INT && p->def != floor(p->def))) {
                        diag_error_at(d, where, 0, 0,
                                      "kernel %s: parameter '%s': default %g is not %s in "
                                      "[%g, %g]", k->name, name, p->def,
                                      p->kind == TL_PARAM_INT ? "an integer" : "a number",
                                      p->min, p->max);
                        return -EINVAL;
                }
                return 0;
        case TL_PARAM_CHOICE: {
                int n = 0;
                while (p->choices && p->choices[n] && n < 256)
                        n++;
                if (n == 0) {
                        diag_error_at(d, where, 0, 0,
                                      "kernel %s: parameter '%s': a choice parameter needs "
                                      "choices, a NULL-terminated list of words (got %s)",
                                      k->name, name, p->choices ? "an empty list" : "NULL");
                        return -EINVAL;
                }
                if (!(p->def >= 0 && p->def < n && p->def == floor(p->def))) {
                        diag_error_at(d, where, 0, 0,
                                      "kernel %s: parameter '%s': default %g is not an index "
                                      "into its %d choices (0..%d)", k->name, name, p->def, n,
                                      n - 1);
                        return -EINVAL;
                }
                return 0;
        }
        }
        diag_error_at(d, where, 0, 0, "kernel %s: parameter '%s': kind %d is not INT, FLOAT or "
                      "CHOICE", k->name, name, (int)p->kind);
        return -EINVAL;
}

int tl_kernel_check(const struct tl_kernel *k, const char *where, struct diag *d)
{
        int rc = 0, n = 0;
        for (const struct tl_param *p = k->params; p && p->name; p++, n++) {
                if (n == TL_MAX_PARAMS) {
                        diag_error_at(d, where, 0, 0, "kernel %s: more than %d parameters",
                                      k->name, TL_MAX_PARAMS);
                        return -EINVAL;
                }
                if (check_param_def(k, p, where, d) < 0)
                        rc = -EINVAL;
        }
        return rc;
}

bool tl_param_parse(const struct tl_param *p, const char *v, double *out, char *msg, size_t len)
{
        if (p->kind == TL_PARAM_CHOICE) {
                for (int k = 0; p->choices[k]; k++) {
                        if (strcmp(p->choices[k], v) == 0) {
                                *out = k;
                                return true;
                        }
                }
                size_t n = (size_t)snprintf(msg, len, "expected one of");
                for (int j = 0; p->choices[j] && n < len; j++)
                        n += (size_t)snprintf(msg + n, len - n, "%s %s", j ? "," : "",
                                              p->choices[j]);
                return false;
        }
        if (p->kind == TL_PARAM_INT) {
                int64_t i;
                if (params_parse_i64(v, &i) && (double)i >= p->min && (double)i <= p->max) {
                        *out = (double)i;
                        return true;
                }
                snprintf(msg, len, "expected an integer in [%.0f, %.0f]", p->min, p->max);
                return false;
        }
        if (params_parse_double(v, out) && *out >= p->min && *out <= p->max)
                return true;
        snprintf(msg, len, "expected a number in [%g, %g]", p->min, p->max);
        return false;
}
