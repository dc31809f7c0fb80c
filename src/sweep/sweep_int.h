/* sweep/sweep_int.h: shared inside src/sweep only: the state of a running
 * sweep, the point runner (worker side), result collection, the output
 * writers. Not part of the module's interface. */
#ifndef CUBESIM_SWEEP_SWEEP_INT_H
#define CUBESIM_SWEEP_SWEEP_INT_H

#include <jansson.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "sweep/sweep.h"
#include "topo/topo.h"

/* A running sweep, on the process that collects results (rank 0), or on
 * an MPI rank that only runs points (then recs stays empty). */
struct sweep__ctx {
        const struct sweep_spec *spec; /* what runs */
        const struct sweep_opts *opts; /* how */
        struct diag *d;              /* problems of the sweep itself (not of points) */
        struct topo topo;            /* the base machine of every point */
        struct topo_totals totals;   /* its whole-machine figures */
        uint64_t topo_hash;          /* FNV-1a of the machine's YAML text */
        uint64_t build_hash;         /* FNV-1a of this cubesim binary (0: unreadable) */
        json_t **recs;               /* per point: its record once done (owned), else NULL */
        bool *resumed;               /* per point: kept from an earlier run */
        size_t n_todo;               /* points to run in this invocation */
        size_t n_done_now;           /* of those, finished */
        size_t n_failed;             /* points (run now or resumed) that failed */
        uint64_t events_now;         /* simulated events of the points run now */
        uint64_t bookings_now;       /* and their requests served at arrival */
        double t0;                   /* monotonic start, seconds */
        double last_draw;            /* when progress was last drawn, seconds */
        size_t n_told;               /* n_done_now when opts->on_progress was last called */
        bool progress;               /* draw progress on stderr */
        bool progress_tty;           /* stderr is a terminal: redraw one line in place */
        bool root;                   /* this process collects and writes results */
        int rank, ranks;             /* MPI rank and world size (0, 1 without MPI) */
        char points_dir[4096];       /* DIR/points */
        int lock_fd;                 /* DIR/.lock, flock'd while the sweep writes (-1: none) */
        size_t n_unwritten;          /* result files that could not be written */
        bool report_written;         /* DIR/report.md was written */
};

/* A worker process running one point. */
struct sweep__slot {
        pid_t pid;                   /* the child; 0 when the slot is free */
        int fd;                      /* read end of its result pipe */
        size_t point;                /* the point it runs */
        char *buf;                   /* result text read so far (malloc'd) */
        size_t len, cap;             /* bytes used and allocated */
        double deadline;             /* monotonic seconds when it is stopped (0: never) */
        bool timed_out;              /* killed at its deadline */
};


/* Worker side: run point i of spec on a copy of base in this process and
 * make its record; returns the point's exit status (0 ok, 1 the kernel
 * failed, 2 bad parameters). */
int sweep__run_point(const struct sweep_spec *spec, const struct topo *base, size_t i,
                     json_t **out);
/* The record of a point whose worker died without a result. */
json_t *sweep__crash_record(const struct sweep_spec *spec, size_t i, int exit_status,
                            const char *why);
/* A parameter value as JSON: a plain integer or number stays a number,
 * anything else (or anything quoted) is a string. */
json_t *sweep__kv_json(const struct sweep_kv *kv);
/* Point i's coordinates as a JSON object, in spec order. */
json_t *sweep__coords_json(const struct sweep_spec *spec, size_t i);

/* Start point i in a child process on slot sl. 0 or a negative errno. */
int sweep__spawn(struct sweep__ctx *x, struct sweep__slot *sl, size_t i);
/* Read what slot sl's child has written; when it has closed its pipe,
 * reap it and return its record (and true in *done). */
json_t *sweep__slot_read(struct sweep__ctx *x, struct sweep__slot *sl, bool *done);
/* The first of the NULL-ended environment variables vars that is set and
 * not empty, as an integer (mpirun's rank or size); 0 if none is. */
int sweep__env_int(const char *const *vars);
/* Start points todo[*next..n_todo) on the idle slots of slots[0..n_slots)
 * (a point that cannot start is recorded as crashed); how many started. */
size_t sweep__start_idle(struct sweep__ctx *x, struct sweep__slot *slots, size_t n_slots,
                         const size_t *todo, size_t n_todo, size_t *next);
/* Fill pfd with the pipes of the n slots that have a child (which[f]:
 * the slot of pfd[f]); the number filled. */
nfds_t sweep__poll_set(const struct sweep__slot *slots, size_t n, struct pollfd *pfd,
                       size_t *which);
/* After poll: read every ready pipe of pfd[0..nf), recording the points
 * whose child finished; how many finished. */
size_t sweep__read_ready(struct sweep__ctx *x, struct sweep__slot *slots,
                         const struct pollfd *pfd, const size_t *which, nfds_t nf);
/* How long to poll the n slots' pipes, in ms: idle_ms (-1: no limit), or
 * less to wake at the earliest deadline. */
int sweep__poll_ms(const struct sweep__slot *slots, size_t n, int idle_ms);
/* Kill the children of slots past their deadline (--timeout-s); their
 * pipes then close and sweep__slot_read records them as timed out. */
void sweep__check_deadlines(struct sweep__slot *slots, size_t n);
/* Whether a good point's record, read back by --resume, has every figure
 * the merge adds up, each an integer in [0, 2^53] (sums stay in range) or
 * a finite number >= 0; else false and why ("point.sim_ps: ..."). */
bool sweep__record_valid(json_t *rec, char *why, size_t len);
/* The record of a point stopped at its wall-clock limit. */
json_t *sweep__timeout_record(const struct sweep_spec *spec, size_t i, double timeout_s);
/* A record from a worker (local or from another rank): keep it, write
 * its point file, count it, draw progress. Takes ownership of rec. */
void sweep__collect(struct sweep__ctx *x, size_t i, json_t *rec);
/* Draw the progress line (if on and due; force: now). */
void sweep__progress(struct sweep__ctx *x, bool force);

/* The MPI side. Under mpirun (and built with MPI): start MPI, fill rank
 * and ranks, return 1; without mpirun: 0; mpirun but no MPI support, or
 * MPI fails to start: -EINVAL (reported). */
int sweep__mpi_start(struct sweep__ctx *x);
/* Run the points over the ranks (every rank calls it); rank 0 collects. */
int sweep__mpi_run(struct sweep__ctx *x, const size_t *todo, size_t n_todo);
/* Every rank, at the end; after it the process must not use MPI. */
void sweep__mpi_finish(struct sweep__ctx *x);

/* Build sweep.json from the records. New reference. */
json_t *sweep__merge(struct sweep__ctx *x, double wall_s);
/* Write the figures (data, gnuplot scripts, PNG and SVG) and the report
 * into DIR; true if the figures were drawn (every picture made). Problems
 * are warnings; files that could not be written count in x->n_unwritten,
 * and x->report_written says whether report.md was. */
bool sweep__figures(struct sweep__ctx *x, json_t *sweep);

/* Write a JSON value atomically (indented, stable key order). */
int sweep__write_json(const char *path, json_t *v);

#endif
