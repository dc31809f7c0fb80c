/* cli/compare_cmd.c: `cubesim compare A B`: two results side by side.
 *
 * A and B are both runs (the output of `cubesim run --json`) or both
 * sweeps (a sweep folder, or its sweep.json). For runs, each figure is a
 * row: kernel time, the binding resource, critical-path shares when the
 * runs recorded them (critical_path.by_class, as a share of the kernel
 * time), HBM and link bytes, utilisation per component class, energy and
 * power. For sweeps, each point of A is matched with the point of B in the
 * panel of the same name with the same parameters (and machine), and each
 * pair is a row: kernel time, bound, energy and HBM bytes of both.
 *
 * A difference is the ratio B/A; rows are ordered by how far that ratio is
 * from 1 (|log ratio|), the largest change first, a figure that appears
 * or vanishes (0 on one side) before any ratio. The output is a Markdown
 * table (--format md, the default) or one JSON object (--format json). */
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/diag.h"
#include "base/fsutil.h"
#include "base/jsonw.h"
#include "base/util.h"
#include "cli/cli.h"

#define COMPARE_MAX_BYTES (256u << 20) /* a result file: sweep.json of 100000 points */

static const char about[] =
        "\n"
        "Put two results side by side: two runs (files of 'cubesim run --json') or\n"
        "two sweeps (sweep folders, or their sweep.json). Differences are ratios\n"
        "B/A, the largest change first. Sweep points are matched by panel name,\n"
        "parameters and machine; points only one side has are listed.\n";

static const char tail[] =
        "\n"
        "Exit status: 0 the table was printed; 2 bad input (a file that is missing\n"
        "or not JSON, a result of neither kind, a run compared with a sweep).\n";

/* What the options of cubesim compare set. */
struct compare_args {
        const char *format;          /* "md" or "json" */
};

static const struct cli_opt compare_options[] = {
        { "--format", "md|json", NULL, 0,
          "a Markdown table (default) or one JSON object", cli_opt_text,
          offsetof(struct compare_args, format) },
};

static void usage(FILE *out)
{
        cli_opts_help(out, "usage: cubesim compare A B", 80, 16, compare_options,
                      ARRAY_LEN(compare_options), about, tail);
}

enum kind { KIND_RUN, KIND_SWEEP };

/* One side: its path as given and its document. */
struct side {
        const char *arg;             /* as typed */
        char path[4200];             /* the file read */
        json_t *doc;                 /* owned */
        enum kind kind;              /* what it holds */
};

/* Read one side; false after a message in d. */
static bool load_side(struct side *s, struct diag *d)
{
        struct stat st;
        snprintf(s->path, sizeof s->path, "%s", s->arg);
        if (stat(s->arg, &st) == 0 && S_ISDIR(st.st_mode)) {
                snprintf(s->path, sizeof s->path, "%s/sweep.json", s->arg);
                if (stat(s->path, &st) != 0) {
                        diag_error_at(d, s->arg, 0, 0, "not a sweep folder: it has no "
                                      "sweep.json");
                        return false;
                }
        }
        char *text;
        size_t len;
        if (fs_read_capped(s->path, COMPARE_MAX_BYTES, &text, &len, d) < 0)
                return false;
        json_error_t je;
        s->doc = json_loadb(text, len, 0, &je);
        free(text);
        if (!s->doc) {
                diag_error_at(d, s->path, (unsigned)(je.line > 0 ? je.line : 0),
                              (unsigned)(je.column > 0 ? je.column : 0), "not JSON: %s", je.text);
                return false;
        }
        if (json_is_object(s->doc) && json_is_array(json_object_get(s->doc, "panels"))) {
                s->kind = KIND_SWEEP;
                return true;
        }
        if (json_is_object(s->doc) && json_is_integer(json_object_get(s->doc, "kernel_ps"))) {
                s->kind = KIND_RUN;
                return true;
        }
        diag_error_at(d, s->path, 0, 0, "not a cubesim result: expected the output of "
                      "'cubesim run --json' (with kernel_ps) or a sweep.json (with panels)");
        return false;
}

static const char *kind_name(enum kind k)
{
        return k == KIND_RUN ? "a run ('cubesim run --json')" : "a sweep (sweep.json)";
}

/* ---- rows ---- */

