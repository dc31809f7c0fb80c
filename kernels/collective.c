/* kernels/collective.c: a barrier, and all-gather, reduce-scatter and
 * all-reduce over tl_send and tl_recv (see collective.h; docs/adr/0026).
 * Device code: runs on the PEs of a launch.
 *
 * Every chunk of a piece travels along a path of members: an all-gather's
 * from the piece's owner out to every member (each stores it at its first
 * visit and passes it on), a reduce-scatter's from the far members to the
 * owner (each adds its own input at its first visit; the owner stores the
 * sum). A PE walks the positions of the paths in order, and at each the
 * pieces, and in each piece its own chunks: what it receives at position
 * p its neighbour sent at p - 1, in the same order, so the queues of
 * every (source, tag) match. Sends do not block, so no PE waits on one
 * that waits on it. */
#include <stddef.h>
#include <string.h>

#include "collective.h"

void coll_barrier(tl_ctx *tl, const struct coll_group *g, int tag)
{
        if (g->n < 2)
                return;
        int round = 0;
        for (int step = 1; step < g->n; step *= 2, round++) {
                tl_scratch_scope_begin(tl);
                tl_tensor *token = tl_fill(tl, TL_FP32, 1, ((int64_t[]){ 1 }), 0.0f);
                tl_send(tl, coll_rank(g, g->me + step), token, tag + round);
                tl_wait_tensor(tl, tl_recv(tl, coll_rank(g, g->me - step), tag + round));
                tl_scratch_scope_end(tl);
        }
}

/* ---- paths ---- */

/* Which kind of path. */
enum path_kind {
        PATH_GATHER,                 /* from the owner to every member */
        PATH_REDUCE,                 /* from the far members to the owner */
};

static int mod(int i, int n)
{
        return (i % n + n) % n;
}

/* The number of positions of piece j's path in flow f (0: no path). */
static int path_len(const struct coll_team *t, enum path_kind kind, int f, int j)
{
        int n = t->n;
        if (t->algo == COLL_RING)
                return n;
        if (!t->bidir)                               /* out to n - 1 and back */
                return 2 * n - 1 - j;
        if (kind == PATH_GATHER)
                return f == 0 ? n - j : j + 1;
        return f == 0 ? j + 1 : n - 1 - j;           /* flow 1 ends next to j */
}

/* The member at position p of piece j's path in flow f. */
static int path_at(const struct coll_team *t, enum path_kind kind, int f, int j, int p)
{
        int n = t->n;
        if (t->algo == COLL_RING) {
                int dir = f == 0 ? 1 : -1;
                return kind == PATH_GATHER ? mod(j + dir * p, n) : mod(j + dir * (p + 1), n);
        }
        if (!t->bidir) {
                if (kind == PATH_GATHER) {           /* j .. n-1, then n-2 .. 0 */
                        int up = n - j;
                        return p < up ? j + p : n - 2 - (p - up);
                }
                return p < n ? p : n - 2 - (p - n);  /* 0 .. n-1, then n-2 .. j */
        }
        if (kind == PATH_GATHER)
                return f == 0 ? j + p : j - p;
        return f == 0 ? p : n - 1 - p;
}

/* A bidirectional ring multicast's hops in flow f for chunk k of piece
 * j: the n - 1 other members split between the flows, forward n / 2 on an
 * even ring and backward the rest, the two swapped from one message to
 * the next (tt-metal's multicast gather alternates the two routes of an
 * even ring packet by packet; here message by message, starting on the
 * other route on every other member, so the flows' links carry the same
 * on average); (n - 1) / 2 each way on an odd ring. */
static int ring_mcast_hops(const struct coll_team *t, int f, int j, int64_t k)
{
        int fwd = t->n / 2;
        if (t->n % 2 == 0 && (j + k) % 2)
                fwd = t->n - 1 - fwd;
        return f == 0 ? fwd : t->n - 1 - fwd;
}

/* The length of chunk k of piece j's gather path in flow f: a
 * bidirectional ring multicast's goes as far as its hops, every other
 * path_len's. */
static int gather_len(const struct coll_team *t, int f, int j, int64_t k)
{
        if (t->mcast && t->algo == COLL_RING && t->bidir)
                return 1 + ring_mcast_hops(t, f, j, k);
        return path_len(t, PATH_GATHER, f, j);
}

/* Whether position p is member m's first on the path. */
static bool first_visit(const struct coll_team *t, enum path_kind kind, int f, int j, int p)
{
        int m = path_at(t, kind, f, j, p);
        for (int q = 0; q < p; q++)
                if (path_at(t, kind, f, j, q) == m)
                        return false;
        return true;
}

static int rank_of(const struct coll_team *t, int m, int f, int w)
{
        return t->ranks[(m * coll_flows(t) + f) * t->workers + w];
}

/* Whether chunk k is this PE's (its flow and worker). */
static bool my_chunk(const struct coll_team *t, int64_t k)
{
        if (t->algo == COLL_RING && t->bidir && !t->mcast)
                return k % 2 == t->flow && (k / 2) % t->workers == t->worker;
        return k % t->workers == t->worker;
}

/* ---- pieces and chunks ---- */

