/* kernels/tt_matmul.c: C = A . B as tt-metal's 2D-multicast blocked matmul
 * (matmul_2d) runs it on a Tenstorrent grid: its reader, compute and
 * writer kernels, as threads of each PE connected by circular buffers.
 *
 * The grid is grid_x columns by grid_y rows of PEs from the NoC's corner
 * (row 0, col 0) of cube 0. Each PE owns an output block of per_core_m x
 * per_core_n 32x32 tiles, (grid row y, grid column x). K is walked in
 * blocks of in0_block_w tiles. On each PE three threads run, as tt-metal
 * places its kernels (matmul_op_multi_core_reuse_mcast_2d_program_factory):
 *   - in0's reader (the second data-movement core, NoC 1): in grid column
 *     0 it reads A's block of its row from DRAM into the back page of
 *     circular buffer in0 (or, A in L1, takes it in place) and multicasts
 *     it to the rest of the row; elsewhere it takes the multicast into the
 *     back page (tl_recv_into);
 *   - in1's reader and the writer (the first data-movement core, NoC 0):
 *     the same for B down the columns from grid row 0, and each finished
 *     out block (circular buffer out) written to DRAM;
 *   - compute (the kernel itself): waits for the front pages of in0 and
 *     in1 and multiplies them onto the out block, which stays in TCM for
 *     the whole K walk: the first K block writes it, every later one
 *     accumulates onto it (tl_composite's accumulate: Tensix's packer
 *     accumulates into L1, tt-metal's packer_l1_acc), in subblocks of at
 *     most 8 tiles, the tiles the matrix unit's Dst registers hold.
 * Two pages per operand buffer: a reader runs at most two blocks ahead of
 * its compute (tt-metal's double buffering). A sender multicasts a block
 * only when every receiver has reserved the page it lands in: each
 * receiver increments the sender's semaphore (tl_sem_inc) after its
 * reserve, the sender waits for all of them (tt-metal's sender and
 * receiver semaphores; handshake=0 drops the wait). With A in L1,
 * block-sharded over each row (K split over the columns), the sender of K
 * block b is the column whose shard holds it, not column 0 (tt-metal's
 * block-sharded in0 sender/receiver kernel; a_rotate=0 keeps column 0).
 * docs/adr/0031.
 *
 * The program config is tt-metal's MatmulMultiCoreReuseMultiCastProgramConfig
 * as its GEMM benchmark derives it (tests/ttnn/unit_tests/benchmarks/
 * test_benchmark.py in tenstorrent/tt-metal): per_core_M x per_core_N the
 * PE's output block; in0_block_w = K's tiles / grid_x / in0_block_w_div;
 * out_block_h x out_block_w = the output block / num_out_blocks (each out
 * block walks K on its own, so A and B are read once per out block); the
 * subblock the first of tt-metal's choices (4x2, 2x4, 8x1, ...) that
 * divides the out block (ttnn's SUBBLOCK_HW_CHOICES in
 * ttnn/cpp/ttnn/operations/matmul/device/config/matmul_program_config.cpp;
 * a sharded output takes one row of tiles). By default derive_blocks picks
 * the out blocks and in0_block_w_div by tt-metal's L1 estimate
 * (get_estimated_size_of_cbs); the parameters override each choice.
 *
 * Where operands live: in0/in1 = l1 means the tensor starts sharded in the
 * TCM (L1) of the PEs that send it (consumed in place); dram means it is
 * interleaved over the DRAM channels. out = l1 leaves C sharded in the
 * owners' TCM; dram writes it to DRAM. dtype applies to A, B and C.
 *
 * Inputs a.npy [m, k], b.npy [k, n]; output c.npy [m, n]. fidelity sets
 * the GEMM engine's passes per matrix step for the launch. */
#include <cubesim/tl.h>

#include "tt_grid.h"

