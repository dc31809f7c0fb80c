/* kernels/ccl.c: the collectives of collective.h run alone, one member
 * per SIP (a chip), as tt-metal's CCL benchmarks run them
 * (validate-tt-ccl, docs/adr/0026):
 *
 *   all_gather      y[s] = the x of every member, concatenated along dim
 *   reduce_scatter  y[s] = piece s's member index of the sum of every x,
 *                   cut along dim (uneven pieces when n does not divide
 *                   the extent; the rest of y[s] is left as it was)
 *   all_reduce      y[s] = the sum of every x
 *
 * `bytes` is each device's input: x[s] is [rows, cols] of dtype with
 * rows x cols x size = bytes (cols = min(cols, bytes / size)). Every SIP
 * is a member, in ring order: SIP order 0 .. n-1, or on a mesh of SIPs
 * (system.inter_sip.topology mesh) row 0 left to right, the other rows
 * snaking back over columns 1 .. C-1, and column 0 back up, so each
 * member's neighbours are its mesh neighbours (a 2 x 4 T3000: 0 1 2 3 7 6
 * 5 4; a mesh with a short last row: SIP order). Each member runs workers
 * PEs per flow (flows: 2 when bidir) on PEs 0, 1, ... of cube 0; they move
 * the tensors between HBM and the links in messages of chunk_bytes, at
 * least `pipeline` messages a piece. Each PE opens and closes the run with
 * a handshake with its neighbours (coll_handshake: tt-metal's entry
 * barrier and exit wait; an all-reduce, a reduce-scatter then an
 * all-gather there, pays both halves'), and on a ring every message is
 * acknowledged (the ring fabric's first-level acknowledgement). With mux
 * (the default) each flow also has a mux PE on each SIP (PE workers x
 * flows + flow): its workers wait for its ready and connect before the
 * entry handshake, and tear down, waiting for its acknowledgement, after
 * the exit one (tt-metal's fabric mux handshakes, docs/adr/0041); their
 * data do not pass through it. On a line the gather (all_gather, an
 * all_reduce's second half) multicasts (mcast, the default; tt-metal's
 * multicast all-gather, docs/adr/0048): one worker a flow and link sends
 * each chunk of its own piece once, waiting for each to be taken before
 * the next; router PEs, one a flow and position past the owner (PE
 * workers x flows + muxes + flow x stages + position - 1), store the
 * chunks and pass them on; the first takes the workers' connections in
 * place of a mux; the owner's copy is flow 1's; a line-wide barrier
 * opens and closes the gather (coll_mcast_barrier). A one-shot ring
 * reduce-scatter (at most oneshot_bytes a device) is, with direct (the
 * default), tt-metal's reduce_scatter_minimal_direct (coll_team.direct,
 * docs/adr/0054): one worker a link (PEs 0 .. links - 1) sends both ways,
 * in messages of chunk_bytes not cut for a pipeline, and opens and closes
 * its own connections with two PEs standing in for its link's routers
 * (direct_pe); no mux, no entry or exit handshake. An all-reduce's
 * reduce-scatter half on a ring is the same op; its gather then opens and
 * closes as a collective, as before. */
#include "collective.h"

enum ccl_op {
        CCL_ALL_GATHER = COLL_ALL_GATHER,
        CCL_REDUCE_SCATTER = COLL_REDUCE_SCATTER,
        CCL_ALL_REDUCE = COLL_ALL_REDUCE,
};

static const char *const algos[] = { "ring", "line", NULL };
static const char *const dtypes[] = { "bf16", "fp32", NULL };

