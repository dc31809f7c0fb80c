/* tests/unit/test_allocfail.c: every init error path frees what it took.
 *
 * This binary is linked with --wrap for malloc, calloc, realloc, free,
 * mmap and munmap (CMakeLists.txt), so every such call made by cubesim's
 * own code comes through here. For each operation below, the Nth
 * allocation (malloc, calloc, realloc or mmap) is made to fail, for N = 1,
 * 2, ... until the operation makes fewer than N allocations and succeeds.
 * Each failure must come back as an error with a message (never a crash,
 * an assert or a silent success), and once the operation's objects are
 * finished, the allocations still live must be exactly those live before
 * it: the wrappers track every block and mapping by address. (Blocks that
 * libc or a library allocated for us and our code frees, such as
 * json_dumps's strings, are not in the table and are let through.)
 *
 * Each case first runs its operation once without a failure: one-time
 * allocations (the signal stack of the coroutine fault handler, static
 * tables) happen there and count as the baseline. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/diag.h"
#include "base/npy.h"
#include "base/params.h"
#include "hw/hw.h"
#include "tl/tl_int.h"
#include "topo/topo.h"

/* The functions wrapped at link time (-Wl,--wrap=NAME): type, name and
 * parameters; each has a __real_NAME (the libc one) and a __wrap_NAME
 * (below). */
#define WRAPPED(X)                                                              \
        X(void *, malloc, (size_t))                                             \
        X(void *, calloc, (size_t, size_t))                                     \
        X(void *, realloc, (void *, size_t))                                    \
        X(void, free, (void *))                                                 \
        X(void *, mmap, (void *, size_t, int, int, int, off_t))                 \
        X(int, munmap, (void *, size_t))
#define DECLARE_WRAPPED(type, name, params) type __real_##name params; type __wrap_##name params;
WRAPPED(DECLARE_WRAPPED)

/* ---- the live-allocation table: open addressing on the address ---- */

#define LIVE_SLOTS (1u << 16)        /* far more than any case has live at once */
#define TOMBSTONE ((uintptr_t)1)     /* a freed slot inside a probe chain */

static uintptr_t live[LIVE_SLOTS];   /* addresses of live blocks and mappings; 0 = empty */
static size_t n_live;                /* entries in live */
static unsigned long n_allocs;       /* allocation calls since the case's trial began */
static unsigned long fail_at;        /* fail the allocation with this number (1-based); 0: none */
static unsigned long n_failed;       /* allocations failed on purpose in this trial */

static size_t slot_of(uintptr_t p)
{
        return (size_t)((p >> 4) * 0x9E3779B97F4A7C15ull >> 44) & (LIVE_SLOTS - 1);
}

static void live_add(const void *ptr)
{
        uintptr_t p = (uintptr_t)ptr;
        size_t i = slot_of(p);
        while (live[i] != 0 && live[i] != TOMBSTONE)
                i = (i + 1) & (LIVE_SLOTS - 1);
        live[i] = p;
        if (++n_live > LIVE_SLOTS / 2)
                abort();             /* the table would degrade: raise LIVE_SLOTS */
}

/* Remove ptr if it is ours; false if it is not in the table. */
static bool live_remove(const void *ptr)
{
        uintptr_t p = (uintptr_t)ptr;
        for (size_t i = slot_of(p); live[i] != 0; i = (i + 1) & (LIVE_SLOTS - 1)) {
                if (live[i] == p) {
                        live[i] = TOMBSTONE;
                        n_live--;
                        return true;
                }
        }
        return false;
}

/* Whether this allocation is the one to fail. */
static bool fail_now(void)
{
        if (++n_allocs == fail_at) {
                n_failed++;
                return true;
        }
        return false;
}

void *__wrap_malloc(size_t n)
{
        if (fail_now())
                return NULL;
        void *p = __real_malloc(n);
        if (p)
                live_add(p);
        return p;
}

void *__wrap_calloc(size_t a, size_t b)
{
        if (fail_now())
                return NULL;
        void *p = __real_calloc(a, b);
        if (p)
                live_add(p);
        return p;
}

void *__wrap_realloc(void *old, size_t n)
{
        if (fail_now())
                return NULL;         /* old stays valid, as realloc promises */
        bool ours = old && live_remove(old);
        void *p = __real_realloc(old, n);
        if (p)
                live_add(p);
        else if (ours)
                live_add(old);
        return p;
}

