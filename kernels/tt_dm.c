/* kernels/tt_dm.c: tt-metal's data-movement microbenchmarks written with
 * plain tl.h operations, one thread per PE with every transfer of a PE
 * issued before it waits for any (several in flight), as the directed
 * ideal tests of tt-metal's tests/tt_metal/tt_metal/data_movement issue
 * them. validate-tt-dm (benches/validate_tt_dm.c) runs each pattern and
 * compares its rate with the documented one.
 *
 * Every transfer moves `bytes` (a NoC packet by default in the bench); a
 * PE issues `n` of them. The grid is grid_x columns by grid_y rows from
 * the NoC's corner of cube 0 (0: the machine's compute grid); the master
 * is PE 0 (row 0, col 0). Patterns:
 *   dram_read       the master reads n transfers from a tensor held in
 *                   HBM channel 0 (a single-bank buffer, as dram_unary)
 *   dram_write      the master writes n transfers to it
 *   one_to_one      the master sends n transfers to PE 1 (row 0, col 1)
 *   one_from_one    PE 1 sends n transfers to the master (a read of
 *                   another core's L1 is that core's send in the model)
 *   one_to_all      the master sends each of n transfers to every other
 *                   PE of the grid, one unicast each
 *   one_to_all_mcast        the master multicasts n transfers to the grid
 *   one_to_all_mcast_linked the same with tl_mcast_linked
 *   one_from_all    every other PE of the grid sends n transfers to the
 *                   master, which takes them in turn
 *   grid_dram_read  every PE of the grid reads n transfers of its own rows
 *                   of a tensor interleaved over the channels
 *   grid_dram_read_near  the PE next to each channel (tl_hbm_channel_pe)
 *                   reads n transfers from a tensor held in that channel
 *                   (one reader per bank, bank-adjacent: the DRAM reports)
 *   grid_dram_read_far   the same readers' count, but the grid's first PEs
 *                   (row-major), PE i reading channel i: arbitrary placement
 * Receivers take each message in a scratch scope of its own. */
#include <cubesim/tl.h>

#include "tt_grid.h"

#define TAG 7
#define MAX_CHANNELS 16

enum dm_pattern {
        DM_DRAM_READ,
        DM_DRAM_WRITE,
        DM_ONE_TO_ONE,
        DM_ONE_FROM_ONE,
        DM_ONE_TO_ALL,
        DM_ONE_TO_ALL_MCAST,
        DM_ONE_TO_ALL_MCAST_LINKED,
        DM_ONE_FROM_ALL,
        DM_GRID_DRAM_READ,
        DM_GRID_DRAM_READ_NEAR,
        DM_GRID_DRAM_READ_FAR,
};

static const char *const patterns[] = { "dram_read",        "dram_write",
                                        "one_to_one",       "one_from_one",
                                        "one_to_all",       "one_to_all_mcast",
                                        "one_to_all_mcast_linked", "one_from_all",
                                        "grid_dram_read",   "grid_dram_read_near",
                                        "grid_dram_read_far", NULL };

struct dm_args {
        int pattern;                 /* enum dm_pattern */
        int64_t n;                   /* transfers per issuing PE */
        int64_t elems;               /* bf16 elements per transfer */
        int gx, gy;                  /* grid columns and rows */
        int channels;                /* HBM channels of a cube */
        tl_tensor *hbm;              /* the DRAM patterns' tensor (rows of one transfer) */
        tl_tensor *bank[MAX_CHANNELS]; /* grid_dram_read_near: one per channel */
};

static const struct tl_param dm_params[] = {
        { "pattern", TL_PARAM_CHOICE, 0, 0, 0, patterns, "the data-movement pattern" },
        { "bytes", TL_PARAM_INT, 8192, 64, 1 << 20, NULL,
          "bytes per transfer (even: bf16 elements)" },
        { "n", TL_PARAM_INT, 32, 1, 1 << 16, NULL, "transfers per issuing PE" },
        TT_GRID_PARAMS,
        { NULL, 0, 0, 0, 0, NULL, NULL },
};

