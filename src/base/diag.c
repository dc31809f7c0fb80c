/* base/diag.c: see diag.h. */
#include "base/diag.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/list.h"

void diag_init(struct diag *d)
{
        memset(d, 0, sizeof *d);
}

void diag_fini(struct diag *d)
{
        LIST_FREE(d->head, struct diag_msg, next);
        memset(d, 0, sizeof *d);
}

static const char *level_name(enum diag_level level)
{
        switch (level) {
        case DIAG_NOTE: return "note";
        case DIAG_WARNING: return "warning";
        case DIAG_ERROR: return "error";
        }
        return "error";
}

/* Append the messages first..last (last->next is NULL) to d's list. */
static void append(struct diag *d, struct diag_msg *first, struct diag_msg *last)
{
        if (d->tail)
                d->tail->next = first;
        else
                d->head = first;
        d->tail = last;
}

void diag_report(struct diag *d, enum diag_level level, const char *file,
                 unsigned line, unsigned col, const char *fmt, ...)
{
        if (level == DIAG_ERROR)
                d->n_errors++;
        else if (level == DIAG_WARNING)
                d->n_warnings++;
        unsigned max = d->max_msgs ? d->max_msgs : 200;
        if (d->n_kept >= max) {
                d->n_dropped++;
                return;
        }

        char loc[512] = "";
        if (file && line && col)
                snprintf(loc, sizeof loc, "%s:%u:%u: ", file, line, col);
        else if (file && line)
                snprintf(loc, sizeof loc, "%s:%u: ", file, line);
        else if (file)
                snprintf(loc, sizeof loc, "%s: ", file);

        va_list ap;
        va_start(ap, fmt);
        char body[1024];
        vsnprintf(body, sizeof body, fmt, ap);
        va_end(ap);

        size_t len = strlen(loc) + strlen(level_name(level)) + 2 + strlen(body) + 1;
        struct diag_msg *m = malloc(sizeof *m + len);
        if (!m) {
                d->n_dropped++;
                return;
        }
        m->level = level;
        snprintf(m->text, len, "%s%s: %s", loc, level_name(level), body);
        m->next = NULL;
        append(d, m, m);
        d->n_kept++;
}

void diag_add_text(struct diag *d, enum diag_level level, const char *text, size_t len)
{
        unsigned kept = d->n_kept;
        diag_report(d, level, NULL, 0, 0, "%.*s", (int)len, text);
        if (d->n_kept == kept)
                return;              /* dropped */
        /* diag_report put "LEVEL: " before the text: keep it as given. */
        char *t = d->tail->text;
        size_t skip = strlen(level_name(level)) + 2;
        memmove(t, t + skip, strlen(t + skip) + 1);
}

/* The first quoted name of text: its start (after the quote) and length;
 * false if there is none. */
static bool quoted_name(const char *text, const char **name, size_t *len)
{
        const char *q = strchr(text, '\'');
        const char *e = q ? strchr(q + 1, '\'') : NULL;
        if (!e)
                return false;
        *name = q + 1;
        *len = (size_t)(e - q - 1);
        return true;
}

/* Whether notes a and b read alike but for their first quoted name. */
static bool alike(const char *a, const char *b)
{
        const char *na, *nb;
        size_t la, lb;
        if (!quoted_name(a, &na, &la) || !quoted_name(b, &nb, &lb) || na - a != nb - b ||
            strncmp(a, b, (size_t)(na - a)) != 0)
                return false;
        return strcmp(na + la, nb + lb) == 0;
}

enum { FOLD_NAMES = 3 };             /* names listed in a folded note before "..." */

