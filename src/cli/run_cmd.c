/* cli/run_cmd.c: `cubesim run KERNEL` and `cubesim kernels`. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/diag.h"
#include "base/jsonw.h"
#include "base/params.h"
#include "base/util.h"
#include "cli/cli.h"
#include "tl/tl_run.h"

#include <cubesim/cubesim.h>

static const char usage[] =
        "usage: cubesim run KERNEL [--topo FILE] [--set key=value ...] [--mode oplog|data]\n"
        "                  [--inputs DIR [--allow-random]] [--save-inputs DIR] [--outputs DIR]\n"
        "                  [--expect DIR [--rtol X] [--atol X]] [--fail-on-nonfinite]\n"
        "                  [--seed N] [--oplog FILE] [--trace FILE] [--trace-pes LIST]\n"
        "                  [--trace-window T0:T1] [--kernels LIB.so] [--max-events N]\n"
        "                  [--max-sim-ns T] [--timeout-s S] [--progress | --no-progress]\n"
        "                  [--profile] [--json]\n"
        "\n"
        "Run KERNEL on every PE of a machine and report where the time went: busy\n"
        "time and utilisation per component class, the run's bounds (its work at\n"
        "the machine's aggregate rates) and the binding one, achieved TFLOP/s and\n"
        "GB/s, and the kernel source lines that took the most time.\n"
        "\n"
        "Options:\n"
        "  --topo FILE       the machine (default: the built-in default machine)\n"
        "  --set key=value   a kernel parameter ('cubesim kernels' lists them), or a\n"
        "                    topology parameter by its dotted YAML path, e.g.\n"
        "                    --set pe.dma.bw_gbps=128; issue_cost.OP_ns=N is short for\n"
        "                    pe.cpu.issue_cost_ns.OP=N (repeatable)\n"
        "  --mode MODE       oplog (default): timing only; data: real numbers, fp32\n"
        "                    compute, bf16/fp16 rounding on store\n"
        "  --inputs DIR      read inputs as DIR/NAME.npy (shapes must agree with the\n"
        "                    parameters; unset shape parameters come from the files);\n"
        "                    a missing file is an error naming the expected files\n"
        "  --allow-random    with --inputs: generate the inputs that have no file\n"
        "                    (without --inputs, data mode generates every input)\n"
        "  --save-inputs DIR data mode: write the generated inputs as DIR/NAME.npy\n"
        "  --outputs DIR     data mode: write outputs as DIR/NAME.npy (float32)\n"
        "  --expect DIR      data mode: compare each output with DIR/NAME.npy; exit 1\n"
        "                    naming the worst element when one is out of tolerance:\n"
        "                    |got - want| > atol + rtol |want|\n"
        "  --rtol X, --atol X  the tolerances of --expect (defaults by the output's\n"
        "                    dtype: fp32 1.3e-6 and 1e-5, bf16 1.6e-2 and 1e-5, fp16\n"
        "                    1e-3 and 1e-5, bfp8_b 2^-5 and 1e-5, bfp4_b 2^-2 and 1e-5)\n"
        "  --fail-on-nonfinite  data mode: exit 1 when an input or output holds a NaN\n"
        "                    or an infinity (they are reported in any case)\n"
        "  --seed N          seed of the generated inputs (default 1)\n"
        "  --oplog FILE      one JSON line per executed op (canonical: byte-identical\n"
        "                    across runs of the same input); gzip if FILE.gz\n"
        "  --trace FILE      Chrome Trace Event JSON (open in Perfetto UI or\n"
        "                    chrome://tracing): a track per engine and DMA channel,\n"
        "                    HBM channel and link, counters, blocked slices, arrows from\n"
        "                    producer to consumer and send to recv; gzip if FILE.gz\n"
        "  --trace-pes LIST  trace only these PEs (global indices, e.g. 0,4-7) and\n"
        "                    their cubes' memory and links\n"
        "  --trace-window T0:T1\n"
        "                    trace only slices that meet [T0, T1] ns (T1 empty or 0:\n"
        "                    to the end)\n"
        "  --kernels LIB.so  also load the kernels a shared object exports\n"
        "                    (see examples/user_kernel/); a kernel named like one\n"
        "                    already there is an error (exit 2)\n"
        "  --max-events N    stop with an error after N events (default 4e9: over\n"
        "                    twenty times gqa_prefill at 128K on llama3-70b, 1.75e8;\n"
        "                    these budgets only stop a kernel that never ends)\n"
        "  --max-sim-ns T    stop with an error past T ns of simulated time\n"
        "                    (default 1e10: ten simulated seconds, over twenty times\n"
        "                    that run)\n"
        "  --timeout-s S     stop with an error (exit 1) after S seconds of wall time,\n"
        "                    even in a kernel that spins without calling tl_*\n"
        "  --progress        draw the run's progress on stderr: simulated time, events\n"
        "                    and requests so far, wall time (default: when stderr is a\n"
        "                    terminal); the line is cleared when the run ends; not on\n"
        "                    a terminal, plain lines (at most one a second)\n"
        "  --no-progress     never draw it\n"
        "  --profile         print the time of every kernel source line (issue, engine\n"
        "                    time by engine, time the PE_CPU waited there, op count);\n"
        "                    with --json, as \"profile\"\n"
        "  --json            print the run summary as JSON (not with --oplog - or\n"
        "                    --trace -; without --json their summary goes to stderr)\n"
        "\n"
        "Exit status: 0 the kernel ran on every PE; 1 it failed (kernel error,\n"
        "deadlock); 2 bad input.\n";

static int parse_mode(const char *v, int *mode)
{
        if (strcmp(v, "oplog") == 0 || strcmp(v, "op_log") == 0)
                *mode = CUBESIM_MODE_OPLOG;
        else if (strcmp(v, "data") == 0)
                *mode = CUBESIM_MODE_DATA;
        else
                return -1;
        return 0;
}

/* "T0:T1" in ns (T1 may be empty: to the end); -1 if malformed. */
static int parse_window(const char *v, uint64_t *t0, uint64_t *t1)
{
        char *end;
        if (*v < '0' || *v > '9')
                return -1;
        errno = 0;
        unsigned long long a = strtoull(v, &end, 10), b = 0;
        if (errno || *end != ':' || a > UINT64_MAX / SIM_PS_PER_NS)
                return -1;
        const char *p = end + 1;
        if (*p) {
                if (*p < '0' || *p > '9')
                        return -1;
                b = strtoull(p, &end, 10);
                if (errno || *end || b < a || b > UINT64_MAX / SIM_PS_PER_NS)
                        return -1;
        }
        *t0 = a;
        *t1 = b;
        return 0;
}