static int64_t extent(const struct coll_team *t, tl_tensor *full)
{
        return tl_dim(full, t->dim);
}

/* Rows of a piece of full (its chunks are cut from them). */
static int64_t piece_rows(const struct coll_team *t, int64_t ext, int64_t rows, int j)
{
        int64_t len = coll_piece_lo(ext, t->n, j + 1) - coll_piece_lo(ext, t->n, j);
        return t->dim == 1 && len ? rows : len;
}

static int64_t n_chunks(const struct coll_team *t, int64_t rows)
{
        return (rows + t->chunk_rows - 1) / t->chunk_rows;
}

/* Chunk k of a tensor x shaped like piece j (rows by the chunk). */
static tl_tensor *chunk_of(tl_ctx *tl, const struct coll_team *t, tl_tensor *x, int64_t k)
{
        int64_t rows = tl_dim(x, 0), r0 = k * t->chunk_rows;
        int64_t nr = rows - r0 < t->chunk_rows ? rows - r0 : t->chunk_rows;
        return tl_view(tl, x, ((int64_t[]){ r0, 0 }), ((int64_t[]){ nr, tl_dim(x, 1) }));
}

/* Piece j of the full tensor x; NULL when it is empty (more members than
 * the extent: it has no chunks). */
static tl_tensor *piece_of(tl_ctx *tl, const struct coll_team *t, tl_tensor *x, int j)
{
        int64_t ext = extent(t, x), lo = coll_piece_lo(ext, t->n, j);
        int64_t len = coll_piece_lo(ext, t->n, j + 1) - lo;
        if (!len)
                return NULL;
        if (t->dim == 0)
                return tl_view(tl, x, ((int64_t[]){ lo, 0 }), ((int64_t[]){ len, tl_dim(x, 1) }));
        return tl_view(tl, x, ((int64_t[]){ 0, lo }), ((int64_t[]){ tl_dim(x, 0), len }));
}

/* The values of x: a load from HBM, else (TCM) x itself. */
static tl_tensor *fetch(tl_ctx *tl, tl_tensor *x)
{
        return tl_space_of(x) == TL_HBM ? tl_load(tl, x) : x;
}

static void send_as(tl_ctx *tl, const struct coll_team *t, int dst, tl_tensor *x, int tag)
{
        tl_send(tl, dst, tl_dtype_of(x) == t->wire_dt ? x : tl_cast(tl, x, t->wire_dt), tag);
}

/* The largest path of the collective's flows. */
static int max_len(const struct coll_team *t, enum path_kind kind)
{
        int most = 0;
        for (int f = 0; f < coll_flows(t); f++)
                for (int j = 0; j < t->n; j++) {
                        int len = path_len(t, kind, f, j);
                        most = len > most ? len : most;
                }
        return most;
}

/* ---- the collectives ----
 *
 * At each position a PE first does the pieces it receives nothing for
 * (it sends its own), then the others: a PE never waits on a receive
 * while sends of the same position wait behind it. */

#define ACK_TAG 16                   /* acknowledgements, from a collective's tag base */
#define OWNER_TAG 24                 /* reduce-scatter partials to their owner, from it */
#define SYNC_TAG 12                  /* a partial's sync, from its partial's tag */

/* Acknowledge a chunk received from rank src (t->acks). */
static void ack(tl_ctx *tl, const struct coll_team *t, int src, int tag)
{
        if (!t->acks)
                return;
        tl_scratch_scope_begin(tl);
        tl_send(tl, src, tl_fill(tl, TL_FP32, 1, ((int64_t[]){ 4 }), 0.0f), tag + ACK_TAG);
        tl_scratch_scope_end(tl);
}

/* Take the acknowledgements of the chunks sent: n[i] from rank i's (a
 * flow sends to one rank, so a PE to at most two). */
static void take_acks(tl_ctx *tl, const struct coll_team *t, const int dst[2],
                      const int64_t n[2], int tag)
{
        for (int i = 0; t->acks && i < 2; i++)
                for (int64_t k = 0; k < n[i]; k++) {
                        tl_scratch_scope_begin(tl);
                        tl_recv(tl, dst[i], tag + ACK_TAG);
                        tl_scratch_scope_end(tl);
                }
}

/* Count a chunk sent to rank dst (for take_acks). */
static void count_sent(int dst, int dsts[2], int64_t n[2])
{
        int i = dsts[0] < 0 || dsts[0] == dst ? 0 : 1;
        dsts[i] = dst;
        n[i]++;
}

/* The chunks of piece j of the full tensor x. */
static int64_t piece_chunks(const struct coll_team *t, tl_tensor *x, int j)
{
        return n_chunks(t, piece_rows(t, extent(t, x), tl_dim(x, 0), j));
}

/* The chunks of piece j of full this PE handles at position p of the
 * piece's path in its flow (0: the position is not its member's); *len
 * is the path's length. */
static int64_t chunks_here(const struct coll_team *t, enum path_kind kind, tl_tensor *full,
                           int p, int j, int *len)
{
        *len = path_len(t, kind, t->flow, j);
        if (p >= *len || path_at(t, kind, t->flow, j, p) != t->me)
                return 0;
        return piece_chunks(t, full, j);
}