#define TILE 32
#define TAG_A 1
#define TAG_B 2
#define SEM_A 0                     /* a row's A sender: its receivers' page reserved */
#define SEM_B 1                     /* a column's B sender: the same */

static const char *const dtypes[] = { "bf16", "bfp8_b", "bfp4_b", NULL };
static const tl_dtype dtype_of[] = { TL_BF16, TL_BFP8_B, TL_BFP4_B };
static const char *const places[] = { "l1", "dram", NULL };
static const char *const fidelities[] = { "lofi", "hifi2", "hifi3", "hifi4", NULL };

struct mm_args {
        tl_tensor *a, *b, *c;        /* launch tensors (TCM-sharded or DRAM) */
        int64_t m, n, k;             /* problem, elements */
        int gx, gy;                  /* grid columns and rows */
        int64_t pcm, pcn;            /* output block per PE, tiles */
        int64_t kw;                  /* K block (in0_block_w), tiles */
        int64_t obh, obw;            /* out block, tiles */
        int64_t sbh, sbw;            /* subblock, tiles */
        bool a_dram, b_dram;         /* operands read from DRAM */
        bool out_l1;                 /* C ends sharded in TCM */
        bool l1_acc;                 /* K blocks accumulate in place (else a bias pass each) */
        int out_pages;               /* out = dram: pages of the writer's buffer (1 or 2) */
        int buffers;                 /* pages of each operand's buffer */
        bool handshake;              /* senders wait for their receivers' pages (semaphores) */
        int64_t a_shard_w;           /* A block-sharded in L1 over each row: K tiles per shard,
                                        K block b sent by column b * kw / a_shard_w; 0: A sent by
                                        column 0 */
        tl_dtype dt;                 /* A, B and C */
        tl_dtype acc_dt;             /* the out block's accumulator */
};

static const struct tl_param mm_params[] = {
        { "m", TL_PARAM_INT, 2048, 1, 1 << 20, NULL, "rows of A and C" },
        { "k", TL_PARAM_INT, 2048, 1, 1 << 20, NULL, "columns of A, rows of B" },
        { "n", TL_PARAM_INT, 2048, 1, 1 << 20, NULL, "columns of B and C" },
        { "dtype", TL_PARAM_CHOICE, 0, 0, 0, dtypes, "element type of A, B and C" },
        { "fidelity", TL_PARAM_CHOICE, 3, 0, 0, fidelities,
          "math fidelity: passes per matrix step (LoFi 1 .. HiFi4 4)" },
        { "in0", TL_PARAM_CHOICE, 0, 0, 0, places, "A starts sharded in L1 or in DRAM" },
        { "in1", TL_PARAM_CHOICE, 1, 0, 0, places, "B starts sharded in L1 or in DRAM" },
        { "out", TL_PARAM_CHOICE, 0, 0, 0, places, "C ends sharded in L1 or in DRAM" },
        TT_GRID_PARAMS,
        { "in0_block_w", TL_PARAM_INT, 0, 0, 1024, NULL,
          "K block in tiles (0: K's tiles / grid_x / in0_block_w_div, a divisor of K's tiles)" },
        { "in0_block_w_div", TL_PARAM_INT, 0, 0, 1024, NULL,
          "divides the K block (0: the smallest power of two that fits tt-metal's L1 estimate)" },
        { "out_block_h", TL_PARAM_INT, 0, 0, 1 << 16, NULL,
          "out block rows in tiles (0: the PE's output block, halved until it fits)" },
        { "out_block_w", TL_PARAM_INT, 0, 0, 1 << 16, NULL,
          "out block columns in tiles (0: the PE's output block, halved until it fits)" },
        { "buffers", TL_PARAM_INT, 2, 1, 8, NULL,
          "pages of each operand's circular buffer (2: tt-metal's double buffering)" },
        { "handshake", TL_PARAM_INT, 1, 0, 1, NULL,
          "1: a multicast waits until every receiver has reserved its page (tt-metal's "
          "sender and receiver semaphores); 0: it goes at once" },
        { "a_rotate", TL_PARAM_INT, 1, 0, 1, NULL,
          "A in L1: 1: block-sharded over each row, K block b sent by the column holding it "
          "(where the blocks divide evenly); 0: column 0 sends every block" },
        { "packer_l1_acc", TL_PARAM_INT, 1, 0, 1, NULL,
          "1: K blocks accumulate onto the out block in place; 0: a vector-unit add each" },
        { "fp32_acc", TL_PARAM_INT, 0, 0, 1, NULL,
          "1: accumulate in fp32 (tt-metal's fp32_dest_acc_en; subblocks of at most 4 tiles); "
          "0: in bf16" },
        { NULL, 0, 0, 0, 0, NULL, NULL },
};

