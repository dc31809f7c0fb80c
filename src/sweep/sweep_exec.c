/* sweep/sweep_exec.c: running a sweep: the base machine, the points left
 * to run (--resume keeps those already in DIR/points), worker processes
 * (one forked child per point, at most `jobs` at once, each sending its
 * record back through a pipe), collection (per-point files written
 * atomically as results arrive, in any order), progress on a terminal,
 * then the merged sweep.json, the figures and the report.
 *
 * A child runs the point in a fresh copy of the parent's address space,
 * so a kernel that crashes, leaks or corrupts memory costs only its point;
 * it leaves with _exit (no atexit handlers, no stdio buffers of the parent
 * flushed twice, nothing of MPI's touched), after a leak check in
 * sanitizer builds. Its stdout goes to stderr so that a kernel's prints
 * cannot corrupt a JSON document the parent prints. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/fsutil.h"
#include "base/jsonw.h"
#include "base/util.h"
#include "sweep/sweep_int.h"

#ifdef CUBESIM_SANITIZED
#include <sanitizer/lsan_interface.h>
#endif

/* ---- files ---- */

int sweep__write_json(const char *path, json_t *v)
{
        return jsonw_save(path, v, 2);
}

/* ---- identity of a point, for --resume ---- */

static uint64_t fnv(uint64_t h, const void *data, size_t len)
{
        const unsigned char *p = data;
        for (size_t i = 0; i < len; i++) {
                h ^= p[i];
                h *= UINT64_C(0x100000001b3);
        }
        return h;
}

static uint64_t fnv_str(uint64_t h, const char *s)
{
        return fnv(h, s, strlen(s) + 1);        /* the NUL separates fields */
}

/* Everything a point's result depends on: this cubesim binary (so a
 * rebuilt kernel or model reruns the point), the machine text, the panel,
 * the kernel and every parameter in application order. */
static void point_key(const struct sweep__ctx *x, size_t i, char out[17])
{
        const struct sweep_spec *s = x->spec;
        const struct sweep_point *pt = &s->points[i];
        const struct sweep_panel *pn = &s->panels[pt->panel];
        uint64_t h = UINT64_C(0xcbf29ce484222325);
        h = fnv_str(h, CUBESIM_VERSION);
        h = fnv(h, &x->build_hash, sizeof x->build_hash);
        h = fnv(h, &x->topo_hash, sizeof x->topo_hash);
        h = fnv_str(h, pn->name);
        h = fnv_str(h, pn->kernel);
        for (size_t j = 0; j < pn->n_params + pt->n_coords; j++) {
                const struct sweep_kv *kv = j < pn->n_params ? &pn->params[j]
                                                             : &pt->coords[j - pn->n_params];
                h = fnv_str(fnv_str(h, kv->key), kv->value);
        }
        /* A machine of its own: its file's text and its variant's sets. */
        char buf[4096];
        const char *topo = sweep_point_topo(s, i, buf, sizeof buf);
        if (topo != s->topo_path && (!topo || !s->topo_path || strcmp(topo, s->topo_path) != 0)) {
                size_t len = 0;
                char *text = NULL;
                if (topo && fs_read_capped(topo, TOPO_MAX_FILE_BYTES, &text, &len, NULL) == 0)
                        h = fnv(h, text, len);
                else if (!topo)
                        h = fnv_str(h, topo_default_yaml(&len));
                free(text);
        }
        const struct sweep_machine *m = sweep_point_variant(s, i);
        for (size_t j = 0; m && j < m->n_sets; j++)
                h = fnv_str(fnv_str(h, m->sets[j].key), m->sets[j].value);
        snprintf(out, 17, "%016" PRIx64, h);
}

static void point_path(const struct sweep__ctx *x, size_t i, char *buf, size_t len)
{
        snprintf(buf, len, "%s/%04zu.json", x->points_dir, i);
}

#define POINT_FILE_MAX (1u << 20)   /* a point file's cap, bytes: a record is a few KiB */

/* A good record kept from an earlier run of the same point, or NULL (the
 * point runs again). The file is read like any input (a regular file, at
 * most POINT_FILE_MAX bytes, its figures in range); one that is there but
 * unusable is named with what is wrong with it. */
