/* tl/job.c: the one way to run a kernel on a machine: the --set values
 * routed to the topology or the kernel, the host's capacity checked, the
 * machine built, the kernel run, its statistics gathered. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/sigsafe.h"
#include "base/util.h"
#include "engine/watchdog.h"
#include "tl/tl_int.h"

struct tl_run_opts tl_run_opts_default(void)
{
        return (struct tl_run_opts){ .mode = TL_MODE_OPLOG, .seed = 1,
                                     .max_events = TL_DEFAULT_MAX_EVENTS,
                                     .max_time_ps = TL_DEFAULT_MAX_TIME_PS, .rtol = -1,
                                     .atol = -1 };
}

/* Route every set: topology parameters into job->machine, kernel
 * parameters into job->params. Errors to d. */
static void route_sets(struct tl_job *job, struct diag *d)
{
        for (size_t i = 0; i < job->n_sets; i++) {
                const char *kv = job->sets[i];
                const char *eq = strchr(kv, '=');
                if (!eq || eq == kv) {
                        diag_error(d, "--set %s: expected key=value", kv);
                        continue;
                }
                size_t klen = (size_t)(eq - kv);
                if (!tl_set_is_topo(job->kernel, kv, klen)) {
                        params_add(&job->params, kv, d);  /* unknown keys: reported with hints */
                        continue;
                }
                char path[256];
                if (klen >= sizeof path) {
                        diag_error(d, "--set %.64s...: the key is too long", kv);
                        continue;
                }
                topo_set(&job->machine, tl_set_topo_path(kv, klen, path, sizeof path), eq + 1, d);
        }
}

/* The run's counts, its work, and its profile (moved: the stats own it). */
static void gather_stats(struct tl_run *r, struct rep_run_stats *st)
{
        tl__run_counts(r, st);
        st->profile = r->profile;
        memset(&r->profile, 0, sizeof r->profile);
        st->cp = r->cp;
        r->cp = NULL;
}

/* The limit as typed: whole seconds, or with three decimals. */
static void put_seconds(char *buf, size_t *n, size_t cap, double s)
{
        unsigned long long ms = (unsigned long long)(s * 1000 + 0.5);
        sigsafe_put_u(buf, n, cap, ms / 1000);
        if (ms % 1000) {
                sigsafe_put(buf, n, cap, ".");
                char frac[4] = { (char)('0' + ms / 100 % 10), (char)('0' + ms / 10 % 10),
                                 (char)('0' + ms % 10), 0 };
                for (int i = 2; i > 0 && frac[i] == '0'; i--)
                        frac[i] = 0;
                sigsafe_put(buf, n, cap, frac);
        }
}

/* The watchdog's message (ev_watchdog_say; arg is the job), in the
 * README's forms: located like a kernel error at the running PE's last
 * tl_* call ("FILE:LINE: error: PE NAME: ..."), else the command's form
 * naming the kernel ("cubesim run: error: kernel NAME: ..."; only `cubesim
 * run`, and the library's cubesim_run behind it, arms the limit). */
static void say_timeout(char *msg, size_t *n, size_t cap, const struct ev_loop *ev,
                        const struct ev_proc *p, void *arg)
{
        const struct tl_job *job = arg;
        if (p && p->at_file) {
                sigsafe_put(msg, n, cap, p->at_file);
                sigsafe_put(msg, n, cap, ":");
                sigsafe_put_u(msg, n, cap, (unsigned long long)p->at_line);
                sigsafe_put(msg, n, cap, ": error: PE ");
                sigsafe_put(msg, n, cap, p->name ? p->name : "?");
                sigsafe_put(msg, n, cap, ": ");
        } else {
                sigsafe_put(msg, n, cap, "cubesim run: error: kernel ");
                sigsafe_put(msg, n, cap, job->kernel->name);
                sigsafe_put(msg, n, cap, ": ");
        }
        sigsafe_put(msg, n, cap, "wall-clock limit reached (--timeout-s ");
        put_seconds(msg, n, cap, job->opts.timeout_s);
        sigsafe_put(msg, n, cap, ") after ");
        sigsafe_put_u(msg, n, cap, ev->n_events);
        sigsafe_put(msg, n, cap, " events, ");
        sigsafe_put_u(msg, n, cap, ev->now / SIM_PS_PER_NS);
        sigsafe_put(msg, n, cap, " ns simulated; ");
        if (p && p->at_file) {
                sigsafe_put(msg, n, cap, "the kernel was running, its last tl_* call here (");
                sigsafe_put(msg, n, cap, p->at_what ? p->at_what : "?");
                sigsafe_put(msg, n, cap, "): a loop without tl_* calls never ends (a run "
                                         "that is only long needs a larger --timeout-s)");
        } else if (p) {
                sigsafe_put(msg, n, cap, "process '");
                sigsafe_put(msg, n, cap, p->name ? p->name : "?");
                sigsafe_put(msg, n, cap, "' was running, before any tl_* call");
        } else {
                sigsafe_put(msg, n, cap, "a run this long needs a larger --timeout-s");
        }
}

int tl_job_run(struct tl_job *job, struct diag *d)
{
        job->machine = *job->topo;
        params_init(&job->params);
        job->opts.params = &job->params;
        job->have_sim = false;
        job->run = NULL;
        job->run_wall_s = 0;
        memset(&job->stats, 0, sizeof job->stats);
        unsigned errors_before = d->n_errors;
        route_sets(job, d);
        if (d->n_errors > errors_before)
                return -EINVAL;
        /* A machine this host cannot hold is bad input, not an OOM kill. */
        if (hw_sim_check_capacity(&job->machine, d) < 0)
                return -EINVAL;
        int rc = hw_sim_init(&job->sim, &job->machine, NULL, d);
        if (rc < 0)
                return rc;
        job->have_sim = true;
        job->run = malloc(sizeof *job->run);
        if (!job->run) {
                diag_error(d, "out of memory for the run");
                return -ENOMEM;
        }
        if (job->opts.timeout_s > 0 &&
            (rc = ev_watchdog_arm(&job->sim.ev, job->opts.timeout_s, say_timeout, job)) < 0) {
                diag_error(d, "--timeout-s: cannot set a timer: %s", strerror(-rc));
                free(job->run);
                job->run = NULL;
                return -1;
        }
        double t0 = util_now_s();
        rc = tl_run_kernel(&job->sim, job->kernel, &job->opts, job->run, d);
        double t1 = util_now_s();
        if (job->opts.timeout_s > 0)
                ev_watchdog_disarm();
        job->run_wall_s = t1 - t0;
        if (rc == 0)
                gather_stats(job->run, &job->stats);
        return rc;
}

void tl_job_fini(struct tl_job *job)
{
        if (job->run) {
                tl_run_fini(job->run);
                free(job->run);
                job->run = NULL;
        }
        rep_profile_fini(&job->stats.profile);
        rep_cp_free(job->stats.cp);
        job->stats.cp = NULL;
        if (job->have_sim)
                hw_sim_fini(&job->sim);
        job->have_sim = false;
        topo_fini(&job->machine);
}
