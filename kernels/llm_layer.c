/* kernels/llm_layer.c: one Llama-3 decoder layer on every PE of the
 * machine, with tensor parallelism (see llm.h for the shapes and the
 * split; llm_setup.c for the parameters).
 *
 *   n1 = RMSNorm(x, attn_norm); q, k, v = n1 . wq, wk, wv
 *   RoPE (rotate-half, theta 500000) on q and k at positions P .. P+Sq-1
 *   causal GQA attention over the cache and the new keys, scale 1/sqrt(D)
 *   h = x + attn . wo
 *   out = h + (silu(n2 . w_gate) * (n2 . w_up)) . w_down, n2 = RMSNorm(h, mlp_norm)
 *
 * The machine's PEs form tp contiguous blocks of N / tp ranks (a block is
 * a set of SIPs, or of cubes); block r is tensor-parallel rank r, and the
 * N mod tp PEs left over stay idle. Inside a
 * block the work of each phase is split evenly over its PEs, and the
 * phases are separated by a barrier of the block:
 *   1. RMSNorm rows -> n1;
 *   2. the block's columns of q, k and v;
 *   3. RoPE on the new keys -> k_new, values -> v_new;
 *   4. attention: decode (Sq = 1) folds a KV head's G query heads into the
 *      rows of one block and splits the keys over PEs, whose partial
 *      softmax states merge at the first of them; prefill takes blocks of
 *      query rows of llm_attn_heads(G) heads of one KV head, stacked, over
 *      all the keys they see, read from the PE's own cube (docs/adr/0042).
 *      Per key tile one Q.K^T GEMM and one softmax_merge composite per
 *      chain of rows (prefill: the next tile's scores before this merge);
 *   5. the row-parallel wo GEMM: PE i of every block computes the same
 *      columns of H into TCM, the ring all-reduce (collective.h) over the
 *      blocks sums them, and the residual x is added -> h;
 *   6. RMSNorm rows -> n2;
 *   7. gate and up for the block's FFN columns -> act = silu(gate) * up;
 *   8. the row-parallel w_down GEMM, all-reduce and residual h -> out.
 * Phases 5 and 8 need no barrier before their all-reduce: a PE reduces the
 * columns it computed. Decode of a batch whose GEMMs split K applies the
 * RMSNorm in phases 2 and 7 instead (norm_fused): phases 1 and 6 and
 * their barriers go (docs/adr/0050's second amendment). Temporaries live
 * in HBM (llm_setup.c).
 *
 * GEMMs stream their operands through TCM (per K step, the loads of an A
 * tile and its B tiles and one GEMM composite on TCM operands per B tile,
 * later steps' loads issued first), blocked as llm_gemm_plan_of (llm.h)
 * says: decode in output blocks of LLM_TM x LLM_TN, K steps of LLM_TK
 * (weight-bandwidth bound: the loads of the next plan.bufs - 1 steps are
 * in flight while this step computes); prefill in LLM_TM x (LLM_NB x
 * LLM_PTN) blocks whose sub-blocks share each A tile, K steps of LLM_PTK
 * (docs/adr/0032), and on a cube grid the PEs of a NoC row share their A
 * tiles by multicast (gemm_shared, docs/adr/0036) while each loads its B
 * tiles from its cube's copy of the weights (docs/adr/0042); their
 * accumulators then live in scratch while a GEMM phase runs. Decode of a
 * batch of LLM_ROW_MCAST_ROWS to LLM_SPLIT_ROWS rows on whole cubes
 * splits each GEMM's K over a NoC row's PEs instead, which then exchange
 * partial sums (gemm_split, docs/adr/0050). */
#include "collective.h"
#include "gqa_common.h"
#include "llm.h"

/* Tags of the layer's messages (collective.h: each base owns COLL_TAGS). */
enum { TAG_BARRIER = 100, TAG_ALLREDUCE = 200, TAG_MERGE = 300, TAG_GEMM = 400,
       TAG_SPLIT = 500, TAG_NORM = 600, TAG_COLA = 700 };

/* A PE's share of a [rows, cols] output. */
struct share {
        int64_t r0, rows;            /* its rows */
        int64_t c0, cols;            /* its columns */
        bool shared;                 /* every share has this size: the cube shares tiles */
};

/* How a block's PEs split a [T, *] output: a pr x pc grid (share_of). A
 * block of whole cubes whose grid the cubes' NoCs tile (pr a multiple of
 * the NoC's rows, pc of its columns) places each cube on a rectangle of
 * the grid, its PEs as on its NoC: the PEs of a NoC row then compute the
 * same output rows, those of a NoC column the same columns, and a GEMM
 * whose shares are all alike reads each A tile once per NoC row and each
 * B tile once per NoC column, multicast to the others (docs/adr/0036). */
struct cube_grid {
        int pr, pc;                  /* the grid: rows by columns of PEs */
        bool on;                     /* the cubes tile it (else PE i: row i / pc, column i % pc) */
        bool arow;                   /* one grid row (pr 1) of LLM_ROW_MCAST_ROWS token rows or
                                      * more on whole cubes: a NoC row's PEs share A tiles */
        bool split;                  /* arow in decode: a NoC row's PEs split K instead
                                      * (gemm_split, docs/adr/0050) */
        int row, col;                /* this PE's place in the grid */
        int nrows, ncols;            /* the NoC's rows and columns (on) */
        int lr, lc;                  /* this PE's NoC row and column (on) */
        int rank0;                   /* the global rank of PE 0 of this PE's cube (on) */
};

/* A GEMM's B operand: k rows of w from row r0 by n columns from column
 * c0 (a split GEMM also reads its NoC row's peers' columns). */
struct bsrc {
        tl_tensor *w;                /* the weights */
        int64_t r0, c0;              /* the first row and column */
        int64_t k, n;                /* rows and columns */
};

/* One split GEMM's operands (gemm_split): a [m, K] by nb sub-blocks b,
 * its NoC row's shares sw columns apart. */
struct split_blk {
        tl_tensor *a;                /* A, all of K */
        int nb;                      /* sub-blocks of this PE's share */
        struct bsrc b[2];            /* their B operands */
        int64_t sw;                  /* the shares' width */
};

#define SPLIT_ARES_STEPS 64 /* most K steps of a phase's A held across its split GEMMs */
#define SPLIT_DEPTH 8       /* most K steps of a split GEMM whose B tiles have buffers */
#define SPLIT_NORM_ELEMS 8192 /* elements of A a fused norm's sum of squares takes at once */

/* A PE's split GEMMs one after another (docs/adr/0050's amendment): the
 * next one's first K steps load while the running one's partial sums are
 * exchanged, rather than after. */
struct split_ahead {
        bool set;                    /* next is the split GEMM after the running one */
        struct split_blk next;       /* that GEMM */
        struct split_blk pre;        /* the split GEMM whose first steps are loading */
        int64_t loaded;              /* how many (0: none) */
        bool ares;                   /* the GEMM phase's split GEMMs share one A (all T
                                      * rows, this PE's K range): the first loads it whole
                                      * (xq; one load, whose rows' sums of squares a fused
                                      * norm then takes in a few ops), all read its K
                                      * steps' tiles (atiles) */
        int64_t natiles;             /* K steps in atiles */
        tl_tensor *xq;               /* scratch of the phase [T, K / ncols]: A over the PE's
                                      * K range (atiles are views of it) */
        tl_tensor *atiles[SPLIT_ARES_STEPS]; /* scratch of the phase: those tiles */
        tl_tensor *nw;               /* scratch of the phase [1, K / ncols]: the weights of the
                                      * RMSNorm of A over this PE's K range, when the phase's
                                      * GEMMs apply it (norm_fused), else NULL */
        bool ss_ready;               /* ninv holds the rows' sums of squares (norm_ss) */
        bool inv_ready;              /* ninv holds the rows' 1 / RMS */
};

/* This PE's place, and its persistent TCM. */
struct llm_pe {
        struct coll_group block;     /* the PEs of its tensor-parallel rank */
        struct coll_group ring;      /* PE block.me of every rank: the all-reduce ring */
        int rank;                    /* tensor-parallel rank (block index) */
        tl_tensor *ramp;             /* TCM [LLM_RAMP_ROWS, 1] fp32: 0, 1, 2, .. */
        tl_tensor *freq;             /* TCM [1, D/2] fp32: theta^(-2i/D) */
        struct llm_gemm_plan plan;   /* its GEMM blocking (llm.h) */
        struct cube_grid grid;       /* how its block splits [T, *] outputs */
        tl_tensor *abuf[LLM_BUFS];   /* TCM [llm_a_rows(T), plan.tk] dtype: A tiles (plan.abufs) */
        tl_tensor *bbuf[LLM_BUFS][LLM_NB]; /* TCM [plan.tk, plan.tn] weight dtype: GEMM B tiles */
        tl_tensor *acc[LLM_NB];      /* [LLM_TM * plan.tn] fp32: GEMM output sub-blocks (TCM, or
                                      * scratch of the GEMM phase: plan.acc_scratch) */
        struct share out;            /* its share of [T, H] in phases 5 and 8 */
        tl_tensor *stage;            /* TCM [LLM_STAGE_ROWS * plan.tn] fp32: rows of a scratch
                                      * accumulator all-reduced (tp > 1), or NULL */
        int nslots;                  /* grid.split: B tiles of a K step (sbuf) */
        tl_tensor *sbuf[LLM_BUFS][LLM_SPLIT_SUBS]; /* grid.split: TCM [llm_split_tk, LLM_TN]
                                      * weight dtype: the B tiles of a split GEMM's K steps */
        bool new_keys;               /* decode: attention rotates and writes the new keys
                                      * (new_keys), no phase 3 */
        tl_tensor *spart[LLM_SPLIT_SUBS]; /* grid.split: scratch of the GEMM phase
                                      * [llm_a_rows(T) * LLM_TN] fp32: the partial sums a
                                      * split GEMM sends its peers (nslots - 2) */
        struct split_ahead *ahead;   /* grid.split: the next split GEMM (mutable), or NULL */
        tl_tensor *ninv;             /* grid.split: TCM [llm_a_rows(T), 1] fp32: the rows'
                                      * 1 / RMS of a fused RMSNorm (norm_fused) */
};

static tl_tensor *view2(tl_ctx *tl, tl_tensor *t, int64_t r, int64_t c, int64_t nr, int64_t nc)
{
        return tl_view(tl, t, ((int64_t[]){ r, c }), ((int64_t[]){ nr, nc }));
}

/* The first rows x cols elements of a flat accumulator, as a contiguous
 * [rows, cols] tensor (the all-reduce cuts it into flat pieces). */
static tl_tensor *acc_block(tl_ctx *tl, tl_tensor *acc, int64_t rows, int64_t cols)
{
        tl_tensor *v = tl_view(tl, acc, ((int64_t[]){ 0 }), ((int64_t[]){ rows * cols }));
        tl_tensor *r = tl_reshape(tl, v, 2, ((int64_t[]){ rows, cols }));
        tl_set_pinned(r, true);
        return r;
}

/* Whether the run includes the ops of class part (all of them with
 * part=all; with part=CLASS only those, for the time of one class). */
static bool runs(const struct llm_args *a, enum llm_part part)
{
        return a->part == LLM_PART_ALL || a->part == part;
}

/* Barriers order the phases of a whole layer (they count as "other"). */
static void barrier(tl_ctx *tl, const struct llm_args *a, const struct llm_pe *pe)
{
        if (a->part == LLM_PART_ALL)
                coll_barrier(tl, &pe->block, TAG_BARRIER);
}

/* t[0 .. n) = 0, 1, .., n - 1 in a TCM [n, 1] tensor, by doubling. */
static void fill_ramp(tl_ctx *tl, tl_tensor *t, int64_t n)
{
        tl_scratch_scope_begin(tl);
        tl_copy_to(tl, view2(tl, t, 0, 0, 1, 1), tl_fill(tl, TL_FP32, 2, ((int64_t[]){ 1, 1 }), 0));
        for (int64_t len = 1; len < n; len *= 2) {
                int64_t k = min64(len, n - len);
                tl_copy_to(tl, view2(tl, t, len, 0, k, 1),
                           tl_add_scalar(tl, view2(tl, t, 0, 0, k, 1), (float)len));
        }
        tl_scratch_scope_end(tl);
}

/* The PE's GEMM buffers for Sq query rows and t token rows in all:
 * activations of dtype dt, weights of wdt (two accumulators even for one
 * sub-block: gate and up). */
