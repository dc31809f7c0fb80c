/* sweep/sweep_point.c: one point of a sweep, run in a worker process:
 * the machine with the point's topology parameters, the kernel with its
 * kernel parameters, op_log mode, and the record that goes back to the
 * collector.
 *
 * A record holds the point's index and coordinates, its status ("ok",
 * "failed": the kernel failed or deadlocked, exit status 1; "bad_input":
 * its parameters do not fit, exit status 2; "crashed": the worker died;
 * "timed_out": it ran past --timeout-s and was killed, exit status 124),
 * the error text when it failed, and for a good point the run summary of
 * `cubesim run --json` without the per-PE list: sim_ns, sim_ps,
 * kernel_ps, events, PE_CPU issue time and op counts by op type, busy time
 * and utilisation per component class, bytes per link class, HBM bytes.
 * Last come the wall-clock keys: wall_s (the whole point) and
 * events_per_s (the engine alone); the collector adds peak_rss_kib. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/jsonw.h"
#include "base/util.h"
#include "sweep/sweep_int.h"
#include "tl/tl_run.h"

json_t *sweep__kv_json(const struct sweep_kv *kv)
{
        const char *v = kv->value;
        if (!kv->quoted && *v && (*v == '-' || (*v >= '0' && *v <= '9'))) {
                char *end;
                errno = 0;
                long long i = strtoll(v, &end, 10);
                if (*end == '\0' && errno == 0)
                        return json_integer(i);
                double x = strtod(v, &end);
                if (*end == '\0' && errno == 0 && isfinite(x))
                        return jsonw_real(x);
        }
        return jsonw_string(v);
}

json_t *sweep__coords_json(const struct sweep_spec *s, size_t i)
{
        const struct sweep_point *pt = &s->points[i];
        json_t *o = json_object();
        for (size_t c = 0; c < pt->n_coords; c++)
                json_object_set_new(o, pt->coords[c].key, sweep__kv_json(&pt->coords[c]));
        return o;
}

static json_t *new_record(const struct sweep_spec *s, size_t i, int exit_status)
{
        static const char *const names[] = { "ok", "failed", "bad_input" };
        json_t *o = json_object();
        size_t first = s->panels[s->points[i].panel].first_point;
        json_object_set_new(o, "index", json_integer((json_int_t)(i - first)));
        json_object_set_new(o, "params", sweep__coords_json(s, i));
        if (s->machines_vary) {
                char mname[256];
                sweep_point_machine(s, i, mname, sizeof mname);
                json_object_set_new(o, "machine", jsonw_string(mname));
        }
        json_object_set_new(o, "status", jsonw_string(exit_status >= 0 && exit_status <= 2
                                                             ? names[exit_status]
                                                             : "crashed"));
        json_object_set_new(o, "exit_status", json_integer(exit_status));
        return o;
}

json_t *sweep__crash_record(const struct sweep_spec *s, size_t i, int exit_status,
                            const char *why)
{
        json_t *o = new_record(s, i, 3);     /* "crashed" */
        json_object_set_new(o, "exit_status", json_integer(exit_status));
        json_object_set_new(o, "error", jsonw_string(why));
        return o;
}

json_t *sweep__timeout_record(const struct sweep_spec *s, size_t i, double timeout_s)
{
        json_t *o = new_record(s, i, 3);
        char why[160];
        snprintf(why, sizeof why, "the point ran past --timeout-s %g (seconds of wall time) and "
                 "was stopped", timeout_s);
        json_object_set_new(o, "status", jsonw_string("timed_out"));
        json_object_set_new(o, "exit_status", json_integer(124));
        json_object_set_new(o, "error", jsonw_string(why));
        return o;
}

/* The keys of a good record the merge adds up, and their bound. */
#define RECORD_INT_MAX (INT64_C(1) << 53)   /* sums over SWEEP_MAX_POINTS stay in int64 */

static bool int_ok(json_t *v)
{
        return json_is_integer(v) && json_integer_value(v) >= 0 &&
               json_integer_value(v) <= RECORD_INT_MAX;
}

