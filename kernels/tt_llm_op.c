/* kernels/tt_llm_op.c: one device program of a decoder as tt-transformers
 * runs it on a Tenstorrent grid (tt_llm.h; host side tt_llm_setup.c).
 * A decode iteration or a prefill is a sequence of these launches, each
 * paying the machine's program cost (pe.cpu.program_ns) on its own; the
 * bench validate-tt-llm strings them together (docs/adr/0030).
 *
 *   mm_dram      ttnn's DRAM-sharded matmul (decode): the weight [K, N]
 *                is split by columns over the DRAM channels, one shard per
 *                bank, and worker c sits at channel c's attach point and
 *                reads only its bank; in0 [m, K] is width-sharded over
 *                `shards` cores of the grid, which send their shards to
 *                every worker; each worker walks K in steps of kb rows
 *                (in0_block_w), the next two steps' weights in flight
 *                while this one multiplies, accumulating in L1.
 *                shards and kb are tt-transformers' dram_matmul_config:
 *                the most cores (<= 64) dividing K's and N's tiles, and
 *                the largest in0_block_w <= 8 tiles dividing a shard.
 *   mm_ring      the llama3_70b_galaxy demo's decode matmul (matmul_1d_ring
 *                with the prefetcher's global circular buffer): a ring of
 *                `workers` cores (the DRAM channels x the receivers a
 *                reader feeds), each holding [K, N / ring] of the weight
 *                in its L1 and K / ring columns of in0; the in0 pieces go
 *                round the ring, each core sending the piece it holds on
 *                while it multiplies it by its weight rows, ring steps in
 *                all.
 *   prefetch     the demo's prefetcher for one weight: each DRAM reader
 *                (a core of its own near its channel) streams its bank's
 *                [K, N / channels], by receiver, in steps of K / ring rows into the L1
 *                of its receivers, in turn.
 *   norm, add, silu_mul, rotary, copy
 *                tile-wise ops on the compute grid: the [rows, cols]
 *                operands' 32 x 32 tiles split evenly over the grid's
 *                cores, each core loading its tiles from DRAM, applying
 *                the op's vector-unit steps and writing the result back
 *                (RMSNorm's row statistic is taken over a core's block of
 *                a row: the time of the distributed norm, not its values).
 *   sdpa_decode  flash-decode: each (user, KV head) pair's cached keys
 *                split in chunks over the grid's cores, the group's query
 *                heads padded to one tile of rows; each core keeps an
 *                online softmax over its chunks, and the first core of a
 *                pair merges the others' states.
 *   sdpa_prefill causal attention of the prompt: (user, query head,
 *                TT_Q_CHUNK rows) items over the cores, each over the keys
 *                it sees. */
#include "gqa_common.h"
#include "tt_llm.h"

enum { TAG_GATHER = 10, TAG_MERGE = 20 };

static tl_tensor *view2(tl_ctx *tl, tl_tensor *t, int64_t r, int64_t c, int64_t nr, int64_t nc)
{
        return tl_view(tl, t, ((int64_t[]){ r, c }), ((int64_t[]){ nr, nc }));
}

/* Index of this PE in the compute grid (row-major), or -1 outside it. */
static int grid_index(tl_ctx *tl, const struct tt_op_args *a)
{
        if (tl_program_id(tl, 1) != 0 || tl_program_id(tl, 2) != 0)
                return -1;
        int cols = tl_mesh_dim(tl, 0), pe = tl_program_id(tl, 0);
        int x = pe % cols, y = pe / cols;
        return x < a->grid_x && y < a->grid_y ? y * a->grid_x + x : -1;
}

/* The rank of grid core g. */
static int grid_rank(tl_ctx *tl, const struct tt_op_args *a, int64_t g)
{
        int cols = tl_mesh_dim(tl, 0);
        return tl_rank(tl, (int)(g / a->grid_x) * cols + (int)(g % a->grid_x), 0, 0);
}

