/* sweep/sweep_out.c: the merged result, DIR/sweep.json.
 *
 *   {"cubesim_version", "sweep", "machine": {name, totals},
 *    "n_points", "n_failed", "events", "bookings",
 *    "panels": [{"name", "kernel", "params", "figure", "points": [record...],
 *                "op_log_summary": {...}}],
 *    "wall_s", "events_per_s"}
 *
 * Records are in spec order whatever order they finished in (sweep_point.c
 * describes one). A panel's op_log_summary aggregates its good points:
 * sums of simulated time, kernel time, events, busy time per component
 * class, PE_CPU issue time and op counts by op type, bytes per link class
 * and HBM bytes, energy (energy_j, static_j, energy_by_class_j) and
 * avg_power_w, the energy over the summed kernel time; utilisation per class is the kernel-time-weighted mean
 * (so a long point weighs more than a short one, as in a real workload).
 * Sums run in spec order, so even the floating-point ones are the same on
 * every run. When a panel's figure has a roofline, each good point also
 * gets hbm_roofline_ps (x * bytes_per_x / the HBM bandwidth of the point's
 * own machine, so a point that overrides it is held to its own roofline;
 * rounded up) and of_roofline (hbm_roofline_ps / sim_ps). Each point
 * also carries its run's bounds, bound_by and of_bound (report/summary.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/jsonw.h"
#include "sweep/sweep_int.h"

/* dst[key] += src[key] for every number member of src (keys in first-
 * seen order): integers as integers (reals skipped) when ints, else every
 * number as a real. */
static void add_numbers(json_t *dst, json_t *src, bool ints)
{
        const char *key;
        json_t *v;
        json_object_foreach(src, key, v) {
                if (ints ? !json_is_integer(v) : !json_is_number(v))
                        continue;
                json_t *have = json_object_get(dst, key);
                json_t *sum = ints ? json_integer((have ? json_integer_value(have) : 0) +
                                                  json_integer_value(v))
                                   : jsonw_real((have ? json_number_value(have) : 0) +
                                                json_number_value(v));
                json_object_set_new(dst, key, sum);
        }
}

