/* tests/bad/kernels/mcast_linked_rect.c: tl_mcast_linked to a rectangle that leaves the NoC.
// args: --topo topologies/small.yaml
// expect: tests/bad/kernels/mcast_linked_rect.c:@LINE@: error: PE sip0.cube0.pe3: tl_mcast_linked: rows [1, +2) x cols [0, +2) is not a rectangle of the 2 x 2 NoC
// expect-count: 1
 */
#include <cubesim/tl.h>

#include "case.h"

static void body(tl_ctx *tl, const void *argp)
{
        if (tl_rank(tl, -1, -1, -1) != 3)
                return;
        int64_t shape[1] = { 8 };
        tl_mcast_linked(tl, 1, 0, 2, 2, tl_fill(tl, TL_FP32, 1, shape, 1.0f), 7); /* FAULT */
}

CASE_TABLE(.name = "mcast_linked_rect");
