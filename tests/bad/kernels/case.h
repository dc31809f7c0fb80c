/* tests/bad/kernels/case.h: what every kernel-fault case may share:
 * CASE_TABLE(fields), the library's table of the case's one kernel, whose
 * function is body, with the given tl_kernel fields (.name at least).
 * Include it after <cubesim/tl.h>; it is no case itself (kernel_faults.sh
 * runs *.c). */
#ifndef CASE_H
#define CASE_H

#include <stddef.h>

#define CASE_TABLE(...)                                                                       \
        static const struct tl_kernel kernel = { .fn = body, __VA_ARGS__ };                   \
        const struct tl_kernel *const cubesim_kernels[] = { &kernel, NULL }

/* Three fp32 inputs x, y, z of [8, 8], declared by case_xyz_declare (z
 * TCM-sharded when z_sharded): the tensors of the setup cases. */
struct case_xyz {
        tl_tensor *x, *y, *z;        /* the inputs */
};

static inline struct case_xyz *case_xyz_declare(tl_setup *s, void *argp, int z_sharded)
{
        struct case_xyz *a = argp;
        int64_t shape[2] = { 8, 8 };
        a->x = tl_setup_tensor(s, "x", TL_INPUT, TL_FP32, 2, shape);
        a->y = tl_setup_tensor(s, "y", TL_INPUT, TL_FP32, 2, shape);
        a->z = z_sharded ? tl_setup_tensor_sharded(s, "z", TL_INPUT, TL_FP32, 2, shape)
                         : tl_setup_tensor(s, "z", TL_INPUT, TL_FP32, 2, shape);
        return a;
}

#endif
