/* tests/bad/kernels/recv_cycle.c: every PE first receives from its
 * neighbour, then sends: a cycle of waits, a deadlock naming all 8 PEs.
// args: --topo topologies/small.yaml
// expect: error: deadlock at
// expect: the event queue is empty and 8 processes still wait
// expect: process 'sip0.cube0.pe0' waits on future 'tl_recv'; tests/bad/kernels/recv_cycle.c:@LINE@: tl_recv from sip0.cube0.pe1 tag 0
// expect: process 'sip0.cube1.pe3' waits on future 'tl_recv'; tests/bad/kernels/recv_cycle.c:@LINE@: tl_recv from sip0.cube0.pe0 tag 0
 */
#include <cubesim/tl.h>

#include "case.h"

static void body(tl_ctx *tl, const void *argp)
{
        int64_t shape[2] = { 4, 4 };
        int rank = tl_rank(tl, -1, -1, -1), n = 8;
        tl_tensor *t = tl_recv(tl, (rank + 1) % n, 0); /* FAULT */
        tl_send(tl, (rank + n - 1) % n, t, 0);
        (void)shape;
}

CASE_TABLE(.name = "recv_cycle");
