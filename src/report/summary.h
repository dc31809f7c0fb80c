/* report/summary.h: the run summary (`cubesim run --json`) and its text
 * form: totals, busy time and utilisation per component class, the run's
 * bounds, and where the time went per kernel source line. */
#ifndef CUBESIM_REPORT_SUMMARY_H
#define CUBESIM_REPORT_SUMMARY_H

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>

#include "hw/hw.h"
#include "report/profile.h"

/* What the kernel runtime counted of a run, beyond the machine's own
 * counters (tl_job_run fills it). */
struct rep_run_stats {
        sim_ps issue_ps[TOPO_OP_COUNT]; /* PE_CPU issue time by op type, summed over PEs */
        uint64_t n_ops[TOPO_OP_COUNT]; /* ops issued by type, summed over PEs */
        struct rep_work work;        /* the run's work, for its bounds */
        struct rep_profile profile;  /* time per kernel source line (owned; rep_profile_fini) */
        struct rep_cp *cp;           /* the critical path, analysed (owned), or NULL */
};

/* The resource classes a run is bounded by. */
enum rep_bound {
        REP_BOUND_GEMM,              /* FLOPs / aggregate GEMM peak */
        REP_BOUND_MATH,              /* element-cycles / (aggregate lanes x clock) */
        REP_BOUND_HBM,               /* HBM bytes / aggregate HBM bandwidth */
        REP_BOUND_DMA,               /* DMA bytes / aggregate DMA bandwidth */
        REP_BOUND_NOC,               /* NoC link-bytes / aggregate NoC link bandwidth */
        REP_BOUND_COUNT
};

/* How a run compares with what its machine could do with the same work.
 * Each bound is a lower bound of the kernel time: the run's own work
 * (from its op records and the hardware's byte counters) over the
 * machine's aggregate rate of that resource (from the topology, after
 * --set), so it does not depend on how the timing model charges it. */
struct rep_bounds {
        sim_ps ps[REP_BOUND_COUNT];  /* per class, ps (rounded up) */
        enum rep_bound by;           /* the largest: the binding resource */
        sim_ps kernel_ps;            /* the run's kernel time (first start to last end) */
        double of_bound;             /* ps[by] / kernel_ps, 0..1 (0 if no kernel time) */
        double gemm_tflops;          /* achieved: GEMM FLOPs / kernel time, TFLOP/s */
        double peak_tflops;          /* the machine's GEMM peak, TFLOP/s */
        double hbm_gbps;             /* achieved: HBM bytes / kernel time, GB/s */
        double peak_hbm_gbps;        /* the machine's HBM bandwidth, GB/s */
};

/* "PE_GEMM", "PE_MATH", "HBM", "PE_DMA", "NoC". */
const char *rep_bound_name(enum rep_bound);
/* The bounds of the run on machine s with statistics st. */
void rep_run_bounds(const struct hw_sim *s, const struct rep_run_stats *st,
                    struct rep_bounds *out);

/* The component classes a run's energy is split into (docs/adr/0024). */
enum rep_energy_class {
        REP_EN_PE_CPU,               /* issued ops; static per PE */
        REP_EN_PE_DMA,               /* static per PE only (its bytes: TCM, NoC) */
        REP_EN_PE_GEMM,              /* MACs x fidelity passes */
        REP_EN_PE_MATH,              /* element-cycles */
        REP_EN_TCM,                  /* bytes read and written */
        REP_EN_NOC,                  /* byte-hops on NoC links; idle per cube */
        REP_EN_HBM,                  /* bytes read and written; idle per cube */
        REP_EN_INTER_CUBE,           /* bytes over inter-cube links */
        REP_EN_INTER_SIP,            /* bytes over inter-SIP links */
        REP_EN_COUNT
};

/* A run's energy: each class's dynamic energy is its work counted by the
 * machine and the runtime (MACs, element-cycles, bytes, byte-hops, ops)
 * times the machine's energy per unit; its static energy is its idle
 * power over the kernel time of each unit plus (active - idle) over the
 * unit's busy time. */
struct rep_energy {
        double dyn_j[REP_EN_COUNT];  /* dynamic energy per class, joules */
        double static_j[REP_EN_COUNT]; /* static energy per class, joules */
        double class_j[REP_EN_COUNT]; /* dyn_j + static_j */
        double total_j;              /* sum of class_j, in class order */
        double static_total_j;       /* sum of static_j */
        double avg_power_w;          /* total_j / kernel time (0 without kernel time) */
        sim_ps kernel_ps;            /* the kernel time it is spread over */
        /* Power over windows of the kernel time (hw/power.h): each class's
         * energy spread over the windows by its busy time in each (its idle
         * part and PE_CPU's energy evenly over the kernel time). */
        double idle_j[REP_EN_COUNT]; /* the idle part of static_j: idle power x units x
                                      * kernel time */
        uint32_t n_windows;          /* windows covering the kernel time */
        sim_ps window_ps;            /* their length (the last may be cut short) */
        double busy_ps[HW_PW_COUNT]; /* busy ps per binned class in those windows */
        double window_j[HW_POWER_BINS]; /* energy per window; sums to total_j */
        sim_ps peak_len_ps;          /* the window of the peak: window_ps, or the
                                      * kernel time if it fits in one */
        double peak_power_w;         /* the highest window's energy / peak_len_ps */
        double tdp_w;                /* the machine's system.tdp_w (0: none) */
        bool over_tdp;               /* avg_power_w > tdp_w */
        double sip_tdp_w;            /* its sip.tdp_w, per chip (0: none) */
        double max_sip_power_w;      /* the highest SIP's average power (with sip_tdp_w) */
        uint32_t max_sip;            /* which SIP */
        bool over_sip_tdp;           /* max_sip_power_w > sip_tdp_w */
};

/* "pe_cpu", "pe_dma", "pe_gemm", "pe_math", "tcm", "noc", "hbm",
 * "inter_cube", "inter_sip". */
const char *rep_energy_class_name(enum rep_energy_class);
/* The energy of the run on machine s with statistics st. */
void rep_run_energy(const struct hw_sim *s, const struct rep_run_stats *st,
                    struct rep_energy *out);

/* The energy of cube's part of the machine in each of en's windows (its
 * share of the machine's windows; the cubes' sum to en->window_j), in out;
 * returns the number of windows (0: none, or out of memory). */
uint32_t rep_energy_cube_windows(const struct hw_sim *s, const struct rep_energy *en,
                                 uint32_t cube, double out[HW_POWER_BINS]);

/* A new JSON object: kernel, machine, sim_ns, kernel_ns, events, issue
 * time by op type, busy time and utilisation, bounds, bound_by, of_bound,
 * achieved rates, and the pes array (pe, exec_start_ps, exec_end_ps), of
 * the machine s after a run with statistics st. */
json_t *rep_run_summary(const struct hw_sim *s, const struct rep_run_stats *st,
                        const char *kernel);
/* The per-line profile as a JSON array (most time first). */
json_t *rep_run_profile(const struct rep_run_stats *st);
/* The same figures for a person; the full per-line table if profile,
 * else the top five lines. */
void rep_run_summary_text(const struct hw_sim *s, const struct rep_run_stats *st,
                          const char *kernel, bool profile, FILE *out);

#endif
