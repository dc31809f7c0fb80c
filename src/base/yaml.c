/* base/yaml.c: see yaml.h. Built on libyaml's event parser; parsing stops
 * at the first syntax error (libyaml cannot resume), which is reported
 * with libyaml's own position. */
#include "base/yaml.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "base/util.h"

struct builder {
        const char *file;            /* for messages */
        const struct ytree_limits *lim; /* the caller's limits and wording */
        const char *buf;             /* the input, for offset -> line:col */
        size_t len;                  /* bytes of buf */
        struct diag *d;              /* where problems go */
        struct ynode *root;          /* the document's node, once seen */
        struct ynode *stack[YTREE_MAX_DEPTH + 1]; /* open maps and lists, outermost first */
        unsigned depth;              /* entries of stack in use */
        size_t n_nodes;              /* nodes made so far */
        unsigned n_docs;             /* documents started */
        bool failed;                 /* the tree is unusable */
};

void ytree_free(struct ynode *n)
{
        if (!n)
                return;
        for (size_t i = 0; i < n->n_kids; i++)
                ytree_free(n->kids[i]);
        free(n->kids);
        free(n->text);
        free(n);
}

static struct ynode *new_node(struct builder *b, enum ynode_kind kind, yaml_mark_t mark)
{
        if (b->n_nodes >= b->lim->max_nodes) {
                diag_error_at(b->d, b->file, (unsigned)mark.line + 1, (unsigned)mark.column + 1,
                              "too many YAML nodes (more than %zu); %s", b->lim->max_nodes,
                              b->lim->nodes_hint);
                b->failed = true;
                return NULL;
        }
        struct ynode *n = calloc(1, sizeof *n);
        if (!n) {
                diag_error(b->d, "%s: out of memory reading YAML", b->file);
                b->failed = true;
                return NULL;
        }
        b->n_nodes++;
        n->kind = kind;
        n->line = (unsigned)mark.line + 1;
        n->col = (unsigned)mark.column + 1;
        return n;
}

/* Attach n to the open container, or make it the root. Takes ownership. */
static bool attach(struct builder *b, struct ynode *n)
{
        if (b->depth == 0) {
                b->root = n;
                return true;
        }
        struct ynode *p = b->stack[b->depth - 1];
        struct ynode **k = util_grow(p->kids, p->n_kids, &p->cap_kids, sizeof *k, 8);
        if (!k) {
                diag_error(b->d, "%s: out of memory reading YAML", b->file);
                ytree_free(n);
                b->failed = true;
                return false;
        }
        p->kids = k;
        p->kids[p->n_kids++] = n;
        return true;
}

static void reject_tag(struct builder *b, const yaml_char_t *tag, yaml_mark_t mark)
{
        if (tag)
                diag_error_at(b->d, b->file, (unsigned)mark.line + 1, (unsigned)mark.column + 1,
                              "YAML tags are not supported (got '%s'); write the plain value",
                              (const char *)tag);
}

static void open_container(struct builder *b, enum ynode_kind kind, const yaml_char_t *tag,
                           yaml_mark_t mark)
{
        reject_tag(b, tag, mark);
        unsigned max_depth = b->lim->max_depth < YTREE_MAX_DEPTH ? b->lim->max_depth
                                                                 : YTREE_MAX_DEPTH;
        if (b->depth >= max_depth) {
                diag_error_at(b->d, b->file, (unsigned)mark.line + 1, (unsigned)mark.column + 1,
                              "nesting deeper than %u levels; %s", max_depth,
                              b->lim->depth_hint);
                b->failed = true;
                return;
        }
        struct ynode *n = new_node(b, kind, mark);
        if (!n || !attach(b, n))
                return;
        b->stack[b->depth++] = n;
}

static void add_scalar(struct builder *b, const yaml_event_t *ev)
{
        reject_tag(b, ev->data.scalar.tag, ev->start_mark);
        struct ynode *n = new_node(b, YN_SCALAR, ev->start_mark);
        if (!n)
                return;
        n->plain = ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
        n->len = ev->data.scalar.length;
        n->text = malloc(n->len + 1);
        if (!n->text) {
                free(n);
                diag_error(b->d, "%s: out of memory reading YAML", b->file);
                b->failed = true;
                return;
        }
        memcpy(n->text, ev->data.scalar.value, n->len);
        n->text[n->len] = '\0';
        attach(b, n);
}

/* Line and column (characters) of a byte offset into the input. */
static void offset_position(const struct builder *b, size_t offset, unsigned *line, unsigned *col)
{
        unsigned l = 1, c = 1;
        if (offset > b->len)
                offset = b->len;
        for (size_t i = 0; i < offset; i++) {
                unsigned char ch = (unsigned char)b->buf[i];
                if (ch == '\n') {
                        l++;
                        c = 1;
                } else if ((ch & 0xC0) != 0x80) {
                        c++;
                }
        }
        *line = l;
        *col = c;
}