/* One compared figure. */
struct row {
        char name[160];              /* what it is ("kernel time (ps)", a point's label) */
        double a, b;                 /* the two values */
        char text_a[64], text_b[64]; /* or two words (bound by); empty for numbers */
        double change;               /* |log(b / a)|; HUGE_VAL when one side is 0 */
        json_t *extra;               /* sweep rows: more figures of the pair (owned), or NULL */
};

struct rows {
        struct row *r;               /* malloc'd */
        size_t n, cap;               /* used and allocated */
};

static double change_of(double a, double b)
{
        if (a == b)
                return 0;
        if (a <= 0 || b <= 0)
                return HUGE_VAL;
        return fabs(log(b / a));
}

static struct row *add_row(struct rows *rs, const char *name)
{
        struct row *n = util_grow(rs->r, rs->n, &rs->cap, sizeof *n, 32);
        if (!n)
                return NULL;
        rs->r = n;
        struct row *r = &rs->r[rs->n++];
        memset(r, 0, sizeof *r);
        snprintf(r->name, sizeof r->name, "%s", name);
        return r;
}

/* A row for name when a or b is a number (text: a string); the side
 * without one counts as 0 ("-"). */
static void add_cell(struct rows *rs, const char *name, json_t *a, json_t *b, bool text)
{
        bool has_a = text ? json_is_string(a) : json_is_number(a);
        bool has_b = text ? json_is_string(b) : json_is_number(b);
        if (!has_a && !has_b)
                return;
        struct row *r = add_row(rs, name);
        if (!r)
                return;
        if (text) {
                snprintf(r->text_a, sizeof r->text_a, "%s", has_a ? json_string_value(a) : "-");
                snprintf(r->text_b, sizeof r->text_b, "%s", has_b ? json_string_value(b) : "-");
                r->change = strcmp(r->text_a, r->text_b) ? HUGE_VAL : 0;
        } else {
                r->a = has_a ? json_number_value(a) : 0;
                r->b = has_b ? json_number_value(b) : 0;
                r->change = change_of(r->a, r->b);
        }
}

/* Every key of object key in a or b, each a row "PREFIX.KEY" (scaled by
 * 1/scale_a, 1/scale_b when those are > 0: shares of the kernel time). */
static void add_map(struct rows *rs, const char *prefix, json_t *ma, json_t *mb, double scale_a,
                    double scale_b)
{
        json_t *both[2] = { ma, mb }, *v;
        const char *key;
        for (int s = 0; s < 2; s++) {
                json_object_foreach(both[s], key, v) {
                        if (s == 1 && json_object_get(ma, key))
                                continue;   /* done from a */
                        char name[160];
                        snprintf(name, sizeof name, "%s.%s", prefix, key);
                        json_t *a = json_object_get(ma, key), *b = json_object_get(mb, key);
                        if (scale_a > 0 && scale_b > 0) {
                                json_t *sa = json_is_number(a)
                                                     ? json_real(json_number_value(a) / scale_a)
                                                     : NULL;
                                json_t *sb = json_is_number(b)
                                                     ? json_real(json_number_value(b) / scale_b)
                                                     : NULL;
                                add_cell(rs, name, sa, sb, false);
                                json_decref(sa);
                                json_decref(sb);
                        } else {
                                add_cell(rs, name, a, b, false);
                        }
                }
        }
}

static void run_rows(json_t *a, json_t *b, struct rows *rs)
{
        static const char *const texts[] = { "kernel", "machine", "bound_by", NULL };
        static const char *const nums[] = { "kernel_ps", "sim_ps", "of_bound", "tflops",
                                            "hbm_gbps", "hbm_read_bytes", "hbm_write_bytes",
                                            "energy_j", "static_j", "avg_power_w",
                                            "peak_power_w", "events", NULL };
        static const char *const maps[] = { "utilisation", "link_bytes", "energy_by_class_j",
                                            "bounds", NULL };
        for (const char *const *k = texts; *k; k++)
                add_cell(rs, *k, json_object_get(a, *k), json_object_get(b, *k), true);
        for (const char *const *k = nums; *k; k++)
                add_cell(rs, *k, json_object_get(a, *k), json_object_get(b, *k), false);
        for (const char *const *k = maps; *k; k++)
                add_map(rs, *k, json_object_get(a, *k), json_object_get(b, *k), 0, 0);
        json_t *ca = json_object_get(json_object_get(a, "critical_path"), "by_class");
        json_t *cb = json_object_get(json_object_get(b, "critical_path"), "by_class");
        if (ca || cb)
                add_map(rs, "critical_path share", ca, cb,
                        (double)json_integer_value(json_object_get(a, "kernel_ps")),
                        (double)json_integer_value(json_object_get(b, "kernel_ps")));
}