static int64_t cdiv(int64_t a, int64_t b) { return (a + b - 1) / b; }
static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }

/* The largest divisor of n that is at most cap. */
static int64_t divisor_upto(int64_t n, int64_t cap)
{
        for (int64_t d = cap < n ? cap : n; d > 1; d--)
                if (n % d == 0)
                        return d;
        return 1;
}

/* The TCM a PE allocates beside scratch: `buffers` pages of each
 * operand's K block (a sender of an operand in L1 multicasts in place, but its
 * receivers take pages) and the out block, accumulator or out_pages pages
 * for the writer. */
static uint64_t tcm_alloc(const struct mm_args *g)
{
        int64_t oh = g->obh * TILE, ow = g->obw * TILE, kw = g->kw * TILE;
        uint64_t acc = tl_dtype_bytes(g->acc_dt, oh * ow, ow);
        return (uint64_t)g->buffers * (tl_dtype_bytes(g->dt, oh * kw, kw) +
                                       tl_dtype_bytes(g->dt, kw * ow, ow)) +
               (g->out_l1 ? 1 : (uint64_t)g->out_pages) * acc;
}

/* tt-metal's estimate of a matmul's L1 (get_estimated_size_of_cbs in
 * ttnn/cpp/ttnn/operations/matmul/device/.../matmul_utilities.cpp): the
 * in0 and in1 buffers, each two K blocks, the intermediate and the output
 * buffer, each an out block; and an in0 sharded in L1 keeps its shard
 * (per_core_M x K / grid_x tiles) there too. */
static bool fits(tl_machine mc, const struct mm_args *g)
{
        int64_t oh = g->obh * TILE, ow = g->obw * TILE, kw = g->kw * TILE;
        uint64_t need = 2 * tl_dtype_bytes(g->dt, oh * kw, kw) +
                        2 * tl_dtype_bytes(g->dt, kw * ow, ow) +
                        tl_dtype_bytes(g->acc_dt, oh * ow, ow) + tl_dtype_bytes(g->dt, oh * ow, ow);
        if (!g->a_dram) {
                int64_t ks = cdiv(g->k, g->gx);
                need += tl_dtype_bytes(g->dt, g->pcm * TILE * ks, ks);
        }
        return need <= (uint64_t)mc.tcm_alloc_bytes;
}

/* The blocks, checked against the machine before the launch (a run would
 * fail on its first PE). */
static void check_tcm(tl_setup *s, const struct mm_args *g, tl_machine mc)
{
        uint64_t need = tcm_alloc(g);
        if (need > (uint64_t)mc.tcm_alloc_bytes)
                tl_setup_error(s, "in0_block_w %lld x out_block_h %lld x out_block_w %lld (tiles): "
                               "a PE needs %llu bytes of TCM for its circular buffers, more than "
                               "the %lld beside scratch; make the blocks smaller",
                               (long long)g->kw, (long long)g->obh, (long long)g->obw,
                               (unsigned long long)need, (long long)mc.tcm_alloc_bytes);
}

