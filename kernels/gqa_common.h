/* kernels/gqa_common.h: what the GQA attention kernels share: their
 * arguments and parameters (shapes, model presets, tile sizes; host side,
 * gqa_setup.c), the online-softmax step and merge (device side,
 * gqa_common.c), the decode driver (KV split over PEs,
 * chain reduce of partial states) and the prefill driver (query blocks
 * against a stream of KV tiles, optionally fed by a ring of cubes).
 *
 * Shapes: batch B, query heads Hq, KV heads Hkv, group G = Hq / Hkv, head
 * dim D, context S, query length Sq (1 for decode). Inputs q [B, Hq, Sq, D],
 * k and v [B, Hkv, S, D]; output o [B, Hq, Sq, D]. Query i sees key j iff
 * j <= i + S - Sq when causal.
 *
 * Online softmax state per query row: running max m, running sum l and the
 * unnormalised output O, all fp32 in persistent TCM. The running max starts
 * at GQA_NEG_BIG (finite), never -inf, so e^(m_old - m_new) is never
 * e^(-inf + inf) = NaN: a fully masked row keeps m = GQA_NEG_BIG, l = 0,
 * O = 0 and its output is 0. See docs/adr/0005-gqa-kernels.md. */
#ifndef CUBESIM_KERNELS_GQA_COMMON_H
#define CUBESIM_KERNELS_GQA_COMMON_H

#include <cubesim/tl.h>

static inline int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }
static inline int64_t max64(int64_t a, int64_t b) { return a > b ? a : b; }

#define GQA_MAX_DEPTH 8              /* most K/V prefetch slots */
#define GQA_NEG_BIG (-1.0e30f)       /* the running max's start: "no key seen yet" */
#define GQA_TINY 1.0e-30f            /* l floor in the final O / l (l is 0 or >= 1) */

/* Budgets the tile sizes are chosen against. Kernels cannot query the
 * machine, so these are the default machine's (1 MiB scratch ceiling,
 * 1 MiB of TCM beside it) with some room left. */
#define GQA_SCRATCH_BUDGET (896 * 1024)  /* per-tile working set */
#define GQA_RING_BUDGET (512 * 1024)     /* K/V prefetch ring in TCM */

/* Which kernel a setup is for: each has its own parameters. */
enum gqa_kind {
        GQA_DECODE,                  /* long-context decode */
        GQA_DECODE_SHORT,            /* short-context decode (kv_per_cube) */
        GQA_DECODE_OPT3,             /* decode, per-tile primitives with lazy loads */
        GQA_DECODE_OPT2,             /* decode, per tile a Q.K^T composite + softmax_merge */
        GQA_PREFILL,                 /* long-context prefill (ring of cubes) */
        GQA_PREFILL_SHORT,           /* short-context prefill (kv_per_cube) */
};

/* The argument block of every GQA kernel. */
struct gqa_args {
        tl_tensor *q, *k, *v, *o;    /* HBM tensors, shapes above */
        tl_tensor *k_kept, *v_kept;  /* prefill: each cube's copy of the K/V blocks the ring
                                      * brought it (replicated, shaped as k); else NULL */
        int64_t batch;               /* B */
        int64_t hq, hkv, group;      /* query heads, KV heads, G = hq / hkv */
        int64_t d;                   /* head dim */
        int64_t s;                   /* keys (context length) */
        int64_t sq;                  /* queries per head (1 for decode) */
        tl_dtype dt;                 /* element type of q, k, v and o */
        bool causal;                 /* prefill: mask j > i + s - sq */
        float scale;                 /* score scale (1/sqrt(d) unless set) */
        int64_t kv_tile;             /* keys per tile */
        int64_t q_tile;              /* prefill: query rows per head per block (0: auto) */
        int64_t rows_max;            /* prefill: most state rows (heads x rows) a block may have */
        int64_t heads_per_pe;        /* prefill: query heads folded per block (0: auto) */
        int depth;                   /* K/V prefetch slots */
        int64_t kv_per_cube;         /* short kernels: KV heads each cube owns */
        int64_t pe_cols;             /* decode: PE columns of a cube's mesh (0: auto) */
        double tile_frac;            /* opt3: kv_tile as a fraction of a PE's keys (0: kv_tile) */
        int64_t prim_tile;           /* opt3: keys per primitive load and dot (0: the whole tile) */
        bool fold;                   /* opt3: M-fold the group's heads into each primitive */
};

