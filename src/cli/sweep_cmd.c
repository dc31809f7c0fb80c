/* cli/sweep_cmd.c: `cubesim sweep SPEC.yaml`: run every point of a sweep
 * spec (docs/sweeps.md) and write sweep.json, the figures and a report. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/diag.h"
#include "cli/cli.h"
#include "sweep/sweep.h"
#include "tl/tl_run.h"

static const char usage[] =
        "usage: cubesim sweep SPEC.yaml [--out DIR] [--jobs N] [--resume] [--no-figures]\n"
        "                     [--progress | --no-progress] [--kernels LIB.so]\n"
        "                     [--timeout-s S] [--list]\n"
        "\n"
        "Run every point of a sweep spec, each an op_log-mode simulation in a worker\n"
        "process, and write DIR/sweep.json (the results, in spec order), DIR/points/\n"
        "(one file per point), DIR/figures/ (PNG and SVG with their gnuplot scripts\n"
        "and data) and DIR/report.md. The spec format is in docs/sweeps.md; examples\n"
        "are in sweeps/.\n"
        "\n"
        "Options:\n"
        "  --out DIR         where results go (default: out/NAME, NAME the spec's name)\n"
        "  --jobs N          run N points at once in worker processes (default 1)\n"
        "  --resume          keep the points already done in DIR (same parameters,\n"
        "                    machine and cubesim binary); run the others, failed ones too\n"
        "  --no-figures      write the figures' data and scripts but do not run gnuplot\n"
        "  --progress        show progress on stderr (default: when it is a terminal;\n"
        "                    elsewhere as plain lines)\n"
        "  --no-progress     never show progress\n"
        "  --kernels LIB.so  also load the kernels a shared object exports (a kernel\n"
        "                    named like one already there is an error)\n"
        "  --timeout-s S     stop a point after S seconds of wall time (its worker is\n"
        "                    killed; the point is recorded as timed_out)\n"
        "  --list            check the spec and list its points; run nothing\n"
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
        static const char *const opts[] = { "--out", "--jobs", "--resume", "--no-figures",
                                             "--progress", "--no-progress", "--kernels",
                                             "--timeout-s", "--list", "--help", NULL };
        const char *spec_path = NULL;
        struct sweep_opts so = { .jobs = 1, .progress = -1 };
        bool list = false;
        struct diag d;
        diag_init(&d);
        int rc = CLI_OK;
        /* Every MPI rank finds the same bad input: let rank 0 alone say it. */
        bool speak = sweep_launch_rank() == 0;
        for (int i = 1; i < argc; i++) {
                const char *a = argv[i];
                if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
                        fputs(usage, stdout);
                        goto out;
                } else if (strcmp(a, "--resume") == 0) {
                        so.resume = true;
                } else if (strcmp(a, "--no-figures") == 0) {
                        so.no_figures = true;
                } else if (strcmp(a, "--progress") == 0) {
                        so.progress = 1;
                } else if (strcmp(a, "--no-progress") == 0) {
                        so.progress = 0;
                } else if (strcmp(a, "--list") == 0) {
                        list = true;
                } else if (strcmp(a, "--out") == 0 || strcmp(a, "--jobs") == 0 ||
                           strcmp(a, "--kernels") == 0 || strcmp(a, "--timeout-s") == 0) {
                        if (i + 1 >= argc) {
                                diag_error(&d, "%s needs a value", a);
                                break;
                        }
                        const char *v = argv[++i];
                        if (a[2] == 't') {
                                cli_parse_timeout(v, &so.timeout_s, &d);
                        } else if (a[2] == 'o') {
                                so.out_dir = v;
                        } else if (a[2] == 'k') {
                                tl_kernels_load(v, &d);
                        } else {
                                cli_parse_jobs(v, &so.jobs, &d);
                        }
                } else if (a[0] == '-' && a[1] != '\0') {
                        rc = speak ? cli_unknown_option("sweep", a, opts) : CLI_BAD_INPUT;
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
        if (list) {
                if (speak)
                        list_points(&spec);
                goto out_spec;
        }
        char dir[4200];
        if (!so.out_dir) {
                snprintf(dir, sizeof dir, "out/%s", spec.name);
                so.out_dir = dir;
        }
        struct sweep_outcome o;
        rc = sweep_run(&spec, &so, &o, &d);
out_spec:
        sweep_spec_fini(&spec);
out:
        if (speak) {
                cli_print_diag("sweep", &d);
        }
        diag_fini(&d);
        return rc;
}
