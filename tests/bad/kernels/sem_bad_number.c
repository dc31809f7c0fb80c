/* tests/bad/kernels/sem_bad_number.c: a semaphore number past
 * TL_MAX_SEMS is a kernel error at the call.
// args: --topo topologies/small.yaml
// expect: tests/bad/kernels/sem_bad_number.c:@LINE@: error: PE sip0.cube0.pe0: tl_sem_inc: semaphore 8: expected 0..7
 */
#include <cubesim/tl.h>

#include "pe0.h"

static void fault(tl_ctx *tl, const void *argp)
{
        (void)argp;
        tl_sem_inc(tl, 1, TL_MAX_SEMS, 1); /* FAULT */
}

CASE_TABLE(.name = "sem_bad_number");
