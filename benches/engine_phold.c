/* benches/engine_phold.c: the PHOLD model on callbacks only.
 *
 * N logical processes (LPs) and a fixed population of events, pop per LP.
 * Each handled event picks a random LP and a random delay (uniform in
 * [lookahead, lookahead + 2*mean]) and is rescheduled there: the
 * population never changes and nothing is allocated while it runs. The
 * random stream is splitmix64 from the seed, so a run is deterministic; the
 * printed checksum over the LPs' counts shows it. */
#include <inttypes.h>
#include <stdlib.h>

#include "base/util.h"
#include "bench.h"
#include "engine/ev.h"

struct phold_event {
        struct ev_event ev;          /* the engine's event, embedded */
        uint32_t lp;                 /* destination LP */
};

struct phold {
        uint64_t rng;                /* splitmix64 state */
        uint64_t n_lps;              /* LPs */
        uint64_t *lp_count;          /* per LP: events handled */
        uint64_t lookahead_ps;       /* minimum delay */
        uint64_t span_ps;            /* delay spread above the minimum */
        uint64_t remaining;          /* events still to handle */
};

static struct phold model;           /* one run at a time */

static inline uint64_t splitmix64(uint64_t *s)
{
        uint64_t z = (*s += UINT64_C(0x9e3779b97f4a7c15));
        z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
        z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
        return z ^ (z >> 31);
}

static void handle(struct ev_loop *ev, struct ev_event *e)
{
        struct phold_event *pe = container_of(e, struct phold_event, ev);
        model.lp_count[pe->lp]++;
        if (--model.remaining == 0) {
                ev_stop(ev);
                return;
        }
        uint64_t r = splitmix64(&model.rng);
        pe->lp = (uint32_t)((r >> 32) % model.n_lps);
        sim_ps delay = model.lookahead_ps + (model.span_ps ? (r & 0xffffffffu) % (model.span_ps + 1) : 0);
        ev_schedule(ev, e, delay);
}

static const char *const phold_params[] = { "lps", "pop", "events", "seed", "mean_ps",
                                            "lookahead_ps", NULL };

static int run(const struct bench_ctx *c)
{
        uint64_t lps, pop, events, seed, mean_ps, lookahead_ps;
        params_u64(c->params, "lps", 1024, 1, UINT32_MAX, &lps, c->diag);
        params_u64(c->params, "pop", 8, 1, 1 << 20, &pop, c->diag);
        params_u64(c->params, "events", 10000000, 1, UINT64_C(1) << 40, &events, c->diag);
        params_u64(c->params, "seed", 1, 0, UINT64_MAX, &seed, c->diag);
        params_u64(c->params, "mean_ps", 10000, 0, UINT64_C(1) << 40, &mean_ps, c->diag);
        params_u64(c->params, "lookahead_ps", 1000, 0, UINT64_C(1) << 40, &lookahead_ps, c->diag);
        params_check_unused(c->params, phold_params, "engine-phold", c->diag);
        if (c->diag->n_errors)
                return 2;
        if (lps * pop > (UINT64_C(1) << 28)) {
                diag_error(c->diag, "engine-phold: lps*pop = %" PRIu64 " events is too many "
                           "(at most 2^28)", lps * pop);
                return 2;
        }

        uint64_t n_pop = lps * pop;
        struct phold_event *pool = calloc(n_pop, sizeof *pool);
        model = (struct phold){ .rng = seed, .n_lps = lps, .lookahead_ps = lookahead_ps,
                                .span_ps = 2 * mean_ps, .remaining = events,
                                .lp_count = calloc(lps, sizeof(uint64_t)) };
        struct ev_loop ev;
        int rc = 0;
        if (!pool || !model.lp_count ||
            ev_loop_init(&ev, &(struct ev_config){ .heap_reserve = n_pop + 1 }) < 0) {
                free(pool);
                free(model.lp_count);
                diag_error(c->diag, "engine-phold: out of memory for %" PRIu64 " events", n_pop);
                return 1;
        }
        for (uint64_t i = 0; i < n_pop; i++) {
                pool[i].ev.fn = handle;
                pool[i].lp = (uint32_t)(i % lps);
                uint64_t r = splitmix64(&model.rng);
                ev_schedule(&ev, &pool[i].ev, lookahead_ps + (r % (2 * mean_ps + 1)));
        }
        double t1 = util_now_s();
        enum ev_run_result r = ev_run(&ev, c->diag);
        double t2 = util_now_s();
        if (r != EV_STOPPED && r != EV_DONE) {
                rc = 1;
                goto out;
        }
        uint64_t sum = UINT64_C(1469598103934665603);
        for (uint64_t i = 0; i < lps; i++)
                sum = (sum ^ model.lp_count[i]) * UINT64_C(1099511628211);
        double run_s = t2 - t1;
        char checksum[17];
        snprintf(checksum, sizeof checksum, "%016" PRIx64, sum);
        if (c->json)
                rc = bench_print_json(c, json_pack(
                        "{s:s, s:I, s:I, s:I, s:I, s:s, s:o, s:o}", "bench", "engine-phold",
                        "lps", (json_int_t)lps, "pop", (json_int_t)pop,
                        "events", (json_int_t)ev.n_events,
                        "sim_end_ns", (json_int_t)(ev.now / SIM_PS_PER_NS), "checksum", checksum,
                        "wall_s", jsonw_fixed(run_s, 6),
                        "events_per_s", jsonw_fixed((double)ev.n_events / run_s, 0)));
        else
                fprintf(c->out, "events: %" PRIu64 "\npending: %" PRIu64 "\nsim_end_ns: %" PRIu64
                        "\nchecksum: %s\nwall_s: %.6f\nevents_per_s: %.0f\n",
                        ev.n_events, n_pop, ev.now / SIM_PS_PER_NS, checksum, run_s,
                        (double)ev.n_events / run_s);
out:
        ev_loop_fini(&ev);
        free(pool);
        free(model.lp_count);
        return rc;
}

BENCH_DEFINE(bench_engine_phold, "engine-phold", phold_params,
             "PHOLD on callback events: event queue throughput",
             "Parameters:\n"
             "  lps=N           logical processes (default 1024)\n"
             "  pop=P           events in flight per LP (default 8)\n"
             "  events=E        events to handle, then stop (default 10000000)\n"
             "  seed=S          random seed (default 1)\n"
             "  mean_ps=M       mean random delay above the lookahead (default 10000)\n"
             "  lookahead_ps=L  minimum delay (default 1000)\n"
             "Prints: events, pending (the population), sim_end_ns, checksum (over the\n"
             "LPs' event counts; equal for equal parameters), wall_s, events_per_s.\n");