/* tt-metal's subblock choices in its order of preference (test_benchmark.py,
 * SUBBLOCK_HW_CHOICES): at most 8 tiles, what the Dst registers hold (4
 * with fp32 accumulation); a sharded output takes one row of tiles. */
static const int8_t subblocks[][2] = { { 4, 2 }, { 2, 4 }, { 8, 1 }, { 1, 8 }, { 7, 1 },
                                       { 1, 7 }, { 3, 2 }, { 2, 3 }, { 6, 1 }, { 1, 6 },
                                       { 5, 1 }, { 1, 5 }, { 2, 2 }, { 4, 1 }, { 1, 4 },
                                       { 3, 1 }, { 1, 3 }, { 2, 1 }, { 1, 2 }, { 1, 1 } };

static void pick_subblock(struct mm_args *g, bool fp32)
{
        for (size_t i = 0; i < sizeof subblocks / sizeof subblocks[0]; i++) {
                int64_t h = subblocks[i][0], w = subblocks[i][1];
                if ((fp32 && h * w > 4) || (g->out_l1 && h != 1))
                        continue;
                if (g->obh % h == 0 && g->obw % w == 0) {
                        g->sbh = h;
                        g->sbw = w;
                        return;
                }
        }
        g->sbh = g->sbw = 1;
}

/* The K block for divisor div of K's tiles per grid column: the largest
 * divisor of K's tiles at most that (tt-metal's K / grid_x / 32 / div). */
static int64_t k_block(int64_t kt, int gx, int64_t div)
{
        int64_t w0 = kt / gx > 0 ? kt / gx : 1;
        return divisor_upto(kt, w0 / div > 0 ? w0 / div : 1);
}

/* The program config: what the parameters set, the rest the first that
 * fits tt-metal's L1 estimate (fits): the fewest out blocks (1, 2 x 2,
 * 4 x 4, ...; a sharded output keeps the whole per-core block, as
 * tt-metal's sharded outputs must), and for each the largest K block
 * K tiles / grid_x / in0_block_w_div, in0_block_w_div 1, 2, 4, ..., down
 * to 4 tiles (tt-metal's automatic config starts its K block at 4) before
 * more out blocks are tried. */
static void derive_blocks(tl_setup *s, struct mm_args *g, int64_t kt, tl_machine mc)
{
        int64_t kw = tl_setup_int(s, "in0_block_w"), div = tl_setup_int(s, "in0_block_w_div");
        int64_t bh = tl_setup_int(s, "out_block_h"), bw = tl_setup_int(s, "out_block_w");
        int64_t w0 = k_block(kt, g->gx, 1), floor = g->out_l1 ? 1 : min64(4, w0);
        for (int64_t nob = 1;; nob *= 2) {
                g->obh = bh ? min64(bh, g->pcm) : cdiv(g->pcm, g->out_l1 ? 1 : nob);
                g->obw = bw ? min64(bw, g->pcn) : cdiv(g->pcn, g->out_l1 ? 1 : nob);
                bool last = (bh || g->out_l1 || g->obh == 1) && (bw || g->out_l1 || g->obw == 1);
                for (int64_t d = div ? div : 1;; d *= 2) {
                        g->kw = kw ? kw : k_block(kt, g->gx, d);
                        if (kw || div || fits(mc, g))
                                break;
                        int64_t next = k_block(kt, g->gx, d * 2);
                        if (next == g->kw || (next < floor && !last))
                                break;
                }
                if (last || fits(mc, g))
                        return;
        }
}

