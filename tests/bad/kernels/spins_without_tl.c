/* tests/bad/kernels/spins_without_tl.c: a kernel that spins without
 * calling tl_* never returns to the event loop, so no budget stops it:
 * --timeout-s does, naming its last tl_* call, the PE and the op (the
 * check is of the message, not of how long it took).
// args: --topo topologies/small.yaml --timeout-s 2
// expect: tests/bad/kernels/spins_without_tl.c:@LINE@: error: PE sip0.cube0.pe0: wall-clock limit reached (--timeout-s 2) after
// expect: the kernel was running, its last tl_* call here (tl_program_id): a loop without tl_* calls never ends
// expect-count: 1
 */
#include <cubesim/tl.h>

#include "case.h"

static void body(tl_ctx *tl, const void *argp)
{
        volatile unsigned long spins = (unsigned long)tl_program_id(tl, 0); /* FAULT */
        for (;;)
                spins = spins + 1;
}

CASE_TABLE(.name = "spins_without_tl");