/* The PE of DRAM worker c: at its channel's attach point, else PE c. */
static int worker_pe(tl_ctx *tl, int c)
{
        int pe = tl_hbm_channel_pe(tl, c);
        return pe < 0 ? c : pe;
}

/* ---- mm_dram -------------------------------------------------------------------------- */

/* The in0 shards' senders: grid cores 0 .. shards - 1, each holding K /
 * shards columns of in0, send them to every worker, once per pass over N. */
static void mm_send_in0(tl_ctx *tl, const struct tt_op_args *a, int64_t passes)
{
        int g = grid_index(tl, a);
        if (g < 0 || g >= a->shards)
                return;
        int64_t ks = a->k / a->shards;
        tl_tensor *mine = view2(tl, a->a, 0, g * ks, a->m, ks);
        for (int64_t p = 0; p < passes; p++)
                for (int i = 0; i < a->workers; i++)
                        tl_send(tl, tl_rank(tl, worker_pe(tl, i), 0, 0), mine, TAG_GATHER);
}

/* A worker's TCM: three weight blocks in rotation and the output block. */
struct mm_bufs {
        tl_tensor *buf[3];           /* [kb, nbw] weight dtype */
        tl_tensor *acc;              /* [m, nbw] fp32 */
};

/* Worker c: its bank's columns of the output. */
static void mm_worker(tl_ctx *tl, const struct tt_op_args *a, int c, const struct mm_bufs *mb)
{
        int64_t m = a->m, k = a->k, nw = a->n / a->workers, ks = k / a->shards, kb = a->kb;
        int64_t nbw = a->nb;
        tl_tensor *const *buf = mb->buf, *acc = mb->acc;
        tl_tensor *out = tl_reshape(tl, tl_view(tl, a->out, ((int64_t[]){ c, 0, 0 }),
                                                ((int64_t[]){ 1, m, nw })),
                                    2, ((int64_t[]){ m, nw }));
        int64_t steps = k / kb, per = ks / kb;
        tl_tensor *in0 = NULL;       /* the shard of in0 the step is in */
        for (int64_t n0 = 0; n0 < nw; n0 += nbw) {
                /* the output subblock, the compute padded to whole ones
                 * (nc columns; the weights' nn, as the in1 reader's) */
                int64_t nn = min64(nbw, nw - n0), nc;
                int64_t sub = tt_mm_subblock(nn / TT_TILE, &nc) * TT_TILE;
                nc *= TT_TILE;
                tl_tensor *acc_v = view2(tl, acc, 0, 0, m, nc);
                /* Weights two steps ahead, in three buffers in rotation (as
                 * ttnn's in1 circular buffer of three blocks). */
                for (int64_t s = 0; s < 2 && s < steps; s++)
                        tl_copy_to(tl, view2(tl, buf[s], 0, 0, kb, nn),
                                   view2(tl, a->w[c], s * kb, n0, kb, nn));
                for (int64_t s = 0; s < steps; s++) {
                        if (s + 2 < steps)
                                tl_copy_to(tl, view2(tl, buf[(s + 2) % 3], 0, 0, kb, nn),
                                           view2(tl, a->w[c], (s + 2) * kb, n0, kb, nn));
                        if (s % per == 0) {
                                tl_scratch_scope_begin(tl);
                                in0 = tl_recv(tl, grid_rank(tl, a, s / per), TAG_GATHER);
                        }
                        tl_wait(tl, tl_composite(tl, &(tl_composite_desc){
                                .op = TL_GEMM, .a = view2(tl, in0, 0, s % per * kb, m, kb),
                                .b = view2(tl, buf[s % 3], 0, 0, kb, nc), .out = acc_v,
                                .accumulate = s > 0, .tile_m = m, .tile_n = sub, .tile_k = kb }));
                        if ((s + 1) % per == 0)
                                tl_scratch_scope_end(tl);
                }
                tl_copy_to(tl, view2(tl, out, 0, n0, m, nn), view2(tl, acc, 0, 0, m, nn));
        }
}