/* A sweep point's identity: panel, its parameters (JSON, sorted keys) and
 * its machine. */
static char *point_key(json_t *panel, json_t *pt)
{
        char *params = json_dumps(json_object_get(pt, "params"), JSON_COMPACT | JSON_SORT_KEYS);
        const char *m = json_string_value(json_object_get(pt, "machine"));
        const char *pn = json_string_value(json_object_get(panel, "name"));
        size_t len = strlen(pn ? pn : "") + strlen(params ? params : "") +
                     strlen(m ? m : "") + 8;
        char *k = malloc(len);
        if (k)
                snprintf(k, len, "%s %s %s", pn ? pn : "", params ? params : "{}", m ? m : "");
        free(params);
        return k;
}

/* A point's label in the table: "panel: k=v, k=v". */
static void point_label(json_t *panel, json_t *pt, char *buf, size_t len)
{
        size_t at = (size_t)snprintf(buf, len, "%s:",
                                     json_string_value(json_object_get(panel, "name")));
        const char *key;
        json_t *v;
        bool first = true;
        json_object_foreach(json_object_get(pt, "params"), key, v) {
                char *t = json_is_string(v) ? NULL : json_dumps(v, JSON_ENCODE_ANY);
                if (at < len)
                        at += (size_t)snprintf(buf + at, len - at, "%s %s=%s", first ? "" : ",",
                                               key, t ? t : json_string_value(v));
                free(t);
                first = false;
        }
}

static bool point_ok(json_t *pt)
{
        const char *st = json_string_value(json_object_get(pt, "status"));
        return st && strcmp(st, "ok") == 0;
}

/* The row of a matched pair of points. */
static void pair_row(struct rows *rs, const char *lab, json_t *ta, json_t *tb)
{
        if (!point_ok(ta) || !point_ok(tb)) {
                struct row *r = add_row(rs, lab);
                if (r) {
                        snprintf(r->text_a, sizeof r->text_a, "%s",
                                 json_string_value(json_object_get(ta, "status")));
                        snprintf(r->text_b, sizeof r->text_b, "%s",
                                 json_string_value(json_object_get(tb, "status")));
                        r->change = strcmp(r->text_a, r->text_b) ? HUGE_VAL : 0;
                }
                return;
        }
        size_t before = rs->n;
        add_cell(rs, lab, json_object_get(ta, "kernel_ps"), json_object_get(tb, "kernel_ps"),
                 false);
        if (rs->n == before)
                return;
        rs->r[rs->n - 1].extra = json_pack(
                "{s:O?, s:O?, s:O?, s:O?, s:O?, s:O?, s:O?, s:O?}",
                "bound_by_a", json_object_get(ta, "bound_by"),
                "bound_by_b", json_object_get(tb, "bound_by"),
                "energy_j_a", json_object_get(ta, "energy_j"),
                "energy_j_b", json_object_get(tb, "energy_j"),
                "hbm_read_bytes_a", json_object_get(ta, "hbm_read_bytes"),
                "hbm_read_bytes_b", json_object_get(tb, "hbm_read_bytes"),
                "machine_a", json_object_get(ta, "machine"),
                "machine_b", json_object_get(tb, "machine"));
}

/* Rows of the matched points of two sweeps (by panel, parameters and
 * machine); the labels of unmatched points into only_a and only_b. */