static json_t *load_done(const struct sweep__ctx *x, size_t i)
{
        char path[4200], key[17], why[256] = "", at[32] = "";
        char *text = NULL;
        size_t len = 0;
        point_path(x, i, path, sizeof path);
        struct diag rd;
        diag_init(&rd);
        int rrc = fs_read_capped(path, POINT_FILE_MAX, &text, &len, &rd);
        if (rrc < 0 && rrc != -ENOENT && rd.head) {
                const char *e = strstr(rd.head->text, "error: ");
                snprintf(why, sizeof why, "%s", e ? e + 7 : rd.head->text);
        }
        diag_fini(&rd);
        if (text && len > POINT_FILE_MAX) {
                snprintf(why, sizeof why, "larger than a point file is (at most %u bytes)",
                         POINT_FILE_MAX);
                free(text);
                text = NULL;
        }
        json_error_t je;
        json_t *f = text ? json_loadb(text, len, 0, &je) : NULL;
        bool unparsed = text && !f;
        free(text);
        if (unparsed) {
                snprintf(at, sizeof at, ":%d:%d", je.line, je.column);
                snprintf(why, sizeof why, "not a point file: %s", je.text);
        }
        json_t *out = NULL;
        point_key(x, i, key);
        json_t *k = json_object_get(f, "key"), *p = json_object_get(f, "point");
        const char *st = json_string_value(json_object_get(p, "status"));
        if (f && json_is_string(k) && strcmp(json_string_value(k), key) == 0 && st &&
            strcmp(st, "ok") == 0) {
                if (sweep__record_valid(p, why, sizeof why))
                        out = json_incref(p);
        }
        json_decref(f);
        if (*why)
                fprintf(stderr, "%s%s: warning: %s; the point runs again\n", path, at, why);
        return out;
}

/* ---- progress ---- */

static void fmt_dur(double s, char *buf, size_t len)
{
        long t = (long)(s + 0.5);
        if (t >= 3600)
                snprintf(buf, len, "%ld:%02ld:%02ld", t / 3600, t / 60 % 60, t % 60);
        else
                snprintf(buf, len, "%ld:%02ld", t / 60, t % 60);
}

void sweep__progress(struct sweep__ctx *x, bool force)
{
        if (!x->root)
                return;
        if (x->opts->on_progress && (force || x->n_done_now != x->n_told)) {
                x->n_told = x->n_done_now;
                x->opts->on_progress(x->opts->progress_ctx, x->n_done_now, x->n_todo,
                                     x->n_failed);
        }
        if (!x->progress)
                return;
        double now = util_now_s();
        /* A terminal gets one line redrawn in place; a file or a pipe plain
         * lines (no carriage return, no escape sequence), fewer of them. */
        if (!force && now - x->last_draw < (x->progress_tty ? 0.2 : 1.0))
                return;
        x->last_draw = now;
        double el = now - x->t0;
        char e[32], eta[32] = "--:--";
        fmt_dur(el, e, sizeof e);
        if (x->n_done_now)
                fmt_dur(el / (double)x->n_done_now * (double)(x->n_todo - x->n_done_now), eta,
                        sizeof eta);
        fprintf(stderr, "%ssweep %s: %zu/%zu points", x->progress_tty ? "\r\033[K" : "",
                x->spec->name, x->n_done_now, x->n_todo);
        if (x->n_failed)
                fprintf(stderr, " (%zu failed)", x->n_failed);
        fprintf(stderr, ", %s elapsed, ETA %s%s", e, eta, x->progress_tty ? "" : "\n");
        fflush(stderr);
}

static void progress_clear(struct sweep__ctx *x)
{
        if (x->progress && x->progress_tty && x->root && x->last_draw > 0)
                fputs("\r\033[K", stderr);
}

/* ---- workers ---- */

