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

#endif
