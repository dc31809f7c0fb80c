/* tests/bad/kernels/setup_bad_args.c: a kernel's host-side setup passes a
 * NULL parameter name, a tensor without a name, a dtype none of tl_dtype
 * and a NULL shape: every one is reported (bad input, exit 2), none
 * crashes.
// args: --topo topologies/small.yaml
// expect: error: kernel setup_bad_args: internal: no numeric parameter '(NULL)'
// expect: error: kernel setup_bad_args: tensor name (NULL) is empty;
// expect: error: kernel setup_bad_args: tensor x: dtype 77, expected TL_FP32, TL_BF16, TL_FP16, TL_BFP8_B or TL_BFP4_B
// expect: error: kernel setup_bad_args: tensor y: shape is NULL
// expect-count: 4
// status: 2
 */
#include <cubesim/tl.h>

#include "case.h"

static void setup(tl_setup *s, void *argp)
{
        int64_t shape[1] = { 4 };
        tl_setup_int(s, NULL);
        tl_setup_tensor(s, NULL, TL_INPUT, TL_FP32, 1, shape);
        tl_setup_tensor(s, "x", TL_INPUT, (tl_dtype)77, 1, shape);
        tl_setup_tensor(s, "y", TL_INPUT, TL_FP32, 1, NULL);
}

static void body(tl_ctx *tl, const void *argp)
{
}

CASE_TABLE(.name = "setup_bad_args", .setup = setup);
