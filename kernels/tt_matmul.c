/* kernels/tt_matmul.c: C = A . B as tt-metal's 2D-multicast blocked matmul
 * (matmul_2d) runs it on a Tenstorrent grid.
 *
 * The grid is grid_x columns by grid_y rows of PEs from the NoC's corner
 * (row 0, col 0) of cube 0. Each PE owns an output block of per_core_m x
 * per_core_n 32x32 tiles, (grid row y, grid column x). K is walked in
 * blocks of in0_block_w tiles: for each block the PE in grid column 0 of
 * row y sends A's block of that row to the rest of the row with one
 * multicast, and the PE in grid row 0 of column x sends B's block of that
 * column down the column; every PE multiplies the two blocks onto its
 * output block, which stays in TCM (L1) for the whole walk: the first K
 * block writes it, every later one accumulates onto it (tl_composite's
 * accumulate: Tensix's packer accumulates into L1, tt-metal's
 * packer_l1_acc), in subblocks of at most 8 tiles, the tiles the matrix
 * unit's Dst registers hold. Senders run one block ahead of their own
 * compute (double buffering): a block is on its way while the previous one
 * is multiplied.
 *
 * The program config is tt-metal's MatmulMultiCoreReuseMultiCastProgramConfig
 * as its GEMM benchmark derives it (tests/ttnn/unit_tests/benchmarks/
 * test_benchmark.py in tenstorrent/tt-metal): per_core_M x per_core_N the
 * PE's output block; in0_block_w = K's tiles / grid_x / in0_block_w_div;
 * out_block_h x out_block_w = the output block / num_out_blocks (each out
 * block walks K on its own, so A and B are read once per out block); the
 * subblock the first of tt-metal's choices (4x2, 2x4, 8x1, ...) that
 * divides the out block. By default the blocks are as large as fit: one
 * out block if its accumulator and buffers fit in TCM, else 2 x 2, 4 x 4,
 * ...; in0_block_w_div the smallest power of two that fits. The
 * parameters override each choice.
 *
 * Where operands live: in0/in1 = l1 means the tensor starts sharded in the
 * TCM (L1) of the PEs that send it (consumed in place); dram means it is
 * interleaved over the DRAM channels (the sender reads each block into a
 * TCM buffer, three of them in rotation). out = l1 leaves C sharded in the
 * owners' TCM; dram writes it to DRAM. dtype applies to A, B and C.
 *
 * Inputs a.npy [m, k], b.npy [k, n]; output c.npy [m, n]. fidelity sets
 * the GEMM engine's passes per matrix step for the launch. */
#include <cubesim/tl.h>

#define TILE 32
#define TAG_A 1
#define TAG_B 2

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
        { "grid_x", TL_PARAM_INT, 0, 0, 1024, NULL, "grid columns (0: the compute grid's)" },
        { "grid_y", TL_PARAM_INT, 0, 0, 1024, NULL, "grid rows (0: the compute grid's)" },
        { "in0_block_w", TL_PARAM_INT, 0, 0, 1024, NULL,
          "K block in tiles (0: K's tiles / grid_x / in0_block_w_div, a divisor of K's tiles)" },
        { "in0_block_w_div", TL_PARAM_INT, 0, 0, 1024, NULL,
          "divides the K block (0: the smallest power of two whose blocks fit in TCM)" },
        { "out_block_h", TL_PARAM_INT, 0, 0, 1 << 16, NULL,
          "out block rows in tiles (0: the PE's output block, halved until it fits)" },
        { "out_block_w", TL_PARAM_INT, 0, 0, 1 << 16, NULL,
          "out block columns in tiles (0: the PE's output block, halved until it fits)" },
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

/* What PE (0, 0) holds beside scratch: from DRAM three buffers of each
 * operand block it sends, and the out block's accumulator; and what a
 * receiver holds in scratch: one block of each operand. */