void diag_copy_folded(struct diag *dst, const struct diag *src)
{
        size_t n = 0;
        for (const struct diag_msg *m = src->head; m; m = m->next)
                n++;
        bool *done = calloc(n ? n : 1, sizeof *done);
        size_t i = 0;
        for (const struct diag_msg *m = src->head; m; m = m->next, i++) {
                if (done && done[i])
                        continue;
                size_t more = 0, j = i + 1, at = 0;
                char names[600] = "", last[130] = "";
                for (const struct diag_msg *o = m->next; done && m->level == DIAG_NOTE && o;
                     o = o->next, j++) {
                        if (done[j] || o->level != DIAG_NOTE || !alike(m->text, o->text))
                                continue;
                        done[j] = true;
                        const char *nm = "";
                        size_t len = 0;
                        quoted_name(o->text, &nm, &len);
                        snprintf(last, sizeof last, "'%.*s'", (int)(len < 120 ? len : 120), nm);
                        if (++more <= FOLD_NAMES && at < sizeof names)
                                at += (size_t)snprintf(names + at, sizeof names - at, "%s%s",
                                                       more == 1 ? "" : ", ", last);
                }
                if (!more) {
                        diag_add_text(dst, m->level, m->text, strlen(m->text));
                        continue;
                }
                char text[1024];
                snprintf(text, sizeof text, "%s (and %zu more like it: %s%s%s)", m->text, more,
                         names, more > FOLD_NAMES + 1 ? ", ... " : more > FOLD_NAMES ? ", " : "",
                         more > FOLD_NAMES ? last : "");
                diag_add_text(dst, m->level, text, strlen(text));
        }
        dst->n_dropped += src->n_dropped;
        free(done);
}

void diag_print(const struct diag *d, FILE *out)
{
        for (const struct diag_msg *m = d->head; m; m = m->next)
                fprintf(out, "%s\n", m->text);
        if (d->n_dropped)
                fprintf(out, "%u more messages not shown\n", d->n_dropped);
}

void diag_move(struct diag *dst, struct diag *src)
{
        if (src->head)
                append(dst, src->head, src->tail);
        dst->n_errors += src->n_errors;
        dst->n_warnings += src->n_warnings;
        dst->n_dropped += src->n_dropped;
        dst->n_kept += src->n_kept;
        unsigned max = dst->max_msgs;
        memset(src, 0, sizeof *src);
        src->max_msgs = max;
}

/* Edit distance with adjacent transpositions (optimal string alignment):
 * "bnech" is one edit from "bench". Keys here are short. */
static size_t edit_distance(const char *a, const char *b)
{
        size_t la = strlen(a), lb = strlen(b);
        if (la > 64 || lb > 64)
                return (size_t)-1;
        size_t m[65][65];
        for (size_t i = 0; i <= la; i++)
                m[i][0] = i;
        for (size_t j = 0; j <= lb; j++)
                m[0][j] = j;
        for (size_t i = 1; i <= la; i++) {
                for (size_t j = 1; j <= lb; j++) {
                        size_t best = m[i - 1][j - 1] + (a[i - 1] != b[j - 1]);
                        if (m[i - 1][j] + 1 < best)
                                best = m[i - 1][j] + 1;
                        if (m[i][j - 1] + 1 < best)
                                best = m[i][j - 1] + 1;
                        if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
                            m[i - 2][j - 2] + 1 < best)
                                best = m[i - 2][j - 2] + 1;
                        m[i][j] = best;
                }
        }
        return m[la][lb];
}

const char *diag_suggest(const char *word, const char *const *candidates, size_t n)
{
        size_t limit = strlen(word) / 3;
        if (limit < 1)
                limit = 1;
        const char *best = NULL;
        size_t best_d = limit + 1;
        for (size_t i = 0; i < n; i++) {
                size_t dist = edit_distance(word, candidates[i]);
                if (dist < best_d) {
                        best_d = dist;
                        best = candidates[i];
                }
        }
        return best;
}

const char *diag_suggest_at(const char *word, const char *(*name_at)(size_t i))
{
        const char *names[512];
        size_t n = 0;
        while (n < 512 && (names[n] = name_at(n)))
                n++;
        return diag_suggest(word, names, n);
}
