/* tests/bad/kernels/bfp_store_reshape.c: a copy into a bfp4_b tensor
 * [2, 40] through a reshape to [80]: its one row would be grouped in 16s
 * across the end of the tensor's first row (whose last block is 8 long),
 * so a block would mix the two rows (docs/adr/0019).
// args: --topo topologies/small.yaml --mode data
// expect: tests/bad/kernels/bfp_store_reshape.c:@LINE@: error: PE sip0.cube0.pe0: tl_copy_to: dst: a bfp4_b view with a row of 80 from column 0, past the end of its tensor's rows of 40: a block float's blocks of 16 end with each row, so a row written to ends with it too
// expect-count: 1
 */
#include <cubesim/tl.h>

#include "pe0.h"

static void fault(tl_ctx *tl, const void *argp)
{
        tl_tensor *t = tl_alloc(tl, TL_TCM, TL_BFP4_B, 2, ((int64_t[]){ 2, 40 }));
        tl_tensor *flat = tl_reshape(tl, t, 1, ((int64_t[]){ 80 }));
        tl_copy_to(tl, flat, tl_fill(tl, TL_FP32, 1, ((int64_t[]){ 80 }), 1.0f)); /* FAULT */
}

CASE_TABLE(.name = "bfp_store_reshape");