/* The rank that handles chunk k of a gather path at member m's position
 * p in flow f: its worker, but with t->mcast the member's router past the
 * owner (p > 0). */
static int gather_rank(const struct coll_team *t, int m, int f, int p, int64_t k)
{
        if (!t->mcast)
                return rank_of(t, m, f, t->worker);
        if (p > 0)
                return rank_of(t, m, f, 0) + t->relay_delta[f] + p - 1;
        return rank_of(t, m, f, (int)(k % t->workers));
}

/* What a gather's chunks share: the call's tensors and tag, and the
 * acknowledgements owed to this PE. */
struct gather_call {
        tl_tensor *in, *out;         /* this member's piece, the full result */
        bool own;                    /* the owner copies its piece */
        int tag;                     /* the collective's tag base */
        int dsts[2];                 /* the ranks sent to (count_sent) */
        int64_t sent[2];             /* and the chunks sent to each */
};

/* Chunk k of piece j at position p of its path, if it is this PE's. With
 * t->mcast the owner's worker keeps one chunk in flight (tt-metal's
 * multicast reader sends a page, flushes, then reads the next): it waits
 * for the next member's router to take each before the next; the router
 * returns that credit on tag + ACK_TAG. */
static void gather_chunk(tl_ctx *tl, const struct coll_team *t, struct gather_call *c, int p,
                         int j, int64_t k)
{
        int f = t->flow, len;
        int64_t chunks = chunks_here(t, PATH_GATHER, c->out, p, j, &len);
        if (k >= chunks || (!t->relay && !my_chunk(t, k)))
                return;
        len = gather_len(t, f, j, k);
        if (p >= len)
                return;
        int next = p + 1 < len ? path_at(t, PATH_GATHER, f, j, p + 1) : -1;
        int prev = p > 0 ? path_at(t, PATH_GATHER, f, j, p - 1) : -1;
        /* the owner's copy: flow 0's on a line, but a multicast's is flow
         * 1's (tt-metal's writer: its reader sends forward) */
        int copier = t->mcast && t->bidir ? 1 : 0;
        bool store = p > 0 ? first_visit(t, PATH_GATHER, f, j, p)
                           : c->own && ((t->algo == COLL_RING && !t->mcast) || f == copier);
        tl_scratch_scope_begin(tl);
        tl_tensor *x;
        if (p == 0) {
                x = fetch(tl, chunk_of(tl, t, c->in, k));
        } else {
                int from = gather_rank(t, prev, f, p - 1, k);
                x = tl_recv(tl, from, c->tag);
                ack(tl, t, from, c->tag);
                if (t->mcast && p == 1)
                        tl_send(tl, from, tl_fill(tl, TL_FP32, 1, ((int64_t[]){ 1 }), 0.0f),
                                c->tag + ACK_TAG);
        }
        if (store)
                tl_store(tl, chunk_of(tl, t, piece_of(tl, t, c->out, j), k), x);
        if (next >= 0) {
                int to = gather_rank(t, next, f, p + 1, k);
                send_as(tl, t, to, x, c->tag);
                count_sent(to, c->dsts, c->sent);
                if (t->mcast && p == 0)
                        tl_wait_tensor(tl, tl_recv(tl, to, c->tag + ACK_TAG));
        }
        tl_scratch_scope_end(tl);
}

void coll_all_gather(tl_ctx *tl, const struct coll_team *t, tl_tensor *in, tl_tensor *out,
                     bool own, int tag)
{
        int steps = max_len(t, PATH_GATHER);
        struct gather_call c = { .in = in, .out = out, .own = own, .tag = tag,
                                 .dsts = { -1, -1 } };
        /* with mcast a worker takes position 0, a router stage its own */
        int first = t->relay, last = t->mcast ? t->relay + 1 : steps;
        for (int p = first; p < last; p++)
                for (int j = 0; j < t->n; j++)
                        for (int64_t k = 0; k < piece_chunks(t, out, j); k++)
                                gather_chunk(tl, t, &c, p, j, k);
        take_acks(tl, t, c.dsts, c.sent, tag);
}

/* The rank a reduce path's position p sends to: the next member's PE of
 * the flow, but on a bidirectional line flow 1's last member hands the
 * partial sum to the owner's flow 0 PE, which adds it to its own. */
static int reduce_next(const struct coll_team *t, int f, int j, int p, int len)
{
        if (p + 1 < len)
                return rank_of(t, path_at(t, PATH_REDUCE, f, j, p + 1), f, t->worker);
        if (t->algo == COLL_LINE && t->bidir && f == 1)
                return rank_of(t, j, 0, t->worker);
        return -1;
}

/* The one-shot reduce-scatter (t->oneshot): this PE sends its chunks of
 * every other member's piece straight to that member's PE of its flow and
 * worker, nearest members first, then adds what the n - 1 others sent it
 * for its own piece to its own input, in member order from me + 1. */
