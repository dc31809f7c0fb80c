/* cli/run_cmd.c: `cubesim run KERNEL`: build the machine, launch the
 * kernel on every PE, report. */
#include <stdio.h>
#include <string.h>

#include "base/diag.h"
#include "cli/cli.h"
#include "report/summary.h"
#include "topo/topo.h"

static const char usage[] =
        "usage: cubesim run KERNEL [--topo FILE] [--set key=value ...] [--json]\n"
        "\n"
        "Run KERNEL on every PE of a machine and report how long it took.\n"
        "\n"
        "Options:\n"
        "  --topo FILE       the machine (default: the built-in default machine)\n"
        "  --set key=value   override a topology parameter by its dotted YAML path,\n"
        "                    e.g. --set pe.dma.bw_gbps=128 (repeatable)\n"
        "  --json            print the run summary as JSON: sim_ns, kernel_ps, events,\n"
        "                    PE_CPU issue time by op type, and a pes array with each\n"
        "                    PE's exec_start_ps and exec_end_ps\n"
        "\n"
        "'cubesim kernels' lists the kernels. Exit status: 0 the kernel ran on every\n"
        "PE; 1 it failed (kernel error, deadlock); 2 bad input.\n";

static int load_machine(const char *topo_path, const char *const *sets, int n_sets, struct topo *t,
                        struct diag *d)
{
        int rc = topo_path ? topo_load_file(topo_path, t, d) : topo_load_default(t, d);
        if (rc < 0)
                return rc;
        for (int i = 0; i < n_sets; i++)
                topo_set_kv(t, sets[i], d);
        return d->n_errors ? -1 : 0;
}

int cli_run(int argc, char **argv)
{
        static const char *const opts[] = { "--topo", "--set", "--json", "--help", NULL };
        const char *kernel = NULL, *topo_path = NULL;
        const char *sets[64];
        int n_sets = 0;
        bool json = false;
        for (int i = 1; i < argc; i++) {
                const char *a = argv[i];
                if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
                        fputs(usage, stdout);
                        return CLI_OK;
                } else if (strcmp(a, "--json") == 0) {
                        json = true;
                } else if (strcmp(a, "--topo") == 0 || strcmp(a, "--set") == 0) {
                        if (i + 1 >= argc) {
                                fprintf(stderr, "cubesim run: error: %s needs a value\n", a);
                                return CLI_BAD_INPUT;
                        }
                        if (a[2] == 't') {
                                topo_path = argv[++i];
                        } else if (n_sets == 64) {
                                fprintf(stderr, "cubesim run: error: too many --set (at most 64)\n");
                                return CLI_BAD_INPUT;
                        } else {
                                sets[n_sets++] = argv[++i];
                        }
                } else if (a[0] == '-') {
                        return cli_unknown_option("run", a, opts);
                } else if (!kernel) {
                        kernel = a;
                } else {
                        fprintf(stderr, "cubesim run: error: unexpected argument '%s'\n", a);
                        return CLI_BAD_INPUT;
                }
        }
        if (!kernel) {
                fprintf(stderr, "cubesim run: error: which kernel? (see 'cubesim kernels')\n");
                return CLI_BAD_INPUT;
        }
        const struct tl_kernel *k = tl_kernel_find(kernel);
        if (!k) {
                const char *names[64];
                size_t n = 0;
                for (const struct tl_kernel *const *it = tl_builtin_kernels; *it && n < 64; it++)
                        names[n++] = (*it)->name;
                const char *hint = diag_suggest(kernel, names, n);
                fprintf(stderr, "cubesim run: error: no kernel '%s'%s%s%s (see 'cubesim kernels')\n",
                        kernel, hint ? "; did you mean '" : "", hint ? hint : "", hint ? "'?" : "");
                return CLI_BAD_INPUT;
        }

        struct diag d;
        diag_init(&d);
        struct topo t;
        struct hw_sim sim;
        struct tl_run run = { 0 };
        int rc = CLI_OK;
        if (load_machine(topo_path, sets, n_sets, &t, &d) < 0) {
                rc = CLI_BAD_INPUT;
                goto out_diag;
        }
        if (hw_sim_init(&sim, &t, NULL, &d) < 0) {
                rc = CLI_BAD_INPUT;
                goto out_topo;
        }
        if (tl_run_kernel(&sim, k, NULL, &run, &d) < 0) {
                rc = CLI_FAIL;
                goto out_sim;
        }
        if (json) {
                json_t *o = rep_run_summary(&run, kernel);
                json_dumpf(o, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
                fputc('\n', stdout);
                json_decref(o);
        } else {
                rep_run_summary_text(&run, kernel, stdout);
        }
out_sim:
        tl_run_fini(&run);
        hw_sim_fini(&sim);
out_topo:
        topo_fini(&t);
out_diag:
        diag_print(&d, stderr);
        diag_fini(&d);
        return rc;
}

int cli_kernels(int argc, char **argv)
{
        if (argc > 1 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
                fputs("usage: cubesim kernels\n\nList the built-in kernels, one line each.\n",
                      stdout);
                return CLI_OK;
        }
        if (argc > 1) {
                static const char *const opts[] = { "--help", NULL };
                return cli_unknown_option("kernels", argv[1], opts);
        }
        for (const struct tl_kernel *const *k = tl_builtin_kernels; *k; k++)
                printf("%-24s %s\n", (*k)->name, (*k)->summary);
        return CLI_OK;
}
