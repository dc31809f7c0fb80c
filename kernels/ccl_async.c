/* kernels/ccl_async.c: the collectives of the llama3_70b_galaxy demo's
 * decode (tt-metal's ttnn.experimental all_reduce_async, llama_reduce_
 * scatter and all_gather_async on persistent buffers, as llama_ccl.py's
 * TT_CCL calls them; docs/adr/0049, docs/tt-sources.md CCL-ASYNC). One
 * member per SIP (a chip), in SIP order (the host runs it on a row or a
 * column of the Galaxy's mesh: a line). Each member's tensors are in its
 * DRAM here and the all-reduce's persistent buffer in its workers' L1
 * (the demo keeps its inputs and outputs in L1 too):
 *
 *   all_gather      y[s] = the x of every member, concatenated along dim
 *   reduce_scatter  y[s] = piece s of the sum of every x, cut along dim:
 *                   one-shot, each member sends every other member its
 *                   piece of x straight (the owner's persistent buffer
 *                   takes the n - 1 partials), the owner adds them
 *   all_reduce      y[s] = the sum of every x: each member multicasts its
 *                   whole x along the line both ways into every other
 *                   member's persistent buffer (worker_writer.cpp's line
 *                   multicast, one slot a member), then adds the n
 *                   partials there
 *
 * Each member runs `links` workers per direction (the demo's num_links,
 * GALAXY_NUM_LINKS), each carrying its share of the messages; a message
 * is a chunk of rows as in kernels/ccl.c (chunk_bytes, at least links x
 * pipeline messages a piece). Unlike kernels/ccl.c there is no per-call
 * setup: no entry barrier or exit wait (the buffers and global semaphores
 * persist from call to call; a member's only wait is for the data it
 * adds or keeps) and no fabric mux (each worker holds its own connection
 * to its link). */
#include "collective.h"

enum cca_op {
        CCA_ALL_GATHER = COLL_ALL_GATHER,
        CCA_REDUCE_SCATTER = COLL_REDUCE_SCATTER,
        CCA_ALL_REDUCE = COLL_ALL_REDUCE,
};

static const char *const cca_ops[] = { "all_gather", "reduce_scatter", "all_reduce", NULL };
static const char *const cca_algos[] = { "line", "ring", NULL };
static const char *const cca_dtypes[] = { "bf16", "bfp8_b", NULL };

#define CCA_DONE_TAG (COLL_TAGS + 2) /* an all-reduce's flow 1 partial sum to flow 0 */

struct cca_args {
        enum cca_op op;              /* which collective */
        int n;                       /* members: every SIP */
        int order[COLL_MAX_TEAM];    /* member i is SIP order[i] */
        int algo;                    /* enum coll_algo */
        int links;                   /* workers per direction and member */
        int dim;                     /* the axis gathered or cut: 0 rows, 1 columns */
        int64_t rows, cols;          /* each member's input */
        int64_t chunk_rows;          /* rows per message */
        tl_dtype dt;                 /* the tensors' and the wire's dtype */
        tl_tensor *x;                /* [n, rows, cols], x[s] in SIP s's DRAM (HBM) */
        tl_tensor *y;                /* [n, ...], y[s] in SIP s's DRAM (HBM) */
};