static void reduce_scatter_oneshot(tl_ctx *tl, const struct coll_team *t, tl_tensor *in,
                                   tl_tensor *out, int tag)
{
        for (int d = 1; d <= t->n / 2; d++) {
                /* distance d ahead, then behind (once when they are one member) */
                for (int side = 0; side < 2; side++) {
                        int j = mod(t->me + (side ? -d : d), t->n);
                        if (side && j == mod(t->me + d, t->n))
                                continue;
                        tl_tensor *src = piece_of(tl, t, in, j);
                        for (int64_t k = 0; src && k < piece_chunks(t, in, j); k++) {
                                if (!my_chunk(t, k))
                                        continue;
                                tl_scratch_scope_begin(tl);
                                send_as(tl, t, rank_of(t, j, t->flow, t->worker),
                                        fetch(tl, chunk_of(tl, t, src, k)), tag);
                                tl_scratch_scope_end(tl);
                        }
                }
        }
        tl_tensor *mine = piece_of(tl, t, in, t->me);
        if (!mine)
                return;
        /* the running sum of a chunk, in TCM: the largest chunk's shape */
        tl_tensor *first = chunk_of(tl, t, mine, 0);
        tl_tensor *acc = tl_alloc(tl, TL_TCM, tl_dtype_of(first), 2,
                                  ((int64_t[]){ tl_dim(first, 0), tl_dim(first, 1) }));
        for (int64_t k = 0; k < piece_chunks(t, in, t->me); k++) {
                if (!my_chunk(t, k))
                        continue;
                tl_scratch_scope_begin(tl);
                tl_tensor *c = chunk_of(tl, t, mine, k);
                tl_tensor *x = tl_view(tl, acc, ((int64_t[]){ 0, 0 }),
                                       ((int64_t[]){ tl_dim(c, 0), tl_dim(c, 1) }));
                tl_copy_to(tl, x, fetch(tl, c));
                for (int i = 1; i < t->n; i++) {
                        tl_scratch_scope_begin(tl);
                        tl_tensor *y = tl_recv(tl, rank_of(t, mod(t->me + i, t->n), t->flow,
                                                           t->worker), tag);
                        tl_copy_to(tl, x, tl_add(tl, x, y));
                        tl_scratch_scope_end(tl);
                }
                tl_store(tl, chunk_of(tl, t, out, k), x);
                tl_scratch_scope_end(tl);
        }
}

/* The direct reduce-scatter's tags, from the collective's base: the start
 * barrier's increments forward and backward, and the connections' tokens
 * (its data travel on the base). */
#define DIRECT_FWD_TAG 8
#define DIRECT_BWD_TAG 9
#define DIRECT_CONN_TAG 10

void coll_token_send(tl_ctx *tl, int rank, int tag)
{
        tl_scratch_scope_begin(tl);
        tl_send(tl, rank, tl_fill(tl, TL_FP32, 1, ((int64_t[]){ 1 }), 0.0f), tag);
        tl_scratch_scope_end(tl);
}

void coll_token_take(tl_ctx *tl, int rank, int tag)
{
        tl_scratch_scope_begin(tl);
        tl_wait_tensor(tl, tl_recv(tl, rank, tag));
        tl_scratch_scope_end(tl);
}

void coll_direct_router(tl_ctx *tl, int worker, int tag)
{
        for (int call = 0; call < 2; call++) {       /* the open, then the close */
                coll_token_take(tl, worker, tag + DIRECT_CONN_TAG);
                coll_token_send(tl, worker, tag + DIRECT_CONN_TAG);
        }
}

/* The members the direct op sends to, in its order, into dst (returns how
 * many): farthest first, at distance d = n / 2 down to 1, the member d
 * ahead, then the one d behind (once when they are one member: on an
 * even ring the member n / 2 away is sent forward, as the start barrier
 * goes four hops one way and three the other on 8). */
static int direct_order(const struct coll_team *t, int *dst)
{
        int k = 0;
        for (int d = t->n / 2; d >= 1; d--) {
                dst[k++] = mod(t->me + d, t->n);
                if (mod(t->me - d, t->n) != mod(t->me + d, t->n))
                        dst[k++] = mod(t->me - d, t->n);
        }
        return k;
}

/* The direct op's start barrier: this PE sends an increment to each
 * neighbour and passes on what it receives, n / 2 hops forward and
 * (n - 1) / 2 backward (tt-metal's writer multicasts a semaphore
 * increment both ways and the routers pass it on); it returns with all
 * n - 1 taken. */
static void direct_barrier(tl_ctx *tl, const struct coll_team *t, int tag)
{
        int fwd = t->n / 2, bwd = (t->n - 1) / 2, w = t->worker;
        int next = rank_of(t, mod(t->me + 1, t->n), 0, w);
        int prev = rank_of(t, mod(t->me - 1, t->n), 0, w);
        coll_token_send(tl, next, tag + DIRECT_FWD_TAG);
        if (bwd)
                coll_token_send(tl, prev, tag + DIRECT_BWD_TAG);
        for (int h = 1; h <= fwd; h++) {
                coll_token_take(tl, prev, tag + DIRECT_FWD_TAG);
                if (h < fwd)
                        coll_token_send(tl, next, tag + DIRECT_FWD_TAG);
                if (h <= bwd) {
                        coll_token_take(tl, next, tag + DIRECT_BWD_TAG);
                        if (h < bwd)
                                coll_token_send(tl, prev, tag + DIRECT_BWD_TAG);
                }
        }
}

