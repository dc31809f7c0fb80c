/* kernels/registry.c: the built-in kernels. */
#include <string.h>

#include "tl/tl_int.h"

extern const struct tl_kernel tl_kernel_noop;
extern const struct tl_kernel tl_kernel_program_ids;

const struct tl_kernel *const tl_builtin_kernels[] = {
        &tl_kernel_noop,
        &tl_kernel_program_ids,
        NULL,
};

const struct tl_kernel *tl_kernel_find(const char *name)
{
        for (const struct tl_kernel *const *k = tl_builtin_kernels; *k; k++)
                if (strcmp((*k)->name, name) == 0)
                        return *k;
        return NULL;
}