static void gemm_bufs(tl_ctx *tl, int64_t sq, int64_t t, tl_dtype dt, tl_dtype wdt,
                      struct llm_pe *pe)
{
        struct llm_gemm_plan p = llm_gemm_plan_of(sq, dt, wdt);
        pe->plan = p;
        int64_t rows = llm_a_rows(t);
        for (int i = 0; i < p.bufs || i < 2; i++) {
                for (int j = 0; j < p.nb && i < p.bufs; j++) {
                        if (j == 0 && i < p.abufs)
                                pe->abuf[i] = tl_alloc(tl, TL_TCM, dt, 2,
                                                       ((int64_t[]){ rows, p.tk }));
                        pe->bbuf[i][j] = tl_alloc(tl, TL_TCM, wdt, 2, ((int64_t[]){ p.tk, p.tn }));
                }
                if (i < 2 && !p.acc_scratch)  /* decode: the block's rows, at most t */
                        pe->acc[i] = tl_alloc(tl, TL_TCM, TL_FP32, 1,
                                              ((int64_t[]){ rows * p.tn }));
        }
}

/* A GEMM phase begins: with plan.acc_scratch its accumulators are made in
 * a scratch scope that acc_close ends (persistent TCM then holds the
 * attention state; docs/adr/0042); with grid.split (rows token rows) the
 * partial sums its split GEMMs send, there too: made per GEMM in a scope
 * of its own, the scope's end waited for the next GEMM's first loads
 * (gemm_split). */
static void acc_open(tl_ctx *tl, struct llm_pe *pe, int64_t rows, bool share_a, tl_tensor *nw)
{
        if (!pe->plan.acc_scratch && !pe->ahead)
                return;
        tl_scratch_scope_begin(tl);
        for (int i = 0; pe->plan.acc_scratch && i < 2; i++)
                pe->acc[i] = tl_alloc(tl, TL_SCRATCH, TL_FP32, 1,
                                      ((int64_t[]){ LLM_TM * pe->plan.tn }));
        if (!pe->ahead)
                return;
        for (int j = 0; j < pe->nslots - 2; j++)
                pe->spart[j] = tl_alloc(tl, TL_SCRATCH, TL_FP32, 1,
                                        ((int64_t[]){ llm_a_rows(rows) * LLM_TN }));
        pe->ahead->ares = share_a;
        pe->ahead->natiles = 0;
        if (!nw)
                return;
        int64_t hd = tl_dim(nw, 0), k0, k1;
        gqa_split(hd, pe->grid.ncols, pe->grid.lc, &k0, &k1);
        pe->ahead->nw = tl_load(tl, view2(tl, tl_reshape(tl, nw, 2, ((int64_t[]){ 1, hd })), 0,
                                          k0, 1, k1 - k0));
}

static void acc_close(tl_ctx *tl, struct llm_pe *pe)
{
        if (pe->ahead)
                *pe->ahead = (struct split_ahead){ 0 };
        if (pe->plan.acc_scratch || pe->ahead)
                tl_scratch_scope_end(tl);
}

/* The grid of block g's n members for a [rows, *] output: pr x (n / pr),
 * pr the largest power of two dividing n with pr x LLM_TM <= rows (for a
 * block of whole cubes, halved while that lets the cubes tile the grid).
 * Decode (few rows) splits columns only; prefill also splits rows, so
 * that each operand is read by fewer PEs. Placed on the cubes when they
 * tile it; a single grid row of LLM_ROW_MCAST_ROWS rows or more on whole
 * cubes (decode of a batch, a short prefill) lets each NoC row's PEs,
 * whose columns differ, share their A tiles (arow, docs/adr/0042), or
 * in decode split K (grid.split, docs/adr/0050). */
static struct cube_grid grid_of(tl_ctx *tl, const struct coll_group *g, int64_t rows)
{
        struct cube_grid c = { .pr = 1 };
        while (g->n % (c.pr * 2) == 0 && (int64_t)c.pr * 2 * LLM_TM <= rows)
                c.pr *= 2;
        int ncols = tl_mesh_dim(tl, 0), nrows = tl_mesh_dim(tl, 1), per = ncols * nrows;
        bool cubes = g->first % per == 0 && g->stride == 1 && g->n % per == 0;
        /* Whole cubes: fewer grid rows if that lets the cubes tile it. */
        while (cubes && c.pr % nrows == 0 && g->n / c.pr % ncols != 0 && c.pr / 2 % nrows == 0)
                c.pr /= 2;
        /* Whole cubes whose NoC rows the grid's rows cannot fill: one grid
         * row, whose NoC rows share A tiles (arow), rather than no sharing. */
        if (cubes && c.pr % nrows != 0 && rows >= LLM_ROW_MCAST_ROWS)
                c.pr = 1;
        c.pc = g->n / c.pr;
        c.row = g->me / c.pc;
        c.col = g->me % c.pc;
        int cube = g->me / per, local = g->me % per, cubes_across = c.pc / ncols;
        c.arow = cubes && c.pr == 1 && rows >= LLM_ROW_MCAST_ROWS;
        c.nrows = nrows;
        c.ncols = ncols;
        c.lr = local / ncols;
        c.lc = local % ncols;
        c.rank0 = coll_rank(g, cube * per);
        if (!cubes || c.pr % nrows != 0 || c.pc % ncols != 0)
                return c;
        c.on = true;
        c.row = cube / cubes_across * nrows + c.lr;
        c.col = cube % cubes_across * ncols + c.lc;
        return c;
}

/* This PE's share of a [rows, cols] output, rows the grid's. */
static struct share share_of(const struct cube_grid *c, int64_t rows, int64_t cols)
{
        int64_t lo, hi;
        struct share s;
        gqa_split(rows, c->pr, c->row, &lo, &hi);
        s.r0 = lo;
        s.rows = hi - lo;
        gqa_split(cols, c->pc, c->col, &lo, &hi);
        s.c0 = lo;
        s.cols = hi - lo;
        s.shared = (c->on || c->arow) && rows % c->pr == 0 && cols % c->pc == 0;
        return s;
}

/* Decode: the block's items, (batch, KV head) units each split over
 * *splits PEs by keys; PE me takes items me, me + n, .. below the count
 * returned. */
static int64_t decode_items(const struct llm_args *a, const struct llm_pe *pe, int64_t *splits)
{
        int64_t units = a->batch * (a->hkv / a->tp), keys_n = a->past + 1;
        int64_t tiles = (keys_n + LLM_KV_TILE - 1) / LLM_KV_TILE;
        *splits = max64(1, min64(pe->block.n / units, tiles));
        return units * *splits;
}

/* Whether decode attention takes the new keys (new_keys): when their TCM,
 * [items, D] twice for a PE's most items, fits beside the persistent
 * TCM (the same on every PE). */
static bool new_keys_fit(tl_ctx *tl, const struct llm_args *a, const struct llm_pe *pe)
{
        if (a->sq != 1 || !runs(a, LLM_PART_ATTENTION))
                return false;
        int64_t splits, items = (decode_items(a, pe, &splits) + pe->block.n - 1) / pe->block.n;
        uint64_t need = 2 * tl_dtype_bytes(a->dt, items * a->d, a->d);
        return llm_persistent_bytes(a, pe->grid.split) + need <=
               (uint64_t)tl_machine_info(tl).tcm_alloc_bytes;
}

static void pe_init(tl_ctx *tl, const struct llm_args *a, struct llm_pe *pe)
{
        int n = tl_num_programs(tl, 0) * tl_num_programs(tl, 1) * tl_num_programs(tl, 2);
        /* With fewer PEs than ranks, per is 1 and the ring names ranks the
         * machine lacks: the first send to one is a kernel error. */
        int me = tl_rank(tl, -1, -1, -1), per = n / a->tp > 0 ? n / a->tp : 1;
        pe->rank = me / per;
        pe->block = (struct coll_group){ .first = pe->rank * per, .stride = 1, .n = per,
                                         .me = me % per };
        pe->ring = (struct coll_group){ .first = me % per, .stride = per, .n = a->tp,
                                        .me = pe->rank };
        int64_t half = a->d / 2;
        pe->ramp = tl_alloc(tl, TL_TCM, TL_FP32, 2, ((int64_t[]){ LLM_RAMP_ROWS(a->sq), 1 }));
        pe->freq = tl_alloc(tl, TL_TCM, TL_FP32, 2, ((int64_t[]){ 1, half }));
        fill_ramp(tl, pe->ramp, LLM_RAMP_ROWS(a->sq));
        /* freq_i = e^(-2i/D ln theta): a ramp along the row, then exp. */
        tl_tensor *col = tl_alloc(tl, TL_TCM, TL_FP32, 2, ((int64_t[]){ half, 1 }));
        fill_ramp(tl, col, half);
        tl_scratch_scope_begin(tl);
        tl_tensor *row = tl_reshape(tl, col, 2, ((int64_t[]){ 1, half }));
        tl_copy_to(tl, pe->freq, tl_exp(tl, tl_scale(tl, row, -2.0f * a->log_theta / (float)a->d)));
        tl_scratch_scope_end(tl);
        pe->grid = grid_of(tl, &pe->block, a->batch * a->sq);
        pe->out = share_of(&pe->grid, a->batch * a->sq, a->hidden);
        gemm_bufs(tl, a->sq, a->batch * a->sq, a->dt, a->wdt, pe);
        pe->nslots = llm_split_slots(a->sq, a->batch, pe->grid.ncols, a->dt, a->wdt);
        pe->grid.split = pe->grid.arow && pe->nslots > 0 && llm_split_tk(a->wdt, pe->nslots) > 0 &&
                         llm_split_fits(a, (uint64_t)tl_machine_info(tl).tcm_alloc_bytes);
        for (int i = 0; pe->grid.split && i < pe->plan.bufs; i++)
                for (int j = 0; j < pe->nslots; j++)
                        pe->sbuf[i][j] = tl_alloc(tl, TL_TCM, a->wdt, 2,
                                                  ((int64_t[]){ llm_split_tk(a->wdt, pe->nslots),
                                                                LLM_TN }));
        pe->ahead = NULL;
        pe->ninv = pe->grid.split ? tl_alloc(tl, TL_TCM, TL_FP32, 2,
                                             ((int64_t[]){ llm_a_rows(a->batch), 1 }))
                                  : NULL;
        pe->new_keys = new_keys_fit(tl, a, pe);
        pe->stage = NULL;
        if (pe->plan.acc_scratch && a->tp > 1)
                pe->stage = tl_alloc(tl, TL_TCM, TL_FP32, 1,
                                     ((int64_t[]){ LLM_STAGE_ROWS * pe->plan.tn }));
}

/* ---- norms ---------------------------------------------------------------------- */

/* dst = RMSNorm(src, w) for this PE's share of the rows of [T, H]. The
 * weights load first, once: loaded after a block's rows, their load
 * waited behind the rows' sum of squares (docs/adr/0050). */
static void rmsnorm_rows(tl_ctx *tl, const struct llm_args *a, const struct llm_pe *pe,
                         tl_tensor *src, tl_tensor *w, tl_tensor *dst)
{
        int64_t t = a->batch * a->sq, hd = a->hidden, lo, hi;
        gqa_split(t, pe->block.n, pe->block.me, &lo, &hi);
        if (lo >= hi)
                return;
        int64_t blk = max64(1, LLM_NORM_ELEMS / hd);
        tl_scratch_scope_begin(tl);
        tl_tensor *wl = tl_load(tl, tl_reshape(tl, w, 2, ((int64_t[]){ 1, hd })));
        for (int64_t r0 = lo; r0 < hi; r0 += blk) {
                int64_t n = min64(blk, hi - r0);
                tl_scratch_scope_begin(tl);
                tl_tensor *x = tl_load(tl, view2(tl, src, r0, 0, n, hd));
                tl_tensor *ms = tl_mean(tl, tl_mul(tl, x, x), -1);
                tl_tensor *inv = tl_rsqrt(tl, tl_add_scalar(tl, ms, LLM_EPS));
                tl_store(tl, view2(tl, dst, r0, 0, n, hd), tl_mul(tl, tl_mul(tl, x, inv), wl));
                tl_scratch_scope_end(tl);
        }
        tl_scratch_scope_end(tl);
}

/* ---- GEMMs ------------------------------------------------------------------------ */

/* A ping-pong buffer's [rows, cols] corner, the view made once per shape
 * (a GEMM block's steps reuse it: views live until the kernel ends). TCM
 * views are pinned (ADR 0007). */
struct corner {
        tl_tensor *buf;              /* the buffer */
        tl_tensor *v;                /* its last corner, or NULL */
        int64_t rows, cols;          /* that corner's shape */
};

static tl_tensor *corner(tl_ctx *tl, struct corner *c, int64_t rows, int64_t cols)
{
        if (!c->v || c->rows != rows || c->cols != cols) {
                c->v = view2(tl, c->buf, 0, 0, rows, cols);
                c->rows = rows;
                c->cols = cols;
        }
        return c->v;
}

/* One K step's GEMM composite: acc (+)= ta . tb, adding to acc unless
 * first (in the GEMM when the plan says so, else by an epilogue add). */