/* The chunks the direct op's worker sends, in its order (direct_order,
 * farthest first): calls fn for each (chunk k of piece src, which goes to
 * member to). */
static void direct_sends(tl_ctx *tl, const struct coll_team *t, tl_tensor *in,
                         void (*fn)(tl_ctx *, tl_tensor *src, int64_t k, int to, void *),
                         void *ctx)
{
        int dst[COLL_MAX_TEAM], n_dst = direct_order(t, dst);
        for (int i = 0; i < n_dst; i++) {
                tl_tensor *src = piece_of(tl, t, in, dst[i]);
                for (int64_t k = 0; src && k < piece_chunks(t, in, dst[i]); k++)
                        if (my_chunk(t, k))
                                fn(tl, src, k, dst[i], ctx);
        }
}

/* A chunk's rows and columns in the page of a direct op's send buffer. */
static tl_tensor *in_page(tl_ctx *tl, tl_tensor *page, tl_tensor *chunk)
{
        return tl_view(tl, page, ((int64_t[]){ 0, 0 }),
                       ((int64_t[]){ tl_dim(chunk, 0), tl_dim(chunk, 1) }));
}

/* What the direct op's reader thread takes (a copy, at most
 * TL_THREAD_ARG_BYTES): the team's fields before its ranks (the reader
 * sends nothing), as the writer's frame may end before the reader's
 * last step. */
#define DIRECT_TEAM_HEAD offsetof(struct coll_team, ranks)
struct direct_io {
        const struct coll_team *t;   /* the writer's team (the writer's use only) */
        tl_tensor *in;               /* the input, in HBM */
        tl_cb *cb;                   /* the send buffer */
        int tag;                     /* the collective's (the writer's) */
        unsigned char head[DIRECT_TEAM_HEAD]; /* the team's head, for the reader */
};
_Static_assert(sizeof(struct direct_io) <= TL_THREAD_ARG_BYTES,
               "the direct op's reader takes its arguments by value");

/* The reader's side: the team's head, and the buffer. */
struct direct_rd {
        const struct coll_team *t;
        tl_cb *cb;
};

static void direct_read_one(tl_ctx *tl, tl_tensor *src, int64_t k, int to, void *ctx)
{
        (void)to;
        const struct direct_rd *rd = ctx;
        tl_tensor *page = tl_cb_reserve_back(tl, rd->cb);
        tl_scratch_scope_begin(tl);
        tl_tensor *chunk = chunk_of(tl, rd->t, src, k);
        tl_copy_to(tl, in_page(tl, page, chunk), chunk);
        /* the read barrier: the scope's end waits for the read, so the
         * chunk is in before it is pushed and the next is read after it */
        tl_scratch_scope_end(tl);
        tl_cb_push_back(tl, rd->cb);
}

/* The reader (tt-metal's direct reader, its send phase): each chunk the
 * writer sends, in its order, read from HBM into the send buffer's next
 * page, one read at a time. */
static void direct_reader(tl_ctx *tl, void *argp)
{
        const struct direct_io *io = argp;
        struct coll_team t;
        memset(&t, 0, sizeof t);
        memcpy(&t, io->head, sizeof io->head);
        struct direct_rd rd = { .t = &t, .cb = io->cb };
        direct_sends(tl, &t, io->in, direct_read_one, &rd);
}

static void direct_send_one(tl_ctx *tl, tl_tensor *src, int64_t k, int to, void *ctx)
{
        const struct direct_io *io = ctx;
        tl_tensor *page = tl_cb_wait_front(tl, io->cb);
        tl_scratch_scope_begin(tl);
        send_as(tl, io->t, rank_of(io->t, to, 0, io->t->worker),
                in_page(tl, page, chunk_of(tl, io->t, src, k)), io->tag);
        tl_scratch_scope_end(tl);
        tl_cb_pop_front(tl, io->cb);
}

/* The direct reduce-scatter (t->direct; tt-metal's
 * reduce_scatter_minimal_direct, docs/adr/0054, 0057): a writer (this
 * thread) and a reader thread, as the op's kernels. The reader reads the
 * chunks the writer sends, in its order, into a two-page buffer from the
 * start: its first two overlap the opening and the barrier. The writer
 * pays the op's fixed cost (t->fixed_ns), starts opening both
 * connections (a token to each router's stand-in), finishes opening
 * (their tokens back), meets the ring (direct_barrier), then sends each
 * other member its chunks of that member's piece straight to it as the
 * reader hands them over, one message a chunk, farthest member first (the
 * machine routes them), closes both connections (a token each way;
 * nothing waits for the messages' acknowledgements) and, for each of its
 * chunks of its own piece, once all n - 1 contributions have landed in
 * its TCM, adds them to its own input and stores the sum. No exit
 * barrier. */
