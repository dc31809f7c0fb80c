/* kernels/program_ids.c: every PE asks its program ids and counts, the
 * smallest kernel that pays issue costs. Used by the launch tests. */
#include <cubesim/tl.h>

static void program_ids(tl_ctx *tl, const void *args)
{
        (void)args;
        for (int axis = 0; axis < 3; axis++) {
                int id = tl_program_id(tl, axis);
                int n = tl_num_programs(tl, axis);
                (void)id;
                (void)n;
        }
}

const struct tl_kernel tl_kernel_program_ids = {
        .name = "program_ids",
        .summary = "asks tl_program_id and tl_num_programs on every axis",
        .fn = program_ids,
};