static void mm_dram(tl_ctx *tl, const struct tt_op_args *a)
{
        int64_t nw = a->n / a->workers, nbw = a->nb;
        mm_send_in0(tl, a, (nw + nbw - 1) / nbw);
        if (tl_program_id(tl, 1) != 0 || tl_program_id(tl, 2) != 0)
                return;
        /* A PE at the attach point of several channels works for each. */
        struct mm_bufs mb = { { NULL, NULL, NULL }, NULL };
        for (int c = 0; c < a->workers; c++) {
                if (worker_pe(tl, c) != tl_program_id(tl, 0))
                        continue;
                if (!mb.acc) {
                        int64_t nbc = nbw + TT_MM_PAD;       /* with a padded subblock */
                        mb.acc = tl_alloc(tl, TL_TCM, TL_FP32, 2, ((int64_t[]){ a->m, nbc }));
                        for (int i = 0; i < 3; i++)
                                mb.buf[i] = tl_alloc(tl, TL_TCM, a->wdt, 2,
                                                     ((int64_t[]){ a->kb, nbc }));
                }
                mm_worker(tl, a, c, &mb);
        }
}

/* ---- mm_ring and prefetch ---------------------------------------------------------- */

enum { TAG_RING = 30, TAG_FILL = 31 };

/* The ring's core i: grid core i. */
static void mm_ring(tl_ctx *tl, const struct tt_op_args *a)
{
        int g = grid_index(tl, a), ring = a->workers;
        if (g < 0 || g >= ring)
                return;
        int64_t m = a->m, kb = a->kb, nb = a->nb;
        int64_t sub = tt_mm_subblock_dividing(nb / TT_TILE) * TT_TILE;
        tl_tensor *wl = tl_reshape(tl, tl_view(tl, a->wl, ((int64_t[]){ g, 0, 0 }),
                                                ((int64_t[]){ 1, a->k, nb })),
                                   2, ((int64_t[]){ a->k, nb }));
        tl_tensor *out = tl_reshape(tl, tl_view(tl, a->out, ((int64_t[]){ g, 0, 0 }),
                                                 ((int64_t[]){ 1, m, nb })),
                                    2, ((int64_t[]){ m, nb }));
        tl_tensor *cur = tl_reshape(tl, tl_view(tl, a->a, ((int64_t[]){ g, 0, 0 }),
                                                 ((int64_t[]){ 1, m, kb })),
                                    2, ((int64_t[]){ m, kb }));
        tl_tensor *acc = tl_alloc(tl, TL_TCM, TL_FP32, 2, ((int64_t[]){ m, nb }));
        int next = grid_rank(tl, a, (g + 1) % ring), prev = grid_rank(tl, a, (g + ring - 1) % ring);
        for (int s = 0; s < ring; s++) {
                int b = (g - s + ring) % ring;       /* the in0 piece held: K rows b * kb .. */
                if (s > 0) {
                        tl_scratch_scope_begin(tl);
                        cur = tl_recv(tl, prev, TAG_RING);
                }
                if (s + 1 < ring)
                        tl_send(tl, next, cur, TAG_RING);
                tl_wait(tl, tl_composite(tl, &(tl_composite_desc){
                        .op = TL_GEMM, .a = cur, .b = view2(tl, wl, b * kb, 0, kb, nb), .out = acc,
                        .accumulate = s > 0, .tile_m = m, .tile_n = sub, .tile_k = kb }));
                if (s > 0)
                        tl_scratch_scope_end(tl);
        }
        tl_copy_to(tl, out, acc);
}

/* Block i of reader c: K step i / per of receiver i % per's columns, a
 * row of the bank's tensor (its tiles are contiguous in the bank). */
static tl_tensor *fill_block(tl_ctx *tl, const struct tt_op_args *a, int c, int64_t i)
{
        int per = a->workers / a->shards;
        int64_t steps = a->k / a->kb;
        return view2(tl, a->w[c], i % per * steps + i / per, 0, 1, a->kb * a->nb);
}

