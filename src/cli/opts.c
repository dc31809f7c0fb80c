/* cli/opts.c: a command's options as one table: the parser walks it, and
 * the command's usage text is written from it. */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "base/diag.h"
#include "base/params.h"
#include "base/util.h"
#include "cli/cli.h"

#include <cubesim/cubesim.h>

/* An option's help starts at this column. */
enum { HELP_COL = 20 };

/* The synopsis item of tab[i] and of the entries folded into it; returns
 * the index past them. */
static size_t synopsis_item(const struct cli_opt *tab, size_t n, size_t i, char *buf, size_t len)
{
        size_t used = 0;
#define PUT(...) (used += (size_t)snprintf(buf + used, used < len ? len - used : 0, __VA_ARGS__))
        PUT("[%s", tab[i].name);
        if (tab[i].metavar)
                PUT(" %s", tab[i].syn ? tab[i].syn : tab[i].metavar);
        if (tab[i].flags & CLI_OPT_REPEAT)
                PUT(" ...");
        size_t j = i + 1;
        for (; j < n && (tab[j].flags & (CLI_OPT_NESTED | CLI_OPT_ALT)); j++) {
                if (tab[j].flags & CLI_OPT_ALT) {
                        PUT(" | %s", tab[j].name);
                        if (tab[j].metavar)
                                PUT(" %s", tab[j].syn ? tab[j].syn : tab[j].metavar);
                } else if (tab[j].metavar)
                        PUT(" [%s %s]", tab[j].name, tab[j].metavar);
                else
                        PUT(" [%s]", tab[j].name);
        }
        PUT("]");
#undef PUT
        return j;
}

size_t cli_opts_synopsis_first(const struct cli_opt *tab, size_t n, char *buf, size_t len)
{
        if (len)
                buf[0] = '\0';
        return n ? synopsis_item(tab, n, 0, buf, len) : 0;
}

void cli_opts_synopsis(FILE *out, const char *lead, int width, int indent,
                       const struct cli_opt *tab, size_t n)
{
        int col = fprintf(out, "%s", lead);
        for (size_t i = 0; i < n;) {
                char item[160];
                i = synopsis_item(tab, n, i, item, sizeof item);
                int w = (int)strlen(item);
                if (col + 1 + w > width)
                        col = fprintf(out, "\n%*s%s", indent, "", item) - 1;
                else
                        col += fprintf(out, " %s", item);
        }
        fputc('\n', out);
}

/* "  LABEL  HELP", LABEL the option, its metavar and those of the entries
 * documented with it; HELP's lines start at HELP_COL. Returns the index
 * past the entries printed. */
static size_t print_entry(FILE *out, const struct cli_opt *tab, size_t n, size_t i)
{
        char label[96];
        size_t used = 0;
        size_t j = i;
        do {
                used += (size_t)snprintf(label + used, sizeof label - used, "%s%s%s%s",
                                         j > i ? ", " : "", tab[j].name,
                                         tab[j].metavar ? " " : "",
                                         tab[j].metavar ? tab[j].metavar : "");
                j++;
        } while (j < n && !tab[j].help && used < sizeof label);
        int w = (int)strlen(label);
        if (w <= HELP_COL - 3)
                fprintf(out, "  %-*s", HELP_COL - 2, label);
        else if (w <= HELP_COL - 1)
                fprintf(out, "  %s  ", label);
        else
                fprintf(out, "  %s\n%*s", label, HELP_COL, "");
        for (const char *h = tab[i].help; *h;) {
                const char *nl = strchr(h, '\n');
                size_t len = nl ? (size_t)(nl - h) : strlen(h);
                fprintf(out, "%.*s\n", (int)len, h);
                h += len;
                if (nl && *++h)
                        fprintf(out, "%*s", HELP_COL, "");
        }
        return j;
}

void cli_opts_list(FILE *out, const struct cli_opt *tab, size_t n)
{
        for (size_t i = 0; i < n;)
                i = print_entry(out, tab, n, i);
}

void cli_opts_help(FILE *out, const char *lead, int width, int indent,
                   const struct cli_opt *tab, size_t n, const char *about, const char *tail)
{
        cli_opts_synopsis(out, lead, width, indent, tab, n);
        fputs(about, out);
        fputs("\nOptions:\n", out);
        cli_opts_list(out, tab, n);
        fputs(tail, out);
}

