/* tests/bad/kernels/copy_overlap.c: tl_copy_to between two overlapping
 * views of one TCM tensor (columns 0..5 onto 2..7): the result would depend
 * on the order the elements are copied in. Disjoint views of it are fine.
// args: --topo topologies/small.yaml --mode data
// expect: tests/bad/kernels/copy_overlap.c:@LINE@: error: PE sip0.cube0.pe0: tl_copy_to: dst and src share elements (views of one tensor): a copy between overlapping views would depend on the order of its elements
// expect-count: 1
 */
#include <cubesim/tl.h>

#include "pe0.h"

static void fault(tl_ctx *tl, const void *argp)
{
        tl_tensor *t = tl_alloc(tl, TL_TCM, TL_FP32, 2, ((int64_t[]){ 8, 8 }));
        int64_t sh[2] = { 8, 2 }, wide[2] = { 8, 6 };
        tl_copy_to(tl, tl_view(tl, t, ((int64_t[]){ 0, 6 }), sh),
                   tl_view(tl, t, ((int64_t[]){ 0, 0 }), sh));
        tl_copy_to(tl, tl_view(tl, t, ((int64_t[]){ 0, 2 }), wide), /* FAULT */
                   tl_view(tl, t, ((int64_t[]){ 0, 0 }), wide));
}

CASE_TABLE(.name = "copy_overlap");