static const struct tl_param cca_params[] = {
        { "op", TL_PARAM_CHOICE, 0, 0, 0, cca_ops, "all_gather, reduce_scatter or all_reduce" },
        { "rows", TL_PARAM_INT, 32, 1, 1 << 20, NULL, "rows of each device's input" },
        { "cols", TL_PARAM_INT, 2048, 1, 1 << 20, NULL, "columns of each device's input" },
        { "dim", TL_PARAM_INT, 1, 0, 1, NULL,
          "the axis gathered or cut (all_gather, reduce_scatter): 0 rows, 1 columns" },
        { "algo", TL_PARAM_CHOICE, 0, 0, 0, cca_algos,
          "line (the 4U Galaxy's Topology.Linear, and every mesh without wrap links) or ring" },
        { "links", TL_PARAM_INT, 4, 1, 16, NULL,
          "workers per direction and device, one a link (GALAXY_NUM_LINKS: 4 on the 6U, 3 on "
          "the 4U)" },
        COLL_PARAM_CHUNK_BYTES("bytes per message (whole rows, at least one), as kernels/ccl.c"),
        COLL_PARAM_PIPELINE(2, "at least links x this many messages a piece"),
        { "dtype", TL_PARAM_CHOICE, 1, 0, 0, cca_dtypes,
          "the tensors and persistent buffers (bfp8_b: the demo's all-reduce and reduce-scatter "
          "buffers; bf16: its create-heads and SDPA gathers)" },
        { NULL, 0, 0, 0, 0, NULL, NULL },
};

static void cca_setup(tl_setup *s, void *args)
{
        struct cca_args *a = args;
        tl_machine m = tl_setup_machine(s);
        a->op = (enum cca_op)tl_setup_choice(s, "op");
        a->n = m.sips;
        a->algo = tl_setup_choice(s, "algo") == 0 ? COLL_LINE : COLL_RING;
        a->links = (int)tl_setup_int(s, "links");
        a->dim = a->op == CCA_ALL_REDUCE ? 0 : (int)tl_setup_int(s, "dim");
        a->dt = tl_setup_choice(s, "dtype") == 0 ? TL_BF16 : TL_BFP8_B;
        a->rows = tl_setup_int(s, "rows");
        a->cols = tl_setup_int(s, "cols");
        /* cca_sum adds flow 0's members behind and flow 1's ahead: a line's paths */
        if (a->op == CCA_ALL_REDUCE && a->algo == COLL_RING)
                tl_setup_error(s, "op all_reduce multicasts along a line: it takes algo line");
        int per = 2 * a->links;
        if (m.cubes_per_sip != 1)
                tl_setup_error(s, "a device is a SIP of one cube (the machine has %d cubes a "
                               "SIP)", m.cubes_per_sip);
        if ((int64_t)a->n * per > COLL_MAX_TEAM || per > m.pes_per_cube)
                tl_setup_error(s, "%d devices x %d PEs (links x 2 directions) is more than %d, "
                               "or more than a cube's %d PEs", a->n, per, COLL_MAX_TEAM,
                               m.pes_per_cube);
        if (a->op == CCA_REDUCE_SCATTER && (a->dim ? a->cols : a->rows) < a->n)
                tl_setup_error(s, "dim %d of %lld: fewer than the %d devices", a->dim,
                               (long long)(a->dim ? a->cols : a->rows), a->n);
        /* a message: whole rows of a piece (a reduce-scatter's piece along
         * dim 1 is its columns), at most chunk_bytes, at least links x
         * pipeline messages a piece */
        int64_t piece_cols = a->op == CCA_REDUCE_SCATTER && a->dim == 1 ?
                             (a->cols + a->n - 1) / a->n : a->cols;
        int64_t piece_rows = a->op == CCA_REDUCE_SCATTER && a->dim == 0 ? a->rows / a->n :
                             a->rows;
        uint64_t row_bytes = tl_dtype_bytes(a->dt, piece_cols, piece_cols);
        uint64_t chunk = (uint64_t)tl_setup_int(s, "chunk_bytes");
        int64_t most = (int64_t)(chunk / (row_bytes ? row_bytes : 1));
        int64_t depth = (int64_t)a->links * tl_setup_int(s, "pipeline");
        a->chunk_rows = (piece_rows + depth - 1) / depth;
        if (a->chunk_rows > most)
                a->chunk_rows = most;
        /* an all-reduce's worker adds a message's n partials in its
         * scratch (fp32): at most half of it */
        int64_t sum_rows = m.scratch_bytes / 2 / ((int64_t)a->n * a->cols * 4);
        if (a->op == CCA_ALL_REDUCE && a->chunk_rows > sum_rows)
                a->chunk_rows = sum_rows;
        if (a->op == CCA_ALL_REDUCE) {
                /* the persistent buffer holds every member's input; the
                 * sum, a row of the n partials */
                uint64_t g = tl_dtype_bytes(a->dt, (int64_t)a->n * a->rows * a->cols, a->cols);
                if (g > (uint64_t)m.tcm_alloc_bytes)
                        tl_setup_error(s, "op all_reduce gathers %d x %lld x %lld into TCM: %llu "
                                       "bytes, more than the %lld a PE has (pe.tcm)", a->n,
                                       (long long)a->rows, (long long)a->cols,
                                       (unsigned long long)g, (long long)m.tcm_alloc_bytes);
                if (sum_rows < 1)
                        tl_setup_error(s, "op all_reduce adds a row of %d partials of %lld "
                                       "columns in fp32: %lld bytes, more than half the %lld of "
                                       "scratch (pe.tcm.scratch_ceiling_kib)", a->n,
                                       (long long)a->cols, (long long)a->n * a->cols * 4,
                                       (long long)m.scratch_bytes);
        }
        if (a->chunk_rows < 1)
                a->chunk_rows = 1;
        for (int i = 0; i < a->n; i++)
                a->order[i] = i;
        coll_setup_tensors(s, (enum coll_op)a->op, a->dt, a->n, a->rows, a->cols, a->dim, &a->x,
                           &a->y);
}

