/* sweep/sweep_fig.c: figures and the report of a sweep.
 *
 * Into DIR/figures/ go, for each figure, its data (.dat, gnuplot's plain
 * columns), its script (.gp, self-contained: `cd DIR/figures && gnuplot
 * NAME.gp` redraws it, so users restyle by editing the script) and the
 * pictures gnuplot makes of it (.png with pngcairo, .svg):
 *   time_PANEL     simulated time vs the panel's x parameter, one line per
 *                  series (log-log when x spans 8x or more), with the HBM
 *                  roofline when the panel's figure gives bytes per x;
 *   utilisation    busy share of each component class, per panel (or per
 *                  point when the sweep has one panel);
 *   dispatch       PE_CPU issue time as a share of the PEs' time, stacked
 *                  by op type, per panel (or per point).
 * DIR/report.md shows the figures and a table of every point. Without
 * gnuplot (or when it fails) the data, the scripts and the report are
 * still written, with a warning: the figures are a convenience, sweep.json
 * is the result. The gnuplot binary is $CUBESIM_GNUPLOT, else `gnuplot`
 * on the PATH. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/fsutil.h"
#include "sweep/sweep_int.h"

#define FIG_W 960                    /* picture size, pixels (PNG) and points (SVG) */
#define FIG_H 600
#define KEY_INSIDE_CHARS 44          /* a time figure's key stays inside up to this label */
#define KEY_INSIDE_ROWS 10           /* ... and this many series */
#define KEY_CHAR_PX 9                /* width of a key character at FIG_FONT, pixels */
#define KEY_ROW_PX 22                /* height of a key row, pixels */
#define FIG_FONT "DejaVu Sans,12"

/* A text being built, then written atomically. */
struct text {
        char *buf;                   /* open_memstream's buffer */
        size_t len;                  /* its length */
        FILE *f;                     /* the stream */
};

static bool text_open(struct text *t)
{
        t->buf = NULL;
        t->len = 0;
        t->f = open_memstream(&t->buf, &t->len);
        return t->f != NULL;
}

/* ---- text that reaches gnuplot ---- */

/* s made one line, in place: a control character (a newline would end a
 * gnuplot command, a comment or a data line) becomes a space. */
static void one_line(char *s)
{
        for (; *s; s++)
                if ((unsigned char)*s < 0x20 || *s == 0x7f)
                        *s = ' ';
}

/* The formatted text as a gnuplot single-quoted string. Names from the
 * spec and the topology (titles, labels, file names) go into scripts only
 * this way: inside single quotes gnuplot substitutes nothing (no
 * `command`, no @macro, no backslash escape); a quote is written twice. */