/* Where an option whose value is kept as given (a file, a folder, a PE
 * list) goes in ro; NULL if opt is not one. */
static const char **text_opt(struct cubesim_run_opts *ro, const char *opt)
{
        static const char *const names[] = { "--inputs", "--outputs", "--save-inputs",
                                               "--expect", "--oplog", "--trace", "--trace-pes" };
        const char **fields[] = { &ro->inputs_dir, &ro->outputs_dir, &ro->save_inputs_dir,
                                  &ro->expect_dir, &ro->oplog_path, &ro->trace_path,
                                  &ro->trace_pes };
        for (size_t i = 0; i < ARRAY_LEN(names); i++)
                if (strcmp(opt, names[i]) == 0)
                        return fields[i];
        return NULL;
}

/* The run's summary and messages, as the command prints them; returns
 * rc. */
static int print_run(int rc, const cubesim_result *res, bool json, bool to_stderr)
{
        if (res)
                fputs(cubesim_result_inputs_report(res), stderr);
        FILE *out = to_stderr ? stderr : stdout;
        if (rc == CUBESIM_OK &&
            fputs(json ? cubesim_result_json(res) : cubesim_result_text(res), out) == EOF &&
            out == stdout)
                cli_stdout_errno = errno;
        cli_print_messages("run", cubesim_messages());
        return rc;
}

/* The value v of option a of cubesim run (one that takes a value): into
 * ro, *topo_path or sets[*n_sets]; problems to d. */