/* The all-reduce's sum on a worker: its chunks of the partials it took
 * into its buffer g ([n x rows, cols] in its L1) added, members [lo, hi);
 * flow 1 sends its sum to flow 0's worker (the reduction core), which
 * adds it and writes y. */
static void cca_sum(tl_ctx *tl, const struct cca_args *a, const struct coll_team *t, tl_tensor *g,
                    tl_tensor *y, int mate)
{
        int lo = t->flow ? t->me + 1 : 0, hi = t->flow ? a->n : t->me + 1;
        if (lo >= hi)
                return;
        for (int64_t r0 = (int64_t)t->worker * a->chunk_rows; r0 < a->rows;
             r0 += (int64_t)a->links * a->chunk_rows) {
                int64_t nr = a->rows - r0 < a->chunk_rows ? a->rows - r0 : a->chunk_rows;
                tl_scratch_scope_begin(tl);
                tl_tensor *acc = tl_view(tl, g, ((int64_t[]){ lo * a->rows + r0, 0 }),
                                         ((int64_t[]){ nr, a->cols }));
                for (int j = lo + 1; j < hi; j++)
                        acc = tl_add(tl, acc, tl_view(tl, g, ((int64_t[]){ j * a->rows + r0, 0 }),
                                                      ((int64_t[]){ nr, a->cols })));
                if (t->flow) {
                        tl_send(tl, mate, tl_cast(tl, acc, a->dt), CCA_DONE_TAG);
                } else {
                        if (a->n > t->me + 1)
                                acc = tl_add(tl, acc, tl_recv(tl, mate, CCA_DONE_TAG));
                        tl_tensor *dst = tl_view(tl, y, ((int64_t[]){ r0, 0 }),
                                                 ((int64_t[]){ nr, a->cols }));
                        tl_store(tl, dst, tl_cast(tl, acc, a->dt));
                }
                tl_scratch_scope_end(tl);
        }
}

/* Whether pes[0..n) other than pes[skip] hold pe. */
static bool cca_taken(const int *pes, int n, int skip, int pe)
{
        for (int k = 0; k < n; k++)
                if (k != skip && pes[k] == pe)
                        return true;
        return false;
}

/* The PEs of member i's workers, flow f's worker w at pes[f * links + w]:
 * each on the router of the w-th link from its chip to the next member
 * its flow sends to (tl_sip_link_pe), so each worker drives its own link.
 * A worker without one (a line's end has no member that way; a machine
 * with fewer links) takes the first PE not taken at its mate's (the other
 * flow's worker w) column or, lacking that, column w, from the row below. */
