/* kernels/gqa_common.c: the GQA kernels' shared device code (see
 * gqa_common.h): what runs on the PEs: the online-softmax tile step and
 * state merge, the decode driver and the prefill driver, and the mapping
 * of work onto the machine. The host side (parameters, presets, tile
 * sizes, the shapes a PE cannot hold) is kernels/gqa_setup.c.
 *
 * Double buffering. K/V tiles are copied (tl_copy_to) from HBM into a ring
 * of `depth` TCM slots, `depth - 1` tiles ahead of the tile being computed,
 * so the DMA keeps streaming while PE_GEMM and PE_MATH work. The prefetch
 * is issued outside the tile's scratch scope: the scope's end waits only
 * for the tile's own ops. A slot is refilled only after the scope of the
 * tile that used it has ended.
 *
 * HBM tensors carry no readiness (cubesim/tl.h): a store to HBM makes no
 * later load wait. Every output block of o is written by exactly one PE,
 * and a partial state crosses PEs only through tl_send/tl_recv, which is
 * what orders the reduce. */
#include "gqa_common.h"

/* ---- arithmetic --------------------------------------------------------------- */

void gqa_split(int64_t total, int64_t n, int64_t i, int64_t *lo, int64_t *hi)
{
        *lo = total * i / n;
        *hi = total * (i + 1) / n;
}

/* ---- views ------------------------------------------------------------------------ */

static tl_tensor *rows_of(tl_ctx *tl, tl_tensor *t, int64_t n)
{
        return tl_view(tl, t, ((int64_t[]){ 0, 0 }), ((int64_t[]){ n, tl_dim(t, 1) }));
}

/* Keys [j0, j0 + n) of head h of batch b of k or v, as [n, D]. */
static tl_tensor *kv_rows(tl_ctx *tl, tl_tensor *x, int64_t b, int64_t h, int64_t j0, int64_t n)
{
        int64_t d = tl_dim(x, 3);
        tl_tensor *v = tl_view(tl, x, ((int64_t[]){ b, h, j0, 0 }), ((int64_t[]){ 1, 1, n, d }));
        return tl_reshape(tl, v, 2, ((int64_t[]){ n, d }));
}

/* Rows [i0, i0 + n) of heads [h0, h0 + hh) of batch b of q or o: [1, hh, n, D]. */
static tl_tensor *q_rows(tl_ctx *tl, tl_tensor *x, int64_t b, int64_t h0, int64_t hh, int64_t i0,
                         int64_t n)
{
        int64_t d = tl_dim(x, 3);
        return tl_view(tl, x, ((int64_t[]){ b, h0, i0, 0 }), ((int64_t[]){ 1, hh, n, d }));
}

/* The first n elements of a flat TCM buffer, shaped. */
static tl_tensor *flat_as(tl_ctx *tl, tl_tensor *flat, int nd, const int64_t *shape)
{
        int64_t n = 1;
        for (int i = 0; i < nd; i++)
                n *= shape[i];
        tl_tensor *v = tl_view(tl, flat, ((int64_t[]){ 0 }), ((int64_t[]){ n }));
        return tl_reshape(tl, v, nd, shape);
}

static struct gqa_state state_rows(tl_ctx *tl, const struct gqa_state *st, int64_t n)
{
        return (struct gqa_state){ .m = rows_of(tl, st->m, n), .l = rows_of(tl, st->l, n),
                                   .o = rows_of(tl, st->o, n) };
}

static struct gqa_state state_alloc(tl_ctx *tl, int64_t rows, int64_t d)
{
        return (struct gqa_state){
                .m = tl_alloc(tl, TL_TCM, TL_FP32, 2, ((int64_t[]){ rows, 1 })),
                .l = tl_alloc(tl, TL_TCM, TL_FP32, 2, ((int64_t[]){ rows, 1 })),
                .o = tl_alloc(tl, TL_TCM, TL_FP32, 2, ((int64_t[]){ rows, d })),
        };
}

/* ---- the online-softmax step ------------------------------------------------------- */

/* Causal masking of one score tile: rows are hpp heads x ql queries. */
struct tile_mask {
        bool on;                     /* mask this tile */
        int64_t hpp, ql;             /* its row structure */
        int64_t offset;              /* key j (tile column) is seen by row i iff j <= i + offset */
};

/* Write the merged state (new max mn, row sums ls, P . V pv) back to st:
 * with first, as is; else the old l and O rescaled by alpha = e^(m - mn)
 * are added in first. */
static void write_state(tl_ctx *tl, const struct gqa_state *st, tl_tensor *mn, tl_tensor *ls,
                        tl_tensor *pv, bool first)
{
        tl_tensor *l_new = ls, *o_new = pv;
        if (!first) {
                tl_tensor *alpha = tl_exp(tl, tl_sub(tl, st->m, mn));
                l_new = tl_add(tl, tl_mul(tl, st->l, alpha), ls);
                o_new = tl_add(tl, tl_mul(tl, st->o, alpha), pv);
        }
        tl_copy_to(tl, st->m, mn);
        tl_copy_to(tl, st->l, l_new);
        tl_copy_to(tl, st->o, o_new);
}

enum { MAX_CHUNKS = 64 };

/* How many chunks of *chunk keys cover n keys: at most MAX_CHUNKS
 * (*chunk grows to fit). */
