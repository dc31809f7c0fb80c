/* tests/bad/kernels/hbm_x.h: what many kernel-fault cases share: one HBM
 * input x, [8, 8] fp32, in struct args, and CASE_KERNEL(name), the
 * library's table for a case whose kernel is body. Include it after
 * <cubesim/tl.h>; it is no case itself (kernel_faults.sh runs *.c). */
#include <stddef.h>

struct args {
        tl_tensor *x;                /* HBM input [8, 8] */
};

static void setup(tl_setup *s, void *argp)
{
        struct args *a = argp;
        int64_t shape[2] = { 8, 8 };
        a->x = tl_setup_tensor(s, "x", TL_INPUT, TL_FP32, 2, shape);
}

#define CASE_KERNEL(nm)                                                                       \
        static const struct tl_kernel kernel = { .name = nm, .fn = body,                      \
                                                 .args_size = sizeof(struct args),            \
                                                 .setup = setup };                            \
        const struct tl_kernel *const cubesim_kernels[] = { &kernel, NULL }