static void reduce_scatter_direct(tl_ctx *tl, const struct coll_team *t, tl_tensor *in,
                                  tl_tensor *out, int tag)
{
        int conn = tag + DIRECT_CONN_TAG;
        /* the send buffer: two pages of the largest chunk a member sends */
        int64_t page_rows = tl_dim(in, 0), page_cols = tl_dim(in, 1);
        if (t->dim == 0)
                page_rows = (page_rows + t->n - 1) / t->n;
        else
                page_cols = (page_cols + t->n - 1) / t->n;
        if (page_rows > t->chunk_rows)
                page_rows = t->chunk_rows;
        struct direct_io io = {
                .t = t, .in = in, .tag = tag,
                .cb = tl_cb_make(tl, "direct_send", tl_dtype_of(in), 2,
                                 ((int64_t[]){ page_rows, page_cols }), 2),
        };
        memcpy(io.head, t, sizeof io.head);
        tl_thread_start(tl, direct_reader, &io, sizeof io);
        tl_delay(tl, t->fixed_ns);
        for (int d = 0; d < 2; d++)
                if (t->conn[d] >= 0)
                        coll_token_send(tl, t->conn[d], conn);
        for (int d = 0; d < 2; d++)
                if (t->conn[d] >= 0)
                        coll_token_take(tl, t->conn[d], conn);
        direct_barrier(tl, t, tag);
        direct_sends(tl, t, in, direct_send_one, &io);
        for (int d = 0; d < 2; d++)
                if (t->conn[d] >= 0)
                        coll_token_send(tl, t->conn[d], conn);
        for (int d = 0; d < 2; d++)
                if (t->conn[d] >= 0)
                        coll_token_take(tl, t->conn[d], conn);
        tl_tensor *mine = piece_of(tl, t, in, t->me);
        if (!mine)
                return;
        /* the n - 1 arrivals of a chunk, each where its bytes land: a TCM
         * slot a member, the largest chunk's shape */
        tl_tensor *first = chunk_of(tl, t, mine, 0);
        tl_tensor *got = tl_alloc(tl, TL_TCM, t->wire_dt, 3,
                                  ((int64_t[]){ t->n - 1, tl_dim(first, 0), tl_dim(first, 1) }));
        for (int64_t k = 0; k < piece_chunks(t, in, t->me); k++) {
                if (!my_chunk(t, k))
                        continue;
                tl_scratch_scope_begin(tl);
                tl_tensor *c = chunk_of(tl, t, mine, k), *own = fetch(tl, c);
                int64_t r = tl_dim(c, 0), cols = tl_dim(c, 1);
                tl_tensor *arr = tl_view(tl, got, ((int64_t[]){ 0, 0, 0 }),
                                         ((int64_t[]){ t->n - 1, r, cols }));
                for (int i = 1; i < t->n; i++) {
                        tl_tensor *slot = tl_view(tl, got, ((int64_t[]){ i - 1, 0, 0 }),
                                                  ((int64_t[]){ 1, r, cols }));
                        tl_recv_into(tl, tl_reshape(tl, slot, 2, ((int64_t[]){ r, cols })),
                                     rank_of(t, mod(t->me + i, t->n), 0, t->worker), tag);
                }
                tl_tensor *sum = tl_reshape(tl, tl_sum(tl, arr, 0), 2, ((int64_t[]){ r, cols }));
                tl_store(tl, chunk_of(tl, t, out, k), tl_add(tl, sum, own));
                tl_scratch_scope_end(tl);
        }
}

/* A reduce-scatter's sync after a partial x sent to rank dst on tag
 * (t->sync_packets). With the team's fabric payload (rs_payload) it is a
 * packet of SYNC_BYTES for every sync_packets of x's packets (at least
 * one), as tt-metal's semaphore increments; else x's wire bytes /
 * sync_packets, at least 4 (a packet slot's worth, pro rata). */
#define SYNC_BYTES 16
static void sync_send(tl_ctx *tl, const struct coll_team *t, int dst, tl_tensor *x, int tag)
{
        if (t->sync_packets <= 0)
                return;
        int64_t bytes = tl_numel(x) * (t->wire_dt == TL_FP32 ? 4 : 2);
        if (t->rs_payload > 0) {
                int64_t packets = (bytes + t->rs_payload - 1) / t->rs_payload;
                int64_t syncs = (packets + t->sync_packets / 2) / t->sync_packets;
                bytes = (syncs > 1 ? syncs : 1) * SYNC_BYTES;
                tl_set_fabric_payload(tl, SYNC_BYTES);
        } else {
                bytes /= t->sync_packets;
        }
        tl_scratch_scope_begin(tl);
        tl_send(tl, dst, tl_fill(tl, TL_FP32, 1, ((int64_t[]){ bytes > 4 ? bytes / 4 : 1 }), 0.0f),
                tag + SYNC_TAG);
        tl_scratch_scope_end(tl);
        tl_set_fabric_payload(tl, t->rs_payload);
}

/* Take the sync of a partial received from rank src on tag. */
static void sync_recv(tl_ctx *tl, const struct coll_team *t, int src, int tag)
{
        if (t->sync_packets <= 0)
                return;
        tl_scratch_scope_begin(tl);
        tl_recv(tl, src, tag + SYNC_TAG);
        tl_scratch_scope_end(tl);
}

/* Whether what position p of a reduce path (of length len) in flow f
 * sends goes to the member that stores it: the next position is the last
 * (but flow 1 of a bidirectional line hands its partial on from there), or
 * this is flow 1's handoff itself. Those partials travel on tag +
 * OWNER_TAG: the owner takes them after the partials it passes on, so
 * they have their own queue. */