static int64_t n_chunks(int64_t n, int64_t *chunk)
{
        int64_t nc = (n + *chunk - 1) / *chunk;
        if (nc > MAX_CHUNKS) {
                *chunk = (n + MAX_CHUNKS - 1) / MAX_CHUNKS;
                nc = (n + *chunk - 1) / *chunk;
        }
        return nc;
}

/* Merge the scores of q against k, then p . v, into the running state st
 * (rows of it): m' = max(m, rowmax(s)); p = e^(s - m'); alpha = e^(m - m');
 * l' = alpha l + rowsum(p); O' = alpha O + p . v. With first, st holds
 * nothing yet (m = GQA_NEG_BIG, l = 0, O = 0). Inside the caller's scope;
 * the new state is written back with tl_copy_to. */
static void attend(tl_ctx *tl, const struct gqa_state *st, tl_tensor *q, tl_tensor *k,
                   tl_tensor *v, float scale, bool first, const struct tile_mask *mk)
{
        int64_t rows = tl_dim(q, 0), n = tl_dim(k, 0);
        tl_tensor *s = tl_dot(tl, q, k, true);
        if (scale != 1.0f)
                s = tl_scale(tl, s, scale);
        if (mk && mk->on) {
                tl_tensor *s3 = tl_reshape(tl, s, 3, ((int64_t[]){ mk->hpp, mk->ql, n }));
                s = tl_reshape(tl, tl_mask_causal(tl, s3, mk->offset), 2, ((int64_t[]){ rows, n }));
        }
        tl_tensor *mt = tl_rowmax(tl, s);
        tl_tensor *m_old = first ? tl_fill(tl, TL_FP32, 2, ((int64_t[]){ rows, 1 }), GQA_NEG_BIG)
                                 : st->m;
        tl_tensor *mn = tl_max(tl, m_old, mt);
        tl_tensor *p = tl_exp(tl, tl_sub(tl, s, mn));
        tl_tensor *pv = tl_dot(tl, p, v, false);   /* PE_GEMM runs while PE_MATH goes on */
        tl_tensor *ls = tl_rowsum(tl, p);
        write_state(tl, st, mn, ls, pv, first);
}

/* attend() issued the way a kernel without composites must issue what the
 * Q.K^T GEMM composite and the softmax_merge recipe do per hardware tile:
 * K and V of keys [j0, j0 + n) of head (b, h) loaded lazily in chunks of
 * `chunk` keys (the composites' tile loop), one dot, scale, rowmax and max
 * per chunk, then the merge's MATH per chunk and a P.V dot and add per
 * chunk. The numbers are attend()'s; only the command count differs. */
static void attend_chunked(tl_ctx *tl, const struct gqa_args *a, const struct gqa_state *st,
                           tl_tensor *q, int64_t b, int64_t h, int64_t j0, int64_t n,
                           int64_t chunk, bool first)
{
        int64_t rows = tl_dim(q, 0), nc = n_chunks(n, &chunk);
        tl_tensor *s[MAX_CHUNKS], *p[MAX_CHUNKS];
        tl_tensor *mt = NULL;
        for (int64_t c = 0; c < nc; c++) {           /* the Q.K^T composite */
                int64_t c0 = j0 + c * chunk, cn = min64(chunk, j0 + n - c0);
                tl_tensor *k = tl_load(tl, kv_rows(tl, a->k, b, h, c0, cn));
                s[c] = tl_scale(tl, tl_dot(tl, q, k, true), a->scale);
                tl_tensor *r = tl_rowmax(tl, s[c]);
                mt = c ? tl_max(tl, mt, r) : r;
        }
        tl_tensor *m_old = first ? tl_fill(tl, TL_FP32, 2, ((int64_t[]){ rows, 1 }), GQA_NEG_BIG)
                                 : st->m;
        tl_tensor *mn = tl_max(tl, m_old, mt);
        tl_tensor *ls = NULL, *pv = NULL;
        for (int64_t c = 0; c < nc; c++) {           /* softmax_merge: online merge */
                p[c] = tl_exp(tl, tl_sub(tl, s[c], mn));
                tl_tensor *r = tl_rowsum(tl, p[c]);
                ls = c ? tl_add(tl, ls, r) : r;
        }
        for (int64_t c = 0; c < nc; c++) {           /* softmax_merge: P.V tile loop */
                int64_t c0 = j0 + c * chunk, cn = min64(chunk, j0 + n - c0);
                tl_tensor *v = tl_load(tl, kv_rows(tl, a->v, b, h, c0, cn));
                tl_tensor *d = tl_dot(tl, p[c], v, false);
                pv = c ? tl_add(tl, pv, d) : d;
        }
        write_state(tl, st, mn, ls, pv, first);
}

/* opt3 without M-fold: K and V of the tile loaded once, then the tile
 * step issued as primitives for each query head of the group in turn (the
 * primitive path has no fused GEMM to fold the heads into). */
