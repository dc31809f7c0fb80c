/* tests/bad/kernels/hbm_x.h: what many kernel-fault cases share: one HBM
 * tensor x, fp32, in struct args, and CASE_KERNEL(name), the library's
 * table for a case whose kernel is body. x is an input [8, 8] unless the
 * case defines HBM_X_ROLE (a tl_io) or HBM_X_SHAPE (its two extents)
 * first. Include it after <cubesim/tl.h>; it is no case itself
 * (kernel_faults.sh runs *.c). */
#include "case.h"

#ifndef HBM_X_ROLE
#define HBM_X_ROLE TL_INPUT
#endif
#ifndef HBM_X_SHAPE
#define HBM_X_SHAPE 8, 8
#endif

struct args {
        tl_tensor *x;                /* HBM tensor [HBM_X_SHAPE] */
};

static void setup(tl_setup *s, void *argp)
{
        struct args *a = argp;
        int64_t shape[2] = { HBM_X_SHAPE };
        a->x = tl_setup_tensor(s, "x", HBM_X_ROLE, TL_FP32, 2, shape);
}

#define CASE_KERNEL(nm) CASE_TABLE(.name = nm, .args_size = sizeof(struct args), .setup = setup)
