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

extern const struct bench *const bench_registry[];
const struct bench *bench_find(const char *name);

/* Print v (built with base/jsonw's values; released) on c->out as one
 * line of JSON: the only way a bench prints --json. 0, or 1 with the
 * problem in c->diag. */
int bench_print_json(const struct bench_ctx *c, json_t *v);

/* Write a comma list as a YAML flow list: "a,b" -> "[a, b]" (benches
 * that generate sweep specs). */
void bench_flow_list(FILE *f, const char *list);

/* The machine of a bench that runs kernels: --topo (made absolute, into
 * buf; NULL for the built-in default, or when fallback, a bench's own
 * topo= parameter, is NULL too) and its --set keys that are topology
 * parameters (dotted paths), each checked on that machine and marked
 * used. 0, or -EINVAL with the problems in c->diag ("--topo X: ...",
 * "--set KEY=VALUE: ..."). */
int bench_machine(const struct bench_ctx *c, const char *fallback, char *buf, size_t len,
                  const char **topo);
/* Write the machine --set keys as YAML map entries, one a line, each
 * after indent (a sweep spec's params). */
void bench_machine_params(const struct bench_ctx *c, FILE *f, const char *indent);

#endif
