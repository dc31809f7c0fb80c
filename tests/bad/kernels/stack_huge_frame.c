/* tests/bad/kernels/stack_huge_frame.c: a kernel with a 4 MiB local array,
 * far larger than its stack and guard together. Built with
 * -fstack-clash-protection (the README's compile line, which
 * kernel_faults.sh uses), the frame probes its pages from the top and
 * meets the guard: a clear report, not a write to whatever lies below.
// args: --topo topologies/small.yaml
// expect: cubesim: error: stack overflow in process 'sip0.cube0.pe0' (stack 256 KiB); raise the stack size
 */
#include <cubesim/tl.h>

#include "pe0.h"

static void fault(tl_ctx *tl, const void *argp)
{
        volatile char huge[4 << 20];
        huge[0] = 1; /* FAULT */
        huge[sizeof huge - 1] = huge[0];
}

CASE_TABLE(.name = "stack_huge_frame");
