/* tests/bad/kernels/merge_input_alias.c: softmax_merge whose scores s are
 * a view of the running output o it updates in place.
// args: --topo topologies/small.yaml
// expect: tests/bad/kernels/merge_input_alias.c:@LINE@: error: PE sip0.cube0.pe0: softmax_merge: s and o share elements (views of one tensor): the recipe reads s and v while it updates m, l and o in place
// expect-count: 1
 */
#include <cubesim/tl.h>

#include "pe0.h"

static void fault(tl_ctx *tl, const void *argp)
{
        int64_t st[2] = { 8, 1 }, sq[2] = { 8, 8 };
        tl_tensor *m = tl_alloc(tl, TL_TCM, TL_FP32, 2, st);
        tl_tensor *l = tl_alloc(tl, TL_TCM, TL_FP32, 2, st);
        tl_tensor *o = tl_alloc(tl, TL_TCM, TL_FP32, 2, sq);
        tl_tensor *v = tl_fill(tl, TL_FP32, 2, sq, 1.0f);
        tl_tensor *s = tl_view(tl, o, ((int64_t[]){ 0, 0 }), sq);
        tl_wait(tl, tl_softmax_merge(tl, s, v, m, l, o)); /* FAULT */
}

CASE_TABLE(.name = "merge_input_alias");
