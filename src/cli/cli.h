/* cli/cli.h: the cubesim command's subcommands. Each takes the arguments
 * after its own name (argv[0] is the subcommand) and returns the process
 * exit status: 0 success, 1 the simulated program failed, 2 bad input. */
#ifndef CUBESIM_CLI_CLI_H
#define CUBESIM_CLI_CLI_H

#include <stddef.h>

int cli_run(int argc, char **argv);
int cli_bench(int argc, char **argv);
int cli_sweep(int argc, char **argv);
int cli_topo(int argc, char **argv);
int cli_kernels(int argc, char **argv);
int cli_compare(int argc, char **argv);
int cli_serve(int argc, char **argv);
/* The first item of cubesim run's synopsis ("[--topo FILE]"), for the
 * command list of cubesim --help; in buf (len bytes). */
void cli_run_synopsis(char *buf, size_t len);

/* The errno of a write to standard output that failed while the data
 * went straight to the file (a whole string larger than the buffer), for
 * the message of main's last check, when flushing has nothing left to
 * fail on; 0 if none. */
extern int cli_stdout_errno;

/* Shared option helpers. */
enum { CLI_OK = 0, CLI_FAIL = 1, CLI_BAD_INPUT = 2 };

/* Report "cubesim CMD: error: MESSAGE" (MESSAGE from fmt); returns
 * CLI_BAD_INPUT. */
int cli_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Report "cubesim CMD: unknown option 'X'" with a did-you-mean hint from
 * the NULL-terminated list of known options; returns CLI_BAD_INPUT. */
int cli_unknown_option(const char *cmd, const char *opt, const char *const *known);

struct diag;
/* Print d's messages to stderr in the one form of the command's messages:
 * located ones as "FILE:LINE:COL: error: ...", the others as "cubesim
 * CMD: error: ..." (or warning, note). */
void cli_print_diag(const char *cmd, const struct diag *d);
/* The same for the library's messages (cubesim_messages(): one a line). */
void cli_print_messages(const char *cmd, const char *text);
/* Add the library's messages to d as errors, to be printed with d's. */
void cli_take_messages(struct diag *d, const char *text);

/* Report "no WHAT 'NAME'" with a did-you-mean hint from the names
 * name_at(0), name_at(1), ... (NULL after the last), or a pointer to the
 * listing command see; returns CLI_BAD_INPUT. */
int cli_not_found(const char *cmd, const char *what, const char *name,
                  const char *(*name_at)(size_t i), const char *see);

/* --timeout-s VALUE: seconds of wall time, a number in (0, 1e7]; else a
 * located error to d ("--timeout-s VALUE: expected ...") and -1. */
struct diag;
int cli_parse_timeout(const char *v, double *seconds, struct diag *d);
/* --jobs VALUE: worker processes, an integer in [1, 1024]; else a located
 * error to d ("--jobs VALUE: expected ...") and -1. */
int cli_parse_jobs(const char *v, unsigned *jobs, struct diag *d);

/* ---- option tables ---- */

#include <stdio.h>

enum {
        CLI_OPT_REPEAT = 1,          /* may be given again: "[--set key=value ...]" */
        CLI_OPT_NESTED = 2,          /* in the synopsis, inside the previous item's brackets */
        CLI_OPT_ALT = 4,             /* in the synopsis, "| NAME" after the previous item */
        CLI_OPTS_MAX = 64,           /* entries of one table at most */
        CLI_OPTS_HELP = -1,          /* cli_opts_parse: --help or -h was given */
};

/* One option of a command: how it is parsed, applied and documented. */
struct cli_opt {
        const char *name;            /* "--topo" */
        const char *metavar;         /* its value in the help ("FILE"); NULL: a flag */
        const char *syn;             /* its value in the synopsis, if not metavar ("oplog|data") */
        unsigned flags;              /* CLI_OPT_*: its place in the synopsis */
        const char *help;            /* lines joined by '\n'; NULL: documented with the
                                      * entry before it ("--rtol X, --atol X") */
        void (*apply)(void *ctx, const struct cli_opt *o, char *v, struct diag *d);
                                     /* store v (NULL for a flag) in ctx; problems to d */
        size_t field;                /* offsetof of what apply sets in ctx */
};