extern const char *const gqa_dtypes[];
extern const char *const gqa_models[];

/* Parameter table entries, shared by the kernels' tables. */
#define GQA_PARAMS_SHAPE(seq_default)                                                       \
        { "model", TL_PARAM_CHOICE, 0, 0, 0, gqa_models,                                     \
          "preset of q_heads, kv_heads, head_dim (explicit values win)" },                   \
        { "batch", TL_PARAM_INT, 1, 1, 65536, NULL, "batch B" },                            \
        { "q_heads", TL_PARAM_INT, 32, 1, 65536, NULL, "query heads Hq" },                   \
        { "kv_heads", TL_PARAM_INT, 8, 1, 65536, NULL, "KV heads Hkv (divides q_heads)" },   \
        { "head_dim", TL_PARAM_INT, 128, 1, 4096, NULL, "head dimension D" },                \
        { "seq_len", TL_PARAM_INT, (seq_default), 1, 1 << 30, NULL, "keys S (context)" },   \
        { "dtype", TL_PARAM_CHOICE, 1, 0, 0, gqa_dtypes, "element type of q, k, v, o" },     \
        { "scale", TL_PARAM_FLOAT, 0, -1e6, 1e6, NULL, "score scale; 0: 1/sqrt(head_dim)" }, \
        { "kv_tile", TL_PARAM_INT, 0, 0, 8192, NULL, "keys per tile; 0: auto" },            \
        { "depth", TL_PARAM_INT, 4, 2, GQA_MAX_DEPTH, NULL, "K/V prefetch slots in TCM" }

#define GQA_PARAMS_DECODE                                                                    \
        { "pe_cols", TL_PARAM_INT, 0, 0, 4096, NULL,                                         \
          "PE columns of a cube's mesh for the row-then-column reduce; 0: auto" }

#define GQA_PARAMS_PREFILL                                                                   \
        { "q_len", TL_PARAM_INT, 0, 0, 1 << 30, NULL, "queries Sq per head; 0: seq_len" },  \
        { "causal", TL_PARAM_INT, 1, 0, 1, NULL, "1: query i sees keys j <= i + S - Sq" },   \
        { "q_tile", TL_PARAM_INT, 0, 0, 4096, NULL, "query rows per head per block; 0: auto" }, \
        { "heads_per_pe", TL_PARAM_INT, 0, 0, 4096, NULL,                                    \
          "query heads folded into one block's rows (divides the group); 0: auto" }

#define GQA_PARAMS_SHORT                                                                     \
        { "kv_per_cube", TL_PARAM_INT, 1, 1, 8, NULL, "KV heads each cube owns: 1, 2, 4 or 8" }

#define GQA_PARAMS_END { NULL, 0, 0, 0, 0, NULL, NULL }

/* The files of `cubesim kernels`: decode (one query row) and prefill. */
#define GQA_DECODE_IO_HELP                                                                 \
        "inputs q.npy [batch, q_heads, 1, head_dim], k.npy and v.npy "                     \
        "[batch, kv_heads, seq_len, head_dim]; output o.npy [batch, q_heads, 1, head_dim]"
#define GQA_PREFILL_IO_HELP                                                                \
        "inputs q.npy [batch, q_heads, q_len, head_dim], k.npy and v.npy "                 \
        "[batch, kv_heads, seq_len, head_dim]; output o.npy [batch, q_heads, q_len, "      \
        "head_dim]"

/* Read the parameters and declare q, k, v, o; reject what cannot run. */
void gqa_setup(tl_setup *s, struct gqa_args *a, enum gqa_kind kind);