static void tcm_needs(const struct mm_args *g, uint64_t *bufs, uint64_t *acc, uint64_t *recv)
{
        int64_t oh = g->obh * TILE, ow = g->obw * TILE, kw = g->kw * TILE;
        *bufs = (g->a_dram ? 3 * tl_dtype_bytes(g->dt, oh * kw, kw) : 0) +
                (g->b_dram ? 3 * tl_dtype_bytes(g->dt, kw * ow, ow) : 0);
        *acc = tl_dtype_bytes(g->acc_dt, oh * ow, ow);
        int64_t mr = min64(oh, g->m), kn = min64(kw, g->k), nc = min64(ow, g->n);
        *recv = (g->gx > 1 ? tl_dtype_bytes(g->dt, mr * kn, kn) : 0) +
                (g->gy > 1 ? tl_dtype_bytes(g->dt, kn * nc, nc) : 0);
}

static bool fits(tl_machine mc, const struct mm_args *g)
{
        uint64_t bufs, acc, recv;
        tcm_needs(g, &bufs, &acc, &recv);
        return bufs + acc <= (uint64_t)mc.tcm_alloc_bytes && recv <= (uint64_t)mc.scratch_bytes;
}

/* The blocks, checked against the machine before the launch (a run would
 * fail on its first PE). */