static tl_handle gemm_step(tl_ctx *tl, const struct llm_pe *pe, tl_tensor *ta, tl_tensor *tb,
                           tl_tensor *acc, bool add)
{
        bool in_place = pe->plan.acc_in_place;
        return tl_composite(tl, &(tl_composite_desc){
                .op = TL_GEMM, .a = ta, .b = tb, .out = acc, .accumulate = add && in_place,
                .epilogue = (tl_epilogue[]){ { .op = TL_ADD, .tensor = acc } },
                .n_epilogue = add && !in_place, .tile_m = tl_dim(ta, 0), .tile_n = tl_dim(tb, 1),
                .tile_k = tl_dim(ta, 1),
        });
}

/* The corners of the PE's A and B ping-pong buffers (nb B tiles each). */
static void corners_of(const struct llm_pe *pe, int nb, struct corner av[LLM_BUFS],
                       struct corner bv[LLM_BUFS][LLM_NB])
{
        for (int i = 0; i < pe->plan.bufs; i++) {
                av[i] = (struct corner){ .buf = i < pe->plan.abufs ? pe->abuf[i] : NULL };
                for (int j = 0; j < nb; j++)
                        bv[i][j] = (struct corner){ .buf = pe->bbuf[i][j] };
        }
}

static tl_tensor *bsrc_view(tl_ctx *tl, const struct bsrc *b)
{
        return view2(tl, b->w, b->r0, b->c0, b->k, b->n);
}

/* The operand buffers of a streamed GEMM: an A tile and nb B tiles per
 * K step of tk, for bufs steps (loads bufs - 1 steps ahead); or all of A
 * held in TCM across the GEMMs of one A (the LM head). */
struct gbufs {
        int bufs;                    /* steps whose buffers exist */
        int64_t tk;                  /* K step */
        struct corner av[LLM_BUFS];  /* A tiles (unless ares) */
        struct corner bv[SPLIT_DEPTH][LLM_SPLIT_SUBS]; /* B tiles */
        tl_tensor *ares;             /* TCM [m, K]: A held whole, its K steps' tiles views
                                      * of it, or NULL */
        bool ares_loaded;            /* ares holds A (else each step loads its tile there) */
        int64_t loaded;              /* leading K steps whose tiles are loading already */
        struct split_ahead *at;      /* A's tiles in at->atiles (loaded there if fewer than
                                      * the steps), or NULL */
        const struct cube_grid *col; /* the A tiles are the same down the cube's NoC columns
                                      * (a split GEMM's): each loaded by one PE of the
                                      * column (col_sender) and multicast down it, or NULL */
};

/* The NoC column of the PE of this PE's NoC row that loads the A tile of
 * K step s and multicasts it along the row: a diagonal that rotates with
 * s, so that the rows' senders are in different columns. */
static int sender_of(const struct cube_grid *g, int64_t s)
{
        return (int)((g->lr + s) % g->ncols);
}

/* The NoC row of the PE of this PE's NoC column that loads the A tile of
 * K step s of a split GEMM whose A the column shares (gbufs.col) and
 * multicasts it down the column: rotating with s and the column. */
static int col_sender(const struct cube_grid *g, int64_t s)
{
        return (int)((g->lc + s) % g->nrows);
}

/* The K step's GEMM composites on the buffers' corners: acc[j] (+)= ta . tb[j]. */
static void gemm_issue(tl_ctx *tl, const struct llm_pe *pe, tl_tensor *ta, int nb,
                       struct corner *bv, tl_tensor *const *b, tl_tensor *const *acc, bool add,
                       tl_handle *h)
{
        int64_t kn = tl_dim(ta, 1);
        for (int j = 0; j < nb; j++)
                h[j] = gemm_step(tl, pe, ta, corner(tl, &bv[j], kn, tl_dim(b[j], 1)), acc[j], add);
}

/* gemm_multi when every PE of the cube's NoC row has the same a and of
 * its column the same b (share.shared). The A tile of K step s is loaded
 * by its sender (sender_of) plan.bufs - 1 steps ahead, multicast along
 * the row one step ahead and taken by the others, so that the cube reads
 * each A tile once per NoC row; every PE loads its own B tiles, as many
 * steps ahead, from its cube's copy of the weights: multicasting them too
 * (docs/adr/0036) cost the senders' DMA engines a read-out per tile, and
 * the DMA engines, not HBM, bound the GEMMs (docs/adr/0042). */
static void gemm_shared(tl_ctx *tl, const struct llm_pe *pe, tl_tensor *a, int nb,
                        tl_tensor *const *b, tl_tensor *const *acc)
{
        int64_t m = tl_dim(a, 0), k = tl_dim(a, 1), tk = pe->plan.tk;
        int64_t steps = (k + tk - 1) / tk;
        int bufs = pe->plan.bufs, abufs = pe->plan.abufs;
        const struct cube_grid *g = &pe->grid;
        struct corner av[LLM_BUFS], bv[LLM_BUFS][LLM_NB];
        corners_of(pe, nb, av, bv);
        for (int64_t s = 1 - bufs; s < steps; s++) {
                /* The steps whose A and B tiles load now, and whose A multicasts. */
                int64_t la = s + abufs - 1, lb = s + bufs - 1, ms = s + 1;
                if (la >= 0 && la < steps && g->lc == sender_of(g, la)) {
                        int64_t k1 = la * tk, kn1 = min64(tk, k - k1);
                        tl_copy_to(tl, corner(tl, &av[la % abufs], m, kn1),
                                   view2(tl, a, 0, k1, m, kn1));
                }
                for (int j = 0; lb < steps && j < nb; j++) {
                        int64_t k1 = lb * tk, kn1 = min64(tk, k - k1), n = tl_dim(b[j], 1);
                        tl_copy_to(tl, corner(tl, &bv[lb % bufs][j], kn1, n),
                                   view2(tl, b[j], k1, 0, kn1, n));
                }
                tl_handle h[LLM_SPLIT_SUBS];
                if (s >= 0)
                        gemm_issue(tl, pe, corner(tl, &av[s % abufs], m, min64(tk, k - s * tk)),
                                   nb, bv[s % bufs], b, acc, s > 0, h);
                if (ms >= 0 && ms < steps) {
                        tl_tensor *dst = corner(tl, &av[ms % abufs], m, min64(tk, k - ms * tk));
                        int from = sender_of(g, ms);
                        if (g->lc == from)
                                tl_mcast(tl, g->lr, 0, 1, g->ncols, dst, TAG_GEMM);
                        else
                                tl_recv_into(tl, dst, g->rank0 + g->lr * g->ncols + from, TAG_GEMM);
                }
                for (int j = 0; s >= 0 && j < nb; j++)
                        tl_wait(tl, h[j]);
        }
}

/* The loads of K step ls of a [m, K] . b[j] [K, *] (j < nb) into gb's
 * buffers ls % bufs. */
static void stream_load(tl_ctx *tl, struct gbufs *gb, tl_tensor *a, int nb, tl_tensor *const *b,
                        int64_t ls)
{
        int64_t m = tl_dim(a, 0), k = tl_dim(a, 1), k1 = ls * gb->tk, kn1 = min64(gb->tk, k - k1);
        int nxt = (int)(ls % gb->bufs);
        if (gb->at) {                /* held across the phase's split GEMMs: loaded whole */
                struct split_ahead *at = gb->at;
                if (at->natiles == 0)
                        at->xq = tl_load(tl, a);
                for (; at->natiles * gb->tk < k; at->natiles++) {
                        int64_t c = at->natiles * gb->tk;
                        at->atiles[at->natiles] = view2(tl, at->xq, 0, c, m, min64(gb->tk, k - c));
                }
        } else if (gb->col) {        /* its sender loads it, col_share multicasts it */
                if (gb->col->lr == col_sender(gb->col, ls))
                        tl_copy_to(tl, corner(tl, &gb->av[nxt], m, kn1),
                                   view2(tl, a, 0, k1, m, kn1));
        } else if (!gb->ares)
                tl_copy_to(tl, corner(tl, &gb->av[nxt], m, kn1), view2(tl, a, 0, k1, m, kn1));
        else if (!gb->ares_loaded)
                tl_copy_to(tl, view2(tl, gb->ares, 0, k1, m, kn1), view2(tl, a, 0, k1, m, kn1));
        for (int j = 0; j < nb; j++) {
                int64_t n = tl_dim(b[j], 1);
                tl_copy_to(tl, corner(tl, &gb->bv[nxt][j], kn1, n), view2(tl, b[j], k1, 0, kn1, n));
        }
}

/* RMSNorm fused into a decode phase's split GEMMs (norm_fused): the A
 * tile x [T, kn] of the PE's K range from column k1 as the GEMM reads it,
 * x * w in A's dtype; the rows' 1 / RMS scale the outputs (gemm_split). */
static tl_tensor *norm_step(tl_ctx *tl, struct split_ahead *at, tl_tensor *x, int64_t k1)
{
        int64_t kn = tl_dim(x, 1);
        return tl_cast(tl, tl_mul(tl, x, view2(tl, at->nw, 0, k1, 1, kn)), tl_dtype_of(x));
}

/* The rows' sums of squares of the held A (m rows) into ninv, once per
 * phase, at its first GEMM's end and before the next one's loads (the
 * copies into TCM would queue behind them on the DMA engine; summed as
 * each tile's GEMM ran, they did), in blocks of SPLIT_NORM_ELEMS. */
static void norm_ss(tl_ctx *tl, const struct llm_pe *pe, int64_t m)
{
        struct split_ahead *at = pe->ahead;
        if (!at || !at->nw || at->inv_ready || at->ss_ready)
                return;
        tl_tensor *ss = view2(tl, pe->ninv, 0, 0, m, 1);
        int64_t kq = tl_dim(at->xq, 1), blk = max64(1, SPLIT_NORM_ELEMS / m);
        for (int64_t c = 0; c < kq; c += blk) {
                tl_scratch_scope_begin(tl);
                tl_tensor *x = view2(tl, at->xq, 0, c, m, min64(blk, kq - c));
                tl_tensor *sq = tl_rowsum(tl, tl_mul(tl, x, x));
                tl_copy_to(tl, ss, c == 0 ? sq : tl_add(tl, ss, sq));
                tl_scratch_scope_end(tl);
        }
        at->ss_ready = true;
}

/* The rows' 1 / RMS (of hd columns) in ninv, once per phase: the sums of
 * squares of the NoC row's PEs' K ranges (norm_ss) added up. */
static tl_tensor *norm_inv(tl_ctx *tl, const struct llm_pe *pe, int64_t m, int64_t hd)
{
        struct split_ahead *at = pe->ahead;
        tl_tensor *inv = view2(tl, pe->ninv, 0, 0, m, 1);
        if (at->inv_ready)
                return inv;
        const struct cube_grid *g = &pe->grid;
        int p = g->ncols, row0 = g->rank0 + g->lr * g->ncols;
        tl_tensor *ss = inv, *sum = ss;
        for (int d = 1; d < p; d++)
                tl_send(tl, row0 + (g->lc + d) % p, ss, TAG_NORM);
        for (int d = 1; d < p; d++)
                sum = tl_add(tl, sum, tl_recv(tl, row0 + (g->lc + p - d) % p, TAG_NORM));
        tl_copy_to(tl, inv, tl_rsqrt(tl, tl_add_scalar(tl, tl_scale(tl, sum, 1.0f / (float)hd),
                                                      LLM_EPS)));
        at->inv_ready = true;
        return inv;
}

/* A shared down the NoC column (gb->col): the A tile [m, *] of K step ms
 * (of an A of k columns), one step ahead of its GEMM, multicast by its
 * sender, taken by the column's other PEs. */
static void col_share(tl_ctx *tl, struct gbufs *gb, int64_t m, int64_t k, int64_t ms)
{
        const struct cube_grid *g = gb->col;
        int64_t steps = (k + gb->tk - 1) / gb->tk;
        if (!g || ms < 0 || ms >= steps)
                return;
        tl_tensor *dst = corner(tl, &gb->av[ms % gb->bufs], m, min64(gb->tk, k - ms * gb->tk));
        int from = col_sender(g, ms);
        if (g->lr == from)
                tl_mcast(tl, 0, g->lc, g->nrows, 1, dst, TAG_COLA);
        else
                tl_recv_into(tl, dst, g->rank0 + from * g->ncols + g->lc, TAG_COLA);
}

/* acc[i] [m, n_i] (fp32, pinned) = a [m, K] . b[i] [K, n_i] for the nb
 * sub-blocks i through the buffers of gb: K in gb->tk steps, the loads of
 * step s + bufs - 1 issued before the GEMMs of step s (DMA and GEMM
 * overlap; the first gb->loaded steps' were issued before the call; with
 * gb->col, A tiles shared down the NoC column: col_share). The
 * sub-blocks share each A tile. A GEMM is one composite on TCM or scratch
 * operands that adds its product to acc[i] (no DMA). */