int sweep__spawn(struct sweep__ctx *x, struct sweep__slot *sl, size_t i)
{
        int fds[2];
        if (pipe2(fds, O_CLOEXEC) < 0)
                return -errno;
        fflush(stdout);
        fflush(stderr);
        if (x->opts->out)
                fflush(x->opts->out);
        pid_t parent = getpid();
        pid_t pid = fork();
        if (pid < 0) {
                int e = errno;
                close(fds[0]);
                close(fds[1]);
                return -e;
        }
        if (pid == 0) {
                /* A worker dies with its sweep, even one killed by SIGKILL
                 * (and one that lost it before the call returned). */
                if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != parent)
                        _exit(125);
                close(fds[0]);
                dup2(STDERR_FILENO, STDOUT_FILENO);
                json_t *rec = NULL;
                int st = sweep__run_point(x->spec, &x->topo, i, &rec);
                char *text = rec ? json_dumps(rec, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
                const char *p = text;
                size_t left = text ? strlen(text) : 0;
                while (left) {
                        ssize_t n = write(fds[1], p, left);
                        if (n < 0 && errno == EINTR)
                                continue;
                        if (n <= 0)
                                _exit(125);
                        p += n;
                        left -= (size_t)n;
                }
                free(text);
                json_decref(rec);
                close(fds[1]);
#ifdef CUBESIM_SANITIZED
                __lsan_do_leak_check();
#endif
                _exit(text ? st : 125);
        }
        close(fds[1]);
        sl->pid = pid;
        sl->fd = fds[0];
        sl->point = i;
        sl->len = 0;
        sl->timed_out = false;
        sl->deadline = x->opts->timeout_s > 0 ? util_now_s() + x->opts->timeout_s : 0;
        return 0;
}

int sweep__poll_ms(const struct sweep__slot *slots, size_t n, int idle_ms)
{
        double now = util_now_s(), ms = idle_ms < 0 ? -1 : idle_ms;
        for (size_t j = 0; j < n; j++) {
                if (!slots[j].pid || slots[j].deadline <= 0 || slots[j].timed_out)
                        continue;
                double left = (slots[j].deadline - now) * 1e3;
                left = left < 0 ? 0 : ceil(left);
                if (ms < 0 || left < ms)
                        ms = left;
        }
        return ms < 0 ? -1 : ms > INT_MAX ? INT_MAX : (int)ms;
}

void sweep__check_deadlines(struct sweep__slot *slots, size_t n)
{
        double now = util_now_s();
        for (size_t j = 0; j < n; j++) {
                struct sweep__slot *sl = &slots[j];
                if (sl->pid && sl->deadline > 0 && !sl->timed_out && now >= sl->deadline) {
                        kill(sl->pid, SIGKILL);
                        sl->timed_out = true;
                }
        }
}

size_t sweep__start_idle(struct sweep__ctx *x, struct sweep__slot *slots, size_t n_slots,
                         const size_t *todo, size_t n_todo, size_t *next)
{
        size_t started = 0;
        for (size_t j = 0; slots && j < n_slots && *next < n_todo; j++) {
                if (slots[j].pid)
                        continue;
                size_t i = todo[(*next)++];
                int rc = sweep__spawn(x, &slots[j], i);
                if (rc < 0) {
                        char why[256];
                        snprintf(why, sizeof why, "cannot start a worker process: %s",
                                 strerror(-rc));
                        sweep__collect(x, i, sweep__crash_record(x->spec, i, 1, why));
                        continue;
                }
                started++;
        }
        return started;
}

nfds_t sweep__poll_set(const struct sweep__slot *slots, size_t n, struct pollfd *pfd,
                       size_t *which)
{
        nfds_t nf = 0;
        for (size_t j = 0; slots && j < n; j++)
                if (slots[j].pid) {
                        pfd[nf] = (struct pollfd){ .fd = slots[j].fd, .events = POLLIN };
                        which[nf++] = j;
                }
        return nf;
}

size_t sweep__read_ready(struct sweep__ctx *x, struct sweep__slot *slots,
                         const struct pollfd *pfd, const size_t *which, nfds_t nf)
{
        size_t finished = 0;
        for (nfds_t f = 0; f < nf; f++) {
                if (!pfd[f].revents)
                        continue;
                struct sweep__slot *sl = &slots[which[f]];
                bool done;
                json_t *rec = sweep__slot_read(x, sl, &done);
                if (done) {
                        finished++;
                        sweep__collect(x, sl->point, rec);
                }
        }
        return finished;
}

