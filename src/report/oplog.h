/* report/oplog.h: the op_log, one record per executed op, as canonical
 * JSON Lines: every record has the keys pe, component, op, start_ps,
 * end_ps, bytes, flops, params in that order; params is an object whose
 * keys keep the order the op gave them; numbers are integers; strings are
 * escaped per RFC 8259 (only '"', '\\' and control characters, the latter
 * always as \u00xx with lowercase hex; valid UTF-8 as it is, any other
 * byte as U+FFFD, so the file is always valid JSON); no
 * spaces (compact), one record per line, '\n' line ends. Two runs of the
 * same input give the same bytes.
 *
 * Records are written as ops are placed on the machine (their start and
 * end are known then: the hardware model is analytic): at their issue, or
 * for an HBM copy at the end of its instant and for a composite's stages
 * as its buffers free (docs/adr/0010). So the file is in placement order,
 * not time order; it is streamed through a buffer, never held whole. */
#ifndef CUBESIM_REPORT_OPLOG_H
#define CUBESIM_REPORT_OPLOG_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "base/fsutil.h"
#include "base/jsonw.h"
#include "engine/ev.h"

enum rep_param_kind { REP_INT, REP_STR };

struct rep_param {
        const char *name;            /* key */
        enum rep_param_kind kind;    /* which of the values */
        int64_t i;                   /* REP_INT value */
        const char *s;               /* REP_STR value (borrowed) */
};

struct rep_op {
        const char *pe;              /* PE name, "sip0.cube1.pe5" */
        uint32_t pe_index;           /* global PE index (the trace's pid) */
        const char *component;       /* "pe_cpu", "pe_dma", "pe_gemm", "pe_math" */
        const char *op;              /* "load", "dot", "exp", "send", ... */
        sim_ps start_ps;             /* when the component started it */
        sim_ps end_ps;               /* when it finished */
        uint64_t bytes;              /* bytes moved or touched */
        uint64_t flops;              /* floating-point operations */
        const struct rep_param *params; /* extra parameters, in order */
        unsigned n_params;           /* entries of params */
        /* Not in the op_log: */
        uint64_t elem_cycles;        /* PE_MATH: elements x the op's cycles per element */
        uint32_t channel;            /* the engine channel the model used (0 if it keeps none) */
        uint8_t mac_dt;              /* PE_GEMM: its operands' enum topo_mac_dt (0: bf16) */
};

struct rep_oplog {
        FILE *f;                     /* output, owned if opened by path */
        bool owned;                  /* f was opened by rep_oplog_open */
        uint64_t n_records;          /* records written */
        int err;                     /* first write error (errno), 0 if none */
        char *buf;                   /* f's stdio buffer (owned), NULL for stdout */
        struct fs_atomic at;         /* the temporary file that replaces the target at close */
        bool discard;                /* close leaves the target as it was (rejected run) */
};

/* Open path for writing ("-" is stdout); a file already at path is
 * replaced only by a successful close. 0 or -errno. */
int rep_oplog_open(struct rep_oplog *, const char *path);
void rep_oplog_write(struct rep_oplog *, const struct rep_op *);
/* Flush and close; 0 or -errno of the first write error. */
int rep_oplog_close(struct rep_oplog *);


/* Shared with report/trace.c only. The writers use the unlocked stdio
 * calls: a log belongs to one thread. */
/* Open path ("-": stdout, not owned) with a large buffer; a regular file
 * is written beside path and replaces it at close (at). 0 or -errno. */
int rep__out_open(const char *path, FILE **f, bool *owned, char **buf, struct fs_atomic *at);
/* Flush, fclose if owned, free buf, then replace the target if keep and
 * no error was seen (else leave it as it was); -(first of err and new
 * errors) or 0. */
int rep__out_close(FILE *f, bool owned, char *buf, int err, struct fs_atomic *at, bool keep);
/* Keep the first write error of f in *err (errno, EIO if unknown). */
void rep__note_error(FILE *f, int *err);
/* Short writes byte by byte: putc_unlocked is an inline store into the
 * stdio buffer, where each fwrite_unlocked is a call through the FILE's
 * jump table (measured: 8 vs 6 M records/s; fprintf 3.5). */
static inline void rep__put_bytes(FILE *f, const void *s, size_t n)
{
        const char *c = s;
        for (size_t i = 0; i < n; i++)
                putc_unlocked(c[i], f);
}

#define REP__PUT_LIT(f, lit) rep__put_bytes(f, lit, sizeof(lit) - 1)
/* A literal (a member's key) then an integer or a JSON string. */
#define REP__PUT_KEY_U64(f, key, v) (REP__PUT_LIT(f, key), rep__put_u64(f, v))
#define REP__PUT_KEY_STR(f, key, s) (REP__PUT_LIT(f, key), jsonw_put_string(f, s))
void rep__put_u64(FILE *f, uint64_t v);
void rep__put_i64(FILE *f, int64_t v);
/* The params as object members "k":v separated by commas, with a comma
 * before the first if after_member. */
void rep__put_params(FILE *f, const struct rep_param *p, unsigned n, bool after_member);

#endif
