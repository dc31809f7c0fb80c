/* tests/bad/kernels/bad_axis.c: a program id on an axis that does not exist.
// args: --topo topologies/small.yaml
// expect: tests/bad/kernels/bad_axis.c:@LINE@: error: PE sip0.cube0.pe0: tl_program_id: axis 3: expected 0 (PE), 1 (cube) or 2 (SIP)
 */
#include <cubesim/tl.h>

#include "case.h"

static void body(tl_ctx *tl, const void *argp)
{
        tl_program_id(tl, 3); /* FAULT */
}

CASE_TABLE(.name = "bad_axis");
