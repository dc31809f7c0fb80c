/* plan/plan.h: composite op list -> pipeline plan -> stage timings.
 *
 * A composite is a flat, ordered list of ops with at most one GEMM.
 * plan_generate_from_ops turns it into a pipeline_plan:
 *   - KERNEL-scope ops before the GEMM -> prologue stages (single-shot MATH);
 *   - the GEMM -> the tile loop: for each output tile (m, n), row-major,
 *     for each K tile: DMA_READ of the operands that are not pinned ->
 *     GEMM -> the K_TILE MATH stages; after the last K tile the OUTPUT_TILE
 *     MATH stages, then DMA_WRITE when the output is not pinned;
 *   - KERNEL-scope ops after the GEMM -> post-loop stages;
 *   - a composite without a GEMM -> the plain MATH plan (every op a
 *     single-shot MATH stage, in order).
 *
 * plan_feed then runs the plan on a PE's engines: prologue stages are fed
 * first as standalone one-stage tiles, then the GEMM tiles, then the
 * post-loop stages as standalone tiles; each completes on its own
 * component and the completion count includes them. Stages hand their
 * tiles over through TCM, as primitives do (DMA -> GEMM -> MATH -> DMA,
 * no link hop between them). Operand buffers are PLAN_DEPTH-buffered: tile
 * i's read is issued when tile i - PLAN_DEPTH's GEMM has released its
 * buffer, so tile i+1's DMA overlaps tile i's compute. The feed is driven
 * by events (docs/adr/0010): a tile's stages are placed on the engines at
 * the time its read is issued, not the whole loop at the composite's
 * issue, so other requests arriving meanwhile are served in time order.
 * Without prologue and post-loop stages the tiles, the feed order and the
 * op_log are exactly those of the tile loop alone. */
#ifndef CUBESIM_PLAN_PLAN_H
#define CUBESIM_PLAN_PLAN_H

#include <stdbool.h>
#include <stdint.h>

#include <cubesim/tl.h>

#include "hw/hw.h"
#include "report/oplog.h"
#include "report/profile.h"

enum plan_unit {
        PLAN_DMA_READ,               /* PE_DMA: operand tile in */
        PLAN_GEMM,                   /* PE_GEMM: one K tile of one output tile */
        PLAN_MATH,                   /* PE_MATH: one op */
        PLAN_DMA_WRITE,              /* PE_DMA: output tile out */
};

/* One op of the composite's flat list, as the planner sees it. */
struct plan_op {
        bool gemm;                   /* the GEMM (else a MATH op) */
        const char *name;            /* "gemm", "dequant", "exp", ... for the op_log */
        enum topo_op cost_op;        /* MATH: its cycles-per-element entry */
        tl_cscope scope;             /* K_TILE, OUTPUT_TILE or KERNEL */
        uint64_t elements;           /* KERNEL-scope MATH: elements it touches */
        bool reads_hbm;              /* reads a tensor in HBM (prologue ops must not) */
        const char *hbm_name;        /* the name of that tensor, for the error */
};

/* The GEMM's shape and where its operands are. */
struct plan_gemm {
        int64_t m, n, k;             /* problem */
        int64_t tile_m, tile_n, tile_k; /* tile */
        bool a_pinned, b_pinned;     /* consumed in place from TCM (no DMA_READ) */
        bool a_hbm, b_hbm;           /* a DMA_READ comes from HBM (else TCM) */
        bool out_pinned;             /* result stays in TCM (no DMA_WRITE) */
        bool out_hbm;                /* the DMA_WRITE goes to HBM */
        bool accumulate;             /* the GEMM adds onto out's values: its first K tile of
                                      * each output tile reads them in (no MATH pass) */
        struct hw_hbm_span a_home, b_home, out_home; /* where their HBM bytes are, when in HBM */
        uint32_t a_elem_bytes, b_elem_bytes, out_elem_bytes; /* element sizes */
        uint32_t a_kbytes, b_kbytes; /* bytes of 1024 elements in the operand's format (a
                                      * block-float tile's exponents included: bfp8_b 1088,
                                      * bfp4_b 576); 0: 1024 x the element size */
        enum topo_mac_dt mac_dt;     /* the operands' class, for the energy per MAC */
};

struct plan_stage {
        enum plan_unit unit;         /* which engine */
        const char *op;              /* op name for the op_log */
        tl_cscope scope;             /* the op's scope */
        enum topo_op cost_op;        /* MATH cost entry */
        uint64_t elements;           /* MATH: KERNEL-scope elements (tile stages use the tile) */
};

#define PLAN_MAX_OPS 16

