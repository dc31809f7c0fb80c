/* kernels/tt_grid.h: the grid of PEs a tt-metal program runs on, as
 * kernels/tt_dm.c and kernels/tt_matmul.c take it: grid_x columns by
 * grid_y rows from the NoC's corner of cube 0. */
#ifndef CUBESIM_KERNELS_TT_GRID_H
#define CUBESIM_KERNELS_TT_GRID_H

#include <stdbool.h>

#include <cubesim/tl.h>

/* The parameters tt_setup_grid reads: rows of a kernel's tl_param table. */
#define TT_GRID_PARAMS                                                                          \
        { "grid_x", TL_PARAM_INT, 0, 0, 1024, NULL, "grid columns (0: the compute grid's)" }, \
        { "grid_y", TL_PARAM_INT, 0, 0, 1024, NULL, "grid rows (0: the compute grid's)" }

/* *gx and *gy from the parameters grid_x and grid_y (0: the machine's
 * compute grid along that axis); whether the grid fits in the NoC (the
 * caller words the error). */
static inline bool tt_setup_grid(tl_setup *s, int *gx, int *gy)
{
        *gx = (int)tl_setup_int(s, "grid_x");
        *gy = (int)tl_setup_int(s, "grid_y");
        if (!*gx)
                *gx = tl_setup_grid(s, 0);
        if (!*gy)
                *gy = tl_setup_grid(s, 1);
        return *gx <= tl_setup_mesh_dim(s, 0) && *gy <= tl_setup_mesh_dim(s, 1);
}

#endif