static void sweep_rows(json_t *a, json_t *b, struct rows *rs, json_t *only_a, json_t *only_b)
{
        json_t *pa, *pb, *ta, *tb;
        size_t i, j;
        json_t *index_b = json_object();  /* key -> b's point, until matched */
        json_t *order_b = json_array();   /* b's keys and labels, in b's order */
        json_array_foreach(json_object_get(b, "panels"), i, pb)
                json_array_foreach(json_object_get(pb, "points"), j, tb) {
                        char *kb = point_key(pb, tb), lab[160];
                        point_label(pb, tb, lab, sizeof lab);
                        if (kb && !json_object_get(index_b, kb)) {
                                json_object_set(index_b, kb, tb);
                                json_array_append_new(order_b, json_pack("[s,s]", kb, lab));
                        }
                        free(kb);
                }
        json_array_foreach(json_object_get(a, "panels"), i, pa) {
                json_array_foreach(json_object_get(pa, "points"), j, ta) {
                        char *key = point_key(pa, ta), lab[160];
                        point_label(pa, ta, lab, sizeof lab);
                        json_t *match = key ? json_incref(json_object_get(index_b, key)) : NULL;
                        if (match)
                                json_object_del(index_b, key);
                        free(key);
                        if (!match) {
                                json_array_append_new(only_a, jsonw_string(lab));
                                continue;
                        }
                        pair_row(rs, lab, ta, match);
                        json_decref(match);
                }
        }
        json_t *e;
        json_array_foreach(order_b, i, e)
                if (json_object_get(index_b, json_string_value(json_array_get(e, 0))))
                        json_array_append(only_b, json_array_get(e, 1));
        json_decref(index_b);
        json_decref(order_b);
}

static int by_change(const void *x, const void *y)
{
        const struct row *p = x, *q = y;
        if (p->change != q->change)
                return p->change > q->change ? -1 : 1;
        return strcmp(p->name, q->name);
}

/* ---- output ---- */

static void md_num(double v)
{
        if (v == floor(v) && fabs(v) < 1e15)
                printf(" %.0f |", v);
        else
                printf(" %.4g |", v);
}

static void md_ratio(const struct row *r)
{
        if (r->text_a[0])
                printf(" %s |", r->change == 0 ? "same" : "changed");
        else if (r->a == r->b)
                printf(" 1 |");
        else if (r->a == 0)
                printf(" new |");
        else if (r->b == 0)
                printf(" gone |");
        else
                printf(" %.4g |", r->b / r->a);
}

/* A sweep row's extra figure key_a -> key_b as a cell. */
static void md_pair(const struct row *r, const char *key, bool ratio)
{
        char ka[64], kb[64];
        snprintf(ka, sizeof ka, "%s_a", key);
        snprintf(kb, sizeof kb, "%s_b", key);
        json_t *a = json_object_get(r->extra, ka), *b = json_object_get(r->extra, kb);
        if (ratio && json_is_number(a) && json_is_number(b) && json_number_value(a) > 0)
                printf(" %.4g |", json_number_value(b) / json_number_value(a));
        else if (json_is_string(a) || json_is_string(b))
                printf(" %s → %s |", json_is_string(a) ? json_string_value(a) : "-",
                       json_is_string(b) ? json_string_value(b) : "-");
        else
                printf(" |");
}

static void print_md(const struct side *sa, const struct side *sb, const struct rows *rs,
                     json_t *only_a, json_t *only_b)
{
        printf("# cubesim compare\n\nA: `%s`  \nB: `%s`\n\n", sa->arg, sb->arg);
        if (sa->kind == KIND_RUN) {
                puts("| figure | A | B | B/A |\n|---|---:|---:|---:|");
                for (size_t i = 0; i < rs->n; i++) {
                        const struct row *r = &rs->r[i];
                        printf("| %s |", r->name);
                        if (r->text_a[0]) {
                                printf(" %s | %s |", r->text_a, r->text_b);
                        } else {
                                md_num(r->a);
                                md_num(r->b);
                        }
                        md_ratio(r);
                        putchar('\n');
                }
                return;
        }
        puts("| point | kernel time A (ps) | B (ps) | B/A | bound by | energy B/A | "
             "HBM read B/A | machine |\n|---|---:|---:|---:|---|---:|---:|---|");
        for (size_t i = 0; i < rs->n; i++) {
                const struct row *r = &rs->r[i];
                printf("| %s |", r->name);
                if (r->text_a[0]) {
                        printf(" %s | %s | | | | | |\n", r->text_a, r->text_b);
                        continue;
                }
                md_num(r->a);
                md_num(r->b);
                md_ratio(r);
                md_pair(r, "bound_by", false);
                md_pair(r, "energy_j", true);
                md_pair(r, "hbm_read_bytes", true);
                md_pair(r, "machine", false);
                putchar('\n');
        }
        json_t *lists[2] = { only_a, only_b };
        for (int s = 0; s < 2; s++) {
                if (!json_array_size(lists[s]))
                        continue;
                printf("\nOnly in %c:\n\n", "AB"[s]);
                size_t i;
                json_t *v;
                json_array_foreach(lists[s], i, v)
                        printf("- %s\n", json_string_value(v));
        }
}

