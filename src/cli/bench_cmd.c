/* cli/bench_cmd.c: `cubesim bench list` and `cubesim bench run NAME`. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "benches/bench.h"
#include "base/diag.h"
#include "base/params.h"
#include "cli/cli.h"

static const char usage[] =
        "usage: cubesim bench list\n"
        "       cubesim bench run NAME [--set key=value ...] [--json] [--out DIR] [--jobs N]\n"
        "       cubesim bench help NAME\n"
        "\n"
        "Benches measure cubesim itself or a simulated machine and print their\n"
        "figures; 'bench list' names them, 'bench help NAME' shows a bench's\n"
        "parameters.\n"
        "\n"
        "Options of 'bench run':\n"
        "  --set key=value   a bench parameter (repeatable)\n"
        "  --json            print the figures as one JSON object\n"
        "  --out DIR         where the bench writes its files (bench-specific default)\n"
        "  --jobs N          worker processes for benches that sweep (default 1)\n";

static int list(void)
{
        for (const struct bench *const *b = bench_registry; *b; b++)
                printf("%-24s %s\n", (*b)->name, (*b)->summary);
        return CLI_OK;
}

static const char *bench_name_at(size_t i)
{
        return bench_registry[i] ? bench_registry[i]->name : NULL;
}

static const struct bench *lookup(const char *name)
{
        const struct bench *b = bench_find(name);
        if (!b)
                cli_not_found("bench", "bench", name, bench_name_at, "cubesim bench list");
        return b;
}

static int run(int argc, char **argv)
{
        static const char *const opts[] = { "--set", "--json", "--out", "--jobs", "--help", NULL };
        const char *name = NULL;
        struct params ps;
        struct diag d;
        params_init(&ps);
        diag_init(&d);
        struct bench_ctx ctx = { .params = &ps, .jobs = 1, .out = stdout, .diag = &d };
        int rc = CLI_OK;
        for (int i = 1; i < argc; i++) {
                const char *a = argv[i];
                if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
                        fputs(usage, stdout);
                        goto out;
                } else if (strcmp(a, "--json") == 0) {
                        ctx.json = true;
                } else if (strcmp(a, "--set") == 0 || strcmp(a, "--out") == 0 ||
                           strcmp(a, "--jobs") == 0) {
                        if (i + 1 >= argc) {
                                rc = cli_error("bench run", "%s needs a value", a);
                                goto out;
                        }
                        const char *v = argv[++i];
                        if (a[2] == 's') {
                                params_add(&ps, v, &d);
                        } else if (a[2] == 'o') {
                                ctx.out_dir = v;
                        } else {
                                cli_parse_jobs(v, &ctx.jobs, &d);
                        }
                } else if (a[0] == '-') {
                        rc = cli_unknown_option("bench run", a, opts);
                        goto out;
                } else if (!name) {
                        name = a;
                } else {
                        rc = cli_error("bench run", "unexpected argument '%s'", a);
                        goto out;
                }
        }
        if (!name) {
                rc = cli_error("bench run", "which bench? (see 'cubesim bench list')");
                goto out;
        }
        const struct bench *b = lookup(name);
        if (!b) {
                rc = CLI_BAD_INPUT;
                goto out;
        }
        if (d.n_errors == 0)
                rc = b->run(&ctx);
        if (d.n_errors || d.head) {
                cli_print_diag("bench run", &d);
                if (rc == CLI_OK)
                        rc = CLI_BAD_INPUT;
        }
out:
        diag_fini(&d);
        return rc;
}

int cli_bench(int argc, char **argv)
{
        if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
                fputs(usage, argc < 2 ? stderr : stdout);
                return argc < 2 ? CLI_BAD_INPUT : CLI_OK;
        }
        if (strcmp(argv[1], "list") == 0)
                return list();
        if (strcmp(argv[1], "run") == 0)
                return run(argc - 1, argv + 1);
        if (strcmp(argv[1], "help") == 0) {
                if (argc < 3)
                        return cli_error("bench help", "which bench?");
                const struct bench *b = lookup(argv[2]);
                if (!b)
                        return CLI_BAD_INPUT;
                printf("%s: %s\n\n%s", b->name, b->summary, b->help);
                return CLI_OK;
        }
        static const char *const subs[] = { "list", "run", "help", NULL };
        const char *hint = diag_suggest(argv[1], subs, 3);
        fprintf(stderr, "cubesim bench: error: unknown subcommand '%s'%s%s%s\n", argv[1],
                hint ? "; did you mean '" : "", hint ? hint : "", hint ? "'?" : "");
        return CLI_BAD_INPUT;
}
