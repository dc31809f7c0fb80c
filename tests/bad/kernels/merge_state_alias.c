/* tests/bad/kernels/merge_state_alias.c: softmax_merge with m and l the
 * same tensor: the recipe updates both in place, and the run stopped on an
 * internal assertion (SIGABRT) when it marked the tensor busy twice.
// args: --topo topologies/small.yaml --mode data
// expect: tests/bad/kernels/merge_state_alias.c:@LINE@: error: PE sip0.cube0.pe0: softmax_merge: m and l share elements (views of one tensor): the running state m, l and o must be separate tensors
// expect-count: 1
 */
#include <cubesim/tl.h>

#include "pe0.h"

static void fault(tl_ctx *tl, const void *argp)
{
        int64_t st[2] = { 8, 1 }, sq[2] = { 8, 8 };
        tl_tensor *m = tl_alloc(tl, TL_TCM, TL_FP32, 2, st);
        tl_tensor *o = tl_alloc(tl, TL_TCM, TL_FP32, 2, sq);
        tl_tensor *v = tl_fill(tl, TL_FP32, 2, sq, 1.0f);
        tl_tensor *s = tl_fill(tl, TL_FP32, 2, sq, 0.5f);
        tl_wait(tl, tl_softmax_merge(tl, s, v, m, m, o)); /* FAULT */
}

CASE_TABLE(.name = "merge_state_alias");
