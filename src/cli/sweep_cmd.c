/* cli/sweep_cmd.c: `cubesim sweep SPEC.yaml`: run every point of a sweep
 * spec (docs/sweeps.md) and write sweep.json, the figures and a report; a
 * parser over cubesim_sweep. */
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/diag.h"
#include "base/util.h"
#include "cli/cli.h"

#include <cubesim/cubesim.h>

static const char about[] =
        "\n"
        "Run every point of a sweep spec, each an op_log-mode simulation in a worker\n"
        "process, and write DIR/sweep.json (the results, in spec order), DIR/points/\n"
        "(one file per point), DIR/figures/ (PNG and SVG with their gnuplot scripts\n"
        "and data) and DIR/report.md. The spec format is in docs/sweeps.md; examples\n"
        "are in sweeps/.\n";

static const char tail[] =
        "\n"
        "Under 'mpirun -np N cubesim sweep ...' (cubesim built with MPI) the points are\n"
        "spread over the ranks and rank 0 writes the results; --jobs then counts rank\n"
        "0's own workers. sweep.json is the same however the points ran, but for the\n"
        "wall-clock keys wall_s, events_per_s and peak_rss_kib.\n"
        "\n"
        "Exit status: 0 every point ran; 1 some point failed or timed out (each is\n"
        "recorded with its error; the others complete); 2 bad input (the spec,\n"
        "options, an output directory that is unusable or in use by another sweep),\n"
        "or results that could not be written (a full disk).\n";

/* What the options of cubesim sweep set. */
struct sweep_args {
        struct cubesim_sweep_opts so; /* the sweep's options */
        int no_figures;              /* --no-figures */
};

#define SO(f) (offsetof(struct sweep_args, so) + offsetof(struct cubesim_sweep_opts, f))

/* The options of cubesim sweep, in the order of its help. */
static const struct cli_opt sweep_options[] = {
        { "--out", "DIR", NULL, 0,
          "where results go (default: out/NAME, NAME the spec's name)",
          cli_opt_text, SO(out_dir) },
        { "--jobs", "N", NULL, 0,
          "run N points at once in worker processes (default 1)",
          cli_opt_jobs, SO(jobs) },
        { "--resume", NULL, NULL, 0,
          "keep the points already done in DIR (same parameters,\n"
          "machine and cubesim binary); run the others, failed ones too",
          cli_opt_on, SO(resume) },
        { "--no-figures", NULL, NULL, 0,
          "write the figures' data and scripts but do not run gnuplot",
          cli_opt_on, offsetof(struct sweep_args, no_figures) },
        { "--progress", NULL, NULL, 0,
          "show progress on stderr (default: when it is a terminal;\n"
          "elsewhere as plain lines)",
          cli_opt_progress, SO(progress) },
        { "--no-progress", NULL, NULL, CLI_OPT_ALT, "never show progress", cli_opt_progress,
          SO(progress) },
        { "--kernels", "LIB.so", NULL, 0,
          "also load the kernels a shared object exports (a kernel\n"
          "named like one already there is an error)",
          cli_opt_kernels, 0 },
        { "--timeout-s", "S", NULL, 0,
          "stop a point after S seconds of wall time (its worker is\n"
          "killed; the point is recorded as timed_out)",
          cli_opt_timeout, SO(timeout_s) },
        { "--list", NULL, NULL, 0, "check the spec and list its points; run nothing",
          cli_opt_on, SO(list) },
};

int cli_sweep(int argc, char **argv)
{
        const char *spec_path = NULL;
        struct sweep_args args;
        struct cubesim_sweep_opts *so = &args.so;
        cubesim_sweep_opts_init(so);
        so->progress = -1;
        args.no_figures = 0;
        struct diag d;
        diag_init(&d);
        int rc = CLI_OK;
        /* Every MPI rank finds the same bad input: let rank 0 alone say it.
         * Hence this walk of the table rather than cli_opts_parse: its
         * problems go to d (a lone "-" is a spec, read from stdin). */
        bool speak = cubesim_mpi_rank() == 0;
        for (int i = 1; i < argc; i++) {
                const char *a = argv[i];
                const struct cli_opt *o = cli_opts_find(sweep_options, ARRAY_LEN(sweep_options), a);
                if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
                        cli_opts_help(stdout, "usage: cubesim sweep SPEC.yaml", 80, 21,
                                      sweep_options, ARRAY_LEN(sweep_options), about, tail);
                        goto out;
                } else if (o && o->metavar && i + 1 >= argc) {
                        diag_error(&d, "%s needs a value", a);
                        break;
                } else if (o) {
                        o->apply(&args, o, o->metavar ? argv[++i] : NULL, &d);
                } else if (a[0] == '-' && a[1] != '\0') {
                        rc = speak ? cli_opts_unknown("sweep", sweep_options,
                                                      ARRAY_LEN(sweep_options), a)
                                   : CLI_BAD_INPUT;
                        goto out;
                } else if (!spec_path) {
                        spec_path = a;
                } else {
                        diag_error(&d, "unexpected argument '%s' (one spec at a time)", a);
                }
        }
        if (!spec_path && !d.n_errors)
                diag_error(&d, "which spec? usage: cubesim sweep SPEC.yaml (see docs/sweeps.md "
                           "and sweeps/)");
        if (d.n_errors) {
                rc = CLI_BAD_INPUT;
                goto out;
        }
        so->figures = !args.no_figures;
        so->print = cli_print_stdout;
        rc = cubesim_sweep(spec_path, NULL, so, NULL);
        if (speak)
                cli_print_messages("sweep", cubesim_messages());
        cubesim_release();
out:
        if (speak)
                cli_print_diag("sweep", &d);
        diag_fini(&d);
        return rc;
}
