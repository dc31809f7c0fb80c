/* base/diag.h: collected error reports for bad user input.
 *
 * Loaders never stop at the first problem: they record each one here with
 * its location and keep going (like SQLite's Parse.nErr); the command line
 * prints them all and exits 2. Messages read
 *     FILE:LINE:COL: error: WHAT, expected WHAT
 * with LINE and COL 1-based; either may be 0 when not known. */
#ifndef CUBESIM_BASE_DIAG_H
#define CUBESIM_BASE_DIAG_H

#include <stddef.h>
#include <stdio.h>

enum diag_level { DIAG_NOTE, DIAG_WARNING, DIAG_ERROR };

struct diag_msg {
        struct diag_msg *next;       /* in report order */
        enum diag_level level;       /* severity */
        char text[];                 /* the whole formatted line, no newline */
};

struct diag {
        struct diag_msg *head;       /* first message */
        struct diag_msg *tail;       /* last message, for appending */
        unsigned n_errors;           /* messages of level DIAG_ERROR */
        unsigned n_warnings;         /* messages of level DIAG_WARNING */
        unsigned n_kept;             /* messages in the list */
        unsigned max_msgs;           /* keep at most this many (0: 200) */
        unsigned n_dropped;          /* messages past max_msgs, counted only */
};

void diag_init(struct diag *);
void diag_fini(struct diag *);

/* Record a message; file may be NULL (no location), line/col 0 if unknown. */
void diag_report(struct diag *, enum diag_level, const char *file,
                 unsigned line, unsigned col, const char *fmt, ...)
        __attribute__((format(printf, 6, 7)));

#define diag_error_at(d, file, line, col, ...) \
        diag_report((d), DIAG_ERROR, (file), (line), (col), __VA_ARGS__)
#define diag_error(d, ...) diag_report((d), DIAG_ERROR, NULL, 0, 0, __VA_ARGS__)

/* Record a message given whole (len bytes of text, as a diag_msg's text
 * reads: "FILE:LINE:COL: error: ..."), e.g. one passed on from the
 * library's messages. */
void diag_add_text(struct diag *, enum diag_level, const char *text, size_t len);

/* Print every message, one per line, then "N more errors not shown". */
void diag_print(const struct diag *, FILE *);

/* Copy src's messages to the end of dst, the notes that read alike but
 * for their first quoted name ("process 'X' waits on ...", one a PE) folded
 * into the first of them, which then ends "(and N more like it: 'B',
 * 'C', ... 'Z')"; every other message as it is, in order. */
void diag_copy_folded(struct diag *dst, const struct diag *src);

/* Move all messages of src to the end of dst; src is left empty. */
void diag_move(struct diag *dst, struct diag *src);

/* The candidate closest to word by edit distance, if close enough to be a
 * plausible typo (distance <= max(1, strlen(word) / 3)); else NULL. */
const char *diag_suggest(const char *word, const char *const *candidates, size_t n);
/* The same over the names name_at(0), name_at(1), ... up to the first NULL
 * (at most 512 of them): a registry's kernels, benches, ... */
const char *diag_suggest_at(const char *word, const char *(*name_at)(size_t i));

#endif