static void attend_per_head(tl_ctx *tl, const struct gqa_args *a, const struct gqa_state *st,
                            tl_tensor *q, int64_t b, int64_t h, int64_t j0, int64_t n,
                            int64_t chunk, bool first)
{
        int64_t rows = tl_dim(q, 0), nc = n_chunks(n, &chunk);
        tl_tensor *k[MAX_CHUNKS], *v[MAX_CHUNKS];
        for (int64_t c = 0; c < nc; c++) {
                int64_t c0 = j0 + c * chunk, cn = min64(chunk, j0 + n - c0);
                k[c] = tl_load(tl, kv_rows(tl, a->k, b, h, c0, cn));
                v[c] = tl_load(tl, kv_rows(tl, a->v, b, h, c0, cn));
        }
        for (int64_t r = 0; r < rows; r++) {
                tl_tensor *q1 = tl_view(tl, q, ((int64_t[]){ r, 0 }), ((int64_t[]){ 1, a->d }));
                struct gqa_state s1 = {
                        .m = tl_view(tl, st->m, ((int64_t[]){ r, 0 }), ((int64_t[]){ 1, 1 })),
                        .l = tl_view(tl, st->l, ((int64_t[]){ r, 0 }), ((int64_t[]){ 1, 1 })),
                        .o = tl_view(tl, st->o, ((int64_t[]){ r, 0 }), ((int64_t[]){ 1, a->d })),
                };
                tl_tensor *sc[MAX_CHUNKS], *mt = NULL;
                for (int64_t c = 0; c < nc; c++) {
                        sc[c] = tl_scale(tl, tl_dot(tl, q1, k[c], true), a->scale);
                        tl_tensor *rm = tl_rowmax(tl, sc[c]);
                        mt = c ? tl_max(tl, mt, rm) : rm;
                }
                tl_tensor *mn = first ? mt : tl_max(tl, s1.m, mt);
                tl_tensor *ls = NULL, *pv = NULL;
                for (int64_t c = 0; c < nc; c++) {
                        tl_tensor *p = tl_exp(tl, tl_sub(tl, sc[c], mn));
                        tl_tensor *rs = tl_rowsum(tl, p);
                        ls = c ? tl_add(tl, ls, rs) : rs;
                        tl_tensor *d = tl_dot(tl, p, v[c], false);
                        pv = c ? tl_add(tl, pv, d) : d;
                }
                write_state(tl, &s1, mn, ls, pv, first);
        }
}

/* opt2: the tile step as two composites: S = scale * Q . K^T (K streamed
 * in the GEMM's tile loop) and the softmax_merge recipe (V streamed in
 * its P . V loop), which updates the running state in place. */
static void attend_composite(tl_ctx *tl, const struct gqa_args *a, const struct gqa_state *st,
                             tl_tensor *q, int64_t b, int64_t h, int64_t j0, int64_t n, bool first)
{
        int64_t rows = tl_dim(q, 0);
        if (first) {
                tl_copy_to(tl, st->m, tl_fill(tl, TL_FP32, 2, ((int64_t[]){ rows, 1 }), GQA_NEG_BIG));
                tl_copy_to(tl, st->l, tl_fill(tl, TL_FP32, 2, ((int64_t[]){ rows, 1 }), 0.0f));
                tl_copy_to(tl, st->o, tl_fill(tl, TL_FP32, 2, ((int64_t[]){ rows, a->d }), 0.0f));
        }
        tl_tensor *sc = tl_alloc(tl, TL_SCRATCH, TL_FP32, 2, ((int64_t[]){ rows, n }));
        tl_composite(tl, &(tl_composite_desc){
                .op = TL_GEMM, .a = q, .b = kv_rows(tl, a->k, b, h, j0, n), .trans_b = true,
                .out = sc, .tile_m = rows, .tile_n = 64, .tile_k = a->d,
                .epilogue = (tl_epilogue[]){ { .op = TL_SCALE, .factor = a->scale } },
                .n_epilogue = 1,
        });
        tl_softmax_merge(tl, sc, kv_rows(tl, a->v, b, h, j0, n), st->m, st->l, st->o);
}

/* (m, l, o) <- merge of (m, l, o) and (mb, lb, ob); scratch results. */
static void merge(tl_ctx *tl, tl_tensor **m, tl_tensor **l, tl_tensor **o, tl_tensor *mb,
                  tl_tensor *lb, tl_tensor *ob)
{
        tl_tensor *mn = tl_max(tl, *m, mb);
        tl_tensor *ea = tl_exp(tl, tl_sub(tl, *m, mn));
        tl_tensor *eb = tl_exp(tl, tl_sub(tl, mb, mn));
        *l = tl_add(tl, tl_mul(tl, *l, ea), tl_mul(tl, lb, eb));
        *o = tl_add(tl, tl_mul(tl, *o, ea), tl_mul(tl, ob, eb));
        *m = mn;
}

/* O / l, with l floored so that a row that saw no key gives 0, not NaN. */
static tl_tensor *normalise(tl_ctx *tl, tl_tensor *l, tl_tensor *o)
{
        int64_t rows = tl_dim(l, 0);
        tl_tensor *floor = tl_fill(tl, TL_FP32, 2, ((int64_t[]){ rows, 1 }), GQA_TINY);
        return tl_mul(tl, o, tl_recip(tl, tl_max(tl, l, floor)));
}

/* ---- the K/V prefetch ring --------------------------------------------------------- */

