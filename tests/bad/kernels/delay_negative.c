/* tests/bad/kernels/delay_negative.c: a fixed cost below 0 ns is a kernel
 * error at the call.
// args: --topo topologies/small.yaml
// expect: tests/bad/kernels/delay_negative.c:@LINE@: error: PE sip0.cube0.pe0: tl_delay: -1 ns: expected 0..1000000000
 */
#include <cubesim/tl.h>

#include "pe0.h"

static void fault(tl_ctx *tl, const void *argp)
{
        (void)argp;
        tl_delay(tl, -1); /* FAULT */
}

CASE_TABLE(.name = "delay_negative");