struct ccl_args {
        enum ccl_op op;              /* which collective */
        int n;                       /* members: every SIP */
        int order[COLL_MAX_TEAM];    /* member i is SIP order[i] */
        int algo;                    /* enum coll_algo */
        bool bidir;                  /* two flows */
        bool oneshot;                /* the reduce-scatter sends pieces straight to their owners */
        bool direct;                 /* the one-shot reduce-scatter is tt-metal's direct op
                                      * (coll_team.direct): direct_workers PEs a member, no
                                      * mux, two router stand-ins each (direct_pe) */
        int direct_workers;          /* its PEs a member: one a link */
        int64_t direct_rows;         /* rows per message of the direct op: chunk_bytes,
                                      * not cut further for a pipeline */
        int64_t direct_fixed_ns;     /* the direct op's fixed cost a call, each worker */
        int sync_packets;            /* the reduce-scatter's packets per sync (0: none) */
        int64_t rs_payload;          /* the reduce-scatter's fabric payload a packet: rs_pages
                                      * pages of 32 x 32 (0: the machine's) */
        bool mux;                    /* a mux PE a flow, the workers' connections through it */
        bool mcast;                  /* the gather (all_gather, all_reduce's second half)
                                      * multicasts on a line: router PEs, one a flow and
                                      * position, pass the chunks on; the first takes the
                                      * gather's connections */
        int workers;                 /* PEs per flow and member */
        int dim;                     /* the concatenation / split axis */
        int64_t rows, cols;          /* each member's input */
        int64_t chunk_rows;          /* rows per message */
        int64_t gather_rows;         /* rows per message of a multicast gather (mcast) */
        int gather_workers;          /* workers a flow of a multicast gather: one a link (an
                                      * all-reduce's, at most its reduce-scatter's) */
        tl_dtype dt;                 /* the tensors' dtype */
        tl_tensor *x;                /* [n, rows, cols], x[s] in SIP s's HBM */
        tl_tensor *y;                /* [n, ...], y[s] in SIP s's HBM */
};

static const struct tl_param ccl_params[] = {
        { "bytes", TL_PARAM_INT, 65536, 2, 1ll << 40, NULL, "each device's input, bytes" },
        { "dim", TL_PARAM_INT, 0, 0, 1, NULL, "the axis gathered or split: 0 rows, 1 columns" },
        { "algo", TL_PARAM_CHOICE, 0, 0, 0, algos, "ring or line" },
        { "bidir", TL_PARAM_INT, 1, 0, 1, NULL, "1: both directions (two flows)" },
        { "workers", TL_PARAM_INT, 0, 0, 64, NULL,
          "PEs per flow and device (0: tt-metal's rule by the bytes a link carries; a "
          "multicast all-gather and the direct reduce-scatter: one a link)" },
        { "cols", TL_PARAM_INT, 1024, 1, 1 << 20, NULL,
          "columns of each device's input (a 2 KiB bf16 page by default)" },
        COLL_PARAM_CHUNK_BYTES("bytes per message (whole rows, at least one)"),
        COLL_PARAM_PIPELINE(1, "at least this many messages a piece (smaller than chunk_bytes "
                               "if need be)"),
        { "dtype", TL_PARAM_CHOICE, 0, 0, 0, dtypes, "bf16 or fp32" },
        { "rs_rule", TL_PARAM_INT, 1, 0, 1, NULL,
          "workers=0: 1, a reduce-scatter's (an all-reduce's) by tt-metal's reduce-scatter "
          "rule; 0, by the all-gather's, as every op before" },
        { "rs_pages", TL_PARAM_INT, 2, 0, 64, NULL,
          "the reduce-scatter's pages (32 x 32) a fabric packet: tt-metal's writes carry at "
          "most 2 (0: the machine's packet_bytes)" },
        { "sync_packets", TL_PARAM_INT, 0, -1, 1 << 20, NULL,
          "reduce-scatter packets per sync with the neighbour (0: 4 on a ring, 20 on a line; "
          "-1: none)" },
        { "mux", TL_PARAM_INT, 1, 0, 1, NULL,
          "1: each flow's workers connect to the fabric through a mux PE (its ready, their "
          "connect and teardown handshakes); 0: no connections" },
        { "oneshot_bytes", TL_PARAM_INT, 524288, 0, 1ll << 40, NULL,
          "a ring reduce-scatter of at most this many bytes a device is one-shot (0: never)" },
        { "direct", TL_PARAM_INT, 1, 0, 1, NULL,
          "1: a one-shot ring reduce-scatter (and an all-reduce's reduce-scatter half) is "
          "tt-metal's direct op: one PE a link and device for both directions (whatever "
          "bidir), its own fabric connections (with mux: a token each way with a PE standing "
          "in for each router), a start barrier of the whole ring, each chunk of chunk_bytes "
          "one message straight to its owner, farthest first, no exit barrier; 0: the "
          "one-shot path (the worker rule's workers, a mux, pipelined messages, nearest "
          "first)" },
        { "direct_fixed_ns", TL_PARAM_INT, 3500, 0, 100000, NULL,
          "the direct op's fixed cost a call, ns: each worker's core is busy that long "
          "before it opens its connections (fitted to tt-metal's measured rows, "
          "docs/adr/0057; 0: none)" },
        { "mcast", TL_PARAM_INT, 1, 0, 1, NULL,
          "1: on a line, and on a ring below mcast_pages a device, the gather "
          "multicasts as tt-metal's: one worker a direction and link "
          "sends its piece once, one message in flight; router PEs on each device, one a "
          "direction and position, store and pass it on (the first takes the workers' "
          "connections); 0: the workers store and pass on" },
        { "mcast_pages", TL_PARAM_INT, 64, 0, 1ll << 40, NULL,
          "a ring's gather multicasts (mcast) below this many pages (32 x 32 tiles) a device "
          "(tt-metal's all-gather: 64; 0: never)" },
        { NULL, 0, 0, 0, 0, NULL, NULL },
};

