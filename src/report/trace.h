/* report/trace.h: a Chrome Trace Event JSON file, streamed.
 *
 * The file is a JSON object {"traceEvents": [...], "displayTimeUnit": "ns"}
 * that Perfetto UI and chrome://tracing open. Each PE is a process (pid =
 * global PE index, named by a metadata event "process_name" with the PE's
 * name), each component a thread (tid: 0 pe_cpu, 1 pe_dma, 2 pe_gemm,
 * 3 pe_math, named by "thread_name" metadata), so every component gets its
 * own track. Each op is a complete event ("ph": "X") with ts and dur in
 * microseconds written exactly from picoseconds (e.g. 120.000001). A send
 * and its recv are joined by a flow arrow ("ph": "s" at the send, "f" with
 * "bp": "e" at the recv, same id).
 *
 * Events are written as they come and the closing bracket at close, so
 * memory does not grow with the trace. */
#ifndef CUBESIM_REPORT_TRACE_H
#define CUBESIM_REPORT_TRACE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "report/oplog.h"

struct rep_trace {
        FILE *f;                     /* output */
        bool owned;                  /* f was opened by rep_trace_open */
        bool first;                  /* no event written yet (comma handling) */
        uint8_t *named;              /* per PE: metadata written (bitmap or bytes) */
        uint32_t n_pes;              /* size of named */
        int err;                     /* first write error (errno), 0 if none */
        char *buf;                   /* f's stdio buffer (owned), NULL for stdout */
};

/* Open path ("-" is stdout) for a machine of n_pes PEs. 0 or -errno. */
int rep_trace_open(struct rep_trace *, const char *path, uint32_t n_pes);
/* One op as a complete event on its PE's component track; the PE's and
 * the component's names are written once, on first use. */
void rep_trace_op(struct rep_trace *, const struct rep_op *);
/* The two ends of a flow arrow (send -> recv), id unique per pair. */
void rep_trace_flow(struct rep_trace *, uint64_t id, const struct rep_op *from,
                    const struct rep_op *to);
/* Close the JSON; 0 or -errno of the first write error. */
int rep_trace_close(struct rep_trace *);

#endif
