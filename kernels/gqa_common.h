/* kernels/gqa_common.h: what the GQA attention kernels share: their
 * arguments and parameters (shapes, model presets, tile sizes; host side,
 * gqa_setup.c), the online-softmax step and merge (device side,
 * gqa_common.c), the decode driver (KV split over PEs, a tree or chain
 * reduce of partial states) and the prefill driver (blocks of query rows,
 * two sub-blocks ping-ponging, against one stream of KV tiles per PE).
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
#define GQA_MAX_CHILD 16             /* most children of a PE in a reduce */
#define GQA_NEG_BIG (-1.0e30f)       /* the running max's start: "no key seen yet" */
#define GQA_TINY 1.0e-30f            /* l floor in the final O / l (l is 0 or >= 1) */

/* Which kernel a setup is for: each has its own parameters. */
enum gqa_kind {
        GQA_DECODE,                  /* long-context decode */
        GQA_DECODE_SHORT,            /* short-context decode (kv_per_cube) */
        GQA_DECODE_OPT3,             /* decode, per-tile primitives with lazy loads */
        GQA_DECODE_OPT2,             /* decode, per tile a Q.K^T composite + softmax_merge */
        GQA_PREFILL,                 /* long-context prefill (query rows over cubes) */
        GQA_PREFILL_SHORT,           /* short-context prefill (kv_per_cube) */
};

/* The argument block of every GQA kernel. */
struct gqa_args {
        tl_tensor *q, *k, *v, *o;    /* HBM tensors, shapes above */
        int64_t batch;               /* B */
        int64_t hq, hkv, group;      /* query heads, KV heads, G = hq / hkv */
        int64_t d;                   /* head dim */
        int64_t s;                   /* keys (context length) */
        int64_t sq;                  /* queries per head (1 for decode) */
        tl_dtype dt;                 /* element type of q, k, v and o */
        bool causal;                 /* prefill: mask j > i + s - sq */
        float scale;                 /* score scale (1/sqrt(d) unless set) */
        int64_t kv_tile;             /* keys per tile */
        int64_t q_tile;              /* prefill: query rows per head of a block (setup resolves 0) */
        int64_t rows_max;            /* prefill: rows (heads x queries) of a block, sized to the PE */
        int64_t heads_per_pe;        /* prefill: query heads of a block (setup resolves 0) */
        int depth;                   /* K/V prefetch slots */
        int64_t kv_per_cube;         /* short kernels: KV heads each cube owns */
        double tile_frac;            /* opt3: kv_tile as a fraction of a PE's keys (0: kv_tile) */
        int64_t prim_tile;           /* opt3: keys per primitive load and dot (0: the whole tile) */
        bool fold;                   /* opt3: M-fold the group's heads into each primitive */
};

extern const char *const gqa_dtypes[];
extern const char *const gqa_models[];
/* The shape of model preset name: 0, or -1 if there is no such preset. */
int gqa_model_shape(const char *name, int64_t *q_heads, int64_t *kv_heads, int64_t *head_dim);

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
        { "depth", TL_PARAM_INT, 4, 2, GQA_MAX_DEPTH, NULL,                                  \
          "K/V prefetch slots in TCM (prefill: at least 3)" }

#define GQA_PARAMS_PREFILL                                                                   \
        { "q_len", TL_PARAM_INT, 0, 0, 1 << 30, NULL, "queries Sq per head; 0: seq_len" },  \
        { "causal", TL_PARAM_INT, 1, 0, 1, NULL, "1: query i sees keys j <= i + S - Sq" },   \
        { "q_tile", TL_PARAM_INT, 0, 0, 4096, NULL, "query rows per head per block; 0: auto" }, \
        { "heads_per_pe", TL_PARAM_INT, 0, 0, 4096, NULL,                                    \
          "query heads of one block (divides the group); 0: auto" }

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

/* Define GQA kernel tl_kernel_<name>: body fn, its setup gqa_setup(kind),
 * files io_help, and the parameters listed after io_help (the entries
 * above, and the kernel's own). */
#define GQA_KERNEL(name_, summary_, fn_, kind_, io_help_, ...)                             \
        static const struct tl_param name_##_params[] = { __VA_ARGS__, GQA_PARAMS_END };   \
        static void name_##_setup(tl_setup *s, void *args) { gqa_setup(s, args, kind_); }  \
        const struct tl_kernel tl_kernel_##name_ = {                                       \
                .name = #name_,                                                            \
                .summary = summary_,                                                       \
                .fn = fn_,                                                                 \
                .params = name_##_params,                                                  \
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
        int child[GQA_MAX_CHILD];    /* ranks whose partial states it merges, in this order */
        int n_child;                 /* entries of child */
        int parent;                  /* rank it sends its merged state to; -1: writes the output */
        bool lazy;                   /* opt2/opt3: K and V fetched inside each tile, no prefetch */
        bool composite;              /* opt2: the tile step as two composites */
};

/* (m, l, o) <- the merge of the online-softmax states (m, l, o) and
 * (mb, lb, ob); the results are scratch tensors. */
void gqa_merge(tl_ctx *tl, tl_tensor **m, tl_tensor **l, tl_tensor **o, tl_tensor *mb,
               tl_tensor *lb, tl_tensor *ob);

/* The same merge in place: the tensors m, l, o (views of the state in
 * TCM) get the merged state, copied in the order l, o, m. */
void gqa_merge_into(tl_ctx *tl, tl_tensor *m, tl_tensor *l, tl_tensor *o, tl_tensor *mb,
                    tl_tensor *lb, tl_tensor *ob);

/* Rows [j0, j0 + n) of head h of batch b of a [B, H, S, D] tensor (keys
 * of k or v, or a head's queries or outputs), as [n, D]. */
