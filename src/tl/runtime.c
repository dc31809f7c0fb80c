/* tl/runtime.c: running a kernel on every PE: the per-PE contexts, the
 * host-side setup, the op_log and trace files, the kernel's end (it waits
 * for its outstanding ops), and the outcome. */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/util.h"
#include "engine/watchdog.h"
#include "tl/tl_int.h"

/* ---- progress ---- */

/* A run's progress line on stderr: simulated time, events and requests so
 * far, wall time. Drawn at most four times a second, from the loop's poll
 * (every TL_PROGRESS_EVERY events; CUBESIM_TEST_PROGRESS_EVERY=N draws
 * every N events, for tests). On a terminal the line is redrawn in place
 * and cleared when the run ends; otherwise (a file, a pipe) each draw is a
 * plain line of its own, with no carriage return or escape sequence, at
 * most one a second. */
#define TL_PROGRESS_EVERY (UINT64_C(1) << 16)

struct progress {
        const char *name;            /* the kernel's */
        const struct hw_sim *sim;    /* its machine, for its bookings */
        double t0;                   /* wall seconds at the start */
        double last;                 /* at the last draw (0: none yet) */
        bool every_poll;             /* draw at every poll (tests) */
        bool tty;                    /* stderr is a terminal: redraw one line in place */
};

/* n as it reads best on a line that changes: 51234, 1.2 M, 3.45 G. */
static void fmt_count(uint64_t n, char *buf, size_t len)
{
        if (n < 1000000)
                snprintf(buf, len, "%" PRIu64, n);
        else if (n < UINT64_C(1000000000))
                snprintf(buf, len, "%.1f M", (double)n / 1e6);
        else
                snprintf(buf, len, "%.2f G", (double)n / 1e9);
}

static void progress_draw(void *ctx, const struct ev_loop *ev)
{
        struct progress *p = ctx;
        double now = util_now_s();
        if (!p->every_poll && now - p->last < (p->tty ? 0.25 : 1.0))
                return;
        p->last = now;
        double ns = (double)ev->now / SIM_PS_PER_NS;
        char events[32], requests[32];
        fmt_count(ev->n_events, events, sizeof events);
        fmt_count(hw_sim_bookings(p->sim), requests, sizeof requests);
        fprintf(stderr, "%s%s: %.3f %s simulated, %s events, %s requests, %.1f s%s",
                p->tty ? "\r\033[K" : "", p->name, ns >= 1e6 ? ns / 1e6 : ns / 1e3,
                ns >= 1e6 ? "ms" : "us", events, requests, now - p->t0, p->tty ? "" : "\n");
        fflush(stderr);
        if (p->tty)
                ev_watchdog_line_open(true);
}

static void progress_start(struct progress *p, struct hw_sim *sim, const char *name)
{
        const char *test = getenv("CUBESIM_TEST_PROGRESS_EVERY");
        uint64_t every = test ? strtoull(test, NULL, 10) : 0;
        *p = (struct progress){ .name = name, .sim = sim, .t0 = util_now_s(),
                                .every_poll = every > 0, .tty = isatty(STDERR_FILENO) };
        ev_set_poll(&sim->ev, every ? every : TL_PROGRESS_EVERY, progress_draw, p);
}

static void progress_end(struct progress *p, struct hw_sim *sim)
{
        ev_set_poll(&sim->ev, 0, NULL, NULL);
        if (p->last > 0 && p->tty) {
                fputs("\r\033[K", stderr);
                fflush(stderr);
                ev_watchdog_line_open(false);
        }
}

static void pe_body(struct hw_pe *pe, void *arg)
{
        struct tl_run *r = arg;
        tl_ctx *tl = &r->ctx[pe->global];
        r->kernel->fn(tl, r->args);
        tl__kernel_end(tl);
        tl__join_threads(tl);
}

/* Where path would be created: its directory resolved and its name, a
 * dangling symbolic link followed; malloc'd, NULL if it cannot be told. */
