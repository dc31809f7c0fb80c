/* cli/sweep_cmd.c: `cubesim sweep SPEC.yaml`: run every point of a sweep
 * spec (docs/sweeps.md) and write sweep.json, the figures and a report. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/diag.h"
#include "base/util.h"
#include "cli/cli.h"
#include "sweep/sweep.h"
#include "tl/tl_run.h"

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
        struct sweep_opts so;        /* the sweep's options */
        bool list;                   /* --list */
};

#define SO(f) (offsetof(struct sweep_args, so) + offsetof(struct sweep_opts, f))

/* --progress and --no-progress. */
static void set_progress(void *c, const struct cli_opt *o, char *v, struct diag *d)
{
        (void)v, (void)d;
        ((struct sweep_args *)c)->so.progress = o->name[2] == 'p';
}

static void load_kernels(void *c, const struct cli_opt *o, char *v, struct diag *d)
{
        (void)c, (void)o;
        tl_kernels_load(v, d);
}

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
          cli_opt_true, SO(resume) },
        { "--no-figures", NULL, NULL, 0,
          "write the figures' data and scripts but do not run gnuplot",
          cli_opt_true, SO(no_figures) },
        { "--progress", NULL, NULL, 0,
          "show progress on stderr (default: when it is a terminal;\n"
          "elsewhere as plain lines)",
          set_progress, 0 },
        { "--no-progress", NULL, NULL, CLI_OPT_ALT, "never show progress", set_progress, 0 },
        { "--kernels", "LIB.so", NULL, 0,
          "also load the kernels a shared object exports (a kernel\n"
          "named like one already there is an error)",
          load_kernels, 0 },
        { "--timeout-s", "S", NULL, 0,
          "stop a point after S seconds of wall time (its worker is\n"
          "killed; the point is recorded as timed_out)",
          cli_opt_timeout, SO(timeout_s) },
        { "--list", NULL, NULL, 0, "check the spec and list its points; run nothing",
          cli_opt_true, offsetof(struct sweep_args, list) },
};

static void list_points(const struct sweep_spec *s)
{
        printf("sweep %s: %zu points in %zu panel%s on %s\n", s->name, s->n_points, s->n_panels,
               s->n_panels == 1 ? "" : "s", s->topo_path ? s->topo_path : "the default machine");
        for (size_t p = 0; p < s->n_panels; p++) {
                const struct sweep_panel *pn = &s->panels[p];
                printf("panel %s: kernel %s, %zu points", pn->name, pn->kernel, pn->n_points);
                for (size_t j = 0; j < pn->n_params; j++)
                        printf("%s%s=%s", j ? " " : "; fixed ", pn->params[j].key,
                               pn->params[j].value);
                putchar('\n');
                for (size_t i = pn->first_point; i < pn->first_point + pn->n_points; i++) {
                        const struct sweep_point *pt = &s->points[i];
                        printf("  %4zu", i - pn->first_point);
                        for (size_t c = 0; c < pt->n_coords; c++)
                                printf(" %s=%s", pt->coords[c].key, pt->coords[c].value);
                        putchar('\n');
                }
        }
}

int cli_sweep(int argc, char **argv)
{
        const char *spec_path = NULL;
        struct sweep_args args = { .so = { .jobs = 1, .progress = -1 } };
        struct sweep_opts *so = &args.so;
        struct diag d;
        diag_init(&d);
        int rc = CLI_OK;
        /* Every MPI rank finds the same bad input: let rank 0 alone say it.
         * Hence this walk of the table rather than cli_opts_parse: its
         * problems go to d (a lone "-" is a spec, read from stdin). */
        bool speak = sweep_launch_rank() == 0;
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
        struct sweep_spec spec;
        if (sweep_spec_load_file(spec_path, &spec, &d) < 0) {
                rc = CLI_BAD_INPUT;
                goto out_spec;
        }
        if (args.list) {
                if (speak)
                        list_points(&spec);
                goto out_spec;
        }
        char dir[4200];
        if (!so->out_dir) {
                snprintf(dir, sizeof dir, "out/%s", spec.name);
                so->out_dir = dir;
        }
        struct sweep_outcome o;
        rc = sweep_run(&spec, so, &o, &d);
out_spec:
        sweep_spec_fini(&spec);
out:
        if (speak) {
                cli_print_diag("sweep", &d);
        }
        diag_fini(&d);
        return rc;
}
