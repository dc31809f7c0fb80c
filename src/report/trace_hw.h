/* report/trace_hw.h: the machine-level side of a trace: a process per
 * cube ("<cube> memory+links", pid n_pes + global cube index) holding a
 * track per HBM channel (tid = channel) and per link whose source is in
 * the cube (NoC, inter-cube and inter-SIP links; tid = 4096 + edge
 * index). A slice on them is a busy period: transfers that follow one
 * another without a gap are one slice (with their count and bytes), which
 * keeps these tracks to a fraction of the trace. Counter tracks: HBM
 * bandwidth per cube's stack (MB/s, on the cube's process), scratch bytes
 * in use and DMA queue depth (ops handed to the PE_DMA and not finished)
 * per PE.
 *
 * It observes the hardware through hw_sim.on_busy while open. Counter
 * changes may lie in the future (a transfer reserved ahead); each
 * counter writes its changes in time order as simulated time passes them,
 * and the rest at close. */
#ifndef CUBESIM_REPORT_TRACE_HW_H
#define CUBESIM_REPORT_TRACE_HW_H

#include "hw/hw.h"
#include "report/summary.h"
#include "report/trace.h"

struct rep_busy_run {
        sim_ps start, end;           /* the period, ps */
        uint64_t bytes;              /* bytes served in it */
        uint64_t n;                  /* transfers served in it */
        bool open;                   /* a period is open (not yet written) */
};

struct rep_trace_hw {
        struct rep_trace *t;         /* the trace (borrowed) */
        struct hw_sim *s;            /* the machine (borrowed; its on_busy is ours while open) */
        uint8_t *cube_sel;           /* per cube: traced (some traced PE is in it) */
        uint8_t *cube_named;         /* per cube: its process named */
        uint8_t *res_named;          /* per track (channels of every cube, then edges): named */
        struct rep_lanes *res_lanes; /* per track, same order */
        struct rep_busy_run *runs;   /* per track: the busy period not yet written */
        struct rep_counter *hbm_bw;  /* per cube: HBM MB/s */
        struct rep_counter *scratch; /* per PE: scratch bytes in use */
        struct rep_counter *dma_q;   /* per PE: DMA ops in flight or queued */
        uint32_t n_channels;         /* HBM channels, all cubes */
};

/* Start observing s for t. 0 or -ENOMEM. */
int rep_trace_hw_open(struct rep_trace_hw *, struct rep_trace *t, struct hw_sim *s);
/* PE pe's scratch in use changes by delta bytes now. */
void rep_trace_hw_scratch(struct rep_trace_hw *, uint32_t pe, int64_t delta);
/* PE pe's DMA takes an op now that ends at end. */
void rep_trace_hw_dma(struct rep_trace_hw *, uint32_t pe, sim_ps end);
/* Write every pending counter change and stop observing. */
/* A "power mW" counter per traced cube: the cube's energy in each window
 * of the run's energy accounting (rep_energy_cube_windows) over the
 * window's length, for the run with statistics st. */
void rep_trace_hw_power(struct rep_trace_hw *, const struct rep_run_stats *st);
void rep_trace_hw_close(struct rep_trace_hw *);

#endif