static void ring_alloc(tl_ctx *tl, struct gqa_kv_ring *r, const struct gqa_args *a, int64_t t)
{
        r->a = a;
        r->depth = a->depth;
        for (int i = 0; i < r->depth; i++) {
                r->kbuf[i] = tl_alloc(tl, TL_TCM, a->dt, 2, ((int64_t[]){ t, a->d }));
                r->vbuf[i] = tl_alloc(tl, TL_TCM, a->dt, 2, ((int64_t[]){ t, a->d }));
        }
}

/* Fetch until depth - 1 tiles are in flight besides the one in use. */
static void ring_top_up(tl_ctx *tl, struct gqa_kv_ring *r)
{
        while (!r->exhausted && r->count < r->depth - 1) {
                struct gqa_kv_src src;
                if (!r->produce(tl, r->ctx, &src)) {
                        r->exhausted = true;
                        break;
                }
                src.slot = (int)(r->issued++ % r->depth);
                tl_copy_to(tl, rows_of(tl, r->kbuf[src.slot], src.n),
                           kv_rows(tl, src.kept ? r->a->k_kept : r->a->k, src.b, src.h, src.j0,
                                   src.n));
                tl_copy_to(tl, rows_of(tl, r->vbuf[src.slot], src.n),
                           kv_rows(tl, src.kept ? r->a->v_kept : r->a->v, src.b, src.h, src.j0,
                                   src.n));
                if (src.q)
                        tl_copy_to(tl, src.q_dst, src.q);
                r->fifo[(r->head + r->count) % GQA_MAX_DEPTH] = src;
                r->count++;
        }
}

static void ring_start(tl_ctx *tl, struct gqa_kv_ring *r, gqa_produce_fn produce, void *ctx)
{
        r->produce = produce;
        r->ctx = ctx;
        r->exhausted = false;
        r->head = r->count = 0;
        ring_top_up(tl, r);
}

/* The next fetched tile (its slot stays untouched until the next pop);
 * tops the ring up first so the DMA runs ahead. Outside any scope. */
static bool ring_pop(tl_ctx *tl, struct gqa_kv_ring *r, struct gqa_kv_src *out)
{
        if (r->count == 0)
                return false;
        *out = r->fifo[r->head];
        r->head = (r->head + 1) % GQA_MAX_DEPTH;
        r->count--;
        ring_top_up(tl, r);
        return true;
}

/* ---- machine shape ------------------------------------------------------------------ */

int gqa_cube_index(tl_ctx *tl)
{
        return tl_program_id(tl, 2) * tl_num_programs(tl, 1) + tl_program_id(tl, 1);
}

int gqa_cube_count(tl_ctx *tl)
{
        return tl_num_programs(tl, 1) * tl_num_programs(tl, 2);
}

/* ---- decode ------------------------------------------------------------------------- */

static int64_t pair_at(const struct gqa_decode_plan *p, int64_t i)
{
        if (p->groups == 0)
                return i;
        return p->pair0 + (i / p->groups) * p->round_stride + p->group0 +
               (i % p->groups) * p->group_step;
}

/* Producer state of the decode stream: item = (pair ordinal, tile). */
struct decode_stream {
        const struct gqa_args *a;    /* shapes */
        const struct gqa_decode_plan *p; /* pairs and keys */
        tl_tensor **qbuf;            /* TCM Q slots, one per pair in flight */
        int depth;                   /* Q slots */
        int64_t tiles;               /* tiles per pair */
        int64_t next;                /* next item to produce */
        int64_t end_pair;            /* produce pairs below this one (the chunk's end) */
};

static bool decode_produce(tl_ctx *tl, void *ctx, struct gqa_kv_src *out)
{
        struct decode_stream *ds = ctx;
        const struct gqa_args *a = ds->a;
        int64_t vi = ds->next / ds->tiles, t = ds->next % ds->tiles;
        if (vi >= ds->end_pair)
                return false;
        int64_t pair = pair_at(ds->p, vi);
        int64_t j0 = ds->p->s0 + t * ds->p->kv_tile;
        *out = (struct gqa_kv_src){ .b = pair / a->hkv, .h = pair % a->hkv, .j0 = j0,
                                .n = min64(ds->p->kv_tile, ds->p->s1 - j0) };
        if (t == 0) {
                /* The pair's Q [G, D] comes with its first tile. */
                int64_t g = a->group;
                tl_tensor *q = q_rows(tl, a->q, out->b, out->h * g, g, 0, 1);
                out->q = tl_reshape(tl, q, 2, ((int64_t[]){ g, a->d }));
                out->q_dst = ds->qbuf[vi % ds->depth];
        }
        ds->next++;
        return true;
}

/* Tags of a pair's partial state messages. */
static int state_tag(int64_t pair, int part)
{
        return (int)(pair * 3 + part);
}

/* The chain reduce step of one pair: merge the children's partial states
 * into ours, then pass it on or (the root) normalise it into out_slot
 * (TCM), whose store the caller issues outside the scope. st is NULL when
 * this PE saw no key. */
