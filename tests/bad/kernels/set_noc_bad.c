/* tests/bad/kernels/set_noc_bad.c: the small machine's cores issue on one
 * NoC (no pe.dma.thread_nocs), so choosing NoC 1 is a kernel error.
// args: --topo topologies/small.yaml
// expect: tests/bad/kernels/set_noc_bad.c:@LINE@: error: PE sip0.cube0.pe0: tl_set_noc: NoC 1: this machine's cores issue on NoC 0 only
// expect-count: 1
 */
#include <cubesim/tl.h>

#include "pe0.h"

static void fault(tl_ctx *tl, const void *argp)
{
        (void)argp;
        tl_set_noc(tl, 1); /* FAULT */
}

CASE_TABLE(.name = "set_noc_bad");
