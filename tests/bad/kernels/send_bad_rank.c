/* tests/bad/kernels/send_bad_rank.c: a send to a rank the machine does not
 * have (8 PEs: ranks 0..7).
// args: --topo topologies/small.yaml
// expect: tests/bad/kernels/send_bad_rank.c:@LINE@: error: PE sip0.cube0.pe0: tl_send: rank 8: expected 0..7
 */
#include <cubesim/tl.h>

#include "case.h"

static void body(tl_ctx *tl, const void *argp)
{
        int64_t shape[2] = { 4, 4 };
        tl_tensor *t = tl_fill(tl, TL_FP32, 2, shape, 0.0f);
        if (tl_rank(tl, -1, -1, -1) == 0)
                tl_send(tl, 8, t, 0); /* FAULT */
}

CASE_TABLE(.name = "send_bad_rank");