static void reduce_pair(tl_ctx *tl, const struct gqa_args *a, const struct gqa_decode_plan *p,
                        int64_t pair, const struct gqa_state *st, tl_tensor *out_slot)
{
        int64_t g = a->group, d = a->d;
        tl_scratch_scope_begin(tl);
        tl_tensor *m, *l, *o;
        if (st) {
                m = st->m;
                l = st->l;
                o = st->o;
        } else {
                m = tl_fill(tl, TL_FP32, 2, ((int64_t[]){ g, 1 }), GQA_NEG_BIG);
                l = tl_fill(tl, TL_FP32, 2, ((int64_t[]){ g, 1 }), 0.0f);
                o = tl_fill(tl, TL_FP32, 2, ((int64_t[]){ g, d }), 0.0f);
        }
        for (int c = 0; c < p->n_child; c++) {
                tl_tensor *mc = tl_recv(tl, p->child[c], state_tag(pair, 0));
                tl_tensor *lc = tl_recv(tl, p->child[c], state_tag(pair, 1));
                tl_tensor *oc = tl_recv(tl, p->child[c], state_tag(pair, 2));
                merge(tl, &m, &l, &o, mc, lc, oc);
        }
        if (p->parent >= 0) {
                tl_send(tl, p->parent, m, state_tag(pair, 0));
                tl_send(tl, p->parent, l, state_tag(pair, 1));
                tl_send(tl, p->parent, o, state_tag(pair, 2));
        } else {
                tl_copy_to(tl, out_slot, normalise(tl, l, o));
        }
        tl_scratch_scope_end(tl);
}

/* Reduce pair vi (its state st, NULL if this PE saw no key); the root
 * stores the output outside the pair's scope, where it drains while the
 * chain brings the next pair. */
static void reduce_and_store(tl_ctx *tl, const struct gqa_args *a,
                             const struct gqa_decode_plan *p, int64_t vi,
                             const struct gqa_state *st, tl_tensor *out)
{
        int64_t g = a->group, pair = pair_at(p, vi), b = pair / a->hkv, h = pair % a->hkv;
        reduce_pair(tl, a, p, pair, st, out);
        if (p->parent < 0)
                tl_store(tl, q_rows(tl, a->o, b, h * g, g, 0, 1),
                         tl_reshape(tl, out, 4, ((int64_t[]){ 1, g, 1, a->d })));
}

/* Pairs whose states a decode PE keeps at once: their reduce waits until
 * the chunk's keys are all streamed, so no PE stalls mid-stream on a
 * child that is still streaming. */
#define DECODE_STATE_BUDGET (128 * 1024)
#define DECODE_MAX_CHUNK 64

void gqa_decode_run(tl_ctx *tl, const struct gqa_args *a, const struct gqa_decode_plan *p)
{
        int64_t g = a->group, d = a->d, t = p->kv_tile;
        int64_t span = p->s1 - p->s0, tiles = span > 0 ? (span + t - 1) / t : 0;
        if (p->n_pairs == 0)
                return;
        int64_t chunk = DECODE_STATE_BUDGET / (g * (d + 2) * 4);
        chunk = max64(1, min64(min64(chunk, DECODE_MAX_CHUNK), p->n_pairs));
        struct gqa_state st[DECODE_MAX_CHUNK];
        tl_tensor *out[DECODE_MAX_CHUNK];
        for (int64_t i = 0; i < chunk; i++) {
                st[i] = state_alloc(tl, g, d);
                out[i] = NULL;
                if (p->parent < 0)
                        out[i] = tl_alloc(tl, TL_TCM, a->dt, 2, ((int64_t[]){ g, d }));
        }
        tl_tensor *qbuf[GQA_MAX_DEPTH];
        int nq = p->lazy ? 1 : a->depth;
        for (int i = 0; i < nq; i++)
                qbuf[i] = tl_alloc(tl, TL_TCM, a->dt, 2, ((int64_t[]){ g, d }));
        struct gqa_kv_ring ring = { 0 };
        struct decode_stream ds = { .a = a, .p = p, .qbuf = qbuf, .depth = nq, .tiles = tiles };
        if (!p->lazy && tiles > 0)
                ring_alloc(tl, &ring, a, t);
        for (int64_t c0 = 0; c0 < p->n_pairs; c0 += chunk) {
                int64_t c1 = min64(p->n_pairs, c0 + chunk);
                /* One scope per chunk: the views its loop makes are freed
                 * with it (the prefetch is issued here, outside the tile
                 * scopes, which must not wait for it). */
                tl_scratch_scope_begin(tl);
                if (!p->lazy && tiles > 0) {
                        ds.next = c0 * tiles;
                        ds.end_pair = c1;
                        ring_start(tl, &ring, decode_produce, &ds);
                }
                for (int64_t vi = c0; vi < c1 && tiles > 0; vi++) {
                        int64_t pair = pair_at(p, vi), b = pair / a->hkv, h = pair % a->hkv;
                        const struct gqa_state *s = &st[vi - c0];
                        if (p->lazy) {
                                tl_tensor *q = q_rows(tl, a->q, b, h * g, g, 0, 1);
                                tl_copy_to(tl, qbuf[0],
                                           tl_reshape(tl, q, 2, ((int64_t[]){ g, d })));
                        }
                        for (int64_t ti = 0; ti < tiles; ti++) {
                                if (p->lazy) {
                                        /* opt3: K and V loaded lazily inside the tile,
                                         * in chunks of prim_tile keys. */
                                        int64_t j0 = p->s0 + ti * t, n = min64(t, p->s1 - j0);
                                        int64_t pt = a->prim_tile ? a->prim_tile : n;
                                        tl_scratch_scope_begin(tl);
                                        if (p->composite)
                                                attend_composite(tl, a, s, qbuf[0], b, h, j0, n,
                                                                 ti == 0);
                                        else if (a->fold)
                                                attend_chunked(tl, a, s, qbuf[0], b, h, j0, n, pt,
                                                               ti == 0);
                                        else
                                                attend_per_head(tl, a, s, qbuf[0], b, h, j0, n,
                                                                pt, ti == 0);
                                        tl_scratch_scope_end(tl);
                                } else {
                                        struct gqa_kv_src src = { 0 };
                                        if (!ring_pop(tl, &ring, &src))
                                                break;  /* cannot happen: every tile was produced */
                                        tl_scratch_scope_begin(tl);
                                        attend(tl, s, qbuf[vi % nq],
                                               rows_of(tl, ring.kbuf[src.slot], src.n),
                                               rows_of(tl, ring.vbuf[src.slot], src.n), a->scale,
                                               ti == 0, NULL);
                                        tl_scratch_scope_end(tl);
                                }
                        }
                }
                /* The chunk's reduce, after all of it has streamed:
                 * reducing during the stream would make every hop queue
                 * behind the K/V prefetches on the DMA engines, and stall
                 * PEs deep in the chain (measured: 86% -> 74% of the HBM
                 * roofline at 32K). */
                for (int64_t vi = c0; vi < c1; vi++)
                        reduce_and_store(tl, a, p, vi, tiles > 0 ? &st[vi - c0] : NULL,
                                         out[vi - c0]);
                tl_scratch_scope_end(tl);
        }
}

