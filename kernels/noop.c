/* kernels/noop.c: a kernel that does nothing. Its run shows the launch
 * path alone: every PE starts on the same picosecond and ends at once. */
#include <cubesim/tl.h>

static void noop(tl_ctx *tl, const void *args)
{
        (void)tl;
        (void)args;
}

const struct tl_kernel tl_kernel_noop = {
        .name = "noop",
        .summary = "does nothing: the launch path alone",
        .fn = noop,
};