json_t *sweep__slot_read(struct sweep__ctx *x, struct sweep__slot *sl, bool *done)
{
        *done = false;
        if (sl->cap - sl->len < 4096) {
                size_t cap = sl->cap ? 2 * sl->cap : 16384;
                char *nb = realloc(sl->buf, cap);
                if (!nb) {
                        kill(sl->pid, SIGKILL);  /* cannot hold its result: fail the point */
                        sl->len = 0;
                } else {
                        sl->buf = nb;
                        sl->cap = cap;
                }
        }
        ssize_t n = sl->cap > sl->len ? read(sl->fd, sl->buf + sl->len, sl->cap - sl->len) : 0;
        if (n < 0 && (errno == EINTR || errno == EAGAIN))
                return NULL;
        if (n > 0) {
                sl->len += (size_t)n;
                return NULL;
        }
        /* EOF (or a broken pipe): the child is done writing. */
        close(sl->fd);
        int status = 0;
        struct rusage ru;
        memset(&ru, 0, sizeof ru);
        while (wait4(sl->pid, &status, 0, &ru) < 0 && errno == EINTR)
                ;
        sl->pid = 0;
        *done = true;
        json_t *rec = NULL;
        if (sl->timed_out) {
                rec = sweep__timeout_record(x->spec, sl->point, x->opts->timeout_s);
                json_object_set_new(rec, "peak_rss_kib", json_integer((json_int_t)ru.ru_maxrss));
                return rec;
        }
        if (WIFEXITED(status) && WEXITSTATUS(status) <= 2 && sl->len)
                rec = json_loadb(sl->buf, sl->len, 0, NULL);
        if (rec && (!json_is_object(rec) ||
                    json_integer_value(json_object_get(rec, "exit_status")) !=
                            WEXITSTATUS(status))) {
                json_decref(rec);
                rec = NULL;
        }
        if (!rec) {
                char why[256];
                int code;
                if (WIFSIGNALED(status)) {
                        code = 128 + WTERMSIG(status);
                        snprintf(why, sizeof why, "the worker process died: signal %d (%s)",
                                 WTERMSIG(status), strsignal(WTERMSIG(status)));
                } else {
                        code = WEXITSTATUS(status);
                        snprintf(why, sizeof why, "the worker process exited with status %d "
                                 "and no result", code);
                }
                rec = sweep__crash_record(x->spec, sl->point, code, why);
        }
        json_object_set_new(rec, "peak_rss_kib", json_integer((json_int_t)ru.ru_maxrss));
        return rec;
}

/* ---- collection ---- */

static void describe_point(const struct sweep__ctx *x, size_t i, char *buf, size_t len)
{
        const struct sweep_spec *s = x->spec;
        const struct sweep_point *pt = &s->points[i];
        size_t at = (size_t)snprintf(buf, len, "point %zu of panel %s (",
                                     i - s->panels[pt->panel].first_point,
                                     s->panels[pt->panel].name);
        for (size_t c = 0; c < pt->n_coords && at < len; c++)
                at += (size_t)snprintf(buf + at, len - at, "%s%s=%s", c ? ", " : "",
                                       pt->coords[c].key, pt->coords[c].value);
        if (at < len)
                snprintf(buf + at, len - at, ")");
}

/* A test hook: with CUBESIM_TEST_HOLD_AFTER=N in the environment, the
 * sweep stops after its N-th point is written and waits for a signal,
 * so that a test can kill it mid-sweep whatever the machine's speed
 * (tests/sweep_run.sh, "Atomic writes"). No other use. */
static void test_hold(struct sweep__ctx *x)
{
        const char *s = getenv("CUBESIM_TEST_HOLD_AFTER");
        if (!s || !*s)
                return;
        char *end;
        unsigned long n = strtoul(s, &end, 10);
        if (*end || n == 0 || x->n_done_now != n)
                return;
        progress_clear(x);
        fprintf(stderr, "sweep %s: CUBESIM_TEST_HOLD_AFTER=%lu: holding until a signal\n",
                x->spec->name, n);
        for (;;)
                pause();
}

