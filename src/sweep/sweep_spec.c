/* sweep/sweep_spec.c: a sweep spec (YAML, docs/sweeps.md) -> struct
 * sweep_spec: panels, their fixed parameters and their points in spec
 * order.
 *
 * The YAML goes through the located tree parser of base/yaml.h (no
 * aliases, no tags, bounded nesting and size), with the spec's own limits
 * and wording. The walker then reports
 * every problem it finds and keeps going: unknown or duplicate keys (with
 * a did-you-mean hint), wrong shapes, unknown kernels, parameter names the
 * kernel or the topology does not have, values out of a kernel
 * parameter's range, linked grid columns of unequal length, too many
 * points. Everything is checked before any point runs: a typo in a spec
 * costs nothing. Constraints that only the kernel's setup knows (shapes
 * that do not map onto the machine) fail their point at run time. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/fsutil.h"
#include "base/names.h"
#include "base/util.h"
#include "base/yaml.h"
#include "sweep/sweep_int.h"
#include "tl/tl_run.h"

/* A grid axis: one parameter with its values, or several linked
 * parameters (columns) whose i-th values go together. */
struct axis {
        const struct ynode *keys[16]; /* column keys */
        const struct ynode *vals[16]; /* column values: a list, or a scalar (one value) */
        size_t n_cols;               /* columns in use */
        size_t n_values;             /* values per column */
};

/* The keys a spec or a panel may state. */
struct scope {
        const struct ynode *name;    /* panel name / sweep name */
        const struct ynode *kernel;  /* kernel name */
        const struct ynode *params;  /* map of fixed parameters */
        const struct ynode *grid;    /* map of axes */
        const struct ynode *points;  /* list of maps */
        const struct ynode *figure;  /* map of figure options */
        const struct ynode *topology; /* machine file */
        unsigned line;               /* where the scope's map starts */
};

#define MAX_TOPO_FILES 64            /* distinct machine files in one spec */

struct parser {
        const char *file;            /* label of messages */
        struct diag *d;              /* problems */
        struct sweep_spec *s;        /* being filled */
        struct topo topo;            /* the machine, for checking topology keys */
        bool topo_ok;                /* topo loaded */
        const struct ynode *root;    /* the document: where unlocated problems point */
        const struct tl_kernel *axis_kernels[16]; /* the panel's grid axis `kernel`, if any */
        size_t n_axis_kernels;       /* its entries; 0: the panel has one kernel */
        const char *base_dir;        /* relative machine files are relative to it */
        const char *topo_seen[MAX_TOPO_FILES]; /* machine files checked (resolved, owned) */
        bool topo_good[MAX_TOPO_FILES]; /* each loaded */
        size_t n_topo_seen;          /* entries */
};

static const char *const top_keys[] = { "version", "name", "kernel", "topology", "params",
                                        "grid", "points", "figure", "panels", "machines",
                                        NULL };
static const char *const panel_keys[] = { "name", "kernel", "params", "grid", "points",
                                          "figure", "topology", NULL };
static const char *const figure_keys[] = { "x", "series", "x_label", "roofline_bytes_per_x",
                                           "log", NULL };

static void err(struct parser *p, const struct ynode *n, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));

static void err(struct parser *p, const struct ynode *n, const char *fmt, ...)
{
        char msg[1024];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(msg, sizeof msg, fmt, ap);
        va_end(ap);
        if (!n)
                n = p->root;
        /* Inherited settings are checked once per panel: say each thing once. */
        char text[1200];
        snprintf(text, sizeof text, "%s:%u:%u: error: %s", p->file, n ? n->line : 0,
                 n ? n->col : 0, msg);
        for (const struct diag_msg *m = p->d->head; m; m = m->next)
                if (strcmp(m->text, text) == 0)
                        return;
        diag_error_at(p->d, p->file, n ? n->line : 0, n ? n->col : 0, "%s", msg);
}

static const char *kind_name(const struct ynode *n)
{
        switch (n->kind) {
        case YN_SCALAR:
                return n->len ? "a single value" : "nothing";
        case YN_MAP:
                return "a map";
        case YN_SEQ:
                return "a list";
        default:
                return "an alias";
        }
}

/* Own a copy of s (len bytes) in the spec; NULL on OOM (reported). */
static const char *keep(struct parser *p, const char *str, size_t len)
{
        struct sweep_spec *s = p->s;
        char **n = util_grow(s->strs, s->n_strs, &s->cap_strs, sizeof *n, 64);
        if (!n)
                goto oom;
        s->strs = n;
        char *c = malloc(len + 1);
        if (!c)
                goto oom;
        memcpy(c, str, len);
        c[len] = '\0';
        s->strs[s->n_strs++] = c;
        return c;
oom:
        diag_error(p->d, "%s: out of memory", p->file);
        return NULL;
}

static bool is_text(const struct ynode *n)
{
        return n->kind == YN_SCALAR && n->len > 0 && !memchr(n->text, '\0', n->len);
}

/* Report that n is not what it must be: "<what it must be>, got <what n
 * is>". An alias was reported where it stands, so it is passed over. */
static void wrong(struct parser *p, const struct ynode *n, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));

static void wrong(struct parser *p, const struct ynode *n, const char *fmt, ...)
{
        if (n->kind == YN_ALIAS)
                return;
        char must[900];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(must, sizeof must, fmt, ap);
        va_end(ap);
        err(p, n, "%s, got %s", must, kind_name(n));
}

/* Whether key names a parameter (a plain word); if not, says so. */
static bool param_name(struct parser *p, const struct ynode *key)
{
        if (is_text(key))
                return true;
        wrong(p, key, "a parameter name must be a plain word");
        return false;
}

/* Match map's keys against known[] into slots[] (same order). Reports a
 * non-map, odd keys, duplicates and unknown keys (with a hint). */
