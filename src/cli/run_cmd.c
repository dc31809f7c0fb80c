/* cli/run_cmd.c: `cubesim run KERNEL` and `cubesim kernels`. */
#include <errno.h>
#include <stddef.h>
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

static const char about[] =
        "\n"
        "Run KERNEL on every PE of a machine and report where the time went: busy\n"
        "time and utilisation per component class, the run's bounds (its work at\n"
        "the machine's aggregate rates) and the binding one, achieved TFLOP/s and\n"
        "GB/s, and the kernel source lines that took the most time.\n";

static const char tail[] =
        "\n"
        "Exit status: 0 the kernel ran on every PE; 1 it failed (kernel error,\n"
        "deadlock); 2 bad input.\n";

/* What the options of cubesim run set. */
struct run_args {
        struct cubesim_run_opts ro;  /* the run's options */
        const char *topo_path;       /* --topo FILE or NULL */
        struct cli_sets sets;        /* --set key=value */
        int json;                    /* --json */
};

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

#define FIELD(c, o, type) ((type *)((char *)(c) + (o)->field))
#define RO(f) (offsetof(struct run_args, ro) + offsetof(struct cubesim_run_opts, f))

static void set_mode(void *c, const struct cli_opt *o, char *v, struct diag *d)
{
        (void)o;
        if (parse_mode(v, &((struct run_args *)c)->ro.mode) < 0)
                diag_error(d, "--mode %s: expected oplog or data", v);
}

/* --rtol and --atol. */
static void set_tol(void *c, const struct cli_opt *o, char *v, struct diag *d)
{
        double x = 0;
        if (!params_parse_double(v, &x) || x < 0)
                diag_error(d, "%s %s: expected a number >= 0", o->name, v);
        else
                *FIELD(c, o, double) = x;
}

/* --max-events and --max-sim-ns. */
static void set_budget(void *c, const struct cli_opt *o, char *v, struct diag *d)
{
        uint64_t x = 0;
        if (!params_parse_u64(v, &x) || x == 0 || x > UINT64_MAX / 1000)
                diag_error(d, "%s %s: expected a positive integer", o->name, v);
        else
                *FIELD(c, o, uint64_t) = x;
}

static void set_window(void *c, const struct cli_opt *o, char *v, struct diag *d)
{
        (void)o;
        struct cubesim_run_opts *ro = &((struct run_args *)c)->ro;
        if (parse_window(v, &ro->trace_t0_ns, &ro->trace_t1_ns) < 0)
                diag_error(d, "--trace-window %s: expected T0:T1 in ns with T0 <= T1 "
                           "(T1 may be left out)", v);
}

