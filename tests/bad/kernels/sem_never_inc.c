/* tests/bad/kernels/sem_never_inc.c: PE 0 waits for two increments of its
 * semaphore 1 and PE 1 sends only one: nothing else can happen, so the run
 * ends in a deadlock report naming the semaphore, its count, the awaited
 * count and the waiting line.
// args: --topo topologies/small.yaml
// expect: error: deadlock at
// expect: process 'sip0.cube0.pe0' waits on future 'semaphore'; tests/bad/kernels/sem_never_inc.c:@LINE@: tl_sem_wait on semaphore 1: at 1, waits for 2
 */
#include <cubesim/tl.h>

#include "case.h"

static void body(tl_ctx *tl, const void *argp)
{
        (void)argp;
        int rank = tl_rank(tl, -1, -1, -1);
        if (rank == 1)
                tl_sem_inc(tl, 0, 1, 1);
        else if (rank == 0)
                tl_sem_wait(tl, 1, 2); /* FAULT */
}

CASE_TABLE(.name = "sem_never_inc");