void cli_opt_set(void *ctx, const struct cli_opt *o, char *v, struct diag *d)
{
        struct cli_sets *s = (struct cli_sets *)((char *)ctx + o->field);
        if (s->n == ARRAY_LEN(s->v))
                diag_error(d, "too many --set (at most %zu)", ARRAY_LEN(s->v));
        else
                s->v[s->n++] = v;
}

void cli_opt_true(void *ctx, const struct cli_opt *o, char *v, struct diag *d)
{
        (void)v, (void)d;
        *(bool *)((char *)ctx + o->field) = true;
}

void cli_opt_on(void *ctx, const struct cli_opt *o, char *v, struct diag *d)
{
        (void)v, (void)d;
        *(int *)((char *)ctx + o->field) = 1;
}

void cli_opt_progress(void *ctx, const struct cli_opt *o, char *v, struct diag *d)
{
        (void)v, (void)d;
        *(int *)((char *)ctx + o->field) = o->name[2] == 'p';
}

void cli_opt_kernels(void *ctx, const struct cli_opt *o, char *v, struct diag *d)
{
        (void)ctx, (void)o;
        if (cubesim_kernels_load(v) != CUBESIM_OK)
                cli_take_messages(d, cubesim_messages());
}

void cli_opt_timeout(void *ctx, const struct cli_opt *o, char *v, struct diag *d)
{
        cli_parse_timeout(v, (double *)((char *)ctx + o->field), d);
}

void cli_opt_jobs(void *ctx, const struct cli_opt *o, char *v, struct diag *d)
{
        cli_parse_jobs(v, (unsigned *)((char *)ctx + o->field), d);
}

void cli_opt_u64(void *ctx, const struct cli_opt *o, char *v, struct diag *d)
{
        if (!params_parse_u64(v, (uint64_t *)((char *)ctx + o->field)))
                diag_error(d, "%s %s: expected a non-negative integer", o->name, v);
}

void cli_opt_text(void *ctx, const struct cli_opt *o, char *v, struct diag *d)
{
        (void)d;
        *(const char **)((char *)ctx + o->field) = v;
}

const struct cli_opt *cli_opts_find(const struct cli_opt *tab, size_t n, const char *a)
{
        for (size_t i = 0; i < n; i++)
                if (strcmp(tab[i].name, a) == 0)
                        return &tab[i];
        return NULL;
}

int cli_opts_unknown(const char *cmd, const struct cli_opt *tab, size_t n, const char *a)
{
        const char *names[CLI_OPTS_MAX + 2];
        size_t k = 0;
        for (size_t i = 0; i < n && k < CLI_OPTS_MAX; i++)
                names[k++] = tab[i].name;
        names[k++] = "--help";
        names[k] = NULL;
        return cli_unknown_option(cmd, a, names);
}

int cli_opts_parse(const char *cmd, const struct cli_opt *tab, size_t n, int argc, char **argv,
                   void *ctx, const char **pos, struct diag *d)
{
        size_t n_pos = 0;
        return cli_opts_parse_n(cmd, tab, n, argc, argv, ctx, pos, 1, &n_pos, d);
}

int cli_opts_parse_n(const char *cmd, const struct cli_opt *tab, size_t n, int argc, char **argv,
                     void *ctx, const char **pos, size_t max_pos, size_t *n_pos, struct diag *d)
{
        for (int i = 1; i < argc; i++) {
                const char *a = argv[i];
                if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0)
                        return CLI_OPTS_HELP;
                const struct cli_opt *o = cli_opts_find(tab, n, a);
                if (!o && a[0] == '-')
                        return cli_opts_unknown(cmd, tab, n, a);
                if (!o && *n_pos == max_pos)
                        return cli_error(cmd, "unexpected argument '%s'", a);
                if (!o) {
                        pos[(*n_pos)++] = a;
                        continue;
                }
                if (o->metavar && i + 1 >= argc)
                        return cli_error(cmd, "%s needs a value", a);
                o->apply(ctx, o, o->metavar ? argv[++i] : NULL, d);
        }
        return CLI_OK;
}

int cli_opts_done(int *rc, void (*usage)(FILE *))
{
        if (*rc == CLI_OPTS_HELP) {
                usage(stdout);
                *rc = CLI_OK;
                return 1;
        }
        return *rc != CLI_OK;
}