static void dm_setup(tl_setup *s, void *args)
{
        struct dm_args *a = args;
        a->pattern = tl_setup_choice(s, "pattern");
        a->n = tl_setup_int(s, "n");
        int64_t bytes = tl_setup_int(s, "bytes");
        bool fits = tt_setup_grid(s, &a->gx, &a->gy);
        if (bytes % 2)
                tl_setup_error(s, "bytes (%lld) must be even: a transfer is bf16 elements",
                               (long long)bytes);
        if (!fits)
                tl_setup_error(s, "the grid (%d x %d) must fit in the %d x %d NoC", a->gx, a->gy,
                               tl_setup_mesh_dim(s, 0), tl_setup_mesh_dim(s, 1));
        if ((a->pattern == DM_ONE_TO_ONE || a->pattern == DM_ONE_FROM_ONE) && a->gx < 2)
                tl_setup_error(s, "%s needs a grid of at least 2 columns", patterns[a->pattern]);
        a->elems = bytes / 2;
        tl_machine m = tl_setup_machine(s);
        a->channels = m.hbm_channels;
        switch (a->pattern) {
        case DM_DRAM_READ:
        case DM_DRAM_WRITE:
                a->hbm = tl_setup_tensor(s, "dram", a->pattern == DM_DRAM_READ ? TL_INPUT
                                                                               : TL_OUTPUT,
                                         TL_BF16, 2, (int64_t[]){ a->n, a->elems });
                tl_setup_hbm_channel(s, a->hbm, 0);
                break;
        case DM_GRID_DRAM_READ:
                a->hbm = tl_setup_tensor(s, "dram", TL_INPUT, TL_BF16, 2,
                                         (int64_t[]){ a->n * a->gx * a->gy, a->elems });
                break;
        case DM_GRID_DRAM_READ_NEAR:
        case DM_GRID_DRAM_READ_FAR:
                if (a->channels > MAX_CHANNELS || a->channels > a->gx * a->gy) {
                        tl_setup_error(s, "%s: %d HBM channels, at most %d and at most the "
                                       "grid's %d PEs", patterns[a->pattern], a->channels,
                                       MAX_CHANNELS, a->gx * a->gy);
                        break;
                }
                for (int ch = 0; ch < a->channels; ch++) {
                        char name[16] = "bank";
                        name[4] = (char)('a' + ch);
                        a->bank[ch] = tl_setup_tensor(s, name, TL_INPUT, TL_BF16, 2,
                                                      (int64_t[]){ a->n, a->elems });
                        tl_setup_hbm_channel(s, a->bank[ch], ch);
                }
                break;
        }
}

/* Row i of t, one transfer. */
static tl_tensor *row(tl_ctx *tl, tl_tensor *t, int64_t i, int64_t elems)
{
        return tl_view(tl, t, ((int64_t[]){ i, 0 }), ((int64_t[]){ 1, elems }));
}

/* n reads of rows [first, first + n) of t into TCM buffers of their own
 * (a reader's L1, not the scratch arena), all in flight, then waited. */
static void read_rows(tl_ctx *tl, tl_tensor *t, int64_t first, int64_t n, int64_t elems)
{
        tl_scratch_scope_begin(tl);
        for (int64_t i = 0; i < n; i++)
                tl_copy_to(tl, tl_alloc(tl, TL_TCM, tl_dtype_of(t), 2, ((int64_t[]){ 1, elems })),
                           row(tl, t, first + i, elems));
        tl_scratch_scope_end(tl);
}

/* Take n messages from src, each in its own scope. */
static void take(tl_ctx *tl, int src, int64_t n)
{
        for (int64_t i = 0; i < n; i++) {
                tl_scratch_scope_begin(tl);
                tl_recv(tl, src, TAG);
                tl_scratch_scope_end(tl);
        }
}

