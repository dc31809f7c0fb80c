/* cli/common.c: helpers shared by the subcommands. */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/diag.h"
#include "base/params.h"
#include "cli/cli.h"
#include "tl/tl_run.h"

int cli_stdout_errno;

int cli_error(const char *cmd, const char *fmt, ...)
{
        va_list ap;
        va_start(ap, fmt);
        fprintf(stderr, "cubesim %s: error: ", cmd);
        vfprintf(stderr, fmt, ap);
        fputc('\n', stderr);
        va_end(ap);
        return CLI_BAD_INPUT;
}

int cli_unknown_option(const char *cmd, const char *opt, const char *const *known)
{
        size_t n = 0;
        while (known && known[n])
                n++;
        const char *hint = diag_suggest(opt, known, n);
        if (hint)
                fprintf(stderr, "cubesim %s: error: unknown option '%s'; did you mean '%s'?\n",
                        cmd, opt, hint);
        else
                fprintf(stderr, "cubesim %s: error: unknown option '%s'\n", cmd, opt);
        fprintf(stderr, "Try 'cubesim %s --help'.\n", cmd);
        return CLI_BAD_INPUT;
}

/* Print one message line (len bytes) of a command: a line without a
 * location gets "cubesim CMD: " before it. */
static void print_line(const char *cmd, const char *text, size_t len)
{
        bool bare = strncmp(text, "error:", 6) == 0 || strncmp(text, "warning:", 8) == 0 ||
                    strncmp(text, "note:", 5) == 0;
        unsigned n;
        int end = 0;
        if (!bare && sscanf(text, "%u more messages not shown%n", &n, &end) == 1 &&
            (size_t)end == len)
                bare = true;
        /* A message located at an option ("--set k=v: error: ..."), which
         * names no file: the command's form, the option first in its text. */
        static const char *const levels[] = { ": error: ", ": warning: ", ": note: " };
        for (int l = 0; !bare && text[0] == '-' && text[1] == '-' && l < 3; l++) {
                const char *at = strstr(text, levels[l]);
                if (!at || at >= text + len)
                        continue;
                size_t lab = (size_t)(at - text), lv = strlen(levels[l]);
                fprintf(stderr, "cubesim %s: %.*s: %.*s: %.*s\n", cmd, (int)(lv - 4),
                        levels[l] + 2, (int)lab, text, (int)(len - lab - lv), at + lv);
                return;
        }
        fprintf(stderr, "%s%s%s%.*s\n", bare ? "cubesim " : "", bare ? cmd : "",
                bare ? ": " : "", (int)len, text);
}

void cli_print_diag(const char *cmd, const struct diag *d)
{
        /* A deadlock of many PEs waiting alike reads as one note a kind. */
        struct diag f;
        diag_init(&f);
        f.max_msgs = d->n_kept + 1;
        diag_copy_folded(&f, d);
        for (const struct diag_msg *m = f.head; m; m = m->next)
                print_line(cmd, m->text, strlen(m->text));
        if (f.n_dropped)
                fprintf(stderr, "cubesim %s: %u more messages not shown\n", cmd, f.n_dropped);
        diag_fini(&f);
}

void cli_print_messages(const char *cmd, const char *text)
{
        struct diag d;
        diag_init(&d);
        d.max_msgs = UINT_MAX;
        while (*text) {
                const char *nl = strchr(text, '\n');
                size_t len = nl ? (size_t)(nl - text) : strlen(text);
                diag_add_text(&d, strncmp(text, "note: ", 6) == 0 ? DIAG_NOTE : DIAG_ERROR,
                              text, len);
                text += len + (nl != NULL);
        }
        cli_print_diag(cmd, &d);
        diag_fini(&d);
}

void cli_take_messages(struct diag *d, const char *text)
{
        while (*text) {
                const char *nl = strchr(text, '\n');
                size_t len = nl ? (size_t)(nl - text) : strlen(text);
                diag_add_text(d, DIAG_ERROR, text, len);
                text += len + (nl != NULL);
        }
}

void cli_print_stdout(void *ctx, const char *text, size_t len)
{
        (void)ctx;
        if (fwrite(text, 1, len, stdout) != len && !cli_stdout_errno)
                cli_stdout_errno = errno;
}

int cli_not_found(const char *cmd, const char *what, const char *name,
                  const char *(*name_at)(size_t i), const char *see)
{
        const char *hint = diag_suggest_at(name, name_at);
        if (hint)
                fprintf(stderr, "cubesim %s: error: no %s '%s'; did you mean '%s'?\n", cmd, what,
                        name, hint);
        else
                fprintf(stderr, "cubesim %s: error: no %s '%s' (see '%s')\n", cmd, what, name, see);
        return CLI_BAD_INPUT;
}

int cli_parse_timeout(const char *v, double *seconds, struct diag *d)
{
        double s = 0;
        if (!params_parse_double(v, &s) || s <= 0 || s > 1e7) {
                diag_error(d, "--timeout-s %s: expected a number of seconds in (0, 1e7]", v);
                return -1;
        }
        *seconds = s;
        return 0;
}

int cli_parse_jobs(const char *v, unsigned *jobs, struct diag *d)
{
        int64_t j = 0;
        if (!params_parse_i64(v, &j) || j < 1 || j > 1024) {
                diag_error(d, "--jobs %s: expected an integer in [1, 1024]", v);
                return -1;
        }
        *jobs = (unsigned)j;
        return 0;
}