static char *resolve_new(const char *path)
{
        char cur[PATH_MAX], link[PATH_MAX];
        if (snprintf(cur, sizeof cur, "%s", path) >= (int)sizeof cur)
                return NULL;
        for (int hops = 0; hops < 40; hops++) {
                ssize_t n = readlink(cur, link, sizeof link - 1);
                if (n < 0)
                        break;
                link[n] = '\0';
                char *slash = strrchr(cur, '/');
                if (link[0] == '/' || !slash) {
                        snprintf(cur, sizeof cur, "%s", link);
                } else {
                        slash[1] = '\0';
                        char dir[PATH_MAX];
                        snprintf(dir, sizeof dir, "%s", cur);
                        if (snprintf(cur, sizeof cur, "%s%s", dir, link) >= (int)sizeof cur)
                                return NULL;
                }
        }
        char *slash = strrchr(cur, '/');
        const char *name = slash ? slash + 1 : cur;
        char dir[PATH_MAX], real[PATH_MAX];
        snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - cur) + 1 : 1, slash ? cur : ".");
        if (!realpath(dir, real))
                return NULL;
        size_t len = strlen(real) + strlen(name) + 2;
        char *out = malloc(len);
        if (out)
                snprintf(out, len, "%s/%s", real, name);
        return out;
}

/* Whether two output paths name one file, however spelled ("-" is
 * standard output): the same device and inode where both exist, else the
 * same directory and name once created. /dev/null may take both. */
static bool same_output(const char *a, const char *b)
{
        struct stat sa, sb, null;
        bool ha = strcmp(a, "-") == 0 ? fstat(STDOUT_FILENO, &sa) == 0 : stat(a, &sa) == 0;
        bool hb = strcmp(b, "-") == 0 ? fstat(STDOUT_FILENO, &sb) == 0 : stat(b, &sb) == 0;
        if (ha || hb) {
                bool same = ha && hb && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
                return same && !(S_ISCHR(sa.st_mode) && stat("/dev/null", &null) == 0 &&
                                 null.st_rdev == sa.st_rdev);
        }
        char *ra = resolve_new(a), *rb = resolve_new(b);
        bool same = ra && rb ? strcmp(ra, rb) == 0 : strcmp(a, b) == 0;
        free(ra);
        free(rb);
        return same;
}

/* --trace-pes LIST: global PE indices and a-b ranges, comma-separated,
 * into sel (n entries). 0, or -EINVAL with the problem in d. */
static int parse_pe_list(const char *list, uint32_t n, uint8_t *sel, struct diag *d)
{
        const char *p = list;
        for (;;) {
                char *end;
                if (*p < '0' || *p > '9')
                        goto bad;
                unsigned long a = strtoul(p, &end, 10), b = a;
                p = end;
                if (*p == '-') {
                        if (p[1] < '0' || p[1] > '9')
                                goto bad;
                        b = strtoul(p + 1, &end, 10);
                        p = end;
                }
                if (a > b) {
                        diag_error(d, "--trace-pes %s: the range %lu-%lu is reversed (empty): "
                                   "write it low-high, e.g. %lu-%lu", list, a, b, b, a);
                        return -EINVAL;
                }
                if (b >= n) {
                        diag_error(d, "--trace-pes %s: PE %lu is not on this machine (PEs 0..%u)",
                                   list, b, n - 1);
                        return -EINVAL;
                }
                for (unsigned long i = a; i <= b; i++)
                        sel[i] = 1;
                if (*p == '\0')
                        return 0;
                if (*p++ != ',')
                        goto bad;
        }
bad:
        diag_error(d, "--trace-pes %s: expected global PE indices or ranges, e.g. 0,4-7", list);
        return -EINVAL;
}

/* Every check of the output options, before anything is written (the
 * inputs --save-inputs keeps included): a rejected run leaves the files
 * it names as they were. 0, or -EINVAL/-ENOMEM with the problem in d. */
static int check_outputs(struct tl_run *r, struct diag *d)
{
        const struct tl_run_opts *o = r->opts;
        if (o->oplog_path && o->trace_path && same_output(o->oplog_path, o->trace_path)) {
                diag_error(d, "--oplog %s and --trace %s name the same file: the trace would "
                           "overwrite the op_log; give each its own file", o->oplog_path,
                           o->trace_path);
                return -EINVAL;
        }
        if (o->trace_path && o->trace_pes) {
                r->trace_sel = calloc(r->sim->n_pes ? r->sim->n_pes : 1, 1);
                if (!r->trace_sel)
                        return -ENOMEM;
                if (parse_pe_list(o->trace_pes, r->sim->n_pes, r->trace_sel, d) < 0)
                        return -EINVAL;
        }
        return 0;
}