/* Member order over the SIPs: a ring through a mesh of rows of `row`. */
static void ring_order(int n, int row, int *order)
{
        int rows = n / row, k = 0;
        if (rows <= 1 || row < 2 || n % row) {
                for (int i = 0; i < n; i++)
                        order[i] = i;
                return;
        }
        for (int c = 0; c < row; c++)
                order[k++] = c;
        for (int r = 1; r < rows; r++)
                for (int i = 1; i < row; i++)
                        order[k++] = r * row + ((r % 2) ? row - i : i);
        for (int r = rows - 1; r >= 1; r--)
                order[k++] = r * row;
}

/* The bytes a link carries in tt-metal's worker rules: (n - 1) / n of
 * the tensor T over the links, halved on a ring (two directions). */
static double link_bytes(int n, double tensor_bytes, int links, bool ring)
{
        return tensor_bytes * (n - 1) / n / links / (ring ? 2 : 1);
}

/* tt-metal's all-gather workers per direction and link (its
 * default_workers, docs/tt-sources.md CCL-WORKERS): by the bytes a link
 * carries, (n - 1) / n of the tensor T, halved on a ring (two directions):
 * 1 up to 4 KiB (a packet), 4 above 256 KiB, else 2. The all-gather's, and
 * with rs_rule=0 every op's, T being its bottleneck tensor. */
static int rule_workers(int n, double tensor_bytes, bool ring)
{
        double per_link = link_bytes(n, tensor_bytes, 1, ring);
        return per_link > 256.0 * 1024 ? 4 : per_link <= 4.0 * 1024 ? 1 : 2;
}

/* tt-metal's reduce-scatter workers per direction and link (its own
 * default_workers, docs/tt-sources.md RS-WORKERS; an all-reduce's
 * reduce-scatter op takes them too): by the bytes a link carries, (n - 1)
 * / n of the input T over the links, halved on a ring: 1 up to 4 KiB (a
 * packet); on a line 2 below 500 000 B, 8 above 4 000 000 B, else 4; on a
 * ring 2 below 1 MiB, 8 above 50 MiB, else 4. */
static int rule_workers_rs(int n, double tensor_bytes, int links, bool ring)
{
        double per_link = link_bytes(n, tensor_bytes, links, ring);
        if (per_link <= 4.0 * 1024)
                return 1;
        if (ring)
                return per_link < 1024.0 * 1024 ? 2 : per_link > 50.0 * 1024 * 1024 ? 8 : 4;
        return per_link < 500000.0 ? 2 : per_link > 4000000.0 ? 8 : 4;
}

/* The router stages of a multicast gather a flow: one a position of its
 * paths past the owner (n - 1 on a bidirectional line, out and back
 * 2n - 2 on a unidirectional one; on a ring the farther of its two
 * routes, n / 2, both ways, or n - 1 one way). */
static int ccl_stages(const struct ccl_args *a)
{
        if (a->algo == COLL_RING)
                return a->bidir ? a->n / 2 : a->n - 1;
        return a->bidir ? a->n - 1 : 2 * a->n - 2;
}

/* tt-metal's all-gather picks its multicast factory on a line whatever
 * the size, on a ring below 64 pages (32 x 32 tiles) a device (its
 * select_program_factory, docs/tt-sources.md CCL-MCAST; `mcast_pages`).
 * in_bytes: a device's input to the gather. */
static bool gather_mcast(tl_setup *s, int algo, int64_t in_bytes, int64_t size)
{
        return algo == COLL_LINE || in_bytes < tl_setup_int(s, "mcast_pages") * 1024 * size;
}