static bool read_map(struct parser *p, const struct ynode *map, const char *what,
                     const char *const *known, const struct ynode **slots)
{
        size_t n_known = 0;
        while (known[n_known])
                slots[n_known++] = NULL;
        if (map->kind != YN_MAP) {
                wrong(p, map, "%s must be a map of keys", what);
                return false;
        }
        for (size_t i = 0; i + 1 < map->n_kids; i += 2) {
                const struct ynode *k = map->kids[i];
                if (k->kind == YN_ALIAS)
                        continue;
                if (!is_text(k) || k->len > 128) {
                        err(p, k, "a key in %s must be a plain word, got %s", what, kind_name(k));
                        continue;
                }
                size_t j = 0;
                while (known[j] && strcmp(known[j], k->text) != 0)
                        j++;
                if (!known[j]) {
                        const char *hint = diag_suggest(k->text, known, n_known);
                        if (hint) {
                                err(p, k, "unknown key '%s' in %s; did you mean '%s'?", k->text,
                                    what, hint);
                        } else {
                                char list[512] = "";
                                for (size_t m = 0; known[m]; m++)
                                        snprintf(list + strlen(list), sizeof list - strlen(list),
                                                 "%s%s", m ? ", " : "", known[m]);
                                err(p, k, "unknown key '%s' in %s (known keys: %s)", k->text,
                                    what, list);
                        }
                        continue;
                }
                if (slots[j]) {
                        const struct ynode *first = NULL;
                        for (size_t m = 0; m < i; m += 2)
                                if (map->kids[m]->kind == YN_SCALAR &&
                                    strcmp(map->kids[m]->text, k->text) == 0)
                                        first = map->kids[m];
                        err(p, k, "duplicate key '%s' in %s (first given at %u:%u)", k->text, what,
                            first ? first->line : 0, first ? first->col : 0);
                        continue;
                }
                slots[j] = map->kids[i + 1];
        }
        return true;
}

/* The value read_map put in slots for key, one of keys. */
static const struct ynode *slot_of(const char *const *keys, const struct ynode **slots,
                                   const char *key)
{
        for (size_t i = 0; keys[i]; i++)
                if (strcmp(keys[i], key) == 0)
                        return slots[i];
        return NULL;
}

static void read_scope(struct parser *p, const struct ynode *map, struct scope *sc, bool top,
                       const char *what, const struct ynode **extra)
{
        const struct ynode *slots[16];
        const char *const *keys = top ? top_keys : panel_keys;
        memset(sc, 0, sizeof *sc);
        sc->line = map->line;
        if (!read_map(p, map, what, keys, slots))
                return;
        sc->name = slot_of(keys, slots, "name");
        sc->kernel = slot_of(keys, slots, "kernel");
        sc->topology = slot_of(keys, slots, "topology");
        sc->params = slot_of(keys, slots, "params");
        sc->grid = slot_of(keys, slots, "grid");
        sc->points = slot_of(keys, slots, "points");
        sc->figure = slot_of(keys, slots, "figure");
        if (top) {
                extra[0] = slot_of(keys, slots, "version");
                extra[1] = slot_of(keys, slots, "panels");
                extra[2] = slot_of(keys, slots, "machines");
        }
}

/* ---- parameter checks ---- */

/* Re-report the messages of tmp at node n (dropping their own location,
 * which names a --set that the user did not type). */
static void relocate(struct parser *p, struct diag *tmp, const struct ynode *n, const char *panel)
{
        for (const struct diag_msg *m = tmp->head; m; m = m->next) {
                const char *body = strstr(m->text, "error: ");
                body = body ? body + 7 : m->text;
                if (strncmp(body, "--set ", 6) == 0 && strstr(body, ": "))
                        body = strstr(body, ": ") + 2;  /* the spec's location says it */
                if (panel)
                        err(p, n, "%s (panel %s)", body, panel);
                else
                        err(p, n, "%s", body);
        }
}

static void check_kernel_param(struct parser *p, const struct tl_kernel *k,
                               const struct ynode *key, const struct ynode *val);
static const char *machine_file(struct parser *p, const struct ynode *tn, bool *builtin);
static void machine_variant(struct parser *p, const struct ynode *val);

/* Check one parameter setting for kernel k (NULL: unknown kernel, check
 * nothing kernel-specific). */
static void check_param(struct parser *p, const struct tl_kernel *k, const struct ynode *key,
                        const struct ynode *val, const char *panel)
{
        if (val->kind != YN_SCALAR) {
                wrong(p, val, "parameter '%s' must be a single value", key->text);
                return;
        }
        if (memchr(val->text, '\0', val->len) || memchr(val->text, '\n', val->len)) {
                err(p, val, "parameter '%s': a value cannot hold a NUL or a line break",
                    key->text);
                return;
        }
        if (strcmp(key->text, "topology") == 0) {
                machine_file(p, val, NULL);
                return;
        }
        if (strcmp(key->text, "machine") == 0) {
                machine_variant(p, val);
                return;
        }
        if (tl_set_is_topo(k, key->text, key->len)) {
                if (!p->topo_ok)
                        return;
                struct diag tmp;
                diag_init(&tmp);
                struct topo t = p->topo;
                char path[256];
                topo_set(&t, tl_set_topo_path(key->text, key->len, path, sizeof path), val->text,
                         &tmp);
                relocate(p, &tmp, tmp.head && strstr(tmp.head->text, "topology parameter")
                                          ? key : val, panel);
                diag_fini(&tmp);
                return;
        }
        if (p->n_axis_kernels) {
                /* A grid over kernels: the axis itself, checked when it was
                 * read, and parameters every one of its kernels must take. */
                if (strcmp(key->text, "kernel") == 0)
                        return;
                for (size_t i = 0; i < p->n_axis_kernels; i++)
                        check_kernel_param(p, p->axis_kernels[i], key, val);
                return;
        }
        check_kernel_param(p, k, key, val);
}

/* Check kernel parameter key = val for kernel k (NULL: nothing to check). */
static void check_kernel_param(struct parser *p, const struct tl_kernel *k,
                               const struct ynode *key, const struct ynode *val)
{
        if (!k)
                return;
        const struct tl_param *q = tl_kernel_param(k, key->text, key->len);
        if (!q) {
                const char *names[64] = { NULL };
                size_t n = 0;
                for (const struct tl_param *it = k->params; it && it->name && n < 64; it++)
                        names[n++] = it->name;
                const char *hint = diag_suggest(key->text, names, n);
                if (hint)
                        err(p, key, "kernel %s has no parameter '%s'; did you mean '%s'?",
                            k->name, key->text, hint);
                else if (n)
                        err(p, key, "kernel %s has no parameter '%s' (see 'cubesim kernels'; "
                            "topology parameters are dotted paths like pe.dma.bw_gbps)",
                            k->name, key->text);
                else
                        err(p, key, "kernel %s takes no parameters (got '%s'; topology "
                            "parameters are dotted paths like pe.dma.bw_gbps)",
                            k->name, key->text);
                return;
        }
        double x;
        char msg[320];
        if (!tl_param_parse(q, val->text, &x, msg, sizeof msg))
                err(p, val, "%s=%s: %s", q->name, val->text, msg);
}