static void gemm_stream(tl_ctx *tl, const struct llm_pe *pe, struct gbufs *gb, tl_tensor *a,
                        int nb, tl_tensor *const *b, tl_tensor *const *acc)
{
        int64_t m = tl_dim(a, 0), k = tl_dim(a, 1), tk = gb->tk;
        int64_t steps = (k + tk - 1) / tk;
        int bufs = gb->bufs;
        for (int64_t s = 1 - bufs; s < steps; s++) {
                int64_t ls = s + bufs - 1;   /* the step whose tiles load now */
                int cur = (int)((s + bufs) % bufs);
                /* the loads of step s + bufs - 1 (the first: before any GEMM) */
                if (ls < steps && ls >= gb->loaded)
                        stream_load(tl, gb, a, nb, b, ls);
                if (s < 0) {
                        col_share(tl, gb, m, k, s + 1);
                        continue;
                }
                tl_handle h[LLM_SPLIT_SUBS];
                int64_t kn = min64(tk, k - s * tk);
                tl_tensor *ta = gb->at     ? gb->at->atiles[s]
                                : gb->ares ? view2(tl, gb->ares, 0, s * tk, m, kn)
                                           : corner(tl, &gb->av[cur], m, kn);
                bool norm = gb->at && gb->at->nw;
                if (norm) {          /* the corners' views outlive the step's scope */
                        for (int j = 0; j < nb; j++)
                                corner(tl, &gb->bv[cur][j], kn, tl_dim(b[j], 1));
                        tl_scratch_scope_begin(tl);
                        ta = norm_step(tl, gb->at, ta, s * tk);
                }
                gemm_issue(tl, pe, ta, nb, gb->bv[cur], b, acc, s > 0, h);
                col_share(tl, gb, m, k, s + 1);
                for (int j = 0; j < nb; j++)
                        tl_wait(tl, h[j]);
                if (norm)
                        tl_scratch_scope_end(tl);
        }
}

/* Whether split GEMM sb may run: its NoC row's sub-blocks have B buffers
 * (nslots) and its scratch fits the ceiling: the phase's partial sums for
 * the peers (spart) and, held (the phase's A held: its split_ahead's
 * ares), A over the PE's K range and the norm's weights; per GEMM the
 * partial sums received and their sums (2 ncols - 1 a sub-block), a K
 * step's normed A tile, the norm's temporaries. */
static bool split_fits(tl_ctx *tl, const struct llm_pe *pe, const struct split_blk *sb,
                       bool held)
{
        int p = pe->grid.ncols, nsub = p * sb->nb;
        if (nsub > pe->nslots)
                return false;
        uint64_t m = (uint64_t)tl_dim(sb->a, 0), tk = (uint64_t)tl_dim(pe->sbuf[0][0], 0);
        uint64_t kq = (uint64_t)((tl_dim(sb->a, 1) + p - 1) / p), n = 0;
        for (int j = 0; j < sb->nb; j++)
                n = n > (uint64_t)sb->b[j].n ? n : (uint64_t)sb->b[j].n;
        uint64_t need = (uint64_t)(pe->nslots - 2) * m * LLM_TN * 4 +
                        (uint64_t)sb->nb * (2 * (uint64_t)p - 1) * m * n * 4 +
                        m * tk * 6 + 16 * m * 4;
        if (held)
                need += m * kq * tl_dtype_size(tl_dtype_of(sb->a)) + kq * 4 +
                        4 * (uint64_t)SPLIT_NORM_ELEMS;
        return need <= (uint64_t)tl_machine_info(tl).scratch_bytes;
}

/* Whether x and y are the same split GEMM (the same A rows of a phase). */
static bool split_same(const struct split_blk *x, const struct split_blk *y)
{
        if (x->nb != y->nb || x->sw != y->sw || tl_dim(x->a, 0) != tl_dim(y->a, 0))
                return false;
        for (int j = 0; j < x->nb; j++) {
                const struct bsrc *p = &x->b[j], *q = &y->b[j];
                if (p->w != q->w || p->r0 != q->r0 || p->c0 != q->c0 || p->k != q->k ||
                    p->n != q->n)
                        return false;
        }
        return true;
}

/* How many of split GEMM sb's NoC row shares one B tile covers: when
 * each share is one sub-block (sw columns, so that the row's shares are
 * consecutive), as many as fit LLM_TN columns (a divisor of the row's
 * PEs, their tiles' partial sums then in spart), else 1. Narrow shares
 * (k and v: 16 columns at llama3-8b's batch of 32) then load and multiply
 * a few wide tiles, not many narrow ones. */
static int split_group(const struct llm_pe *pe, const struct split_blk *sb)
{
        int p = pe->grid.ncols, g = p;
        for (int j = 0; j < sb->nb; j++)
                if (sb->b[j].n != sb->sw)
                        return 1;
        while (g > 1 && (p % g != 0 || g * sb->sw > LLM_TN || p / g * sb->nb > pe->nslots - 2))
                g--;
        return g;
}

/* The operands of split GEMM sb on this PE: its K range's A as *aq, the
 * B tiles of its NoC row's shares (share i's sub-block j as bv[i nb + j])
 * over that range, and gb its buffers (the split's B tiles).
 * Returns how many B tiles a step: bv's count. */
static int split_operands(tl_ctx *tl, const struct llm_pe *pe, const struct split_blk *sb,
                           tl_tensor **aq, tl_tensor **bv, struct gbufs *gb)
{
        const struct cube_grid *g = &pe->grid;
        int p = g->ncols, grp = split_group(pe, sb), nsub = p / grp * sb->nb;
        int64_t m = tl_dim(sb->a, 0), k0, k1;
        gqa_split(tl_dim(sb->a, 1), p, g->lc, &k0, &k1);
        *aq = view2(tl, sb->a, 0, k0, m, k1 - k0);
        for (int s = 0; s < nsub; s++) {
                struct bsrc bs = sb->b[s % sb->nb];
                bs.r0 += k0;
                bs.k = k1 - k0;
                bs.c0 += (int64_t)(s / sb->nb * grp - g->lc) * sb->sw;
                bs.n *= grp;
                bv[s] = bsrc_view(tl, &bs);
        }
        *gb = (struct gbufs){ .bufs = pe->plan.bufs, .tk = tl_dim(pe->sbuf[0][0], 0) };
        struct split_ahead *ah = pe->ahead;
        if (ah && ah->ares && (k1 - k0 + gb->tk - 1) / gb->tk <= SPLIT_ARES_STEPS)
                gb->at = ah;
        /* A GEMM of fewer sub-blocks than B buffers a step (nslots)
         * loads as many more steps ahead, when its A tiles are held. */
        int per = pe->nslots / nsub;
        if (gb->at)
                while (gb->bufs * 2 <= SPLIT_DEPTH && per % 2 == 0) {
                        gb->bufs *= 2;
                        per /= 2;
                }
        for (int i = 0; i < gb->bufs; i++) {
                if (i < pe->plan.bufs)
                        gb->av[i] = (struct corner){ .buf = pe->abuf[i] };
                for (int s = 0; s < nsub; s++)
                        gb->bv[i][s] = (struct corner){
                                .buf = pe->sbuf[i % pe->plan.bufs][i / pe->plan.bufs * nsub + s]
                        };
        }
        return nsub;
}

/* The loads of the first K steps (as many as gemm_stream runs ahead) of
 * the split GEMM after the running one, when set: its buffers are free
 * once the running one's last GEMM is done. */
static void split_load_ahead(tl_ctx *tl, const struct llm_pe *pe)
{
        struct split_ahead *ah = pe->ahead;
        if (!ah || !ah->set)
                return;
        ah->set = false;
        ah->loaded = 0;
        if (!split_fits(tl, pe, &ah->next, ah->ares))
                return;
        ah->pre = ah->next;
        tl_tensor *aq, *bv[LLM_SPLIT_SUBS];
        struct gbufs gb;
        int nsub = split_operands(tl, pe, &ah->next, &aq, bv, &gb);
        int64_t steps = (tl_dim(aq, 1) + gb.tk - 1) / gb.tk;
        for (ah->loaded = 0; ah->loaded < gb.bufs - 1 && ah->loaded < steps; ah->loaded++)
                stream_load(tl, &gb, aq, nsub, bv, ah->loaded);
}

/* Share i's sub-block j [m, n] of a split GEMM's outputs part (grp
 * shares a tile). */
static tl_tensor *split_part(tl_ctx *tl, tl_tensor *const *part, int nb, int grp, int i, int j,
                             int64_t m, int64_t n)
{
        tl_tensor *t = part[i / grp * nb + j];
        return grp == 1 ? t : view2(tl, t, 0, i % grp * n, m, n);
}

/* Decode of a batch on one grid row (grid.split): the ncols PEs of a NoC
 * row, whose shares are consecutive and alike (sw columns apart), compute
 * the sub-blocks of all their shares together, each over its ncols-th of
 * K from A and B tiles it loads itself; then each sends its peers the
 * partial sums of their sub-blocks and adds theirs into its own (acc).
 * A PE's DMA moves, per block, m x K / ncols of A and 2 (ncols - 1) x nb
 * partial sub-blocks, where sharing the A tiles by multicast had it drain
 * all m x K of them (and a sender load and read out a quarter): the
 * DMA engines, not HBM, bound decode of a batch (docs/adr/0050). The
 * partial sums for the peers live in TCM (spart), so that the next split
 * GEMM's first loads (pe->ahead) go out before this one's exchange, in no
 * scratch scope that the exchange's end would wait for. False (nothing
 * done) when the received sums would not fit the scratch ceiling. */
static bool gemm_split(tl_ctx *tl, const struct llm_pe *pe, tl_tensor *a, int nb,
                       const struct bsrc *b, tl_tensor *const *acc, int64_t sw)
{
        const struct cube_grid *g = &pe->grid;
        struct split_blk sb = { .a = a, .nb = nb, .sw = sw };
        for (int j = 0; j < nb; j++)
                sb.b[j] = b[j];
        if (!split_fits(tl, pe, &sb, pe->ahead && pe->ahead->ares))
                return false;
        int p = g->ncols, grp = split_group(pe, &sb), np = 0;
        tl_tensor *aq, *bv[LLM_SPLIT_SUBS], *part[LLM_SPLIT_SUBS];
        struct gbufs gb;
        int nsub = split_operands(tl, pe, &sb, &aq, bv, &gb);
        int64_t m = tl_dim(a, 0);
        for (int s = 0; s < nsub; s++)
                part[s] = grp == 1 && s / nb == g->lc
                                  ? acc[s % nb]
                                  : acc_block(tl, pe->spart[np++], m, grp * b[s % nb].n);
        if (pe->ahead && pe->ahead->loaded > 0 && split_same(&pe->ahead->pre, &sb))
                gb.loaded = pe->ahead->loaded;
        if (pe->ahead)
                pe->ahead->loaded = 0;
        /* A neither held nor loading yet (wo, w_down): the same down the
         * cube's NoC columns, every NoC row running this GEMM over the same
         * K ranges; loaded once a column (docs/adr/0050's third amendment). */
        if (!gb.at && gb.loaded == 0)
                gb.col = g;
        gemm_stream(tl, pe, &gb, aq, nsub, bv, part);
        if (gb.at)
                norm_ss(tl, pe, m);
        int row0 = g->rank0 + g->lr * g->ncols;
        for (int d = 1; d < p; d++) {  /* to the next peers first: spread the senders */
                int i = (g->lc + d) % p;
                for (int j = 0; j < nb; j++)
                        tl_send(tl, row0 + i, split_part(tl, part, nb, grp, i, j, m, b[j].n),
                                TAG_SPLIT + j);
        }
        split_load_ahead(tl, pe);
        tl_scratch_scope_begin(tl);
        tl_tensor *inv = gb.at && gb.at->nw ? norm_inv(tl, pe, m, tl_dim(a, 1)) : NULL;
        for (int j = 0; j < nb; j++) {
                tl_tensor *sum = NULL;
                for (int d = 1; d < p; d++) {
                        int i = (g->lc + p - d) % p;
                        tl_tensor *r = tl_recv(tl, row0 + i, TAG_SPLIT + j);
                        sum = sum ? tl_add(tl, sum, r) : r;
                }
                tl_tensor *y = tl_add(tl, split_part(tl, part, nb, grp, g->lc, j, m, b[j].n), sum);
                tl_copy_to(tl, acc[j], inv ? tl_mul(tl, y, inv) : y);
        }
        tl_scratch_scope_end(tl);
        return true;
}

