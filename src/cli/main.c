/* cli/main.c: the cubesim command: dispatch to a subcommand. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "base/diag.h"
#include "cli/cli.h"

static const char usage_head[] =
        "usage: cubesim COMMAND [ARGS...]\n"
        "\n"
        "cubesim simulates a CUBE-based neural processing unit running kernels\n"
        "written in a Triton-like C language, and reports where the time goes.\n"
        "\n"
        "Commands:\n";

static const char usage_tail[] =
        "  kernels                    list the kernels\n"
        "  bench list                 list the benches\n"
        "  bench run NAME [--set k=v] run a bench and print its figures\n"
        "  sweep SPEC.yaml [--jobs N] run a parameter sweep: sweep.json, figures, report\n"
        "  compare A B                two runs (--json) or two sweeps side by side\n"
        "  serve --model M --qps X    serve an LLM under load: TTFT, TPOT, throughput\n"
        "  topo check FILE            validate a topology file\n"
        "  topo show [FILE]           print a machine's component graph (text, json, dot)\n"
        "\n"
        "Options:\n"
        "  -h, --help                 show this help; 'cubesim COMMAND --help' for a command\n"
        "  --version                  print the version\n"
        "\n"
        "Exit status: 0 success; 1 the simulated program failed (kernel error,\n"
        "deadlock), or the output could not be written; 2 bad input (usage,\n"
        "topology, parameters).\n";

/* The usage text: its run line from run's option table. */
static void print_usage(FILE *out)
{
        char first[64], run[96];
        cli_run_synopsis(first, sizeof first);
        snprintf(run, sizeof run, "run KERNEL %s", first);
        fprintf(out, "%s  %-26s run a kernel on every PE and report its time\n%s", usage_head, run,
                usage_tail);
}

struct command {
        const char *name;            /* as typed */
        int (*fn)(int, char **);     /* handler */
};

static const struct command commands[] = {
        { "run", cli_run },
        { "kernels", cli_kernels },
        { "bench", cli_bench },
        { "sweep", cli_sweep },
        { "topo", cli_topo },
        { "compare", cli_compare },
        { "serve", cli_serve },
};

/* Every command's output ends here: a write that failed (a full disk,
 * /dev/full, a closed pipe) makes the command fail with a message rather
 * than exit 0 with its output lost. stdout is flushed and closed, so its
 * last buffered bytes are checked too. */
static int finish_stdout(int rc)
{
        bool failed = ferror(stdout);
        errno = 0;
        if (fflush(stdout) != 0)
                failed = true;
        int e = errno;
        if (fclose(stdout) != 0 && !failed) {
                failed = true;
                e = errno;
        }
        if (!failed)
                return rc;
        if (!e)
                e = cli_stdout_errno;
        fprintf(stderr, "cubesim: error: cannot write the output (standard output): %s\n",
                e ? strerror(e) : "a write failed");
        return rc == CLI_OK ? CLI_FAIL : rc;
}

int main(int argc, char **argv)
{
        if (argc < 2) {
                print_usage(stderr);
                return CLI_BAD_INPUT;
        }
        const char *cmd = argv[1];
        if (strcmp(cmd, "-h") == 0 || strcmp(cmd, "--help") == 0 || strcmp(cmd, "help") == 0) {
                print_usage(stdout);
                return finish_stdout(CLI_OK);
        }
        if (strcmp(cmd, "--version") == 0) {
                printf("cubesim %s\n", CUBESIM_VERSION);
                return finish_stdout(CLI_OK);
        }
        const char *names[sizeof commands / sizeof commands[0] + 1];
        for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++) {
                if (strcmp(cmd, commands[i].name) == 0)
                        return finish_stdout(commands[i].fn(argc - 1, argv + 1));
                names[i] = commands[i].name;
        }
        names[sizeof commands / sizeof commands[0]] = NULL;
        const char *hint = diag_suggest(cmd, names, sizeof commands / sizeof commands[0]);
        if (hint)
                fprintf(stderr, "cubesim: error: unknown command '%s'; did you mean '%s'?\n", cmd,
                        hint);
        else
                fprintf(stderr, "cubesim: error: unknown command '%s'\n", cmd);
        fputs("Try 'cubesim --help'.\n", stderr);
        return CLI_BAD_INPUT;
}