/* The PEs of the readers, one a channel: its channel's attach point,
 * else (a PE a lower channel's reader took) the first free one below it
 * in its column: one reader a bank on a core of its own (the demo's
 * dram_cores and sender cores). */
static void reader_pes(tl_ctx *tl, const struct tt_op_args *a, int *pe)
{
        int cols = tl_mesh_dim(tl, 0), pes = cols * tl_mesh_dim(tl, 1);
        for (int c = 0; c < a->shards; c++) {
                pe[c] = worker_pe(tl, c);
                for (int tries = 0, d = 0; tries < pes && d < c; tries++) {
                        for (d = 0; d < c && pe[d] != pe[c]; d++)
                                ;
                        if (d < c)
                                pe[c] = (pe[c] + cols) % pes;
                }
        }
}

/* Reader c (at its PE, reader_pes) fills receivers c x per .. of the ring
 * in turn, a step of kb rows a message, its next two blocks' reads in
 * flight while one is sent (three L1 buffers in rotation); each receiver
 * takes its own. */
static void prefetch(tl_ctx *tl, const struct tt_op_args *a)
{
        int ch = a->shards, per = a->workers / ch, g = grid_index(tl, a), mine[64], n = 0, pe[64];
        reader_pes(tl, a, pe);
        int64_t items = a->k / a->kb * per, cw = a->n / ch / per;
        tl_tensor *buf[64][3];
        for (int c = 0; c < ch && tl_program_id(tl, 1) == 0 && tl_program_id(tl, 2) == 0; c++)
                if (pe[c] == tl_program_id(tl, 0)) {
                        for (int j = 0; j < 3; j++)
                                buf[n][j] = tl_alloc(tl, TL_TCM, a->wdt, 2,
                                                     ((int64_t[]){ 1, a->kb * cw }));
                        mine[n++] = c;
                }
        for (int j = 0; j < n; j++)
                for (int64_t i = 0; i < 2 && i < items; i++)
                        tl_copy_to(tl, buf[j][i], fill_block(tl, a, mine[j], i));
        for (int64_t i = 0; i < items; i++)
                for (int j = 0; j < n; j++) {
                        if (i + 2 < items)
                                tl_copy_to(tl, buf[j][(i + 2) % 3],
                                           fill_block(tl, a, mine[j], i + 2));
                        tl_send(tl, grid_rank(tl, a, mine[j] * per + i % per), buf[j][i % 3],
                                TAG_FILL);
                }
        if (g < 0 || g >= a->workers)
                return;
        int src = tl_rank(tl, pe[g / per], 0, 0);
        for (int64_t s = 0; s < a->k / a->kb; s++) {
                tl_scratch_scope_begin(tl);
                tl_wait_tensor(tl, tl_recv(tl, src, TAG_FILL));
                tl_scratch_scope_end(tl);
        }
}

/* ---- tile-wise ops -------------------------------------------------------------------- */

/* The op's vector-unit steps on one block x (with the other inputs y, z). */
static tl_tensor *elt_body(tl_ctx *tl, const struct tt_op_args *a, tl_tensor *x, tl_tensor *y,
                           tl_tensor *z, tl_tensor *w)
{
        switch (a->op) {
        case TT_OP_NORM: {
                tl_tensor *inv = tl_rsqrt(tl, tl_add_scalar(tl, tl_mean(tl, tl_mul(tl, x, x), -1),
                                                            LLM_EPS));
                return tl_mul(tl, tl_mul(tl, x, inv), w);
        }
        case TT_OP_ADD:
                return tl_add(tl, x, y);
        case TT_OP_SILU_MUL:
                return tl_mul(tl, tl_silu(tl, x), y);
        case TT_OP_ROTARY:
                /* x . cos + rotate_half(x) . sin: rotate_half is a matmul by
                 * a fixed permutation tile in ttnn; here a product. */
                return tl_add(tl, tl_mul(tl, x, y), tl_mul(tl, x, z));
        default:
                return x;
        }
}