static void mm_setup(tl_setup *s, void *argp)
{
        struct mm_args *g = argp;
        g->m = tl_setup_dim(s, "m", "a", 0);
        g->k = tl_setup_dim(s, "k", "a", 1);
        g->n = tl_setup_dim(s, "n", "b", 1);
        if (!tt_setup_grid(s, &g->gx, &g->gy))
                tl_setup_error(s, "grid_x %d x grid_y %d does not fit in the %d x %d NoC", g->gx,
                               g->gy, tl_setup_mesh_dim(s, 0), tl_setup_mesh_dim(s, 1));
        int64_t mt = cdiv(g->m, TILE), kt = cdiv(g->k, TILE), nt = cdiv(g->n, TILE);
        g->pcm = cdiv(mt, g->gy);
        g->pcn = cdiv(nt, g->gx);
        tl_setup_gemm_fidelity(s, tl_setup_choice(s, "fidelity") + 1);
        g->dt = dtype_of[tl_setup_choice(s, "dtype")];
        bool fp32 = tl_setup_int(s, "fp32_acc") != 0;
        g->acc_dt = fp32 ? TL_FP32 : TL_BF16;
        g->l1_acc = tl_setup_int(s, "packer_l1_acc") != 0;
        g->buffers = (int)tl_setup_int(s, "buffers");
        g->handshake = tl_setup_int(s, "handshake") != 0;
        g->a_dram = tl_setup_choice(s, "in0") == 1;
        g->b_dram = tl_setup_choice(s, "in1") == 1;
        g->out_l1 = tl_setup_choice(s, "out") == 0;
        tl_machine mc = tl_setup_machine(s);
        derive_blocks(s, g, kt, mc);
        if (g->kw > kt)
                tl_setup_error(s, "in0_block_w (%lld) must be at most K's tiles (%lld: k %lld / "
                               "%d, rounded up)", (long long)g->kw, (long long)kt,
                               (long long)g->k, TILE);
        /* Two out pages (compute and writer overlap) when there are several
         * out blocks and they fit. */
        g->out_pages = 1;
        if (!g->out_l1 && (cdiv(g->pcm, g->obh) > 1 || cdiv(g->pcn, g->obw) > 1)) {
                g->out_pages = 2;
                if (tcm_alloc(g) > (uint64_t)mc.tcm_alloc_bytes)
                        g->out_pages = 1;
        }
        if (g->kw <= kt)
                check_tcm(s, g, mc);
        pick_subblock(g, fp32);
        /* A in L1 is block-sharded over each row, K split over the columns:
         * tt-metal's in0 sender/receiver kernel for a block-sharded in0
         * (reader_bmm_tile_layout_in0_sender_receiver_padding_block_sharded)
         * sends K block b from the column whose shard holds it. Used when
         * the shards and blocks divide evenly and every PE of a row has
         * output in every part (all take part in every multicast);
         * otherwise column 0 sends every block. */
        g->a_shard_w = 0;
        if (!g->a_dram && tl_setup_int(s, "a_rotate") && kt % g->gx == 0 && (kt / g->gx) % g->kw == 0 &&
            nt == (int64_t)g->gx * g->pcn && g->pcn % g->obw == 0)
                g->a_shard_w = kt / g->gx;
        int64_t as[2] = { g->m, g->k }, bs[2] = { g->k, g->n }, cs[2] = { g->m, g->n };
        tl_dtype dt = g->dt;
        g->a = g->a_dram ? tl_setup_tensor(s, "a", TL_INPUT, dt, 2, as)
                         : tl_setup_tensor_sharded(s, "a", TL_INPUT, dt, 2, as);
        g->b = g->b_dram ? tl_setup_tensor(s, "b", TL_INPUT, dt, 2, bs)
                         : tl_setup_tensor_sharded(s, "b", TL_INPUT, dt, 2, bs);
        g->c = !g->out_l1 ? tl_setup_tensor(s, "c", TL_OUTPUT, dt, 2, cs)
                          : tl_setup_tensor_sharded(s, "c", TL_OUTPUT, dt, 2, cs);
}

static tl_tensor *block(tl_ctx *tl, tl_tensor *t, int64_t r, int64_t c, int64_t nr, int64_t nc)
{
        return tl_view(tl, t, ((int64_t[]){ r, c }), ((int64_t[]){ nr, nc }));
}