/* ---- prefill ------------------------------------------------------------------------ */

/* Producer state of a prefill pass: tiles of blocks in ring order. */
struct prefill_stream {
        const struct gqa_args *a;    /* shapes */
        const struct gqa_qblock *qb; /* whose rows (masking) */
        int n_blocks;                /* blocks of S */
        int block;                   /* block being produced */
        int own;                     /* the cube's own block (in k and v; others are kept) */
        int blocks_left;             /* blocks still to produce, this one included */
        int64_t pos, end;            /* next key of the block, its end */
        bool skip_masked;            /* leave out tiles no row of qb sees */
};

/* Key j of tile [j0, j0 + n) against query rows [i0, i0 + ql): j <= i + S - Sq. */
static int64_t mask_offset(const struct gqa_args *a, const struct gqa_qblock *qb, int64_t j0)
{
        return qb->i0 + a->s - a->sq - j0;
}

static bool tile_hidden(const struct gqa_args *a, const struct gqa_qblock *qb, int64_t j0)
{
        return a->causal && (qb->ql == 0 || mask_offset(a, qb, j0) + qb->ql - 1 < 0);
}

static void stream_block(struct prefill_stream *ps)
{
        int64_t lo, hi;
        gqa_split(ps->a->s, ps->n_blocks, ps->block, &lo, &hi);
        ps->pos = lo;
        ps->end = hi;
}

static bool prefill_produce(tl_ctx *tl, void *ctx, struct gqa_kv_src *out)
{
        struct prefill_stream *ps = ctx;
        const struct gqa_args *a = ps->a;
        for (;;) {
                while (ps->pos >= ps->end) {
                        if (--ps->blocks_left <= 0)
                                return false;
                        ps->block = (ps->block - 1 + ps->n_blocks) % ps->n_blocks;
                        stream_block(ps);
                }
                int64_t j0 = ps->pos, n = min64(a->kv_tile, ps->end - j0);
                ps->pos += n;
                if (ps->skip_masked && tile_hidden(a, ps->qb, j0))
                        continue;
                *out = (struct gqa_kv_src){ .b = ps->qb->b, .h = ps->qb->kvh, .j0 = j0, .n = n,
                                            .kept = a->k_kept && ps->block != ps->own };
                return true;
        }
}

/* The tile's mask: none when every row sees every key of it. */
static struct tile_mask tile_mask_of(const struct gqa_args *a, const struct gqa_qblock *qb,
                                     int64_t j0, int64_t n)
{
        int64_t off = mask_offset(a, qb, j0);
        bool partial = a->causal && n - 1 > off;
        return (struct tile_mask){ .on = partial, .hpp = qb->hpp, .ql = qb->ql, .offset = off };
}

static struct gqa_prefill_pe *prefill_pe_of(tl_ctx *tl, const struct gqa_args *a,
                                            struct gqa_prefill_pe *pf)
{
        if (pf->ready)
                return pf;
        int64_t r = a->rows_max, d = a->d;
        ring_alloc(tl, &pf->ring, a, a->kv_tile);
        pf->qbuf = tl_alloc(tl, TL_TCM, a->dt, 1, ((int64_t[]){ r * d }));
        pf->qs = tl_alloc(tl, TL_TCM, TL_FP32, 1, ((int64_t[]){ r * d }));
        pf->out = tl_alloc(tl, TL_TCM, a->dt, 1, ((int64_t[]){ r * d }));
        pf->st = state_alloc(tl, r, d);
        pf->ready = true;
        return pf;
}

/* One tile step of block qb against k, v (TCM slots or received). */
static void prefill_tile(tl_ctx *tl, const struct gqa_args *a, const struct gqa_qblock *qb,
                         const struct gqa_state *st, tl_tensor *qs, int64_t j0, tl_tensor *k,
                         tl_tensor *v, bool *fresh)
{
        struct tile_mask mk = tile_mask_of(a, qb, j0, tl_dim(k, 0));
        attend(tl, st, qs, k, v, 1.0f, *fresh, &mk);
        *fresh = false;
}