static json_t *panel_summary(const struct sweep__ctx *x, const struct sweep_panel *pn)
{
        json_t *o = json_object();
        json_t *busy = json_object(), *issue = json_object(), *ops = json_object();
        json_t *links = json_object(), *util = json_object(), *energy = json_object();
        double energy_j = 0, static_j = 0;
        size_t n_ok = 0;
        json_int_t sum_sim = 0, kernel_ps = 0, events = 0, hbm_rd = 0, hbm_wr = 0;
        /* Weighted utilisation: sum of u * kernel_ps per class, in order. */
        const char *ukeys[32];
        double usum[32];
        size_t n_u = 0;
        for (size_t i = pn->first_point; i < pn->first_point + pn->n_points; i++) {
                json_t *r = x->recs[i];
                const char *st = json_string_value(json_object_get(r, "status"));
                if (!st || strcmp(st, "ok") != 0)
                        continue;
                n_ok++;
                json_int_t kps = json_integer_value(json_object_get(r, "kernel_ps"));
                sum_sim += json_integer_value(json_object_get(r, "sim_ps"));
                kernel_ps += kps;
                events += json_integer_value(json_object_get(r, "events"));
                hbm_rd += json_integer_value(json_object_get(r, "hbm_read_bytes"));
                hbm_wr += json_integer_value(json_object_get(r, "hbm_write_bytes"));
                add_numbers(busy, json_object_get(r, "busy_ps"), true);
                add_numbers(issue, json_object_get(r, "pe_cpu_issue_ps"), true);
                add_numbers(ops, json_object_get(r, "op_counts"), true);
                add_numbers(links, json_object_get(r, "link_bytes"), true);
                add_numbers(energy, json_object_get(r, "energy_by_class_j"), false);
                energy_j += json_number_value(json_object_get(r, "energy_j"));
                static_j += json_number_value(json_object_get(r, "static_j"));
                const char *key;
                json_t *v;
                json_object_foreach(json_object_get(r, "utilisation"), key, v) {
                        size_t k = 0;
                        while (k < n_u && strcmp(ukeys[k], key) != 0)
                                k++;
                        if (k == n_u) {
                                if (n_u == 32)
                                        continue;
                                ukeys[n_u] = key;
                                usum[n_u++] = 0;
                        }
                        usum[k] += json_number_value(v) * (double)kps;
                }
        }
        json_object_set_new(o, "points", json_integer((json_int_t)pn->n_points));
        json_object_set_new(o, "points_ok", json_integer((json_int_t)n_ok));
        json_object_set_new(o, "points_failed", json_integer((json_int_t)(pn->n_points - n_ok)));
        json_object_set_new(o, "sim_ps_total", json_integer(sum_sim));
        json_object_set_new(o, "kernel_ps_total", json_integer(kernel_ps));
        json_object_set_new(o, "events", json_integer(events));
        json_object_set_new(o, "busy_ps", busy);
        for (size_t k = 0; k < n_u; k++)
                json_object_set_new(util, ukeys[k],
                                    jsonw_real(kernel_ps ? usum[k] / (double)kernel_ps : 0.0));
        json_object_set_new(o, "utilisation", util);
        json_object_set_new(o, "pe_cpu_issue_ps", issue);
        json_object_set_new(o, "op_counts", ops);
        json_object_set_new(o, "link_bytes", links);
        json_object_set_new(o, "hbm_read_bytes", json_integer(hbm_rd));
        json_object_set_new(o, "hbm_write_bytes", json_integer(hbm_wr));
        json_object_set_new(o, "energy_j", jsonw_real(energy_j));
        json_object_set_new(o, "static_j", jsonw_real(static_j));
        json_object_set_new(o, "energy_by_class_j", energy);
        /* Energy over the summed kernel time: the mean power of the points run back to back. */
        json_object_set_new(o, "avg_power_w",
                            jsonw_real(kernel_ps ? energy_j / ((double)kernel_ps * 1e-12) : 0.0));
        return o;
}

static json_t *figure_json(const struct sweep_figure *f)
{
        json_t *o = json_object();
        if (f->x)
                json_object_set_new(o, "x", jsonw_string(f->x));
        if (f->series)
                json_object_set_new(o, "series", jsonw_string(f->series));
        if (f->x_label)
                json_object_set_new(o, "x_label", jsonw_string(f->x_label));
        if (f->roofline_bytes_per_x > 0)
                json_object_set_new(o, "roofline_bytes_per_x", jsonw_real(f->roofline_bytes_per_x));
        json_object_set_new(o, "log", f->log < 0 ? jsonw_string("auto") : json_boolean(f->log));
        return o;
}

/* The roofline keys of a good point of a panel with a roofline. */
static void add_roofline(const struct sweep__ctx *x, const struct sweep_panel *pn, size_t i,
                         json_t *rec)
{
        double bpx = pn->figure.roofline_bytes_per_x;
        const char *xkey = pn->figure.x;
        const char *st = json_string_value(json_object_get(rec, "status"));
        json_int_t own = json_integer_value(json_object_get(rec, "hbm_bw_bytes_per_s"));
        double bw = own > 0 ? (double)own : (double)x->totals.hbm_bw_bytes_per_s;
        if (bpx <= 0 || !xkey || !st || strcmp(st, "ok") != 0 || bw <= 0)
                return;
        const struct sweep_kv *kv = sweep_point_param(x->spec, i, xkey);
        char *end;
        double xv = kv ? strtod(kv->value, &end) : 0;
        if (!kv || *end || !isfinite(xv) || xv <= 0)
                return;
        double ps = ceil(xv * bpx / bw * 1e12);
        json_int_t sim = json_integer_value(json_object_get(rec, "sim_ps"));
        json_object_set_new(rec, "hbm_roofline_ps", json_integer((json_int_t)ps));
        json_object_set_new(rec, "of_roofline", jsonw_real(sim > 0 ? ps / (double)sim : 0.0));
}

