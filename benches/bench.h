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
        const char *topo;            /* --topo FILE: the machine of benches that run kernels */
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

/* Define the bench sym (registry.c lists it): its registry name, its
 * NULL-terminated parameter names, the summary line and the help text;
 * its run function is the file's static `run`. */
#define BENCH_DEFINE(sym, name_, params_, summary_, help_)                                   \
        const struct bench sym = {                                                           \
                .name = (name_),                                                             \
                .summary = (summary_),                                                       \
                .help = (help_),                                                             \
                .params = (params_),                                                         \
                .run = run,                                                                  \
        }

extern const struct bench *const bench_registry[];
const struct bench *bench_find(const char *name);

/* Print v (built with base/jsonw's values; released) on c->out as one
 * line of JSON: the only way a bench prints --json. 0, or 1 with the
 * problem in c->diag. */
int bench_print_json(const struct bench_ctx *c, json_t *v);

/* Write a comma list as a YAML flow list: "a,b" -> "[a, b]" (benches
 * that generate sweep specs). */
void bench_flow_list(FILE *f, const char *list);

/* Split a CSV line at commas into at most max fields, in place (the line
 * end dropped); col[i] is field i's 1-based column. Returns the count. */
int bench_csv_split(char *line, char **f, unsigned *col, int max);
/* A row of a table read by bench_csv_read: the table's path, the row's
 * index, its 1-based line, its needed cells in the order asked
 * (NUL-terminated, shorter than the cell length) and their 1-based
 * columns. Problems go to d, located at path, line and a column. */
typedef void (*bench_csv_row_fn)(void *ctx, const char *path, int row, unsigned line,
                                 char **cells, const unsigned *cols, struct diag *d);
/* Read a CSV table whose header names at least the needed columns (in any
 * order), calling fn for each non-blank row, at most max_rows of them.
 * Problems are located FILE:LINE:COL: no header, a missing column, a
 * missing or too long cell, too many rows, no rows at all. The number of
 * rows, or -1 when d has an error. */
int bench_csv_read(const char *path, const char *const *needed, int n_needed, int max_rows,
                   size_t cell_len, bench_csv_row_fn fn, void *ctx, struct diag *d);
/* Create the directory path and its parents; a failure goes to d. */
void bench_make_dir(const char *path, struct diag *d);
/* Write dir/name atomically; on failure a warning on stderr. 0 or -errno. */
int bench_write_text(const char *dir, const char *name, const char *text, size_t len);
/* Close the memory stream f (its text in *buf, *len), replace path with
 * its text and free it. 0, -EIO (the stream failed) or -errno. */
int bench_save_stream(const char *path, FILE *f, char **buf, size_t *len);
/* Close the memory stream f and write its text to dir/name with
 * bench_write_text (a warning on failure); frees it. 0 or -errno. */
int bench_write_stream(const char *dir, const char *name, FILE *f, char **buf, size_t *len);
/* Run gnuplot on the n scripts in figs; a warning on stderr when it did
 * not draw (naming the script when there is one). */
void bench_draw(const char *figs, char scripts[][300], int n);
/* Begin a generated sweep spec in a memory stream (its text into *buf,
 * *len): the comment lines head, version 1, name, the topology (topo, or
 * "default"), the params lines (each "  key: value\n") with the --set
 * machine keys after them, then "panels:". NULL when out of memory. */
FILE *bench_spec_begin(const struct bench_ctx *c, const char *head, const char *name,
                       const char *topo, const char *params, char **buf, size_t *len);
/* Close the spec's stream: its text (the caller frees it), or NULL (freed)
 * when the stream failed. */
char *bench_spec_end(FILE *f, char **buf);
/* Where a bench writes its table and figures: DIR/figures and the text of
 * the memory stream being written (bench_write_stream frees it). */
struct bench_outputs {
        char figs[4300];             /* DIR/figures */
        char *buf;                   /* the stream's text */
        size_t len;                  /* its length */
};
/* Create DIR/figures (o->figs gets its path) and open a memory stream for
 * the first output file (its text into o->buf, o->len); NULL when the
 * directory could not be made (the problem in d) or out of memory. */
FILE *bench_outputs_open(struct bench_outputs *o, const char *dir, struct diag *d);
/* DIR/figures, created (figs gets its path); -1 with the problem in d. */
int bench_figures_dir(const char *dir, char *figs, size_t len, struct diag *d);
/* A table opened for reading, or NULL with "cannot open" located at path in d. */
FILE *bench_open_table(const char *path, struct diag *d);
/* The machine of a bench that runs kernels: --topo (made absolute, into
 * buf; NULL for the built-in default, or when fallback, a bench's own
 * topo= parameter, is NULL too) and its --set keys that are topology
 * parameters (dotted paths), each checked on that machine and marked
 * used. 0, or -EINVAL with the problems in c->diag ("--topo X: ...",
 * "--set KEY=VALUE: ..."). */
int bench_machine(const struct bench_ctx *c, const char *fallback, char *buf, size_t len,
                  const char **topo);
struct topo;
/* bench_machine, with the machine loaded into *t and its --set keys
 * applied (the caller's to topo_fini, when 0 is returned). */
int bench_machine_load(const struct bench_ctx *c, const char *fallback, char *buf, size_t len,
                       const char **topo, struct topo *t);
/* Write the machine --set keys as YAML map entries, one a line, each
 * after indent (a sweep spec's params). */
void bench_machine_params(const struct bench_ctx *c, FILE *f, const char *indent);

/* ---- bench llm-step on a Tenstorrent machine (benches/llm_step_tt.c) ---- */

extern const char *const llm_step_tt_params[]; /* its --set keys, NULL-ended */
/* Whether key is one of them. */
bool llm_step_tt_key(const char *key);
/* Predict one model on machine t (loaded from topo, --set keys applied)
 * and print it; the bench's exit status. */
int llm_step_tt(const struct bench_ctx *c, const char *topo, const struct topo *t);

#endif