/* The mux PEs a member runs: one a flow with mux, but none for a
 * multicast all-gather, whose workers connect to the routers. */
static int ccl_muxes(const struct ccl_args *a)
{
        /* the direct op opens its own connections, a multicast gather's
         * workers connect to its routers: an all-reduce of both has no mux */
        if (a->direct && (a->op == CCL_REDUCE_SCATTER || a->mcast))
                return 0;
        return a->mux && !(a->mcast && a->op == CCL_ALL_GATHER) ? (a->bidir ? 2 : 1) : 0;
}

static void ccl_setup_op(tl_setup *s, struct ccl_args *a, enum ccl_op op)
{
        a->op = op;
        tl_machine m = tl_setup_machine(s);
        a->n = m.sips;
        a->algo = tl_setup_choice(s, "algo");
        a->bidir = tl_setup_int(s, "bidir") != 0;
        a->workers = (int)tl_setup_int(s, "workers");
        a->dim = (int)tl_setup_int(s, "dim");
        a->dt = tl_setup_choice(s, "dtype") == 0 ? TL_BF16 : TL_FP32;
        int64_t size = a->dt == TL_BF16 ? 2 : 4, bytes = tl_setup_int(s, "bytes");
        /* tt-metal's all-gather on a line, and on a ring when small,
         * multicasts through the routers from one worker core a link
         * (docs/tt-sources.md CCL-MCAST); an all-reduce's gather takes a
         * device's piece */
        a->mcast = op != CCL_REDUCE_SCATTER &&
                   gather_mcast(s, a->algo, op == CCL_ALL_GATHER ? bytes : bytes / a->n, size) &&
                   tl_setup_int(s, "mcast") != 0;
        int links = tl_setup_sip_links(s);
        if (a->workers == 0 && op != CCL_ALL_GATHER && tl_setup_int(s, "rs_rule"))
                a->workers = rule_workers_rs(a->n, (double)bytes, links, a->algo == COLL_RING);
        if (a->workers == 0)
                a->workers = a->mcast && op == CCL_ALL_GATHER
                                     ? links
                                     : rule_workers(a->n,
                                                    (double)bytes *
                                                            (op == CCL_ALL_GATHER ? a->n : 1),
                                                    a->algo == COLL_RING);
        /* tt-metal's reduce-scatter syncs with its neighbour every 4 chunks
         * on a ring, every 20 on a line (docs/tt-sources.md CCL-SYNC) */
        a->sync_packets = (int)tl_setup_int(s, "sync_packets");
        if (a->sync_packets == 0)
                a->sync_packets = a->algo == COLL_RING ? 4 : 20;
        a->mux = tl_setup_int(s, "mux") != 0;
        a->rs_payload = tl_setup_int(s, "rs_pages") * 32 * 32 * size;
        a->gather_workers = op == CCL_ALL_GATHER || links > a->workers ? a->workers : links;
        a->oneshot = op != CCL_ALL_GATHER && a->algo == COLL_RING &&
                     bytes <= tl_setup_int(s, "oneshot_bytes");
        int per = (a->bidir ? 2 : 1) * a->workers;
        a->direct = a->oneshot && tl_setup_int(s, "direct") != 0;
        a->direct_fixed_ns = tl_setup_int(s, "direct_fixed_ns");
        if (a->direct) {
                /* one worker a link (workers, if given); an all-reduce's are
                 * among its gather's PEs */
                int w = (int)tl_setup_int(s, "workers");
                a->direct_workers = w ? w : links;
                if (op == CCL_ALL_REDUCE && a->direct_workers > per)
                        a->direct_workers = per;
                if (op == CCL_REDUCE_SCATTER)
                        a->workers = per = a->direct_workers;
        }
        int64_t cols = tl_setup_int(s, "cols"), elems = bytes / size;
        int muxes = ccl_muxes(a), routers = 0;
        if (a->mcast)
                routers = (a->bidir ? 2 : 1) * ccl_stages(a);
        if (a->direct)
                routers = (a->op == CCL_ALL_REDUCE ? routers : 0) + 2 * a->direct_workers;
        if (m.cubes_per_sip != 1)
                tl_setup_error(s, "a device is a SIP of one cube (the machine has %d cubes a "
                               "SIP)", m.cubes_per_sip);
        if ((int64_t)a->n * per > COLL_MAX_TEAM || per + muxes + routers > m.pes_per_cube)
                tl_setup_error(s, "%d devices x %d PEs (workers x flows, and %d muxes, %d "
                               "routers) is more than %d, or more than a cube's %d PEs", a->n,
                               per, muxes, routers, COLL_MAX_TEAM, m.pes_per_cube);
        if (cols > elems)
                cols = elems;
        if (bytes % size || elems < 1 || elems % cols) {
                tl_setup_error(s, "bytes (%lld) must be whole rows of cols (%lld) %s elements",
                               (long long)bytes, (long long)cols, dtypes[a->dt != TL_BF16]);
                return;
        }
        a->rows = elems / cols;
        a->cols = cols;
        if (a->dim == 1 && a->cols < a->n && op != CCL_ALL_GATHER)
                tl_setup_error(s, "dim 1 of %lld columns: fewer than the %d devices",
                               (long long)a->cols, a->n);
        if (a->dim == 0 && a->rows < a->n && op != CCL_ALL_GATHER)
                tl_setup_error(s, "dim 0 of %lld rows: fewer than the %d devices (use dim=1 or "
                               "fewer cols)", (long long)a->rows, a->n);
        /* Rows of a message: a piece's rows are whole input rows (dim 0) or
         * the piece's columns of them (dim 1). */
        int64_t row_bytes = (a->dim == 1 && op != CCL_ALL_GATHER ? (a->cols + a->n - 1) / a->n
                                                                  : a->cols) * size;
        a->chunk_rows = tl_setup_int(s, "chunk_bytes") / row_bytes;
        int64_t piece = a->dim == 0 && op != CCL_ALL_GATHER ? a->rows / a->n : a->rows;
        int64_t depth = tl_setup_int(s, "pipeline");
        /* a multicast gather's one worker sends a piece in messages of
         * chunk_bytes, not cut further for a pipeline (docs/adr/0048) */
        a->gather_rows = a->chunk_rows < piece ? a->chunk_rows : piece;
        if (a->gather_rows < 1)
                a->gather_rows = 1;
        a->direct_rows = a->gather_rows;
        if (a->chunk_rows > (piece + depth - 1) / depth)
                a->chunk_rows = (piece + depth - 1) / depth;
        if (a->chunk_rows < 1)
                a->chunk_rows = 1;
        ring_order(a->n, tl_setup_sip_row(s), a->order);
        coll_setup_tensors(s, (enum coll_op)op, a->dt, a->n, a->rows, a->cols, a->dim, &a->x,
                           &a->y);
}

