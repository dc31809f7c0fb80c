/* tests/bad/kernels/setup_count_wraps.c: a setup tensor whose element
 * count wraps 64 bits (2^32 x 4 x 2^32 = 2^66): each step stayed within
 * the checks (extents to 2^32, 2^34 elements so far) and the count became
 * 0, an empty tensor of a huge shape. Refused as bad input (exit 2).
// args: --topo topologies/small.yaml --mode data
// expect: error: kernel setup_count_wraps: tensor x: more than 2^34 elements
// expect-count: 1
// status: 2
 */
#include <cubesim/tl.h>

#include "case.h"

struct args {
        tl_tensor *x;                /* the tensor refused */
};

static void setup(tl_setup *s, void *argp)
{
        struct args *a = argp;
        int64_t shape[3] = { INT64_C(1) << 32, 4, INT64_C(1) << 32 };
        a->x = tl_setup_tensor(s, "x", TL_INPUT, TL_FP32, 3, shape); /* FAULT */
}

static void body(tl_ctx *tl, const void *argp)
{
}

CASE_TABLE(.name = "setup_count_wraps", .args_size = sizeof(struct args), .setup = setup);