static bool fill_kv(struct parser *p, struct sweep_kv *kv, const struct ynode *key,
                    const struct ynode *val)
{
        kv->key = keep(p, key->text, key->len);
        kv->value = val->kind == YN_SCALAR ? keep(p, val->text, val->len) : keep(p, "", 0);
        kv->quoted = val->kind == YN_SCALAR && !val->plain;
        kv->line = val->line;
        kv->col = val->col;
        kv->key_line = key->line;
        kv->key_col = key->col;
        return kv->key && kv->value;
}

/* ---- panels ---- */

/* Fixed parameters: the top level's, then the panel's (which win). */
static void panel_params(struct parser *p, struct sweep_panel *pn, const struct tl_kernel *k,
                         const struct ynode *top, const struct ynode *own)
{
        const struct ynode *maps[2] = { top, own };
        size_t cap = 0;
        for (int m = 0; m < 2; m++)
                if (maps[m] && maps[m]->kind == YN_MAP)
                        cap += maps[m]->n_kids / 2;
        pn->params = cap ? calloc(cap, sizeof *pn->params) : NULL;
        if (cap && !pn->params) {
                diag_error(p->d, "%s: out of memory", p->file);
                return;
        }
        for (int m = 0; m < 2; m++) {
                const struct ynode *map = maps[m];
                if (!map)
                        continue;
                if (map->kind != YN_MAP) {
                        wrong(p, map, "params must be a map of parameter: value");
                        continue;
                }
                for (size_t i = 0; i + 1 < map->n_kids; i += 2) {
                        const struct ynode *key = map->kids[i], *val = map->kids[i + 1];
                        if (!param_name(p, key)) {
                                continue;
                        }
                        bool dup = false;
                        for (size_t j = 0; j < i; j += 2)
                                if (is_text(map->kids[j]) &&
                                    strcmp(map->kids[j]->text, key->text) == 0)
                                        dup = true;
                        if (dup) {
                                err(p, key, "duplicate parameter '%s' in params", key->text);
                                continue;
                        }
                        check_param(p, k, key, val, pn->line ? pn->name : NULL);
                        size_t at = pn->n_params;
                        for (size_t j = 0; j < pn->n_params; j++)
                                if (strcmp(pn->params[j].key, key->text) == 0)
                                        at = j;
                        if (at == pn->n_params)
                                pn->n_params++;
                        fill_kv(p, &pn->params[at], key, val);
                }
        }
}

/* Read a grid map into axes; returns the number of axes (0 if bad). */
static size_t read_grid(struct parser *p, const struct ynode *grid, const struct tl_kernel *k,
                        const char *panel, struct axis *axes, size_t max_axes)
{
        if (grid->kind != YN_MAP) {
                wrong(p, grid, "grid must be a map of parameter: [values]");
                return 0;
        }
        size_t n_axes = 0;
        bool bad = false;
        for (size_t i = 0; i + 1 < grid->n_kids; i += 2) {
                const struct ynode *key = grid->kids[i], *val = grid->kids[i + 1];
                if (!is_text(key)) {
                        wrong(p, key, "a grid axis must be named by a plain word");
                        bad = true;
                        continue;
                }
                if (n_axes == max_axes) {
                        err(p, key, "more than %zu grid axes", max_axes);
                        return 0;
                }
                struct axis *ax = &axes[n_axes];
                memset(ax, 0, sizeof *ax);
                if (val->kind == YN_MAP) {
                        /* Linked columns: name: {a: [..], b: [..]}. */
                        for (size_t j = 0; j + 1 < val->n_kids; j += 2) {
                                if (ax->n_cols == 16) {
                                        err(p, val->kids[j], "more than 16 linked parameters "
                                            "in grid axis '%s'", key->text);
                                        bad = true;
                                        break;
                                }
                                ax->keys[ax->n_cols] = val->kids[j];
                                ax->vals[ax->n_cols++] = val->kids[j + 1];
                        }
                        if (ax->n_cols == 0) {
                                err(p, val, "grid axis '%s' links no parameters", key->text);
                                bad = true;
                                continue;
                        }
                } else {
                        ax->keys[0] = key;
                        ax->vals[0] = val;
                        ax->n_cols = 1;
                }
                for (size_t c = 0; c < ax->n_cols; c++) {
                        const struct ynode *ck = ax->keys[c], *cv = ax->vals[c];
                        if (!param_name(p, ck)) {
                                bad = true;
                                continue;
                        }
                        /* A parameter on two axes would make points ambiguous. */
                        for (size_t a = 0; a <= n_axes; a++)
                                for (size_t c2 = 0; c2 < axes[a].n_cols; c2++) {
                                        const struct ynode *o = axes[a].keys[c2];
                                        if ((a < n_axes || c2 < c) && is_text(o) &&
                                            strcmp(o->text, ck->text) == 0) {
                                                err(p, ck, "parameter '%s' is on the grid twice "
                                                    "(first at %u:%u)", ck->text, o->line,
                                                    o->col);
                                                bad = true;
                                        }
                                }
                        size_t n;
                        if (cv->kind == YN_SEQ) {
                                n = cv->n_kids;
                                if (n == 0) {
                                        err(p, cv, "grid parameter '%s' has an empty list of "
                                            "values", ck->text);
                                        bad = true;
                                }
                                for (size_t j = 0; j < n; j++)
                                        check_param(p, k, ck, cv->kids[j], panel);
                        } else if (cv->kind == YN_SCALAR) {
                                n = 1;
                                check_param(p, k, ck, cv, panel);
                        } else {
                                wrong(p, cv, "grid parameter '%s' must be a list of values",
                                      ck->text);
                                bad = true;
                                continue;
                        }
                        if (c == 0) {
                                ax->n_values = n;
                        } else if (n != ax->n_values) {
                                err(p, cv, "linked grid parameter '%s' has %zu values, but '%s' "
                                    "has %zu: linked parameters move together and need as "
                                    "many", ck->text, n, ax->keys[0]->text, ax->n_values);
                                bad = true;
                        }
                }
                n_axes++;
        }
        if (n_axes == 0 && !bad)
                err(p, grid, "grid has no axes");
        return bad ? 0 : n_axes;
}