/* Define GQA kernel tl_kernel_<name>: body fn, parameters params, its
 * setup gqa_setup(kind), files io_help. */
#define GQA_KERNEL(name_, summary_, fn_, params_, kind_, io_help_)                         \
        static void name_##_setup(tl_setup *s, void *args) { gqa_setup(s, args, kind_); }  \
        const struct tl_kernel tl_kernel_##name_ = {                                       \
                .name = #name_,                                                            \
                .summary = summary_,                                                       \
                .fn = fn_,                                                                 \
                .params = params_,                                                         \
                .args_size = sizeof(struct gqa_args),                                      \
                .setup = name_##_setup,                                                    \
                .io_help = io_help_,                                                       \
        }

/* ---- kernel side ------------------------------------------------------------ */

/* Running online-softmax state of `rows` query rows, fp32, persistent TCM. */
struct gqa_state {
        tl_tensor *m;                /* [rows, 1] running max */
        tl_tensor *l;                /* [rows, 1] running sum of e^(s - m) */
        tl_tensor *o;                /* [rows, D] unnormalised output */
};

/* How a decode PE takes part: which (batch, KV head) pairs, which keys,
 * and where its partial states go. Every PE of one reduce chain has the
 * same pairs in the same order. */
struct gqa_decode_plan {
        int64_t n_pairs;             /* pairs this PE works on */
        int64_t pair0;               /* short: the cube's first pair of round 0; long: 0 */
        int64_t round_stride;        /* short: pairs between rounds (kv_per_cube x cubes) */
        int64_t group0, group_step;  /* short: its first group slot and the step between them */
        int64_t groups;              /* short: its groups per round; long: 0 (pairs are 0, 1, ..) */
        int64_t s0, s1;              /* its keys [s0, s1) of every pair */
        int64_t kv_tile;             /* keys per tile */
        int child[3];                /* ranks whose partial states it merges, in this order */
        int n_child;                 /* entries of child */
        int parent;                  /* rank it sends its merged state to; -1: writes the output */
        bool lazy;                   /* opt2/opt3: K and V fetched inside each tile, no prefetch */
        bool composite;              /* opt2: the tile step as two composites */
};

/* Run the decode plan on this PE. */
void gqa_decode_run(tl_ctx *tl, const struct gqa_args *a, const struct gqa_decode_plan *p);

/* The long-context plan: every pair on every PE, keys split over all PEs
 * of all cubes, the two-level chain to PE 0 of cube 0. */
void gqa_decode_long_plan(tl_ctx *tl, const struct gqa_args *a, struct gqa_decode_plan *p,
                          bool lazy);

/* The global cube index (over every SIP) and the count. */
int gqa_cube_index(tl_ctx *tl);
int gqa_cube_count(tl_ctx *tl);
/* The rank of PE pe of global cube `cube`. */
int gqa_rank(tl_ctx *tl, int cube, int pe);

/* Short context: cube c owns pairs (batch, KV head) c * kv_per_cube ..
 * + kv_per_cube - 1 of every round of kv_per_cube x cubes pairs. A cube's
 * PEs form kv_per_cube groups of pg PEs (one group per owned KV head; with
 * fewer PEs than kv_per_cube, each PE runs several groups in turn). */
struct gqa_short {
        int64_t pg;                  /* PEs per group */
        int64_t slot;                /* this PE's group slot in its cube */
        int64_t member;              /* its index within the group */
        int cube;                    /* its global cube */
        int first_pe;                /* the group's first PE (within the cube) */
        int64_t pair0, round_stride; /* pair numbering (see pair_at) */
        int64_t group0, group_step, groups; /* its groups: group0 + i * group_step, i < groups */
        int64_t n_pairs;             /* its pairs over all rounds; 0: idle */
};

void gqa_short_map(tl_ctx *tl, const struct gqa_args *a, struct gqa_short *m);
/* The i-th pair (b * kv_heads + kv head) of m, i < m->n_pairs. */
int64_t gqa_short_pair(const struct gqa_short *m, int64_t i);