static void cca_place(tl_ctx *tl, const struct cca_args *a, int i, int pes[COLL_MAX_TEAM])
{
        int per = 2 * a->links, cols = tl_mesh_dim(tl, 0), n_pes = cols * tl_mesh_dim(tl, 1);
        for (int k = 0; k < per; k++) {
                int j = i + (k < a->links ? 1 : -1);
                if (a->algo == COLL_RING)
                        j = (j + a->n) % a->n;
                pes[k] = j >= 0 && j < a->n && j != i
                                 ? tl_sip_link_pe(tl, a->order[i], a->order[j], k % a->links)
                                 : -1;
        }
        for (int k = 0; k < per; k++) {
                if (pes[k] >= 0 && !cca_taken(pes, per, k, pes[k]))
                        continue;
                int mate = pes[(k + a->links) % per], pe = mate >= 0 ? mate : k % a->links % cols;
                do
                        pe = (pe + cols) % n_pes;
                while (cca_taken(pes, per, k, pe));
                pes[k] = pe;
        }
}

static void ccl_async(tl_ctx *tl, const void *args)
{
        const struct cca_args *a = args;
        int per = 2 * a->links, sip = tl_program_id(tl, 2), pe = -1, pes[COLL_MAX_TEAM];
        if (tl_program_id(tl, 1) != 0)
                return;
        int me = 0;
        while (a->order[me] != sip)
                me++;
        cca_place(tl, a, me, pes);
        for (int k = 0; k < per && pe < 0; k++)
                if (pes[k] == tl_program_id(tl, 0))
                        pe = k;
        if (pe < 0)
                return;
        /* the one-shot reduce-scatter sends each chunk once, whichever
         * way its owner lies: one flow of all the workers */
        bool one = a->op == CCA_REDUCE_SCATTER;
        struct coll_team t = { .n = a->n, .algo = (enum coll_algo)a->algo, .bidir = !one,
                                .workers = one ? per : a->links, .flow = one ? 0 : pe / a->links,
                                .worker = one ? pe : pe % a->links, .chunk_rows = a->chunk_rows,
                                .dim = a->dim, .wire_dt = a->dt, .acks = a->algo == COLL_RING,
                                .oneshot = true, .sync_packets = 0 };
        int mate = a->op == CCA_ALL_REDUCE ? pes[(t.flow ? 0 : a->links) + t.worker] : -1;
        t.me = me;
        for (int i = 0; i < a->n; i++) {
                cca_place(tl, a, i, pes);
                for (int k = 0; k < per; k++)
                        t.ranks[i * per + k] = tl_rank(tl, pes[k], 0, a->order[i]);
        }
        tl_tensor *x = coll_member_view(tl, a->x, sip), *y = coll_member_view(tl, a->y, sip);
        switch (a->op) {
        case CCA_ALL_GATHER:
                coll_all_gather(tl, &t, x, y, true, 0);
                return;
        case CCA_REDUCE_SCATTER:
                coll_reduce_scatter_front(tl, &t, x, y, 0);
                return;
        case CCA_ALL_REDUCE: {
                /* the multicast into the persistent buffer in L1: this
                 * member's slot is piece me of it (dim 0); each worker
                 * adds the partials it took */
                tl_tensor *g = tl_alloc(tl, TL_TCM, a->dt, 2,
                                        ((int64_t[]){ (int64_t)a->n * a->rows, a->cols }));
                coll_all_gather(tl, &t, x, g, true, 0);
                cca_sum(tl, a, &t, g, y, tl_rank(tl, mate, 0, sip));
                return;
        }
        }
}

TL_KERNEL(ccl_async, cca,
          "the llama3_70b_galaxy demo's collectives on persistent L1 buffers (all_gather, "
          "one-shot reduce_scatter, multicast all_reduce), no per-call setup",
          "x.npy [devices, rows, cols] (device s's input x[s]); y.npy [devices, ...] the result");
