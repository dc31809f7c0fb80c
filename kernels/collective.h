/* kernels/collective.h: collectives for kernels, written with tl_send and
 * tl_recv: a dissemination barrier, and all-gather, reduce-scatter and
 * all-reduce (sum) in ring and line forms, uni- or bidirectional
 * (docs/adr/0026).
 *
 * A group is a list of ranks; every member calls the collective with the
 * same list, its own index in it and the same tag base. Messages of one
 * (source, tag) arrive in send order, so a group may reuse its tags from
 * one call to the next as long as every member makes the same calls in
 * the same order. A collective uses the tags [tag, tag + COLL_TAGS). */
#ifndef CUBESIM_KERNELS_COLLECTIVE_H
#define CUBESIM_KERNELS_COLLECTIVE_H

#include <stdbool.h>

#include <cubesim/tl.h>

#define COLL_TAGS 64                 /* tags one collective may use from its base */
#define COLL_MAX_TEAM 1024           /* PEs of a team (members x flows x workers) */

/* The message size and pipeline depth parameters of a collective kernel
 * (kernels/ccl.c, kernels/ccl_async.c): the same key, range and default
 * message size; the pipeline's default depth and the help differ. */
#define COLL_PARAM_CHUNK_BYTES(help) \
        { "chunk_bytes", TL_PARAM_INT, 65536, 1, 1 << 24, NULL, help }
#define COLL_PARAM_PIPELINE(depth, help) \
        { "pipeline", TL_PARAM_INT, depth, 1, 1 << 20, NULL, help }

/* A group of ranks first + i * stride, i < n, in ring order, and this
 * PE's place in it. */
struct coll_group {
        int first;                   /* rank of member 0 */
        int stride;                  /* ranks between neighbouring members */
        int n;                       /* members */
        int me;                      /* this PE's index, 0 .. n - 1 */
};

/* The rank of member i (taken mod n) of g. */
static inline int coll_rank(const struct coll_group *g, int i)
{
        return g->first + ((i % g->n + g->n) % g->n) * g->stride;
}

/* Return once every member has entered: ceil(log2 n) rounds in which
 * member i sends a token to i + 2^r and waits for one from i - 2^r. */
void coll_barrier(tl_ctx *tl, const struct coll_group *g, int tag);

enum coll_algo {
        COLL_RING,                   /* members 0 .. n-1 and back to 0 */
        COLL_LINE,                   /* members 0 .. n-1, no link from n-1 to 0 */
};

/* A team: n members (devices) in ring or line order, each with flows x
 * workers PEs. A flow is a direction: ring flow 0 runs from member i to
 * i + 1, flow 1 (bidirectional) from i to i - 1; line flow 0 runs towards
 * member n - 1 and flow 1 towards member 0 (a unidirectional line runs
 * out to member n - 1 and back). Messages are chunks of chunk_rows rows of
 * a piece; chunk k is carried by worker k mod workers of its flow (a
 * bidirectional ring gives even chunks to flow 0, odd to flow 1; a
 * bidirectional line carries every chunk both ways). Every PE of the team
 * calls the collective with the same team but its own me, flow and
 * worker. */
struct coll_team {
        int n;                       /* members */
        enum coll_algo algo;         /* ring or line */
        bool bidir;                  /* two flows (else one) */
        int workers;                 /* PEs per flow and member, >= 1 */
        int me;                      /* this PE's member */
        int flow;                    /* its flow, 0 .. flows - 1 */
        int worker;                  /* its worker, 0 .. workers - 1 */
        int64_t chunk_rows;          /* rows per message, >= 1 */
        int dim;                     /* the axis pieces are cut along: 0 rows, 1 columns */
        tl_dtype wire_dt;            /* the dtype chunks travel as */
        bool acks;                   /* each chunk received is acknowledged to its sender
                                      * (a ring fabric's first-level acknowledgement: a
                                      * message back over the link per message); the
                                      * sender takes the acknowledgements at the end */
        int sync_packets;            /* reduce-scatter: a sync with the neighbour per this
                                      * many packets of partials (0: none); each is a
                                      * packet slot on the link whatever it carries
                                      * (tt-metal's fabric counts slots), modelled pro
                                      * rata: a message of 1 / sync_packets of each
                                      * partial's bytes after it */
        bool oneshot;                /* reduce-scatter: every member sends each piece
                                      * straight to its owner (routed over the links,
                                      * no member adds on the way), the owner adds the
                                      * n - 1 it receives to its own: tt-metal's ring
                                      * reduce-scatter for small inputs */
        bool mcast;                  /* all-gather on a line: multicast, as tt-metal's line
                                      * all-gather (docs/adr/0048): the owner's workers send
                                      * each chunk once; at every later position of its
                                      * path a router PE of the member and flow (one a
                                      * position: a router's channels do not wait on each
                                      * other), not a worker, takes it, stores it and
                                      * passes it on */
        bool direct;                 /* reduce-scatter: tt-metal's direct ring op
                                      * (reduce_scatter_minimal_direct, docs/adr/0054):
                                      * one PE a member (a worker a link) for both
                                      * directions; it opens its connections (conn), meets
                                      * the ring in a start barrier, sends every other
                                      * member its piece straight, farthest first, a chunk
                                      * a message, closes, and adds the n - 1 it receives
                                      * to its own. The team has one flow (bidir false);
                                      * no acknowledgements, syncs or exit barrier */
        int64_t fixed_ns;            /* direct: the op's fixed cost a call (tl_delay
                                      * before the connections open) */
        int64_t rs_payload;          /* the fabric payload a packet of its reduce-scatter's
                                      * sends (tl_set_fabric_payload; 0: the machine's) */
        int conn[2];                 /* direct: the ranks standing in for the routers of
                                      * its forward (to member me + 1) and backward
                                      * connections (coll_direct_router), or -1: none */
        int relay;                   /* mcast: 0 for a worker, else this PE is its
                                      * member's router stage for position `relay` of its
                                      * flow's paths (its worker is 0) */
        int relay_delta[2];          /* mcast: flow f's router stage for position p > 0 of
                                      * member m is rank ranks[(m * flows + f) * workers] +
                                      * relay_delta[f] + p - 1 */
        int ranks[COLL_MAX_TEAM];    /* PE (m, f, w) is ranks[(m * flows + f) * workers + w] */
};

