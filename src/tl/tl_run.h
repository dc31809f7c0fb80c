/* tl/tl_run.h: what the rest of cubesim may use of the kernel runtime: the
 * kernel registry, run options, the one entry point that runs a kernel on
 * a machine (`cubesim run`, sweep points, benches and tests all go through
 * tl_job_run), the one rule that routes a --set key to the kernel or to
 * the topology, and a run's statistics.
 *
 * Kernels see only <cubesim/tl.h>. The runtime's own types (tensors, the
 * per-PE context, struct tl_run) are in tl_int.h, private to src/tl and
 * its unit tests. */
#ifndef CUBESIM_TL_TL_RUN_H
#define CUBESIM_TL_TL_RUN_H

#include <cubesim/tl.h>

#include "base/diag.h"
#include "base/params.h"
#include "hw/hw.h"
#include "report/summary.h"

/* ---- the kernel registry ---- */

/* A kernel by name: built in, or loaded with tl_kernels_load; NULL if
 * none. */
const struct tl_kernel *tl_kernel_find(const char *name);
/* The i-th known kernel (built-ins first, then loaded ones), NULL past the
 * last. */
const struct tl_kernel *tl_kernel_at(size_t i);
/* Load the kernels a shared object exports as cubesim_kernels; errors to
 * d. 0 or -1. A library adds kernels, it never replaces one: a kernel named
 * like one already known (built in, from an earlier library or twice in
 * this one) is an error naming the library and the kernel, and then none
 * of the library's kernels is added. */
int tl_kernels_load(const char *path, struct diag *d);
/* Kernel k's parameter called name (name_len bytes), or NULL. */
const struct tl_param *tl_kernel_param(const struct tl_kernel *k, const char *name,
                                       size_t name_len);

/* The value of parameter p spelled v (CHOICE: the index of the word; INT
 * and FLOAT: strict decimal, params_parse_*, within [min, max]); false with
 * what was expected ("expected an integer in [1, 8]") in msg. */
bool tl_param_parse(const struct tl_param *p, const char *v, double *out, char *msg, size_t len);

/* ---- --set: kernel or topology parameter ---- */

/* The one rule: a key that names a parameter of k, or has no dot, is a
 * kernel parameter (an unknown one is reported by the kernel's setup,
 * with hints); any other key is a topology parameter by its dotted YAML
 * path. */
bool tl_set_is_topo(const struct tl_kernel *k, const char *key, size_t key_len);
/* The topology path of a topology key (key_len bytes): issue_cost.OP_ns is
 * short for pe.cpu.issue_cost_ns.OP; any other key is itself. Written to
 * buf (NUL-terminated, truncated to len). */
const char *tl_set_topo_path(const char *key, size_t key_len, char *buf, size_t len);

/* ---- running a kernel ---- */

enum tl_mode { TL_MODE_OPLOG, TL_MODE_DATA };

/* What a run is asked to do. */
struct tl_run_opts {
        enum tl_mode mode;           /* op_log (timing only) or data */
        const char *inputs_dir;      /* --inputs DIR or NULL */
        const char *outputs_dir;     /* --outputs DIR or NULL */
        const char *oplog_path;      /* --oplog FILE or NULL */
        const char *trace_path;      /* --trace FILE or NULL */
        const char *trace_pes;       /* --trace-pes LIST (global PE indices, a-b ranges) or NULL */
        sim_ps trace_t0, trace_t1;   /* --trace-window: slices meeting [t0, t1], ps (t1 0: open) */
        uint64_t seed;               /* random inputs when no file is given */
        bool allow_random;           /* --allow-random: inputs missing from inputs_dir are generated */
        const char *save_inputs_dir; /* --save-inputs DIR: write the generated inputs, or NULL */
        const char *expect_dir;      /* --expect DIR: compare outputs with DIR/NAME.npy, or NULL */
        double rtol, atol;           /* --expect tolerances; < 0: the output dtype's default */
        bool fail_on_nonfinite;      /* a NaN or inf in an input or output fails the run */
        struct params *params;       /* kernel parameters (tl_job_run sets it from its sets) */
        uint64_t max_events;         /* stop with an error past this many events (0: none) */
        sim_ps max_time_ps;          /* stop with an error past this simulated time (0: none) */
        double timeout_s;            /* tl_job_run: stop the process past this many seconds
                                      * of wall time, even mid-kernel (0: none; watchdog.h) */
        bool progress;               /* draw the run's progress on stderr (a terminal's line) */
        bool critical_path;          /* record the dependence log (report/critpath.h) */
};

/* Default budgets: they stop a kernel that never ends, and bound nothing
 * else (events use no memory once run). Sized from the largest run users
 * make, gqa_prefill at 128K on llama3-70b (causal): 1.75e8 events and 0.45
 * simulated seconds (an earlier prefill kernel took 7.6e8 and 0.95); about
 * twenty times that, room for larger machines and contexts. A spinning kernel that
 * does not advance time reaches the event budget in about ten minutes;
 * --timeout-s bounds wall time. */
#define TL_DEFAULT_MAX_EVENTS UINT64_C(4000000000)
#define TL_DEFAULT_MAX_TIME_PS (UINT64_C(10000000000000))  /* 10 s simulated */

/* The one default of a run's options, which `cubesim run`, sweep points,
 * benches, the library (cubesim.h) and the unit tests start from: op_log
 * mode, seed 1, the default budgets, the dtype's default tolerances, no
 * files, no progress line. */
struct tl_run_opts tl_run_opts_default(void);

struct tl_run;

/* A kernel to run on a machine, and what became of it. The caller fills
 * the first block; tl_job_run fills the rest, which lives until
 * tl_job_fini. */
struct tl_job {
        const struct tl_kernel *kernel; /* what runs */
        const struct topo *topo;     /* the machine before the sets (not changed) */
        const char *const *sets;     /* "key=value", borrowed until tl_job_fini; the last wins */
        size_t n_sets;               /* entries of sets */
        struct tl_run_opts opts;     /* how (opts.params is the job's own) */

        struct topo machine;         /* topo with the sets' topology parameters */
        struct params params;        /* the sets' kernel parameters */
        struct hw_sim sim;           /* the machine after the run (clocks, counters) */
        bool have_sim;               /* sim was built */
        struct tl_run *run;          /* the run (tl_int.h); NULL if it never began */
        struct rep_run_stats stats;  /* what the runtime counted (valid when 0 was returned) */
        double run_wall_s;           /* host seconds of the run proper (setup, launch, loop) */
};

/* Route the sets, check that this host can hold the machine, build it and
 * run the kernel on every PE (writing opts' op_log, trace and outputs).
 * 0 on success; -EINVAL bad input (a --set, a parameter, a file, a machine
 * too big: exit 2); -ENOMEM; -1 the kernel failed or deadlocked (exit 1).
 * Problems go to d. Call tl_job_fini whatever the result. */
int tl_job_run(struct tl_job *job, struct diag *d);
void tl_job_fini(struct tl_job *job);

/* Data mode: one line per input of run r (NULL: none) saying where its
 * values came from (the file, or generated from which seed) and where it
 * was saved. */
void tl_report_inputs(const struct tl_run *r, FILE *out);

#endif