static int open_outputs(struct tl_run *r, struct diag *d)
{
        const struct tl_run_opts *o = r->opts;
        int rc;
        if (o->oplog_path) {
                if ((rc = rep_oplog_open(&r->oplog, o->oplog_path)) < 0) {
                        diag_error_at(d, o->oplog_path, 0, 0, "cannot write the op_log: %s",
                                      strerror(-rc));
                        return -EINVAL;
                }
                r->have_oplog = true;
        }
        if (o->trace_path) {
                if ((rc = rep_trace_open(&r->trace, o->trace_path, r->sim->n_pes)) < 0) {
                        diag_error_at(d, o->trace_path, 0, 0, "cannot write the trace: %s",
                                      strerror(-rc));
                        return -EINVAL;
                }
                r->have_trace = true;
                rep_trace_filter(&r->trace, r->trace_sel, o->trace_t0,
                                 o->trace_t1 ? o->trace_t1 : SIM_PS_MAX);
                if (rep_trace_hw_open(&r->trace_hw, &r->trace, r->sim) < 0)
                        return -ENOMEM;
        }
        return 0;
}

static void add_counts(struct rep_run_stats *st, const tl_ctx *c)
{
        for (int op = 0; op < TOPO_OP_COUNT; op++) {
                st->issue_ps[op] += c->issue_ps[op];
                st->n_ops[op] += c->n_ops[op];
        }
}

void tl__run_counts(const struct tl_run *r, struct rep_run_stats *st)
{
        memset(st, 0, sizeof *st);
        for (uint32_t i = 0; i < r->sim->n_pes; i++) {
                add_counts(st, &r->ctx[i]);
                for (const struct tl_thread *th = r->ctx[i].threads; th; th = th->next)
                        add_counts(st, &th->ctx);
        }
        st->work = r->work;
}

/* Close the outputs; keep false (the run never started) leaves the files
 * they would replace as they were. */
static int close_outputs(struct tl_run *r, bool keep, struct diag *d)
{
        int rc = 0, e;
        r->oplog.discard = r->trace.discard = !keep;
        if (r->have_oplog && (e = rep_oplog_close(&r->oplog)) < 0 && keep) {
                diag_error_at(d, r->opts->oplog_path, 0, 0, "writing the op_log failed: %s",
                              strerror(-e));
                rc = -EIO;
        }
        if (r->have_trace && keep) {
                /* The power counters need the run's energy (its counts). */
                struct rep_run_stats st;
                tl__run_counts(r, &st);
                rep_trace_hw_power(&r->trace_hw, &st);
        }
        if (r->have_trace && keep && r->cp && rep_cp_kernel_ps(r->cp))
                rep_cp_trace(r->cp, &r->trace, r->sim->n_pes + r->sim->n_cubes);
        if (r->have_trace)
                rep_trace_hw_close(&r->trace_hw);
        if (r->have_trace && r->trace.n_dropped && keep)
                diag_report(d, DIAG_WARNING, r->opts->trace_path, 0, 0,
                            "%llu slices left out: more than %d overlapped on one track",
                            (unsigned long long)r->trace.n_dropped, REP_TRACE_LANES);
        if (r->have_trace && (e = rep_trace_close(&r->trace)) < 0 && keep) {
                diag_error_at(d, r->opts->trace_path, 0, 0, "writing the trace failed: %s",
                              strerror(-e));
                rc = -EIO;
        }
        r->have_oplog = r->have_trace = false;
        return rc;
}

