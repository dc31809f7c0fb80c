/* base/yaml.h: YAML text -> a tree of located nodes, for the loaders of
 * topology files and sweep specs.
 *
 * The tree keeps each node's line and column so a schema walker can
 * report every semantic problem where it is. Hostile input is bounded:
 * aliases are rejected (no expansion, so no billion laughs), tags are
 * rejected, and nesting and the node count are capped by the caller's
 * limits. Each caller names its document in the messages ("a topology
 * file", "a sweep spec") and caps the input size itself. */
#ifndef CUBESIM_BASE_YAML_H
#define CUBESIM_BASE_YAML_H

#include <stdbool.h>
#include <stddef.h>

#include "base/diag.h"

/* The deepest nesting any caller may allow. */
#define YTREE_MAX_DEPTH 64

enum ynode_kind {
        YN_SCALAR,                   /* text */
        YN_MAP,                      /* kids: key0, value0, key1, value1, ... */
        YN_SEQ,                      /* kids: items */
        YN_ALIAS,                    /* a rejected alias (already reported) */
};

struct ynode {
        enum ynode_kind kind;        /* what it is */
        unsigned line;               /* 1-based line of its first character */
        unsigned col;                /* 1-based column (characters) */
        bool plain;                  /* scalar was unquoted (only plain scalars are numbers/null) */
        size_t len;                  /* scalar: bytes of text (may contain NUL) */
        char *text;                  /* scalar: NUL-terminated copy; else NULL */
        size_t n_kids;               /* entries of kids (a map has 2 per pair) */
        size_t cap_kids;             /* allocated entries of kids */
        struct ynode **kids;         /* children, owned */
};

/* A caller's limits, and the words its messages use. */
struct ytree_limits {
        unsigned max_depth;          /* deepest nesting of maps and lists (<= YTREE_MAX_DEPTH) */
        size_t max_nodes;            /* most scalars + maps + lists in one document */
        const char *doc;             /* the document, e.g. "a topology file" */
        const char *depth_hint;      /* follows the nesting error: what a document needs */
        const char *nodes_hint;      /* follows the node-count error: what a document needs */
        const char *empty;           /* the whole message for a document with no content */
};

/* Parse one YAML document from buf (len bytes; any bytes at all) into a
 * tree. Reports every alias, tag and limit problem, and libyaml's syntax
 * error if any, located in file. Returns 0 and *root, or -EINVAL (or
 * -ENOMEM) with *root NULL when the document is unusable. */
int ytree_parse(const char *file, const char *buf, size_t len, const struct ytree_limits *lim,
                struct ynode **root, struct diag *d);
void ytree_free(struct ynode *n);

#endif