/* Check an explicit point list; returns the number of points (0 if bad). */
static size_t check_points(struct parser *p, const struct ynode *pts, const struct tl_kernel *k,
                           const char *panel)
{
        if (pts->kind != YN_SEQ) {
                wrong(p, pts, "points must be a list of maps (parameter: value)");
                return 0;
        }
        bool bad = false;
        for (size_t i = 0; i < pts->n_kids; i++) {
                const struct ynode *m = pts->kids[i];
                if (m->kind != YN_MAP) {
                        wrong(p, m, "a point must be a map of parameter: value");
                        bad = true;
                        continue;
                }
                for (size_t j = 0; j + 1 < m->n_kids; j += 2) {
                        const struct ynode *key = m->kids[j];
                        if (!param_name(p, key)) {
                                bad = true;
                                continue;
                        }
                        for (size_t j2 = 0; j2 < j; j2 += 2)
                                if (is_text(m->kids[j2]) &&
                                    strcmp(m->kids[j2]->text, key->text) == 0) {
                                        err(p, key, "duplicate parameter '%s' in a point",
                                            key->text);
                                        bad = true;
                                }
                        check_param(p, k, key, m->kids[j + 1], panel);
                }
        }
        if (pts->n_kids == 0 && !bad) {
                err(p, pts, "points is an empty list");
                bad = true;
        }
        return bad ? 0 : pts->n_kids;
}

static bool parse_number(const char *s, double *out)
{
        char *end;
        errno = 0;
        double x = strtod(s, &end);
        if (*s == '\0' || *end != '\0' || errno == ERANGE || !isfinite(x))
                return false;
        *out = x;
        return true;
}

static void read_figure(struct parser *p, const struct ynode *map, struct sweep_figure *f)
{
        const struct ynode *slots[8];
        if (!read_map(p, map, "figure", figure_keys, slots))
                return;
        const char *names[3] = { "x", "series", "x_label" };
        const char **dst[3] = { &f->x, &f->series, &f->x_label };
        for (int i = 0; i < 3; i++) {
                const struct ynode *v = slots[i];
                if (!v)
                        continue;
                if (!is_text(v) || memchr(v->text, '\n', v->len) || memchr(v->text, '"', v->len))
                        err(p, v, "figure %s must be a single line of text without '\"', got %s",
                            names[i], kind_name(v));
                else
                        *dst[i] = keep(p, v->text, v->len);
        }
        if (slots[3]) {
                double x;
                if (slots[3]->kind != YN_SCALAR || !parse_number(slots[3]->text, &x) || x < 0)
                        err(p, slots[3], "figure roofline_bytes_per_x must be a number >= 0 "
                            "(bytes per unit of x), got '%s'",
                            slots[3]->kind == YN_SCALAR ? slots[3]->text : kind_name(slots[3]));
                else
                        f->roofline_bytes_per_x = x;
        }
        if (slots[4]) {
                const char *v = slots[4]->kind == YN_SCALAR ? slots[4]->text : "";
                if (strcmp(v, "true") == 0)
                        f->log = 1;
                else if (strcmp(v, "false") == 0)
                        f->log = 0;
                else if (strcmp(v, "auto") == 0)
                        f->log = -1;
                else
                        err(p, slots[4], "figure log must be true, false or auto, got '%s'",
                            slots[4]->kind == YN_SCALAR ? v : kind_name(slots[4]));
        }
}

/* Whether node is a text that is a name (base/names.h: a sweep's name
 * becomes out/NAME, a panel's time_NAME.dat); if not, why says what breaks
 * the rule. */
static bool good_name(const struct ynode *node, char *why, size_t len)
{
        if (is_text(node))
                return name_ok(node->text, why, len);
        snprintf(why, len, "a %s", kind_name(node));
        return false;
}

/* The kernel of a scope, or NULL (reported). */
static const struct tl_kernel *scope_kernel(struct parser *p, const struct ynode *kn,
                                            const struct ynode *where, const char *panel)
{
        if (!kn) {
                err(p, where, "panel %s names no kernel: give 'kernel:' in the panel or at the "
                    "top level", panel);
                return NULL;
        }
        if (!is_text(kn)) {
                wrong(p, kn, "kernel must be a kernel's name");
                return NULL;
        }
        const struct tl_kernel *k = tl_kernel_find(kn->text);
        if (k)
                return k;
        const char *names[512];
        size_t n = 0;
        char list[1024] = "";
        for (const struct tl_kernel *it; n < 512 && (it = tl_kernel_at(n));) {
                names[n++] = it->name;
                snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", n > 1 ? ", " : "",
                         it->name);
        }
        const char *hint = diag_suggest(kn->text, names, n);
        if (hint)
                err(p, kn, "no kernel '%s'; did you mean '%s'? (a kernel of your own: "
                    "--kernels LIB.so)", kn->text, hint);
        else
                err(p, kn, "no kernel '%s' (kernels: %s; a kernel of your own is loaded with "
                    "--kernels LIB.so)", kn->text, list);
        return NULL;
}

/* A panel's shape before its points are laid out. */
struct panel_plan {
        const struct tl_kernel *k;   /* its kernel (NULL: bad) */
        struct axis axes[16];        /* grid axes */
        size_t n_axes;               /* 0: no grid */
        const struct ynode *points;  /* explicit points, or NULL */
        size_t n_grid, n_explicit;   /* points of each kind */
        size_t n_coords;             /* coordinates over all its points */
};

/* The values of grid axis `kernel`, if the grid has one: its kernels into
 * p->axis_kernels and their names, " vs "-joined, into pn->kernel. false
 * when the axis is bad (reported). */
static bool kernel_axis(struct parser *p, struct sweep_panel *pn, const struct ynode *grid,
                        const struct ynode *kn)
{
        p->n_axis_kernels = 0;
        const struct ynode *vals = NULL;
        for (size_t i = 0; grid && grid->kind == YN_MAP && i + 1 < grid->n_kids; i += 2)
                if (is_text(grid->kids[i]) && strcmp(grid->kids[i]->text, "kernel") == 0)
                        vals = grid->kids[i + 1];
        if (!vals)
                return true;
        if (kn) {
                err(p, kn, "panel %s names its kernel twice: by 'kernel:' and by its grid "
                    "axis 'kernel' (%u:%u); keep one", pn->name, vals->line, vals->col);
                return false;
        }
        size_t n = vals->kind == YN_SEQ ? vals->n_kids : 1;
        if (n > ARRAY_LEN(p->axis_kernels)) {
                err(p, vals, "more than %zu kernels on grid axis 'kernel'",
                    ARRAY_LEN(p->axis_kernels));
                return false;
        }
        char names[512] = "";
        /* Every value is looked up, so each unknown kernel is reported. */
        bool shaped = vals->kind == YN_SEQ || vals->kind == YN_SCALAR, ok = shaped;
        for (size_t i = 0; shaped && i < n; i++) {
                const struct ynode *v = vals->kind == YN_SEQ ? vals->kids[i] : vals;
                const struct tl_kernel *k = scope_kernel(p, v, v, pn->name);
                if (!k) {
                        ok = false;
                        continue;
                }
                p->axis_kernels[p->n_axis_kernels++] = k;
                snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s",
                         i ? " vs " : "", k->name);
        }
        if (!ok) {
                p->n_axis_kernels = 0;
                return false;
        }
        pn->kernel = keep(p, names, strlen(names));
        return true;
}

