/* tests/bad/kernels/gemm_out_alias.c: a GEMM composite writing its output
 * into its own operand a: the tiles would read what other tiles wrote.
// args: --topo topologies/small.yaml
// expect: tests/bad/kernels/gemm_out_alias.c:@LINE@: error: PE sip0.cube0.pe0: tl_composite: out and a share elements (views of one tensor): the GEMM would write an operand it is still reading (give out a tensor of its own)
// expect-count: 1
 */
#include <cubesim/tl.h>

#include "pe0.h"

static void fault(tl_ctx *tl, const void *argp)
{
        tl_tensor *a = tl_alloc(tl, TL_TCM, TL_FP32, 2, ((int64_t[]){ 8, 8 }));
        tl_tensor *b = tl_fill(tl, TL_FP32, 2, ((int64_t[]){ 8, 8 }), 1.0f);
        tl_wait(tl, tl_composite(tl, &(tl_composite_desc){ .op = TL_GEMM, .a = a, .b = b, /* FAULT */
                                                           .out = a }));
}

CASE_TABLE(.name = "gemm_out_alias");