/* What a PE's three threads share (each thread gets a copy). */
struct mm_pe {
        const struct mm_args *g;     /* the launch's */
        int x, y;                    /* grid column and row */
        int a_src, b_src;            /* ranks of its row's A sender and column's B sender */
        int64_t rows, cols;          /* its output block, elements (may be short at the edge) */
        int64_t nb;                  /* K blocks */
        tl_cb *cb_a, *cb_b;          /* K blocks of A and B, two pages each */
        tl_cb *cb_out;               /* out = dram: finished out blocks for the writer */
        tl_tensor *acc;              /* out = l1: the out block's accumulator */
};

/* An out block (part) of a PE's output: its first row and column and
 * extents, elements; empty (mr or nc <= 0) past a short edge. */
struct part {
        int64_t r0, c0, mr, nc;
        int a_cols, b_rows;          /* its multicast rectangles: receivers right of / below */
};

static struct part part_of(const struct mm_pe *p, int64_t pi, int64_t pj)
{
        const struct mm_args *g = p->g;
        int64_t oh = g->obh * TILE, ow = g->obw * TILE;
        struct part q = { .r0 = (int64_t)p->y * g->pcm * TILE + pi * oh,
                          .c0 = (int64_t)p->x * g->pcn * TILE + pj * ow,
                          .mr = min64(oh, p->rows - pi * oh), .nc = min64(ow, p->cols - pj * ow) };
        /* Multicast only to the PEs whose part is not empty: a prefix of
         * the grid's columns (rows). */
        q.a_cols = (int)min64(g->gx, cdiv(g->n - pj * ow, g->pcn * TILE)) - 1;
        q.b_rows = (int)min64(g->gy, cdiv(g->m - pi * oh, g->pcm * TILE)) - 1;
        return q;
}

/* The next part with elements after part *i (-1: before the first), in
 * row-major order, in *q; false after the last. */
static bool next_part(const struct mm_pe *p, int64_t *i, struct part *q)
{
        const struct mm_args *g = p->g;
        int64_t parts_n = cdiv(g->pcn, g->obw), n = cdiv(g->pcm, g->obh) * parts_n;
        while (++*i < n) {
                *q = part_of(p, *i / parts_n, *i % parts_n);
                if (q->mr > 0 && q->nc > 0)
                        return true;
        }
        return false;
}

/* K's extent of block b, elements. */
static int64_t k_len(const struct mm_args *g, int64_t b)
{
        return min64(g->kw * TILE, g->k - b * g->kw * TILE);
}

/* The grid column that sends A's K block b (A block-sharded in L1: the
 * column whose shard holds it; else column 0). */
static int a_sender(const struct mm_args *g, int64_t b)
{
        return g->a_shard_w ? (int)(b * g->kw / g->a_shard_w) : 0;
}

/* One operand's reader (tt-metal's in0 or in1 sender/receiver kernel):
 * for each K block of each part, the sender reads it from DRAM into the
 * back page (or takes it in place from its L1 shard) and multicasts it
 * along its row (A) or column (B); a receiver takes the multicast into
 * the back page. B's reader also writes the finished out blocks to DRAM
 * (tt-metal's in1 sender/writer kernel). */
