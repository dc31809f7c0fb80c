/* sweep/sweep_mpi.c: a sweep over MPI ranks (`mpirun -np N cubesim
 * sweep ...`), when cubesim is built with MPI (CUBESIM_HAVE_MPI).
 *
 * MPI is started only when the environment says mpirun launched us
 * (OMPI_COMM_WORLD_SIZE, PMIX_RANK, PMI_SIZE): a plain `cubesim sweep`
 * never pays for, or depends on, an MPI runtime. Every rank parses the
 * same spec. Rank 0 is the dispatcher and the collector: it hands out
 * point indices one at a time to whichever rank asks (dynamic, so a few
 * long points do not leave ranks idle), runs points of its own in
 * `jobs` local worker processes meanwhile, and writes every result.
 *
 * Protocol (all on MPI_COMM_WORLD): a rank > 0 sends TAG_RESULT with its
 * last record as compact JSON text (empty when it has none yet); rank 0
 * answers TAG_WORK with a point index, or -1 for "stop". Points are run
 * in forked children on every rank, as without MPI; children never call
 * MPI. Rank 0 polls its children's pipes and MPI_Iprobe in turn, with a
 * short sleep in poll() when nothing is ready. */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sweep/sweep_int.h"

/* Launched by mpirun with more than one rank (or with a rank at all). */
static int launch_size(void)
{
        static const char *const vars[] = { "OMPI_COMM_WORLD_SIZE", "PMIX_SIZE", "PMI_SIZE",
                                            NULL };
        return sweep__env_int(vars);
}

#ifndef CUBESIM_HAVE_MPI

int sweep__mpi_start(struct sweep__ctx *x)
{
        if (launch_size() > 1) {
                if (sweep_launch_rank() == 0)
                        diag_error(x->d, "launched by mpirun with %d ranks, but this cubesim "
                                   "was built without MPI (install libopenmpi-dev and "
                                   "rebuild); use --jobs N for parallel points on one host",
                                   launch_size());
                return -EINVAL;
        }
        return 0;
}

int sweep__mpi_run(struct sweep__ctx *x, const size_t *todo, size_t n_todo)
{
        (void)x;
        (void)todo;
        (void)n_todo;
        return 0;
}

void sweep__mpi_finish(struct sweep__ctx *x)
{
        (void)x;
}

#else

#include <mpi.h>

enum { TAG_RESULT = 701, TAG_WORK = 702 };

int sweep__mpi_start(struct sweep__ctx *x)
{
        if (launch_size() < 1)
                return 0;
        int inited = 0;
        MPI_Initialized(&inited);
        if (!inited && MPI_Init(NULL, NULL) != MPI_SUCCESS) {
                diag_error(x->d, "MPI_Init failed");
                return -EINVAL;
        }
        MPI_Comm_rank(MPI_COMM_WORLD, &x->rank);
        MPI_Comm_size(MPI_COMM_WORLD, &x->ranks);
        return 1;
}

void sweep__mpi_finish(struct sweep__ctx *x)
{
        (void)x;
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Finalize();
}