static void tt_dm(tl_ctx *tl, const void *args)
{
        const struct dm_args *a = args;
        if (tl_program_id(tl, 1) != 0 || tl_program_id(tl, 2) != 0)
                return;
        int pe = tl_program_id(tl, 0), cols = tl_mesh_dim(tl, 0);
        int r = pe / cols, c = pe % cols;
        bool in_grid = r < a->gy && c < a->gx;
        int master = tl_rank(tl, 0, 0, 0);
        int64_t shape[2] = { 1, a->elems };
        tl_tensor *buf = NULL;
        switch (a->pattern) {
        case DM_DRAM_READ:
                if (pe == 0)
                        read_rows(tl, a->hbm, 0, a->n, a->elems);
                break;
        case DM_DRAM_WRITE:
                if (pe != 0)
                        break;
                buf = tl_alloc(tl, TL_TCM, TL_BF16, 2, shape);
                for (int64_t i = 0; i < a->n; i++)
                        tl_store(tl, row(tl, a->hbm, i, a->elems), buf);
                break;
        case DM_ONE_TO_ONE:
        case DM_ONE_FROM_ONE: {
                int from = a->pattern == DM_ONE_TO_ONE ? 0 : 1;
                if (pe == from) {
                        buf = tl_alloc(tl, TL_TCM, TL_BF16, 2, shape);
                        for (int64_t i = 0; i < a->n; i++)
                                tl_send(tl, tl_rank(tl, 1 - from, 0, 0), buf, TAG);
                } else if (pe == 1 - from) {
                        take(tl, tl_rank(tl, from, 0, 0), a->n);
                }
                break;
        }
        case DM_ONE_TO_ALL:
                if (pe == 0) {
                        buf = tl_alloc(tl, TL_TCM, TL_BF16, 2, shape);
                        for (int64_t i = 0; i < a->n; i++)
                                for (int p = 1; p < a->gx * a->gy; p++)
                                        tl_send(tl, tl_rank(tl, p / a->gx * cols + p % a->gx, 0,
                                                            0),
                                                buf, TAG);
                } else if (in_grid) {
                        take(tl, master, a->n);
                }
                break;
        case DM_ONE_TO_ALL_MCAST:
        case DM_ONE_TO_ALL_MCAST_LINKED:
                if (pe == 0) {
                        buf = tl_alloc(tl, TL_TCM, TL_BF16, 2, shape);
                        for (int64_t i = 0; i < a->n; i++) {
                                if (a->pattern == DM_ONE_TO_ALL_MCAST)
                                        tl_mcast(tl, 0, 0, a->gy, a->gx, buf, TAG);
                                else
                                        tl_mcast_linked(tl, 0, 0, a->gy, a->gx, buf, TAG);
                        }
                } else if (in_grid) {
                        take(tl, master, a->n);
                }
                break;
        case DM_ONE_FROM_ALL:
                if (pe == 0) {
                        for (int64_t i = 0; i < a->n; i++)
                                for (int p = 1; p < a->gx * a->gy; p++) {
                                        tl_scratch_scope_begin(tl);
                                        tl_recv(tl, tl_rank(tl, p / a->gx * cols + p % a->gx, 0, 0),
                                                TAG);
                                        tl_scratch_scope_end(tl);
                                }
                } else if (in_grid) {
                        buf = tl_alloc(tl, TL_TCM, TL_BF16, 2, shape);
                        for (int64_t i = 0; i < a->n; i++)
                                tl_send(tl, master, buf, TAG);
                }
                break;
        case DM_GRID_DRAM_READ:
                if (in_grid)
                        read_rows(tl, a->hbm, (int64_t)(r * a->gx + c) * a->n, a->n, a->elems);
                break;
        case DM_GRID_DRAM_READ_NEAR:
                for (int ch = 0; ch < a->channels; ch++)
                        if (tl_hbm_channel_pe(tl, ch) == pe)
                                read_rows(tl, a->bank[ch], 0, a->n, a->elems);
                break;
        case DM_GRID_DRAM_READ_FAR:
                if (in_grid && r * a->gx + c < a->channels)
                        read_rows(tl, a->bank[r * a->gx + c], 0, a->n, a->elems);
                break;
        }
}

TL_KERNEL(tt_dm, dm, "tt-metal's data-movement microbenchmarks (validate-tt-dm)",
          "pattern dram_read/dram_write: dram.npy [n, bytes / 2] bf16 in HBM channel 0; "
          "grid_dram_read: dram.npy [n x grid PEs, bytes / 2]; grid_dram_read_near and "
          "_far: banka.npy, bankb.npy, ... [n, bytes / 2], one per channel");
