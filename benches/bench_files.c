/* benches/bench_files.c: what the validation benches share to read their
 * tables and write their outputs (bench.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/fsutil.h"
#include "bench.h"
#include "sweep/sweep.h"

int bench_csv_split(char *line, char **f, unsigned *col, int max)
{
        int n = 0;
        line[strcspn(line, "\r\n")] = '\0';
        for (char *p = line; n < max;) {
                col[n] = (unsigned)(p - line) + 1;
                f[n++] = p;
                char *c = strchr(p, ',');
                if (!c)
                        break;
                *c = '\0';
                p = c + 1;
        }
        return n;
}

void bench_make_dir(const char *path, struct diag *d)
{
        char buf[4400];
        snprintf(buf, sizeof buf, "%s", path);
        for (char *p = buf + 1; *p; p++) {
                if (*p != '/')
                        continue;
                *p = '\0';
                mkdir(buf, 0755);
                *p = '/';
        }
        if (mkdir(buf, 0755) < 0 && errno != EEXIST)
                diag_error_at(d, path, 0, 0, "cannot create the directory: %s", strerror(errno));
}

int bench_write_text(const char *dir, const char *name, const char *text, size_t len)
{
        char path[4400];
        snprintf(path, sizeof path, "%s/%s", dir, name);
        int rc = fs_write_atomic(path, text, len);
        if (rc < 0)
                fprintf(stderr, "cubesim bench: warning: cannot write %s: %s\n", path,
                        strerror(-rc));
        return rc;
}

int bench_save_stream(const char *path, FILE *f, char **buf, size_t *len)
{
        int rc = fclose(f) == 0 ? fs_write_atomic(path, *buf, *len) : -EIO;
        free(*buf);
        *buf = NULL;
        return rc;
}

int bench_write_stream(const char *dir, const char *name, FILE *f, char **buf, size_t *len)
{
        fclose(f);
        int rc = bench_write_text(dir, name, *buf, *len);
        free(*buf);
        *buf = NULL;
        return rc;
}

void bench_draw(const char *figs, char scripts[][300], int n)
{
        if (sweep_gnuplot(figs, scripts, (size_t)n) >= 0)
                return;
        if (n == 1)
                fprintf(stderr, "cubesim bench: warning: gnuplot did not draw %s/%s "
                                "(see gnuplot.log there)\n", figs, scripts[0]);
        else
                fprintf(stderr, "cubesim bench: warning: gnuplot did not draw the figures in %s "
                                "(see gnuplot.log there)\n", figs);
}

FILE *bench_spec_begin(const struct bench_ctx *c, const char *head, const char *name,
                       const char *topo, const char *params, char **buf, size_t *len)
{
        FILE *f = open_memstream(buf, len);
        if (!f)
                return NULL;
        fprintf(f, "%sversion: 1\nname: %s\ntopology: %s\nparams:\n%s", head, name,
                topo ? topo : "default", params);
        bench_machine_params(c, f, "  ");
        fputs("panels:\n", f);
        return f;
}

char *bench_spec_end(FILE *f, char **buf)
{
        if (fclose(f) != 0) {
                free(*buf);
                return NULL;
        }
        return *buf;
}

FILE *bench_outputs_open(struct bench_outputs *o, const char *dir, struct diag *d)
{
        if (bench_figures_dir(dir, o->figs, sizeof o->figs, d) < 0)
                return NULL;
        return open_memstream(&o->buf, &o->len);
}

int bench_figures_dir(const char *dir, char *figs, size_t len, struct diag *d)
{
        snprintf(figs, len, "%.4200s/figures", dir);
        unsigned before = d->n_errors;
        bench_make_dir(figs, d);
        return d->n_errors == before ? 0 : -1;
}

FILE *bench_open_table(const char *path, struct diag *d)
{
        FILE *f = fopen(path, "r");
        if (!f)
                diag_error_at(d, path, 0, 0, "cannot open: %s", strerror(errno));
        return f;
}

int bench_csv_read(const char *path, const char *const *needed, int n_needed, int max_rows,
                   size_t cell_len, bench_csv_row_fn fn, void *ctx, struct diag *d)
{
        enum { MAX_COLS = 32 };
        FILE *f = fopen(path, "r");
        if (!f) {
                diag_error_at(d, path, 0, 0, "cannot open: %s", strerror(errno));
                return -1;
        }
        char line[1024], *fld[MAX_COLS], *cell[MAX_COLS];
        unsigned at[MAX_COLS], cat[MAX_COLS], ln = 1;
        int col[MAX_COLS], n = 0;
        if (n_needed > MAX_COLS || !fgets(line, sizeof line, f)) {
                diag_error_at(d, path, 1, 1, "expected a header line naming the columns");
                fclose(f);
                return -1;
        }
        int nf = bench_csv_split(line, fld, at, MAX_COLS);
        for (int i = 0; i < n_needed; i++) {
                col[i] = -1;
                for (int j = 0; j < nf; j++)
                        if (strcmp(fld[j], needed[i]) == 0)
                                col[i] = j;
                if (col[i] < 0)
                        diag_error_at(d, path, 1, 1, "missing column '%s'", needed[i]);
        }
        while (d->n_errors == 0 && fgets(line, sizeof line, f)) {
                ln++;
                if (line[strspn(line, " \r\n")] == '\0')
                        continue;
                if (n == max_rows) {
                        diag_error_at(d, path, ln, 1, "more than %d rows", max_rows);
                        break;
                }
                nf = bench_csv_split(line, fld, at, MAX_COLS);
                for (int i = 0; i < n_needed && d->n_errors == 0; i++) {
                        if (col[i] >= nf || strlen(fld[col[i]]) >= cell_len)
                                diag_error_at(d, path, ln, col[i] >= nf ? at[nf - 1] : at[col[i]],
                                              "column '%s' is missing or too long", needed[i]);
                        else {
                                cell[i] = fld[col[i]];
                                cat[i] = at[col[i]];
                        }
                }
                if (d->n_errors == 0)
                        fn(ctx, path, n, ln, cell, cat, d);
                n++;
        }
        fclose(f);
        if (d->n_errors == 0 && n == 0)
                diag_error_at(d, path, ln + 1, 1, "no rows: the table has only its header, "
                              "and a MAPE needs at least one measured row");
        return d->n_errors ? -1 : n;
}
