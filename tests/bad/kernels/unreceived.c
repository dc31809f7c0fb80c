/* tests/bad/kernels/unreceived.c: PE 0 sends PE 1 three messages of tag 7
 * and PE 1 receives one: the two left would vanish at the kernel's end
 * (each holding its own data), so the run ends with a kernel error at the
 * first unreceived message's send, naming the count, its receiver and its
 * tag (exit 1), in op_log mode as in data mode.
// args: --topo topologies/small.yaml --mode data
// expect: tests/bad/kernels/unreceived.c:@LINE@: error: PE sip0.cube0.pe0: tl_send: 2 messages sent and never received by the kernel's end (the first sent: to PE sip0.cube0.pe1, tag 7); every message needs its tl_recv
// expect-count: 1
 */
#include <cubesim/tl.h>

#include "case.h"

static void body(tl_ctx *tl, const void *argp)
{
        int64_t shape[2] = { 4, 4 };
        int rank = tl_rank(tl, -1, -1, -1);
        if (rank == 0) {
                tl_tensor *x = tl_fill(tl, TL_FP32, 2, shape, 1.0f);
                tl_send(tl, 1, x, 7);
                for (int i = 0; i < 2; i++)
                        tl_send(tl, 1, x, 7); /* FAULT */
        } else if (rank == 1) {
                tl_recv(tl, 0, 7);
        }
}

CASE_TABLE(.name = "unreceived");