void __wrap_free(void *p)
{
        if (p)
                live_remove(p);
        __real_free(p);
}

void *__wrap_mmap(void *a, size_t n, int prot, int fl, int fd, off_t off)
{
        if (fail_now()) {
                errno = ENOMEM;
                return MAP_FAILED;
        }
        void *p = __real_mmap(a, n, prot, fl, fd, off);
        if (p != MAP_FAILED)
                live_add(p);
        return p;
}

int __wrap_munmap(void *p, size_t n)
{
        live_remove(p);              /* cubesim unmaps whole mappings only */
        return __real_munmap(p, n);
}

/* ---- the driver ---- */

/* An operation: make its objects, finish them, and return what making
 * them returned (0 or a negative errno), with problems in d. It must not
 * use cr_assert: it runs in a child process. */
typedef int (*op_fn)(struct diag *d);

/* Known crashes on a failed allocation, reported to the code's owner and
 * not yet fixed: the assertion message the crash prints. A trial that
 * crashes with one of them is logged (--verbose) and passes; every other
 * crash fails the test, and so does a known crash that no longer happens
 * (remove it from the list then). (Not cr_log_warn: a warning makes
 * Criterion exit 1.) */
static const char *const known_crashes[] = {
        NULL,                        /* none at present */
};
static bool known_seen[sizeof known_crashes / sizeof known_crashes[0]];

/* How a trial ended (the child's exit status). */
enum outcome {
        OUT_ERROR = 0,               /* failed with a message, nothing leaked: right */
        OUT_LEAK = 10,               /* allocations left live */
        OUT_SILENT = 11,             /* succeeded although an allocation failed */
        OUT_NO_MESSAGE = 12,         /* failed without a message */
        OUT_NOT_REACHED = 13,        /* made fewer than N allocations, and succeeded */
        OUT_FAILED_ANYWAY = 14,      /* made fewer than N allocations, yet failed */
};

/* One trial in a child process, so that a crash is reported with its
 * allocation number instead of ending the test; its stderr comes back in
 * err. Returns the outcome, or -SIGNAL. */
static int trial(op_fn op, unsigned long n, size_t baseline, char *err, size_t err_len)
{
        int pipefd[2];
        cr_assert_eq(pipe(pipefd), 0);
        fflush(NULL);
        pid_t pid = fork();
        cr_assert_geq(pid, 0);
        if (pid == 0) {
                close(pipefd[0]);
                dup2(pipefd[1], STDERR_FILENO);
                struct diag d;
                diag_init(&d);
                n_allocs = 0;
                n_failed = 0;
                fail_at = n;
                int rc = op(&d);
                fail_at = 0;
                unsigned errors = d.n_errors;
                diag_fini(&d);
                if (n_live != baseline) {
                        fprintf(stderr, "%zd allocations leak\n", (ssize_t)(n_live - baseline));
                        _exit(OUT_LEAK);
                }
                if (!n_failed)
                        _exit(rc == 0 ? OUT_NOT_REACHED : OUT_FAILED_ANYWAY);
                if (rc == 0)
                        _exit(OUT_SILENT);
                _exit(errors ? OUT_ERROR : OUT_NO_MESSAGE);
        }
        close(pipefd[1]);
        size_t got = 0;
        ssize_t r;
        while ((r = read(pipefd[0], err + got, err_len - 1 - got)) > 0)
                got += (size_t)r;
        err[got] = '\0';
        close(pipefd[0]);
        int status;
        cr_assert_eq(waitpid(pid, &status, 0), pid);
        if (WIFSIGNALED(status))
                return -WTERMSIG(status);
        return WEXITSTATUS(status);
}

/* Run op with the Nth allocation failing for N = 1, 2, ... Returns how
 * many allocations a whole successful run makes. */