tl_tensor *gqa_head_rows(tl_ctx *tl, tl_tensor *x, int64_t b, int64_t h, int64_t j0, int64_t n);

/* Run the decode plan on this PE. */
void gqa_decode_run(tl_ctx *tl, const struct gqa_args *a, const struct gqa_decode_plan *p);

/* The long-context plan: groups of PEs (all cubes), a pair's keys split
 * over a group, a binary tree to the group's first PE (gqa_tree). With
 * lazy (opt2, opt3): every pair on every PE and a chain to PE 0 of cube 0
 * (mesh rows, the column of row heads, the cubes). */
void gqa_decode_long_plan(tl_ctx *tl, const struct gqa_args *a, struct gqa_decode_plan *p,
                          bool lazy);

/* The reduce links of member `member` of a group of pg PEs whose global
 * indices (cube x PEs per cube + PE) are base, base + 1, ...: a binary
 * tree to member 0, nearest child first; sets child, n_child, parent. */
void gqa_tree(tl_ctx *tl, struct gqa_decode_plan *p, int64_t base, int64_t member, int64_t pg);

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

/* This PE's share; false if it has no pair (m->n_pairs is 0). */
bool gqa_short_map(tl_ctx *tl, const struct gqa_args *a, struct gqa_short *m);
/* The i-th pair (b * kv_heads + kv head) of m, i < m->n_pairs. */
int64_t gqa_short_pair(const struct gqa_short *m, int64_t i);

/* One block of query rows: hpp heads of one KV group, rows [i0, i0 + ql). */
struct gqa_qblock {
        int64_t b, kvh;              /* batch and KV head */
        int64_t h0, hpp;             /* first query head and heads folded into the rows */
        int64_t i0, ql;              /* query rows */
};

/* A tile to fetch: keys [j0, j0 + n) of KV head (b, h); with q, also a Q
 * block into q_dst. */
struct gqa_kv_src {
        int64_t b, h;                /* batch, KV head */
        int64_t j0, n;               /* keys */
        tl_tensor *q, *q_dst;        /* optional Q copy issued with the tile */
        int64_t block;               /* prefill: the PE's block the tile is for */
        int slot;                    /* ring slot (set by the ring) */
};

/* The next tile a stream wants fetched, or false at its end. */
typedef bool (*gqa_produce_fn)(tl_ctx *tl, void *ctx, struct gqa_kv_src *out);

/* A ring of TCM slots that K/V tiles are fetched into, ahead of use. A
 * slot is refilled once the `keep` tiles popped after it have been popped
 * and the composites recorded in its hold have ended. */
struct gqa_kv_ring {
        const struct gqa_args *a;    /* shapes */
        tl_tensor *kbuf[GQA_MAX_DEPTH]; /* TCM [kv_tile, D] slots */
        tl_tensor *vbuf[GQA_MAX_DEPTH]; /* likewise for V */
        tl_handle hold[GQA_MAX_DEPTH][2]; /* composites reading a slot (p NULL: none) */
        int depth;                   /* slots */
        int keep;                    /* popped tiles still in use (decode 1, prefill 2) */
        gqa_produce_fn produce;      /* the stream */
        void *ctx;                   /* its state */
        bool exhausted;              /* produce said false */
        struct gqa_kv_src fifo[GQA_MAX_DEPTH]; /* fetched, not yet consumed, in order */
        int head, count;             /* fifo window */
        int64_t issued;              /* tiles fetched so far (slot = issued % depth) */
};

/* The blocks of a prefill PE, dealt in snake order (PE e takes item e of
 * the first round, P - 1 - e of the second, ...) so that causal work,
 * which grows with the row, evens out; the latest rows (most keys) come
 * first, so a last, partial round deals the lightest blocks. Long
 * context: items are (row block, pair, head group) over every pair;
 * short context: the same per pair of the cube's group, pair after pair. */
struct gqa_prefill_work {
        int64_t lo[2], hi[2];        /* the query rows covered: two ranges */
        int64_t nrb[2];              /* row blocks of each range */
        int64_t ql, hpp;             /* rows per head and heads of a block */
        int64_t hgs;                 /* head groups per KV head: G / hpp */
        const struct gqa_short *sm;  /* short: the cube's group's pairs; NULL: every pair */
        int64_t npairs;              /* pairs (long) */
        int64_t dealers, me;         /* PEs the items are dealt to, this PE's place */
        int64_t per_pair;            /* short: this PE's blocks of each pair */
        int64_t n;                   /* blocks of this PE */
};

/* Fill w for rows [lo0, hi0) and [lo1, hi1), dealt over `dealers` PEs
 * (this one `me`); sm NULL for every pair (long context). */
void gqa_prefill_work_init(tl_ctx *tl, const struct gqa_args *a, struct gqa_prefill_work *w,
                           const int64_t lo[2], const int64_t hi[2], const struct gqa_short *sm,
                           int64_t dealers, int64_t me);

/* Run this PE's blocks: two query sub-blocks ping-pong (one's Q.K^T on
 * PE_GEMM while PE_MATH runs the other's softmax merge), the running state
 * updated in place in TCM, one K/V stream across all blocks. */
void gqa_prefill_run(tl_ctx *tl, const struct gqa_args *a, const struct gqa_prefill_work *w);

/* A prefill block of hb heads (and more than one row) is split into two
 * sub-blocks unless hb is odd and above 1: then it is one. */
static inline bool gqa_one_sub_block(int64_t hb) { return hb % 2 == 1 && hb > 1; }

/* The i-th of n parts of [0, total): [*lo, *hi). */
void gqa_split(int64_t total, int64_t n, int64_t i, int64_t *lo, int64_t *hi);

#endif