static void eltwise(tl_ctx *tl, const struct tt_op_args *a)
{
        int g = grid_index(tl, a);
        if (g < 0)
                return;
        int64_t tr = a->rows / TT_TILE, tc = a->cols / TT_TILE, lo, hi;
        gqa_split(tr * tc, a->grid_x * a->grid_y, g, &lo, &hi);
        for (int64_t t = lo; t < hi;) {
                int64_t r = t / tc, c = t % tc, w = min64(min64(TT_ELT_W, tc - c), hi - t);
                int64_t r0 = r * TT_TILE, c0 = c * TT_TILE, nc = w * TT_TILE;
                tl_scratch_scope_begin(tl);
                tl_tensor *in[3] = { NULL, NULL, NULL }, *wt = NULL;
                for (int i = 0; i < a->ins; i++)
                        in[i] = tl_load(tl, view2(tl, a->in[i], r0, c0, TT_TILE, nc));
                if (a->wrow)
                        wt = tl_load(tl, view2(tl, a->wrow, 0, c0, 1, nc));
                tl_store(tl, view2(tl, a->out, r0, c0, TT_TILE, nc),
                         elt_body(tl, a, in[0], in[1], in[2], wt));
                tl_scratch_scope_end(tl);
                t += w;
        }
}

/* ---- SDPA ----------------------------------------------------------------------------- */

/* A core's online-softmax state in TCM. */
struct sdpa_state {
        tl_tensor *q;                /* [rows, D] the item's queries */
        tl_tensor *kb[2];            /* [TT_KV_CHUNK, D] key chunks, double-buffered */
        tl_tensor *m, *l, *o;        /* [rows, 1], [rows, 1], [rows, D] */
};

static void state_alloc(tl_ctx *tl, const struct tt_op_args *a, int64_t rows, struct sdpa_state *st)
{
        int64_t d = a->d;
        st->q = tl_alloc(tl, TL_TCM, TL_BF16, 2, ((int64_t[]){ rows, d }));
        for (int i = 0; i < 2; i++)
                st->kb[i] = tl_alloc(tl, TL_TCM, a->kvdt, 2, ((int64_t[]){ TT_KV_CHUNK, d }));
        st->m = tl_alloc(tl, TL_TCM, TL_FP32, 2, ((int64_t[]){ rows, 1 }));
        st->l = tl_alloc(tl, TL_TCM, TL_FP32, 2, ((int64_t[]){ rows, 1 }));
        st->o = tl_alloc(tl, TL_TCM, TL_FP32, 2, ((int64_t[]){ rows, d }));
}

/* Queries q_src [n, D], scaled by 1 / sqrt(D), into the state, which
 * starts empty; then keys [k0, k1) of (b, h), query row r at position
 * qpos + r seeing keys up to it (prefill; qpos < 0: every key). */
