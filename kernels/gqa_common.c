/* kernels/gqa_common.c: the GQA kernels' shared device code (see
 * gqa_common.h): what runs on the PEs: the online-softmax tile step and
 * state merge, the decode driver and the prefill driver, and the mapping
 * of work onto the machine. The host side (parameters, presets, tile
 * sizes, the shapes a PE cannot hold) is kernels/gqa_setup.c.
 *
 * Double buffering. K/V tiles are copied (tl_copy_to) from HBM into a ring
 * of `depth` TCM slots, ahead of the tile being computed, so the DMA keeps
 * streaming while PE_GEMM and PE_MATH work. Decode issues the prefetch
 * outside the tile's scratch scope (the scope's end waits only for the
 * tile's own ops) and refills a slot once that scope has ended; prefill
 * keeps two popped tiles in use (its sub-blocks ping-pong) and refills a
 * slot once the merges that read it have ended. See ADR 0013.
 *
 * HBM tensors carry no readiness (cubesim/tl.h): a store to HBM makes no
 * later load wait. Every output block of o is written by exactly one PE,
 * and a partial state crosses PEs only through tl_send/tl_recv, which is
 * what orders the reduce. */
#include <string.h>

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
        if (n == tl_dim(t, 0))
                return t;            /* all of it: no view */
        return tl_view(tl, t, ((int64_t[]){ 0, 0 }), ((int64_t[]){ n, tl_dim(t, 1) }));
}

/* gqa_head_rows: see gqa_common.h. */
tl_tensor *gqa_head_rows(tl_ctx *tl, tl_tensor *x, int64_t b, int64_t h, int64_t j0, int64_t n)
{
        int64_t d = tl_dim(x, 3);
        tl_tensor *v = tl_view(tl, x, ((int64_t[]){ b, h, j0, 0 }), ((int64_t[]){ 1, 1, n, d }));
        return tl_reshape(tl, v, 2, ((int64_t[]){ n, d }));
}

/* Rows [i0, i0 + n) of heads [h0, h0 + hh) of batch b of q or o: [1, hh, n, D]. */
static tl_tensor *q_rows(tl_ctx *tl, tl_tensor *x, int64_t b, int64_t h0, int64_t hh, int64_t i0,
                         int64_t n)
{
        return tl_view(tl, x, ((int64_t[]){ b, h0, i0, 0 }), ((int64_t[]){ 1, hh, n, tl_dim(x, 3) }));
}

