/* tests/bad/kernels/input_dim_escape.c: tl_setup_input_dim builds
 * --inputs DIR/NAME.npy from its tensor name, so a name that is not one
 * ("../npy/f4_2x3") must not reach a file outside DIR (here one that
 * exists: tests/data/npy/../npy/f4_2x3.npy): it gives -1, as for a file
 * that is not there. The case reports what it got.
// args: --topo topologies/small.yaml --inputs tests/data/npy
// expect: error: kernel input_dim_escape: tl_setup_input_dim gave -1
// expect-count: 1
// status: 2
 */
#include <cubesim/tl.h>

#include "case.h"

static void setup(tl_setup *s, void *argp)
{
        (void)argp;
        tl_setup_error(s, "tl_setup_input_dim gave %lld",
                       (long long)tl_setup_input_dim(s, "../npy/f4_2x3", 0));
}

static void body(tl_ctx *tl, const void *argp)
{
        (void)tl;
        (void)argp;
}

CASE_TABLE(.name = "input_dim_escape", .setup = setup);
