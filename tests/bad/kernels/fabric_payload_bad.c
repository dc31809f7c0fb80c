/* tests/bad/kernels/fabric_payload_bad.c: a negative fabric payload is a
 * kernel error naming the call and the range it takes.
// args: --topo topologies/small.yaml
// expect: tests/bad/kernels/fabric_payload_bad.c:@LINE@: error: PE sip0.cube0.pe0: tl_set_fabric_payload: -1 bytes a packet: expected 0 (the machine's) to 4294967295
 */
#include <cubesim/tl.h>

#include "hbm_x.h"
#include "pe0.h"

static void fault(tl_ctx *tl, const void *argp)
{
        (void)argp;
        tl_set_fabric_payload(tl, -1); /* FAULT */
}

CASE_KERNEL("fabric_payload_bad");
