/* tests/bad/kernels/stale_replica.c: a temporary HBM tensor left
 * replicated (its setup forgot tl_setup_interleave): PE 0 of cube 0
 * writes all of it and then tells the PEs of cube 1, which read their rows
 * of it; but each cube has its own copy, and cube 1's never received them
 * (docs/adr/0017). tests/placement_data.sh builds two variants that pass
 * with out 3 everywhere: -DSTALE_REPLICA_INTERLEAVED, the tensor
 * interleaved, one copy every PE reads; -DSTALE_REPLICA_OWN_COPY, cube 1
 * writes 3 to its own copy first, then cube 0 writes 5 to its copy, then
 * cube 1 reads its copy (3, as on the machine; one shared copy would give
 * 5). With -DSTALE_REPLICA_RMW the first read is a composite updating the
 * rows in place (a read too).
// args: --topo topologies/small.yaml --mode data
// expect: tests/bad/kernels/stale_replica.c:@LINE@: error: PE sip0.cube1.pe0: tl_load: reads element [0, 0] of tmp, which is replicated (a copy per cube, each PE reading its own cube's), and cube 1's copy never received it: PE sip0.cube0.pe0 wrote it to cube 0's copy at tests/bad/kernels/stale_replica.c:64
// expect-count: 1
 */
#include <cubesim/tl.h>

#include "case.h"

struct args {
        tl_tensor *tmp;              /* temporary [8, 64], written by cube 0 */
        tl_tensor *out;              /* output [8, 64], interleaved */
};

static void setup(tl_setup *s, void *argp)
{
        struct args *a = argp;
        int64_t shape[2] = { 8, 64 };
        a->tmp = tl_setup_tensor(s, "tmp", TL_TEMP, TL_FP32, 2, shape);
        a->out = tl_setup_tensor(s, "out", TL_OUTPUT, TL_FP32, 2, shape);
        tl_setup_interleave(s, a->out);
#ifdef STALE_REPLICA_INTERLEAVED
        tl_setup_interleave(s, a->tmp);
#endif
}

static void body(tl_ctx *tl, const void *argp)
{
        const struct args *a = argp;
        int pe = tl_program_id(tl, 0), pes = tl_num_programs(tl, 0);
        int64_t all[2] = { 8, 64 }, token[2] = { 1, 1 };
        int64_t start[2] = { 8 / pes * pe, 0 }, rows[2] = { 8 / pes, 64 };
        int cube = tl_program_id(tl, 1);
#ifdef STALE_REPLICA_OWN_COPY
        if (cube == 1 && pe == 0) {
                tl_scratch_scope_begin(tl);
                tl_store(tl, a->tmp, tl_fill(tl, TL_FP32, 2, all, 3.0f));
                tl_scratch_scope_end(tl);
                tl_send(tl, tl_rank(tl, 0, 0, 0), tl_fill(tl, TL_FP32, 2, token, 1.0f), 1);
        }
        if (cube == 0 && pe == 0)
                tl_recv(tl, tl_rank(tl, 0, 1, 0), 1);
#define VALUE 5.0f
#else
#define VALUE 3.0f
#endif
        if (cube == 0) {
                if (pe != 0)
                        return;
                /* Written, and landed (the scope's end waits for its
                 * store), before cube 1 is told. */
                tl_scratch_scope_begin(tl);
                tl_tensor *v = tl_fill(tl, TL_FP32, 2, all, VALUE);
                tl_store(tl, a->tmp, v);
                tl_scratch_scope_end(tl);
                tl_tensor *go = tl_fill(tl, TL_FP32, 2, token, 1.0f);
                for (int p = 0; p < pes; p++)
                        tl_send(tl, tl_rank(tl, p, 1, 0), go, 0);
                return;
        }
        tl_recv(tl, tl_rank(tl, 0, 0, 0), 0);
#ifndef STALE_REPLICA_RMW
        tl_tensor *x = tl_load(tl, tl_view(tl, a->tmp, start, rows)); /* FAULT */
#else
        /* Also stale: a MATH-only composite updating the rows in place. */
        const tl_epilogue relu = { .op = TL_RELU, .scope = TL_SCOPE_KERNEL };
        tl_wait(tl, tl_composite(tl, &(tl_composite_desc){ .out = tl_view(tl, a->tmp, start, rows),
                                                           .epilogue = &relu, .n_epilogue = 1 }));
        tl_tensor *x = tl_load(tl, tl_view(tl, a->tmp, start, rows));
#endif
        tl_store(tl, tl_view(tl, a->out, start, rows), x);
}

CASE_TABLE(.name = "stale_replica", .args_size = sizeof(struct args), .setup = setup);