/* Walk argv[1..argc) against tab (n entries): apply each option in turn
 * to ctx, the one positional argument to *pos. CLI_OK; CLI_OPTS_HELP at
 * --help or -h; CLI_BAD_INPUT after reporting an unknown option, a
 * missing value or a second positional argument. */
int cli_opts_parse(const char *cmd, const struct cli_opt *tab, size_t n, int argc, char **argv,
                   void *ctx, const char **pos, struct diag *d);
/* The same with up to max_pos positional arguments, into pos[0..*n_pos)
 * (*n_pos starts at 0). */
int cli_opts_parse_n(const char *cmd, const struct cli_opt *tab, size_t n, int argc, char **argv,
                     void *ctx, const char **pos, size_t max_pos, size_t *n_pos, struct diag *d);
/* After cli_opts_parse: at --help print the command's help with
 * usage(stdout) and make *rc CLI_OK. Nonzero when the command is done
 * (the help printed, or *rc a failure to return). */
int cli_opts_done(int *rc, void (*usage)(FILE *));
/* "LEAD [OPTION ...]": the synopsis of tab, wrapped greedily so that no
 * line passes column width, continuation lines indented by indent
 * spaces. */
void cli_opts_synopsis(FILE *out, const char *lead, int width, int indent,
                       const struct cli_opt *tab, size_t n);
/* Each option of tab with its help: "  --NAME METAVAR   HELP", HELP's
 * lines from column 20. */
void cli_opts_list(FILE *out, const struct cli_opt *tab, size_t n);
/* A command's help: the synopsis, about, "Options:" and the list, tail. */
void cli_opts_help(FILE *out, const char *lead, int width, int indent,
                   const struct cli_opt *tab, size_t n, const char *about, const char *tail);
/* apply for an option kept as given (a file, a folder, a list): the
 * const char * at o->field in ctx. */
void cli_opt_text(void *ctx, const struct cli_opt *o, char *v, struct diag *d);
/* apply for --timeout-s and --jobs: cli_parse_timeout into the double,
 * cli_parse_jobs into the unsigned at o->field in ctx. */
void cli_opt_timeout(void *ctx, const struct cli_opt *o, char *v, struct diag *d);
void cli_opt_jobs(void *ctx, const struct cli_opt *o, char *v, struct diag *d);
/* apply for --seed: the uint64_t at o->field in ctx, any non-negative
 * integer ("--seed X: expected a non-negative integer"). */
void cli_opt_u64(void *ctx, const struct cli_opt *o, char *v, struct diag *d);
/* The --set key=value arguments of a command, in order. */
struct cli_sets {
        const char *v[256];          /* the arguments (argv's strings) */
        size_t n;                    /* entries of v */
};
/* apply for --set: v appended to the struct cli_sets at o->field in ctx
 * ("too many --set (at most 256)"). */
void cli_opt_set(void *ctx, const struct cli_opt *o, char *v, struct diag *d);
/* apply for a flag: the bool at o->field in ctx becomes true. */
void cli_opt_true(void *ctx, const struct cli_opt *o, char *v, struct diag *d);
/* apply for a flag kept as an int (a field of the library's options): 1
 * at o->field in ctx. */
void cli_opt_on(void *ctx, const struct cli_opt *o, char *v, struct diag *d);
/* apply for --progress and --no-progress: the int at o->field in ctx
 * becomes 1 or 0. */
void cli_opt_progress(void *ctx, const struct cli_opt *o, char *v, struct diag *d);
/* apply for --kernels LIB.so: cubesim_kernels_load, its messages into d. */
void cli_opt_kernels(void *ctx, const struct cli_opt *o, char *v, struct diag *d);
/* A cubesim_print_fn that writes to standard output (a failed write's
 * errno into cli_stdout_errno). */
void cli_print_stdout(void *ctx, const char *text, size_t len);
/* The entry of tab (n entries) named a, or NULL. */
const struct cli_opt *cli_opts_find(const struct cli_opt *tab, size_t n, const char *a);
/* cli_unknown_option for a, the hint from tab's names and --help. */
int cli_opts_unknown(const char *cmd, const struct cli_opt *tab, size_t n, const char *a);
/* The synopsis item of tab's first entry ("[--topo FILE]") in buf (len
 * bytes). */
size_t cli_opts_synopsis_first(const struct cli_opt *tab, size_t n, char *buf, size_t len);

#endif