/* The team's flows: 2 if bidir, else 1. */
static inline int coll_flows(const struct coll_team *t)
{
        return t->bidir ? 2 : 1;
}

/* Piece j of n of an extent: [ext * j / n, ext * (j + 1) / n). */
static inline int64_t coll_piece_lo(int64_t ext, int n, int j)
{
        return ext * j / n;
}

/* The tensors are 2-D, in HBM or TCM (persistent); along t->dim a full
 * tensor of extent E is cut into n pieces, piece j of rows (dim 0) or
 * columns (dim 1) [coll_piece_lo(E, n, j), coll_piece_lo(E, n, j + 1)),
 * uneven when n does not divide E. */

/* out (full) = the pieces of every member in order; in is this member's
 * piece (its shape). own: also copy in to this member's piece of out
 * (false when it is there already). */
void coll_all_gather(tl_ctx *tl, const struct coll_team *t, tl_tensor *in, tl_tensor *out,
                     bool own, int tag);
/* out (piece me's shape) = piece me of the sum over the members of in
 * (full); along the paths, one-shot (t->oneshot) or direct (t->direct). */
void coll_reduce_scatter(tl_ctx *tl, const struct coll_team *t, tl_tensor *in, tl_tensor *out,
                         int tag);
/* A router's side of a direct reduce-scatter's connection (t->direct) with
 * the worker at rank `worker`: it answers the open (a token back for the
 * worker's) and the close (its teardown increment). Uses tag (the
 * collective's base). */
void coll_direct_router(tl_ctx *tl, int worker, int tag);
/* Piece j of the full tensor full (a view), NULL when it is empty. */
tl_tensor *coll_piece(tl_ctx *tl, const struct coll_team *t, tl_tensor *full, int j);
/* The PEs of this PE's member (every flow and worker) meet (coll_barrier
 * on tag): a member's all-gather may then read what all of them stored. */
void coll_member_barrier(tl_ctx *tl, const struct coll_team *t, int tag);

/* The collectives of kernels/ccl.c and kernels/ccl_async.c (their own
 * enums take these values). */
enum coll_op { COLL_ALL_GATHER, COLL_REDUCE_SCATTER, COLL_ALL_REDUCE };

/* Their tensors, declared at setup: x [n, rows, cols] (member s's input
 * x[s]) and y [n, ...] (its output y[s]), both sharded by member (axis 0).
 * y[s] is x[s] but along dim: n times its extent (all-gather), piece 0's
 * extent rounded up (reduce-scatter), or the same (all-reduce). */
void coll_setup_tensors(tl_setup *s, enum coll_op op, tl_dtype dt, int n, int64_t rows,
                        int64_t cols, int dim, tl_tensor **x, tl_tensor **y);
/* Member s's 2-D [rows, cols] of t ([n, rows, cols], of coll_setup_tensors). */
tl_tensor *coll_member_view(tl_ctx *tl, tl_tensor *t, int s);
/* coll_reduce_scatter of in (full, 2-D) into the start of out: out's
 * [0, 0] corner of piece me's shape along t->dim. */
void coll_reduce_scatter_front(tl_ctx *tl, const struct coll_team *t, tl_tensor *in,
                               tl_tensor *out, int tag);
/* out (full) = the sum over the members of in (full); out may be in. A
 * reduce-scatter into out's piece me, the member's workers meet
 * (coll_member_barrier), then an all-gather of the pieces. */
void coll_all_reduce(tl_ctx *tl, const struct coll_team *t, tl_tensor *in, tl_tensor *out,
                     int tag);

/* A token (one word) to rank on tag, or one taken from it (waited for):
 * a handshake's half. */
void coll_token_send(tl_ctx *tl, int rank, int tag);
void coll_token_take(tl_ctx *tl, int rank, int tag);

/* Meet the team's neighbours: this PE sends a token to the PE of its flow
 * and worker on each neighbouring member (both sides; a line's ends have
 * one) and waits for theirs. A collective run alone opens and closes with
 * it (tt-metal's entry barrier and exit wait, docs/adr/0026). Uses tag
 * (one message a pair of members). */
void coll_handshake(tl_ctx *tl, const struct coll_team *t, int tag);

/* A multicast gather's entry or exit barrier (t->mcast; tt-metal's
 * multicast all-gather, docs/adr/0048): each PE of flow 0 sends a token to
 * its worker on every member ahead, each of flow 1 to flow 0's on every
 * member behind (a unidirectional team's flow 0 to every member), and flow
 * 0's PE waits for all n - 1; at the entry (!exit) it then gives its
 * member's flow 1 PE the word, which waits for it. Uses tag. */
void coll_mcast_barrier(tl_ctx *tl, const struct coll_team *t, int tag, bool exit);
/* Sum x over the group, in place: x is a contiguous persistent (TCM)
 * tensor of the same shape on every member; pieces travel as wire_dt
 * (e.g. TL_BF16: half the bytes of fp32) and the sums are x's dtype. The
 * all-reduce above on a one-worker unidirectional ring of g's members,
 * one message a piece. */
void coll_allreduce(tl_ctx *tl, const struct coll_group *g, tl_tensor *x, tl_dtype wire_dt,
                    int tag);

#endif