static void attend(tl_ctx *tl, const struct tt_op_args *a, struct sdpa_state *st,
                   tl_tensor *q_src, int64_t b, int64_t h, int64_t k0, int64_t k1, int64_t qpos)
{
        int64_t n = tl_dim(q_src, 0), d = a->d;
        tl_scratch_scope_begin(tl);
        tl_copy_to(tl, view2(tl, st->q, 0, 0, n, d), tl_scale(tl, q_src, a->scale));
        tl_copy_to(tl, view2(tl, st->m, 0, 0, n, 1),
                   tl_fill(tl, TL_FP32, 2, ((int64_t[]){ n, 1 }), GQA_NEG_BIG));
        tl_copy_to(tl, view2(tl, st->l, 0, 0, n, 1),
                   tl_fill(tl, TL_FP32, 2, ((int64_t[]){ n, 1 }), 0.0f));
        tl_copy_to(tl, view2(tl, st->o, 0, 0, n, d),
                   tl_fill(tl, TL_FP32, 2, ((int64_t[]){ n, d }), 0.0f));
        tl_scratch_scope_end(tl);
        if (k1 <= k0)
                return;
        tl_tensor *q = view2(tl, st->q, 0, 0, n, d), *m = view2(tl, st->m, 0, 0, n, 1);
        tl_tensor *l = view2(tl, st->l, 0, 0, n, 1), *o = view2(tl, st->o, 0, 0, n, d);
        int cur = 0;
        tl_copy_to(tl, view2(tl, st->kb[0], 0, 0, min64(TT_KV_CHUNK, k1 - k0), d),
                   gqa_head_rows(tl, a->kc, b, h, k0, min64(TT_KV_CHUNK, k1 - k0)));
        for (int64_t j = k0; j < k1; j += TT_KV_CHUNK) {
                int64_t e = min64(j + TT_KV_CHUNK, k1);
                if (e < k1)
                        tl_copy_to(tl, view2(tl, st->kb[1 - cur], 0, 0, min64(TT_KV_CHUNK, k1 - e), d),
                                   gqa_head_rows(tl, a->kc, b, h, e, min64(TT_KV_CHUNK, k1 - e)));
                tl_scratch_scope_begin(tl);
                tl_tensor *s = tl_dot(tl, q, view2(tl, st->kb[cur], 0, 0, e - j, d), true);
                if (qpos >= 0 && e - 1 > qpos)
                        s = tl_mask_causal(tl, s, qpos - j);
                tl_wait(tl, tl_softmax_merge(tl, s, gqa_head_rows(tl, a->vc, b, h, j, e - j), m, l, o));
                tl_scratch_scope_end(tl);
                cur = 1 - cur;
        }
}

/* Merge the partial state (mb, lb, ob) into st's first n rows. */
static void merge_state(tl_ctx *tl, struct sdpa_state *st, int64_t n, int64_t d, tl_tensor *mb,
                        tl_tensor *lb, tl_tensor *ob)
{
        tl_tensor *m = view2(tl, st->m, 0, 0, n, 1), *l = view2(tl, st->l, 0, 0, n, 1);
        tl_tensor *o = view2(tl, st->o, 0, 0, n, d);
        gqa_merge_into(tl, m, l, o, mb, lb, ob);
}

static void write_out(tl_ctx *tl, struct sdpa_state *st, tl_tensor *dst, int64_t n, int64_t d)
{
        tl_scratch_scope_begin(tl);
        tl_store(tl, dst, tl_div(tl, view2(tl, st->o, 0, 0, n, d),
                                 tl_add_scalar(tl, view2(tl, st->l, 0, 0, n, 1), GQA_TINY)));
        tl_scratch_scope_end(tl);
}

static void sdpa_decode(tl_ctx *tl, const struct tt_op_args *a)
{
        int g = grid_index(tl, a);
        if (g < 0)
                return;
        int64_t cores = (int64_t)a->grid_x * a->grid_y, units = a->batch * a->hkv;
        int64_t chunks = (a->keys + TT_KV_CHUNK - 1) / TT_KV_CHUNK, d = a->d;
        int64_t splits = max64(1, min64(cores / units, chunks));
        struct sdpa_state st;
        state_alloc(tl, a, TT_TILE, &st);
        for (int64_t w = g; w < units * splits; w += cores) {
                int64_t u = w / splits, part = w % splits, b = u / a->hkv, h = u % a->hkv, k0, k1;
                gqa_split(chunks, splits, part, &k0, &k1);
                k0 *= TT_KV_CHUNK;
                k1 = min64(k1 * TT_KV_CHUNK, a->keys);
                tl_scratch_scope_begin(tl);
                attend(tl, a, &st, tl_load(tl, gqa_head_rows(tl, a->q, b, h, 0, TT_TILE)), b, h, k0,
                       k1, -1);
                int root = grid_rank(tl, a, u * splits % cores);
                if (part > 0) {
                        tl_send(tl, root, view2(tl, st.m, 0, 0, TT_TILE, 1), TAG_MERGE);
                        tl_send(tl, root, view2(tl, st.l, 0, 0, TT_TILE, 1), TAG_MERGE + 1);
                        tl_send(tl, root, view2(tl, st.o, 0, 0, TT_TILE, d), TAG_MERGE + 2);
                } else {
                        for (int64_t p = 1; p < splits; p++) {
                                int src = grid_rank(tl, a, (u * splits + p) % cores);
                                tl_scratch_scope_begin(tl); /* one partial at a time */
                                tl_tensor *mb = tl_recv(tl, src, TAG_MERGE);
                                tl_tensor *lb = tl_recv(tl, src, TAG_MERGE + 1);
                                merge_state(tl, &st, TT_TILE, d, mb, lb,
                                            tl_recv(tl, src, TAG_MERGE + 2));
                                tl_scratch_scope_end(tl);
                        }
                        write_out(tl, &st, gqa_head_rows(tl, a->o, b, h, 0, TT_TILE), TT_TILE, d);
                }
                tl_scratch_scope_end(tl);
        }
}

