/* tests/bad/kernels/tcm_part_other.c: two PEs load the same rows of a
 * tensor sharded over the PEs' TCM (tl_setup_tensor_sharded). PE 0 loads
 * them first, so they are its part, in its TCM; PE 1's load reads its own
 * TCM on the machine, not PE 0's rows, yet data mode gave it PE 0's. A
 * kernel error naming both lines (docs/adr/0017).
// args: --topo topologies/small.yaml --mode data
// expect: tests/bad/kernels/tcm_part_other.c:@LINE@: error: PE sip0.cube0.pe1: tl_load: touches element [0, 0] of x, which is sharded over the PEs' TCM (tl_setup_tensor_sharded): it is PE sip0.cube0.pe0's part, first touched at tests/bad/kernels/tcm_part_other.c:37, in that PE's TCM
// expect-count: 1
 */
#include <cubesim/tl.h>

#include "case.h"

struct args {
        tl_tensor *x;                /* input [8, 64], sharded over the PEs' TCM */
};

static void setup(tl_setup *s, void *argp)
{
        struct args *a = argp;
        a->x = tl_setup_tensor_sharded(s, "x", TL_INPUT, TL_FP32, 2, ((int64_t[]){ 8, 64 }));
}

static void body(tl_ctx *tl, const void *argp)
{
        const struct args *a = argp;
        int me = tl_rank(tl, -1, -1, -1);
        int64_t start[2] = { 0, 0 }, rows[2] = { 4, 64 };
        if (me > 1)
                return;
        tl_tensor *v = tl_view(tl, a->x, start, rows);
        if (me == 1) {
                tl_recv(tl, 0, 0);
                tl_load(tl, v); /* FAULT */
                return;
        }
        tl_tensor *x = tl_load(tl, v);
        tl_send(tl, 1, tl_rowsum(tl, x), 0);
}

CASE_TABLE(.name = "tcm_part_other", .args_size = sizeof(struct args), .setup = setup);
