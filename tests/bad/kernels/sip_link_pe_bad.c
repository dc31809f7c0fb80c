/* tests/bad/kernels/sip_link_pe_bad.c: tl_sip_link_pe of a SIP the
 * machine does not have is a kernel error naming the call and the SIPs
 * there are.
// args: --topo topologies/small.yaml
// expect: tests/bad/kernels/sip_link_pe_bad.c:@LINE@: error: PE sip0.cube0.pe0: tl_sip_link_pe: SIP 0 to SIP 5, link 0: expected SIPs 0 .. 0 and a link >= 0
 */
#include <cubesim/tl.h>

#include "hbm_x.h"
#include "pe0.h"

static void fault(tl_ctx *tl, const void *argp)
{
        (void)argp;
        tl_sip_link_pe(tl, 0, 5, 0); /* FAULT */
}

CASE_KERNEL("sip_link_pe_bad");