/* acc[i] [m, n_i] (TCM, fp32, pinned) = a [m, K] . b[i] [K, n_i] for the
 * nb sub-blocks i, m <= LLM_TM, n_i <= plan.tn, through the PE's buffers
 * (gemm_stream). sh: the share the block is of, or NULL; shared
 * (sh->shared), its NoC row splits K (grid.split: gemm_split) or shares A
 * tiles (gemm_shared). */
static void gemm_multi(tl_ctx *tl, const struct llm_pe *pe, const struct share *sh, tl_tensor *a,
                       int nb, const struct bsrc *b, tl_tensor *const *acc)
{
        bool shared = sh && sh->shared;
        if (shared && pe->grid.split && gemm_split(tl, pe, a, nb, b, acc, sh->cols))
                return;
        if (nb > pe->plan.nb) {      /* a pair for a split that did not fit: one at a time */
                for (int j = 0; j < nb; j++)
                        gemm_multi(tl, pe, sh, a, 1, &b[j], &acc[j]);
                return;
        }
        tl_tensor *bv[LLM_NB];
        for (int j = 0; j < nb; j++)
                bv[j] = bsrc_view(tl, &b[j]);
        if (shared) {
                gemm_shared(tl, pe, a, nb, bv, acc);
                return;
        }
        struct gbufs gb = { .bufs = pe->plan.abufs, .tk = pe->plan.tk };
        for (int i = 0; i < gb.bufs; i++) {
                gb.av[i] = (struct corner){ .buf = pe->abuf[i] };
                for (int j = 0; j < nb; j++)
                        gb.bv[i][j] = (struct corner){ .buf = pe->bbuf[i][j] };
        }
        gemm_stream(tl, pe, &gb, a, nb, bv, acc);
}

/* The blocks of a [rows, cols] output: LLM_TM rows by w columns. */
#define FOR_BLOCKS(rows, cols, w, r0, nr, c0, nc)                                          \
        for (int64_t r0 = 0, nr; r0 < (rows) && (nr = min64(LLM_TM, (rows) - r0)) > 0;      \
             r0 += LLM_TM)                                                                  \
                for (int64_t c0 = 0, nc; c0 < (cols) && (nc = min64((w), (cols) - c0)) > 0; \
                     c0 += (w))

/* The columns of one output block: plan.nb sub-blocks of plan.tn. */
static int64_t block_cols(const struct llm_pe *pe)
{
        return pe->plan.nb * pe->plan.tn;
}

/* The output block a [m, K] . b [K, n], n <= block_cols(pe): its plan.tn
 * wide sub-blocks as acc[0 ..) (the PE's accumulators), computed when run
 * (a block of share sh: as gemm_multi says). Returns how many sub-blocks. */
static int gemm_cols(tl_ctx *tl, const struct llm_pe *pe, tl_tensor *a, const struct bsrc *b,
                     bool run, const struct share *sh, tl_tensor **acc)
{
        int64_t m = tl_dim(a, 0), tn = pe->plan.tn;
        struct bsrc bs[LLM_NB];
        int nb = 0;
        for (int64_t c = 0; c < b->n; c += tn, nb++) {
                bs[nb] = *b;
                bs[nb].c0 += c;
                bs[nb].n = min64(tn, b->n - c);
                acc[nb] = acc_block(tl, pe->acc[nb], m, bs[nb].n);
        }
        if (run)
                gemm_multi(tl, pe, sh, a, nb, bs, acc);
        return nb;
}

/* The output blocks of src [rows, K] . w [K, *] for share sh of the
 * columns of w from column w0 (and of dst from d0): each stored. */
static void gemm_store(tl_ctx *tl, const struct llm_pe *pe, const struct share *sh, tl_tensor *src,
                       int64_t c0, int64_t c1, tl_tensor *w, int64_t w0, tl_tensor *dst)
{
        int64_t k = tl_dim(src, 1), tn = pe->plan.tn;
        FOR_BLOCKS(sh->rows, c1 - c0, block_cols(pe), i0, nr, j0, nc) {
                int64_t r = sh->r0 + i0;
                tl_tensor *acc[LLM_NB];
                struct bsrc b = { w, 0, w0 + c0 + j0, k, nc };
                int nb = gemm_cols(tl, pe, view2(tl, src, r, 0, nr, k), &b, true, sh, acc);
                for (int j = 0; j < nb; j++)
                        tl_store(tl, view2(tl, dst, r, w0 + c0 + j0 + j * tn, nr,
                                           tl_dim(acc[j], 1)), acc[j]);
        }
}

/* The output blocks of src [rows, K] . w[i] [K, *] for share sh of the
 * columns of both w[i] from column w0, in pairs of sub-blocks (one of
 * each) that share each A tile, plan.tn columns each: acc[0] and acc[1]
 * as [nr, nc] tensors, the block's rows from row r0, its columns from
 * sh->c0 + c of each (computed when run). The next block's: ok false. */
struct pair_iter {
        int64_t i0, j0;              /* the next block: its rows and columns in the share */
        int64_t r0, c, nr, nc;       /* the block: rows r0 .. + nr, columns c .. + nc */
        tl_tensor *acc[2];           /* its two accumulators */
};

/* Advance it to its next block (rows, columns); false if none. */
static bool pair_step(const struct llm_pe *pe, const struct share *sh, int64_t w0,
                      struct pair_iter *it)
{
        int64_t tn = pe->plan.tn;
        if (it->j0 >= sh->cols) {
                it->j0 = 0;
                it->i0 += LLM_TM;
        }
        if (it->i0 >= sh->rows || sh->cols <= 0)
                return false;
        it->nr = min64(LLM_TM, sh->rows - it->i0);
        it->nc = min64(tn, sh->cols - it->j0);
        it->r0 = sh->r0 + it->i0;
        it->c = w0 + sh->c0 + it->j0;
        it->j0 += tn;
        return true;
}

/* Whether the blocks of share sh run as split GEMMs, nb sub-blocks each. */
static bool runs_split(const struct llm_pe *pe, const struct share *sh, int nb)
{
        return pe->ahead && sh->shared && pe->grid.split && pe->grid.ncols * nb <= pe->nslots;
}

/* The split GEMM that follows the running one: the pair block after it
 * (gemm_pair's), whose first loads then go out before the running one's
 * exchange (split_load_ahead). */
static void pair_ahead(tl_ctx *tl, const struct llm_pe *pe, const struct share *sh,
                       tl_tensor *src, tl_tensor *const *w, int64_t w0, struct pair_iter it)
{
        int64_t k = tl_dim(src, 1);
        if (pe->ahead)
                pe->ahead->set = false;
        if (!runs_split(pe, sh, 2) || !pair_step(pe, sh, w0, &it))
                return;
        struct split_blk *n = &pe->ahead->next;
        *n = (struct split_blk){ .a = view2(tl, src, it.r0, 0, it.nr, k), .nb = 2,
                                 .sw = sh->cols };
        for (int i = 0; i < 2; i++)
                n->b[i] = (struct bsrc){ w[i], 0, it.c, k, it.nc };
        pe->ahead->set = true;
}

static bool gemm_pair(tl_ctx *tl, const struct llm_pe *pe, const struct share *sh, tl_tensor *src,
                      tl_tensor *const *w, int64_t w0, bool run, struct pair_iter *it)
{
        int64_t k = tl_dim(src, 1);
        if (!pair_step(pe, sh, w0, it))
                return false;
        struct bsrc b[2];
        for (int i = 0; i < 2; i++) {
                it->acc[i] = acc_block(tl, pe->acc[i], it->nr, it->nc);
                b[i] = (struct bsrc){ w[i], 0, it->c, k, it->nc };
        }
        tl_tensor *as = view2(tl, src, it->r0, 0, it->nr, k);
        if (run)
                pair_ahead(tl, pe, sh, src, w, w0, *it);
        if (run && (pe->plan.nb >= 2 || (sh->shared && pe->grid.split))) {
                gemm_multi(tl, pe, sh, as, 2, b, it->acc);
        } else if (run) {
                gemm_multi(tl, pe, sh, as, 1, &b[0], &it->acc[0]);
                gemm_multi(tl, pe, sh, as, 1, &b[1], &it->acc[1]);
        }
        return true;
}

/* Whether the GEMMs of a decode phase apply the RMSNorm of their A (of
 * the layer's T rows, hidden columns) themselves, so that the norm's phase
 * and its barrier go (docs/adr/0050's second amendment): in a whole layer,
 * when each of its n GEMMs, of share widths width[i] in nb[i] sub-blocks
 * a block, splits K, and the PE's K range is at most SPLIT_ARES_STEPS
 * steps. The same on every PE. */
static bool norm_fused(tl_ctx *tl, const struct llm_args *a, const struct llm_pe *pe,
                       const int64_t *width, const int *nb, int n)
{
        if (a->part != LLM_PART_ALL || !pe->ahead)
                return false;
        int64_t t = a->batch * a->sq, p = pe->grid.ncols, tk = tl_dim(pe->sbuf[0][0], 0);
        if (((a->hidden + p - 1) / p + tk - 1) / tk > SPLIT_ARES_STEPS)
                return false;
        for (int i = 0; i < n; i++) {
                struct share sh = share_of(&pe->grid, t, width[i]);
                struct split_blk sb = { .a = view2(tl, a->n1, 0, 0, t, a->hidden), .nb = nb[i] };
                for (int j = 0; j < nb[i]; j++)
                        sb.b[j].n = min64(pe->plan.tn, sh.cols);
                if (!runs_split(pe, &sh, nb[i]) || !split_fits(tl, pe, &sb, true))
                        return false;
        }
        return true;
}

static bool qkv_fused(tl_ctx *tl, const struct llm_args *a, const struct llm_pe *pe)
{
        int64_t wq = a->hq / a->tp * a->d, wk = a->hkv / a->tp * a->d;
        return (pe->grid.on || pe->grid.arow) &&
               norm_fused(tl, a, pe, (int64_t[]){ wq, wk }, (int[]){ 1, 2 }, 2);
}

static bool gate_up_fused(tl_ctx *tl, const struct llm_args *a, const struct llm_pe *pe)
{
        return norm_fused(tl, a, pe, (int64_t[]){ a->ffn / a->tp }, (int[]){ 2 }, 1);
}

/* Phase 2: this PE's share of the block's q | k | v columns (on a cube
 * grid, its share of each of q, k and v, so that the shares are alike,
 * k and v in pairs of sub-blocks sharing each A tile: gemm_pair). */
static void qkv(tl_ctx *tl, const struct llm_args *a, struct llm_pe *pe)
{
        if (!runs(a, LLM_PART_GEMM))
                return;
        int64_t t = a->batch * a->sq;
        bool fused = qkv_fused(tl, a, pe);
        tl_tensor *src = fused ? tl_reshape(tl, a->x, 2, ((int64_t[]){ t, a->hidden })) : a->n1;
        acc_open(tl, pe, t, true, fused ? a->attn_norm : NULL);
        int64_t wq = a->hq / a->tp * a->d, wk = a->hkv / a->tp * a->d;
        struct { tl_tensor *w, *dst; int64_t width; } m[3] = {
                { a->wq, a->q, wq }, { a->wk, a->kt, wk }, { a->wv, a->vt, wk },
        };
        struct share sh = share_of(&pe->grid, t, wq + 2 * wk);
        int64_t lo = sh.c0, hi = sh.c0 + sh.cols, base = 0;
        for (int i = 0; i < 3; i++) {
                int64_t c0 = max64(lo, base) - base, c1 = min64(hi, base + m[i].width) - base;
                base += m[i].width;
                if ((pe->grid.on || pe->grid.arow) && i == 1) {
                        sh = share_of(&pe->grid, t, wk);
                        tl_tensor *w[2] = { a->wk, a->wv };
                        struct pair_iter it = { 0 };
                        while (gemm_pair(tl, pe, &sh, src, w, pe->rank * wk, true, &it))
                                for (int j = 0; j < 2; j++)
                                        tl_store(tl, view2(tl, m[1 + j].dst, it.r0, it.c, it.nr,
                                                           it.nc), it.acc[j]);
                        break;
                }
                if (pe->grid.on || pe->grid.arow) {
                        sh = share_of(&pe->grid, t, m[i].width);
                        c0 = sh.c0;
                        c1 = sh.c0 + sh.cols;
                }
                /* q in one split GEMM: k and v's first loads go out before its exchange. */
                if (i == 0 && (pe->grid.on || pe->grid.arow) && sh.rows <= LLM_TM &&
                    sh.cols <= pe->plan.tn) {
                        struct share skv = share_of(&pe->grid, t, wk);
                        tl_tensor *w[2] = { a->wk, a->wv };
                        pair_ahead(tl, pe, &skv, src, w, pe->rank * wk,
                                   (struct pair_iter){ 0 });
                }
                gemm_store(tl, pe, &sh, src, c0, c1, m[i].w, pe->rank * m[i].width, m[i].dst);
        }
        acc_close(tl, pe);
}