void sweep__collect(struct sweep__ctx *x, size_t i, json_t *rec)
{
        const char *status = json_string_value(json_object_get(rec, "status"));
        if (!status || strcmp(status, "ok") != 0) {
                x->n_failed++;
                char what[512];
                describe_point(x, i, what, sizeof what);
                const char *e = json_string_value(json_object_get(rec, "error"));
                progress_clear(x);
                fprintf(stderr, "sweep %s: %s %s (exit status %" JSON_INTEGER_FORMAT "):\n",
                        x->spec->name, what, status ? status : "failed",
                        json_integer_value(json_object_get(rec, "exit_status")));
                for (const char *l = e ? e : "(no message)"; *l;) {
                        size_t len = strcspn(l, "\n");
                        fprintf(stderr, "    %.*s\n", (int)len, l);
                        l += len + (l[len] == '\n');
                }
        }
        x->events_now += (uint64_t)json_integer_value(json_object_get(rec, "events"));
        x->bookings_now += (uint64_t)json_integer_value(json_object_get(rec, "bookings"));
        char path[4200], key[17];
        point_path(x, i, path, sizeof path);
        point_key(x, i, key);
        json_t *file = json_object();
        json_object_set_new(file, "key", jsonw_string(key));
        json_object_set(file, "point", rec);
        int rc = sweep__write_json(path, file);
        json_decref(file);
        if (rc < 0) {
                progress_clear(x);
                fprintf(stderr, "cubesim sweep: warning: sweep %s: cannot write %s: %s (--resume "
                        "will run the point again)\n", x->spec->name, path, strerror(-rc));
                x->n_unwritten++;
        }
        json_decref(x->recs[i]);
        x->recs[i] = rec;
        x->n_done_now++;
        sweep__progress(x, x->n_done_now == x->n_todo);
        test_hold(x);
}

/* Run todo[0..n) in up to jobs children at once. */
static void run_local(struct sweep__ctx *x, const size_t *todo, size_t n)
{
        unsigned jobs = x->opts->jobs ? x->opts->jobs : 1;
        if (jobs > n)
                jobs = (unsigned)n;
        if (jobs == 0)
                return;
        struct sweep__slot *slots = calloc(jobs, sizeof *slots);
        struct pollfd *pfd = calloc(jobs, sizeof *pfd);
        size_t *which = calloc(jobs, sizeof *which);
        if (!slots || !pfd || !which) {
                diag_error(x->d, "out of memory for %u workers", jobs);
                goto out;
        }
        size_t next = 0, running = 0;
        while (next < n || running) {
                running += sweep__start_idle(x, slots, jobs, todo, n, &next);
                nfds_t nf = sweep__poll_set(slots, jobs, pfd, which);
                if (nf == 0)
                        continue;
                int r = poll(pfd, nf, sweep__poll_ms(slots, jobs, x->progress ? 250 : -1));
                if (r < 0 && errno != EINTR) {
                        diag_error(x->d, "poll: %s", strerror(errno));
                        break;
                }
                sweep__check_deadlines(slots, jobs);
                if (r > 0)
                        running -= sweep__read_ready(x, slots, pfd, which, nf);
                sweep__progress(x, false);
        }
out:
        for (unsigned j = 0; slots && j < jobs; j++)
                free(slots[j].buf);
        free(slots);
        free(pfd);
        free(which);
}

/* ---- the whole sweep ---- */

/* Take DIR/.lock (flock, released when this process ends, however): a
 * second sweep into the same directory would mix its files with ours. */
static int lock_dir(struct sweep__ctx *x)
{
        char path[4200];
        snprintf(path, sizeof path, "%s/.lock", x->opts->out_dir);
        int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
        if (fd < 0) {
                diag_error_at(x->d, path, 0, 0, "cannot open the output directory's lock: %s",
                              strerror(errno));
                return -errno;
        }
        if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
                int e = errno;
                char pid[32] = "";
                ssize_t n = e == EWOULDBLOCK ? pread(fd, pid, sizeof pid - 1, 0) : -1;
                pid[n > 0 ? n : 0] = '\0';
                pid[strcspn(pid, "\n")] = '\0';
                if (e == EWOULDBLOCK && *pid)
                        diag_error_at(x->d, x->opts->out_dir, 0, 0, "another sweep (process %s) "
                                      "is writing into this directory (it holds %s): wait for "
                                      "it, or give this one another --out", pid, path);
                else if (e == EWOULDBLOCK)
                        diag_error_at(x->d, x->opts->out_dir, 0, 0, "another sweep is writing "
                                      "into this directory (it holds %s): wait for it, or give "
                                      "this one another --out", path);
                else
                        diag_error_at(x->d, path, 0, 0, "cannot lock: %s", strerror(e));
                close(fd);
                return -e;
        }
        /* Our number, for the message of a sweep that finds the lock taken;
         * only that message misses it if this fails. */
        char pid[32];
        int len = snprintf(pid, sizeof pid, "%ld\n", (long)getpid());
        bool noted = ftruncate(fd, 0) == 0 && pwrite(fd, pid, (size_t)len, 0) == len;
        (void)noted;
        x->lock_fd = fd;
        return 0;
}

