/* kernels/collective.c: a barrier and a ring all-reduce over tl_send and
 * tl_recv (see collective.h). Device code: runs on the PEs of a launch. */
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

/* Piece i of n of x's flat elements, or NULL when it is empty. */
static tl_tensor *piece(tl_ctx *tl, tl_tensor *flat, int n, int i)
{
        int64_t total = tl_dim(flat, 0);
        int64_t lo = total * i / n, hi = total * (i + 1) / n;
        if (hi == lo)
                return NULL;
        return tl_view(tl, flat, ((int64_t[]){ lo }), ((int64_t[]){ hi - lo }));
}

static void send_piece(tl_ctx *tl, int dst, tl_tensor *p, tl_dtype wire_dt, int tag)
{
        tl_send(tl, dst, wire_dt == TL_FP32 ? p : tl_cast(tl, p, wire_dt), tag);
}

void coll_allreduce(tl_ctx *tl, const struct coll_group *g, tl_tensor *x, tl_dtype wire_dt,
                    int tag)
{
        int n = g->n;
        if (n < 2)
                return;
        tl_tensor *flat = tl_reshape(tl, x, 1, ((int64_t[]){ tl_numel(x) }));
        int next = coll_rank(g, g->me + 1), prev = coll_rank(g, g->me - 1);
        /* Reduce-scatter: at step s send piece me - s, add piece me - s - 1. */
        for (int s = 0; s < n - 1; s++) {
                tl_scratch_scope_begin(tl);
                tl_tensor *out = piece(tl, flat, n, ((g->me - s) % n + n) % n);
                tl_tensor *in = piece(tl, flat, n, ((g->me - s - 1) % n + n) % n);
                if (out)
                        send_piece(tl, next, out, wire_dt, tag);
                if (in)
                        tl_copy_to(tl, in, tl_add(tl, in, tl_recv(tl, prev, tag)));
                tl_scratch_scope_end(tl);
        }
        /* All-gather: at step s pass on piece me + 1 - s, take piece me - s. */
        for (int s = 0; s < n - 1; s++) {
                tl_scratch_scope_begin(tl);
                tl_tensor *out = piece(tl, flat, n, ((g->me + 1 - s) % n + n) % n);
                tl_tensor *in = piece(tl, flat, n, ((g->me - s) % n + n) % n);
                if (out)
                        send_piece(tl, next, out, wire_dt, tag + 1);
                if (in)
                        tl_copy_to(tl, in, tl_recv(tl, prev, tag + 1));
                tl_scratch_scope_end(tl);
        }
}