bool sweep__record_valid(json_t *rec, char *why, size_t len)
{
        static const char *const ints[] = { "sim_ns", "sim_ps", "target_start_ps", "kernel_ps",
                                            "events", "hbm_read_bytes", "hbm_write_bytes",
                                            NULL };
        static const char *const int_maps[] = { "pe_cpu_issue_ps", "op_counts", "busy_ps",
                                                "link_bytes", NULL };
        static const char *const reals[] = { "wall_s", "events_per_s", NULL };
        if (!json_is_object(rec)) {
                snprintf(why, len, "'point' is not an object");
                return false;
        }
        for (const char *const *k = ints; *k; k++) {
                json_t *v = json_object_get(rec, *k);
                if (!int_ok(v)) {
                        char got[32] = "";
                        if (json_is_integer(v))
                                snprintf(got, sizeof got, "%" JSON_INTEGER_FORMAT,
                                         json_integer_value(v));
                        snprintf(why, len, "point.%s: expected an integer in [0, 2^53], got %s",
                                 *k, json_is_integer(v) ? got : v ? "another type" : "none");
                        return false;
                }
        }
        for (const char *const *k = int_maps; *k; k++) {
                json_t *m = json_object_get(rec, *k), *v;
                const char *key;
                if (!json_is_object(m)) {
                        snprintf(why, len, "point.%s: expected an object", *k);
                        return false;
                }
                json_object_foreach(m, key, v) {
                        if (!int_ok(v)) {
                                snprintf(why, len, "point.%s.%s: expected an integer in "
                                         "[0, 2^53]", *k, key);
                                return false;
                        }
                }
        }
        json_t *u = json_object_get(rec, "utilisation"), *v;
        const char *key;
        if (!json_is_object(u)) {
                snprintf(why, len, "point.utilisation: expected an object");
                return false;
        }
        json_object_foreach(u, key, v) {
                if (!json_is_number(v) || !isfinite(json_number_value(v)) ||
                    json_number_value(v) < 0 || json_number_value(v) > 1e6) {
                        snprintf(why, len, "point.utilisation.%s: expected a share >= 0", key);
                        return false;
                }
        }
        for (const char *const *k = reals; *k; k++) {
                v = json_object_get(rec, *k);
                if (v && (!json_is_number(v) || !isfinite(json_number_value(v)) ||
                          json_number_value(v) < 0)) {
                        snprintf(why, len, "point.%s: expected a number >= 0", *k);
                        return false;
                }
        }
        return true;
}

static json_t *diag_lines(const struct diag *d);

/* Every message of d, one per line (notes alike folded). */
static json_t *diag_text(const struct diag *raw)
{
        struct diag folded, *d = &folded;
        diag_init(d);
        d->max_msgs = raw->n_kept + 1;
        diag_copy_folded(d, raw);
        json_t *j = diag_lines(d);
        diag_fini(d);
        return j;
}

/* Every message of d, one per line. */
static json_t *diag_lines(const struct diag *d)
{
        size_t len = 1;
        for (const struct diag_msg *m = d->head; m; m = m->next)
                len += strlen(m->text) + 1;
        char *buf = malloc(len), *at = buf;
        if (!buf)
                return jsonw_string("(out of memory formatting the error)");
        *at = '\0';
        for (const struct diag_msg *m = d->head; m; m = m->next)
                at += sprintf(at, "%s%s", at == buf ? "" : "\n", m->text);
        json_t *j = jsonw_string(buf);  /* bytes that are not UTF-8 become U+FFFD */
        free(buf);
        return j;
}

/* "key=value" for --set into kvs[*n] (malloc'd); false when out of memory. */
static bool add_set(char **kvs, size_t *n, const struct sweep_kv *kv)
{
        size_t len = strlen(kv->key) + strlen(kv->value) + 2;
        kvs[*n] = malloc(len);
        if (!kvs[*n])
                return false;
        snprintf(kvs[(*n)++], len, "%s=%s", kv->key, kv->value);
        return true;
}

/* The machine point i runs on: base, or its own machine file loaded into
 * own (*loaded then true). 0, or -EINVAL with the problem in d. */
static int point_machine(const struct sweep_spec *s, const struct topo *base, size_t i,
                         struct topo *own, bool *loaded, const struct topo **out, struct diag *d)
{
        char buf[4096];
        const char *path = sweep_point_topo(s, i, buf, sizeof buf);
        *loaded = false;
        *out = base;
        if (path == s->topo_path || (path && s->topo_path && strcmp(path, s->topo_path) == 0))
                return 0;
        int rc = path ? topo_load_file(path, own, d) : topo_load_default(own, d);
        if (rc < 0)
                return -EINVAL;
        *loaded = true;
        *out = own;
        return 0;
}