static void run_value(struct cubesim_run_opts *ro, const char *a, char *v, const char **topo_path,
                      char **sets, int *n_sets, struct diag *d)
{
        const char **text = text_opt(ro, a);
        if (text) {
                *text = v;
        } else if (strcmp(a, "--topo") == 0) {
                *topo_path = v;
        } else if (strcmp(a, "--set") == 0) {
                if (*n_sets == 256) {
                        diag_error(d, "too many --set (at most 256)");
                        return;
                }
                sets[(*n_sets)++] = v;
        } else if (strcmp(a, "--mode") == 0) {
                if (parse_mode(v, &ro->mode) < 0)
                        diag_error(d, "--mode %s: expected oplog or data", v);
        } else if (strcmp(a, "--rtol") == 0 || strcmp(a, "--atol") == 0) {
                double x = 0;
                if (!params_parse_double(v, &x) || x < 0)
                        diag_error(d, "%s %s: expected a number >= 0", a, v);
                else if (a[2] == 'r')
                        ro->rtol = x;
                else
                        ro->atol = x;
        } else if (strcmp(a, "--seed") == 0 || strcmp(a, "--max-events") == 0 ||
                   strcmp(a, "--max-sim-ns") == 0) {
                uint64_t x = 0;
                bool budget = a[2] == 'm';
                if (!params_parse_u64(v, &x) || (budget && (x == 0 || x > UINT64_MAX / 1000)))
                        diag_error(d, "%s %s: expected %s", a, v,
                                   budget ? "a positive integer" : "a non-negative integer");
                else if (strcmp(a, "--seed") == 0)
                        ro->seed = x;
                else if (strcmp(a, "--max-events") == 0)
                        ro->max_events = x;
                else
                        ro->max_sim_ns = x;
        } else if (strcmp(a, "--timeout-s") == 0) {
                cli_parse_timeout(v, &ro->timeout_s, d);
        } else if (strcmp(a, "--trace-window") == 0) {
                if (parse_window(v, &ro->trace_t0_ns, &ro->trace_t1_ns) < 0)
                        diag_error(d, "--trace-window %s: expected T0:T1 in ns with T0 <= T1 "
                                   "(T1 may be left out)", v);
        } else if (strcmp(a, "--kernels") == 0) {
                if (cubesim_kernels_load(v) != CUBESIM_OK)
                        cli_take_messages(d, cubesim_messages());
        }
}

int cli_run(int argc, char **argv)
{
        static const char *const opts[] = { "--topo", "--set", "--mode", "--inputs", "--outputs",
                                             "--seed", "--oplog", "--trace", "--trace-pes",
                                             "--trace-window", "--kernels", "--json", "--profile",
                                             "--max-events", "--max-sim-ns", "--timeout-s",
                                             "--allow-random", "--save-inputs", "--expect",
                                             "--rtol", "--atol", "--fail-on-nonfinite", "--help",
                                             "--progress", "--no-progress", NULL };
        const char *kernel = NULL, *topo_path = NULL;
        char *sets[256];
        int n_sets = 0;
        bool json = false;
        struct cubesim_run_opts ro;
        cubesim_run_opts_init(&ro);
        ro.progress = isatty(STDERR_FILENO);
        struct diag d;
        diag_init(&d);
        int rc = CLI_OK;
        for (int i = 1; i < argc; i++) {
                const char *a = argv[i];
                if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
                        fputs(usage, stdout);
                        goto out_diag;
                }
                if (strcmp(a, "--json") == 0) {
                        json = true;
                        continue;
                }
                if (strcmp(a, "--allow-random") == 0) {
                        ro.allow_random = true;
                        continue;
                }
                if (strcmp(a, "--fail-on-nonfinite") == 0) {
                        ro.fail_on_nonfinite = true;
                        continue;
                }
                if (strcmp(a, "--profile") == 0) {
                        ro.profile = true;
                        continue;
                }
                if (strcmp(a, "--progress") == 0 || strcmp(a, "--no-progress") == 0) {
                        ro.progress = a[2] == 'p';
                        continue;
                }
                if (a[0] == '-' && a[1] == '-') {
                        const char *const *o = opts;
                        while (*o && strcmp(*o, a) != 0)
                                o++;
                        if (!*o) {
                                rc = cli_unknown_option("run", a, opts);
                                goto out_diag;
                        }
                        if (i + 1 >= argc) {
                                rc = cli_error("run", "%s needs a value", a);
                                goto out_diag;
                        }
                        char *v = argv[++i];
                        run_value(&ro, a, v, &topo_path, sets, &n_sets, &d);
                        continue;
                }
                if (a[0] == '-') {
                        rc = cli_unknown_option("run", a, opts);
                        goto out_diag;
                }
                if (kernel) {
                        rc = cli_error("run", "unexpected argument '%s'", a);
                        goto out_diag;
                }
                kernel = a;
        }
        if (d.n_errors) {
                rc = CLI_BAD_INPUT;
                goto out_diag;
        }
        if (!kernel) {
                rc = cli_error("run", "which kernel? (see 'cubesim kernels')");
                goto out_diag;
        }
        /* "-" puts the op_log or the trace on standard output: the summary
         * must not be mixed into it (text goes to stderr; JSON is refused:
         * two documents on one stream are no JSON document). */
        const char *on_stdout = ro.oplog_path && strcmp(ro.oplog_path, "-") == 0 ? "--oplog"
                                : ro.trace_path && strcmp(ro.trace_path, "-") == 0 ? "--trace"
                                : NULL;
        if (on_stdout && json) {
                rc = cli_error("run", "--json and %s - both write standard output, which would "
                               "hold two documents: give %s a file", on_stdout, on_stdout);
                goto out_diag;
        }
        if (cubesim_kernel_find(kernel) != CUBESIM_OK)
                return print_run(CLI_BAD_INPUT, NULL, json, false);
        cubesim_machine *m = NULL;
        if (topo_path && cubesim_machine_load(topo_path, &m) != CUBESIM_OK)
                return print_run(CLI_BAD_INPUT, NULL, json, false);
        cubesim_result *res = NULL;
        rc = cubesim_run(kernel, m, (const char *const *)sets, (size_t)n_sets, &ro, &res);
        print_run(rc, res, json, on_stdout != NULL);
        cubesim_result_free(res);
        cubesim_machine_free(m);
        cubesim_release();