static bool plan_panel(struct parser *p, struct sweep_panel *pn, struct panel_plan *pl,
                       const struct scope *top, const struct scope *own)
{
        const char *label = pn->line ? pn->name : NULL;
        const struct ynode *kn = own && own->kernel ? own->kernel : top->kernel;
        const struct ynode *grid = top->grid, *points = top->points;
        if (own && (own->grid || own->points)) {
                grid = own->grid;
                points = own->points;
        }
        if (!kernel_axis(p, pn, grid, kn))
                return false;
        if (p->n_axis_kernels) {
                pl->k = p->axis_kernels[0];
        } else {
                pl->k = scope_kernel(p, kn, own ? own->name : NULL, pn->name);
                pn->kernel = pl->k ? keep(p, pl->k->name, strlen(pl->k->name)) : NULL;
        }
        panel_params(p, pn, pl->k, top->params, own ? own->params : NULL);
        unsigned before = p->d->n_errors;
        if (grid) {
                pl->n_axes = read_grid(p, grid, pl->k, label, pl->axes, 16);
                if (pl->n_axes) {
                        pl->n_grid = 1;
                        size_t per = 0;
                        double total = 1;
                        for (size_t a = 0; a < pl->n_axes; a++) {
                                per += pl->axes[a].n_cols;
                                total *= (double)pl->axes[a].n_values;
                        }
                        if (total > SWEEP_MAX_POINTS) {
                                err(p, grid, "the grid has %.0f points, more than %u: split the "
                                    "sweep", total, SWEEP_MAX_POINTS);
                                return false;
                        }
                        for (size_t a = 0; a < pl->n_axes; a++)
                                pl->n_grid *= pl->axes[a].n_values;
                        pl->n_coords += pl->n_grid * per;
                }
        }
        if (points) {
                pl->n_explicit = check_points(p, points, pl->k, label);
                pl->points = points;
                for (size_t i = 0; i < pl->n_explicit; i++)
                        pl->n_coords += points->kids[i]->n_kids / 2;
        }
        if (!grid && !points && p->d->n_errors == 0)    /* else likely a misspelt grid */
                err(p, own ? own->name : NULL, "panel %s has no points: give it a grid or "
                    "points (or give them at the top level)", pn->name);
        if (pn->figure.x || pn->figure.series) {
                /* The figure's parameters must vary in this panel. */
                const char *want[2] = { pn->figure.x, pn->figure.series };
                const char *what[2] = { "x", "series" };
                for (int w = 0; w < 2; w++) {
                        if (!want[w])
                                continue;
                        bool found = false;
                        for (size_t a = 0; a < pl->n_axes; a++)
                                for (size_t c = 0; c < pl->axes[a].n_cols; c++)
                                        if (strcmp(pl->axes[a].keys[c]->text, want[w]) == 0)
                                                found = true;
                        for (size_t i = 0; i < pl->n_explicit && !found; i++)
                                for (size_t j = 0; j + 1 < points->kids[i]->n_kids; j += 2)
                                        if (strcmp(points->kids[i]->kids[j]->text, want[w]) == 0)
                                                found = true;
                        if (found || p->d->n_errors != before)
                                continue;
                        char list[512] = "";
                        for (size_t a = 0; a < pl->n_axes; a++)
                                for (size_t c = 0; c < pl->axes[a].n_cols; c++)
                                        snprintf(list + strlen(list), sizeof list - strlen(list),
                                                 "%s%s", list[0] ? ", " : "",
                                                 pl->axes[a].keys[c]->text);
                        err(p, own && own->figure ? own->figure : top->figure,
                            "figure %s '%s' is not a parameter that panel %s varies%s%s%s",
                            what[w], want[w], pn->name, list[0] ? " (its grid varies: " : "",
                            list, list[0] ? ")" : "");
                }
        }
        return p->d->n_errors == before;
}

/* Lay a planned panel's points out in spec->points from *at. */
static void lay_out(struct parser *p, struct sweep_panel *pn, size_t panel,
                    const struct panel_plan *pl, size_t *at)
{
        struct sweep_spec *s = p->s;
        pn->first_point = *at;
        for (size_t g = 0; g < pl->n_grid; g++) {
                struct sweep_point *pt = &s->points[(*at)++];
                pt->panel = panel;
                pt->coords = &s->pool[s->n_pool];
                /* Row-major: the first axis varies slowest. */
                size_t rest = g, idx[16];
                for (size_t a = pl->n_axes; a-- > 0;) {
                        idx[a] = rest % pl->axes[a].n_values;
                        rest /= pl->axes[a].n_values;
                }
                for (size_t a = 0; a < pl->n_axes; a++)
                        for (size_t c = 0; c < pl->axes[a].n_cols; c++) {
                                const struct ynode *v = pl->axes[a].vals[c];
                                if (v->kind == YN_SEQ)
                                        v = v->kids[idx[a]];
                                fill_kv(p, &s->pool[s->n_pool++], pl->axes[a].keys[c], v);
                                pt->n_coords++;
                        }
        }
        for (size_t e = 0; e < pl->n_explicit; e++) {
                const struct ynode *m = pl->points->kids[e];
                struct sweep_point *pt = &s->points[(*at)++];
                pt->panel = panel;
                pt->coords = &s->pool[s->n_pool];
                for (size_t j = 0; j + 1 < m->n_kids; j += 2) {
                        fill_kv(p, &s->pool[s->n_pool++], m->kids[j], m->kids[j + 1]);
                        pt->n_coords++;
                }
        }
        pn->n_points = *at - pn->first_point;
}

static const char *base_name(const char *path)
{
        const char *b = strrchr(path, '/');
        return b ? b + 1 : path;
}

/* A machine file named in the spec, resolved against the spec's folder. */
static void resolve(const struct parser *p, const char *name, char *buf, size_t len)
{
        if (name[0] == '/' || !p->base_dir || !*p->base_dir)
                snprintf(buf, len, "%s", name);
        else
                snprintf(buf, len, "%s/%s", p->base_dir, name);
}