/* The options of cubesim run, in the order of its help. */
static const struct cli_opt run_opts[] = {
        { "--topo", "FILE", NULL, 0,
          "the machine (default: the built-in default machine)",
          cli_opt_text, offsetof(struct run_args, topo_path) },
        { "--set", "key=value", NULL, CLI_OPT_REPEAT,
          "a kernel parameter ('cubesim kernels' lists them), or a\n"
          "topology parameter by its dotted YAML path, e.g.\n"
          "--set pe.dma.bw_gbps=128; issue_cost.OP_ns=N is short for\n"
          "pe.cpu.issue_cost_ns.OP=N (repeatable)",
          cli_opt_set, offsetof(struct run_args, sets) },
        { "--mode", "MODE", "oplog|data", 0,
          "oplog (default): timing only; data: real numbers, fp32\n"
          "compute, bf16/fp16 rounding on store",
          set_mode, 0 },
        { "--inputs", "DIR", NULL, 0,
          "read inputs as DIR/NAME.npy (shapes must agree with the\n"
          "parameters; unset shape parameters come from the files);\n"
          "a missing file is an error naming the expected files",
          cli_opt_text, RO(inputs_dir) },
        { "--allow-random", NULL, NULL, CLI_OPT_NESTED,
          "with --inputs: generate the inputs that have no file\n"
          "(without --inputs, data mode generates every input)",
          cli_opt_on, RO(allow_random) },
        { "--save-inputs", "DIR", NULL, 0,
          "data mode: write the generated inputs as DIR/NAME.npy",
          cli_opt_text, RO(save_inputs_dir) },
        { "--outputs", "DIR", NULL, 0,
          "data mode: write outputs as DIR/NAME.npy (float32)",
          cli_opt_text, RO(outputs_dir) },
        { "--expect", "DIR", NULL, 0,
          "data mode: compare each output with DIR/NAME.npy; exit 1\n"
          "naming the worst element when one is out of tolerance:\n"
          "|got - want| > atol + rtol |want|",
          cli_opt_text, RO(expect_dir) },
        { "--rtol", "X", NULL, CLI_OPT_NESTED,
          "the tolerances of --expect (defaults by the output's\n"
          "dtype: fp32 1.3e-6 and 1e-5, bf16 1.6e-2 and 1e-5, fp16\n"
          "1e-3 and 1e-5, bfp8_b 2^-5 and 1e-5, bfp4_b 2^-2 and 1e-5)",
          set_tol, RO(rtol) },
        { "--atol", "X", NULL, CLI_OPT_NESTED, NULL, set_tol, RO(atol) },
        { "--fail-on-nonfinite", NULL, NULL, 0,
          "data mode: exit 1 when an input or output holds a NaN\n"
          "or an infinity (they are reported in any case)",
          cli_opt_on, RO(fail_on_nonfinite) },
        { "--seed", "N", NULL, 0,
          "seed of the generated inputs (default 1)",
          cli_opt_u64, RO(seed) },
        { "--oplog", "FILE", NULL, 0,
          "one JSON line per executed op (canonical: byte-identical\n"
          "across runs of the same input); gzip if FILE.gz",
          cli_opt_text, RO(oplog_path) },
        { "--trace", "FILE", NULL, 0,
          "Chrome Trace Event JSON (open in Perfetto UI or\n"
          "chrome://tracing): a track per engine and DMA channel,\n"
          "HBM channel and link, counters, blocked slices, arrows from\n"
          "producer to consumer and send to recv; gzip if FILE.gz",
          cli_opt_text, RO(trace_path) },
        { "--trace-pes", "LIST", NULL, 0,
          "trace only these PEs (global indices, e.g. 0,4-7) and\n"
          "their cubes' memory and links",
          cli_opt_text, RO(trace_pes) },
        { "--trace-window", "T0:T1", NULL, 0,
          "trace only slices that meet [T0, T1] ns (T1 empty or 0:\n"
          "to the end)",
          set_window, 0 },
        { "--kernels", "LIB.so", NULL, 0,
          "also load the kernels a shared object exports\n"
          "(see examples/user_kernel/); a kernel named like one\n"
          "already there is an error (exit 2)",
          cli_opt_kernels, 0 },
        { "--max-events", "N", NULL, 0,
          "stop with an error after N events (default 4e9: over\n"
          "twenty times gqa_prefill at 128K on llama3-70b, 1.75e8;\n"
          "these budgets only stop a kernel that never ends)",
          set_budget, RO(max_events) },
        { "--max-sim-ns", "T", NULL, 0,
          "stop with an error past T ns of simulated time\n"
          "(default 1e10: ten simulated seconds, over twenty times\n"
          "that run)",
          set_budget, RO(max_sim_ns) },
        { "--timeout-s", "S", NULL, 0,
          "stop with an error (exit 1) after S seconds of wall time,\n"
          "even in a kernel that spins without calling tl_*",
          cli_opt_timeout, RO(timeout_s) },
        { "--progress", NULL, NULL, 0,
          "draw the run's progress on stderr: simulated time, events\n"
          "and requests so far, wall time (default: when stderr is a\n"
          "terminal); the line is cleared when the run ends; not on\n"
          "a terminal, plain lines (at most one a second)",
          cli_opt_progress, RO(progress) },
        { "--no-progress", NULL, NULL, CLI_OPT_ALT, "never draw it", cli_opt_progress,
          RO(progress) },
        { "--profile", NULL, NULL, 0,
          "print the time of every kernel source line (issue, engine\n"
          "time by engine, time the PE_CPU waited there, op count);\n"
          "with --json, as \"profile\"",
          cli_opt_on, RO(profile) },
        { "--critical-path", NULL, NULL, 0,
          "record what each step of the run waited on and print the\n"
          "critical path: its time by resource class and by kernel\n"
          "source line, its longest segments, the chain across PEs,\n"
          "and what-if estimates (one class 2x faster); with --json,\n"
          "as \"critical_path\"; with --trace, a track of its own.\n"
          "The log is built on a second thread when the process may\n"
          "use two processors (CUBESIM_CP_INLINE=1: on the run's own;\n"
          "the output is the same)",
          cli_opt_on, RO(critical_path) },
        { "--json", NULL, NULL, 0,
          "print the run summary as JSON (not with --oplog - or\n"
          "--trace -; without --json their summary goes to stderr)",
          cli_opt_on, offsetof(struct run_args, json) },
};

void cli_run_synopsis(char *buf, size_t len)
{
        cli_opts_synopsis_first(run_opts, ARRAY_LEN(run_opts), buf, len);
}

/* The help of cubesim run. */
static void usage(FILE *out)
{
        cli_opts_help(out, "usage: cubesim run KERNEL", 85, 18, run_opts, ARRAY_LEN(run_opts),
                      about, tail);
}

int cli_run(int argc, char **argv)
{
        const char *kernel = NULL;
        struct run_args args = { .sets.n = 0 };
        struct cubesim_run_opts *ro = &args.ro;
        cubesim_run_opts_init(ro);
        ro->progress = isatty(STDERR_FILENO);
        struct diag d;
        diag_init(&d);
        int rc = cli_opts_parse("run", run_opts, ARRAY_LEN(run_opts), argc, argv, &args, &kernel,
                                &d);
        if (cli_opts_done(&rc, usage))
                goto out_diag;
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
        const char *on_stdout = ro->oplog_path && strcmp(ro->oplog_path, "-") == 0 ? "--oplog"
                                : ro->trace_path && strcmp(ro->trace_path, "-") == 0 ? "--trace"
                                : NULL;
        if (on_stdout && args.json) {
                rc = cli_error("run", "--json and %s - both write standard output, which would "
                               "hold two documents: give %s a file", on_stdout, on_stdout);
                goto out_diag;
        }
        if (cubesim_kernel_find(kernel) != CUBESIM_OK)
                return print_run(CLI_BAD_INPUT, NULL, args.json, false);
        cubesim_machine *m = NULL;
        if (args.topo_path && cubesim_machine_load(args.topo_path, &m) != CUBESIM_OK)
                return print_run(CLI_BAD_INPUT, NULL, args.json, false);
        cubesim_result *res = NULL;
        rc = cubesim_run(kernel, m, args.sets.v, args.sets.n, ro, &res);
        print_run(rc, res, args.json, on_stdout != NULL);
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
                /* The write's error, before later calls change errno. */
                if (ferror(stdout) && !cli_stdout_errno)
                        cli_stdout_errno = errno;
        }
        return CLI_OK;
}
