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
/* Append s to f as a quoted JSON string in the canonical form of the
 * op_log (only '"', '\\' and control characters escaped, the latter as
 * \u00xx with lowercase hex; valid UTF-8 as it is, other bytes as U+FFFD).
 * NULL: null. For the streamed writers (one thread per FILE: unlocked). */
void jsonw_put_string(FILE *f, const char *s);

#endif