static bool to_owner(const struct coll_team *t, int f, int p, int len)
{
        bool handoff = t->algo == COLL_LINE && t->bidir && f == 1;
        return handoff ? p + 1 == len : p + 2 == len;
}

void coll_reduce_scatter(tl_ctx *tl, const struct coll_team *t, tl_tensor *in, tl_tensor *out,
                         int tag)
{
        if (t->direct) {
                reduce_scatter_direct(tl, t, in, out, tag);
                return;
        }
        tl_set_fabric_payload(tl, t->rs_payload);
        if (t->oneshot) {
                reduce_scatter_oneshot(tl, t, in, out, tag);
                tl_set_fabric_payload(tl, 0);
                return;
        }
        int f = t->flow, steps = max_len(t, PATH_REDUCE), len, dsts[2] = { -1, -1 };
        int64_t sent[2] = { 0, 0 };
        bool merge = t->algo == COLL_LINE && t->bidir && f == 0;
        for (int p = 0; p < steps; p++) {
                for (int q = 0; q < 3 * t->n; q++) {
                        int pass = q / t->n, j = q % t->n;
                        int64_t chunks = chunks_here(t, PATH_REDUCE, in, p, j, &len);
                        if (!chunks)
                                continue;
                        /* the partial from flow 1's side of the owner, if any */
                        bool other = merge && p + 1 == len && j + 1 < t->n;
                        int prev = p > 0 ? path_at(t, PATH_REDUCE, f, j, p - 1) : -1;
                        int next = reduce_next(t, f, j, p, len);
                        /* sends first, then the partials passed on, then the
                         * pieces this member owns (which may wait for the
                         * far side's partial) */
                        if (pass != (next < 0 ? 2 : prev >= 0))
                                continue;
                        int in_tag = tag + (next < 0 ? OWNER_TAG : 0);
                        int out_tag = tag + (to_owner(t, f, p, len) ? OWNER_TAG : 0);
                        bool add = first_visit(t, PATH_REDUCE, f, j, p);
                        tl_tensor *src = piece_of(tl, t, in, j);
                        for (int64_t k = 0; k < chunks; k++) {
                                if (!my_chunk(t, k))
                                        continue;
                                tl_scratch_scope_begin(tl);
                                tl_tensor *x = NULL;
                                if (prev >= 0) {
                                        x = tl_recv(tl, rank_of(t, prev, f, t->worker), in_tag);
                                        sync_recv(tl, t, rank_of(t, prev, f, t->worker), in_tag);
                                        ack(tl, t, rank_of(t, prev, f, t->worker), tag);
                                }
                                if (other) {
                                        int from = rank_of(t, j + 1, 1, t->worker);
                                        tl_tensor *y = tl_recv(tl, from, tag + OWNER_TAG);
                                        sync_recv(tl, t, from, tag + OWNER_TAG);
                                        ack(tl, t, from, tag);
                                        x = x ? tl_add(tl, x, y) : y;
                                }
                                if (add) {
                                        tl_tensor *mine = fetch(tl, chunk_of(tl, t, src, k));
                                        x = x ? tl_add(tl, x, mine) : mine;
                                }
                                if (next >= 0) {
                                        send_as(tl, t, next, x, out_tag);
                                        sync_send(tl, t, next, x, out_tag);
                                        count_sent(next, dsts, sent);
                                } else {
                                        tl_store(tl, chunk_of(tl, t, out, k), x);
                                }
                                tl_scratch_scope_end(tl);
                        }
                }
        }
        take_acks(tl, t, dsts, sent, tag);
        tl_set_fabric_payload(tl, 0);
}

tl_tensor *coll_piece(tl_ctx *tl, const struct coll_team *t, tl_tensor *full, int j)
{
        return piece_of(tl, t, full, j);
}

void coll_member_barrier(tl_ctx *tl, const struct coll_team *t, int tag)
{
        int per = coll_flows(t) * t->workers;
        if (per > 1) {
                /* their ranks are evenly spaced */
                const int *r = &t->ranks[t->me * per];
                struct coll_group local = { .first = r[0], .stride = r[1] - r[0], .n = per,
                                            .me = t->flow * t->workers + t->worker };
                coll_barrier(tl, &local, tag);
        }
}

void coll_setup_tensors(tl_setup *s, enum coll_op op, tl_dtype dt, int n, int64_t rows,
                        int64_t cols, int dim, tl_tensor **x, tl_tensor **y)
{
        int64_t yr = rows, yc = cols;
        if (op == COLL_ALL_GATHER)
                *(dim ? &yc : &yr) *= n;
        else if (op == COLL_REDUCE_SCATTER)
                *(dim ? &yc : &yr) = ((dim ? yc : yr) + n - 1) / n;
        *x = tl_setup_tensor(s, "x", TL_INPUT, dt, 3, (int64_t[]){ n, rows, cols });
        *y = tl_setup_tensor(s, "y", TL_OUTPUT, dt, 3, (int64_t[]){ n, yr, yc });
        tl_setup_shard(s, *x, 0, 0);
        tl_setup_shard(s, *y, 0, 0);
}

