/* base/jsonw.h: the one way cubesim writes JSON (docs/adr/0018).
 *
 * Whole documents (run --json, bench --json, sweep files) are built as
 * jansson values and printed by jsonw_print; the streamed writers on the
 * hot path (the op_log and the trace) put their bytes themselves and
 * write every string through jsonw_put_string. Either way:
 * - a string is escaped per RFC 8259 (jansson's escaping, or
 *   jsonw_put_string's canonical one) and is valid UTF-8: a byte that is
 *   not part of a UTF-8 sequence becomes U+FFFD, so a path or a name from
 *   the user can never break the document;
 * - a number that is not finite (NaN, an infinity) is written as null:
 *   JSON has no spelling for it, and jansson's json_real refuses it
 *   (which would drop the key without a word). */
#ifndef CUBESIM_BASE_JSONW_H
#define CUBESIM_BASE_JSONW_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/* x as a JSON number, or null if it is not finite. */
json_t *jsonw_real(double x);
/* x rounded to decimals places after the point, as jsonw_real. */
json_t *jsonw_fixed(double x, int decimals);
/* s as a JSON string (bytes that are not UTF-8 become U+FFFD); NULL: null. */
json_t *jsonw_string(const char *s);
/* Print v (then release it) on f: indented by indent spaces (0: one
 * line, a space after each separator), keys in insertion order, reals
 * with up to 15 significant digits, then a newline. 0, or -1 if v is NULL (a value could not be built) or f
 * failed. */
int jsonw_print(FILE *f, json_t *v, int indent);
/* Write v (not released) to path as jsonw_print would print it, but with
 * reals to 17 significant digits (read back, they are the same doubles),
 * replacing the file atomically (fs_write_atomic). 0 or a negative errno. */
int jsonw_save(const char *path, const json_t *v, int indent);
/* A member of a document written in pieces, formatted as jsonw_print
 * formats it (its indent, a space after ':', strings escaped as jansson
 * does): for a large member, whose jansson values would cost many times
 * its bytes to build, print and free. */
struct jsonw_out {
        FILE *f;                     /* where */
        int indent;                  /* spaces per level */
        int depth;                   /* levels open */
        uint64_t empty;              /* bit d: the container at depth d has no item yet */
        bool bare;                   /* the next item is the value of a key written */
};
/* Open an object ('{') or an array ('[') as member key of the object
 * open (key NULL: as an element of the array open). */
void jsonw_out_open(struct jsonw_out *, const char *key, char bracket);
/* Close it ('}' or ']'). */
void jsonw_out_close(struct jsonw_out *, char bracket);
/* An integer, a string (NULL: null) as member key (NULL: element). */
void jsonw_out_int(struct jsonw_out *, const char *key, long long v);
void jsonw_out_str(struct jsonw_out *, const char *key, const char *s);
/* jsonw_print of the object v (then released) with one more member, last:
 * key, whose value put writes (one jsonw_out_open .. close). indent > 0,
 * v a non-empty object; else -1 (nothing printed). */
int jsonw_print_with(FILE *f, json_t *v, int indent, const char *key,
                     void (*put)(struct jsonw_out *, const void *ctx), const void *ctx);
/* Append s to f as a quoted JSON string in the canonical form of the
 * op_log (only '"', '\\' and control characters escaped, the latter as
 * \u00xx with lowercase hex; valid UTF-8 as it is, other bytes as U+FFFD).
 * NULL: null. For the streamed writers (one thread per FILE: unlocked). */
void jsonw_put_string(FILE *f, const char *s);

#endif
