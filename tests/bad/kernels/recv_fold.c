/* tests/bad/kernels/recv_fold.c: every PE receives from PE 0, which
 * receives from PE 1 and never sends: a deadlock in which 7 PEs wait
 * alike. Their notes fold into one line with a count and some names.
// args: --topo topologies/small.yaml
// expect: error: deadlock at
// expect: the event queue is empty and 8 processes still wait
// expect: cubesim run: note: process 'sip0.cube0.pe0' waits on future 'tl_recv'; tests/bad/kernels/recv_fold.c:@LINE@: tl_recv from sip0.cube0.pe1 tag 0
// expect: cubesim run: note: process 'sip0.cube1.pe0' waits on future 'tl_recv'; tests/bad/kernels/recv_fold.c:@LINE@: tl_recv from sip0.cube0.pe0 tag 0 (and 6 more like it: 'sip0.cube0.pe1', 'sip0.cube0.pe2', 'sip0.cube1.pe1', ... 'sip0.cube1.pe3')
// expect-count: 1
 */
#include <cubesim/tl.h>

#include "case.h"

static void body(tl_ctx *tl, const void *argp)
{
        int rank = tl_rank(tl, -1, -1, -1);
        tl_tensor *t = tl_recv(tl, rank == 0 ? 1 : 0, 0); /* FAULT */
        (void)t;
        (void)argp;
}

CASE_TABLE(.name = "recv_fold");