/* A `topology` value: 'default' (*builtin, NULL returned) or a machine
 * file that loads, its resolved path returned (owned by the spec). Each
 * file is loaded once; a bad one is reported where it is first named. */
static const char *machine_file(struct parser *p, const struct ynode *tn, bool *builtin)
{
        if (builtin)
                *builtin = false;
        if (is_text(tn) && tn->plain && strcmp(tn->text, "default") == 0) {
                if (builtin)
                        *builtin = true;
                return NULL;
        }
        if (!is_text(tn) || memchr(tn->text, '\n', tn->len)) {
                wrong(p, tn, "topology must be 'default' or a machine file's name");
                return NULL;
        }
        char path[4096];
        resolve(p, tn->text, path, sizeof path);
        for (size_t i = 0; i < p->n_topo_seen; i++)
                if (strcmp(p->topo_seen[i], path) == 0)
                        return p->topo_good[i] ? p->topo_seen[i] : NULL;
        if (p->n_topo_seen == MAX_TOPO_FILES) {
                err(p, tn, "more than %d machine files in one spec", MAX_TOPO_FILES);
                return NULL;
        }
        const char *kept = keep(p, path, strlen(path));
        if (!kept)
                return NULL;
        struct topo t;
        struct diag tmp;
        diag_init(&tmp);
        bool ok = topo_load_file(path, &t, &tmp) == 0;
        if (ok)
                topo_fini(&t);
        else
                err(p, tn, "topology '%s' is not usable (its problems follow)", tn->text);
        diag_move(p->d, &tmp);
        diag_fini(&tmp);
        p->topo_seen[p->n_topo_seen] = kept;
        p->topo_good[p->n_topo_seen++] = ok;
        return ok ? kept : NULL;
}

/* A `machine` value: the name of one of the spec's `machines:`. */
static void machine_variant(struct parser *p, const struct ynode *val)
{
        const struct sweep_spec *s = p->s;
        if (!is_text(val)) {
                wrong(p, val, "machine must name one of the spec's 'machines:'");
                return;
        }
        const char *names[64] = { NULL };
        size_t n = 0;
        char list[512] = "";
        for (size_t i = 0; i < s->n_machines; i++) {
                if (strcmp(s->machines[i].name, val->text) == 0)
                        return;
                if (n < 64)
                        names[n++] = s->machines[i].name;
                snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", i ? ", " : "",
                         s->machines[i].name);
        }
        const char *hint = diag_suggest(val->text, names, n);
        if (hint)
                err(p, val, "no machine '%s' in 'machines:'; did you mean '%s'?", val->text, hint);
        else if (n)
                err(p, val, "no machine '%s' in 'machines:' (machines: %s)", val->text, list);
        else
                err(p, val, "no machine '%s': the spec has no 'machines:' map of named "
                    "variants (NAME: {dotted.key: value, ...})", val->text);
}

/* `machines:`: NAME -> map of topology parameters. */
static void read_machines(struct parser *p, const struct ynode *map)
{
        struct sweep_spec *s = p->s;
        if (map->kind != YN_MAP || map->n_kids == 0) {
                wrong(p, map, "machines must be a map of NAME: {dotted.key: value, ...}");
                return;
        }
        s->machines = calloc(map->n_kids / 2, sizeof *s->machines);
        if (!s->machines) {
                diag_error(p->d, "%s: out of memory", p->file);
                return;
        }
        for (size_t i = 0; i + 1 < map->n_kids; i += 2) {
                const struct ynode *name = map->kids[i], *sets = map->kids[i + 1];
                char why[160];
                if (!good_name(name, why, sizeof why)) {
                        err(p, name, "machine name %s; %s", why, NAME_RULE);
                        continue;
                }
                bool dup = false;
                for (size_t j = 0; j < s->n_machines; j++)
                        dup = dup || strcmp(s->machines[j].name, name->text) == 0;
                if (dup) {
                        err(p, name, "machine '%s' is named twice in 'machines:'", name->text);
                        continue;
                }
                if (sets->kind != YN_MAP) {
                        wrong(p, sets, "machine '%s' must be a map of topology parameters "
                              "(dotted.key: value)", name->text);
                        continue;
                }
                struct sweep_machine *m = &s->machines[s->n_machines++];
                m->name = keep(p, name->text, name->len);
                m->sets = calloc(sets->n_kids / 2 + 1, sizeof *m->sets);
                if (!m->name || !m->sets) {
                        diag_error(p->d, "%s: out of memory", p->file);
                        return;
                }
                for (size_t j = 0; j + 1 < sets->n_kids; j += 2) {
                        const struct ynode *key = sets->kids[j], *val = sets->kids[j + 1];
                        if (!param_name(p, key))
                                continue;
                        if (!memchr(key->text, '.', key->len)) {
                                err(p, key, "machine '%s': '%s' is not a topology parameter "
                                    "(a dotted path like pe.dma.bw_gbps)", name->text, key->text);
                                continue;
                        }
                        check_param(p, NULL, key, val, NULL);
                        fill_kv(p, &m->sets[m->n_sets++], key, val);
                }
        }
}

static void load_topology(struct parser *p, const struct ynode *tn)
{
        struct sweep_spec *s = p->s;
        bool builtin;
        if (!tn || (s->topo_path = machine_file(p, tn, &builtin), builtin)) {
                p->topo_ok = topo_load_default(&p->topo, p->d) == 0;
                return;
        }
        p->topo_ok = s->topo_path && topo_load_file(s->topo_path, &p->topo, p->d) == 0;
}

/* Whether point or panel parameters name a machine (file or variant). */
static bool names_machine(const struct sweep_kv *kv, size_t n)
{
        for (size_t i = 0; i < n; i++)
                if (strcmp(kv[i].key, "topology") == 0 || strcmp(kv[i].key, "machine") == 0)
                        return true;
        return false;
}

static bool good_name(const struct ynode *node, char *why, size_t len);

