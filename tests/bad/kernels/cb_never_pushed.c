/* tests/bad/kernels/cb_never_pushed.c: PE 0's kernel starts a thread that
 * waits for the front page of a circular buffer nobody pushes: nothing
 * else can happen, so the run ends in a deadlock report naming the
 * thread, the buffer and the waiting line, and the kernel's end waiting
 * for the thread.
// args: --topo topologies/small.yaml
// expect: error: deadlock at
// expect: the event queue is empty and 2 processes still wait
// expect: process 'sip0.cube0.pe0.t1' waits on future 'circular buffer'; tests/bad/kernels/cb_never_pushed.c:@LINE@: tl_cb_wait_front on circular buffer 'in0': nothing pushed
// expect: process 'sip0.cube0.pe0' waits on future 'kernel threads'; kernel end: waits for 1 of its threads to return
 */
#include <cubesim/tl.h>

#include "pe0.h"

static void reader(tl_ctx *tl, void *arg)
{
        tl_cb_wait_front(tl, *(tl_cb **)arg); /* FAULT */
}

static void fault(tl_ctx *tl, const void *argp)
{
        int64_t page[2] = { 32, 32 };
        tl_cb *cb = tl_cb_make(tl, "in0", TL_BF16, 2, page, 2);
        (void)argp;
        tl_thread_start(tl, reader, &cb, sizeof cb);
}

CASE_TABLE(.name = "cb_never_pushed");
