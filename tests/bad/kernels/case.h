/* tests/bad/kernels/case.h: what every kernel-fault case may share:
 * CASE_TABLE(fields), the library's table of the case's one kernel, whose
 * function is body, with the given tl_kernel fields (.name at least).
 * Include it after <cubesim/tl.h>; it is no case itself (kernel_faults.sh
 * runs *.c). */
#include <stddef.h>

#define CASE_TABLE(...)                                                                       \
        static const struct tl_kernel kernel = { .fn = body, __VA_ARGS__ };                   \
        const struct tl_kernel *const cubesim_kernels[] = { &kernel, NULL }