static void reader(tl_ctx *tl, const struct mm_pe *p, bool is_a)
{
        const struct mm_args *g = p->g;
        tl_cb *cb = is_a ? p->cb_a : p->cb_b;
        bool dram = is_a ? g->a_dram : g->b_dram;
        struct part q;
        for (int64_t i = -1; next_part(p, &i, &q);) {
                for (int64_t b = 0; b < p->nb; b++) {
                        int sx = a_sender(g, b);
                        bool send = is_a ? p->x == sx : p->y == 0;
                        int src = is_a ? p->a_src + sx : p->b_src;
                        int64_t k0 = b * g->kw * TILE, kn = k_len(g, b);
                        /* The page: the block (a sender of an operand in L1
                         * multicasts from its shard in place). */
                        tl_tensor *page = tl_cb_reserve_back(tl, cb);
                        tl_tensor *v = is_a ? block(tl, g->a, q.r0, k0, q.mr, kn)
                                            : block(tl, g->b, k0, q.c0, kn, q.nc);
                        if (!send || dram) {
                                tl_tensor *src_blk = v;
                                v = block(tl, page, 0, 0, is_a ? q.mr : kn, is_a ? kn : q.nc);
                                if (send)
                                        tl_copy_to(tl, v, src_blk);
                        }
                        if (!send) {
                                /* The page is free: tell the sender (tt-metal's
                                 * noc_semaphore_inc), then take its multicast. */
                                if (g->handshake)
                                        tl_sem_inc(tl, src, is_a ? SEM_A : SEM_B, 1);
                                tl_recv_into(tl, v, src, is_a ? TAG_A : TAG_B);
                        } else {
                                int n = is_a ? q.a_cols : q.b_rows;
                                /* Every receiver's page is free (noc_semaphore_wait,
                                 * then noc_semaphore_set back to 0). */
                                if (n > 0 && g->handshake) {
                                        tl_sem_wait(tl, is_a ? SEM_A : SEM_B, n);
                                        tl_sem_set(tl, is_a ? SEM_A : SEM_B, 0);
                                }
                                /* The row's first n + 1 columns but the sender. */
                                if (n > 0 && is_a)
                                        tl_mcast(tl, p->y, g->a_shard_w ? 0 : 1, 1,
                                                 g->a_shard_w ? n + 1 : n, v, TAG_A);
                                else if (n > 0)
                                        tl_mcast(tl, 1, p->x, n, 1, v, TAG_B);
                        }
                        tl_cb_push_back(tl, cb);
                }
                if (is_a || g->out_l1)
                        continue;
                tl_tensor *out = tl_cb_wait_front(tl, p->cb_out);
                tl_store(tl, block(tl, g->c, q.r0, q.c0, q.mr, q.nc),
                         block(tl, out, 0, 0, q.mr, q.nc));
                tl_cb_pop_front(tl, p->cb_out);
        }
}

static void reader_a(tl_ctx *tl, void *argp)
{
        reader(tl, argp, true);
}

static void reader_b(tl_ctx *tl, void *argp)
{
        reader(tl, argp, false);
}

/* The compute kernel: each part's K blocks multiplied onto its out block
 * as they arrive; the first writes it, every later one accumulates onto
 * it (tl_composite's accumulate: Tensix's packer accumulates into L1,
 * tt-metal's packer_l1_acc), in subblocks of at most 8 tiles. */
static void compute(tl_ctx *tl, const struct mm_pe *p)
{
        const struct mm_args *g = p->g;
        struct part q;
        for (int64_t i = -1; next_part(p, &i, &q);) {
                tl_tensor *acc = g->out_l1 ? p->acc : tl_cb_reserve_back(tl, p->cb_out);
                /* The part's views live until its end; the end also
                 * waits for its store before acc is reused. */
                tl_scratch_scope_begin(tl);
                tl_tensor *acc_v = block(tl, acc, 0, 0, q.mr, q.nc);
                for (int64_t b = 0; b < p->nb; b++) {
                        int64_t k0 = b * g->kw * TILE, kn = k_len(g, b);
                        tl_tensor *pa = tl_cb_wait_front(tl, p->cb_a);
                        tl_tensor *pb = tl_cb_wait_front(tl, p->cb_b);
                        tl_scratch_scope_begin(tl);
                        /* A sender of an operand in L1 multiplies its shard in place. */
                        tl_tensor *ab = p->x == a_sender(g, b) && !g->a_dram
                                                ? block(tl, g->a, q.r0, k0, q.mr, kn)
                                                : block(tl, pa, 0, 0, q.mr, kn);
                        tl_tensor *bb = p->y == 0 && !g->b_dram
                                                ? block(tl, g->b, k0, q.c0, kn, q.nc)
                                                : block(tl, pb, 0, 0, kn, q.nc);
                        bool bias = b && !g->l1_acc;
                        tl_handle h = tl_composite(tl, &(tl_composite_desc){
                                .op = TL_GEMM, .a = ab, .b = bb, .out = acc_v,
                                .accumulate = b && g->l1_acc,
                                .epilogue = bias ? (tl_epilogue[]){ { .op = TL_BIAS,
                                                                      .tensor = acc_v } }
                                                 : NULL,
                                .n_epilogue = bias ? 1 : 0,
                                .tile_m = g->sbh * TILE, .tile_n = g->sbw * TILE,
                                .tile_k = kn });
                        tl_wait(tl, h);
                        tl_scratch_scope_end(tl);
                        tl_cb_pop_front(tl, p->cb_a);
                        tl_cb_pop_front(tl, p->cb_b);
                }
                if (g->out_l1)
                        tl_store(tl, block(tl, g->c, q.r0, q.c0, q.mr, q.nc), acc_v);
                tl_scratch_scope_end(tl);
                if (!g->out_l1)
                        tl_cb_push_back(tl, p->cb_out);
        }
}

