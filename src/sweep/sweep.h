/* sweep/sweep.h: parameter sweeps. A sweep spec (YAML, docs/sweeps.md)
 * names a kernel, a machine and a grid of parameter points, optionally in
 * named panels; every point is one op_log-mode simulation run in a worker
 * process, and the results merge into DIR/sweep.json, per-point files
 * DIR/points/NNNN.json, gnuplot figures and a Markdown report.
 *
 * Determinism: sweep.json is a function of the spec, the machine and the
 * cubesim build, whatever the number of workers or MPI ranks and whatever
 * order points finish in, except for the wall-clock keys (SWEEP_WALL_KEYS),
 * which are plain scalars, one per line in the file, so that a test can
 * strip them and compare (docs/adr/0006-sweeps.md).
 *
 * Parallelism: `jobs` worker processes on one host (fork, one child per
 * point, its result sent back through a pipe); under `mpirun -np N` (built
 * with MPI) rank 0 hands points out to every rank and writes the merged
 * result. A point that fails (kernel error, deadlock, bad parameters, a
 * crashed worker) is recorded with its error and exit status; the others
 * complete. Every file is written to a temporary name and renamed. */
#ifndef CUBESIM_SWEEP_SWEEP_H
#define CUBESIM_SWEEP_SWEEP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "base/diag.h"

/* The keys whose values depend on the host or the run, not the spec. */
#define SWEEP_WALL_KEYS "wall_s", "events_per_s", "peak_rss_kib"

#define SWEEP_MAX_POINTS 100000      /* points in one spec */
#define SWEEP_MAX_SPEC_BYTES (1u << 20) /* a spec file */
#define SWEEP_MAX_DEPTH 32           /* YAML nesting */
#define SWEEP_MAX_YAML_NODES 100000  /* scalars + maps + lists in one spec */

/* One parameter setting: a kernel parameter (plain key) or a topology
 * parameter (dotted YAML path, e.g. pe.dma.bw_gbps). */
struct sweep_kv {
        const char *key;             /* parameter name (owned by the spec) */
        const char *value;           /* its text, as --set takes it (owned by the spec) */
        bool quoted;                 /* the YAML scalar was quoted: a string in JSON */
        unsigned line, col;          /* of the value in the spec (1-based; 0: not from a file) */
        unsigned key_line, key_col;  /* of the key in the spec */
};

/* How a panel's points are drawn against one parameter. */
struct sweep_figure {
        const char *x;               /* x-axis parameter; NULL: the first numeric coordinate */
        const char *series;          /* parameter naming each line; NULL: every other coordinate */
        const char *x_label;         /* x-axis label with its unit; NULL: the parameter's name */
        double roofline_bytes_per_x; /* HBM roofline: bytes crossing HBM per unit of x (0: none) */
        int log;                     /* log-log axes: 1 yes, 0 no, -1 when x spans 8x or more */
};

/* A named group of points with one kernel; points run in spec order. */
struct sweep_panel {
        const char *name;            /* [A-Za-z0-9._-]+, unique in the spec */
        const char *kernel;          /* registered kernel name */
        struct sweep_kv *params;     /* fixed parameters (top level merged in), spec order */
        size_t n_params;             /* entries of params */
        size_t first_point;          /* its points are spec->points[first_point ..+ n_points) */
        size_t n_points;             /* how many */
        struct sweep_figure figure;  /* how to draw it */
        const char *topo_path;       /* its `topology:` file, resolved; NULL: the spec's */
        bool own_topo;               /* the panel names its machine (topo_path NULL: built in) */
        unsigned line;               /* its line in the spec (1-based; 0: the top level) */
};

/* A named machine variant (`machines: {NAME: {dotted.key: value}}`): the
 * topology --sets a point takes when its parameter `machine` names it. */
struct sweep_machine {
        const char *name;            /* [A-Za-z0-9._-]+, unique in the spec */
        struct sweep_kv *sets;       /* its topology parameters, spec order */
        size_t n_sets;               /* entries of sets */
};

/* One simulation: the coordinates that vary; the rest is its panel's. */
struct sweep_point {
        size_t panel;                /* index into spec->panels */
        struct sweep_kv *coords;     /* grid or explicit values, in spec->pool */
        size_t n_coords;             /* entries of coords */
};

struct sweep_spec {
        const char *path;            /* the spec file, or a label for built-in specs */
        const char *name;            /* `name:`, or the file's stem */
        const char *topo_path;       /* machine file, relative to the spec's dir; NULL: built in */
        const char *base_dir;        /* where relative machine files are (NULL: the cwd) */
        struct sweep_machine *machines; /* named variants, spec order */
        size_t n_machines;           /* entries of machines */
        bool machines_vary;          /* some panel or point names its machine or variant */
        const char *text;            /* the spec's text, copied to DIR/spec.yaml */
        size_t text_len;             /* bytes of text */
        struct sweep_panel *panels;  /* in spec order */
        size_t n_panels;             /* entries of panels */
        struct sweep_point *points;  /* every panel's points, panel by panel */
        size_t n_points;             /* entries of points */
        struct sweep_kv *pool;       /* storage of all coordinates */
        size_t n_pool;               /* entries used */
        char **strs;                 /* every string above, owned */
        size_t n_strs, cap_strs;     /* entries used and allocated */
};