/* The tag of the workers' handshakes with their mux (the collectives
 * use [0, COLL_TAGS), their entry and exit COLL_TAGS). */
#define MUX_TAG (COLL_TAGS + 1)

/* A collective's opening (docs/tt-sources.md CCL-CONN): the worker waits
 * for its mux to report ready, connects to it, then meets its neighbours
 * (the entry barrier). mux is the mux's rank, or -1 (none). */
static void ccl_open(tl_ctx *tl, const struct coll_team *t, int mux)
{
        if (mux >= 0) {
                coll_token_take(tl, mux, MUX_TAG);
                coll_token_send(tl, mux, MUX_TAG);
        }
        if (t->mcast)
                coll_mcast_barrier(tl, t, COLL_TAGS, false);
        else
                coll_handshake(tl, t, COLL_TAGS);
}

/* Its closing: the exit wait, then the teardown, which the mux
 * acknowledges. */
static void ccl_close(tl_ctx *tl, const struct coll_team *t, int mux)
{
        if (t->mcast)
                coll_mcast_barrier(tl, t, COLL_TAGS, true);
        else
                coll_handshake(tl, t, COLL_TAGS);
        if (mux >= 0) {
                coll_token_send(tl, mux, MUX_TAG);
                coll_token_take(tl, mux, MUX_TAG);
        }
}

/* A flow's mux PE, for `calls` collectives (an all-reduce is two): it
 * reports ready to each of its workers, takes their connections, and
 * acknowledges each teardown once all have torn down. The workers' data
 * go straight to the link (docs/adr/0041). */
static void mux_steps(tl_ctx *tl, const struct ccl_args *a, int flow, int workers, int first,
                      int last)
{
        /* the steps of a call: ready out, connections in, teardowns in,
         * acknowledgements out */
        static const bool out[] = { true, false, false, true };
        int sip = tl_program_id(tl, 2);
        for (int k = first; k < last; k++)
                for (int w = 0; w < workers; w++) {
                        int r = tl_rank(tl, flow * a->workers + w, 0, sip);
                        if (out[k])
                                coll_token_send(tl, r, MUX_TAG);
                        else
                                coll_token_take(tl, r, MUX_TAG);
                }
}