static int prepare_dir(struct sweep__ctx *x)
{
        const char *dir = x->opts->out_dir;
        int rc = fs_mkdir_p(dir);
        if (rc < 0) {
                diag_error_at(x->d, dir, 0, 0, "cannot make the output directory: %s",
                              strerror(-rc));
                return rc;
        }
        if ((rc = lock_dir(x)) < 0)
                return rc;
        snprintf(x->points_dir, sizeof x->points_dir, "%s/points", dir);
        rc = fs_mkdir_p(x->points_dir);
        if (rc < 0) {
                diag_error_at(x->d, x->points_dir, 0, 0, "cannot make the directory: %s",
                              strerror(-rc));
                return rc;
        }
        char path[4200];
        snprintf(path, sizeof path, "%s/spec.yaml", dir);
        rc = fs_write_atomic(path, x->spec->text, x->spec->text_len);
        if (rc < 0) {
                diag_error_at(x->d, path, 0, 0, "cannot write: %s", strerror(-rc));
                return rc;
        }
        return 0;
}

/* The points to run now; the others are resumed (or cleared). */
static size_t plan(struct sweep__ctx *x, size_t *todo)
{
        size_t n = 0;
        for (size_t i = 0; i < x->spec->n_points; i++) {
                json_t *rec = x->opts->resume ? load_done(x, i) : NULL;
                if (rec) {
                        x->recs[i] = rec;
                        x->resumed[i] = true;
                } else {
                        if (!x->opts->resume) {
                                char path[4200];
                                point_path(x, i, path, sizeof path);
                                unlink(path);
                        }
                        todo[n++] = i;
                }
        }
        return n;
}

static int load_machine(struct sweep__ctx *x)
{
        const struct sweep_spec *s = x->spec;
        size_t len;
        char *text;
        int rc;
        if (s->topo_path) {
                rc = fs_read_capped(s->topo_path, TOPO_MAX_FILE_BYTES, &text, &len, x->d) < 0
                             ? -EINVAL
                             : topo_load_text(s->topo_path, text, len, &x->topo, x->d);
                x->topo_hash = text ? fnv(UINT64_C(0xcbf29ce484222325), text, len) : 0;
                free(text);
        } else {
                const char *dt = topo_default_yaml(&len);
                rc = topo_load_default(&x->topo, x->d);
                x->topo_hash = fnv(UINT64_C(0xcbf29ce484222325), dt, len);
        }
        if (rc == 0)
                topo_totals(&x->topo, &x->totals);
        fs_read_capped("/proc/self/exe", 64u << 20, &text, &len, NULL);
        x->build_hash = text ? fnv(UINT64_C(0xcbf29ce484222325), text, len) : 0;
        free(text);
        return rc;
}

static void print_summary(const struct sweep__ctx *x, const struct sweep_outcome *o)
{
        const char *dir = x->opts->out_dir;
        FILE *f = x->opts->out;
        fprintf(f, "sweep %s: %zu points, %zu failed", x->spec->name, o->n_points, o->n_failed);
        if (o->n_resumed)
                fprintf(f, ", %zu resumed", o->n_resumed);
        fprintf(f, "; %.2f s wall", o->wall_s);
        if (o->ranks > 1)
                fprintf(f, " on %u MPI ranks", o->ranks);
        else
                fprintf(f, " with %u worker%s", x->opts->jobs, x->opts->jobs == 1 ? "" : "s");
        fprintf(f, ", %.3g simulated events/s (%.3g with the requests served at arrival)\n",
               o->events_per_s, o->work_per_s);
        fprintf(f, "  results: %s/sweep.json\n", dir);
        if (o->report)
                fprintf(f, "  report:  %s/report.md\n", dir);
        if (o->figures)
                fprintf(f, "  figures: %s/figures/ (PNG, SVG, their gnuplot scripts and data)\n",
                        dir);
}