/* The first n elements of a flat TCM buffer, shaped. */
static tl_tensor *flat_as(tl_ctx *tl, tl_tensor *flat, int nd, const int64_t *shape)
{
        int64_t n = 1;
        for (int i = 0; i < nd; i++)
                n *= shape[i];
        return tl_reshape(tl, tl_view(tl, flat, ((int64_t[]){ 0 }), ((int64_t[]){ n })), nd, shape);
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

/* The keys one lazy (opt2, opt3) tile step attends to: [j0, j0 + n) of
 * KV head (b, h), in nc chunks of `chunk` keys. */
struct lazy_keys {
        int64_t b, h;                /* batch and KV head */
        int64_t j0, n;               /* first key and how many */
        int64_t chunk, nc;           /* keys per chunk (n_chunks) and chunks */
};

/* K or V (x) of chunk c of kk, loaded. */
static tl_tensor *load_chunk(tl_ctx *tl, const struct lazy_keys *kk, tl_tensor *x, int64_t c)
{
        int64_t c0 = kk->j0 + c * kk->chunk, cn = min64(kk->chunk, kk->j0 + kk->n - c0);
        return tl_load(tl, gqa_head_rows(tl, x, kk->b, kk->h, c0, cn));
}

/* Merge the scores of q against k, then p . v, into the running state st
 * (rows of it): m' = max(m, rowmax(s)); p = e^(s - m'); alpha = e^(m - m');
 * l' = alpha l + rowsum(p); O' = alpha O + p . v. With first, st holds
 * nothing yet (m = GQA_NEG_BIG, l = 0, O = 0). Inside the caller's scope;
 * the new state is written back with tl_copy_to. */
static void attend(tl_ctx *tl, const struct gqa_state *st, tl_tensor *q, tl_tensor *k,
                   tl_tensor *v, float scale, bool first)
{
        int64_t rows = tl_dim(q, 0);
        tl_tensor *s = tl_dot(tl, q, k, true);
        if (scale != 1.0f)
                s = tl_scale(tl, s, scale);
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
 * K and V of the keys kk loaded lazily chunk by chunk (the composites'
 * tile loop), one dot, scale, rowmax and max
 * per chunk, then the merge's MATH per chunk and a P.V dot and add per
 * chunk. The numbers are attend()'s; only the command count differs. */
static void attend_chunked(tl_ctx *tl, const struct gqa_args *a, const struct gqa_state *st,
                           tl_tensor *q, const struct lazy_keys *kk, bool first)
{
        int64_t rows = tl_dim(q, 0), nc = kk->nc;
        tl_tensor *s[MAX_CHUNKS], *p[MAX_CHUNKS];
        tl_tensor *mt = NULL;
        for (int64_t c = 0; c < nc; c++) {           /* the Q.K^T composite */
                tl_tensor *k = load_chunk(tl, kk, a->k, c);
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
                tl_tensor *v = load_chunk(tl, kk, a->v, c);
                tl_tensor *d = tl_dot(tl, p[c], v, false);
                pv = c ? tl_add(tl, pv, d) : d;
        }
        write_state(tl, st, mn, ls, pv, first);
}

/* opt3 without M-fold: K and V of the tile loaded once, then the tile
 * step issued as primitives for each query head of the group in turn (the
 * primitive path has no fused GEMM to fold the heads into). */
static void attend_per_head(tl_ctx *tl, const struct gqa_args *a, const struct gqa_state *st,
                            tl_tensor *q, const struct lazy_keys *kk, bool first)
{
        int64_t rows = tl_dim(q, 0), nc = kk->nc;
        tl_tensor *k[MAX_CHUNKS], *v[MAX_CHUNKS];
        for (int64_t c = 0; c < nc; c++) {
                k[c] = load_chunk(tl, kk, a->k, c);
                v[c] = load_chunk(tl, kk, a->v, c);
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
                             tl_tensor *q, const struct lazy_keys *kk, bool first)
{
        int64_t b = kk->b, h = kk->h, j0 = kk->j0, n = kk->n;
        int64_t rows = tl_dim(q, 0);
        if (first) {
                tl_copy_to(tl, st->m, tl_fill(tl, TL_FP32, 2, ((int64_t[]){ rows, 1 }), GQA_NEG_BIG));
                tl_copy_to(tl, st->l, tl_fill(tl, TL_FP32, 2, ((int64_t[]){ rows, 1 }), 0.0f));
                tl_copy_to(tl, st->o, tl_fill(tl, TL_FP32, 2, ((int64_t[]){ rows, a->d }), 0.0f));
        }
        tl_tensor *sc = tl_alloc(tl, TL_SCRATCH, TL_FP32, 2, ((int64_t[]){ rows, n }));
        tl_composite(tl, &(tl_composite_desc){
                .op = TL_GEMM, .a = q, .b = gqa_head_rows(tl, a->k, b, h, j0, n), .trans_b = true,
                .out = sc, .tile_m = rows, .tile_n = 64, .tile_k = a->d,
                .epilogue = (tl_epilogue[]){ { .op = TL_SCALE, .factor = a->scale } },
                .n_epilogue = 1,
        });
        tl_softmax_merge(tl, sc, gqa_head_rows(tl, a->v, b, h, j0, n), st->m, st->l, st->o);
}

/* gqa_merge: see gqa_common.h. */
void gqa_merge(tl_ctx *tl, tl_tensor **m, tl_tensor **l, tl_tensor **o, tl_tensor *mb,
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

static void ring_alloc(tl_ctx *tl, struct gqa_kv_ring *r, const struct gqa_args *a, int64_t t,
                       int keep)
{
        r->a = a;
        r->depth = a->depth;
        r->keep = keep;
        for (int i = 0; i < r->depth; i++) {
                r->kbuf[i] = tl_alloc(tl, TL_TCM, a->dt, 2, ((int64_t[]){ t, a->d }));
                r->vbuf[i] = tl_alloc(tl, TL_TCM, a->dt, 2, ((int64_t[]){ t, a->d }));
        }
}

/* Fetch until depth - keep tiles are in flight besides those in use; a
 * slot's readers (its hold) end before it is refilled. */
static void ring_top_up(tl_ctx *tl, struct gqa_kv_ring *r)
{
        while (!r->exhausted && r->count < r->depth - r->keep) {
                struct gqa_kv_src src;
                if (!r->produce(tl, r->ctx, &src)) {
                        r->exhausted = true;
                        break;
                }
                src.slot = (int)(r->issued++ % r->depth);
                for (int i = 0; i < 2; i++) {
                        if (r->hold[src.slot][i].p)
                                tl_wait(tl, r->hold[src.slot][i]);
                        r->hold[src.slot][i].p = NULL;
                }
                tl_copy_to(tl, rows_of(tl, r->kbuf[src.slot], src.n),
                           gqa_head_rows(tl, r->a->k, src.b, src.h, src.j0, src.n));
                tl_copy_to(tl, rows_of(tl, r->vbuf[src.slot], src.n),
                           gqa_head_rows(tl, r->a->v, src.b, src.h, src.j0, src.n));
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

/* The next fetched tile, without topping up: the caller tops up once the
 * slots it frees are no longer read. */
static bool ring_pop_only(struct gqa_kv_ring *r, struct gqa_kv_src *out)
{
        if (r->count == 0)
                return false;
        *out = r->fifo[r->head];
        r->head = (r->head + 1) % GQA_MAX_DEPTH;
        r->count--;
        return true;
}

/* The next fetched tile (its slot stays untouched until the next pop);
 * tops the ring up first so the DMA runs ahead. Outside any scope. */
static bool ring_pop(tl_ctx *tl, struct gqa_kv_ring *r, struct gqa_kv_src *out)
{
        if (!ring_pop_only(r, out))
                return false;
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
                gqa_merge(tl, &m, &l, &o, mc, lc, oc);
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

/* Most pairs whose states a decode PE keeps at once: their reduce waits
 * until the chunk's keys are all streamed, so no PE stalls mid-stream on
 * a child that is still streaming. The chunk is what the PE's TCM holds
 * beside the K/V ring and the Q slots, at most this many. */
#define DECODE_MAX_CHUNK 64

void gqa_decode_run(tl_ctx *tl, const struct gqa_args *a, const struct gqa_decode_plan *p)
{
        int64_t g = a->group, d = a->d, t = p->kv_tile;
        int64_t span = p->s1 - p->s0, tiles = span > 0 ? (span + t - 1) / t : 0;
        if (p->n_pairs == 0)
                return;
        int64_t es = (int64_t)tl_dtype_size(a->dt), nq_slots = p->lazy ? 1 : a->depth;
        int64_t used = (p->lazy ? 0 : (int64_t)a->depth * 2 * t * d * es) + nq_slots * g * d * es;
        int64_t per_pair = g * (d + 2) * 4 + (p->parent < 0 ? g * d * es : 0);
        int64_t chunk = (tl_machine_info(tl).tcm_alloc_bytes - used) / per_pair;
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
                ring_alloc(tl, &ring, a, t, 1);
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
                                        struct lazy_keys kk = { .b = b, .h = h,
                                                                .j0 = p->s0 + ti * t };
                                        kk.n = min64(t, p->s1 - kk.j0);
                                        kk.chunk = a->prim_tile ? a->prim_tile : kk.n;
                                        kk.nc = n_chunks(kk.n, &kk.chunk);
                                        tl_scratch_scope_begin(tl);
                                        if (p->composite)
                                                attend_composite(tl, a, s, qbuf[0], &kk, ti == 0);
                                        else if (a->fold)
                                                attend_chunked(tl, a, s, qbuf[0], &kk, ti == 0);
                                        else
                                                attend_per_head(tl, a, s, qbuf[0], &kk, ti == 0);
                                        tl_scratch_scope_end(tl);
                                } else {
                                        struct gqa_kv_src src = { 0 };
                                        if (!ring_pop(tl, &ring, &src))
                                                break;  /* cannot happen: every tile was produced */
                                        tl_scratch_scope_begin(tl);
                                        attend(tl, s, qbuf[vi % nq],
                                               rows_of(tl, ring.kbuf[src.slot], src.n),
                                               rows_of(tl, ring.vbuf[src.slot], src.n), a->scale,
                                               ti == 0);
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

/* A sub-block: rows [r0, r0 + rows) of its block, hs heads x qls queries
 * starting at query i0 (heads split in halves when the block's head count
 * is even, else the queries). */
struct sub_block {
        int64_t r0, rows;            /* its rows of the block */
        int64_t hs, i0, qls;         /* heads, first query, queries per head */
};

/* How sub-block x sees keys [j0, j0 + n). */
enum tile_view { TILE_HIDDEN, TILE_FULL, TILE_MASKED };

/* Key j is seen by query i iff j <= i + S - Sq (causal). */
static enum tile_view tile_view_of(const struct gqa_args *a, const struct sub_block *sb,
                                   int64_t j0, int64_t n)
{
        if (!a->causal)
                return TILE_FULL;
        int64_t off = sb->i0 + a->s - a->sq;   /* row 0 sees keys <= off */
        if (j0 > off + sb->qls - 1)
                return TILE_HIDDEN;
        return j0 + n - 1 <= off ? TILE_FULL : TILE_MASKED;
}

/* Keys of the block's stream: [0, *full) in whole tiles seen by every row
 * of the block, then [*full, *end) where the diagonal runs. */
static void block_keys(const struct gqa_args *a, const struct gqa_qblock *qb, int64_t *full,
                       int64_t *end)
{
        if (!a->causal) {
                *full = *end = a->s;
                return;
        }
        int64_t off = qb->i0 + a->s - a->sq;
        *full = max64(0, min64(a->s, off + 1));
        *end = max64(0, min64(a->s, off + qb->ql));
}

static int64_t snake(int64_t round, int64_t dealers, int64_t me)
{
        return round * dealers + (round % 2 == 0 ? me : dealers - 1 - me);
}

/* Items of n dealt over `dealers` that `me` gets. */
static int64_t dealt(int64_t n, int64_t dealers, int64_t me)
{
        int64_t c = 0;
        while (snake(c, dealers, me) < n)
                c++;
        return c;
}

void gqa_prefill_work_init(tl_ctx *tl, const struct gqa_args *a, struct gqa_prefill_work *w,
                           const int64_t lo[2], const int64_t hi[2], const struct gqa_short *sm,
                           int64_t dealers, int64_t me)
{
        (void)tl;
        *w = (struct gqa_prefill_work){ .sm = sm, .dealers = dealers, .me = me };
        int64_t rows = 0;
        for (int i = 0; i < 2; i++) {
                w->lo[i] = lo[i];
                w->hi[i] = hi[i];
                rows = max64(rows, hi[i] - lo[i]);
        }
        /* The setup resolved the block's heads and rows per head. */
        w->hpp = a->heads_per_pe;
        w->ql = a->q_tile;
        w->hgs = a->group / w->hpp;
        for (int i = 0; i < 2; i++)
                w->nrb[i] = (hi[i] - lo[i] + w->ql - 1) / w->ql;
        int64_t nrb = w->nrb[0] + w->nrb[1];
        if (sm) {
                w->per_pair = dealt(nrb * w->hgs, dealers, me);
                w->n = w->per_pair * sm->n_pairs;
        } else {
                w->npairs = a->batch * a->hkv;
                w->n = dealt(nrb * w->npairs * w->hgs, dealers, me);
        }
}

/* The i-th block of w. */
static void work_block(const struct gqa_args *a, const struct gqa_prefill_work *w, int64_t i,
                       struct gqa_qblock *qb)
{
        int64_t k, pair, hg;
        if (w->sm) {
                int64_t idx = snake(i % w->per_pair, w->dealers, w->me);
                pair = gqa_short_pair(w->sm, i / w->per_pair);
                k = idx / w->hgs;
                hg = idx % w->hgs;
        } else {
                int64_t idx = snake(i, w->dealers, w->me);
                k = idx / (w->npairs * w->hgs);
                pair = idx % (w->npairs * w->hgs) / w->hgs;
                hg = idx % w->hgs;
        }
        k = w->nrb[0] + w->nrb[1] - 1 - k;   /* latest rows (most keys) first */
        int part = k < w->nrb[0] ? 0 : 1;
        int64_t i0 = w->lo[part] + (part ? k - w->nrb[0] : k) * w->ql;
        *qb = (struct gqa_qblock){ .b = pair / a->hkv, .kvh = pair % a->hkv, .hpp = w->hpp,
                                   .i0 = i0, .ql = min64(w->ql, w->hi[part] - i0) };
        qb->h0 = qb->kvh * a->group + hg * w->hpp;
}

/* Producer state of a PE's prefill stream: the tiles of its blocks. */
struct prefill_stream {
        const struct gqa_args *a;    /* shapes */
        const struct gqa_prefill_work *w; /* the blocks */
        int64_t block;               /* block being produced */
        struct gqa_qblock qb;        /* its rows */
        int64_t pos, full, end;      /* next key; whole tiles below full; keys below end */
};

static void stream_block(struct prefill_stream *ps)
{
        work_block(ps->a, ps->w, ps->block, &ps->qb);
        ps->pos = 0;
        block_keys(ps->a, &ps->qb, &ps->full, &ps->end);
}

/* The next tile of the stream, block after block: the prefetch runs on
 * into the next block. A block whose rows see no key has no tile. */
static bool prefill_produce(tl_ctx *tl, void *ctx, struct gqa_kv_src *out)
{
        (void)tl;
        struct prefill_stream *ps = ctx;
        while (ps->pos >= ps->end) {
                if (++ps->block >= ps->w->n)
                        return false;
                stream_block(ps);
        }
        int64_t j0 = ps->pos, lim = j0 < ps->full ? ps->full : ps->end;
        int64_t n = min64(ps->a->kv_tile, lim - j0);
        ps->pos += n;
        *out = (struct gqa_kv_src){ .b = ps->qb.b, .h = ps->qb.kvh, .j0 = j0, .n = n,
                                    .block = ps->block };
        return true;
}

/* A prefill PE's buffers. */
struct prefill_pe {
        struct gqa_kv_ring ring;     /* K/V prefetch slots (TCM) */
        struct gqa_state st[2];      /* running state per sub-block (TCM; apart: no merge waits) */
        struct gqa_state rows[2];    /* views made per block: its rows of st, */
        tl_tensor *q[2], *s[2][2];   /* of Q, and sbuf as [rows, n] (per sub-block) */
        tl_tensor *out[2];           /* flat [rows_max * D], dtype: two blocks' outputs (TCM) */
        tl_tensor *sbuf[2][2];       /* flat score tiles [rows, kv_tile], fp32, per sub-block x 2 */
};

/* The block's Q . K^T of sub-block x into its score buffer: its [rows, n] scores. */
static tl_tensor *scores(tl_ctx *tl, struct prefill_pe *pe, tl_tensor *qs,
                         const struct sub_block *sb, int x, int64_t ti, tl_tensor *k)
{
        int64_t n = tl_dim(k, 0), d = tl_dim(k, 1), i = ti % 2;
        if (ti == 0)            /* its first tile in the block (causal: it sees tile 0 if any) */
                pe->q[x] = tl_view(tl, qs, ((int64_t[]){ sb->r0, 0 }), ((int64_t[]){ sb->rows, d }));
        if (ti < 2 || tl_dim(pe->s[x][i], 1) != n)      /* q, k, s: pinned (TCM, scratch) */
                pe->s[x][i] = flat_as(tl, pe->sbuf[x][i], 2, ((int64_t[]){ sb->rows, n }));
        tl_tensor *q = pe->q[x], *s = pe->s[x][i];
        tl_composite(tl, &(tl_composite_desc){
                .op = TL_GEMM, .a = q, .b = k, .trans_b = true, .out = s,
                .tile_m = sb->rows, .tile_n = n, .tile_k = d,
        });
        return s;
}

/* Merge scores s of sub-block x against keys [j0, j0 + n) into its state
 * in place (the softmax_merge recipe); a tile the diagonal crosses is
 * masked first (into scratch of the block's diagonal scope). Returns the
 * merge's handle, valid until the enclosing scope ends. */
static tl_handle merge_tile(tl_ctx *tl, const struct gqa_args *a, struct prefill_pe *pe,
                            const struct sub_block *sb, int x, tl_tensor *s, tl_tensor *v, int64_t j0,
                            enum tile_view view)
{
        const struct gqa_state st = pe->rows[x];
        tl_set_pinned(v, true);
        if (view == TILE_MASKED) {
                int64_t n = tl_dim(s, 1);
                tl_tensor *s3 = tl_reshape(tl, s, 3, ((int64_t[]){ sb->hs, sb->qls, n }));
                tl_tensor *mk = tl_mask_causal(tl, s3, sb->i0 + a->s - a->sq - j0);
                s = tl_reshape(tl, mk, 2, ((int64_t[]){ sb->rows, n }));
        }
        return tl_softmax_merge(tl, s, v, st.m, st.l, st.o);
}

/* Sub-blocks of block qb: two when it has two or more heads (an even
 * count split in halves) or queries, else one. */
static int sub_blocks(const struct gqa_qblock *qb, struct sub_block sb[2])
{
        int64_t h = qb->hpp, q = qb->ql;
        if (h % 2 == 0) {
                for (int x = 0; x < 2; x++)
                        sb[x] = (struct sub_block){ .r0 = x * (h / 2) * q, .rows = (h / 2) * q,
                                                    .hs = h / 2, .i0 = qb->i0, .qls = q };
                return 2;
        }
        if (h == 1 && q >= 2) {
                int64_t q0 = q / 2;
                sb[0] = (struct sub_block){ .r0 = 0, .rows = q0, .hs = 1, .i0 = qb->i0, .qls = q0 };
                sb[1] = (struct sub_block){ .r0 = q0, .rows = q - q0, .hs = 1, .i0 = qb->i0 + q0,
                                            .qls = q - q0 };
                return 2;
        }
        sb[0] = (struct sub_block){ .r0 = 0, .rows = h * q, .hs = h, .i0 = qb->i0, .qls = q };
        return 1;
}

/* A score tile issued but not yet merged. */
struct pending {
        bool on;                     /* there is one */
        tl_tensor *s, *v;            /* its scores and V */
        int64_t j0, slot;            /* its keys' start and ring slot */
        enum tile_view view;         /* masked or not */
};

static void merge_pending(tl_ctx *tl, const struct gqa_args *a, struct prefill_pe *pe,
                          const struct sub_block *sb, struct pending *p, int x)
{
        if (!p->on)
                return;
        pe->ring.hold[p->slot][x] = merge_tile(tl, a, pe, sb, x, p->s, p->v, p->j0, p->view);
        p->on = false;
}

void gqa_prefill_run(tl_ctx *tl, const struct gqa_args *a, const struct gqa_prefill_work *w)
{
        if (w->n == 0)
                return;
        int64_t r = a->rows_max, d = a->d, t = a->kv_tile, rs = (r + 1) / 2;
        struct prefill_pe pe = { 0 };
        ring_alloc(tl, &pe.ring, a, t, 2);
        /* Sub-block 0 may be the whole block (one sub-block). O starts
         * finite (0): a merge rescales it by alpha = 0. */
        for (int x = 0; x < 2; x++) {
                int64_t n = x ? rs : r;
                pe.st[x] = state_alloc(tl, n, d);   /* outside scopes: it lives on */
                tl_scratch_scope_begin(tl);
                tl_copy_to(tl, pe.st[x].o, tl_fill(tl, TL_FP32, 2, ((int64_t[]){ n, d }), 0.0f));
                tl_scratch_scope_end(tl);
        }
        bool one = gqa_one_sub_block(a->heads_per_pe);
        for (int i = 0; i < 2; i++) {
                pe.out[i] = tl_alloc(tl, TL_TCM, a->dt, 1, ((int64_t[]){ r * d }));
                pe.sbuf[0][i] = tl_alloc(tl, TL_SCRATCH, TL_FP32, 1,
                                         ((int64_t[]){ (one ? r : rs) * t }));
                pe.sbuf[1][i] = one ? NULL
                                    : tl_alloc(tl, TL_SCRATCH, TL_FP32, 1, ((int64_t[]){ rs * t }));
        }
        struct prefill_stream ps = { .a = a, .w = w, .block = 0 };
        stream_block(&ps);
        pe.ring.produce = prefill_produce;
        pe.ring.ctx = &ps;
        ring_top_up(tl, &pe.ring);
        struct gqa_kv_src src;
        bool have = ring_pop_only(&pe.ring, &src);
        tl_tensor *done = NULL;      /* the previous block's output, its store not yet issued */
        struct gqa_qblock done_qb = { 0 };
        for (int64_t bi = 0; bi < w->n; bi++) {
                struct gqa_qblock qb;
                work_block(a, w, bi, &qb);
                struct sub_block sb[2];
                int nsb = sub_blocks(&qb, sb);
                int64_t rows = qb.hpp * qb.ql;
                tl_scratch_scope_begin(tl);
                if (done) {
                        /* The previous block's store, in this block's scope:
                         * its end waits for it before the buffer is reused. */
                        tl_store(tl, q_rows(tl, a->o, done_qb.b, done_qb.h0, done_qb.hpp,
                                            done_qb.i0, done_qb.ql),
                                 flat_as(tl, done, 4, ((int64_t[]){ 1, done_qb.hpp, done_qb.ql,
                                                                    d })));
                }
                /* Q of the block, scaled once for all its tiles; a fresh state. */
                tl_tensor *q = tl_load(tl, q_rows(tl, a->q, qb.b, qb.h0, qb.hpp, qb.i0, qb.ql));
                tl_tensor *qs = tl_scale(tl, tl_reshape(tl, q, 2, ((int64_t[]){ rows, d })),
                                         a->scale);
                struct gqa_state st[2];
                for (int x = 0; x < nsb; x++) {
                        int64_t n = sb[x].rows;
                        st[x] = pe.rows[x] = state_rows(tl, &pe.st[x], n);
                        tl_copy_to(tl, st[x].m,
                                   tl_fill(tl, TL_FP32, 2, ((int64_t[]){ n, 1 }), GQA_NEG_BIG));
                        tl_copy_to(tl, st[x].l, tl_fill(tl, TL_FP32, 2, ((int64_t[]){ n, 1 }), 0.0f));
                        /* O = 0 in place (it is finite): a row that sees no
                         * key ends as 0, not as the previous block's O. */
                        tl_set_pinned(st[x].o, true);
                        tl_composite(tl, &(tl_composite_desc){
                                .op = TL_NONE, .out = st[x].o, .n_epilogue = 1,
                                .epilogue = (tl_epilogue[]){ { .op = TL_SCALE, .factor = 0.0f } },
                        });
                }
                struct pending pend = { 0 };
                int64_t ti = 0;
                bool diag = false;   /* the diagonal's scope is open */
                while (have && src.block == bi) {
                        tl_tensor *k = rows_of(tl, pe.ring.kbuf[src.slot], src.n);
                        tl_tensor *v = rows_of(tl, pe.ring.vbuf[src.slot], src.n);
                        enum tile_view view[2];
                        for (int x = 0; x < nsb; x++) {
                                view[x] = tile_view_of(a, &sb[x], src.j0, src.n);
                                /* The diagonal's tiles come last in a block: their
                                 * masked scores live until its end. */
                                if (view[x] == TILE_MASKED && !diag) {
                                        tl_scratch_scope_begin(tl);
                                        diag = true;
                                }
                        }
                        /* Sub-block 0's scores go to PE_GEMM while sub-block
                         * 1's previous tile merges on PE_MATH, and then the
                         * other way round. */
                        tl_tensor *s0 = NULL;
                        if (view[0] != TILE_HIDDEN)
                                s0 = scores(tl, &pe, qs, &sb[0], 0, ti, k);
                        if (nsb == 2) {
                                merge_pending(tl, a, &pe, &sb[1], &pend, 1);
                                if (view[1] != TILE_HIDDEN)
                                        pend = (struct pending){
                                                .on = true, .s = scores(tl, &pe, qs, &sb[1], 1, ti, k),
                                                .v = v, .j0 = src.j0, .slot = src.slot,
                                                .view = view[1] };
                        }
                        if (s0)
                                pe.ring.hold[src.slot][0] =
                                        merge_tile(tl, a, &pe, &sb[0], 0, s0, v, src.j0, view[0]);
                        ti++;
                        ring_top_up(tl, &pe.ring);
                        have = ring_pop_only(&pe.ring, &src);
                }
                merge_pending(tl, a, &pe, &sb[1], &pend, 1);
                if (diag) {
                        tl_scratch_scope_end(tl);
                        memset(pe.ring.hold, 0, sizeof pe.ring.hold);   /* freed, and ended */
                }
                /* O / l into the output buffer; stored in the next block's scope. */
                tl_tensor *out = flat_as(tl, pe.out[bi % 2], 2, ((int64_t[]){ rows, d }));
                for (int x = 0; x < nsb; x++) {
                        tl_scratch_scope_begin(tl);
                        tl_copy_to(tl, tl_view(tl, out, ((int64_t[]){ sb[x].r0, 0 }),
                                               ((int64_t[]){ sb[x].rows, d })),
                                   normalise(tl, st[x].l, st[x].o));
                        tl_scratch_scope_end(tl);
                }
                tl_scratch_scope_end(tl);
                /* The block's scope end waited for its merges (and freed
                 * their handles): no slot is read any more. */
                memset(pe.ring.hold, 0, sizeof pe.ring.hold);
                done = pe.out[bi % 2];
                done_qb = qb;
        }
        tl_store(tl, q_rows(tl, a->o, done_qb.b, done_qb.h0, done_qb.hpp, done_qb.i0, done_qb.ql),
                 flat_as(tl, done, 4, ((int64_t[]){ 1, done_qb.hpp, done_qb.ql, d })));
}

/* ---- mapping work onto the machine ----------------------------------------------- */

int gqa_rank(tl_ctx *tl, int cube, int pe)
{
        int per_sip = tl_num_programs(tl, 1);
        return tl_rank(tl, pe, cube % per_sip, cube / per_sip);
}

void gqa_tree(tl_ctx *tl, struct gqa_decode_plan *p, int64_t base, int64_t member, int64_t pg)
{
        int pes = tl_num_programs(tl, 0);
        p->n_child = 0;
        p->parent = -1;
        for (int64_t l = 1; l < pg; l *= 2) {
                if (member % (2 * l) != 0) {
                        int64_t up = base + member - l;
                        p->parent = gqa_rank(tl, (int)(up / pes), (int)(up % pes));
                        return;
                }
                if (member + l < pg && p->n_child < GQA_MAX_CHILD) {
                        int64_t dn = base + member + l;
                        p->child[p->n_child++] = gqa_rank(tl, (int)(dn / pes), (int)(dn % pes));
                }
        }
}

/* The lazy variants' plan (opt2, opt3; their dispatch bench sweeps tiles
 * as a fraction of this span): every pair on every PE, keys split over
 * all PEs of all cubes, the two-level chain to PE 0 of cube 0 along the
 * mesh rows, then the column of row heads, then the cubes. */
static void decode_chain_plan(tl_ctx *tl, const struct gqa_args *a, struct gqa_decode_plan *p)
{
        int pes = tl_num_programs(tl, 0), cubes = gqa_cube_count(tl);
        int gc = gqa_cube_index(tl), e = tl_program_id(tl, 0);
        tl_machine mc = tl_machine_info(tl);
        int cols = mc.mesh_cols > 0 && pes % mc.mesh_cols == 0 ? mc.mesh_cols : pes;
        int rows = pes / cols, r = e / cols, c = e % cols;
        *p = (struct gqa_decode_plan){ .n_pairs = a->batch * a->hkv, .parent = -1, .lazy = true };
        int64_t n = (int64_t)pes * cubes;
        gqa_split(a->s, n, (int64_t)gc * pes + e, &p->s0, &p->s1);
        p->kv_tile = a->kv_tile;
        if (a->tile_frac > 0) {
                int64_t span = (a->s + n - 1) / n;
                p->kv_tile = max64(1, (int64_t)(a->tile_frac * (double)span + 0.5));
        }
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

void gqa_decode_long_plan(tl_ctx *tl, const struct gqa_args *a, struct gqa_decode_plan *p,
                          bool lazy)
{
        if (lazy) {
                decode_chain_plan(tl, a, p);
                return;
        }
        /* Groups of pg consecutive PEs (global order: cube-major), one per
         * pair at a time: pairs are dealt to the groups round-robin, a
         * pair's keys split over its group, and a binary tree brings the
         * group's states to its first PE in log2(pg) steps. With at least
         * as many pairs as cubes a group stays inside one cube. */
        int pes = tl_num_programs(tl, 0), cubes = gqa_cube_count(tl);
        int64_t n = (int64_t)pes * cubes, np = a->batch * a->hkv;
        int64_t groups = min64(np, n), pg = n / groups;
        int64_t idx = (int64_t)gqa_cube_index(tl) * pes + tl_program_id(tl, 0);
        int64_t group = idx / pg, member = idx % pg;
        *p = (struct gqa_decode_plan){ .parent = -1, .kv_tile = a->kv_tile };
        if (group >= groups)
                return;                            /* PEs left over by the division */
        p->pair0 = group;
        p->round_stride = groups;
        p->groups = 1;
        p->n_pairs = (np - group + groups - 1) / groups;
        gqa_split(a->s, pg, member, &p->s0, &p->s1);
        gqa_tree(tl, p, idx - member, member, pg);
}

bool gqa_short_map(tl_ctx *tl, const struct gqa_args *a, struct gqa_short *m)
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
                return false;                      /* PEs left over by the division */
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
        return m->n_pairs > 0;
}

int64_t gqa_short_pair(const struct gqa_short *m, int64_t i)
{
        struct gqa_decode_plan probe = { .pair0 = m->pair0, .round_stride = m->round_stride,
                                         .group0 = m->group0, .group_step = m->group_step,
                                         .groups = m->groups };
        return pair_at(&probe, i);
}

/* gqa_merge_into: see gqa_common.h. */
void gqa_merge_into(tl_ctx *tl, tl_tensor *m, tl_tensor *l, tl_tensor *o, tl_tensor *mb,
                    tl_tensor *lb, tl_tensor *ob)
{
        tl_tensor *mn = m, *ln = l, *on = o;
        gqa_merge(tl, &mn, &ln, &on, mb, lb, ob);
        tl_copy_to(tl, l, ln);
        tl_copy_to(tl, o, on);
        tl_copy_to(tl, m, mn);
}
