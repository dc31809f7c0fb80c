/* benches/registry.c: the list of benches. Keep README.md's bench list in
 * step: a test compares the two. */
#include <errno.h>
#include <string.h>
#include <sys/stat.h>

#include "base/fsutil.h"
#include "bench.h"

extern const struct bench bench_engine_hold;
extern const struct bench bench_engine_phold;
extern const struct bench bench_gqa_decode_dispatch;
extern const struct bench bench_headline;
extern const struct bench bench_llm_step;
extern const struct bench bench_sim_speed;
extern const struct bench bench_validate_tt_dm;
extern const struct bench bench_validate_tt_gemm;
extern const struct bench bench_validate_tt_ccl;

const struct bench *const bench_registry[] = {
        &bench_engine_hold,
        &bench_engine_phold,
        &bench_gqa_decode_dispatch,
        &bench_headline,
        &bench_llm_step,
        &bench_validate_tt_gemm,
        &bench_validate_tt_dm,
        &bench_validate_tt_ccl,
        &bench_sim_speed,
        NULL,
};

const struct bench *bench_find(const char *name)
{
        for (const struct bench *const *b = bench_registry; *b; b++)
                if (strcmp((*b)->name, name) == 0)
                        return *b;
        return NULL;
}

int bench_print_json(const struct bench_ctx *c, json_t *v)
{
        if (jsonw_print(c->out, v, 0) == 0)
                return 0;
        diag_error(c->diag, "cannot print the figures as JSON (out of memory or a write error)");
        return 1;
}

void bench_flow_list(FILE *f, const char *list)
{
        fputc('[', f);
        for (const char *p = list; *p; p++) {
                if (*p == ',')
                        fputs(", ", f);
                else if (*p != ' ')
                        fputc(*p, f);
        }
        fputc(']', f);
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