/* A page of an operand's buffer: its K block for the out block, or (a
 * sender of an operand in L1, which multicasts its shard in place) one
 * element, the buffer then only pacing the reader against the compute. */
static tl_cb *operand_cb(tl_ctx *tl, const char *name, const struct mm_args *g, bool in_place,
                         int64_t rows, int64_t cols)
{
        int64_t page[2] = { in_place ? 1 : rows, in_place ? 1 : cols };
        return tl_cb_make(tl, name, g->dt, 2, page, g->buffers);
}

static void tt_matmul(tl_ctx *tl, const void *argp)
{
        const struct mm_args *g = argp;
        int cols = tl_mesh_dim(tl, 0);
        int pe = tl_program_id(tl, 0);
        if (tl_program_id(tl, 1) != 0 || tl_program_id(tl, 2) != 0)
                return;
        int x = pe % cols, y = pe / cols;
        if (x >= g->gx || y >= g->gy)
                return;
        int64_t oh = g->obh * TILE, ow = g->obw * TILE, kw = g->kw * TILE;
        struct mm_pe p = { .g = g, .x = x, .y = y, .a_src = tl_rank(tl, y * cols, 0, 0),
                           .b_src = tl_rank(tl, x, 0, 0), .nb = cdiv(cdiv(g->k, TILE), g->kw),
                           .rows = min64(g->pcm * TILE, g->m - (int64_t)y * g->pcm * TILE),
                           .cols = min64(g->pcn * TILE, g->n - (int64_t)x * g->pcn * TILE) };
        p.cb_a = operand_cb(tl, "in0", g, x == 0 && !g->a_dram && !g->a_shard_w, oh, kw);
        p.cb_b = operand_cb(tl, "in1", g, y == 0 && !g->b_dram, kw, ow);
        int64_t out_shape[2] = { oh, ow };
        if (g->out_l1)
                p.acc = tl_alloc(tl, TL_TCM, g->acc_dt, 2, out_shape);
        else
                p.cb_out = tl_cb_make(tl, "out", g->acc_dt, 2, out_shape, g->out_pages);
        /* tt-metal's kernels: in0's reader on the second data-movement core
         * (RISCV_1, NoC 1), in1's reader and the writer on the first (RISCV_0,
         * NoC 0), compute here. */
        tl_thread_start(tl, reader_a, &p, sizeof p);
        tl_thread_start(tl, reader_b, &p, sizeof p);
        compute(tl, &p);
}

TL_KERNEL(tt_matmul, mm,
          "C = A . B as tt-metal's 2D-multicast blocked matmul on a grid of PEs",
          "inputs a.npy [m, k], b.npy [k, n]; output c.npy [m, n]");
