/* kernels/collective.h: collectives for kernels, written with tl_send and
 * tl_recv: a dissemination barrier and a ring all-reduce (sum).
 *
 * A group is a list of ranks; every member calls the collective with the
 * same list, its own index in it and the same tag base. Messages of one
 * (source, tag) arrive in send order, so a group may reuse its tags from
 * one call to the next as long as every member makes the same calls in
 * the same order. A collective uses the tags [tag, tag + COLL_TAGS). */
#ifndef CUBESIM_KERNELS_COLLECTIVE_H
#define CUBESIM_KERNELS_COLLECTIVE_H

#include <cubesim/tl.h>

#define COLL_TAGS 64                 /* tags one collective may use from its base */

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

/* Sum x over the group, in place: x is a contiguous persistent (TCM)
 * tensor of the same shape on every member. Its elements are cut into n
 * pieces; a ring reduce-scatter (n - 1 steps: send a piece to the next
 * member, add the one from the previous) leaves piece (me + 1) mod n
 * reduced on member me, and a ring all-gather (n - 1 steps) passes the
 * reduced pieces round. Pieces travel as wire_dt (e.g. TL_BF16: half the
 * bytes of fp32); the sums are fp32. Every member ends with the same
 * values. */
void coll_allreduce(tl_ctx *tl, const struct coll_group *g, tl_tensor *x, tl_dtype wire_dt,
                    int tag);

#endif