static void sdpa_prefill(tl_ctx *tl, const struct tt_op_args *a)
{
        int g = grid_index(tl, a);
        if (g < 0)
                return;
        int64_t cores = (int64_t)a->grid_x * a->grid_y, s = a->keys, d = a->d;
        int64_t chunks = (s + TT_Q_CHUNK - 1) / TT_Q_CHUNK, items = a->batch * a->hq * chunks;
        int64_t group = a->hq / a->hkv;
        struct sdpa_state st;
        state_alloc(tl, a, TT_Q_CHUNK, &st);
        for (int64_t w = g; w < items; w += cores) {
                int64_t b = w / (a->hq * chunks), qh = w / chunks % a->hq;
                int64_t i0 = w % chunks * TT_Q_CHUNK, n = min64(TT_Q_CHUNK, s - i0);
                tl_scratch_scope_begin(tl);
                attend(tl, a, &st, tl_load(tl, gqa_head_rows(tl, a->q, b, qh, i0, n)), b, qh / group,
                       0, i0 + n, i0);
                write_out(tl, &st, gqa_head_rows(tl, a->o, b, qh, i0, n), n, d);
                tl_scratch_scope_end(tl);
        }
}

static void tt_llm_op(tl_ctx *tl, const void *argp)
{
        const struct tt_op_args *a = argp;
        switch (a->op) {
        case TT_OP_MM_DRAM:
                mm_dram(tl, a);
                return;
        case TT_OP_SDPA_DECODE:
                sdpa_decode(tl, a);
                return;
        case TT_OP_SDPA_PREFILL:
                sdpa_prefill(tl, a);
                return;
        case TT_OP_MM_RING:
                mm_ring(tl, a);
                return;
        case TT_OP_PREFETCH:
                prefetch(tl, a);
                return;
        default:
                eltwise(tl, a);
        }
}

TL_KERNEL(tt_llm_op, tt_op,
          "one device program of a decoder as tt-transformers runs it on a Tenstorrent grid "
          "(DRAM-sharded matmul, RMSNorm, add, silu*mul, rotary, copy, SDPA decode/prefill; the "
          "llama3_70b_galaxy demo's ring matmul from L1 and its weight prefetcher)",
          "op mm_dram: inputs a.npy [workers, m, k] (L1-sharded), w0.npy .. [k, n / workers] "
          "(one DRAM channel each); output out.npy [workers, m, n / workers]. Tile-wise ops: "
          "x0.npy .. [rows, cols] (norm: weight.npy [1, cols]); out.npy [rows, cols]. "
          "sdpa_decode: q.npy [batch, kv_heads, 32, head_dim], k.npy, v.npy [batch, kv_heads, "
          "keys, head_dim]; o.npy like q. sdpa_prefill: q.npy [batch, q_heads, keys, head_dim], "
          "k.npy and v.npy [batch, kv_heads, keys, head_dim]; o.npy like q. mm_ring: a.npy "
          "[ring, m, k / ring], w.npy [ring, k, n / ring] (L1); out.npy [ring, m, n / ring]. "
          "prefetch: w0.npy .. [receivers x k / kb, kb x n / ring] (one DRAM channel each, a "
          "row a K step of kb = k / ring rows of a receiver's columns)");