json_t *sweep__merge(struct sweep__ctx *x, double wall_s)
{
        const struct sweep_spec *s = x->spec;
        json_t *o = json_object();
        json_object_set_new(o, "cubesim_version", jsonw_string(CUBESIM_VERSION));
        json_object_set_new(o, "sweep", jsonw_string(s->name));
        json_t *m = json_object();
        json_object_set_new(m, "name", jsonw_string(x->topo.name));
        json_object_set_new(m, "sips", json_integer((json_int_t)x->totals.sips));
        json_object_set_new(m, "cubes", json_integer((json_int_t)x->totals.cubes));
        json_object_set_new(m, "pes", json_integer((json_int_t)x->totals.pes));
        json_object_set_new(m, "peak_gemm_flops_per_s",
                            json_integer((json_int_t)x->totals.peak_gemm_flops_per_s));
        json_object_set_new(m, "hbm_bw_bytes_per_s",
                            json_integer((json_int_t)x->totals.hbm_bw_bytes_per_s));
        json_object_set_new(m, "tcm_bytes", json_integer((json_int_t)x->totals.tcm_bytes));
        json_object_set_new(o, "machine", m);
        size_t n_failed = 0;
        uint64_t events = 0, bookings = 0;
        json_t *panels = json_array();
        for (size_t p = 0; p < s->n_panels; p++) {
                const struct sweep_panel *pn = &s->panels[p];
                json_t *pj = json_object();
                json_object_set_new(pj, "name", jsonw_string(pn->name));
                json_object_set_new(pj, "kernel", jsonw_string(pn->kernel));
                json_t *params = json_object();
                for (size_t j = 0; j < pn->n_params; j++)
                        json_object_set_new(params, pn->params[j].key,
                                            sweep__kv_json(&pn->params[j]));
                json_object_set_new(pj, "params", params);
                json_object_set_new(pj, "figure", figure_json(&pn->figure));
                json_t *pts = json_array();
                for (size_t i = pn->first_point; i < pn->first_point + pn->n_points; i++) {
                        json_t *rec = x->recs[i];
                        if (!rec) {     /* never ran: the sweep was cut short */
                                rec = sweep__crash_record(s, i, 1, "not run");
                                x->recs[i] = rec;
                        }
                        add_roofline(x, pn, i, rec);
                        const char *st = json_string_value(json_object_get(rec, "status"));
                        if (!st || strcmp(st, "ok") != 0)
                                n_failed++;
                        events += (uint64_t)json_integer_value(json_object_get(rec, "events"));
                        bookings += (uint64_t)json_integer_value(json_object_get(rec, "bookings"));
                        json_array_append(pts, rec);
                }
                json_object_set_new(pj, "points", pts);
                json_object_set_new(pj, "op_log_summary", panel_summary(x, pn));
                json_array_append_new(panels, pj);
        }
        json_object_set_new(o, "n_points", json_integer((json_int_t)s->n_points));
        json_object_set_new(o, "n_failed", json_integer((json_int_t)n_failed));
        json_object_set_new(o, "events", json_integer((json_int_t)events));
        json_object_set_new(o, "bookings", json_integer((json_int_t)bookings));
        json_object_set_new(o, "panels", panels);
        json_object_set_new(o, "wall_s", jsonw_real(wall_s));
        /* The simulated events of the points run now, over the whole sweep's
         * wall time: the end-to-end rate, workers and overheads included. */
        json_object_set_new(o, "events_per_s",
                            jsonw_real(wall_s > 0 ? round((double)x->events_now / wall_s) : 0.0));
        return o;
}