int sweep_run(const struct sweep_spec *spec, const struct sweep_opts *opts,
              struct sweep_outcome *out, struct diag *d)
{
        struct sweep__ctx x = { .spec = spec, .opts = opts, .d = d, .root = true, .ranks = 1,
                                .lock_fd = -1 };
        struct sweep_outcome o = { .root = true, .n_points = spec->n_points, .ranks = 1 };
        x.t0 = util_now_s();
        int rc = 2;
        if (load_machine(&x) < 0)
                goto out;
        int mpi = sweep__mpi_start(&x);
        if (mpi < 0)
                goto out;
        x.root = x.rank == 0;
        o.root = x.root;
        o.ranks = (unsigned)x.ranks;
        x.progress_tty = isatty(STDERR_FILENO);
        x.progress = opts->progress < 0 ? x.progress_tty : opts->progress > 0;
        x.recs = calloc(spec->n_points ? spec->n_points : 1, sizeof *x.recs);
        x.resumed = calloc(spec->n_points ? spec->n_points : 1, sizeof *x.resumed);
        size_t *todo = calloc(spec->n_points ? spec->n_points : 1, sizeof *todo);
        bool ready = false;
        if (!x.recs || !x.resumed || !todo) {
                diag_error(d, "out of memory for %zu points", spec->n_points);
        } else if (x.root && prepare_dir(&x) == 0) {
                x.n_todo = plan(&x, todo);
                ready = true;
        }
        for (size_t i = 0; i < spec->n_points; i++)
                if (x.resumed[i])
                        o.n_resumed++;
        sweep__progress(&x, true);
        if (mpi)
                sweep__mpi_run(&x, todo, ready ? x.n_todo : 0);
        else if (ready)
                run_local(&x, todo, x.n_todo);
        progress_clear(&x);
        free(todo);
        o.wall_s = util_now_s() - x.t0;
        o.events = x.events_now;
        o.events_per_s = o.wall_s > 0 ? (double)x.events_now / o.wall_s : 0;
        o.bookings = x.bookings_now;
        o.work_per_s = o.wall_s > 0 ? (double)(x.events_now + x.bookings_now) / o.wall_s : 0;
        if (!x.root) {
                rc = 0;
        } else if (ready && d->n_errors == 0) {
                json_t *sw = sweep__merge(&x, o.wall_s);
                char path[4200];
                snprintf(path, sizeof path, "%s/sweep.json", opts->out_dir);
                int wrc = sweep__write_json(path, sw);
                if (wrc < 0) {
                        diag_error_at(d, path, 0, 0, "cannot write: %s", strerror(-wrc));
                } else {
                        o.figures = sweep__figures(&x, sw);
                        o.report = x.report_written;
                        for (size_t i = 0; i < spec->n_points; i++) {
                                const char *st = json_string_value(
                                        json_object_get(x.recs[i], "status"));
                                if (!st || strcmp(st, "ok") != 0)
                                        o.n_failed++;
                        }
                        rc = o.n_failed ? 1 : 0;
                        if (opts->out)
                                print_summary(&x, &o);
                        if (x.n_unwritten) {
                                diag_error_at(d, opts->out_dir, 0, 0, "%zu result file%s could "
                                              "not be written (see the warnings above; a full "
                                              "disk?): the results are incomplete",
                                              x.n_unwritten, x.n_unwritten == 1 ? "" : "s");
                                rc = 2;
                        }
                }
                json_decref(sw);
        }
        if (mpi)
                sweep__mpi_finish(&x);
out:
        if (x.lock_fd >= 0)
                close(x.lock_fd);
        for (size_t i = 0; x.recs && i < spec->n_points; i++)
                json_decref(x.recs[i]);
        free(x.recs);
        free(x.resumed);
        if (out)
                *out = o;
        return rc;
}

int sweep__env_int(const char *const *vars)
{
        for (const char *const *v = vars; *v; v++) {
                const char *s = getenv(*v);
                if (s && *s)
                        return atoi(s);
        }
        return 0;
}

int sweep_launch_rank(void)
{
        static const char *const vars[] = { "OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK",
                                            NULL };
        return sweep__env_int(vars);
}