static void ccl_mux(tl_ctx *tl, const struct ccl_args *a, int flow, int calls)
{
        for (int c = 0; c < calls; c++)
                mux_steps(tl, a, flow, a->workers, 0, 4);
}

/* A team of the kernel's PEs as flow's worker `worker` (or router): each
 * member's first `workers` workers of each flow (the gather's are fewer
 * than the reduce-scatter's in a multicast all-reduce); with mcast, the
 * routers after the workers and muxes. */
static void ccl_team(tl_ctx *tl, const struct ccl_args *a, struct coll_team *t, int workers,
                     int flow, int worker)
{
        int flows = a->bidir ? 2 : 1, per = flows * a->workers, sip = tl_program_id(tl, 2);
        *t = (struct coll_team){ .n = a->n, .algo = (enum coll_algo)a->algo, .bidir = a->bidir,
                                 .workers = workers, .flow = flow, .worker = worker,
                                 .chunk_rows = a->chunk_rows, .dim = a->dim, .wire_dt = a->dt,
                                 .acks = a->algo == COLL_RING, .oneshot = a->oneshot,
                                 .sync_packets = a->sync_packets, .rs_payload = a->rs_payload };
        for (int i = 0; i < a->n; i++) {
                if (a->order[i] == sip)
                        t->me = i;
                for (int f = 0; f < flows; f++)
                        for (int w = 0; w < workers; w++)
                                t->ranks[(i * flows + f) * workers + w] =
                                        tl_rank(tl, f * a->workers + w, 0, a->order[i]);
        }
        for (int f = 0; f < flows; f++)
                t->relay_delta[f] = per + ccl_muxes(a) + f * ccl_stages(a) - f * a->workers;
}

/* The rank of flow's first router stage on this SIP (mcast): it takes
 * the gather's connections. */
static int router_rank(tl_ctx *tl, const struct ccl_args *a, int flow)
{
        int per = (a->bidir ? 2 : 1) * a->workers;
        return tl_rank(tl, per + ccl_muxes(a) + flow * ccl_stages(a), 0, tl_program_id(tl, 2));
}

/* A router stage of a flow of a multicast gather (docs/adr/0048), for
 * position `stage` of the flow's paths: it stores the chunks the member
 * before it on the path sends and passes them on (tt-metal's routers
 * forward a line's multicast packets and write them to the device; a
 * PE a position, as a router's channels do not wait on each other). The
 * first stage also takes the gather's connections: the workers connect
 * to it (its ready, their connections) and tear down (its
 * acknowledgement) as to a mux. */
static void ccl_router(tl_ctx *tl, const struct ccl_args *a, int flow, int stage)
{
        int workers = a->gather_workers;
        bool conn = a->mux && stage == 1;
        struct coll_team g;
        ccl_team(tl, a, &g, workers, flow, 0);
        g.mcast = true;
        g.relay = stage;
        g.chunk_rows = a->gather_rows;
        tl_tensor *y = coll_member_view(tl, a->y, tl_program_id(tl, 2));
        if (conn)
                mux_steps(tl, a, flow, workers, 0, 2);
        coll_all_gather(tl, &g, y, y, false, a->op == CCL_ALL_GATHER ? 0 : 32);
        if (conn)
                mux_steps(tl, a, flow, workers, 2, 4);
}

/* The multicast half of an all-reduce: the first gather_workers workers
 * of each flow gather the pieces (mine, this member's, into y) through
 * the routers, opening and closing as a collective. */
static void gather_mcast_half(tl_ctx *tl, const struct ccl_args *a, const struct coll_team *t,
                              tl_tensor *mine, tl_tensor *y)
{
        if (t->worker >= a->gather_workers)
                return;
        struct coll_team g;
        ccl_team(tl, a, &g, a->gather_workers, t->flow, t->worker);
        g.mcast = true;
        g.chunk_rows = a->gather_rows;
        int router = a->mux ? router_rank(tl, a, t->flow) : -1;
        ccl_open(tl, &g, router);
        coll_all_gather(tl, &g, mine, y, false, 32);
        ccl_close(tl, &g, router);
}