/* Phases 5 and 8: dst = res + sum over ranks of src . w (w's rows of this
 * rank), for this PE's share of [T, H]; src [T, K] holds this rank's K columns from
 * column k0. Every PE of the ring has the same blocks. */
static void row_parallel(tl_ctx *tl, const struct llm_args *a, struct llm_pe *pe,
                         tl_tensor *src, int64_t k0, int64_t k, tl_tensor *w, tl_tensor *res,
                         tl_tensor *dst)
{
        acc_open(tl, pe, a->batch * a->sq, false, NULL);
        FOR_BLOCKS(pe->out.rows, pe->out.cols, block_cols(pe), i0, nr, j0, nc) {
                int64_t r0 = pe->out.r0 + i0;
                tl_tensor *acc[LLM_NB];
                struct bsrc b = { w, k0, pe->out.c0 + j0, k, nc };
                int nb = gemm_cols(tl, pe, view2(tl, src, r0, k0, nr, k), &b,
                                   runs(a, LLM_PART_GEMM), &pe->out, acc);
                for (int j = 0; j < nb; j++) {
                        int64_t c = pe->out.c0 + j0 + j * pe->plan.tn, ncj = tl_dim(acc[j], 1);
                        /* The all-reduce stores into TCM: a scratch accumulator
                         * goes through the stage, LLM_STAGE_ROWS rows at a time. */
                        int64_t step = pe->stage ? LLM_STAGE_ROWS : nr;
                        for (int64_t i = 0; i < nr; i += step) {
                                int64_t rn = min64(step, nr - i);
                                tl_tensor *x = pe->stage ? view2(tl, acc[j], i, 0, rn, ncj) : acc[j];
                                if (runs(a, LLM_PART_ALLREDUCE) && pe->stage) {
                                        tl_tensor *st = acc_block(tl, pe->stage, rn, ncj);
                                        tl_copy_to(tl, st, x);
                                        x = st;
                                }
                                if (runs(a, LLM_PART_ALLREDUCE))
                                        coll_allreduce(tl, &pe->ring, x, a->dt, TAG_ALLREDUCE);
                                if (!runs(a, LLM_PART_OTHER))
                                        continue;
                                tl_scratch_scope_begin(tl);
                                tl_tensor *r = tl_load(tl, view2(tl, res, r0 + i, c, rn, ncj));
                                tl_store(tl, view2(tl, dst, r0 + i, c, rn, ncj), tl_add(tl, x, r));
                                tl_scratch_scope_end(tl);
                        }
                }
        }
        acc_close(tl, pe);
}

/* Phase 7: act = silu(n2 . w_gate) * (n2 . w_up) for this PE's FFN columns. */
static void gate_up(tl_ctx *tl, const struct llm_args *a, struct llm_pe *pe)
{
        int64_t t = a->batch * a->sq, fl = a->ffn / a->tp;
        struct share sh = share_of(&pe->grid, t, fl);
        tl_tensor *w[2] = { a->wg, a->wu };
        struct pair_iter it = { 0 };
        bool fused = gate_up_fused(tl, a, pe);
        acc_open(tl, pe, t, true, fused ? a->mlp_norm : NULL);
        while (gemm_pair(tl, pe, &sh, fused ? a->h : a->n2, w, pe->rank * fl,
                         runs(a, LLM_PART_GEMM), &it)) {
                if (!runs(a, LLM_PART_OTHER))
                        continue;
                tl_scratch_scope_begin(tl);
                tl_store(tl, view2(tl, a->act, it.r0, it.c, it.nr, it.nc),
                         tl_mul(tl, tl_silu(tl, it.acc[0]), it.acc[1]));
                tl_scratch_scope_end(tl);
        }
        acc_close(tl, pe);
}

/* ---- RoPE ----------------------------------------------------------------------- */

/* The rotated halves of u [r, D] at positions pos0 + i for row i (or all
 * at pos0 when one_pos). */
static void rope(tl_ctx *tl, const struct llm_args *a, const struct llm_pe *pe, tl_tensor *u,
                 int64_t pos0, bool one_pos, tl_tensor **h1, tl_tensor **h2)
{
        int64_t r = tl_dim(u, 0), half = a->d / 2;
        tl_tensor *pos = tl_add_scalar(tl, view2(tl, pe->ramp, 0, 0, one_pos ? 1 : r, 1),
                                       (float)pos0);
        tl_tensor *ang = tl_mul(tl, pos, pe->freq);
        tl_tensor *c = tl_cos(tl, ang), *s = tl_sin(tl, ang);
        tl_tensor *u1 = view2(tl, u, 0, 0, r, half), *u2 = view2(tl, u, 0, half, r, half);
        *h1 = tl_sub(tl, tl_mul(tl, u1, c), tl_mul(tl, u2, s));
        *h2 = tl_add(tl, tl_mul(tl, u2, c), tl_mul(tl, u1, s));
}

/* Phase 3: k_new = RoPE(k), v_new = v for the block's KV heads. */
static void new_kv(tl_ctx *tl, const struct llm_args *a, const struct llm_pe *pe)
{
        int64_t hl = a->hkv / a->tp, chunks = (a->sq + LLM_Q_ROWS - 1) / LLM_Q_ROWS;
        int64_t half = a->d / 2;
        for (int64_t w = pe->block.me; w < a->batch * hl * chunks; w += pe->block.n) {
                int64_t b = w / (hl * chunks), h = pe->rank * hl + w / chunks % hl;
                int64_t i0 = w % chunks * LLM_Q_ROWS, n = min64(LLM_Q_ROWS, a->sq - i0);
                int64_t row = b * a->sq + i0;
                tl_scratch_scope_begin(tl);
                tl_tensor *k = tl_load(tl, view2(tl, a->kt, row, h * a->d, n, a->d));
                tl_tensor *h1, *h2, *dst = gqa_head_rows(tl, a->k_new, b, h, i0, n);
                rope(tl, a, pe, k, a->past + i0, false, &h1, &h2);
                tl_store(tl, view2(tl, dst, 0, 0, n, half), h1);
                tl_store(tl, view2(tl, dst, 0, half, n, half), h2);
                tl_store(tl, gqa_head_rows(tl, a->v_new, b, h, i0, n),
                         tl_load(tl, view2(tl, a->vt, row, h * a->d, n, a->d)));
                tl_scratch_scope_end(tl);
        }
}

/* ---- attention -------------------------------------------------------------------- */

/* A PE's attention buffers in TCM (rows: llm_attn_rows). */
struct attn_buf {
        tl_tensor *qs;               /* [rows, D] fp32: rotated, scaled queries */
        tl_tensor *kbuf[3];          /* [LLM_KV_TILE, D]: K tiles, two loading while one computes */
        tl_tensor *vbuf[3];          /* [LLM_KV_TILE, D]: V tiles, likewise */
        tl_tensor *s[2][2];          /* prefill: scratch [rows / 2 * LLM_KV_TILE] fp32: scores,
                                      * two buffers for each of two chains */
        tl_tensor *m, *l, *o;        /* [rows, 1], [rows, 1], [rows, D]: online softmax state */
};

/* One block of query rows of KV head (b, h): rows [i0, i0 + n) of query
 * heads qh .. qh + nh - 1, stacked head after head (decode: all G heads
 * of the group at position P, n = G, nh 1). */
struct attn_item {
        int64_t b, h;                /* batch, global KV head */
        int64_t qh, nh;              /* prefill: the first global query head, how many */
        int64_t i0, n;               /* query rows of each head; decode: 0, G */
        int64_t k0, k1;              /* keys [k0, k1) of cache + new it attends to */
};

/* Keys [j, j + n) of (b, h) as [n, D]: from the cache below P, else new. */
static tl_tensor *keys(tl_ctx *tl, const struct llm_args *a, tl_tensor *cache, tl_tensor *fresh,
                       int64_t b, int64_t h, int64_t j, int64_t n)
{
        return j < a->past ? gqa_head_rows(tl, cache, b, h, j, n)
                           : gqa_head_rows(tl, fresh, b, h, j - a->past, n);
}

/* The end of the key tile that starts at j. */
static int64_t tile_end(const struct llm_args *a, int64_t j, int64_t k1)
{
        int64_t e = min64(j + LLM_KV_TILE, k1);
        return j < a->past ? min64(e, a->past) : e;
}

/* The key and value tiles [j, e) of the item into buffer i of ab (with
 * pe->new_keys, of the cache only: the new keys are new_keys'). */
static void kv_tiles(tl_ctx *tl, const struct llm_args *a, const struct llm_pe *pe,
                     struct attn_buf *ab, const struct attn_item *it, int i, int64_t j,
                     int64_t e)
{
        int64_t d = a->d;
        if (pe->new_keys && j >= a->past)
                return;
        tl_copy_to(tl, view2(tl, ab->kbuf[i], 0, 0, e - j, d),
                   keys(tl, a, a->k_cache, a->k_new, it->b, it->h, j, e - j));
        tl_copy_to(tl, view2(tl, ab->vbuf[i], 0, 0, e - j, d),
                   keys(tl, a, a->v_cache, a->v_new, it->b, it->h, j, e - j));
}

/* Load the item's queries, rotate and scale them into ab->qs (head after
 * head), and reset the state. */
static void queries(tl_ctx *tl, const struct llm_args *a, const struct llm_pe *pe,
                    struct attn_buf *ab, const struct attn_item *it, int64_t rows)
{
        int64_t d = a->d, half = d / 2, n = it->n;
        bool decode = a->sq == 1;
        for (int64_t g = 0; g < it->nh; g++) {
                tl_tensor *qs = view2(tl, ab->qs, g * n, 0, n, d);
                tl_scratch_scope_begin(tl);
                tl_tensor *q;
                if (decode)
                        q = tl_reshape(tl, tl_load(tl, view2(tl, a->q, it->b,
                                                             it->h * a->group * d, 1,
                                                             a->group * d)),
                                       2, ((int64_t[]){ n, d }));
                else
                        q = tl_load(tl, view2(tl, a->q, it->b * a->sq + it->i0,
                                              (it->qh + g) * d, n, d));
                tl_tensor *h1, *h2;
                rope(tl, a, pe, q, a->past + it->i0, decode, &h1, &h2);
                tl_copy_to(tl, view2(tl, qs, 0, 0, n, half), tl_scale(tl, h1, a->scale));
                tl_copy_to(tl, view2(tl, qs, 0, half, n, half), tl_scale(tl, h2, a->scale));
                if (g + 1 < it->nh) {
                        tl_scratch_scope_end(tl);
                        continue;
                }
                int64_t sh[2] = { rows, 1 };
                tl_copy_to(tl, view2(tl, ab->m, 0, 0, rows, 1),
                           tl_fill(tl, TL_FP32, 2, sh, GQA_NEG_BIG));
                tl_copy_to(tl, view2(tl, ab->l, 0, 0, rows, 1), tl_fill(tl, TL_FP32, 2, sh, 0.0f));
                tl_copy_to(tl, view2(tl, ab->o, 0, 0, rows, d),
                           tl_fill(tl, TL_FP32, 2, ((int64_t[]){ rows, d }), 0.0f));
                tl_scratch_scope_end(tl);
        }
}

/* How a prefill item's stacked heads split into chains (halves of the
 * rows, when their count is even): the GEMM engine computes one chain's
 * scores while the MATH engine merges the other's. */
struct chains {
        int n;                       /* chains: 1 or 2 */
        int64_t rows, heads;         /* rows and stacked heads of each */
};

static struct chains chains_of(const struct attn_item *it)
{
        int n = it->nh % 2 == 0 ? 2 : 1;
        return (struct chains){ n, it->nh * it->n / n, it->nh / n };
}

/* Merge the score tiles s[c] of chains ch (keys [j, j + cols)) into the
 * item's state, the values from vbuf, masking new keys later than a
 * query row; waits for the merges. */
static void merge_tile(tl_ctx *tl, const struct llm_args *a, struct attn_buf *ab,
                       const struct attn_item *it, const struct chains *ch, tl_tensor **s,
                       tl_tensor *vbuf, int64_t j, int64_t cols)
{
        int64_t d = a->d, cr = ch->rows;
        /* New key j - P + c is hidden from query row i0 + r when it is later. */
        int64_t off = it->i0 - (j - a->past);
        tl_tensor *vt = view2(tl, vbuf, 0, 0, cols, d);
        tl_handle h[2];
        for (int c = 0; c < ch->n; c++) {
                if (j >= a->past && cols - 1 > off) {
                        /* Each stacked head's rows start at row i0 of the block. */
                        tl_tensor *s3 = tl_reshape(tl, s[c], 3,
                                                   ((int64_t[]){ ch->heads, it->n, cols }));
                        s[c] = tl_reshape(tl, tl_mask_causal(tl, s3, off), 2,
                                          ((int64_t[]){ cr, cols }));
                }
                h[c] = tl_softmax_merge(tl, s[c], vt, view2(tl, ab->m, c * cr, 0, cr, 1),
                                        view2(tl, ab->l, c * cr, 0, cr, 1),
                                        view2(tl, ab->o, c * cr, 0, cr, d));
        }
        for (int c = 0; c < ch->n; c++)
                tl_wait(tl, h[c]);
}

