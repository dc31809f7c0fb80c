/* tl/tl_int.h: the kernel runtime's private side: the per-PE context
 * behind tl_ctx, the kernel registry, and running a kernel on a machine. */
#ifndef CUBESIM_TL_TL_INT_H
#define CUBESIM_TL_TL_INT_H

#include <cubesim/tl.h>

#include "hw/hw.h"

struct tl_ctx {
        struct hw_pe *pe;            /* the PE running this kernel instance */
        struct hw_sim *sim;          /* its machine */
        struct ev_proc *proc;        /* its process */
        sim_ps issue_ps[TOPO_OP_COUNT]; /* stat: PE_CPU issue time by op type */
        uint64_t n_ops[TOPO_OP_COUNT]; /* stat: ops issued by type */
};

/* Pay PE_CPU issue time for one op of type op. */
void tl__issue(tl_ctx *tl, enum topo_op op);

/* The built-in kernels, NULL-terminated. */
extern const struct tl_kernel *const tl_builtin_kernels[];
const struct tl_kernel *tl_kernel_find(const char *name);

/* Per-PE results of a run. */
struct tl_run {
        struct hw_sim *sim;          /* the machine, after ev_run */
        struct tl_ctx *ctx;          /* per PE, n_pes */
        enum ev_run_result result;   /* how the loop ended */
};

/* Run kernel k with args on sim, which must be freshly built. The run's
 * problems (deadlock, kernel errors) go to d. Returns 0 when the kernel ran
 * to completion on every PE, -1 if the simulated program failed,
 * -ENOMEM. */
int tl_run_kernel(struct hw_sim *sim, const struct tl_kernel *k, const void *args,
                  struct tl_run *out, struct diag *d);
void tl_run_fini(struct tl_run *);

#endif
