/* base/names.h: the one rule for a name that becomes (part of) a file
 * name: a tensor's NAME.npy under --inputs, --outputs, --save-inputs and
 * --expect, a sweep's out/NAME directory, a panel's time_NAME.dat.
 *
 * A name is 1 to NAME_MAX_LEN bytes of ASCII letters, digits, '_', '-'
 * and '.', and does not start with '.' or '-': so it is one path
 * component (no '/', never "." or ".."), never a hidden file nor read as
 * an option, and prints on one line. Names are compared byte for byte. */
#ifndef CUBESIM_BASE_NAMES_H
#define CUBESIM_BASE_NAMES_H

#include <stdbool.h>
#include <stddef.h>

#define NAME_MAX_LEN 64

/* The rule in words, for messages. */
#define NAME_RULE                                                                  \
        "a name is 1 to 64 letters, digits, '_', '-' or '.', not starting with '.' " \
        "or '-'"

/* Whether s (may be NULL) is a name. If not and why is not NULL, why
 * (len bytes) gets the name, quoted with its unprintable bytes escaped,
 * and what breaks the rule, e.g. "'../x' starts with '.'". */
bool name_ok(const char *s, char *why, size_t len);

#endif