/* One block of query rows: hpp heads of one KV group, rows [i0, i0 + ql). */
struct gqa_qblock {
        int64_t b, kvh;              /* batch and KV head */
        int64_t h0, hpp;             /* first query head and heads folded into the rows */
        int64_t i0, ql;              /* query rows; ql 0: none (the block only forwards the ring) */
};

/* How a prefill block gets its keys: blocks of the sequence in ring order,
 * starting with block `first` and going down. With ring, block `first`
 * is read from HBM and sent on to next, and every later block arrives
 * from prev (and is sent on, but for the last) and is stored in the
 * cube's kept copy; else every block is read from HBM (its own block from
 * k and v, the others from the kept copy) and tiles no row of the query
 * block sees are skipped. */
struct gqa_kv_plan {
        int n_blocks;                /* blocks of S (cubes of the ring, or 1) */
        int first;                   /* this cube's own block */
        int prev, next;              /* ring neighbours' ranks */
        bool ring;                   /* this pass carries the ring */
};

/* A tile to fetch: keys [j0, j0 + n) of KV head (b, h); with q, also a Q
 * block into q_dst. */
struct gqa_kv_src {
        int64_t b, h;                /* batch, KV head */
        int64_t j0, n;               /* keys */
        tl_tensor *q, *q_dst;        /* optional Q copy issued with the tile */
        bool kept;                   /* read from k_kept, v_kept (a block the ring brought) */
        int slot;                    /* ring slot (set by the ring) */
};

/* The next tile a stream wants fetched, or false at its end. */
typedef bool (*gqa_produce_fn)(tl_ctx *tl, void *ctx, struct gqa_kv_src *out);

/* A ring of TCM slots that K/V tiles are fetched into, ahead of use. */
struct gqa_kv_ring {
        const struct gqa_args *a;    /* shapes */
        tl_tensor *kbuf[GQA_MAX_DEPTH]; /* TCM [kv_tile, D] slots */
        tl_tensor *vbuf[GQA_MAX_DEPTH]; /* likewise for V */
        int depth;                   /* slots */
        gqa_produce_fn produce;      /* the stream */
        void *ctx;                   /* its state */
        bool exhausted;              /* produce said false */
        struct gqa_kv_src fifo[GQA_MAX_DEPTH]; /* fetched, not yet consumed, in order */
        int head, count;             /* fifo window */
        int64_t issued;              /* tiles fetched so far (slot = issued % depth) */
};

/* A prefill PE's persistent TCM; zero it, the first block allocates it. */
struct gqa_prefill_pe {
        bool ready;                  /* allocated */
        struct gqa_kv_ring ring;     /* K/V prefetch slots */
        tl_tensor *qbuf;             /* flat [rows_max * D], dtype: the block's Q */
        tl_tensor *qs;               /* flat [rows_max * D], fp32: Q * scale */
        tl_tensor *out;              /* flat [rows_max * D], dtype: the block's output */
        struct gqa_state st;         /* rows_max rows of running state */
};

/* Attend query block qb to the keys of kv and store its rows of o. */
void gqa_prefill_block(tl_ctx *tl, const struct gqa_args *a, struct gqa_prefill_pe *pf,
                       const struct gqa_qblock *qb, const struct gqa_kv_plan *kv);

/* Heads folded per block (*hpp) and rows per head (*qt) for a PE's share:
 * the largest fold that still gives at least `want` units, where a unit is
 * one of base x (G / hpp) head blocks, times its query blocks over `rows`
 * rows when per_block. heads_per_pe and q_tile, when set, win. */
void gqa_prefill_shape(const struct gqa_args *a, int64_t base, bool per_block, int64_t want,
                       int64_t rows, int64_t *hpp, int64_t *qt);

/* The i-th of n parts of [0, total): [*lo, *hi). */
void gqa_split(int64_t total, int64_t n, int64_t i, int64_t *lo, int64_t *hi);

#endif