static unsigned long fail_each(const char *what, op_fn op)
{
        struct diag d;

        diag_init(&d);
        n_allocs = 0;
        fail_at = 0;
        int rc = op(&d);
        cr_assert_eq(rc, 0, "%s: fails without an injected failure (%d)", what, rc);
        diag_fini(&d);
        size_t baseline = n_live;
        unsigned long total = n_allocs;
        cr_assert_gt(total, 0, "%s: allocates nothing", what);

        static char err[4096];
        for (unsigned long n = 1;; n++) {
                int out = trial(op, n, baseline, err, sizeof err);
                if (out == OUT_NOT_REACHED)
                        return n - 1;
                if (out < 0) {
                        size_t k = 0;
                        while (known_crashes[k] && !strstr(err, known_crashes[k]))
                                k++;
                        cr_assert_not_null(known_crashes[k], "%s: allocation %lu of %lu failing: "
                                           "signal %d\n%s", what, n, total, -out, err);
                        known_seen[k] = true;
                        cr_log_info("%s: allocation %lu of %lu failing: known crash: %s", what,
                                    n, total, known_crashes[k]);
                        continue;
                }
                cr_assert_eq(out, OUT_ERROR, "%s: allocation %lu of %lu failing: %s\n%s", what, n,
                             total,
                             out == OUT_LEAK ? "a leak" :
                             out == OUT_SILENT ? "it succeeded all the same" :
                             out == OUT_NO_MESSAGE ? "an error without a message" :
                             "it failed, but not for the injected failure", err);
        }
}

/* ---- the operations ---- */

static struct topo default_topo;     /* topologies/default.yaml, loaded once */
static struct topo small_topo;       /* topologies/small.yaml, loaded once */

static void load_topos(void)
{
        struct diag d;
        diag_init(&d);
        cr_assert_eq(topo_load_file(CUBESIM_SOURCE_DIR "/topologies/default.yaml", &default_topo,
                                    &d), 0);
        cr_assert_eq(topo_load_file(CUBESIM_SOURCE_DIR "/topologies/small.yaml", &small_topo, &d),
                     0);
        diag_fini(&d);
}

static int op_topo_load(struct diag *d)
{
        struct topo t;
        int rc = topo_load_file(CUBESIM_SOURCE_DIR "/topologies/default.yaml", &t, d);
        topo_fini(&t);
        return rc;
}

static int op_build_graph(struct diag *d)
{
        struct topo_graph g;
        int rc = topo_build_graph(&default_topo, &g, d);
        if (rc < 0)
                return rc;
        /* Routing fills the graph's cache: its allocations count too. */
        uint32_t src = topo_node_index(&g, TOPO_NODE_IO_CPU, 0, 0, 0);
        uint32_t dst = topo_node_index(&g, TOPO_NODE_TCM, 0, 3, 15);
        const uint32_t *edges;
        uint32_t n_edges;
        rc = topo_route(&g, src, dst, &edges, &n_edges);
        if (rc < 0 && d->n_errors == 0)
                diag_error(d, "topo_route: %s", strerror(-rc));   /* it reports by its code */
        topo_graph_fini(&g);
        return rc;
}

static int op_hw_sim(struct diag *d)
{
        struct hw_sim sim;
        int rc = hw_sim_init(&sim, &default_topo, NULL, d);
        if (rc < 0)
                return rc;
        hw_sim_fini(&sim);
        return 0;
}

static const struct tl_kernel *gemm;   /* the kernel of op_run_gemm */

static int op_run_gemm(struct diag *d)
{
        static const char *const sets[] = { "m=40", "n=24", "k=48", "tile_m=16", "tile_n=16",
                                             "tile_k=16", "dtype=fp32" };
        struct tl_job job = { .kernel = gemm, .topo = &small_topo, .sets = sets,
                              .n_sets = sizeof sets / sizeof sets[0],
                              .opts = tl_run_opts_default() };
        job.opts.mode = TL_MODE_DATA;
        int rc = tl_job_run(&job, d);
        tl_job_fini(&job);
        return rc;
}

/* The event queue, starting with room for one event, grows while events
 * are scheduled before and during the run; the callers ignore
 * ev_schedule's result, as most do. A lost event must stop the run with
 * EV_NOMEM, never let it end as if complete. */
enum { N_CHAIN = 64 };
static struct ev_event chain[N_CHAIN];   /* scheduled by the first to fire */
static struct ev_event early[8];         /* scheduled before the run */
static unsigned n_fired;                 /* events that fired */

static void fired(struct ev_loop *ev, struct ev_event *e)
{
        n_fired++;
        if (e == &early[0])
                for (int i = 0; i < N_CHAIN; i++) {
                        chain[i].fn = fired;
                        ev_schedule(ev, &chain[i], (sim_ps)(N_CHAIN - i));
                }
}