/* The multicast all-reduce (mcast): the reduce-scatter opens and closes
 * as a collective, the member's PEs meet, then the gather multicasts
 * (tt-metal's all-reduce: a reduce-scatter op, then an all-gather op). */
static void all_reduce_mcast(tl_ctx *tl, const struct ccl_args *a, struct coll_team *t, int mux,
                             tl_tensor *x, tl_tensor *y)
{
        tl_tensor *mine = coll_piece(tl, t, y, t->me);
        coll_reduce_scatter(tl, t, x, mine, 0);
        ccl_close(tl, t, mux);
        coll_member_barrier(tl, t, 1);
        gather_mcast_half(tl, a, t, mine, y);
}

/* The direct op's PEs on a SIP (a->direct): its workers are PEs 0 ..
 * direct_workers - 1; worker w's connections go to the routers of its
 * link, forward (to member me + 1) and backward, each stood in for by a PE
 * of the chip: PE base + 2w (forward) and + 1 (backward), base the first
 * PE after the reduce-scatter's workers (an all-reduce: after its gather's
 * workers, muxes and router stages). On the T3000 (one link, a worker at PE 0) these are
 * PEs 1 and 2, beside it on row 0 of the grid, whose routers the chip's
 * Ethernet cores sit on (system.inter_sip.ports): a round trip a hop or
 * two over the NoC, as the worker's to the link's Ethernet core (the
 * simulator runs no code on that core; they also stand where the muxes
 * stand with direct=0). */
static int direct_pe(const struct ccl_args *a, int w, int dir)
{
        int flows = a->bidir ? 2 : 1;
        int base = a->op == CCL_REDUCE_SCATTER
                           ? a->direct_workers
                           : flows * a->workers + ccl_muxes(a) +
                                     (a->mcast ? flows * ccl_stages(a) : 0);
        return base + 2 * w + dir;
}

/* The team of the direct op's worker w: one flow of direct_workers PEs a
 * member, its connections to its routers' stand-ins (with mux). */
static void ccl_direct_team(tl_ctx *tl, const struct ccl_args *a, struct coll_team *t, int w)
{
        int sip = tl_program_id(tl, 2), W = a->direct_workers;
        *t = (struct coll_team){ .n = a->n, .algo = COLL_RING, .workers = W, .worker = w,
                                 .chunk_rows = a->direct_rows, .dim = a->dim, .wire_dt = a->dt,
                                 .direct = true, .fixed_ns = a->direct_fixed_ns,
                                 .conn = { -1, -1 } };
        for (int i = 0; i < a->n; i++) {
                if (a->order[i] == sip)
                        t->me = i;
                for (int v = 0; v < W; v++)
                        t->ranks[i * W + v] = tl_rank(tl, v, 0, a->order[i]);
        }
        for (int d = 0; a->mux && d < 2; d++)
                t->conn[d] = tl_rank(tl, direct_pe(a, w, d), 0, sip);
}

/* A direct op's PE: worker w's router stand-in (coll_direct_router), its
 * worker (the reduce-scatter of x into y's front), or neither. Returns
 * whether it was one of them. */
static bool ccl_direct(tl_ctx *tl, const struct ccl_args *a, int pe)
{
        int W = a->direct_workers, sip = tl_program_id(tl, 2);
        if (pe >= direct_pe(a, 0, 0) && pe < direct_pe(a, W, 0)) {
                if (a->mux)
                        coll_direct_router(tl, tl_rank(tl, (pe - direct_pe(a, 0, 0)) / 2, 0, sip),
                                           0);
                return true;
        }
        if (pe >= W)
                return false;
        struct coll_team t;
        ccl_direct_team(tl, a, &t, pe);
        tl_tensor *x = coll_member_view(tl, a->x, sip), *y = coll_member_view(tl, a->y, sip);
        if (a->op == CCL_REDUCE_SCATTER)
                coll_reduce_scatter_front(tl, &t, x, y, 0);
        else
                coll_reduce_scatter(tl, &t, x, coll_piece(tl, &t, y, t.me), 0);
        return true;
}