static void parse_root(struct parser *p, const struct ynode *root, const char *base_dir)
{
        struct sweep_spec *s = p->s;
        struct scope top;
        const struct ynode *extra[3] = { NULL, NULL, NULL };
        p->root = root;
        read_scope(p, root, &top, true, "the sweep spec", extra);
        if (root->kind != YN_MAP)
                return;
        const struct ynode *version = extra[0], *panels = extra[1], *machines = extra[2];
        if (!version)
                err(p, root, "the spec has no 'version:'; write 'version: 1' first");
        else if (!is_text(version) || strcmp(version->text, "1") != 0)
                err(p, version, "version must be 1, got '%s'",
                    version->kind == YN_SCALAR ? version->text : kind_name(version));
        if (top.name) {
                char why[160];
                if (!good_name(top.name, why, sizeof why))
                        err(p, top.name, "name %s; %s (it names the output directory out/NAME)",
                            why, NAME_RULE);
                else
                        s->name = keep(p, top.name->text, top.name->len);
        }
        if (!s->name) {
                char stem[128];
                snprintf(stem, sizeof stem, "%s", base_name(p->file));
                char *dot = strrchr(stem, '.');
                if (dot && (strcmp(dot, ".yaml") == 0 || strcmp(dot, ".yml") == 0))
                        *dot = '\0';
                char why[160];
                if (p->file[0] == '<')  /* "<stdin>", "<spec>": text, not a file */
                        err(p, root, "the spec has no 'name:', and a spec that is no file has "
                            "no file name to stand for it: give the sweep a name");
                else if (!name_ok(stem, why, sizeof why))
                        err(p, root, "the spec has no 'name:' and its file name %s (%s): "
                            "give the sweep a name", why, NAME_RULE);
                s->name = keep(p, stem, strlen(stem));
        }
        p->base_dir = base_dir;
        s->base_dir = base_dir ? keep(p, base_dir, strlen(base_dir)) : NULL;
        load_topology(p, top.topology);
        if (machines)
                read_machines(p, machines);

        struct sweep_figure top_fig = { .log = -1 };
        if (top.figure)
                read_figure(p, top.figure, &top_fig);

        /* Panels: the listed ones, or the top level as one panel. */
        size_t n_panels = 1;
        if (panels) {
                if (panels->kind != YN_SEQ || panels->n_kids == 0) {
                        wrong(p, panels, "panels must be a non-empty list of panel maps");
                        return;
                }
                n_panels = panels->n_kids;
        }
        s->panels = calloc(n_panels, sizeof *s->panels);
        struct scope *scopes = calloc(n_panels, sizeof *scopes);
        struct panel_plan *plans = calloc(n_panels, sizeof *plans);
        if (!s->panels || !scopes || !plans) {
                diag_error(p->d, "%s: out of memory", p->file);
                goto out;
        }
        s->n_panels = n_panels;
        bool ok = true;
        size_t n_points = 0, n_coords = 0;
        for (size_t i = 0; i < n_panels; i++) {
                struct sweep_panel *pn = &s->panels[i];
                struct scope *own = NULL;
                pn->figure = top_fig;
                if (panels) {
                        const struct ynode *m = panels->kids[i];
                        const struct ynode *unused[3];
                        own = &scopes[i];
                        read_scope(p, m, own, false, "a panel", unused);
                        pn->line = m->line;
                        if (m->kind != YN_MAP) {
                                ok = false;
                                continue;
                        }
                        if (!own->name) {
                                err(p, m, "a panel needs a 'name:'");
                                ok = false;
                                continue;
                        }
                        char why[160];
                        if (!good_name(own->name, why, sizeof why)) {
                                err(p, own->name, "panel name %s; %s", why, NAME_RULE);
                                ok = false;
                                continue;
                        }
                        for (size_t j = 0; j < i; j++)
                                if (s->panels[j].name &&
                                    strcmp(s->panels[j].name, own->name->text) == 0) {
                                        err(p, own->name, "panel name '%s' is used twice (first "
                                            "at line %u)", own->name->text, s->panels[j].line);
                                        ok = false;
                                }
                        pn->name = keep(p, own->name->text, own->name->len);
                        if (own->figure)
                                read_figure(p, own->figure, &pn->figure);
                        if (own->topology) {
                                bool builtin;
                                pn->topo_path = machine_file(p, own->topology, &builtin);
                                pn->own_topo = pn->topo_path || builtin;
                                s->machines_vary = true;
                        }
                } else {
                        pn->name = s->name;
                }
                bool planned = pn->name && plan_panel(p, pn, &plans[i], &top, own);
                p->n_axis_kernels = 0;
                if (!planned) {
                        ok = false;
                        continue;
                }
                n_points += plans[i].n_grid + plans[i].n_explicit;
                n_coords += plans[i].n_coords;
        }
        if (!ok || p->d->n_errors)
                goto out;
        if (n_points > SWEEP_MAX_POINTS) {
                err(p, root, "the spec has %zu points, more than %u", n_points, SWEEP_MAX_POINTS);
                goto out;
        }
        s->points = calloc(n_points, sizeof *s->points);
        s->pool = calloc(n_coords ? n_coords : 1, sizeof *s->pool);
        if (!s->points || !s->pool) {
                diag_error(p->d, "%s: out of memory for %zu points", p->file, n_points);
                goto out;
        }
        size_t at = 0;
        for (size_t i = 0; i < n_panels; i++)
                lay_out(p, &s->panels[i], i, &plans[i], &at);
        s->n_points = at;
        for (size_t i = 0; i < n_panels; i++)
                if (names_machine(s->panels[i].params, s->panels[i].n_params))
                        s->machines_vary = true;
        for (size_t i = 0; i < s->n_points; i++)
                if (names_machine(s->points[i].coords, s->points[i].n_coords))
                        s->machines_vary = true;
out:
        free(scopes);
        free(plans);
}

/* The YAML limits of a spec and the words of their messages. */
static const struct ytree_limits spec_limits = {
        .max_depth = SWEEP_MAX_DEPTH,
        .max_nodes = SWEEP_MAX_YAML_NODES,
        .doc = "a sweep spec",
        .depth_hint = "a sweep spec needs only a few",
        .nodes_hint = "a sweep has at most 100000 points: give many as a grid (its axes "
                      "multiply) rather than listed, or split the sweep into several specs",
        .empty = "the spec is empty; expected a map with at least 'version: 1', a "
                 "kernel and a grid (see docs/sweeps.md)",
};

