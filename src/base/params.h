/* base/params.h: `--set key=value` parameters.
 *
 * A parameter list is parsed from the command line once; consumers look
 * keys up with typed getters that validate the value and record a located
 * error ("--set procs=abc: expected an integer in [1, 1000000]"). Each
 * lookup marks the key used; params_check_unused then reports every key
 * that nobody asked for, with a did-you-mean hint from the known keys. */
#ifndef CUBESIM_BASE_PARAMS_H
#define CUBESIM_BASE_PARAMS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/diag.h"

#define PARAMS_MAX 64

struct param {
        const char *key;             /* borrowed from argv, split at '=' */
        size_t key_len;              /* length of the key part */
        const char *value;           /* text after '=' */
        bool used;                   /* looked up by some consumer */
};

struct params {
        struct param items[PARAMS_MAX]; /* in command-line order */
        size_t n;                    /* items used */
};

void params_init(struct params *);
/* Add "key=value" (borrowed); error in d if malformed or too many. */
int params_add(struct params *, const char *kv, struct diag *d);

/* The one spelling of numbers on the command line (--set values, --seed,
 * --jobs ...): decimal digits, with an optional leading '-' for a signed
 * integer; a number may add a fraction and an exponent. No spaces, no '+',
 * no hex, no inf or nan. False if s is not such a number or out of range. */
bool params_parse_u64(const char *s, uint64_t *out);
bool params_parse_i64(const char *s, int64_t *out);
bool params_parse_double(const char *s, double *out);
/* Whether s is spelled as such a number (an integer is one too), with a
 * leading '+' allowed as well if plus (the topology files' spelling). */
bool params_number_syntax(const char *s, bool plus);

/* Typed lookups: if the key is absent *out = def and 0 is returned; if
 * present but invalid, an error goes to d and -EINVAL is returned. The last
 * occurrence of a key wins. */
int params_u64(struct params *, const char *key, uint64_t def, uint64_t min, uint64_t max,
               uint64_t *out, struct diag *d);
int params_str(struct params *, const char *key, const char *def, const char **out);

/* Report each unused key as an error (with a hint from known, a NULL-
 * terminated list); returns the number reported. */
unsigned params_check_unused(struct params *, const char *const *known, const char *what,
                             struct diag *d);

#endif
