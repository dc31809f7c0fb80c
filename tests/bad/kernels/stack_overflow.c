/* tests/bad/kernels/stack_overflow.c: unbounded recursion in a kernel runs
 * off its coroutine's stack into the guard page: a clear report, not a
 * bare segmentation fault.
// args: --topo topologies/small.yaml
// expect: cubesim: error: stack overflow in process 'sip0.cube0.pe0' (stack 256 KiB); raise the stack size
 */
#include <cubesim/tl.h>

#include "case.h"

static int deep(tl_ctx *tl, volatile char *prev, int n)
{
        volatile char frame[512];
        frame[0] = (char)n;
        frame[511] = prev ? prev[0] : 0;
        if (n == -1)
                return 0;    /* never: only keeps the compiler from calling this an infinite recursion */
        return deep(tl, frame, n + 1) + frame[511]; /* FAULT */
}

static void body(tl_ctx *tl, const void *argp)
{
        deep(tl, NULL, 0);
}

CASE_TABLE(.name = "stack_overflow");
