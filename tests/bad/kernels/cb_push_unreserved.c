/* tests/bad/kernels/cb_push_unreserved.c: a thread pushes a page of a
 * circular buffer it never reserved: a kernel error naming the thread's
 * line and the buffer.
// args: --topo topologies/small.yaml
// expect: tests/bad/kernels/cb_push_unreserved.c:@LINE@: error: PE sip0.cube0.pe0: tl_cb_push_back: circular buffer 'out': no page reserved; call tl_cb_reserve_back first
// expect-count: 1
 */
#include <cubesim/tl.h>

#include "pe0.h"

static void writer(tl_ctx *tl, void *arg)
{
        tl_cb_push_back(tl, *(tl_cb **)arg); /* FAULT */
}

static void fault(tl_ctx *tl, const void *argp)
{
        int64_t page[2] = { 32, 32 };
        tl_cb *cb = tl_cb_make(tl, "out", TL_BF16, 2, page, 1);
        (void)argp;
        tl_thread_start(tl, writer, &cb, sizeof cb);
}

CASE_TABLE(.name = "cb_push_unreserved");
