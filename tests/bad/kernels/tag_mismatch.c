/* tests/bad/kernels/tag_mismatch.c: PE 0 sends with tag 5, PE 1 waits for
 * tag 6: nothing else can happen, so the run ends in a deadlock report
 * naming the waiting PE, the receive's file:line and what it waits for.
// args: --topo topologies/small.yaml
// expect: error: deadlock at
// expect: the event queue is empty and 1 process still waits
// expect: process 'sip0.cube0.pe1' waits on future 'tl_recv'; tests/bad/kernels/tag_mismatch.c:@LINE@: tl_recv from sip0.cube0.pe0 tag 6
// expect-count: 1
 */
#include <cubesim/tl.h>

#include "case.h"

static void body(tl_ctx *tl, const void *argp)
{
        int64_t shape[2] = { 4, 4 };
        int rank = tl_rank(tl, -1, -1, -1);
        if (rank == 0)
                tl_send(tl, 1, tl_fill(tl, TL_FP32, 2, shape, 0.0f), 5);
        else if (rank == 1)
                tl_recv(tl, 0, 6); /* FAULT */
}

CASE_TABLE(.name = "tag_mismatch");