int sweep__run_point(const struct sweep_spec *s, const struct topo *base, size_t i, json_t **out)
{
        double t0 = util_now_s();
        const struct sweep_point *pt = &s->points[i];
        const struct sweep_panel *pn = &s->panels[pt->panel];
        struct diag d;
        diag_init(&d);
        const struct sweep_machine *variant = sweep_point_variant(s, i);
        size_t n_kv = pn->n_params + pt->n_coords + (variant ? variant->n_sets : 0);
        char **kvs = calloc(n_kv ? n_kv : 1, sizeof *kvs);
        struct topo own;
        bool own_loaded = false;
        const struct topo *machine = base;
        size_t n_sets = 0;           /* entries of kvs in use */
        int status = 2;
        /* A grid over kernels gives each point its own. */
        const char *kname = pn->kernel;
        for (size_t j = 0; j < pt->n_coords; j++)
                if (strcmp(pt->coords[j].key, "kernel") == 0)
                        kname = pt->coords[j].value;
        const struct tl_kernel *k = tl_kernel_find(kname);
        if (!kvs) {
                diag_error(&d, "out of memory");
                goto record;
        }
        if (!k) {
                diag_error(&d, "no kernel '%s'", kname);
                goto record;
        }
        if (point_machine(s, base, i, &own, &own_loaded, &machine, &d) < 0)
                goto record;
        /* Fixed parameters first, then the point's: the last one wins. A
         * machine variant's sets stand where `machine` is set. */
        size_t n_fixed = pn->n_params + pt->n_coords;
        for (size_t j = 0; j < n_fixed; j++) {
                const struct sweep_kv *kv = j < pn->n_params ? &pn->params[j]
                                                             : &pt->coords[j - pn->n_params];
                if (j >= pn->n_params && strcmp(kv->key, "kernel") == 0)
                        continue;    /* the point's kernel, chosen above */
                if (strcmp(kv->key, "topology") == 0)
                        continue;    /* the machine, loaded above */
                bool ok = true;
                if (strcmp(kv->key, "machine") == 0) {
                        const struct sweep_machine *m = sweep_point_variant(s, i);
                        for (size_t v = 0; m && v < m->n_sets && ok; v++)
                                ok = add_set(kvs, &n_sets, &m->sets[v]);
                } else {
                        ok = add_set(kvs, &n_sets, kv);
                }
                if (!ok) {
                        diag_error(&d, "out of memory");
                        goto record;
                }
        }

        struct tl_job job = { .kernel = k, .topo = machine, .sets = (const char *const *)kvs,
                              .n_sets = n_sets,
                              .opts = tl_run_opts_default() };
        int krc = tl_job_run(&job, &d);
        double run_s = job.run_wall_s;
        json_t *sum = NULL;
        if (krc == -EINVAL)
                status = 2;
        else if (krc < 0)
                status = 1;
        else
                status = 0;
        if (status == 0)
                sum = rep_run_summary(&job.sim, &job.stats, k->name);
        tl_job_fini(&job);
        if (sum) {
                *out = new_record(s, i, 0);
                const char *key;
                json_t *v;
                json_object_foreach(sum, key, v) {
                        if (strcmp(key, "pes") != 0 && strcmp(key, "kernel") != 0 &&
                            strcmp(key, "machine") != 0)
                                json_object_set(*out, key, v);
                }
                json_t *ev = json_object_get(sum, "events");
                double events = ev ? (double)json_integer_value(ev) : 0.0;
                json_object_set_new(*out, "wall_s", jsonw_real(util_now_s() - t0));
                json_object_set_new(*out, "events_per_s",
                                    jsonw_real(run_s > 0 ? round(events / run_s) : 0.0));
                json_decref(sum);
                goto done;
        }
record:
        if (status == 0)
                status = 2;
        *out = new_record(s, i, status);
        if (!d.head)
                diag_error(&d, "the point failed and said nothing");
        json_object_set_new(*out, "error", diag_text(&d));
        json_object_set_new(*out, "wall_s", jsonw_real(util_now_s() - t0));
done:
        if (own_loaded)
                topo_fini(&own);
        for (size_t j = 0; kvs && j < n_kv; j++)
                free(kvs[j]);
        free(kvs);
        diag_fini(&d);
        return status;
}
