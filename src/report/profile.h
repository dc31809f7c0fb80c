/* report/profile.h: where a run's time went per kernel source line, and
 * the work the run did (the counters its bounds come from).
 *
 * Every op the kernel issues is charged to the source line that issued it
 * (the file:line its tl_* macro passed): the PE_CPU issue time, the engine
 * time of the records it produced on PE_DMA, PE_GEMM and PE_MATH, the time
 * the PE_CPU waited there, and the op count; summed over all PEs. The
 * table is keyed on the __FILE__ pointer and the line, so the hot path
 * compares no strings; rep_profile_sorted merges entries of the same file
 * name. */
#ifndef CUBESIM_REPORT_PROFILE_H
#define CUBESIM_REPORT_PROFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/ev.h"
#include "topo/topo.h"

enum rep_engine {
        REP_ENG_DMA,                 /* PE_DMA */
        REP_ENG_GEMM,                /* PE_GEMM */
        REP_ENG_MATH,                /* PE_MATH */
        REP_ENG_COUNT,               /* engines */
        REP_ENG_CPU = REP_ENG_COUNT, /* PE_CPU (and unknown components) */
};

/* The engine of a component name ("pe_dma", "pe_gemm", "pe_math");
 * REP_ENG_CPU for "pe_cpu" and any other name. */
enum rep_engine rep_engine_of(const char *component);
/* "pe_dma", "pe_gemm", "pe_math". */
const char *rep_engine_name(enum rep_engine e);

struct rep_line {
        const char *file;            /* kernel source file (__FILE__), borrowed; NULL: empty slot */
        int line;                    /* line in it */
        sim_ps issue_ps;             /* PE_CPU issue time of the ops issued there */
        sim_ps engine_ps[REP_ENG_COUNT]; /* engine time of their records, by engine */
        sim_ps wait_ps;              /* PE_CPU time blocked there */
        uint64_t n_ops;              /* ops issued there */
};

/* Total time charged to a line: issue + engine + wait. */
sim_ps rep_line_total_ps(const struct rep_line *l);

struct rep_profile {
        struct rep_line *slots;      /* open addressing on (file pointer, line) */
        size_t cap;                  /* slots, a power of two (0: none yet) */
        size_t n;                    /* slots used */
        bool oom;                    /* an entry could not be made: the profile is incomplete */
        uint64_t n_grown;            /* times the slots moved: an entry's pointer stays
                                        valid while this is unchanged */
};

/* The entry of file:line, made on first use; NULL if the host is out of
 * memory (then oom is set: the profile is incomplete). */
struct rep_line *rep_profile_at(struct rep_profile *, const char *file, int line);
/* An entry kept for the next look-ups of the same place (an op's issue
 * and its records; a composite's stages). Zero: none kept. */
struct rep_line_hint {
        struct rep_line *l;          /* the entry found last */
        uint64_t n_grown;            /* the profile's n_grown then */
};
/* rep_profile_at, keeping the entry in *hint. */
struct rep_line *rep_profile_rehint(struct rep_profile *, const char *file, int line,
                                    struct rep_line_hint *hint);
/* rep_profile_at through *hint: the kept entry if it is still valid and
 * of file:line (no hashing), else found and kept. */
static inline struct rep_line *rep_profile_hinted(struct rep_profile *p, const char *file,
                                                  int line, struct rep_line_hint *hint)
{
        struct rep_line *l = hint->l;
        if (l && hint->n_grown == p->n_grown && l->file == file && l->line == line)
                return l;
        return rep_profile_rehint(p, file, line, hint);
}
/* Every line, entries of the same file name merged, by total time (most
 * first; ties by file then line): a new array in *out (caller frees);
 * returns its length, or 0 with *out NULL. */
size_t rep_profile_sorted(const struct rep_profile *, struct rep_line **out);
void rep_profile_fini(struct rep_profile *);

/* The work a run did, summed over every PE, from its op records. */
struct rep_work {
        uint64_t gemm_flops;         /* PE_GEMM floating-point operations (2 per MAC) */
        uint64_t gemm_flops_dt[TOPO_MAC_COUNT]; /* of them, by operand class (enum
                                      * topo_mac_dt), for the energy per MAC */
        uint64_t math_elements;      /* PE_MATH elements processed */
        uint64_t math_elem_cycles;   /* PE_MATH elements x the op's cycles per element */
        uint64_t dma_bytes;          /* bytes the PE_DMA engines moved (a send at both ends) */
};

/* Add to w the work of a record on engine e: its bytes (PE_DMA), its
 * flops (PE_GEMM, of operand class mac_dt; PE_MATH: its elements) and
 * elem_cycles (PE_MATH). */
static inline void rep_work_add(struct rep_work *w, enum rep_engine e, uint64_t bytes,
                                uint64_t flops, uint64_t elem_cycles, enum topo_mac_dt mac_dt)
{
        switch (e) {
        case REP_ENG_DMA: w->dma_bytes += bytes; break;
        case REP_ENG_GEMM:
                w->gemm_flops += flops;
                w->gemm_flops_dt[(unsigned)mac_dt < TOPO_MAC_COUNT ? mac_dt : TOPO_MAC_FP32] +=
                        flops;
                break;
        case REP_ENG_MATH:
                w->math_elements += flops;
                w->math_elem_cycles += elem_cycles;
                break;
        case REP_ENG_COUNT: break;
        }
}

/* Add the counts of b to w. */
static inline void rep_work_sum(struct rep_work *w, const struct rep_work *b)
{
        w->gemm_flops += b->gemm_flops;
        for (int c = 0; c < TOPO_MAC_COUNT; c++)
                w->gemm_flops_dt[c] += b->gemm_flops_dt[c];
        w->math_elements += b->math_elements;
        w->math_elem_cycles += b->math_elem_cycles;
        w->dma_bytes += b->dma_bytes;
}

#endif
