/* benches/bench.h: the bench registry.
 *
 * A bench is a named, self-describing measurement: `cubesim bench list`
 * shows every entry of bench_registry with its one-line summary, and
 * `cubesim bench run NAME` calls its run function with the --set
 * parameters. Benches print their figures; none passes or fails on a
 * timing. */
#ifndef CUBESIM_BENCHES_BENCH_H
#define CUBESIM_BENCHES_BENCH_H

#include <stdbool.h>
#include <stdio.h>

#include "base/diag.h"
#include "base/jsonw.h"
#include "base/params.h"

struct bench_ctx {
        struct params *params;       /* --set values; the bench validates them */
        bool json;                   /* --json: print one JSON object instead of text */
        const char *out_dir;         /* --out DIR, or NULL for the bench's default */
        unsigned jobs;               /* --jobs N (1: serial) */
        FILE *out;                   /* where figures go (stdout) */
        struct diag *diag;           /* bad parameters are reported here */
};

struct bench {
        const char *name;            /* registry key, e.g. "engine-hold" */
        const char *summary;         /* one line for `bench list` */
        const char *help;            /* parameters and what is printed */
        const char *const *params;   /* NULL-terminated parameter names */
        /* CLI exit status: 0 ok, 1 the simulation failed, 2 bad parameters. */
        int (*run)(const struct bench_ctx *);
};

extern const struct bench *const bench_registry[];
const struct bench *bench_find(const char *name);

/* Print v (built with base/jsonw's values; released) on c->out as one
 * line of JSON: the only way a bench prints --json. 0, or 1 with the
 * problem in c->diag. */
int bench_print_json(const struct bench_ctx *c, json_t *v);

/* Write a comma list as a YAML flow list: "a,b" -> "[a, b]" (benches
 * that generate sweep specs). */
void bench_flow_list(FILE *f, const char *list);

/* Create the directory path and its parents (a failure to d, located
 * at path). */
void bench_make_dir(const char *path, struct diag *d);
/* Write text to dir/name atomically; a failure is a warning on stderr.
 * 0 or a negative errno. */
int bench_write_text(const char *dir, const char *name, const char *text, size_t len);
/* DIR/figures, created (figs gets its path); -1 with the problem in d. */
int bench_figures_dir(const char *dir, char *figs, size_t len, struct diag *d);
/* A table opened for reading, or NULL with "cannot open" located at path in d. */
FILE *bench_open_table(const char *path, struct diag *d);

#endif