enum { TAG_RING_K = -1, TAG_RING_V = -2 }; /* ring messages; states use tags >= 0 */

void gqa_prefill_block(tl_ctx *tl, const struct gqa_args *a, struct gqa_prefill_pe *pf_in,
                       const struct gqa_qblock *qb, const struct gqa_kv_plan *kv)
{
        struct gqa_prefill_pe *pf = prefill_pe_of(tl, a, pf_in);
        int64_t d = a->d, rows = qb->hpp * qb->ql;
        struct gqa_state st = { 0 };
        tl_tensor *qs = NULL;
        bool fresh = true;
        /* One scope for the whole pass: the views its loop makes are freed
         * with it (the prefetch is issued here, outside the tile scopes,
         * which must not wait for it). */
        tl_scratch_scope_begin(tl);
        if (rows > 0) {
                st = state_rows(tl, &pf->st, rows);
                tl_tensor *q4 = flat_as(tl, pf->qbuf, 4, ((int64_t[]){ 1, qb->hpp, qb->ql, d }));
                tl_copy_to(tl, q4, q_rows(tl, a->q, qb->b, qb->h0, qb->hpp, qb->i0, qb->ql));
        }
        /* The first K/V tiles are on their way while Q is scaled. */
        struct prefill_stream ps = { .a = a, .qb = qb, .n_blocks = kv->n_blocks,
                                     .block = kv->first, .own = kv->first,
                                     .blocks_left = kv->n_blocks,
                                     .skip_masked = true };
        if (kv->ring) {
                /* Own block: every tile, the next cube needs them all. */
                ps.blocks_left = 1;
                ps.skip_masked = false;
        }
        stream_block(&ps);
        ring_start(tl, &pf->ring, prefill_produce, &ps);
        if (rows > 0) {
                /* Q of the block, scaled once for all its tiles. */
                qs = flat_as(tl, pf->qs, 2, ((int64_t[]){ rows, d }));
                tl_scratch_scope_begin(tl);
                tl_tensor *q2 = flat_as(tl, pf->qbuf, 2, ((int64_t[]){ rows, d }));
                tl_copy_to(tl, qs, tl_scale(tl, q2, a->scale));
                tl_scratch_scope_end(tl);
        }
        struct gqa_kv_src src;
        while (ring_pop(tl, &pf->ring, &src)) {
                tl_scratch_scope_begin(tl);
                tl_tensor *k = rows_of(tl, pf->ring.kbuf[src.slot], src.n);
                tl_tensor *v = rows_of(tl, pf->ring.vbuf[src.slot], src.n);
                if (kv->ring && kv->next >= 0) {
                        tl_send(tl, kv->next, k, TAG_RING_K);
                        tl_send(tl, kv->next, v, TAG_RING_V);
                }
                if (rows > 0 && !tile_hidden(a, qb, src.j0))
                        prefill_tile(tl, a, qb, &st, qs, src.j0, k, v, &fresh);
                tl_scratch_scope_end(tl);
        }
        if (kv->ring) {
                for (int r = 1; r < kv->n_blocks; r++) {
                        int blk = (kv->first - r + kv->n_blocks) % kv->n_blocks;
                        bool forward = r + 1 < kv->n_blocks;
                        int64_t lo, hi;
                        gqa_split(a->s, kv->n_blocks, blk, &lo, &hi);
                        for (int64_t j0 = lo; j0 < hi; j0 += a->kv_tile) {
                                tl_scratch_scope_begin(tl);
                                tl_tensor *k = tl_recv(tl, kv->prev, TAG_RING_K);
                                tl_tensor *v = tl_recv(tl, kv->prev, TAG_RING_V);
                                if (forward) {
                                        tl_send(tl, kv->next, k, TAG_RING_K);
                                        tl_send(tl, kv->next, v, TAG_RING_V);
                                }
                                if (rows > 0 && a->k_kept) {
                                        int64_t n = tl_dim(k, 0);
                                        tl_store(tl, kv_rows(tl, a->k_kept, qb->b, qb->kvh, j0, n), k);
                                        tl_store(tl, kv_rows(tl, a->v_kept, qb->b, qb->kvh, j0, n), v);
                                }
                                if (rows > 0 && !tile_hidden(a, qb, j0))
                                        prefill_tile(tl, a, qb, &st, qs, j0, k, v, &fresh);
                                tl_scratch_scope_end(tl);
                        }
                }
        }
        tl_tensor *out = NULL;
        if (rows > 0) {
                out = flat_as(tl, pf->out, 2, ((int64_t[]){ rows, d }));
                tl_scratch_scope_begin(tl);
                tl_copy_to(tl, out, fresh ? tl_fill(tl, TL_FP32, 2, ((int64_t[]){ rows, d }), 0.0f)
                                          : normalise(tl, st.l, st.o));
                tl_scratch_scope_end(tl);
        }
        tl_scratch_scope_end(tl);
        if (rows == 0)
                return;
        /* Outside every scope: the store drains while the next block runs. */
        tl_store(tl, q_rows(tl, a->o, qb->b, qb->h0, qb->hpp, qb->i0, qb->ql),
                 flat_as(tl, pf->out, 4, ((int64_t[]){ 1, qb->hpp, qb->ql, d })));
}