out_diag:
        cli_print_diag("run", &d);
        diag_fini(&d);
        return rc;
}

static void print_kernel(const struct tl_kernel *k)
{
        printf("%s\n    %s\n", k->name, k->summary ? k->summary : "");
        for (const struct tl_param *p = k->params; p && p->name; p++) {
                if (p->kind == TL_PARAM_CHOICE) {
                        printf("    %-14s one of", p->name);
                        for (int j = 0; p->choices[j]; j++)
                                printf(" %s", p->choices[j]);
                        printf(" (default %s): %s\n", p->choices[(int)p->def], p->help);
                } else {
                        if (p->kind == TL_PARAM_INT)
                                printf("    %-14s integer in [%.0f, %.0f] (default %.0f): %s\n",
                                       p->name, p->min, p->max, p->def, p->help);
                        else
                                printf("    %-14s number in [%g, %g] (default %g): %s\n", p->name,
                                       p->min, p->max, p->def, p->help);
                }
        }
        if (k->io_help)
                printf("    files: %s\n", k->io_help);
}

int cli_kernels(int argc, char **argv)
{
        static const char usage_k[] =
                "usage: cubesim kernels [--kernels LIB.so] [--brief]\n"
                "\n"
                "List the kernels with their parameters (--set NAME=VALUE), defaults and\n"
                "the .npy files they read and write; --brief: one line each.\n";
        static const char *const opts[] = { "--kernels", "--brief", "--help", NULL };
        bool brief = false;
        struct diag d;
        diag_init(&d);
        for (int i = 1; i < argc; i++) {
                if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
                        fputs(usage_k, stdout);
                        return CLI_OK;
                } else if (strcmp(argv[i], "--brief") == 0) {
                        brief = true;
                } else if (strcmp(argv[i], "--kernels") == 0) {
                        if (i + 1 >= argc) {
                                fprintf(stderr, "cubesim kernels: error: --kernels needs a value "
                                        "(a shared object)\n");
                                diag_fini(&d);
                                return CLI_BAD_INPUT;
                        }
                        tl_kernels_load(argv[++i], &d);
                } else {
                        diag_fini(&d);
                        return cli_unknown_option("kernels", argv[i], opts);
                }
        }
        if (d.n_errors) {
                cli_print_diag("kernels", &d);
                diag_fini(&d);
                return CLI_BAD_INPUT;
        }
        diag_fini(&d);
        for (size_t i = 0; tl_kernel_at(i); i++) {
                const struct tl_kernel *k = tl_kernel_at(i);
                if (brief)
                        printf("%-24s %s\n", k->name, k->summary ? k->summary : "");
                else
                        print_kernel(k);
        }
        return CLI_OK;
}
