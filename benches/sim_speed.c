/* benches/sim_speed.c: how fast cubesim simulates a real kernel, side by
 * side with the engine alone, in one process.
 *
 * First the engine-hold bench (coroutine processes that only sleep: one
 * event and one process switch each), then gqa_prefill (llama3-70b, bf16,
 * causal, q_len = seq_len) on the default machine in op_log mode with no
 * op_log written. For the kernel it prints the events the loop dispatched
 * and the requests placed on shared resources (links, HBM channels, each
 * PE's engines, DMA slots and TCM): since those are served at their
 * arrival (docs/adr/0010), a request costs the engine work an event cost
 * in a queueing model but makes no event of its own. Both rates are given
 * against engine-hold's events per second of the same run. Ratios within
 * one run are what to compare on a noisy host. */
#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>

#include "bench.h"
#include "tl/tl_run.h"

static const char *const speed_params[] = { "seq_len", "procs", "iters", NULL };

extern const struct bench bench_engine_hold; /* run as it is, its JSON figures read back */

/* engine-hold's figures: its events and the run loop's wall seconds. */
static int hold(const struct bench_ctx *c, uint64_t procs, uint64_t iters, uint64_t *events,
                double *wall_s)
{
        char *text = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&text, &len);
        if (!f) {
                diag_error(c->diag, "sim-speed: out of memory");
                return 1;
        }
        struct params ps;
        params_init(&ps);
        char s_procs[48], s_iters[48];
        snprintf(s_procs, sizeof s_procs, "procs=%" PRIu64, procs);
        snprintf(s_iters, sizeof s_iters, "iters=%" PRIu64, iters);
        params_add(&ps, s_procs, c->diag);
        params_add(&ps, s_iters, c->diag);
        struct bench_ctx hc = { .params = &ps, .json = true, .jobs = 1, .out = f,
                                .diag = c->diag };
        int rc = bench_engine_hold.run(&hc);
        fclose(f);
        if (rc == 0) {
                json_t *o = json_loads(text, 0, NULL);
                json_int_t ev = 0;
                if (!o || json_unpack(o, "{s:I, s:F}", "events", &ev, "wall_s", wall_s) < 0) {
                        diag_error(c->diag, "sim-speed: engine-hold printed no figures");
                        rc = 1;
                }
                *events = (uint64_t)ev;
                json_decref(o);
        }
        free(text);
        return rc;
}

static int run(const struct bench_ctx *c)
{
        uint64_t seq, procs, iters;
        params_u64(c->params, "seq_len", 32768, 128, 131072, &seq, c->diag);
        params_u64(c->params, "procs", 100, 1, 100000, &procs, c->diag);
        params_u64(c->params, "iters", 200000, 1, UINT64_C(1) << 32, &iters, c->diag);
        params_check_unused(c->params, speed_params, "sim-speed", c->diag);
        if (c->diag->n_errors)
                return 2;

        uint64_t hold_events;
        double hold_s;
        if (hold(c, procs, iters, &hold_events, &hold_s))
                return 1;
        double hold_rate = (double)hold_events / hold_s;

        struct topo t;
        if (topo_load_default(&t, c->diag) < 0)
                return 2;
        char s_seq[48], s_q[48];
        snprintf(s_seq, sizeof s_seq, "seq_len=%" PRIu64, seq);
        snprintf(s_q, sizeof s_q, "q_len=%" PRIu64, seq);
        const char *sets[] = { "model=llama3-70b", "dtype=bf16", "causal=1", s_seq, s_q };
        struct tl_job job = { .kernel = tl_kernel_find("gqa_prefill"), .topo = &t, .sets = sets,
                              .n_sets = sizeof sets / sizeof sets[0],
                              .opts = tl_run_opts_default() };
        int rc = tl_job_run(&job, c->diag);
        if (rc == 0) {
                uint64_t events = job.sim.ev.n_events, bookings = hw_sim_bookings(&job.sim);
                double s = job.run_wall_s;
                double ev_rate = (double)events / s, work_rate = (double)(events + bookings) / s;
                if (c->json)
                        rc = bench_print_json(c, json_pack(
                                "{s:s, s:I, s:I, s:I, s:o, s:o, s:I, s:I, s:I, s:I, s:o, s:o, s:o, "
                                "s:o, s:o}", "bench", "sim-speed", "procs", (json_int_t)procs,
                                "iters", (json_int_t)iters, "hold_events", (json_int_t)hold_events,
                                "hold_wall_s", jsonw_fixed(hold_s, 6),
                                "hold_events_per_s", jsonw_fixed(hold_rate, 0),
                                "seq_len", (json_int_t)seq, "sim_ps", (json_int_t)job.sim.done_ps,
                                "events", (json_int_t)events, "bookings", (json_int_t)bookings,
                                "wall_s", jsonw_fixed(s, 6), "events_per_s", jsonw_fixed(ev_rate, 0),
                                "events_of_hold", jsonw_fixed(ev_rate / hold_rate, 4),
                                "events_and_bookings_per_s", jsonw_fixed(work_rate, 0),
                                "events_and_bookings_of_hold",
                                jsonw_fixed(work_rate / hold_rate, 4)));
                else
                        fprintf(c->out,
                                "engine-hold (procs=%" PRIu64 ", iters=%" PRIu64 "): %" PRIu64
                                " events in %.3f s: %.2f M events/s\n"
                                "gqa_prefill %" PRIu64 " (llama3-70b, causal): %" PRIu64
                                " events, %" PRIu64 " requests served at arrival, %.3f s\n"
                                "  events/s:            %.2f M (%.1f%% of engine-hold)\n"
                                "  events + requests/s: %.2f M (%.1f%% of engine-hold)\n",
                                procs, iters, hold_events, hold_s, hold_rate / 1e6, seq,
                                events, bookings, s, ev_rate / 1e6, 100 * ev_rate / hold_rate,
                                work_rate / 1e6, 100 * work_rate / hold_rate);
        }
        tl_job_fini(&job);
        topo_fini(&t);
        return rc == 0 ? 0 : rc == -EINVAL ? 2 : 1;
}

BENCH_DEFINE(bench_sim_speed, "sim-speed", speed_params,
             "simulation speed: gqa_prefill's events and requests per second against engine-hold's, in one run",
             "Parameters:\n"
             "  seq_len=N  gqa_prefill context and query length (default 32768)\n"
             "  procs=N    engine-hold processes (default 100)\n"
             "  iters=K    engine-hold iterations per process (default 200000)\n"
             "Runs engine-hold, then gqa_prefill (llama3-70b, bf16, causal) on the default\n"
             "machine, no op_log written. Prints engine-hold's events per second, and the\n"
             "kernel's events, requests served at arrival (links, HBM channels, engines,\n"
             "DMA slots, TCM: each the work of an event in a queueing model, but no event\n"
             "here), wall seconds of the run, and both rates as a share of engine-hold's.\n");