static void check_tcm(tl_setup *s, const struct mm_args *g, tl_machine mc)
{
        uint64_t bufs, acc, recv;
        tcm_needs(g, &bufs, &acc, &recv);
        if (bufs + acc > (uint64_t)mc.tcm_alloc_bytes)
                tl_setup_error(s, "in0_block_w %lld x out_block_h %lld x out_block_w %lld (tiles): "
                               "PE 0 needs %llu bytes of TCM (%llu of DRAM buffers, %llu of "
                               "accumulator), more than the %lld beside scratch; make the blocks "
                               "smaller", (long long)g->kw, (long long)g->obh, (long long)g->obw,
                               (unsigned long long)(bufs + acc), (unsigned long long)bufs,
                               (unsigned long long)acc, (long long)mc.tcm_alloc_bytes);
        if (recv > (uint64_t)mc.scratch_bytes)
                tl_setup_error(s, "in0_block_w %lld x out_block_h %lld x out_block_w %lld (tiles): "
                               "a receiver's blocks need %llu bytes of scratch, more than the "
                               "%lld ceiling; make the blocks smaller", (long long)g->kw,
                               (long long)g->obh, (long long)g->obw, (unsigned long long)recv,
                               (long long)mc.scratch_bytes);
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

/* The program config: what the parameters set, the rest as large as fits
 * (the fewest out blocks, then the smallest in0_block_w_div). */
static void derive_blocks(tl_setup *s, struct mm_args *g, int64_t kt, tl_machine mc)
{
        int64_t kw = tl_setup_int(s, "in0_block_w"), div = tl_setup_int(s, "in0_block_w_div");
        int64_t bh = tl_setup_int(s, "out_block_h"), bw = tl_setup_int(s, "out_block_w");
        for (int64_t nob = 1;; nob *= 2) {
                g->obh = bh ? min64(bh, g->pcm) : cdiv(g->pcm, nob);
                g->obw = bw ? min64(bw, g->pcn) : cdiv(g->pcn, nob);
                for (int64_t d = div ? div : 1; d <= (div ? div : kt); d *= 2) {
                        g->kw = kw ? kw : k_block(kt, g->gx, d);
                        if (kw || fits(mc, g))
                                break;
                }
                bool last = (bh || g->obh == 1) && (bw || g->obw == 1);
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
        g->gx = (int)tl_setup_int(s, "grid_x");
        g->gy = (int)tl_setup_int(s, "grid_y");
        if (!g->gx)
                g->gx = tl_setup_grid(s, 0);
        if (!g->gy)
                g->gy = tl_setup_grid(s, 1);
        if (g->gx > tl_setup_mesh_dim(s, 0) || g->gy > tl_setup_mesh_dim(s, 1))
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
        g->a_dram = tl_setup_choice(s, "in0") == 1;
        g->b_dram = tl_setup_choice(s, "in1") == 1;
        g->out_l1 = tl_setup_choice(s, "out") == 0;
        tl_machine mc = tl_setup_machine(s);
        derive_blocks(s, g, kt, mc);
        if (g->kw > kt)
                tl_setup_error(s, "in0_block_w (%lld) must be at most K's tiles (%lld: k %lld / "
                               "%d, rounded up)", (long long)g->kw, (long long)kt,
                               (long long)g->k, TILE);
        else
                check_tcm(s, g, mc);
        pick_subblock(g, fp32);
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

/* One operand stream of an output part: the sender's side. Blocks are
 * multicast one ahead of the sender's compute; from DRAM they are read two
 * ahead into three TCM buffers in rotation. */
struct stream {
        tl_tensor *src;              /* the launch tensor */
        bool dram;                   /* read from DRAM into buf */
        bool is_a;                   /* A (blocks of rows) or B (blocks of columns) */
        int64_t r0, c0;              /* the part's first row (A) or column (B), elements */
        int64_t len;                 /* its rows (A) or columns (B), elements */
        tl_tensor *buf[3];           /* DRAM: TCM buffers */
        int row0, col0, n_rows, n_cols; /* the multicast's rectangle */
        int tag;                     /* its tag */
};

/* Block b of a stream as a local tensor: in place (L1) or in its buffer. */
static tl_tensor *stream_block(tl_ctx *tl, struct stream *st, const struct mm_args *g, int64_t b,
                               bool fetch)
{
        int64_t k0 = b * g->kw * TILE, kn = min64(g->kw * TILE, g->k - k0);
        tl_tensor *v = st->is_a ? block(tl, st->src, st->r0, k0, st->len, kn)
                                : block(tl, st->src, k0, st->c0, kn, st->len);
        if (!st->dram)
                return v;
        tl_tensor *buf = st->buf[b % 3];
        tl_tensor *dst = st->is_a ? block(tl, buf, 0, 0, st->len, kn)
                                  : block(tl, buf, 0, 0, kn, st->len);
        if (fetch)
                tl_copy_to(tl, dst, v);
        return dst;
}

static void stream_send(tl_ctx *tl, struct stream *st, tl_tensor *t)
{
        if (st->n_rows > 0 && st->n_cols > 0)
                tl_mcast(tl, st->row0, st->col0, st->n_rows, st->n_cols, t, st->tag);
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
        int a_src = tl_rank(tl, y * cols, 0, 0), b_src = tl_rank(tl, x, 0, 0);
        int64_t nb = cdiv(cdiv(g->k, TILE), g->kw), kw = g->kw * TILE;
        int64_t rows = min64(g->pcm * TILE, g->m - (int64_t)y * g->pcm * TILE);
        int64_t ncols = min64(g->pcn * TILE, g->n - (int64_t)x * g->pcn * TILE);
        tl_dtype dt = tl_dtype_of(g->a);
        struct stream sa = { .src = g->a, .dram = g->a_dram, .is_a = true, .row0 = y, .col0 = 1,
                             .n_rows = 1, .n_cols = g->gx - 1, .tag = TAG_A };
        struct stream sb = { .src = g->b, .dram = g->b_dram, .is_a = false, .row0 = 1, .col0 = x,
                             .n_rows = g->gy - 1, .n_cols = 1, .tag = TAG_B };
        bool send_a = x == 0, send_b = y == 0;
        int64_t oh = g->obh * TILE, ow = g->obw * TILE;
        for (int i = 0; i < 3; i++) {
                if (send_a && sa.dram)
                        sa.buf[i] = tl_alloc(tl, TL_TCM, dt, 2, ((int64_t[]){ oh, kw }));
                if (send_b && sb.dram)
                        sb.buf[i] = tl_alloc(tl, TL_TCM, dt, 2, ((int64_t[]){ kw, ow }));
        }
        tl_tensor *acc = tl_alloc(tl, TL_TCM, g->acc_dt, 2, ((int64_t[]){ oh, ow }));
        int64_t parts_m = cdiv(g->pcm, g->obh), parts_n = cdiv(g->pcn, g->obw);
        for (int64_t pi = 0; pi < parts_m; pi++) {
                for (int64_t pj = 0; pj < parts_n; pj++) {
                        int64_t r0 = (int64_t)y * g->pcm * TILE + pi * oh;
                        int64_t c0 = (int64_t)x * g->pcn * TILE + pj * ow;
                        int64_t mr = min64(oh, rows - pi * oh), nc = min64(ow, ncols - pj * ow);
                        /* An empty part: no PE to its left (above) has data
                         * for it, so there is nothing to receive. */
                        if (mr <= 0 || nc <= 0)
                                continue;
                        sa.r0 = r0;
                        sa.len = mr;
                        sb.c0 = c0;
                        sb.len = nc;
                        /* Multicast only to the PEs whose part is not empty:
                         * a prefix of the grid's columns (rows). */
                        sa.n_cols = (int)min64(g->gx, cdiv(g->n - pj * ow, g->pcn * TILE)) - 1;
                        sb.n_rows = (int)min64(g->gy, cdiv(g->m - pi * oh, g->pcm * TILE)) - 1;
                        /* The part's views live until its end; the end also
                         * waits for its store before acc is reused. */
                        tl_scratch_scope_begin(tl);
                        tl_tensor *acc_v = block(tl, acc, 0, 0, mr, nc);
                        tl_tensor *next_a = NULL, *next_b = NULL;
                        if (send_a) {
                                next_a = stream_block(tl, &sa, g, 0, true);
                                if (nb > 1)
                                        stream_block(tl, &sa, g, 1, true);
                                stream_send(tl, &sa, next_a);
                        }
                        if (send_b) {
                                next_b = stream_block(tl, &sb, g, 0, true);
                                if (nb > 1)
                                        stream_block(tl, &sb, g, 1, true);
                                stream_send(tl, &sb, next_b);
                        }
                        for (int64_t b = 0; b < nb; b++) {
                                tl_tensor *cur_a = next_a, *cur_b = next_b;
                                /* Senders: block b+1 goes out (then b+2 is read)
                                 * before block b is multiplied. */
                                if (send_a && b + 1 < nb) {
                                        next_a = stream_block(tl, &sa, g, b + 1, false);
                                        stream_send(tl, &sa, next_a);
                                        if (b + 2 < nb)
                                                stream_block(tl, &sa, g, b + 2, true);
                                }
                                if (send_b && b + 1 < nb) {
                                        next_b = stream_block(tl, &sb, g, b + 1, false);
                                        stream_send(tl, &sb, next_b);
                                        if (b + 2 < nb)
                                                stream_block(tl, &sb, g, b + 2, true);
                                }
                                /* Received blocks live in scratch for one block. */
                                tl_scratch_scope_begin(tl);
                                tl_tensor *ab = send_a ? cur_a : tl_recv(tl, a_src, TAG_A);
                                tl_tensor *bb = send_b ? cur_b : tl_recv(tl, b_src, TAG_B);
                                /* Every block after the first adds onto the out
                                 * block: in place, or (packer_l1_acc 0) by a
                                 * vector-unit pass. */
                                int64_t kn = tl_dim(ab, 1);
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
                        }
                        tl_store(tl, block(tl, g->c, r0, c0, mr, nc), acc_v);
                        tl_scratch_scope_end(tl);
                }
        }
}

TL_KERNEL(tt_matmul, mm,
          "C = A . B as tt-metal's 2D-multicast blocked matmul on a grid of PEs",
          "inputs a.npy [m, k], b.npy [k, n]; output c.npy [m, n]");
