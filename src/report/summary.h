/* report/summary.h: the run summary (`cubesim run --json`) and its text
 * form. */
#ifndef CUBESIM_REPORT_SUMMARY_H
#define CUBESIM_REPORT_SUMMARY_H

#include <jansson.h>
#include <stdio.h>

#include "tl/tl_int.h"

/* A new JSON object: kernel, machine, sim_ns, kernel_ns, events, issue
 * time by op type, and the pes array (pe, exec_start_ps, exec_end_ps). */
json_t *rep_run_summary(const struct tl_run *r, const char *kernel);
/* The same figures for a person. */
void rep_run_summary_text(const struct tl_run *r, const char *kernel, FILE *out);

#endif