static json_t *rows_json(const struct rows *rs)
{
        json_t *arr = json_array();
        for (size_t i = 0; i < rs->n; i++) {
                const struct row *r = &rs->r[i];
                json_t *o = json_object();
                json_object_set_new(o, "name", jsonw_string(r->name));
                if (r->text_a[0]) {
                        json_object_set_new(o, "a", jsonw_string(r->text_a));
                        json_object_set_new(o, "b", jsonw_string(r->text_b));
                        json_object_set_new(o, "changed", json_boolean(r->change != 0));
                } else {
                        json_object_set_new(o, "a", jsonw_real(r->a));
                        json_object_set_new(o, "b", jsonw_real(r->b));
                        json_object_set_new(o, "ratio", r->a > 0 ? jsonw_real(r->b / r->a)
                                                                 : json_null());
                }
                if (r->extra)
                        json_object_update(o, r->extra);
                json_array_append_new(arr, o);
        }
        return arr;
}

int cli_compare(int argc, char **argv)
{
        struct compare_args args = { .format = "md" };
        struct diag d;
        diag_init(&d);
        const char *pos[2] = { NULL, NULL };
        size_t n_pos = 0;
        struct side sides[2] = { { 0 }, { 0 } };
        struct rows rs = { 0 };
        json_t *only_a = json_array(), *only_b = json_array();
        int rc = cli_opts_parse_n("compare", compare_options, ARRAY_LEN(compare_options), argc,
                                  argv, &args, pos, 2, &n_pos, &d);
        if (cli_opts_done(&rc, usage))
                goto out;
        if (strcmp(args.format, "md") != 0 && strcmp(args.format, "json") != 0) {
                rc = cli_error("compare", "--format %s: expected md or json", args.format);
                goto out;
        }
        if (n_pos != 2) {
                rc = cli_error("compare", "expected two results to compare, A and B, got %zu "
                               "(see 'cubesim compare --help')", n_pos);
                goto out;
        }
        bool ok = true;
        for (int s = 0; s < 2; s++) {
                sides[s].arg = pos[s];
                ok = load_side(&sides[s], &d) && ok;
        }
        if (ok && sides[0].kind != sides[1].kind)
                diag_error(&d, "cannot compare %s (%s) with %s (%s): compare two runs or two "
                           "sweeps", sides[0].arg, kind_name(sides[0].kind), sides[1].arg,
                           kind_name(sides[1].kind));
        if (d.n_errors) {
                cli_print_diag("compare", &d);
                rc = CLI_BAD_INPUT;
                goto out;
        }
        if (sides[0].kind == KIND_RUN)
                run_rows(sides[0].doc, sides[1].doc, &rs);
        else
                sweep_rows(sides[0].doc, sides[1].doc, &rs, only_a, only_b);
        if (rs.n)
                qsort(rs.r, rs.n, sizeof *rs.r, by_change);
        if (strcmp(args.format, "json") == 0) {
                json_t *o = json_object();
                json_object_set_new(o, "kind", jsonw_string(sides[0].kind == KIND_RUN ? "run"
                                                                                      : "sweep"));
                json_object_set_new(o, "a", jsonw_string(sides[0].arg));
                json_object_set_new(o, "b", jsonw_string(sides[1].arg));
                json_object_set_new(o, "rows", rows_json(&rs));
                if (sides[0].kind == KIND_SWEEP) {
                        json_object_set(o, "only_a", only_a);
                        json_object_set(o, "only_b", only_b);
                }
                if (jsonw_print(stdout, o, 2) < 0)
                        rc = CLI_FAIL;
        } else {
                print_md(&sides[0], &sides[1], &rs, only_a, only_b);
        }
out:
        for (size_t i = 0; i < rs.n; i++)
                json_decref(rs.r[i].extra);
        free(rs.r);
        json_decref(only_a);
        json_decref(only_b);
        for (int s = 0; s < 2; s++)
                json_decref(sides[s].doc);
        diag_fini(&d);
        return rc;
}
