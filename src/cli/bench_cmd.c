/* cli/bench_cmd.c: `cubesim bench list`, `cubesim bench run NAME` and
 * `cubesim bench help NAME`: a parser over cubesim_bench_run. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/diag.h"
#include "base/util.h"
#include "cli/cli.h"

#include <cubesim/cubesim.h>

static const char about[] =
        "       cubesim bench help NAME\n"
        "\n"
        "Benches measure cubesim itself or a simulated machine and print their\n"
        "figures; 'bench list' names them, 'bench help NAME' shows a bench's\n"
        "parameters.\n"
        "\n"
        "Options of 'bench run':\n";

/* What the options of cubesim bench run set. */
struct bench_args {
        struct cubesim_bench_opts bo; /* the bench's options */
        struct cli_sets sets;        /* --set key=value */
};

#define BO(f) (offsetof(struct bench_args, bo) + offsetof(struct cubesim_bench_opts, f))

/* The options of cubesim bench run, in the order of its help. */
static const struct cli_opt run_opts[] = {
        { "--set", "key=value", NULL, CLI_OPT_REPEAT, "a bench parameter (repeatable)",
          cli_opt_set, offsetof(struct bench_args, sets) },
        { "--topo", "FILE", NULL, 0, "the machine of benches that run kernels (llm-step, "
          "milestone-gqa-headline; default: built in); their --set takes its dotted "
          "keys (pe.dma.bw_gbps=512)", cli_opt_text, BO(topo_path) },
        { "--json", NULL, NULL, 0, "print the figures as one JSON object",
          cli_opt_on, BO(json) },
        { "--out", "DIR", NULL, 0, "where the bench writes its files (bench-specific default)",
          cli_opt_text, BO(out_dir) },
        { "--jobs", "N", NULL, 0, "worker processes for benches that sweep (default 1)",
          cli_opt_jobs, BO(jobs) },
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
        for (size_t i = 0; cubesim_bench_name(i); i++)
                printf("%-24s %s\n", cubesim_bench_name(i), cubesim_bench_summary(i));
        return CLI_OK;
}

/* The index of bench name, or -1 after its message (as `cubesim bench`'s). */
static long lookup(const char *name)
{
        if (cubesim_bench_find(name) != CUBESIM_OK) {
                cli_print_messages("bench", cubesim_messages());
                return -1;
        }
        long i = 0;
        while (strcmp(cubesim_bench_name((size_t)i), name) != 0)
                i++;
        return i;
}

static int run(int argc, char **argv)
{
        const char *name = NULL;
        struct diag d;
        diag_init(&d);
        struct bench_args args = { .sets.n = 0 };
        cubesim_bench_opts_init(&args.bo);
        int rc = cli_opts_parse("bench run", run_opts, ARRAY_LEN(run_opts), argc, argv, &args,
                                &name, &d);
        if (cli_opts_done(&rc, usage))
                goto out;
        if (!name) {
                rc = cli_error("bench run", "which bench? (see 'cubesim bench list')");
                goto out;
        }
        if (lookup(name) < 0) {
                rc = CLI_BAD_INPUT;
                goto out;
        }
        if (d.n_errors) {
                cli_print_diag("bench run", &d);
                rc = CLI_BAD_INPUT;
                goto out;
        }
        args.bo.sets = args.sets.v;
        args.bo.n_sets = args.sets.n;
        args.bo.print = cli_print_stdout;
        rc = cubesim_bench_run(name, &args.bo);
        cli_print_messages("bench run", cubesim_messages());
out:
        cubesim_release();
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
                long i = lookup(argv[2]);
                cubesim_release();
                if (i < 0)
                        return CLI_BAD_INPUT;
                printf("%s: %s\n\n%s", cubesim_bench_name((size_t)i),
                       cubesim_bench_summary((size_t)i), cubesim_bench_help((size_t)i));
                return CLI_OK;
        }
        static const char *const subs[] = { "list", "run", "help", NULL };
        const char *hint = diag_suggest(argv[1], subs, 3);
        fprintf(stderr, "cubesim bench: error: unknown subcommand '%s'%s%s%s\n", argv[1],
                hint ? "; did you mean '" : "", hint ? hint : "", hint ? "'?" : "");
        return CLI_BAD_INPUT;
}