static void gp_str(FILE *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void gp_str(FILE *f, const char *fmt, ...)
{
        char buf[1024];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(buf, sizeof buf, fmt, ap);
        va_end(ap);
        one_line(buf);
        fputc('\'', f);
        for (const char *p = buf; *p; p++) {
                if (*p == '\'')
                        fputc('\'', f);
                fputc(*p, f);
        }
        fputc('\'', f);
}

static size_t n_unsaved;             /* files text_save could not write, this sweep */

/* Close t and write it to dir/name; false (warned, counted) on failure. */
static bool text_save(struct text *t, const char *dir, const char *name)
{
        bool ok = fclose(t->f) == 0;
        char path[4400];
        snprintf(path, sizeof path, "%s/%s", dir, name);
        int rc = ok ? fs_write_atomic(path, t->buf, t->len) : -ENOMEM;
        free(t->buf);
        if (rc < 0) {
                fprintf(stderr, "cubesim sweep: warning: cannot write %s: %s\n", path,
                        strerror(-rc));
                n_unsaved++;
        }
        return rc == 0;
}

static bool is_ok(json_t *rec)
{
        const char *st = json_string_value(json_object_get(rec, "status"));
        return st && strcmp(st, "ok") == 0;
}

static bool numeric(const char *s, double *out)
{
        char *end;
        double x = strtod(s, &end);
        if (!*s || *end || !isfinite(x))
                return false;
        *out = x;
        return true;
}

/* "4K", "128K", "1M" for multiples of 1024; else NULL. */
static bool binary_label(double v, char *buf, size_t len)
{
        if (v < 1024 || v != floor(v))
                return false;
        unsigned long long u = (unsigned long long)v;
        if (u % (1024ull * 1024) == 0)
                snprintf(buf, len, "%lluM", u / (1024ull * 1024));
        else if (u % 1024 == 0)
                snprintf(buf, len, "%lluK", u / 1024);
        else
                return false;
        return true;
}

/* Time unit for values up to max_ps: its name and ps per unit. */
static const char *time_unit(double max_ps, double *scale)
{
        if (max_ps >= 1e10) {
                *scale = 1e9;
                return "ms";
        }
        if (max_ps >= 1e7) {
                *scale = 1e6;
                return "µs";
        }
        *scale = 1e3;
        return "ns";
}

static void fmt_si(double v, const char *unit, char *buf, size_t len)
{
        static const char *const pre[] = { "", "k", "M", "G", "T", "P", "E" };
        int i = 0;
        while (fabs(v) >= 1000 && i < 6) {
                v /= 1000;
                i++;
        }
        snprintf(buf, len, "%.3g %s%s", v, pre[i], unit);
}

/* ---- the time figure of a panel ---- */

/* The machine of points [first, first + n) as a title names it: the
 * sweep's (with its PEs), the one they share, or "several machines". */
static void machine_title(const struct sweep__ctx *x, size_t first, size_t n, char *buf,
                          size_t len)
{
        if (!x->spec->machines_vary) {
                snprintf(buf, len, "%s (%llu PEs)", x->topo.name,
                         (unsigned long long)x->totals.pes);
                return;
        }
        char m0[256], m[256];
        sweep_point_machine(x->spec, first, m0, sizeof m0);
        for (size_t i = first + 1; i < first + n; i++) {
                sweep_point_machine(x->spec, i, m, sizeof m);
                if (strcmp(m, m0) != 0) {
                        snprintf(buf, len, "several machines");
                        return;
                }
        }
        snprintf(buf, len, "%s", m0);
}

/* The x parameter of panel pn: its figure's, else the first coordinate
 * that is numeric at every point and takes two values or more. */
static const char *panel_x(const struct sweep__ctx *x, const struct sweep_panel *pn)
{
        if (pn->figure.x)
                return pn->figure.x;
        const struct sweep_spec *s = x->spec;
        const struct sweep_point *p0 = &s->points[pn->first_point];
        for (size_t c = 0; c < p0->n_coords; c++) {
                const char *key = p0->coords[c].key;
                double first = 0, v;
                bool all = true, varies = false;
                for (size_t i = pn->first_point; i < pn->first_point + pn->n_points && all; i++) {
                        const struct sweep_kv *kv = sweep_point_param(s, i, key);
                        all = kv && numeric(kv->value, &v);
                        if (all && i == pn->first_point)
                                first = v;
                        else if (all && v != first)
                                varies = true;
                }
                if (all && varies)
                        return key;
        }
        return NULL;
}

/* The label of point i's series: the series parameter's value, or every
 * coordinate but x. */
static void series_label(const struct sweep__ctx *x, const struct sweep_panel *pn, size_t i,
                         const char *xkey, char *buf, size_t len)
{
        const struct sweep_spec *s = x->spec;
        buf[0] = '\0';
        double v;
        if (pn->figure.series) {
                const struct sweep_kv *kv = sweep_point_param(s, i, pn->figure.series);
                char lab[256];
                if (kv && numeric(kv->value, &v))   /* a bare number says nothing */
                        snprintf(buf, len, "%s=%s", kv->key, kv->value);
                else
                        snprintf(buf, len, "%s",
                                 kv ? sweep_kv_label(kv, lab, sizeof lab) : "(unset)");
                one_line(buf);
                return;
        }
        const struct sweep_point *pt = &s->points[i];
        size_t n_other = 0;
        for (size_t c = 0; c < pt->n_coords; c++)
                if (strcmp(pt->coords[c].key, xkey) != 0)
                        n_other++;
        size_t at = 0;
        for (size_t c = 0; c < pt->n_coords && at < len; c++) {
                if (strcmp(pt->coords[c].key, xkey) == 0)
                        continue;
                char lab[256];
                const char *val = sweep_kv_label(&pt->coords[c], lab, sizeof lab);
                if (n_other == 1 && !numeric(pt->coords[c].value, &v))
                        at += (size_t)snprintf(buf + at, len - at, "%s", val);
                else
                        at += (size_t)snprintf(buf + at, len - at, "%s%s=%s", at ? ", " : "",
                                               pt->coords[c].key, val);
        }
        if (!buf[0])
                snprintf(buf, len, "%s", pn->kernel);
        one_line(buf);
}

struct xy {
        double x;                    /* x value */
        size_t i;                    /* point */
};

static int cmp_xy(const void *a, const void *b)
{
        const struct xy *p = a, *q = b;
        return p->x < q->x ? -1 : p->x > q->x ? 1 : (p->i > q->i) - (p->i < q->i);
}

static void gp_header(FILE *f, const char *what, const char *stem)
{
        char line[512];
        snprintf(line, sizeof line, "%s", what);
        one_line(line);
        fprintf(f, "# %s\n", line);
        fprintf(f, "# Written by cubesim sweep. Edit freely, then redraw from this directory:\n"
                "#     gnuplot %s.gp\nreset\nset encoding utf8\n", stem);
}

/* The PNG terminal, before the plot command. */
/* The picture's size: FIG_W x FIG_H, or what a long key needs (time figures). */
static int fig_w = FIG_W, fig_h = FIG_H;

static void gp_png(FILE *f, const char *stem)
{
        fprintf(f, "set terminal pngcairo size %d,%d font \"%s\" noenhanced\n", fig_w, fig_h,
                FIG_FONT);
        fputs("set output ", f);
        gp_str(f, "%s.png", stem);
        fputc('\n', f);
}

/* The same picture again as SVG, after the plot command. */
static void gp_svg(FILE *f, const char *stem)
{
        fprintf(f, "set terminal svg size %d,%d font \"%s\" noenhanced background \"white\"\n",
                fig_w, fig_h, FIG_FONT);
        fputs("set output ", f);
        gp_str(f, "%s.svg", stem);
        fputs("\nreplot\nunset output\n", f);
}

/* A time figure's points: those of the panel with a numeric x value and a
 * result, grouped into series by their other coordinates. */
struct time_pts {
        struct xy *pts;              /* n points, in panel order */
        char (*labels)[160];         /* n_series series labels */
        size_t *series_of;           /* per point: its series */
        size_t n;                    /* points */
        size_t n_series;             /* series */
        double max_ps, min_ps;       /* simulated time and roofline extremes, ps */
        double min_x, max_x;         /* x extremes */
        double y_at_min_x, y_at_max_x; /* the trend, for where the key goes */
        bool all_binary;             /* every x value has a binary label (4Ki ...) */
};

static void time_pts_free(struct time_pts *t)
{
        free(t->pts);
        free(t->labels);
        free(t->series_of);
}

/* Gather the points of panel pn against xkey into *t; false when out of
 * memory or none is drawable (t freed by the caller either way). */
static bool time_collect(const struct sweep__ctx *x, const struct sweep_panel *pn,
                         const char *xkey, struct time_pts *t)
{
        const struct sweep_spec *s = x->spec;
        *t = (struct time_pts){ .pts = calloc(pn->n_points, sizeof *t->pts),
                                .labels = calloc(pn->n_points, sizeof *t->labels),
                                .series_of = calloc(pn->n_points, sizeof *t->series_of),
                                .min_ps = INFINITY, .min_x = INFINITY, .all_binary = true };
        if (!t->pts || !t->labels || !t->series_of)
                return false;
        for (size_t i = pn->first_point; i < pn->first_point + pn->n_points; i++) {
                json_t *r = x->recs[i];
                const struct sweep_kv *kv = sweep_point_param(s, i, xkey);
                double v;
                if (!is_ok(r) || !kv || !numeric(kv->value, &v))
                        continue;
                char lab[160];
                series_label(x, pn, i, xkey, lab, sizeof lab);
                size_t k = 0;
                while (k < t->n_series && strcmp(t->labels[k], lab) != 0)
                        k++;
                if (k == t->n_series)
                        snprintf(t->labels[t->n_series++], sizeof t->labels[0], "%s", lab);
                t->series_of[t->n] = k;
                t->pts[t->n++] = (struct xy){ v, i };
                double ps = (double)json_integer_value(json_object_get(r, "sim_ps"));
                double roof = (double)json_integer_value(json_object_get(r, "hbm_roofline_ps"));
                t->max_ps = fmax(t->max_ps, fmax(ps, roof));
                t->min_ps = fmin(t->min_ps, roof > 0 ? fmin(ps, roof) : ps);
                if (v < t->min_x)
                        t->y_at_min_x = ps;
                if (v > t->max_x)
                        t->y_at_max_x = ps;
                t->min_x = fmin(t->min_x, v);
                t->max_x = fmax(t->max_x, v);
                char tmp[32];
                t->all_binary = t->all_binary && binary_label(v, tmp, sizeof tmp);
        }
        return t->n > 0;
}

/* Write STEM.dat: one block per series, sorted by x, times in unit
 * (scale ps each). */
static bool time_dat(const struct sweep__ctx *x, const struct sweep_panel *pn, const char *xkey,
                     const struct time_pts *t, const char *unit, double scale, const char *dir,
                     const char *stem)
{
        const struct sweep_spec *s = x->spec;
        struct text dat;
        if (!text_open(&dat))
                return false;
        fprintf(dat.f, "# cubesim sweep %s, panel %s (kernel %s): simulated time vs %s\n",
                s->name, pn->name, pn->kernel, xkey);
        fprintf(dat.f, "# One block per series (gnuplot: index N). Columns: %s, simulated time "
                "(launch to completion, %s), kernel time (first PE start to last PE end, %s)%s\n",
                xkey, unit, unit, pn->figure.roofline_bytes_per_x > 0 ? ", HBM roofline" : "");
        for (size_t k = 0; k < t->n_series; k++) {
                fprintf(dat.f, "%s# series %zu: %s\n", k ? "\n\n" : "", k, t->labels[k]);
                struct xy *sel = calloc(t->n, sizeof *sel);
                size_t m = 0;
                for (size_t j = 0; sel && j < t->n; j++)
                        if (t->series_of[j] == k)
                                sel[m++] = t->pts[j];
                if (sel)
                        qsort(sel, m, sizeof *sel, cmp_xy);
                for (size_t j = 0; j < m; j++) {
                        json_t *r = x->recs[sel[j].i];
                        fprintf(dat.f, "%.10g %.6g %.6g", sel[j].x,
                                (double)json_integer_value(json_object_get(r, "sim_ps")) / scale,
                                (double)json_integer_value(json_object_get(r, "kernel_ps")) /
                                        scale);
                        if (pn->figure.roofline_bytes_per_x > 0)
                                fprintf(dat.f, " %.6g",
                                        (double)json_integer_value(
                                                json_object_get(r, "hbm_roofline_ps")) / scale);
                        fputc('\n', dat.f);
                }
                free(sel);
        }
        char name[300];
        snprintf(name, sizeof name, "%s.dat", stem);
        return text_save(&dat, dir, name);
}

/* Exact tics at the x values when they are few (12 at most). */
static void gp_xtics(FILE *f, const struct time_pts *t)
{
        if (t->n > 64)
                return;
        double uniq[64];
        size_t nu = 0;
        for (size_t j = 0; j < t->n; j++) {
                size_t u = 0;
                while (u < nu && uniq[u] != t->pts[j].x)
                        u++;
                if (u == nu && nu < 12)
                        uniq[nu++] = t->pts[j].x;
        }
        if (nu > 12)
                return;
        fputs("set xtics (", f);
        for (size_t u = 0; u < nu; u++) {
                char lab[32];
                if (!(t->all_binary && binary_label(uniq[u], lab, sizeof lab)))
                        snprintf(lab, sizeof lab, "%g", uniq[u]);
                fputs(u ? ", " : "", f);
                gp_str(f, "%s", lab);
                fprintf(f, " %.10g", uniq[u]);
        }
        fputs(")\n", f);
}

/* The plot command: a line per series, then the HBM roofline (roof):
 * one line per series from the data's 4th column when the points have
 * their own bandwidths (own_roof), else roof(x) of the machine's. */
static void gp_time_plot(FILE *f, const struct sweep__ctx *x, const struct sweep_panel *pn,
                         const char *xkey, const struct time_pts *t, bool roof, bool own_roof)
{
        static const int marks[] = { 7, 5, 9, 11, 13, 15, 6, 4, 8, 10, 12, 14 };
        fputs("plot \\\n", f);
        for (size_t k = 0; k < t->n_series; k++) {
                fprintf(f, "    data index %zu using 1:2 with linespoints lw 2 pt %d title ", k,
                        marks[k % 12]);
                gp_str(f, "%s", t->labels[k]);
                fputs(k + 1 < t->n_series || roof ? ", \\\n" : "\n", f);
        }
        if (roof && own_roof) {
                for (size_t k = 0; k < t->n_series; k++) {
                        fprintf(f, "    data index %zu using 1:4 with lines dt 2 lw 2 lc rgb "
                                "\"black\" ", k);
                        if (k == 0) {
                                fputs("title ", f);
                                gp_str(f, "HBM roofline: %.6g B x %s / own HBM bandwidth "
                                       "per point", pn->figure.roofline_bytes_per_x, xkey);
                        } else {
                                fputs("notitle", f);
                        }
                        fputs(k + 1 < t->n_series ? ", \\\n" : "\n", f);
                }
        } else if (roof) {
                char bw[64];
                fmt_si((double)x->totals.hbm_bw_bytes_per_s, "B/s", bw, sizeof bw);
                fputs("    roof(x) with lines dt 2 lw 2 lc rgb \"black\" title ", f);
                gp_str(f, "HBM roofline: %.6g B x %s / %s", pn->figure.roofline_bytes_per_x,
                       xkey, bw);
                fputc('\n', f);
        }
}

/* Write STEM.gp, which draws STEM.dat as STEM.png and STEM.svg. */
static bool time_gp(const struct sweep__ctx *x, const struct sweep_panel *pn, const char *xkey,
                    const struct time_pts *t, const char *unit, double scale, const char *dir,
                    const char *stem)
{
        const struct sweep_spec *s = x->spec;
        /* Log axes where the values span 8x or more (or when asked). */
        bool log_x = pn->figure.log > 0 ||
                     (pn->figure.log < 0 && t->min_x > 0 && t->max_x >= 8 * t->min_x);
        bool log_y = pn->figure.log > 0 ||
                     (pn->figure.log < 0 && t->min_ps > 0 && t->max_ps >= 8 * t->min_ps);
        struct text gp;
        if (!text_open(&gp))
                return false;
        char what[512];
        snprintf(what, sizeof what, "Simulated time vs %s, panel %s (kernel %s) of sweep %s.",
                 xkey, pn->name, pn->kernel, s->name);
        gp_header(gp.f, what, stem);
        fputs("data = ", gp.f);
        gp_str(gp.f, "%s.dat", stem);
        fputs("\nset title ", gp.f);
        char on[300];
        machine_title(x, pn->first_point, pn->n_points, on, sizeof on);
        gp_str(gp.f, "%s: %s on %s", pn->name, pn->kernel, on);
        fputs("\nset xlabel ", gp.f);
        gp_str(gp.f, "%s", pn->figure.x_label ? pn->figure.x_label : xkey);
        fputs("\nset ylabel ", gp.f);
        gp_str(gp.f, "simulated time, launch to completion (%s)", unit);
        fputc('\n', gp.f);
        /* The key in the top corner the lines leave free: left when time
         * grows with x; linear axes get headroom above the lines for it. */
        /* A key of long names or many lines would cover the lines or be
         * cut at the picture's edge: it goes below the plot, one line per
         * entry, and the picture grows to hold it whole. */
        size_t longest = 0;
        for (size_t k = 0; k < t->n_series; k++)
                longest = strlen(t->labels[k]) > longest ? strlen(t->labels[k]) : longest;
        bool below = longest > KEY_INSIDE_CHARS || t->n_series > KEY_INSIDE_ROWS;
        fprintf(gp.f, "set grid xtics ytics mxtics mytics lc rgb \"#dddddd\"\n"
                "set border 3\nset tics nomirror\nset pointsize 1.3\n");
        if (below) {
                fig_w = (int)(longest * KEY_CHAR_PX + 160) > FIG_W
                                ? (int)(longest * KEY_CHAR_PX + 160) : FIG_W;
                fig_h = FIG_H + 60 + (int)(t->n_series < 200 ? t->n_series : 200) * KEY_ROW_PX;
                fputs("set key below left Left reverse maxcols 1 box opaque\n", gp.f);
        } else {
                fprintf(gp.f, "set key top %s box opaque\n",
                        t->y_at_max_x >= t->y_at_min_x ? "left" : "right");
        }
        if (log_x)
                fputs("set logscale x\n", gp.f);
        if (log_y)
                fputs("set logscale y\nset format y \"%g\"\n", gp.f);
        else
                fprintf(gp.f, "set yrange [0:%.6g]\n",
                        t->max_ps / scale * (below ? 1.1 : 1.25 + 0.07 * (double)t->n_series));
        gp_xtics(gp.f, t);
        /* One x value (one good point, or every point at one x): a range
         * around it, which gnuplot cannot make of a single value. */
        double pad = t->max_x > t->min_x ? (t->max_x - t->min_x) * 0.05
                                         : fmax(fabs(t->min_x) * 0.5, 1.0);
        if (log_x)
                fprintf(gp.f, "set xrange [%.10g:%.10g]\n", t->min_x / 1.3, t->max_x * 1.3);
        else
                fprintf(gp.f, "set xrange [%.10g:%.10g]\n", t->min_x - pad, t->max_x + pad);
        bool roof = pn->figure.roofline_bytes_per_x > 0 && x->totals.hbm_bw_bytes_per_s;
        /* A point whose machine has another HBM bandwidth (a --set in the
         * sweep) is held to its own roofline: then the rooflines are
         * drawn from the points' own values (the data's 4th column). */
        bool own_roof = false;
        for (size_t j = 0; roof && j < t->n; j++) {
                json_int_t bw = json_integer_value(json_object_get(x->recs[t->pts[j].i],
                                                                   "hbm_bw_bytes_per_s"));
                own_roof = own_roof || (bw > 0 && (uint64_t)bw != x->totals.hbm_bw_bytes_per_s);
        }
        if (roof && !own_roof) {
                char bw[64];
                fmt_si((double)x->totals.hbm_bw_bytes_per_s, "B/s", bw, sizeof bw);
                fprintf(gp.f, "hbm_bw = %.10g    # the machine's HBM bandwidth, bytes/s (%s)\n",
                        (double)x->totals.hbm_bw_bytes_per_s, bw);
                fprintf(gp.f, "bytes_per_x = %.10g    # bytes that must cross HBM per unit of x\n",
                        pn->figure.roofline_bytes_per_x);
                fprintf(gp.f, "unit = %.10g    # ps per %s\n", scale, unit);
                fputs("roof(x) = x * bytes_per_x / hbm_bw * 1e12 / unit\n", gp.f);
                fputs("set samples 400\n", gp.f);
        }
        gp_png(gp.f, stem);
        gp_time_plot(gp.f, x, pn, xkey, t, roof, own_roof);
        gp_svg(gp.f, stem);
        fig_w = FIG_W;
        fig_h = FIG_H;
        char name[300];
        snprintf(name, sizeof name, "%s.gp", stem);
        return text_save(&gp, dir, name);
}

/* Write time_PANEL.dat and .gp; false if the panel has nothing to draw. */
static bool time_figure(const struct sweep__ctx *x, const struct sweep_panel *pn,
                        const char *dir, char *stem, size_t stem_len)
{
        const char *xkey = panel_x(x, pn);
        if (!xkey)
                return false;
        struct time_pts t;
        bool ok = time_collect(x, pn, xkey, &t);
        if (ok) {
                double scale;
                const char *unit = time_unit(t.max_ps, &scale);
                snprintf(stem, stem_len, "time_%s", pn->name);
                ok = time_dat(x, pn, xkey, &t, unit, scale, dir, stem) &&
                     time_gp(x, pn, xkey, &t, unit, scale, dir, stem);
        }
        time_pts_free(&t);
        return ok;
}

/* ---- bar charts over panels (or over points) ---- */

/* The rows of the bar charts: panels, or the points of a lone panel. */
struct rows {
        size_t n;                    /* rows */
        bool points;                 /* rows are points of panel 0 */
};

static void row_label(const struct sweep__ctx *x, const struct rows *r, size_t k, char *buf,
                      size_t len)
{
        const struct sweep_spec *s = x->spec;
        if (!r->points) {
                snprintf(buf, len, "%s", s->panels[k].name);
                return;
        }
        /* The point's values; a value equal to the one before it (linked
         * axes: m = n = k) is said once. */
        const struct sweep_point *pt = &s->points[k];
        size_t at = 0;
        buf[0] = '\0';
        for (size_t c = 0; c < pt->n_coords && at < len; c++) {
                if (c && strcmp(pt->coords[c].value, pt->coords[c - 1].value) == 0)
                        continue;
                char lab[256];
                at += (size_t)snprintf(buf + at, len - at, "%s%s", c ? " " : "",
                                       sweep_kv_label(&pt->coords[c], lab, sizeof lab));
        }
        if (!buf[0])
                snprintf(buf, len, "%zu", k);
        one_line(buf);
        for (char *p = buf; *p; p++)    /* the label is a quoted string in the data */
                if (*p == '"')
                        *p = '\'';
}

/* Row k's summary: a panel's op_log_summary or a point's record (both
 * have utilisation and pe_cpu_issue_ps); NULL for a failed point. */
static json_t *row_summary(const struct sweep__ctx *x, json_t *sw, const struct rows *r, size_t k)
{
        if (r->points)
                return is_ok(x->recs[k]) ? x->recs[k] : NULL;
        return json_object_get(json_array_get(json_object_get(sw, "panels"), k),
                               "op_log_summary");
}

static const char *const class_names[] = { "pe_cpu", "pe_dma", "pe_gemm", "pe_math",
                                           "hbm_channel", NULL };
static const char *const class_titles[] = { "PE_CPU (dispatch)", "PE_DMA", "PE_GEMM",
                                            "PE_MATH", "HBM channels", NULL };

static void bar_style(FILE *f, const struct rows *r, bool stacked)
{
        fprintf(f, "set xrange [-0.6:%.1f]\n", (double)r->n - 0.4);
        fprintf(f, "set style data histograms\nset style histogram %s\n",
                stacked ? "rowstacked" : "clustered gap 1");
        fputs("set style fill solid 0.85 border -1\nset boxwidth 0.8 relative\n"
              "set grid ytics lc rgb \"#dddddd\"\nset border 3\nset tics nomirror\n"
              "set key outside right top\nset yrange [0:*]\n", f);
        if (r->n > 6)
                fputs("set xtics rotate by -35 left\n", f);
}

/* A bar figure over the rows: its files' stem, what its data are, what
 * it shows (the script's header), its title (then "(sweep S on M)"), its y axis and
 * whether its bars stack. */
struct bar_fig {
        const char *stem;            /* STEM.dat and STEM.gp */
        const char *data;            /* what STEM.dat holds, for its first line */
        const char *what;            /* one sentence for the script's header */
        const char *title;           /* the picture's title, before the sweep's name */
        const char *ylabel;          /* the y axis */
        bool stacked;                /* rowstacked bars; else clustered */
};

static const struct bar_fig util_fig = {
        "utilisation",
        "utilisation per component class, % of the kernel time (kernel-time-weighted over a "
        "panel's points)",
        "Utilisation per component class: busy time over the kernel time and the number of "
        "such components.",
        "Utilisation per component class", "busy share of the kernel time (%)", false,
};

static const struct bar_fig dispatch_fig = {
        "dispatch",
        "PE_CPU dispatch (issue) time as % of the PEs' kernel time, by op type",
        "PE_CPU dispatch share: the time the PEs' control CPUs spend issuing ops, as a share "
        "of the kernel time, stacked by op type.",
        "PE_CPU dispatch share by op type", "PE_CPU issue time (% of the kernel time)", true,
};

/* Open dat, STEM.dat to be, with its first line. */
static bool bar_data(const struct sweep__ctx *x, const struct bar_fig *fig, struct text *dat)
{
        if (!text_open(dat))
                return false;
        fprintf(dat->f, "# cubesim sweep %s: %s\n", x->spec->name, fig->data);
        return true;
}

/* Save dat as STEM.dat, then open gp and write fig's script up to its plot
 * command: header, title, axes, bar style, PNG terminal. */
static bool bar_begin(const struct sweep__ctx *x, const struct rows *r, const struct bar_fig *fig,
                      struct text *dat, struct text *gp, const char *dir)
{
        char name[300];
        snprintf(name, sizeof name, "%s.dat", fig->stem);
        if (!text_save(dat, dir, name) || !text_open(gp))
                return false;
        gp_header(gp->f, fig->what, fig->stem);
        fputs("set title ", gp->f);
        char on[300];
        machine_title(x, 0, x->spec->n_points, on, sizeof on);
        gp_str(gp->f, "%s (sweep %s on %s)", fig->title, x->spec->name, on);
        fprintf(gp->f, "\nset ylabel \"%s\"\nset xlabel \"%s\"\n", fig->ylabel,
                r->points ? "point" : "panel");
        bar_style(gp->f, r, fig->stacked);
        gp_png(gp->f, fig->stem);
        return true;
}

/* The class names ending a .dat file's header line, then a line a row: its
 * label and, per class, the number under key in the row's summary times
 * mul over div (0 when missing), as %.6g when short, else %.4f. */
static void class_rows(const struct sweep__ctx *x, json_t *sw, const struct rows *r, FILE *f,
                       const char *key, const char *const *classes, double mul, double div,
                       bool short_form)
{
        for (int c = 0; classes[c]; c++)
                fprintf(f, " %s", classes[c]);
        fputc('\n', f);
        for (size_t k = 0; k < r->n; k++) {
                json_t *by = json_object_get(row_summary(x, sw, r, k), key);
                char lab[200];
                row_label(x, r, k, lab, sizeof lab);
                fprintf(f, "\"%s\"", lab);
                for (int c = 0; classes[c]; c++) {
                        double v = mul * json_number_value(json_object_get(by, classes[c])) / div;
                        fprintf(f, short_form ? " %.6g" : " %.4f", v);
                }
                fputc('\n', f);
        }
}

static bool util_figure(const struct sweep__ctx *x, json_t *sw, const struct rows *r,
                        const char *dir)
{
        struct text dat, gp;
        if (!bar_data(x, &util_fig, &dat))
                return false;
        fputs("# row", dat.f);
        class_rows(x, sw, r, dat.f, "utilisation", class_names, 100.0, 1.0, false);
        if (!bar_begin(x, r, &util_fig, &dat, &gp, dir))
                return false;
        fputs("plot \\\n", gp.f);
        for (int c = 0; class_names[c]; c++)
                fprintf(gp.f, "    \"utilisation.dat\" using %d:xtic(1) title \"%s\"%s\n", c + 2,
                        class_titles[c], class_names[c + 1] ? ", \\" : "");
        gp_svg(gp.f, "utilisation");
        return text_save(&gp, dir, "utilisation.gp");
}

enum { DISPATCH_TOP = 7, DISPATCH_MAX_OPS = 64 };

/* The op types of the rows' PE_CPU issue time, most first, with their
 * totals; returns how many. The figure draws the first DISPATCH_TOP (all
 * when there is one more) and the rest as "other". */
static size_t dispatch_ops(const struct sweep__ctx *x, json_t *sw, const struct rows *r,
                           const char **ops, double *tot)
{
        size_t n_ops = 0;
        for (size_t k = 0; k < r->n; k++) {
                const char *key;
                json_t *v;
                json_object_foreach(json_object_get(row_summary(x, sw, r, k), "pe_cpu_issue_ps"),
                                    key, v) {
                        size_t j = 0;
                        while (j < n_ops && strcmp(ops[j], key) != 0)
                                j++;
                        if (j == n_ops) {
                                if (n_ops == DISPATCH_MAX_OPS)
                                        continue;
                                ops[n_ops] = key;
                                tot[n_ops++] = 0;
                        }
                        tot[j] += (double)json_integer_value(v);
                }
        }
        for (size_t a = 1; a < n_ops; a++)     /* by total, descending; stable */
                for (size_t b = a; b > 0 && tot[b] > tot[b - 1]; b--) {
                        double t = tot[b];
                        tot[b] = tot[b - 1];
                        tot[b - 1] = t;
                        const char *o = ops[b];
                        ops[b] = ops[b - 1];
                        ops[b - 1] = o;
                }
        return n_ops;
}

static size_t dispatch_n_top(size_t n_ops)
{
        return n_ops > DISPATCH_TOP + 1 ? DISPATCH_TOP : n_ops;
}

/* The report's breakdown of the dispatch figure's "other" slice: each op
 * type in it with its share of all PE_CPU issue time in the sweep. */
static void dispatch_other(const struct sweep__ctx *x, json_t *sw, FILE *f)
{
        const char *ops[DISPATCH_MAX_OPS];
        double tot[DISPATCH_MAX_OPS], all = 0;
        struct rows r = { x->spec->n_panels, false };
        size_t n_ops = dispatch_ops(x, sw, &r, ops, tot);
        size_t n_top = dispatch_n_top(n_ops);
        if (n_ops == n_top)
                return;
        for (size_t j = 0; j < n_ops; j++)
                all += tot[j];
        fputs("\nThe dispatch figure's *other* slice holds, as shares of all PE_CPU issue "
              "time:", f);
        for (size_t j = n_top; j < n_ops; j++)
                fprintf(f, "%s `%s` %.2f%%", j > n_top ? "," : "", ops[j],
                        all > 0 ? 100.0 * tot[j] / all : 0.0);
        fputs(".\n", f);
}

static bool dispatch_figure(const struct sweep__ctx *x, json_t *sw, const struct rows *r,
                            const char *dir)
{
        /* The op types with the most issue time overall; the rest is "other". */
        const char *ops[DISPATCH_MAX_OPS];
        double tot[DISPATCH_MAX_OPS];
        size_t n_ops = dispatch_ops(x, sw, r, ops, tot);
        size_t n_top = dispatch_n_top(n_ops);
        bool other = n_ops > n_top;
        struct text dat, gp;
        if (!bar_data(x, &dispatch_fig, &dat))
                return false;
        fputs("row", dat.f);
        for (size_t j = 0; j < n_top; j++)
                fprintf(dat.f, " %s", ops[j]);
        if (other)
                fputs(" other", dat.f);
        fputc('\n', dat.f);
        for (size_t k = 0; k < r->n; k++) {
                json_t *sum = row_summary(x, sw, r, k);
                json_t *iss = json_object_get(sum, "pe_cpu_issue_ps");
                double all = 0;
                const char *key;
                json_t *v;
                json_object_foreach(iss, key, v)
                        all += (double)json_integer_value(v);
                double share = 100.0 * json_number_value(
                        json_object_get(json_object_get(sum, "utilisation"), "pe_cpu"));
                char lab[200];
                row_label(x, r, k, lab, sizeof lab);
                fprintf(dat.f, "\"%s\"", lab);
                double rest = all;
                for (size_t j = 0; j < n_top; j++) {
                        double t = (double)json_integer_value(json_object_get(iss, ops[j]));
                        rest -= t;
                        fprintf(dat.f, " %.5f", all > 0 ? share * t / all : 0.0);
                }
                if (other)
                        fprintf(dat.f, " %.5f", all > 0 ? share * rest / all : 0.0);
                fputc('\n', dat.f);
        }
        if (!bar_begin(x, r, &dispatch_fig, &dat, &gp, dir))
                return false;
        size_t cols = n_top + (other ? 1 : 0);
        if (cols == 0) {
                fputs("set label 1 \"no PE_CPU issue time recorded\" at graph 0.5, 0.5 center\n"
                      "plot 0 notitle\n", gp.f);
        } else {
                fputs("plot \\\n", gp.f);
                for (size_t j = 0; j < cols; j++)
                        fprintf(gp.f, "    \"dispatch.dat\" using %zu%s title columnheader(%zu)"
                                "%s%s\n", j + 2, j == 0 ? ":xtic(1)" : "", j + 2,
                                other && j + 1 == cols ? " lc rgb \"#aaaaaa\"" : "",
                                j + 1 < cols ? ", \\" : "");
        }
        gp_svg(gp.f, "dispatch");
        return text_save(&gp, dir, "dispatch.gp");
}

/* The energy classes of run --json's energy_by_class_j, in its order. */
static const char *const energy_classes[] = { "pe_cpu", "pe_dma", "pe_gemm", "pe_math", "tcm",
                                              "noc", "hbm", "inter_cube", "inter_sip", NULL };

/* A unit for energies up to max_j: its name and the joules of one. */
static const char *energy_unit(double max_j, double *scale)
{
        *scale = max_j >= 1 ? 1 : max_j >= 1e-3 ? 1e-3 : max_j >= 1e-6 ? 1e-6 : 1e-9;
        return *scale == 1 ? "J" : *scale == 1e-3 ? "mJ" : *scale == 1e-6 ? "µJ" : "nJ";
}

/* Energy per row (a point, or a panel's points summed), stacked by
 * component class, dynamic and static together (docs/adr/0024). */
static bool energy_figure(const struct sweep__ctx *x, json_t *sw, const struct rows *r,
                          const char *dir)
{
        double max_j = 0, scale;
        for (size_t k = 0; k < r->n; k++)
                max_j = fmax(max_j, json_number_value(json_object_get(row_summary(x, sw, r, k),
                                                                      "energy_j")));
        const char *unit = energy_unit(max_j, &scale);
        char ylabel[64];
        snprintf(ylabel, sizeof ylabel, "energy (%s)", unit);
        const struct bar_fig fig = {
                "energy",
                "energy per component class (dynamic and static), summed over a panel's points",
                "Energy by component class: each class's dynamic energy (MACs, element-ops, "
                "bytes, hops) and its static energy over the kernel time, stacked.",
                "Energy by component class", ylabel, true,
        };
        struct text dat, gp;
        if (!bar_data(x, &fig, &dat))
                return false;
        fprintf(dat.f, "# in %s\nrow", unit);
        class_rows(x, sw, r, dat.f, "energy_by_class_j", energy_classes, 1.0, scale, true);
        if (!bar_begin(x, r, &fig, &dat, &gp, dir))
                return false;
        fputs("plot \\\n", gp.f);
        for (int c = 0; energy_classes[c]; c++)
                fprintf(gp.f, "    \"energy.dat\" using %d%s title columnheader(%d)%s\n", c + 2,
                        c == 0 ? ":xtic(1)" : "", c + 2, energy_classes[c + 1] ? ", \\" : "");
        gp_svg(gp.f, "energy");
        return text_save(&gp, dir, "energy.gp");
}

/* ---- gnuplot ---- */

/* Run gnuplot on the scripts in dir; its messages go to dir/gnuplot.log.
 * 0, or -ENOENT (no gnuplot), or -EIO (it failed). */
static int run_gnuplot(const char *dir, char scripts[][300], size_t n)
{
        const char *bin = getenv("CUBESIM_GNUPLOT");
        if (!bin || !*bin)
                bin = "gnuplot";
        fflush(stdout);
        fflush(stderr);
        /* One gnuplot per script: a figure gnuplot cannot draw costs only
         * itself (gnuplot stops at a script's first error). */
        int rc = 0;
        for (size_t i = 0; i < n; i++) {
                pid_t pid = fork();
                if (pid < 0)
                        return -EIO;
                if (pid == 0) {
                        if (chdir(dir) < 0)
                                _exit(126);
                        int fd = open("gnuplot.log", O_WRONLY | O_CREAT | O_CLOEXEC |
                                      (i ? O_APPEND : O_TRUNC), 0644);
                        if (fd >= 0) {
                                dup2(fd, STDOUT_FILENO);
                                dup2(fd, STDERR_FILENO);
                        }
                        char *argv[] = { (char *)bin, scripts[i], NULL };
                        execvp(bin, argv);
                        _exit(errno == ENOENT ? 127 : 126);
                }
                int st;
                while (waitpid(pid, &st, 0) < 0)
                        if (errno != EINTR)
                                return -EIO;
                if (WIFEXITED(st) && WEXITSTATUS(st) == 127)
                        return -ENOENT;
                if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
                        rc = -EIO;
        }
        return rc;
}

int sweep_gnuplot(const char *dir, char scripts[][300], size_t n)
{
        return run_gnuplot(dir, scripts, n);
}

/* ---- the report ---- */

static void md_time(FILE *f, double ps, double scale)
{
        fprintf(f, " %.4g |", ps / scale);
}

/* A warning for each good point that left cubes or PEs without work:
 * its figures describe a smaller machine than the one it ran on. */
static void idle_warnings(const struct sweep__ctx *x, FILE *f, const struct sweep_panel *pn)
{
        const struct sweep_spec *s = x->spec;
        bool any = false;
        for (size_t i = pn->first_point; i < pn->first_point + pn->n_points; i++) {
                json_t *r = x->recs[i];
                json_int_t pes = json_integer_value(json_object_get(r, "idle_pes"));
                json_int_t cubes = json_integer_value(json_object_get(r, "idle_cubes"));
                if (!is_ok(r) || (pes <= 0 && cubes <= 0))
                        continue;
                if (!any)
                        fputs("\n", f);
                any = true;
                const struct sweep_point *pt = &s->points[i];
                fprintf(f, "- **Warning:** point %zu (", i - pn->first_point);
                for (size_t c = 0; c < pt->n_coords; c++) {
                        char lab[256];
                        fprintf(f, "%s%s=%s", c ? ", " : "", pt->coords[c].key,
                                sweep_kv_label(&pt->coords[c], lab, sizeof lab));
                }
                if (s->machines_vary)   /* its machine is not the sweep's: no totals */
                        fprintf(f, ") leaves %lld cubes and %lld PEs of its machine idle",
                                (long long)cubes, (long long)pes);
                else
                        fprintf(f, ") leaves %lld of %llu cubes and %lld of %llu PEs idle",
                                (long long)cubes, (unsigned long long)x->totals.cubes,
                                (long long)pes, (unsigned long long)x->totals.pes);
                fputs(" (no DMA, GEMM or MATH work): its utilisation and bounds count units it "
                      "never used.\n", f);
        }
}

static void report_panel(const struct sweep__ctx *x, FILE *f, size_t p, bool have_fig,
                         const char *fig_dir_name)
{
        const struct sweep_spec *s = x->spec;
        const struct sweep_panel *pn = &s->panels[p];
        fprintf(f, "\n## Panel %s: kernel `%s`\n\n", pn->name, pn->kernel);
        if (pn->own_topo && pn->n_points) {
                char m[256];
                sweep_point_machine(s, pn->first_point, m, sizeof m);
                fprintf(f, "Machine: `%s` (`%s`).\n\n", m, pn->topo_path ? pn->topo_path
                                                                         : "built in");
        }
        if (pn->n_params) {
                fputs("Fixed parameters:", f);
                for (size_t j = 0; j < pn->n_params; j++)
                        fprintf(f, "%s `%s=%s`", j ? "," : "", pn->params[j].key,
                                pn->params[j].value);
                fputs(".\n\n", f);
        }
        if (have_fig)
                fprintf(f, "![simulated time, panel %s](%s/time_%s.png)\n\n", pn->name,
                        fig_dir_name, pn->name);
        /* Columns: the coordinates of the first point, then the figures. */
        const struct sweep_point *p0 = &s->points[pn->first_point];
        double max_ps = 0;
        bool roof = false;
        for (size_t i = pn->first_point; i < pn->first_point + pn->n_points; i++) {
                max_ps = fmax(max_ps, (double)json_integer_value(json_object_get(x->recs[i],
                                                                                  "sim_ps")));
                roof = roof || json_object_get(x->recs[i], "hbm_roofline_ps");
        }
        double scale;
        const char *unit = time_unit(max_ps, &scale);
        fputs("| # |", f);
        for (size_t c = 0; c < p0->n_coords; c++)
                fprintf(f, " %s |", p0->coords[c].key);
        fprintf(f, " status | sim time (%s) | kernel time (%s) |", unit, unit);
        if (roof)
                fprintf(f, " HBM roofline (%s) | of roofline |", unit);
        fputs(" TFLOP/s | of peak | bound by | of bound |", f);
        fputs(" PE_CPU | PE_DMA | PE_GEMM | PE_MATH | HBM | energy (J) | avg power (W) |", f);
        fputs(" events | wall (s) |\n|---|", f);
        for (size_t c = 0; c < p0->n_coords; c++)
                fputs("---|", f);
        fputs("---|---:|---:|", f);
        if (roof)
                fputs("---:|---:|", f);
        fputs("---:|---:|---|---:|", f);
        fputs("---:|---:|---:|---:|---:|---:|---:|---:|---:|\n", f);
        for (size_t i = pn->first_point; i < pn->first_point + pn->n_points; i++) {
                json_t *r = x->recs[i];
                fprintf(f, "| %zu |", i - pn->first_point);
                for (size_t c = 0; c < p0->n_coords; c++) {
                        const struct sweep_kv *kv = sweep_point_param(s, i, p0->coords[c].key);
                        char lab[256];
                        fprintf(f, " %s |", kv ? sweep_kv_label(kv, lab, sizeof lab) : "");
                }
                const char *st = json_string_value(json_object_get(r, "status"));
                if (!is_ok(r)) {
                        fprintf(f, " **%s** (exit %d) |", st ? st : "failed",
                                (int)json_integer_value(json_object_get(r, "exit_status")));
                        for (int c = 0; c < (roof ? 17 : 15); c++)
                                fputs(" |", f);
                        fputc('\n', f);
                        continue;
                }
                fputs(" ok |", f);
                md_time(f, (double)json_integer_value(json_object_get(r, "sim_ps")), scale);
                md_time(f, (double)json_integer_value(json_object_get(r, "kernel_ps")), scale);
                if (roof) {
                        json_t *rp = json_object_get(r, "hbm_roofline_ps");
                        if (rp) {
                                md_time(f, (double)json_integer_value(rp), scale);
                                fprintf(f, " %.1f%% |", 100.0 * json_number_value(
                                        json_object_get(r, "of_roofline")));
                        } else {
                                fputs(" | |", f);
                        }
                }
                double tf = json_number_value(json_object_get(r, "tflops"));
                double peak = json_number_value(json_object_get(r, "peak_tflops"));
                const char *by = json_string_value(json_object_get(r, "bound_by"));
                fprintf(f, " %.2f | %.1f%% | %s | %.1f%% |", tf, peak > 0 ? 100.0 * tf / peak : 0.0,
                        by ? by : "", 100.0 * json_number_value(json_object_get(r, "of_bound")));
                json_t *u = json_object_get(r, "utilisation");
                for (int c = 0; class_names[c]; c++)
                        fprintf(f, " %.1f%% |",
                                100.0 * json_number_value(json_object_get(u, class_names[c])));
                fprintf(f, " %.4g | %.4g |", json_number_value(json_object_get(r, "energy_j")),
                        json_number_value(json_object_get(r, "avg_power_w")));
                fprintf(f, " %lld | %.2f |\n",
                        (long long)json_integer_value(json_object_get(r, "events")),
                        json_number_value(json_object_get(r, "wall_s")));
        }
        idle_warnings(x, f, pn);
        bool any = false;
        for (size_t i = pn->first_point; i < pn->first_point + pn->n_points; i++) {
                json_t *r = x->recs[i];
                if (is_ok(r))
                        continue;
                if (!any)
                        fputs("\nFailed points:\n", f);
                any = true;
                fprintf(f, "\n- point %zu:\n\n", i - pn->first_point);
                const char *e = json_string_value(json_object_get(r, "error"));
                fputs("  ```\n", f);
                for (const char *l = e ? e : "(no message)"; *l;) {
                        const char *nl = strchr(l, '\n');
                        size_t len = nl ? (size_t)(nl - l) : strlen(l);
                        fprintf(f, "  %.*s\n", (int)len, l);
                        l += len + (nl ? 1 : 0);
                }
                fputs("  ```\n", f);
        }
}

static bool write_report(const struct sweep__ctx *x, json_t *sw, bool *have_time, bool figures,
                         const char *why_not)
{
        const struct sweep_spec *s = x->spec;
        struct text t;
        if (!text_open(&t))
                return false;
        FILE *f = t.f;
        char peak[64], bw[64], tcm[64];
        fmt_si((double)x->totals.peak_gemm_flops_per_s, "FLOP/s", peak, sizeof peak);
        fmt_si((double)x->totals.hbm_bw_bytes_per_s, "B/s", bw, sizeof bw);
        snprintf(tcm, sizeof tcm, "%.4g MiB", (double)x->totals.tcm_bytes / 1048576.0);
        fprintf(f, "# Sweep %s\n\n", s->name);
        fprintf(f, "cubesim %s, machine `%s`: %llu PEs in %llu cubes (%llu SIP%s), peak GEMM "
                "%s, HBM %s, TCM %s in all.\n\n", CUBESIM_VERSION, x->topo.name,
                (unsigned long long)x->totals.pes, (unsigned long long)x->totals.cubes,
                (unsigned long long)x->totals.sips, x->totals.sips == 1 ? "" : "s", peak, bw, tcm);
        if (s->machines_vary)
                fputs("Points run on machines of their own: each names its machine in the "
                      "`topology` or `machine` column (the file's name without `.yaml`, then "
                      "`/VARIANT`) or its panel's heading, and in `sweep.json` as `machine`; "
                      "the machine described above is the spec's.\n\n", f);
        size_t n_failed = (size_t)json_integer_value(json_object_get(sw, "n_failed"));
        fprintf(f, "%zu points in %zu panel%s, %zu failed. This run: %.2f s wall, %.3g simulated "
                "events/s end to end. Every number comes from `sweep.json` next to this file; "
                "points in op_log mode (timing only).\n", s->n_points, s->n_panels,
                s->n_panels == 1 ? "" : "s", n_failed,
                json_number_value(json_object_get(sw, "wall_s")),
                json_number_value(json_object_get(sw, "events_per_s")));
        fputs("\nTerms: *sim time* is launch to completion: from the host handing the kernel to "
              "the IO_CPUs until the last IO_CPU hears that every PE is done. *Kernel time* is "
              "from the common start of the PEs to the end of the last PE. Utilisation is busy "
              "time over kernel time per unit of a class; a panel's "
              "utilisation is the kernel-time-weighted mean over its points, so a long point "
              "weighs more than a short one. *Bound by* names the resource whose lower bound "
              "(the point's work at its machine's aggregate rate of that resource) is largest; "
              "*of bound* is that bound over the kernel time. *TFLOP/s* is GEMM FLOPs over "
              "kernel time; *of peak* is that over the point's machine's GEMM peak.\n", f);
        if (!figures)
                fprintf(f, "\n**Figures not drawn** (%s). Their data and gnuplot scripts are in "
                        "`figures/`: run `gnuplot *.gp` there.\n", why_not);
        else
                fputs("\n## Where the time goes\n\n![utilisation per component class]"
                      "(figures/utilisation.png)\n\n![PE_CPU dispatch share]"
                      "(figures/dispatch.png)\n\n![energy by component class]"
                      "(figures/energy.png)\n\nFigures are also in SVG, with their gnuplot "
                      "scripts and data, in `figures/`.\n", f);
        dispatch_other(x, sw, f);
        for (size_t p = 0; p < s->n_panels; p++)
                report_panel(x, f, p, figures && have_time[p], "figures");
        if (x->opts->report_extra)
                fputs(x->opts->report_extra, f);
        char dir[4200];
        snprintf(dir, sizeof dir, "%s", x->opts->out_dir);
        return text_save(&t, dir, "report.md");
}

/* Remove the empty pictures gnuplot leaves of a figure it could not draw
 * (it creates the file at 'set output'): an empty picture is no picture. */
static void remove_empty(const char *dir, char scripts[][300], size_t n)
{
        for (size_t i = 0; i < n; i++)
                for (int e = 0; e < 2; e++) {
                        char path[4800];
                        struct stat st;
                        snprintf(path, sizeof path, "%s/%.*s.%s", dir,
                                 (int)strcspn(scripts[i], "."), scripts[i], e ? "svg" : "png");
                        if (stat(path, &st) == 0 && S_ISREG(st.st_mode) && st.st_size == 0)
                                unlink(path);
                }
}

/* Whether gnuplot made every picture of the scripts (a full disk makes it
 * fail quietly); warns of the first missing. */
static bool pictures_made(const char *dir, char scripts[][300], size_t n)
{
        for (size_t i = 0; i < n; i++) {
                static const char *const ext[] = { "png", "svg" };
                for (int e = 0; e < 2; e++) {
                        char path[4800];
                        struct stat st;
                        snprintf(path, sizeof path, "%s/%.*s.%s", dir,
                                 (int)strcspn(scripts[i], "."), scripts[i], ext[e]);
                        if (stat(path, &st) != 0 || st.st_size == 0) {
                                fprintf(stderr, "cubesim sweep: warning: gnuplot did not write "
                                        "%s (see %s/gnuplot.log)\n", path, dir);
                                n_unsaved++;
                                return false;
                        }
                }
        }
        return true;
}

bool sweep__figures(struct sweep__ctx *x, json_t *sw)
{
        const struct sweep_spec *s = x->spec;
        n_unsaved = 0;
        char dir[4200];
        snprintf(dir, sizeof dir, "%s/figures", x->opts->out_dir);
        bool *have_time = calloc(s->n_panels, sizeof *have_time);
        char (*scripts)[300] = calloc(s->n_panels + 3, sizeof *scripts);
        bool drawn = false;
        const char *why_not = "--no-figures";
        if (!have_time || !scripts)
                goto out;
        if (mkdir(dir, 0755) < 0 && errno != EEXIST) {
                fprintf(stderr, "cubesim sweep: warning: cannot make %s: %s\n", dir,
                        strerror(errno));
                why_not = "cannot make figures/";
                n_unsaved++;
                goto report;
        }
        size_t n = 0;
        for (size_t p = 0; p < s->n_panels; p++) {
                char stem[200];
                if (time_figure(x, &s->panels[p], dir, stem, sizeof stem)) {
                        have_time[p] = true;
                        snprintf(scripts[n++], sizeof scripts[0], "%s.gp", stem);
                }
        }
        struct rows rows = { s->n_panels, false };
        if (s->n_panels == 1 && s->n_points <= 40)
                rows = (struct rows){ s->n_points, true };
        if (util_figure(x, sw, &rows, dir))
                snprintf(scripts[n++], sizeof scripts[0], "utilisation.gp");
        if (dispatch_figure(x, sw, &rows, dir))
                snprintf(scripts[n++], sizeof scripts[0], "dispatch.gp");
        if (energy_figure(x, sw, &rows, dir))
                snprintf(scripts[n++], sizeof scripts[0], "energy.gp");
        if (x->opts->no_figures)
                goto report;
        int rc = run_gnuplot(dir, scripts, n);
        if (rc != -ENOENT)
                remove_empty(dir, scripts, n);
        if (rc == -ENOENT) {
                why_not = "gnuplot is not installed";
                fprintf(stderr, "cubesim sweep: warning: gnuplot not found (install gnuplot-nox, "
                        "or set CUBESIM_GNUPLOT): figures not drawn; their data and scripts are "
                        "in %s\n", dir);
        } else if (rc < 0) {
                why_not = "gnuplot failed; see figures/gnuplot.log";
                fprintf(stderr, "cubesim sweep: warning: gnuplot failed (see %s/gnuplot.log): "
                        "some figures may be missing\n", dir);
        } else if (n_unsaved == 0 && pictures_made(dir, scripts, n)) {
                drawn = true;
        } else {
                why_not = "some of their files could not be written";
        }
report:
        x->report_written = write_report(x, sw, have_time, drawn, why_not);
out:
        x->n_unwritten += n_unsaved;
        free(have_time);
        free(scripts);
        return drawn;
}