/* Rank > 0: ask for work, run it, send the record back, until told to stop. */
static void run_remote(struct sweep__ctx *x)
{
        char *text = NULL;
        struct sweep__slot sl = { 0 };
        for (;;) {
                int len = text ? (int)strlen(text) : 0;
                MPI_Send(text ? text : "", len, MPI_CHAR, 0, TAG_RESULT, MPI_COMM_WORLD);
                free(text);
                text = NULL;
                long long idx;
                MPI_Recv(&idx, 1, MPI_LONG_LONG, 0, TAG_WORK, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                if (idx < 0 || (size_t)idx >= x->spec->n_points)
                        break;
                json_t *rec;
                int rc = sweep__spawn(x, &sl, (size_t)idx);
                if (rc < 0) {
                        char why[256];
                        snprintf(why, sizeof why, "rank %d cannot start a worker process: %s",
                                 x->rank, strerror(-rc));
                        rec = sweep__crash_record(x->spec, (size_t)idx, 1, why);
                } else {
                        bool done = false;
                        rec = NULL;
                        while (!done) {
                                struct pollfd pf = { .fd = sl.fd, .events = POLLIN };
                                int r = poll(&pf, 1, sweep__poll_ms(&sl, 1, -1));
                                sweep__check_deadlines(&sl, 1);
                                if (r > 0)
                                        rec = sweep__slot_read(x, &sl, &done);
                        }
                }
                json_object_set_new(rec, "point_id", json_integer(idx));
                text = json_dumps(rec, JSON_COMPACT | JSON_PRESERVE_ORDER);
                json_decref(rec);
        }
        free(sl.buf);
}

/* Rank 0: a message from another rank: collect its record, give it more work. */
static void serve(struct sweep__ctx *x, const MPI_Status *st, const size_t *todo, size_t n_todo,
                  size_t *next, int *active)
{
        int len = 0;
        MPI_Get_count(st, MPI_CHAR, &len);
        char *buf = malloc((size_t)len + 1);
        if (!buf) {
                diag_error(x->d, "out of memory receiving a result from rank %d", st->MPI_SOURCE);
                abort();  /* the protocol cannot continue; mpirun stops every rank */
        }
        MPI_Recv(buf, len, MPI_CHAR, st->MPI_SOURCE, TAG_RESULT, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
        if (len > 0) {
                json_t *rec = json_loadb(buf, (size_t)len, 0, NULL);
                json_t *id = rec ? json_object_get(rec, "point_id") : NULL;
                if (json_is_integer(id) && json_integer_value(id) >= 0 &&
                    (size_t)json_integer_value(id) < x->spec->n_points) {
                        size_t i = (size_t)json_integer_value(id);
                        json_object_del(rec, "point_id");
                        sweep__collect(x, i, rec);
                } else {
                        json_decref(rec);
                        diag_error(x->d, "rank %d sent a malformed result", st->MPI_SOURCE);
                }
        }
        free(buf);
        long long idx = -1;
        if (*next < n_todo)
                idx = (long long)todo[(*next)++];
        else
                (*active)--;
        MPI_Send(&idx, 1, MPI_LONG_LONG, st->MPI_SOURCE, TAG_WORK, MPI_COMM_WORLD);
}

int sweep__mpi_run(struct sweep__ctx *x, const size_t *todo, size_t n_todo)
{
        if (x->rank != 0) {
                run_remote(x);
                return 0;
        }
        unsigned jobs = x->opts->jobs ? x->opts->jobs : 1;
        struct sweep__slot *slots = calloc(jobs, sizeof *slots);
        struct pollfd *pfd = calloc(jobs, sizeof *pfd);
        size_t *which = calloc(jobs, sizeof *which);
        if (!slots || !pfd || !which) {
                diag_error(x->d, "out of memory for %u workers", jobs);
                n_todo = 0;     /* still tell every rank to stop */
        }
        size_t next = 0;
        int active = x->ranks - 1;   /* ranks not yet told to stop */
        size_t running = 0;
        while (active > 0 || running || (next < n_todo && slots)) {
                running += sweep__start_idle(x, slots, jobs, todo, n_todo, &next);
                /* Other ranks first: they wait on us. */
                for (;;) {
                        int flag = 0;
                        MPI_Status st;
                        MPI_Iprobe(MPI_ANY_SOURCE, TAG_RESULT, MPI_COMM_WORLD, &flag, &st);
                        if (!flag)
                                break;
                        serve(x, &st, todo, n_todo, &next, &active);
                }
                nfds_t nf = sweep__poll_set(slots, jobs, pfd, which);
                int r = poll(pfd, nf, 2);       /* also the idle wait between probes */
                if (slots)
                        sweep__check_deadlines(slots, jobs);
                if (r > 0)
                        running -= sweep__read_ready(x, slots, pfd, which, nf);
                sweep__progress(x, false);
        }
        for (unsigned j = 0; slots && j < jobs; j++)
                free(slots[j].buf);
        free(slots);
        free(pfd);
        free(which);
        return 0;
}

#endif
