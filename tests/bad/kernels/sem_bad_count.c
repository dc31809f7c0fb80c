/* tests/bad/kernels/sem_bad_count.c: an increment of less than 1 is a
 * kernel error at the call.
// args: --topo topologies/small.yaml
// expect: tests/bad/kernels/sem_bad_count.c:@LINE@: error: PE sip0.cube0.pe0: tl_sem_inc: n 0: expected at least 1
 */
#include <cubesim/tl.h>

#include "pe0.h"

static void fault(tl_ctx *tl, const void *argp)
{
        (void)argp;
        tl_sem_inc(tl, 1, 0, 0); /* FAULT */
}

CASE_TABLE(.name = "sem_bad_count");
