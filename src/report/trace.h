/* report/trace.h: a Chrome Trace Event JSON file, streamed.
 *
 * The file is a JSON object {"traceEvents": [...], "displayTimeUnit": "ns"}
 * that Perfetto UI and chrome://tracing open (gzip-compressed when the
 * path ends in ".gz"). Each PE is a process (pid = global PE index, named
 * by a "process_name" metadata event with the PE's name). Its components
 * are threads: tid = kind + 8 * lane, kind 0 pe_cpu, 1 pe_dma, 2 pe_gemm,
 * 3 pe_math, 4 "other" (an unknown component). A slice never overlaps
 * another of its track partially: each goes on the first lane of its kind
 * whose last slice ended by its start (DMA lanes first try the channel the
 * record names, and are named "pe_dma ch<lane>"), so a track holds
 * disjoint slices in time order. Machine-level tracks (HBM channels, links,
 * per-cube counters) are processes after the PEs, made by the caller with
 * rep_trace_name and rep_trace_slice.
 *
 * Each op is a complete event ("ph": "X") with ts and dur in microseconds
 * written exactly from picoseconds (e.g. 120.000001). Flow arrows join a
 * producer's slice to its consumer's and a send to its recv ("ph": "s" at
 * the first, "f" with "bp": "e" at the second, same id). Counters ("ph":
 * "C") are written in time order per counter.
 *
 * Filters: only the PEs of a selection, and only slices that meet a time
 * window [t0, t1]; a flow is written when both its ends are.
 *
 * Events are written as they come and the closing bracket at close, so
 * memory does not grow with the trace (beyond the lanes and the counters'
 * pending changes). */
#ifndef CUBESIM_REPORT_TRACE_H
#define CUBESIM_REPORT_TRACE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "report/oplog.h"

enum { REP_TRACE_KINDS = 5, REP_TRACE_LANES = 16 };

/* Lanes of one kind of track: the end of each lane's last slice. */
struct rep_lanes {
        sim_ps end[REP_TRACE_LANES]; /* per lane: when its last slice ends, ps */
        uint8_t n;                   /* lanes in use */
};

/* Where a written slice is, for flow arrows. */
struct rep_trace_ref {
        sim_ps ts;                   /* its start, ps */
        uint32_t pid;                /* its process */
        uint32_t tid;                /* its track */
        bool ok;                     /* false: not written (filtered out, or no trace) */
};

/* A counter track: value changes at times, written in time order. A
 * change may be added for any time >= the last flush time. */
struct rep_counter {
        uint32_t pid;                /* its process */
        const char *name;            /* counter name (borrowed), also the arg key */
        int64_t value;               /* value after the changes written so far */
        struct rep_counter_change *heap; /* pending changes, min-heap on time */
        size_t n, cap;               /* heap entries, capacity */
};

struct rep_counter_change {
        sim_ps t;                    /* when, ps */
        int64_t delta;               /* change of the value */
};

struct rep_trace {
        FILE *f;                     /* output */
        bool owned;                  /* f was opened by rep_trace_open */
        bool first;                  /* no event written yet (comma handling) */
        uint8_t *named;              /* per PE: metadata written (flags) */
        struct rep_lanes *lanes;     /* per PE and kind: n_pes * REP_TRACE_KINDS */
        uint32_t n_pes;              /* size of named */
        const uint8_t *select;       /* per PE: nonzero if traced (borrowed); NULL: all */
        sim_ps t0, t1;               /* window of slices written, ps (t1 = SIM_PS_MAX: open) */
        uint64_t n_dropped;          /* slices with no free lane, not written */
        int err;                     /* first write error (errno), 0 if none */
        char *buf;                   /* f's stdio buffer (owned), NULL for stdout */
        struct fs_atomic at;         /* the temporary file that replaces the target at close */
        bool discard;                /* close leaves the target as it was (rejected run) */
};

/* Open path ("-" is stdout) for a machine of n_pes PEs. 0 or -errno. */
int rep_trace_open(struct rep_trace *, const char *path, uint32_t n_pes);
/* Trace only the PEs with select[pe] != 0 (borrowed; NULL: all) and the
 * slices that meet [t0, t1]. Call before the first event. */
void rep_trace_filter(struct rep_trace *, const uint8_t *select, sim_ps t0, sim_ps t1);
/* Whether PE pe's events are written. */
bool rep_trace_wants_pe(const struct rep_trace *, uint32_t pe);
/* One op as a complete event on a lane of its PE's component; the PE's and
 * the track's names are written once, on first use. Returns where it went. */
struct rep_trace_ref rep_trace_op(struct rep_trace *, const struct rep_op *);
/* The two ends of a flow arrow, id unique per pair, category cat ("ipcq"
 * for send -> recv, "dep" for producer -> consumer). Nothing unless both
 * ends were written. */
void rep_trace_flow(struct rep_trace *, uint64_t id, const char *cat,
                    const struct rep_trace_ref *from, const struct rep_trace_ref *to);

/* Machine-level tracks. Metadata: a process name and sort index (tid <
 * 0), or a thread name and sort index. */
void rep_trace_name(struct rep_trace *, uint32_t pid, int tid, const char *name, uint64_t sort);
/* A slice of n transfers of bytes in all on track (pid, base_tid + lane
 * << 24), the lane chosen in lanes (the caller names lane 0 before).
 * Window-filtered. Returns the tid of a lane past the first that this
 * slice opened (the caller names it; a name is written before or after
 * its slices alike), else 0. */
uint32_t rep_trace_slice(struct rep_trace *, struct rep_lanes *lanes, uint32_t pid,
                         uint32_t base_tid, const char *name, sim_ps start, sim_ps end,
                         uint64_t bytes, uint64_t n);

/* Counters: add a change at time t (>= the last flush); write every
 * change before now, in time order (at most one sample per time). */
int rep_counter_add(struct rep_counter *, sim_ps t, int64_t delta);
void rep_counter_flush(struct rep_trace *, struct rep_counter *, sim_ps now);
void rep_counter_fini(struct rep_counter *);

/* Close the JSON; 0 or -errno of the first write error. */
int rep_trace_close(struct rep_trace *);

#endif