static void report_parser_error(struct builder *b, const yaml_parser_t *p)
{
        const char *problem = p->problem ? p->problem : "unknown problem";
        switch (p->error) {
        case YAML_READER_ERROR: {
                /* Bad encoding or a character YAML forbids; libyaml gives a
                 * byte offset, and the offending byte if it has one. */
                unsigned line, col;
                offset_position(b, p->problem_offset, &line, &col);
                char byte[32] = "";
                if (p->problem_value >= 0)
                        snprintf(byte, sizeof byte, " (byte 0x%02x)", (unsigned)p->problem_value);
                diag_error_at(b->d, b->file, line, col,
                              "invalid text: %s%s; %s must be UTF-8", problem, byte,
                              b->lim->doc);
                break;
        }
        case YAML_SCANNER_ERROR:
        case YAML_PARSER_ERROR:
                if (p->context)
                        diag_error_at(b->d, b->file, (unsigned)p->problem_mark.line + 1,
                                      (unsigned)p->problem_mark.column + 1,
                                      "YAML syntax error: %s (%s at %u:%u)", problem, p->context,
                                      (unsigned)p->context_mark.line + 1,
                                      (unsigned)p->context_mark.column + 1);
                else
                        diag_error_at(b->d, b->file, (unsigned)p->problem_mark.line + 1,
                                      (unsigned)p->problem_mark.column + 1,
                                      "YAML syntax error: %s", problem);
                break;
        case YAML_MEMORY_ERROR:
                diag_error(b->d, "%s: out of memory parsing YAML", b->file);
                break;
        default:
                diag_error(b->d, "%s: YAML error: %s", b->file, problem);
                break;
        }
}

int ytree_parse(const char *file, const char *buf, size_t len, const struct ytree_limits *lim,
                struct ynode **root, struct diag *d)
{
        struct builder b = { .file = file, .lim = lim, .buf = buf, .len = len, .d = d };
        unsigned errors_before = d->n_errors;
        yaml_parser_t p;
        *root = NULL;
        if (!yaml_parser_initialize(&p)) {
                diag_error(d, "%s: out of memory starting the YAML parser", file);
                return -ENOMEM;
        }
        yaml_parser_set_input_string(&p, (const unsigned char *)buf, len);

        bool done = false;
        while (!done && !b.failed) {
                yaml_event_t ev;
                if (!yaml_parser_parse(&p, &ev)) {
                        report_parser_error(&b, &p);
                        b.failed = true;
                        break;
                }
                switch (ev.type) {
                case YAML_DOCUMENT_START_EVENT:
                        if (++b.n_docs > 1) {
                                diag_error_at(d, file, (unsigned)ev.start_mark.line + 1,
                                              (unsigned)ev.start_mark.column + 1,
                                              "a second YAML document; %s holds exactly one",
                                              lim->doc);
                                b.failed = true;
                        }
                        break;
                case YAML_MAPPING_START_EVENT:
                        open_container(&b, YN_MAP, ev.data.mapping_start.tag, ev.start_mark);
                        break;
                case YAML_SEQUENCE_START_EVENT:
                        open_container(&b, YN_SEQ, ev.data.sequence_start.tag, ev.start_mark);
                        break;
                case YAML_MAPPING_END_EVENT:
                case YAML_SEQUENCE_END_EVENT:
                        if (b.depth > 0)
                                b.depth--;
                        break;
                case YAML_SCALAR_EVENT:
                        add_scalar(&b, &ev);
                        break;
                case YAML_ALIAS_EVENT: {
                        diag_error_at(d, file, (unsigned)ev.start_mark.line + 1,
                                      (unsigned)ev.start_mark.column + 1,
                                      "aliases are not supported (*%s); write the value out",
                                      (const char *)ev.data.alias.anchor);
                        struct ynode *n = new_node(&b, YN_ALIAS, ev.start_mark);
                        if (n)
                                attach(&b, n);
                        break;
                }
                case YAML_STREAM_END_EVENT:
                        done = true;
                        break;
                default:
                        break;
                }
                yaml_event_delete(&ev);
        }
        yaml_parser_delete(&p);

        if (!b.failed && !b.root) {
                diag_error_at(d, file, 1, 1, "%s", lim->empty);
                b.failed = true;
        }
        if (b.failed) {
                ytree_free(b.root);
                if (d->n_errors == errors_before)
                        diag_error(d, "%s: cannot read YAML", file);
                return -EINVAL;
        }
        *root = b.root;
        return 0;
}
