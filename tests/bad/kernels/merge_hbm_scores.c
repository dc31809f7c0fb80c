/* tests/bad/kernels/merge_hbm_scores.c: a PE merges scores in TCM, then
 * scores in HBM: the recipe's prologue reads TCM only, and its plan, made
 * once and reused, still refuses the second. Exit 1 at that call.
// args: --topo topologies/small.yaml
// expect: tests/bad/kernels/merge_hbm_scores.c:@LINE@: error: PE sip0.cube0.pe0: softmax_merge: plan: prologue op #1 max reads HBM tensor 's'; prologue ops read TCM only (load it first)
// expect-count: 1
 */
#include <cubesim/tl.h>

#include "hbm_x.h"

static void body(tl_ctx *tl, const void *argp)
{
        const struct args *a = argp;
        if (tl_rank(tl, -1, -1, -1) != 0)
                return;
        int64_t st[2] = { 8, 1 }, sq[2] = { 8, 8 };
        tl_tensor *m = tl_alloc(tl, TL_TCM, TL_FP32, 2, st);
        tl_tensor *l = tl_alloc(tl, TL_TCM, TL_FP32, 2, st);
        tl_tensor *o = tl_alloc(tl, TL_TCM, TL_FP32, 2, sq);
        tl_tensor *v = tl_alloc(tl, TL_TCM, TL_FP32, 2, sq);
        tl_tensor *s = tl_alloc(tl, TL_TCM, TL_FP32, 2, sq);
        tl_wait(tl, tl_softmax_merge(tl, s, v, m, l, o));
        tl_wait(tl, tl_softmax_merge(tl, a->x, v, m, l, o)); /* FAULT */
}

CASE_KERNEL("merge_hbm_scores");
