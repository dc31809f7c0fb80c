/* tests/bad/kernels/hbm_channel_pe_bad.c: tl_hbm_channel_pe of a channel
 * the machine does not have is a kernel error naming the call, the PE and
 * the channels there are.
// args: --topo topologies/small.yaml
// expect: tests/bad/kernels/hbm_channel_pe_bad.c:@LINE@: error: PE sip0.cube0.pe0: tl_hbm_channel_pe: channel -1: expected 0 .. 
 */
#include <cubesim/tl.h>

#include "hbm_x.h"
#include "pe0.h"

static void fault(tl_ctx *tl, const void *argp)
{
        (void)argp;
        tl_hbm_channel_pe(tl, -1); /* FAULT */
}

CASE_KERNEL("hbm_channel_pe_bad");