/* The scores of chain c for the key tile of kbuf (cols keys) into the
 * flat scratch buffer sbuf, as a [rows, cols] tensor: one GEMM composite. */
static tl_tensor *scores(tl_ctx *tl, const struct llm_args *a, struct attn_buf *ab,
                         const struct chains *ch, int c, tl_tensor *kbuf, int64_t cols,
                         tl_tensor *sbuf)
{
        int64_t d = a->d;
        tl_tensor *s = acc_block(tl, sbuf, ch->rows, cols);
        tl_composite(tl, &(tl_composite_desc){
                .op = TL_GEMM, .a = view2(tl, ab->qs, c * ch->rows, 0, ch->rows, d),
                .b = view2(tl, kbuf, 0, 0, cols, d), .trans_b = true, .out = s,
                .tile_m = ch->rows, .tile_n = cols, .tile_k = d,
        });
        return s;
}

/* attend for a prefill item, software-pipelined: the scores of key tile
 * t + 1 are computed (into ab->s, two buffers a chain) before tile t is
 * merged, and the keys and values of tile t + 2 load meanwhile (three
 * buffers), so that the GEMM engine computes scores while the MATH
 * engine merges (docs/adr/0042). */
static void attend_prefill(tl_ctx *tl, const struct llm_args *a, const struct llm_pe *pe,
                           struct attn_buf *ab, const struct attn_item *it)
{
        struct chains ch = chains_of(it);
        queries(tl, a, pe, ab, it, it->nh * it->n);
        int64_t j[3], e[3];          /* tiles t, t + 1, t + 2: keys [j, e) (j = k1: none) */
        j[0] = it->k0;
        e[0] = tile_end(a, j[0], it->k1);
        j[1] = e[0];
        e[1] = j[1] < it->k1 ? tile_end(a, j[1], it->k1) : j[1];
        kv_tiles(tl, a, pe, ab, it, 0, j[0], e[0]);
        if (j[1] < it->k1)
                kv_tiles(tl, a, pe, ab, it, 1, j[1], e[1]);
        tl_tensor *s[2];
        for (int c = 0; c < ch.n; c++)
                scores(tl, a, ab, &ch, c, ab->kbuf[0], e[0] - j[0], ab->s[0][c]);
        for (int64_t t = 0; j[0] < it->k1; t++) {
                j[2] = e[1];
                e[2] = j[2] < it->k1 ? tile_end(a, j[2], it->k1) : j[2];
                if (j[2] < it->k1)
                        kv_tiles(tl, a, pe, ab, it, (int)((t + 2) % 3), j[2], e[2]);
                for (int c = 0; j[1] < it->k1 && c < ch.n; c++)
                        scores(tl, a, ab, &ch, c, ab->kbuf[(t + 1) % 3], e[1] - j[1],
                               ab->s[(t + 1) % 2][c]);
                tl_scratch_scope_begin(tl);
                for (int c = 0; c < ch.n; c++)
                        s[c] = acc_block(tl, ab->s[t % 2][c], ch.rows, e[0] - j[0]);
                merge_tile(tl, a, ab, it, &ch, s, ab->vbuf[t % 3], j[0], e[0] - j[0]);
                tl_scratch_scope_end(tl);
                for (int i = 0; i < 2; i++) {
                        j[i] = j[i + 1];
                        e[i] = e[i + 1];
                }
        }
}

/* Merge the partial state (mb, lb, ob) into the item's state. */
static void merge_state(tl_ctx *tl, struct attn_buf *ab, int64_t n, int64_t d, tl_tensor *mb,
                        tl_tensor *lb, tl_tensor *ob)
{
        tl_tensor *m = view2(tl, ab->m, 0, 0, n, 1), *l = view2(tl, ab->l, 0, 0, n, 1);
        tl_tensor *o = view2(tl, ab->o, 0, 0, n, d);
        tl_tensor *mn = tl_max(tl, m, mb);
        tl_tensor *ea = tl_exp(tl, tl_sub(tl, m, mn)), *eb = tl_exp(tl, tl_sub(tl, mb, mn));
        tl_copy_to(tl, l, tl_add(tl, tl_mul(tl, ea, l), tl_mul(tl, eb, lb)));
        tl_copy_to(tl, o, tl_add(tl, tl_mul(tl, ea, o), tl_mul(tl, eb, ob)));
        tl_copy_to(tl, m, mn);
}

/* O / l of the item into attn (head after head). */
static void write_attn(tl_ctx *tl, const struct llm_args *a, struct attn_buf *ab,
                       const struct attn_item *it)
{
        int64_t d = a->d, n = it->n;
        for (int64_t g = 0; g < it->nh; g++) {
                tl_scratch_scope_begin(tl);
                tl_tensor *res = tl_div(tl, view2(tl, ab->o, g * n, 0, n, d),
                                        view2(tl, ab->l, g * n, 0, n, 1));
                if (a->sq == 1)
                        tl_store(tl, view2(tl, a->attn, it->b, it->h * a->group * d, 1, n * d),
                                 tl_reshape(tl, res, 2, ((int64_t[]){ 1, n * d })));
                else
                        tl_store(tl, view2(tl, a->attn, it->b * a->sq + it->i0,
                                           (it->qh + g) * d, n, d), res);
                tl_scratch_scope_end(tl);
        }
}

/* Decode: item w of the block's units (batch, KV head), each split over
 * `splits` PEs by keys (of keys_n). */
static struct attn_item decode_item(const struct llm_args *a, const struct llm_pe *pe, int64_t w,
                                    int64_t splits, int64_t keys_n)
{
        int64_t hl = a->hkv / a->tp, u = w / splits;
        struct attn_item it = { .b = u / hl, .h = pe->rank * hl + u % hl, .nh = 1,
                                .n = a->group };
        gqa_split(keys_n, splits, w % splits, &it.k0, &it.k1);
        return it;
}

/* The end of decode item w (of `splits` parts a unit): a part other than
 * the first sends its state to the first, which merges them and writes
 * the unit's attention. */
static void decode_done(tl_ctx *tl, const struct llm_args *a, const struct llm_pe *pe,
                        struct attn_buf *ab, const struct attn_item *it, int64_t w,
                        int64_t splits)
{
        int64_t u = w / splits, part = w % splits, g = a->group, d = a->d;
        int root = coll_rank(&pe->block, (int)(u * splits));
        tl_scratch_scope_begin(tl);
        if (part > 0) {
                tl_send(tl, root, view2(tl, ab->m, 0, 0, g, 1), TAG_MERGE);
                tl_send(tl, root, view2(tl, ab->l, 0, 0, g, 1), TAG_MERGE + 1);
                tl_send(tl, root, view2(tl, ab->o, 0, 0, g, d), TAG_MERGE + 2);
        } else {
                for (int64_t k = 1; k < splits; k++) {
                        int src = coll_rank(&pe->block, (int)(u * splits + k));
                        tl_tensor *mb = tl_recv(tl, src, TAG_MERGE);
                        tl_tensor *lb = tl_recv(tl, src, TAG_MERGE + 1);
                        merge_state(tl, ab, g, d, mb, lb, tl_recv(tl, src, TAG_MERGE + 2));
                }
        }
        tl_scratch_scope_end(tl);
        if (part == 0)
                write_attn(tl, a, ab, it);
}

/* A key tile of a decode PE's items (block.me, + block.n, .. below end):
 * its item w (end or more: none) and its keys [j, e). */
struct dtile {
        int64_t w;                   /* the item */
        int64_t j, e;                /* its keys */
};

/* The tile after t: the item's next, else the next item's first. */
static struct dtile dtile_next(const struct llm_args *a, const struct llm_pe *pe, int64_t splits,
                               int64_t keys_n, int64_t end, struct dtile t)
{
        struct attn_item it = decode_item(a, pe, t.w, splits, keys_n);
        if (t.e < it.k1)
                return (struct dtile){ t.w, t.e, tile_end(a, t.e, it.k1) };
        t.w += pe->block.n;
        if (t.w >= end)
                return t;
        it = decode_item(a, pe, t.w, splits, keys_n);
        return (struct dtile){ t.w, it.k0, tile_end(a, it.k0, it.k1) };
}

/* Decode: the new keys (rotated, as one tensor) and values of this PE's
 * items that end at the new key (items me, me + n, .. below end, each
 * `splits` parts of a unit), from the QKV GEMM's k and v rows, into
 * scratch [count, D] kn and vn, in the items' order, and into k_new and
 * v_new: the item's PE is the only one to read them, so no phase and
 * barrier of their own (docs/adr/0050). */
static void new_keys(tl_ctx *tl, const struct llm_args *a, const struct llm_pe *pe,
                     int64_t splits, int64_t end, tl_tensor **kn, tl_tensor **vn)
{
        int64_t d = a->d, half = d / 2, n = 0, keys_n = a->past + 1;
        for (int64_t w = pe->block.me; w < end; w += pe->block.n)
                n += w % splits == splits - 1;
        *kn = *vn = NULL;
        if (n == 0)
                return;
        *kn = tl_alloc(tl, TL_TCM, a->dt, 2, ((int64_t[]){ n, d }));
        *vn = tl_alloc(tl, TL_TCM, a->dt, 2, ((int64_t[]){ n, d }));
        int64_t r = 0;
        for (int64_t w = pe->block.me; w < end; w += pe->block.n) {
                if (w % splits != splits - 1)
                        continue;
                struct attn_item it = decode_item(a, pe, w, splits, keys_n);
                tl_copy_to(tl, view2(tl, *kn, r, 0, 1, d), view2(tl, a->kt, it.b, it.h * d, 1, d));
                tl_copy_to(tl, view2(tl, *vn, r, 0, 1, d), view2(tl, a->vt, it.b, it.h * d, 1, d));
                r++;
        }
        tl_tensor *h1, *h2;
        rope(tl, a, pe, *kn, a->past, true, &h1, &h2);
        tl_copy_to(tl, view2(tl, *kn, 0, 0, n, half), h1);
        tl_copy_to(tl, view2(tl, *kn, 0, half, n, half), h2);
        r = 0;
        for (int64_t w = pe->block.me; w < end; w += pe->block.n) {
                if (w % splits != splits - 1)
                        continue;
                struct attn_item it = decode_item(a, pe, w, splits, keys_n);
                tl_store(tl, gqa_head_rows(tl, a->k_new, it.b, it.h, 0, 1),
                         view2(tl, *kn, r, 0, 1, d));
                tl_store(tl, gqa_head_rows(tl, a->v_new, it.b, it.h, 0, 1),
                         view2(tl, *vn, r, 0, 1, d));
                r++;
        }
}

/* Decode: (batch, KV head) units of the block, each split over `splits`
 * PEs by keys; the first PE of a unit merges the others' states. A PE's
 * tiles run as one stream over its items, the keys and values of the
 * tile two ahead loading while one computes (three buffers), across the
 * items' ends: the items of a batch at a short context are a tile or two
 * each, and each one's first tiles waited for the last one's merge. */
static void attention_decode(tl_ctx *tl, const struct llm_args *a, const struct llm_pe *pe,
                             struct attn_buf *ab)
{
        int64_t keys_n = a->past + 1, splits, end = decode_items(a, pe, &splits), d = a->d;
        if (pe->block.me >= end)
                return;
        tl_scratch_scope_begin(tl);
        tl_tensor *kn = NULL, *vn = NULL;
        int64_t nk = 0;              /* the next row of kn and vn */
        if (pe->new_keys)
                new_keys(tl, a, pe, splits, end, &kn, &vn);
        struct attn_item it = decode_item(a, pe, pe->block.me, splits, keys_n);
        struct dtile q[3];           /* tiles t, t + 1, t + 2 */
        q[0] = (struct dtile){ pe->block.me, it.k0, tile_end(a, it.k0, it.k1) };
        q[1] = dtile_next(a, pe, splits, keys_n, end, q[0]);
        for (int i = 0; i < 2 && q[i].w < end; i++) {
                struct attn_item ti = decode_item(a, pe, q[i].w, splits, keys_n);
                kv_tiles(tl, a, pe, ab, &ti, i, q[i].j, q[i].e);
        }
        for (int64_t t = 0; q[0].w < end; t++) {
                q[2] = q[1].w < end ? dtile_next(a, pe, splits, keys_n, end, q[1]) : q[1];
                if (q[2].w < end) {
                        struct attn_item ti = decode_item(a, pe, q[2].w, splits, keys_n);
                        kv_tiles(tl, a, pe, ab, &ti, (int)((t + 2) % 3), q[2].j, q[2].e);
                }
                it = decode_item(a, pe, q[0].w, splits, keys_n);
                struct chains ch = chains_of(&it);
                if (q[0].j == it.k0)
                        queries(tl, a, pe, ab, &it, it.n);
                int cur = (int)(t % 3);
                tl_scratch_scope_begin(tl);
                tl_tensor *kt = view2(tl, ab->kbuf[cur], 0, 0, q[0].e - q[0].j, d), *s[2];
                tl_tensor *vt = ab->vbuf[cur];
                if (kn && q[0].j >= a->past) {       /* the new key: one row of kn */
                        kt = view2(tl, kn, nk, 0, 1, d);
                        vt = view2(tl, vn, nk++, 0, 1, d);
                }
                for (int c = 0; c < ch.n; c++)
                        s[c] = tl_dot(tl, view2(tl, ab->qs, c * ch.rows, 0, ch.rows, d), kt, true);
                merge_tile(tl, a, ab, &it, &ch, s, vt, q[0].j, q[0].e - q[0].j);
                tl_scratch_scope_end(tl);
                if (q[0].e == it.k1)
                        decode_done(tl, a, pe, ab, &it, q[0].w, splits);
                q[0] = q[1];
                q[1] = q[2];
        }
        tl_scratch_scope_end(tl);
}