static void ccl(tl_ctx *tl, const void *args)
{
        const struct ccl_args *a = args;
        int flows = a->bidir ? 2 : 1, per = flows * a->workers;
        int pe = tl_program_id(tl, 0);
        if (tl_program_id(tl, 1) != 0)
                return;
        int muxes = ccl_muxes(a);
        if (a->direct && a->op == CCL_REDUCE_SCATTER) {
                ccl_direct(tl, a, pe);
                return;
        }
        if (pe >= per) {
                if (a->direct && pe >= direct_pe(a, 0, 0))
                        ccl_direct(tl, a, pe);
                else if (pe < per + muxes)
                        ccl_mux(tl, a, pe - per,
                                a->op == CCL_ALL_REDUCE && !a->mcast && !a->direct ? 2 : 1);
                else if (a->mcast && pe < per + muxes + flows * ccl_stages(a))
                        ccl_router(tl, a, (pe - per - muxes) / ccl_stages(a),
                                   (pe - per - muxes) % ccl_stages(a) + 1);
                return;
        }
        struct coll_team t;
        ccl_team(tl, a, &t, a->workers, pe / a->workers, pe % a->workers);
        t.mcast = a->mcast && a->op == CCL_ALL_GATHER;
        if (t.mcast)
                t.chunk_rows = a->gather_rows;
        int sip = tl_program_id(tl, 2);
        /* the rank the worker connects through: its mux, or (a multicast
         * all-gather) its router */
        int mux = muxes ? tl_rank(tl, per + t.flow, 0, sip) : -1;
        if (a->mcast && a->op == CCL_ALL_GATHER && a->mux)
                mux = router_rank(tl, a, t.flow);
        if (a->direct) {
                /* an all-reduce whose reduce-scatter half is the direct op:
                 * its workers reduce-scatter, the member's PEs meet, then the
                 * gather opens and closes as a collective */
                ccl_direct(tl, a, pe);
                coll_member_barrier(tl, &t, 1);
                tl_tensor *y = coll_member_view(tl, a->y, sip);
                if (a->mcast) {
                        gather_mcast_half(tl, a, &t, coll_piece(tl, &t, y, t.me), y);
                        return;
                }
                ccl_open(tl, &t, mux);
                coll_all_gather(tl, &t, coll_piece(tl, &t, y, t.me), y, false, 32);
                ccl_close(tl, &t, mux);
                return;
        }
        ccl_open(tl, &t, mux);
        tl_tensor *x = coll_member_view(tl, a->x, sip), *y = coll_member_view(tl, a->y, sip);
        switch (a->op) {
        case CCL_ALL_GATHER: {
                /* x is this member's piece of y */
                coll_all_gather(tl, &t, x, y, true, 0);
                break;
        }
        case CCL_REDUCE_SCATTER:
                coll_reduce_scatter_front(tl, &t, x, y, 0);
                break;
        case CCL_ALL_REDUCE:
                if (a->mcast) {
                        all_reduce_mcast(tl, a, &t, mux, x, y);
                        return;
                }
                /* tt-metal's all-reduce is a reduce-scatter then an
                 * all-gather, each opening and closing as a collective */
                ccl_close(tl, &t, mux);
                ccl_open(tl, &t, mux);
                coll_all_reduce(tl, &t, x, y, 0);
                break;
        }
        ccl_close(tl, &t, mux);
}

#define CCL_KERNEL(name, pfx, op, summary)                                                  \
        struct pfx##_args {                                                                \
                struct ccl_args a;                                                         \
        };                                                                                 \
        static void pfx##_setup(tl_setup *s, void *args)                                   \
        {                                                                                  \
                ccl_setup_op(s, args, op);                                                 \
        }                                                                                  \
        static void name(tl_ctx *tl, const void *args)                                     \
        {                                                                                  \
                ccl(tl, args);                                                             \
        }                                                                                  \
        TL_KERNEL(name, pfx, summary,                                                      \
                  "x.npy [devices, rows, cols] (device s's input x[s], rows x cols x size = " \
                  "bytes); y.npy [devices, ...] the result")

#define ag_params ccl_params
#define rs_params ccl_params
#define ar_params ccl_params
CCL_KERNEL(all_gather, ag, CCL_ALL_GATHER,
           "all-gather over the SIPs (chips), ring or line, uni- or bidirectional");
CCL_KERNEL(reduce_scatter, rs, CCL_REDUCE_SCATTER,
           "reduce-scatter (sum) over the SIPs (chips), ring or line, uni- or bidirectional");
CCL_KERNEL(all_reduce, ar, CCL_ALL_REDUCE,
           "all-reduce (sum) over the SIPs (chips), ring or line, uni- or bidirectional");
