/* benches/engine_hold.c: the hold model on coroutine processes.
 *
 * N processes; process p, in iteration i (both from 0), sleeps
 * 1 + (7*i + p) % 5 ns, K iterations each. Measures the cost of a process
 * switch plus a queue insertion and removal with N pending events. The same
 * model in SystemC and SimPy is under benches/compare/, for side-by-side
 * runs; all three must agree on the simulated end time. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "bench.h"
#include "engine/ev.h"
#include "hw/hw.h"

#define HOLD_RSS_PER_PROC (6u << 10)  /* resident bytes per process, with room */

struct hold_proc {
        struct ev_proc proc;         /* the process */
        uint64_t p;                  /* its index */
        uint64_t iters;              /* iterations to run */
};

static void hold_body(struct ev_proc *self, void *arg)
{
        const struct hold_proc *h = arg;
        for (uint64_t i = 0; i < h->iters; i++)
                ev_sleep(self, (1 + (7 * i + h->p) % 5) * SIM_PS_PER_NS);
}

static const char *const hold_params[] = { "procs", "iters", NULL };

static int run(const struct bench_ctx *c)
{
        uint64_t procs, iters;
        params_u64(c->params, "procs", 100, 1, 10000000, &procs, c->diag);
        params_u64(c->params, "iters", 200000, 1, UINT64_C(1) << 40, &iters, c->diag);
        params_check_unused(c->params, hold_params, "engine-hold", c->diag);
        if (c->diag->n_errors)
                return 2;
        char what[96];
        snprintf(what, sizeof what, "engine-hold: its %" PRIu64 " processes", procs);
        if (hw_host_check_mappings(procs, what, "run fewer (procs=N)", c->diag) < 0)
                return 2;
        /* Resident per process: its stack's touched page, its struct and
         * its heap entry; measured 4.4 KiB (procs 10^5 and 2*10^5). */
        uint64_t have_rss, have_vm;
        hw_host_avail_bytes(&have_rss, &have_vm);
        if (procs > have_rss / HOLD_RSS_PER_PROC) {
                diag_error(c->diag, "%s need about %" PRIu64 " MiB of host memory (%u KiB "
                           "each) and %" PRIu64 " MiB is available; run fewer (procs=N)", what,
                           procs * HOLD_RSS_PER_PROC >> 20, HOLD_RSS_PER_PROC >> 10,
                           have_rss >> 20);
                return 2;
        }

        double t0 = util_now_s();
        struct ev_loop ev;
        struct hold_proc *hp = calloc(procs, sizeof *hp);
        if (!hp || ev_loop_init(&ev, &(struct ev_config){ .stack_bytes = 16384,
                                                         .heap_reserve = procs + 1 }) < 0) {
                free(hp);
                diag_error(c->diag, "engine-hold: out of memory for %" PRIu64 " processes", procs);
                return 1;
        }
        int rc = 0;
        for (uint64_t p = 0; p < procs; p++) {
                hp[p].p = p;
                hp[p].iters = iters;
                if (ev_proc_start(&ev, &hp[p].proc, "hold", hold_body, &hp[p]) < 0) {
                        diag_error(c->diag, "engine-hold: cannot map a stack for process %"
                                   PRIu64 " of %" PRIu64 ": %s (this host allows %" PRIu64
                                   " memory mappings a process, vm.max_map_count)", p, procs,
                                   strerror(errno), hw_host_max_mappings());
                        rc = 1;
                        goto out;
                }
        }
        double t1 = util_now_s();
        enum ev_run_result r = ev_run(&ev, c->diag);
        double t2 = util_now_s();
        if (r != EV_DONE) {
                rc = 1;
                goto out;
        }
        double run_s = t2 - t1;
        if (c->json)
                rc = bench_print_json(c, json_pack(
                        "{s:s, s:I, s:I, s:I, s:I, s:I, s:o, s:o, s:o}", "bench", "engine-hold",
                        "procs", (json_int_t)procs, "iters", (json_int_t)iters,
                        "events", (json_int_t)ev.n_events, "switches", (json_int_t)ev.n_resumes,
                        "sim_end_ns", (json_int_t)(ev.now / SIM_PS_PER_NS),
                        "setup_s", jsonw_fixed(t1 - t0, 6), "wall_s", jsonw_fixed(run_s, 6),
                        "events_per_s", jsonw_fixed((double)ev.n_events / run_s, 0)));
        else
                fprintf(c->out, "events: %" PRIu64 "\nswitches: %" PRIu64
                        "\nsim_end_ns: %" PRIu64 "\nsetup_s: %.6f\nwall_s: %.6f\n"
                        "events_per_s: %.0f\n",
                        ev.n_events, ev.n_resumes, ev.now / SIM_PS_PER_NS, t1 - t0, run_s,
                        (double)ev.n_events / run_s);
out:
        ev_loop_fini(&ev);
        free(hp);
        return rc;
}

BENCH_DEFINE(bench_engine_hold, "engine-hold", hold_params,
             "coroutine processes sleeping in a fixed pattern: process switch cost",
             "Parameters:\n"
             "  procs=N   processes (default 100)\n"
             "  iters=K   iterations per process (default 200000)\n"
             "Process p sleeps 1 + (7*i + p) % 5 ns in iteration i.\n"
             "Prints: events (dispatched, including one start per process), switches,\n"
             "sim_end_ns, setup_s, wall_s (the run loop only) and events_per_s.\n");