static int op_event_queue(struct diag *d)
{
        struct ev_loop ev;
        if (ev_loop_init(&ev, &(struct ev_config){ .heap_reserve = 1 }) < 0) {
                diag_error(d, "out of memory for the event loop");
                return -ENOMEM;
        }
        n_fired = 0;
        for (int i = 0; i < 8; i++) {
                early[i].fn = fired;
                ev_schedule(&ev, &early[i], (sim_ps)(i + 1));
        }
        enum ev_run_result r = ev_run(&ev, d);
        ev_loop_fini(&ev);
        /* EV_DONE after a failed allocation (fewer than 8 + N_CHAIN
         * events fired) is the silent success the harness rejects. */
        return r == EV_DONE ? 0 : r == EV_NOMEM ? -ENOMEM : -1;
}

static int op_npy_read(struct diag *d)
{
        struct npy_array a;
        int rc = npy_read(CUBESIM_SOURCE_DIR "/tests/data/npy/f4_2x3.npy", &a, d);
        npy_free(&a);
        return rc;
}

Test(allocfail, topo_load_file)
{
        unsigned long n = fail_each("topo_load_file(default.yaml)", op_topo_load);
        cr_log_info("topo_load_file: %lu allocations, each failed once", n);
}

Test(allocfail, topo_build_graph)
{
        load_topos();
        unsigned long n = fail_each("topo_build_graph(default)", op_build_graph);
        cr_log_info("topo_build_graph: %lu allocations, each failed once", n);
}

Test(allocfail, hw_sim_init)
{
        load_topos();
        unsigned long n = fail_each("hw_sim_init(default)", op_hw_sim);
        cr_log_info("hw_sim_init: %lu allocations, each failed once", n);
}

Test(allocfail, event_queue_growth)
{
        unsigned long n = fail_each("ev_schedule growing the heap", op_event_queue);
        cr_log_info("event queue: %lu allocations, each failed once", n);
}

Test(allocfail, tl_run_kernel_gemm_data)
{
        load_topos();
        gemm = tl_kernel_find("gemm");
        cr_assert_not_null(gemm);
        unsigned long n = fail_each("tl_job_run(gemm, small.yaml, data mode)", op_run_gemm);
        cr_log_info("tl_run_kernel: %lu allocations, each failed once", n);
        for (size_t k = 0; known_crashes[k]; k++)
                cr_expect(known_seen[k], "known crash '%s' no longer happens: remove it from "
                          "known_crashes", known_crashes[k]);
}

Test(allocfail, npy_read)
{
        unsigned long n = fail_each("npy_read(f4_2x3.npy)", op_npy_read);
        cr_log_info("npy_read: %lu allocations, each failed once", n);
}

/* The host-capacity check (hw/capacity.c): a machine far beyond any host
 * is refused with its figures; the default machine is not. */
Test(allocfail, host_capacity)
{
        load_topos();
        struct diag d;
        diag_init(&d);
        cr_assert_eq(hw_sim_check_capacity(&default_topo, &d), 0);
        cr_assert_eq(d.n_errors, 0);
        uint64_t small_rss, small_vm, big_rss, big_vm, have_rss, have_vm;
        hw_sim_host_bytes(&small_topo, &small_rss, &small_vm);
        struct topo big = default_topo;
        cr_assert_eq(topo_set_kv(&big, "system.sips=64", &d), 0);
        cr_assert_eq(topo_set_kv(&big, "sip.cubes=64", &d), 0);
        cr_assert_eq(topo_set_kv(&big, "cube.noc.rows=16", &d), 0);
        cr_assert_eq(topo_set_kv(&big, "cube.noc.cols=16", &d), 0);
        hw_sim_host_bytes(&big, &big_rss, &big_vm);
        /* At least the hw_sim arrays and the measured runtime cost per PE. */
        cr_assert_gt(big_rss, (1ull << 20) * (sizeof(struct hw_pe) + 16 * 1024));
        cr_assert_gt(big_rss, small_rss);
        cr_assert_geq(big_vm, big_rss);
        hw_host_avail_bytes(&have_rss, &have_vm);
        cr_assert_gt(have_rss, 0);
        if (have_rss >= big_rss && have_vm >= big_vm) {
                cr_log_info("this host could hold a 1M-PE machine: the refusal is not tested");
        } else {
                cr_assert_eq(hw_sim_check_capacity(&big, &d), -E2BIG);
                cr_assert_eq(d.n_errors, 1);
                cr_assert_not_null(strstr(d.head->text, "is too large for this host: its 1048576 "
                                          "PEs (system.sips 64 x sip.cubes 64 x cube.noc.rows 16 "
                                          "x cube.noc.cols 16) need about"),
                                   "%s", d.head->text);
        }
        diag_fini(&d);
}
