/* tests/bad/kernels/never_ends_events.c: a kernel that never ends, stopped
 * by the event budget.
// args: --topo topologies/small.yaml --max-events 100000
// expect: error: event budget exceeded: 100000 events at
// expect: a run this long needs a larger one (cubesim run --max-events, and --max-sim-ns if simulated time runs out next), unless its kernel never ends
// expect: process 'sip0.cube0.pe0' waits on a timer; last call tests/bad/kernels/never_ends_events.c:16: tl_program_id (and 7 more like it: 'sip0.cube1.pe0', 'sip0.cube0.pe1', 'sip0.cube0.pe2', ... 'sip0.cube1.pe3')
// expect-count: 1
 */
#include <cubesim/tl.h>

#include "case.h"

static void body(tl_ctx *tl, const void *argp)
{
        for (;;)
                tl_program_id(tl, 0); /* FAULT */
}

CASE_TABLE(.name = "never_ends_events");