int sweep_spec_load_text(const char *label, const char *text, size_t len, const char *base_dir,
                         struct sweep_spec *out, struct diag *d)
{
        memset(out, 0, sizeof *out);
        struct parser p = { .file = label, .d = d, .s = out };
        unsigned before = d->n_errors;
        out->path = keep(&p, label, strlen(label));
        out->text = keep(&p, text, len);
        out->text_len = len;
        if (!out->path || !out->text)
                return -ENOMEM;
        if (len > SWEEP_MAX_SPEC_BYTES) {
                diag_error_at(d, label, 0, 0, "the spec is larger than %u KiB; a sweep spec is "
                              "a few KiB", SWEEP_MAX_SPEC_BYTES >> 10);
                return -EINVAL;
        }
        /* A spec of only blanks and comments has no document at all. */
        bool empty = true;
        for (size_t i = 0, bol = 1; i < len && empty; i++) {
                char c = text[i];
                if (c == '\n') {
                        bol = 1;
                } else if (bol && c == '#') {
                        while (i < len && text[i] != '\n')
                                i++;
                } else if (c != ' ' && c != '\t' && c != '\r') {
                        empty = false;
                }
        }
        if (empty) {
                diag_error_at(d, label, 1, 1, "%s", spec_limits.empty);
                return -EINVAL;
        }
        struct ynode *root;
        if (ytree_parse(label, text, len, &spec_limits, &root, d) < 0)
                return -EINVAL;
        parse_root(&p, root, base_dir);
        ytree_free(root);
        if (p.topo_ok)
                topo_fini(&p.topo);
        return d->n_errors > before ? -EINVAL : 0;
}

/* A spec file's text: the paths in it are relative to its folder. */
static int parse_file(const char *path, const char *text, size_t len, void *out,
                      struct diag *d)
{
        char dir[4096];
        snprintf(dir, sizeof dir, "%s", path);
        char *slash = strrchr(dir, '/');
        if (slash)
                *slash = '\0';
        return sweep_spec_load_text(path, text, len, slash ? dir : NULL, out, d);
}

int sweep_spec_load_file(const char *path, struct sweep_spec *out, struct diag *d)
{
        memset(out, 0, sizeof *out);
        if (strcmp(path, "-") == 0) {
                /* Standard input: its machine paths are relative to the
                 * current directory, and it has no file name to stand for
                 * a missing `name:`. */
                char *text;
                size_t len;
                if (fs_read_stream(stdin, "<stdin>", SWEEP_MAX_SPEC_BYTES, &text, &len, d) < 0)
                        return -EINVAL;
                int rc = sweep_spec_load_text("<stdin>", text, len, NULL, out, d);
                free(text);
                return rc;
        }
        return fs_parse_file(path, SWEEP_MAX_SPEC_BYTES, parse_file, out, d);
}

void sweep_spec_fini(struct sweep_spec *s)
{
        for (size_t i = 0; i < s->n_panels; i++)
                free(s->panels[i].params);
        free(s->panels);
        for (size_t i = 0; i < s->n_machines; i++)
                free(s->machines[i].sets);
        free(s->machines);
        free(s->points);
        free(s->pool);
        for (size_t i = 0; i < s->n_strs; i++)
                free(s->strs[i]);
        free(s->strs);
        memset(s, 0, sizeof *s);
}

const struct sweep_kv *sweep_point_param(const struct sweep_spec *s, size_t i, const char *key)
{
        const struct sweep_point *pt = &s->points[i];
        for (size_t c = 0; c < pt->n_coords; c++)
                if (strcmp(pt->coords[c].key, key) == 0)
                        return &pt->coords[c];
        const struct sweep_panel *pn = &s->panels[pt->panel];
        for (size_t j = 0; j < pn->n_params; j++)
                if (strcmp(pn->params[j].key, key) == 0)
                        return &pn->params[j];
        return NULL;
}

const char *sweep_point_topo(const struct sweep_spec *s, size_t i, char *buf, size_t len)
{
        const struct sweep_kv *kv = sweep_point_param(s, i, "topology");
        if (!kv) {
                const struct sweep_panel *pn = &s->panels[s->points[i].panel];
                return pn->own_topo ? pn->topo_path : s->topo_path;
        }
        if (strcmp(kv->value, "default") == 0 && !kv->quoted)
                return NULL;
        if (kv->value[0] == '/' || !s->base_dir || !*s->base_dir)
                snprintf(buf, len, "%s", kv->value);
        else
                snprintf(buf, len, "%s/%s", s->base_dir, kv->value);
        return buf;
}

const struct sweep_machine *sweep_point_variant(const struct sweep_spec *s, size_t i)
{
        const struct sweep_kv *kv = sweep_point_param(s, i, "machine");
        for (size_t m = 0; kv && m < s->n_machines; m++)
                if (strcmp(s->machines[m].name, kv->value) == 0)
                        return &s->machines[m];
        return NULL;
}

/* The stem of a machine file's name: "topologies/n150.yaml" -> "n150". */
static void file_stem(const char *path, char *buf, size_t len)
{
        const char *b = strrchr(path, '/');
        snprintf(buf, len, "%s", b ? b + 1 : path);
        char *dot = strrchr(buf, '.');
        if (dot && dot != buf && (strcmp(dot, ".yaml") == 0 || strcmp(dot, ".yml") == 0))
                *dot = '\0';
}

void sweep_point_machine(const struct sweep_spec *s, size_t i, char *buf, size_t len)
{
        char path[4096];
        const char *topo = sweep_point_topo(s, i, path, sizeof path);
        file_stem(topo ? topo : "default", buf, len);
        const struct sweep_machine *m = sweep_point_variant(s, i);
        if (m)
                snprintf(buf + strlen(buf), len - strlen(buf), "/%s", m->name);
}

const char *sweep_kv_label(const struct sweep_kv *kv, char *buf, size_t len)
{
        if (strcmp(kv->key, "topology") != 0)
                return kv->value;
        file_stem(kv->value, buf, len);
        return buf;
}

void sweep_spec_list(const struct sweep_spec *s, FILE *out)
{
        fprintf(out, "sweep %s: %zu points in %zu panel%s on %s\n", s->name, s->n_points,
                s->n_panels, s->n_panels == 1 ? "" : "s",
                s->topo_path ? s->topo_path : "the default machine");
        for (size_t p = 0; p < s->n_panels; p++) {
                const struct sweep_panel *pn = &s->panels[p];
                fprintf(out, "panel %s: kernel %s, %zu points", pn->name, pn->kernel,
                        pn->n_points);
                for (size_t j = 0; j < pn->n_params; j++)
                        fprintf(out, "%s%s=%s", j ? " " : "; fixed ", pn->params[j].key,
                                pn->params[j].value);
                fputc('\n', out);
                for (size_t i = pn->first_point; i < pn->first_point + pn->n_points; i++) {
                        const struct sweep_point *pt = &s->points[i];
                        fprintf(out, "  %4zu", i - pn->first_point);
                        for (size_t c = 0; c < pt->n_coords; c++)
                                fprintf(out, " %s=%s", pt->coords[c].key, pt->coords[c].value);
                        fputc('\n', out);
                }
        }
}
