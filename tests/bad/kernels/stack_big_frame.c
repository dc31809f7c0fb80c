/* tests/bad/kernels/stack_big_frame.c: a kernel with a 300 KiB local array
 * on its 256 KiB stack, built without -fstack-clash-protection, so the
 * frame is not probed: its far end lies past the stack, inside the 64 KiB
 * guard (a one-page guard let it land on other memory with no message).
// args: --topo topologies/small.yaml
// cflags: -fno-stack-clash-protection
// expect: cubesim: error: stack overflow in process 'sip0.cube0.pe0' (stack 256 KiB); raise the stack size
 */
#include <cubesim/tl.h>

#include "pe0.h"

static void fault(tl_ctx *tl, const void *argp)
{
        volatile char big[300 * 1024];
        big[0] = 1; /* FAULT */
        big[sizeof big - 1] = big[0];
}

CASE_TABLE(.name = "stack_big_frame");