int tl_run_kernel(struct hw_sim *sim, const struct tl_kernel *k, const struct tl_run_opts *opts,
                  struct tl_run *r, struct diag *d)
{
        memset(r, 0, sizeof *r);
        r->sim = sim;
        r->kernel = k;
        r->opts = opts;
        r->diag = d;
        ev_future_init(&r->never, "nothing (stopped by a kernel error)");
        int rc = check_outputs(r, d);
        if (rc < 0 || (rc = tl_setup_run(r, d)) < 0)
                return rc;
        r->ctx = calloc(sim->n_pes, sizeof *r->ctx);
        if (!r->ctx) {
                diag_error(d, "out of memory for %u kernel contexts", sim->n_pes);
                return -ENOMEM;
        }
        /* Whole before the launch: a message may name a PE whose kernel
         * has not started (or never will, when its stack cannot be had). */
        for (uint32_t i = 0; i < sim->n_pes; i++) {
                tl_ctx *tl = &r->ctx[i];
                tl->pe = &sim->pes[i];
                tl->sim = sim;
                tl->proc = &sim->pes[i].proc;
                tl->run = r;
                tl->rank = i;
                tl->recv_src = -1;
                tl->first = tl;
        }
        if ((rc = open_outputs(r, d)) < 0) {
                close_outputs(r, false, d);
                return rc;
        }
        if (opts->critical_path) {
                r->cp = rep_cp_new(sim->n_pes);
                if (!r->cp) {
                        diag_error(d, "out of memory for the critical path's log");
                        close_outputs(r, false, d);
                        return -ENOMEM;
                }
                sim->dep_on = true;
        }
        if (hw_launch(sim, pe_body, r) < 0) {
                diag_error(d, "out of memory launching the kernel");
                close_outputs(r, false, d);
                return -ENOMEM;
        }
        sim->ev.max_events = r->opts->max_events;
        sim->ev.max_time = r->opts->max_time_ps;
        struct progress progress;
        if (r->opts->progress)
                progress_start(&progress, sim, r->kernel->name);
        struct tl_run *outer = tl__enter_run(r);
        r->result = ev_run(&sim->ev, d);
        tl__enter_run(outer);
        if (r->opts->progress)
                progress_end(&progress, sim);
        int out = 0;
        if (sim->no_stack) {
                diag_error(d, "%s: the kernel could not start: no stack could be mapped for its "
                           "process (%s; this host allows %" PRIu64 " memory mappings a process, "
                           "vm.max_map_count); the run stopped", sim->no_stack->name,
                           strerror(sim->no_stack_errno), hw_host_max_mappings());
                out = -1;
        } else if (r->result == EV_NOMEM) {
                out = -ENOMEM;
        } else if (r->failed || r->result != EV_DONE) {
                out = -1;
        } else {
                for (uint32_t i = 0; i < sim->n_pes; i++) {
                        if (!sim->pes[i].finished) {
                                diag_error(d, "%s: the kernel never finished", sim->pes[i].name);
                                out = -1;
                                break;
                        }
                }
                if (out == 0)
                        out = tl__inbox_check_empty(r, d);
        }
        if (out == 0 && r->cp && rep_cp_analyse(r->cp, sim) < 0) {
                diag_error(d, "host out of memory for the run's critical path");
                out = -1;
        }
        if (close_outputs(r, true, d) < 0 && out == 0)
                out = -1;
        if (r->profile.oom && out == 0) {
                diag_error(d, "host out of memory for the run's profile");
                out = -1;
        }
        tl__copies_gather(r);
        if (out == 0 && tl_write_outputs(r, d) < 0)
                out = -1;
        if (out == 0 && tl__check_data(r, d) < 0)
                out = -1;
        return out;
}

void tl_run_fini(struct tl_run *r)
{
        if (r->ctx)
                for (uint32_t i = 0; i < r->sim->n_pes; i++) {
                        tl__threads_fini(&r->ctx[i]);
                        tl__ctx_fini(&r->ctx[i]);
                }
        free(r->ctx);
        tl__copies_free(r);
        for (int i = 0; i < r->n_globals; i++)
                free(r->globals[i].data);
        /* Every message ever made, wherever it is now (free list, inbox,
         * or in flight after a failed run). */
        struct tl_msg *m = r->all_msgs;
        while (m) {
                struct tl_msg *next = m->all_next;
                tl__msg_drop_payload(m);
                free(m);
                m = next;
        }
        tl__inbox_fini(&r->inbox);
        tl__sems_fini(r);
        free(r->args);
        free(r->trace_sel);
        rep_cp_free(r->cp);
        r->cp = NULL;
        rep_profile_fini(&r->profile);
        memset(r, 0, sizeof *r);
}