/* Which prefill items a PE deals among which PEs: units (batch, stacked
 * query heads) of the query heads from qh0, per_b of them per batch, over
 * n PEs, this one the me-th. */
struct deal {
        int64_t units, per_b, qh0;   /* units; per batch; the first unit's first query head */
        int n, me;                   /* PEs dealt to; this PE's index among them */
};

/* The KV heads of cube c (of the machine's `cubes`) that are also the
 * rank's: prefill's k_new and v_new are split by KV head over the cubes
 * (llm_setup.c), cube c holding [c Hkv / C, (c + 1) Hkv / C). Returns
 * how many, the first at *h0. */
static int64_t cube_heads(const struct llm_args *a, int rank, int64_t c, int64_t cubes,
                          int64_t *h0)
{
        int64_t hk = a->hkv / a->tp, r0 = rank * hk;
        int64_t lo = max64(r0, c * a->hkv / cubes), hi = min64(r0 + hk, (c + 1) * a->hkv / cubes);
        *h0 = lo;
        return max64(0, hi - lo);
}

/* The rank's prefill items: over its block's PEs, or, when the block is
 * whole cubes each holding as many of the rank's KV heads, each cube's
 * over its own PEs (they read their keys and values from their cube). */
static struct deal deal_of(tl_ctx *tl, const struct llm_args *a, const struct llm_pe *pe,
                           int64_t nh)
{
        const struct coll_group *g = &pe->block;
        int64_t hl = a->hq / a->tp / nh;
        struct deal d = { a->batch * hl, hl, pe->rank * hl * nh, g->n, g->me };
        int per = tl_mesh_dim(tl, 0) * tl_mesh_dim(tl, 1);
        int64_t cubes = (int64_t)tl_num_programs(tl, 1) * tl_num_programs(tl, 2);
        if (g->stride != 1 || g->first % per != 0 || g->n % per != 0)
                return d;
        int64_t first = g->first / per, h0, k = cube_heads(a, pe->rank, first, cubes, &h0);
        for (int64_t c = first + 1; c < first + g->n / per; c++)
                if (cube_heads(a, pe->rank, c, cubes, &h0) != k)
                        return d;
        int64_t me = coll_rank(g, g->me);
        if (k == 0 || cube_heads(a, pe->rank, me / per, cubes, &h0) != k)
                return d;
        int64_t pb = k * a->group / nh;
        return (struct deal){ a->batch * pb, pb, h0 * a->group, per, (int)(me % per) };
}

/* Prefill: blocks of LLM_Q_ROWS query rows of llm_attn_heads(G) query
 * heads of one KV head, stacked, over every key they see (the cache and
 * the new keys up to their last row): each key and value tile loaded
 * serves them all. A block's keys grow with its rows, so the blocks are
 * dealt (deal_of) latest rows first and in a snake over the PEs (round r
 * to PE i, or to PE n - 1 - i when r is odd): each PE's blocks then add
 * up to about the same keys. */
static void attention_prefill(tl_ctx *tl, const struct llm_args *a, const struct llm_pe *pe,
                              struct attn_buf *ab)
{
        int64_t nh = llm_attn_heads(a->group), chunks = (a->sq + LLM_Q_ROWS - 1) / LLM_Q_ROWS;
        struct deal d = deal_of(tl, a, pe, nh);
        int64_t units = d.units, n = d.n;
        for (int64_t r = 0; r * n < units * chunks; r++) {
                int64_t w = r * n + (r % 2 == 0 ? d.me : n - 1 - d.me);
                if (w >= units * chunks)
                        continue;
                int64_t u = w % units;
                struct attn_item it = { .b = u / d.per_b, .qh = d.qh0 + u % d.per_b * nh,
                                        .nh = nh, .i0 = (chunks - 1 - w / units) * LLM_Q_ROWS };
                it.h = it.qh / a->group;
                it.n = min64(LLM_Q_ROWS, a->sq - it.i0);
                it.k1 = a->past + it.i0 + it.n;
                attend_prefill(tl, a, pe, ab, &it);
                write_attn(tl, a, ab, &it);
        }
}

static void attention(tl_ctx *tl, const struct llm_args *a, const struct llm_pe *pe)
{
        int64_t rows = llm_attn_rows(a->sq, a->group), d = a->d;
        struct attn_buf ab;
        ab.qs = tl_alloc(tl, TL_TCM, TL_FP32, 2, ((int64_t[]){ rows, d }));
        for (int i = 0; i < 3; i++) {
                ab.kbuf[i] = tl_alloc(tl, TL_TCM, a->dt, 2, ((int64_t[]){ LLM_KV_TILE, d }));
                ab.vbuf[i] = tl_alloc(tl, TL_TCM, a->dt, 2, ((int64_t[]){ LLM_KV_TILE, d }));
        }
        ab.m = tl_alloc(tl, TL_TCM, TL_FP32, 2, ((int64_t[]){ rows, 1 }));
        ab.l = tl_alloc(tl, TL_TCM, TL_FP32, 2, ((int64_t[]){ rows, 1 }));
        ab.o = tl_alloc(tl, TL_TCM, TL_FP32, 2, ((int64_t[]){ rows, d }));
        if (a->sq == 1) {
                attention_decode(tl, a, pe, &ab);
                return;
        }
        int nch = llm_attn_heads(a->group) % 2 == 0 ? 2 : 1; /* chains_of's */
        tl_scratch_scope_begin(tl);
        for (int i = 0; i < 2 * nch; i++)
                ab.s[i / nch][i % nch] = tl_alloc(tl, TL_SCRATCH, TL_FP32, 1,
                                                  ((int64_t[]){ rows / nch * LLM_KV_TILE }));
        attention_prefill(tl, a, pe, &ab);
        tl_scratch_scope_end(tl);
}

/* ---- the layer ---------------------------------------------------------------------- */

static void llm_layer(tl_ctx *tl, const void *argp)
{
        const struct llm_args *a = argp;
        struct llm_pe pe;
        struct split_ahead ahead = { 0 };
        pe_init(tl, a, &pe);
        if (pe.rank >= a->tp)        /* the PEs left over when tp does not divide them */
                return;
        if (pe.grid.split)
                pe.ahead = &ahead;
        int64_t t = a->batch * a->sq, hd = a->hidden;
        int64_t qd = a->hq / a->tp * a->d, fl = a->ffn / a->tp;
        tl_tensor *x = tl_reshape(tl, a->x, 2, ((int64_t[]){ t, hd }));
        tl_tensor *out = tl_reshape(tl, a->out, 2, ((int64_t[]){ t, hd }));
        if (!qkv_fused(tl, a, &pe)) {   /* else the QKV GEMMs apply it */
                if (runs(a, LLM_PART_NORM))
                        rmsnorm_rows(tl, a, &pe, x, a->attn_norm, a->n1);
                barrier(tl, a, &pe);
        }
        qkv(tl, a, &pe);
        barrier(tl, a, &pe);
        if (!pe.new_keys) {

                if (runs(a, LLM_PART_OTHER))
                        new_kv(tl, a, &pe);
                barrier(tl, a, &pe);
        }
        if (runs(a, LLM_PART_ATTENTION))
                attention(tl, a, &pe);
        barrier(tl, a, &pe);
        row_parallel(tl, a, &pe, a->attn, pe.rank * qd, qd, a->wo, x, a->h);
        barrier(tl, a, &pe);
        if (!gate_up_fused(tl, a, &pe)) {   /* else gate and up apply it */
                if (runs(a, LLM_PART_NORM))
                        rmsnorm_rows(tl, a, &pe, a->h, a->mlp_norm, a->n2);
                barrier(tl, a, &pe);
        }
        gate_up(tl, a, &pe);
        barrier(tl, a, &pe);
        row_parallel(tl, a, &pe, a->act, pe.rank * fl, fl, a->wd, a->h, out);
}

TL_KERNEL(llm_layer, llm,
          "one Llama-3 decoder layer (RMSNorm, QKV, RoPE, causal GQA, wo, SwiGLU MLP) "
          "with Megatron tensor parallelism over tp blocks of PEs",
          "inputs x.npy [batch, q_len, hidden], wq.npy [hidden, q_heads*head_dim], "
          "wk.npy and wv.npy [hidden, kv_heads*head_dim], wo.npy [q_heads*head_dim, "
          "hidden], w_gate.npy and w_up.npy [hidden, ffn], w_down.npy [ffn, hidden], "
          "attn_norm.npy and mlp_norm.npy [hidden], k_cache.npy and v_cache.npy "
          "[batch, kv_heads, past_len, head_dim] (none when past_len is 0); outputs "
          "out.npy [batch, q_len, hidden], k_new.npy and v_new.npy [batch, kv_heads, "
          "q_len, head_dim]");

/* ---- the LM head ---------------------------------------------------------------------- */

/* logits = x . w_lm, the vocabulary's columns split evenly over every PE
 * of the machine (vocab-parallel; the logits stay where they were made).
 * A PE's columns take many output blocks of the same rows of x: those
 * rows stay in TCM (loaded by the first block's K steps) when they take
 * at most half the persistent TCM, rather than be loaded again
 * for every block, which made a batch of 32 read 1.32 GB for 1.05 GB of
 * weights (docs/adr/0050). */
static void llm_lm_head(tl_ctx *tl, const void *argp)
{
        const struct llm_head_args *a = argp;
        int n = tl_num_programs(tl, 0) * tl_num_programs(tl, 1) * tl_num_programs(tl, 2);
        struct llm_pe pe = { 0 };
        gemm_bufs(tl, 1, a->batch, a->dt, a->wdt, &pe);
        int64_t lo, hi, rows = llm_a_rows(a->batch);
        gqa_split(a->vocab, n, tl_rank(tl, -1, -1, -1), &lo, &hi);
        struct gbufs gb = { .bufs = pe.plan.abufs, .tk = pe.plan.tk };
        for (int i = 0; i < gb.bufs; i++) {
                gb.av[i] = (struct corner){ .buf = pe.abuf[i] };
                gb.bv[i][0] = (struct corner){ .buf = pe.bbuf[i][0] };
        }
        if (tl_dtype_bytes(a->dt, rows * a->hidden, a->hidden) <=
            (uint64_t)tl_machine_info(tl).tcm_alloc_bytes / 2)
                gb.ares = tl_alloc(tl, TL_TCM, a->dt, 2, ((int64_t[]){ rows, a->hidden }));
        FOR_BLOCKS(a->batch, hi - lo, pe.plan.tn, r0, nr, j0, nc) {
                tl_tensor *acc = acc_block(tl, pe.acc[0], nr, nc);
                tl_tensor *b = view2(tl, a->w, 0, lo + j0, a->hidden, nc);
                tl_tensor *ares = gb.ares;
                if (ares)
                        gb.ares = view2(tl, ares, 0, 0, nr, a->hidden);
                gb.ares_loaded = ares && j0 > 0;
                gemm_stream(tl, &pe, &gb, view2(tl, a->x, r0, 0, nr, a->hidden), 1, &b, &acc);
                gb.ares = ares;
                tl_store(tl, view2(tl, a->logits, r0, lo + j0, nr, nc), acc);
        }
}

TL_KERNEL(llm_lm_head, llm_head,
          "a model's LM head GEMM, logits = x . w_lm, vocabulary split over every PE",
          "inputs x.npy [batch, hidden], w_lm.npy [hidden, vocab]; output logits.npy "
          "[batch, vocab]");