/* Rows per head of a block folding hpp heads over `rows` query rows. */
static int64_t q_tile_for(const struct gqa_args *a, int64_t hpp, int64_t rows)
{
        if (a->q_tile)
                return a->q_tile;
        return max64(1, min64(max64(rows, 1), a->rows_max / hpp));
}

void gqa_prefill_shape(const struct gqa_args *a, int64_t base, bool per_block, int64_t want,
                       int64_t rows, int64_t *hpp, int64_t *qt)
{
        int64_t best = 1;
        for (int64_t h = 1; h <= a->group; h++) {
                if (a->group % h != 0 || h > a->rows_max)
                        continue;
                if (a->heads_per_pe) {
                        if (h == a->heads_per_pe)
                                best = h;
                        continue;
                }
                int64_t t = q_tile_for(a, h, rows);
                int64_t units = base * (a->group / h) * (per_block ? (rows + t - 1) / t : 1);
                if (units >= want)
                        best = h;
        }
        *hpp = best;
        *qt = q_tile_for(a, best, rows);
}

/* ---- mapping work onto the machine ----------------------------------------------- */

int gqa_rank(tl_ctx *tl, int cube, int pe)
{
        int per_sip = tl_num_programs(tl, 1);
        return tl_rank(tl, pe, cube % per_sip, cube / per_sip);
}

/* PE columns of a cube's mesh: pe_cols when it divides the PEs, else the
 * smallest divisor c with c * c >= PEs (a square mesh's side). */
static int mesh_cols(const struct gqa_args *a, int pes)
{
        if (a->pe_cols > 0 && pes % a->pe_cols == 0)
                return (int)a->pe_cols;
        int c = 1;
        while (c * c < pes || pes % c != 0)
                c++;
        return c;
}

void gqa_decode_long_plan(tl_ctx *tl, const struct gqa_args *a, struct gqa_decode_plan *p,
                          bool lazy)
{
        int pes = tl_num_programs(tl, 0), cubes = gqa_cube_count(tl);
        int gc = gqa_cube_index(tl), e = tl_program_id(tl, 0);
        int cols = mesh_cols(a, pes), rows = pes / cols, r = e / cols, c = e % cols;
        *p = (struct gqa_decode_plan){ .n_pairs = a->batch * a->hkv, .parent = -1, .lazy = lazy };
        int64_t n = (int64_t)pes * cubes;
        gqa_split(a->s, n, (int64_t)gc * pes + e, &p->s0, &p->s1);
        p->kv_tile = a->kv_tile;
        if (lazy && a->tile_frac > 0) {
                int64_t span = (a->s + n - 1) / n;
                p->kv_tile = max64(1, (int64_t)(a->tile_frac * (double)span + 0.5));
        }
        /* Level 2: along the row to its head (column 0), then up the
         * column of row heads to PE 0; level 1: cube to cube, to cube 0. */
        if (c + 1 < cols)
                p->child[p->n_child++] = gqa_rank(tl, gc, e + 1);
        if (c == 0 && r + 1 < rows)
                p->child[p->n_child++] = gqa_rank(tl, gc, e + cols);
        if (e == 0 && gc + 1 < cubes)
                p->child[p->n_child++] = gqa_rank(tl, gc + 1, 0);
        if (c > 0)
                p->parent = gqa_rank(tl, gc, e - 1);
        else if (r > 0)
                p->parent = gqa_rank(tl, gc, e - cols);
        else if (gc > 0)
                p->parent = gqa_rank(tl, gc - 1, 0);
}

void gqa_short_map(tl_ctx *tl, const struct gqa_args *a, struct gqa_short *m)
{
        int pes = tl_num_programs(tl, 0), cubes = gqa_cube_count(tl);
        int gc = gqa_cube_index(tl), e = tl_program_id(tl, 0);
        int64_t kpc = a->kv_per_cube;
        int64_t slots = pes >= kpc ? kpc : pes;  /* groups running at once in a cube */
        *m = (struct gqa_short){ .pg = pes >= kpc ? pes / kpc : 1 };
        m->slot = e / m->pg;
        m->member = e % m->pg;
        m->cube = gc;
        m->first_pe = (int)(m->slot * m->pg);
        if (m->slot >= slots)
                return;                            /* PEs left over by the division */
        m->pair0 = gc * kpc;
        m->round_stride = kpc * cubes;
        m->group0 = m->slot;
        m->group_step = slots;
        m->groups = (kpc - m->slot + slots - 1) / slots;
        struct gqa_decode_plan probe = { .pair0 = m->pair0, .round_stride = m->round_stride,
                                         .group0 = m->group0, .group_step = m->group_step,
                                         .groups = m->groups };
        while (pair_at(&probe, m->n_pairs) < a->batch * a->hkv)
                m->n_pairs++;
}

int64_t gqa_short_pair(const struct gqa_short *m, int64_t i)
{
        struct gqa_decode_plan probe = { .pair0 = m->pair0, .round_stride = m->round_stride,
                                         .group0 = m->group0, .group_step = m->group_step,
                                         .groups = m->groups };
        return pair_at(&probe, i);
}