struct pipeline_plan {
        struct plan_stage stage[PLAN_MAX_OPS]; /* MATH stages: prologue, k_tile, out_tile, post */
        int n_prologue;              /* single-shot MATH before the loop (first in stage) */
        int n_k_tile;                /* MATH after each K tile's GEMM (next) */
        int n_out_tile;              /* MATH per output tile (next) */
        int n_post;                  /* single-shot MATH after the loop (last) */
        bool has_gemm;               /* there is a tile loop */
        struct plan_gemm gemm;       /* its shape */
        int64_t tiles_m, tiles_n, tiles_k; /* tile counts */
};

/* The sections of p->stage (one array keeps the plan small to copy). */
static inline const struct plan_stage *plan_prologue(const struct pipeline_plan *p)
{
        return p->stage;
}
static inline const struct plan_stage *plan_k_tile(const struct pipeline_plan *p)
{
        return p->stage + p->n_prologue;
}
static inline const struct plan_stage *plan_out_tile(const struct pipeline_plan *p)
{
        return plan_k_tile(p) + p->n_k_tile;
}
static inline const struct plan_stage *plan_post(const struct pipeline_plan *p)
{
        return plan_out_tile(p) + p->n_out_tile;
}

/* Plan ops[n] (gemm describes the GEMM if one of the ops is; it may be
 * out->gemm, made in place). On a plan
 * error, a message naming the ops goes to err and -1 is returned. */
int plan_generate_from_ops(const struct plan_op *ops, int n, const struct plan_gemm *gemm,
                           struct pipeline_plan *out, char *err, size_t err_len);

/* What plan_generate_from_ops would make of the ops that made like, with
 * gemm for their GEMM (it may be out->gemm) and elements[i] for stage i's
 * elements (like's stage count of them): a recipe planned once and
 * reused with other shapes, without its op list. */
void plan_replan(struct pipeline_plan *out, const struct pipeline_plan *like,
                 const struct plan_gemm *gemm, const uint64_t *elements);

/* Tiles the feeder completes: prologue + GEMM tiles + post-loop. */
uint64_t plan_n_completions(const struct pipeline_plan *);

/* Operand buffers per operand: tile i's read waits for tile i - PLAN_DEPTH's
 * GEMM (double buffering). */
#define PLAN_DEPTH 2

/* Where the plan runs and where its records go. */
struct plan_ctx {
        struct hw_pe *pe;            /* the PE whose engines run it */
        sim_ps start;                /* when the command reaches the engines */
        sim_ps operands_ready;       /* GEMM operands produced by the prologue are
                                        ready after the prologue; 0 = at start */
        sim_ps math_ready;           /* MATH stages wait for this (the epilogue's
                                        tensors); 0 = at start */
        void (*log)(void *ctx, const struct rep_op *op); /* op_log sink, or NULL */
        void *log_ctx;               /* its context */
        bool tally;                  /* for a caller that writes no records: log is not
                                        called, the stages' engine time and work are summed
                                        into busy_ps and work instead */
        void (*done)(void *ctx, sim_ps end); /* every stage placed; end the last, or NULL */
        void *done_ctx;              /* its context */
        uint64_t completions;        /* out: tiles completed */
        sim_ps end;                  /* out: when the last stage ends */
        sim_ps busy_ps[REP_ENG_COUNT]; /* out (tally): the stages' engine time, by engine */
        struct rep_work work;        /* out (tally): their work */
        /* With tally, also told of each stage placed (the critical path's
         * log), or NULL. */
        void (*dep)(void *ctx, const char *component, const char *op, sim_ps start, sim_ps end);
        void *dep_ctx;               /* its context */
};

/* A plan being fed: the caller's storage, valid until done is called. */
struct plan_run {
        struct pipeline_plan plan;   /* the plan (a copy) */
        struct plan_ctx pc;          /* where it runs */
        sim_ps operands;             /* when the GEMM operands are ready */
        sim_ps buf_free[PLAN_DEPTH]; /* when each operand buffer is next free */
        int64_t tm, tn, tk;          /* the next GEMM tile */
        uint64_t i;                  /* GEMM tiles placed */
        int64_t tile;                /* completion index of the next tile */
        struct ev_event next;        /* places the next tile when its buffer frees */
        struct hw_dma_req rd[2];     /* the tile's operand reads (A, B) */
        int rd_pending;              /* of them, not yet placed */
        bool issuing;                /* issue_reads is placing them */
        sim_ps rd_ready;             /* when the placed ones land */
        uint64_t rd_bytes;           /* the tile's operand bytes */
};

/* Start feeding p (which may be r->plan, generated there) on pc->pe's
 * engines from pc->start: places what can be
 * placed now, the rest from events as buffers free; calls pc->done (if
 * set) once every stage is placed, with pc->end its last end. Within a
 * run of the loop's processes only (it schedules events). */
void plan_feed(struct plan_run *r, const struct pipeline_plan *p, const struct plan_ctx *pc);

#endif