tl_tensor *coll_member_view(tl_ctx *tl, tl_tensor *t, int s)
{
        int64_t rows = tl_dim(t, 1), cols = tl_dim(t, 2);
        tl_tensor *v = tl_view(tl, t, ((int64_t[]){ s, 0, 0 }), ((int64_t[]){ 1, rows, cols }));
        return tl_reshape(tl, v, 2, ((int64_t[]){ rows, cols }));
}

void coll_reduce_scatter_front(tl_ctx *tl, const struct coll_team *t, tl_tensor *in,
                               tl_tensor *out, int tag)
{
        int64_t rows = tl_dim(in, 0), cols = tl_dim(in, 1), ext = t->dim ? cols : rows;
        int64_t len = coll_piece_lo(ext, t->n, t->me + 1) - coll_piece_lo(ext, t->n, t->me);
        tl_tensor *mine = tl_view(tl, out, ((int64_t[]){ 0, 0 }),
                                  ((int64_t[]){ t->dim ? rows : len, t->dim ? len : cols }));
        coll_reduce_scatter(tl, t, in, mine, tag);
}

void coll_all_reduce(tl_ctx *tl, const struct coll_team *t, tl_tensor *in, tl_tensor *out,
                     int tag)
{
        tl_tensor *mine = piece_of(tl, t, out, t->me);
        coll_reduce_scatter(tl, t, in, mine, tag);
        /* the gather reads the piece the member's PEs stored: they meet first */
        coll_member_barrier(tl, t, tag + 1);
        coll_all_gather(tl, t, mine, out, false, tag + 32);
}

/* The neighbour of this PE's member on side d (+1, -1), or -1. */
static int neighbour(const struct coll_team *t, int d)
{
        int m = t->me + d;
        if (t->algo == COLL_LINE && (m < 0 || m >= t->n))
                return -1;
        m = mod(m, t->n);
        bool same = d < 0 && t->algo == COLL_RING && m == mod(t->me + 1, t->n);
        if (m == t->me || same)
                return -1;                           /* itself, or a ring's side +1 again */
        return m;
}

void coll_handshake(tl_ctx *tl, const struct coll_team *t, int tag)
{
        tl_scratch_scope_begin(tl);
        tl_tensor *token = tl_fill(tl, TL_FP32, 1, ((int64_t[]){ 1 }), 0.0f);
        for (int d = 1; d >= -1; d -= 2)
                if (neighbour(t, d) >= 0)
                        tl_send(tl, rank_of(t, neighbour(t, d), t->flow, t->worker), token,
                                tag);
        for (int d = 1; d >= -1; d -= 2)
                if (neighbour(t, d) >= 0)
                        tl_wait_tensor(tl, tl_recv(tl, rank_of(t, neighbour(t, d), t->flow,
                                                               t->worker),
                                                   tag));
        tl_scratch_scope_end(tl);
}

/* The flow a multicast barrier's token from member `from` to member `to`
 * takes: 0 (forward) or 1. A line's goes towards the higher members on
 * flow 0; a ring's forward when `to` is at most n / 2 members ahead; a
 * unidirectional team's always on flow 0. */
static int mcast_flow(const struct coll_team *t, int from, int to)
{
        if (!t->bidir)
                return 0;
        if (t->algo == COLL_RING)
                return mod(to - from, t->n) <= t->n / 2 ? 0 : 1;
        return to > from ? 0 : 1;
}

void coll_mcast_barrier(tl_ctx *tl, const struct coll_team *t, int tag, bool exit)
{
        int w = t->worker, me = t->me;
        tl_scratch_scope_begin(tl);
        tl_tensor *token = tl_fill(tl, TL_FP32, 1, ((int64_t[]){ 1 }), 0.0f);
        for (int i = 0; i < t->n; i++)
                if (i != me && mcast_flow(t, me, i) == t->flow)
                        tl_send(tl, rank_of(t, i, 0, w), token, tag);
        if (t->flow == 0) {
                for (int i = 0; i < t->n; i++)
                        if (i != me)
                                tl_wait_tensor(tl, tl_recv(tl, rank_of(t, i, mcast_flow(t, i, me),
                                                                       w),
                                                           tag));
                if (t->bidir && !exit)
                        tl_send(tl, rank_of(t, me, 1, w), token, tag);
        } else if (!exit) {
                tl_wait_tensor(tl, tl_recv(tl, rank_of(t, me, 0, w), tag));
        }
        tl_scratch_scope_end(tl);
}

void coll_allreduce(tl_ctx *tl, const struct coll_group *g, tl_tensor *x, tl_dtype wire_dt,
                    int tag)
{
        if (g->n < 2)
                return;
        struct coll_team t = { .n = g->n, .algo = COLL_RING, .workers = 1, .me = g->me,
                               .chunk_rows = 1, .dim = 1, .wire_dt = wire_dt };
        if (g->n > COLL_MAX_TEAM)
                return;
        for (int i = 0; i < g->n; i++)
                t.ranks[i] = coll_rank(g, i);
        tl_tensor *flat = tl_reshape(tl, x, 2, ((int64_t[]){ 1, tl_numel(x) }));
        coll_all_reduce(tl, &t, flat, flat, tag);
}