/* Read and check a spec file: syntax, keys, kernels, parameter names and
 * values, the machine file. Every problem goes to d located
 * FILE:LINE:COL; returns 0, or -EINVAL (then *out is safe to fini). */
int sweep_spec_load_file(const char *path, struct sweep_spec *out, struct diag *d);
/* Same from text; label names it in messages; relative topology paths
 * resolve against base_dir (NULL: the current directory). */
int sweep_spec_load_text(const char *label, const char *text, size_t len, const char *base_dir,
                         struct sweep_spec *out, struct diag *d);
void sweep_spec_fini(struct sweep_spec *);
/* The spec's points, panel by panel, as `cubesim sweep --list` prints
 * them, on out. */
void sweep_spec_list(const struct sweep_spec *, FILE *out);

/* The value of key for point i: its coordinate, else its panel's fixed
 * parameter; NULL if neither sets it. */
const struct sweep_kv *sweep_point_param(const struct sweep_spec *, size_t i, const char *key);

/* The machine file point i runs on (its parameter `topology`, else its
 * panel's, else the spec's), resolved against the spec's folder, in buf;
 * NULL for the built-in default machine. */
const char *sweep_point_topo(const struct sweep_spec *, size_t i, char *buf, size_t len);
/* The named variant point i runs (its parameter `machine`), or NULL. */
const struct sweep_machine *sweep_point_variant(const struct sweep_spec *, size_t i);
/* Point i's machine as figures and reports name it: the machine file's
 * stem ("default" when built in), then "/VARIANT" when it runs one. */
void sweep_point_machine(const struct sweep_spec *, size_t i, char *buf, size_t len);
/* A parameter's value as a label: a machine file's stem for `topology`,
 * else the value. */
const char *sweep_kv_label(const struct sweep_kv *kv, char *buf, size_t len);

struct sweep_opts {
        const char *out_dir;         /* where results go (created) */
        unsigned jobs;               /* concurrent worker processes on this host (>= 1) */
        bool resume;                 /* keep the points already done in out_dir */
        bool no_figures;             /* skip gnuplot and the figures (the report still) */
        int progress;                /* 1 on, 0 off, -1 when stderr is a terminal */
        FILE *out;                   /* where the summary lines go (NULL: nowhere) */
        double timeout_s;            /* wall-clock limit of one point, seconds (0: none) */
        const char *report_extra;    /* Markdown appended to report.md (borrowed), or NULL */
        void (*on_progress)(void *ctx, size_t done, size_t todo, size_t failed);
                                     /* called at the start and as points finish, on the
                                      * root (NULL: none) */
        void *progress_ctx;          /* on_progress's first argument */
};

/* What a sweep did, for the caller's own summary. */
struct sweep_outcome {
        bool root;                   /* this process wrote the results (false on MPI ranks > 0) */
        size_t n_points;             /* points in the spec */
        size_t n_failed;             /* points that failed */
        size_t n_resumed;            /* points kept from an earlier run */
        unsigned ranks;              /* MPI ranks (1 without mpirun) */
        double wall_s;               /* whole sweep, seconds */
        uint64_t events;             /* simulated events of the points run now */
        double events_per_s;         /* events / wall_s */
        uint64_t bookings;           /* their requests served at arrival (ADR 0016) */
        double work_per_s;           /* (events + bookings) / wall_s */
        bool figures;                /* the figures were drawn */
        bool report;                 /* report.md was written */
};

/* Run every point of spec and write the results. Under mpirun (when built
 * with MPI) every rank calls this; MPI is started and finished inside.
 * Returns the exit status: 0 every point succeeded, 1 some point failed
 * (or ran past opts->timeout_s: its worker is killed, the point recorded
 * as timed out), 2 bad input (out_dir unusable or locked by another
 * sweep, mpirun without MPI support) or a result file that could not be
 * written (a full disk); messages go to d. */
int sweep_run(const struct sweep_spec *spec, const struct sweep_opts *opts,
              struct sweep_outcome *out, struct diag *d);

/* This process's MPI rank as mpirun announces it in the environment
 * (0 when not launched by mpirun): lets ranks > 0 stay silent about bad
 * input that every rank finds. */
int sweep_launch_rank(void);

/* Run gnuplot ($CUBESIM_GNUPLOT, else gnuplot on the PATH) on the scripts
 * (names relative to dir) in dir; its messages go to dir/gnuplot.log.
 * 0, or -ENOENT (no gnuplot), or -EIO (it failed). */
int sweep_gnuplot(const char *dir, char scripts[][300], size_t n);

#endif
