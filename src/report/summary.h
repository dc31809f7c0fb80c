/* report/summary.h: the run summary (`cubesim run --json`) and its text
 * form. */
#ifndef CUBESIM_REPORT_SUMMARY_H
#define CUBESIM_REPORT_SUMMARY_H

#include <jansson.h>
#include <stdio.h>

#include "hw/hw.h"

/* What the kernel runtime counted of a run, beyond the machine's own
 * counters (tl_job_run fills it). */
struct rep_run_stats {
        sim_ps issue_ps[TOPO_OP_COUNT]; /* PE_CPU issue time by op type, summed over PEs */
        uint64_t n_ops[TOPO_OP_COUNT]; /* ops issued by type, summed over PEs */
};

/* A new JSON object: kernel, machine, sim_ns, kernel_ns, events, issue
 * time by op type, and the pes array (pe, exec_start_ps, exec_end_ps), of
 * the machine s after a run with statistics st. */
json_t *rep_run_summary(const struct hw_sim *s, const struct rep_run_stats *st,
                        const char *kernel);
/* The same figures for a person. */
void rep_run_summary_text(const struct hw_sim *s, const char *kernel, FILE *out);

#endif
