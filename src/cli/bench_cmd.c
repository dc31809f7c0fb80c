/* cli/bench_cmd.c: `cubesim bench list` and `cubesim bench run NAME`. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "benches/bench.h"
#include "base/diag.h"
#include "base/params.h"
#include "base/util.h"
#include "cli/cli.h"

static const char about[] =
        "       cubesim bench help NAME\n"
        "\n"
        "Benches measure cubesim itself or a simulated machine and print their\n"
        "figures; 'bench list' names them, 'bench help NAME' shows a bench's\n"
        "parameters.\n"
        "\n"
        "Options of 'bench run':\n";

static void add_param(void *c, const struct cli_opt *o, char *v, struct diag *d)
{
        (void)o;
        params_add(((struct bench_ctx *)c)->params, v, d);
}

/* The options of cubesim bench run, in the order of its help. */
static const struct cli_opt run_opts[] = {
        { "--set", "key=value", NULL, CLI_OPT_REPEAT, "a bench parameter (repeatable)",
          add_param, 0 },
        { "--topo", "FILE", NULL, 0, "the machine of benches that run kernels (llm-step, "
          "milestone-gqa-headline; default: built in); their --set takes its dotted "
          "keys (pe.dma.bw_gbps=512)", cli_opt_text, offsetof(struct bench_ctx, topo) },
        { "--json", NULL, NULL, 0, "print the figures as one JSON object",
          cli_opt_true, offsetof(struct bench_ctx, json) },
        { "--out", "DIR", NULL, 0, "where the bench writes its files (bench-specific default)",
          cli_opt_text, offsetof(struct bench_ctx, out_dir) },
        { "--jobs", "N", NULL, 0, "worker processes for benches that sweep (default 1)",
          cli_opt_jobs, offsetof(struct bench_ctx, jobs) },
};

/* The help of cubesim bench, its bench run line and options from
 * run_opts. */
static void usage(FILE *out)
{
        fputs("usage: cubesim bench list\n", out);
        cli_opts_synopsis(out, "       cubesim bench run NAME", 85, 25, run_opts,
                          ARRAY_LEN(run_opts));
        fputs(about, out);
        cli_opts_list(out, run_opts, ARRAY_LEN(run_opts));
}

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
        const char *name = NULL;
        struct params ps;
        struct diag d;
        params_init(&ps);
        diag_init(&d);
        struct bench_ctx ctx = { .params = &ps, .jobs = 1, .out = stdout, .diag = &d };
        int rc = cli_opts_parse("bench run", run_opts, ARRAY_LEN(run_opts), argc, argv, &ctx,
                                &name, &d);
        if (cli_opts_done(&rc, usage))
                goto out;
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
                usage(argc < 2 ? stderr : stdout);
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
