/* report/critpath.h: the critical path of a run and what-if estimates
 * (`cubesim run --critical-path`, docs/adr/0028-critical-path.md).
 *
 * While a kernel runs, the runtime records a dependence log, in the order
 * things happen:
 *   - per PE, its timeline: issue time on the PE_CPU, and each wait (from
 *     when to when, at which kernel line), with the op that ended at the
 *     wake-up (the producer it waited for: looked up by PE and end time),
 *     or the signal that woke it (another kernel thread's push or pop on
 *     a circular buffer, recorded as an op of no length at its time);
 *   - per op record (an engine's work, a DMA copy, a composite's stage, a
 *     send, a receive's drain): its PE, issue time, start, end, line, its
 *     time split by resource class (hw_dep), the PE's last timeline step
 *     at its issue, the op it queued behind (one of its PE's ops ended at
 *     its start; for a composite's stage, else the op whose end placed it)
 *     and, for a drain, the send it came from. A chain of a composite's
 *     stages on one engine is one entry.
 * Producers are looked up among their PE's last 32 ops, which are kept
 * whole; an op is written to the log only when something refers to it
 * (docs/adr/0051). Every reference is to an earlier entry of the log, so
 * the log is a dependence graph in topological order. The calls below
 * only write records of what happened; the log is built from them on a
 * thread of its own where the process may use two processors (else, or
 * with CUBESIM_CP_INLINE=1, on the caller's), in the order written, so
 * it is the same either way (docs/adr/0051, amendment 3). The calls for
 * one log come from one thread.
 *
 * A what-if re-times the graph forward with one class's durations scaled
 * (0.5: 2x faster), keeping the recorded order of every queue: each
 * entry's moves as it is written. After the run, the walk goes back from
 * the last PE's end through what each step waited on, to the kernel's
 * start: its segments tile the kernel time, so its split by class and by
 * line sums to the kernel time exactly. */
#ifndef CUBESIM_REPORT_CRITPATH_H
#define CUBESIM_REPORT_CRITPATH_H

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>

#include "hw/hw.h"
#include "report/oplog.h"

struct rep_trace;

/* Classes of the path: hw_dep's, then the named waits. */
enum rep_cp_class {
        REP_CP_LAUNCH = HW_DEP_COUNT, /* before a PE's first step (launch, program start) */
        REP_CP_WAIT,                 /* a wait whose producer was not recorded */
        REP_CP_COUNT
};

struct rep_cp;

/* A log for a machine of n_pes PEs; NULL when out of memory. */
struct rep_cp *rep_cp_new(uint32_t n_pes);
void rep_cp_free(struct rep_cp *);

/* PE pe paid issue time on its PE_CPU over [a, b) for what at file:line. */
void rep_cp_issue(struct rep_cp *, uint32_t pe, sim_ps a, sim_ps b, const char *file, int line,
                  const char *what);
/* Thread `thread` of PE pe (0: the kernel) was blocked over [a, b) at
 * file:line. */
void rep_cp_wait(struct rep_cp *, uint32_t pe, int thread, sim_ps a, sim_ps b, const char *file,
                 int line);
/* Thread `thread` of PE pe did what at file:line at `at`, which may wake
 * another thread of the PE (a circular buffer's push or pop): a wait of
 * the PE that ends then is linked to it, as a receive to its send. The
 * log may be NULL (nothing recorded). */
void rep_cp_signal(struct rep_cp *, uint32_t pe, int thread, sim_ps at, const char *file,
                   int line, const char *what);
/* An op record of PE issuer (op->pe_index differs for a receive's drain,
 * which the issuer's last op, its send, caused), charged to file:line,
 * issued at `now`; stage: placed after its call returned (a composite's
 * stage, an HBM copy placed at the end of its instant). s->dep gives its
 * split by class when it describes the same interval. op->component is a
 * static name (its class is remembered by its address). */
void rep_cp_op(struct rep_cp *, const struct hw_sim *s, uint32_t issuer, const struct rep_op *op,
               const char *file, int line, bool stage);

/* A composite's stage on PE pe (a record of component "pe_dma", "pe_gemm"
 * or "pe_math" named what) over [start, end), charged to file:line: as
 * rep_cp_op(..., stage = true) of it, without the record (component a
 * static name, as there). */
void rep_cp_stage(struct rep_cp *, const struct hw_sim *s, uint32_t pe, const char *component,
                  const char *what, sim_ps start, sim_ps end, const char *file, int line);

/* After the run: walk the path and estimate the what-ifs. 0 or -ENOMEM
 * (also when the log ran out of memory during the run). */
int rep_cp_analyse(struct rep_cp *, const struct hw_sim *s);
/* "pe_cpu", "pe_dma", "pe_gemm", "pe_math", "hbm_channel", "noc", "tcm",
 * "latency", "launch", "wait". */
const char *rep_cp_class_name(int cls);
/* The path's kernel time (after rep_cp_analyse). */
sim_ps rep_cp_kernel_ps(const struct rep_cp *);
/* jsonw_print of the run's summary (an object, released) with the path as
 * its last member, "critical_path": {"kernel_ps", "by_class", "by_line",
 * "segments", "chain", "what_if_2x_kernel_ps"}. 0 or -1 (as jsonw_print). */
int rep_cp_json_print(const struct rep_cp *, FILE *f, json_t *summary, int indent);
/* The text section of the run summary. */
void rep_cp_text(const struct rep_cp *, FILE *out);
/* The path as a track of its own in the trace (pid: a free process id). */
void rep_cp_trace(const struct rep_cp *, struct rep_trace *t, uint32_t pid);

#endif
