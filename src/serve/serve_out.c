/* serve/serve_out.c: the metrics of a serving run (vLLM's serving
 * benchmark names: TTFT, TPOT, ITL, E2EL) and the files of --out DIR:
 * requests.csv, iterations.csv, summary.json, figures (latency CDFs;
 * batch, KV use and queue over time) and trace.json (Perfetto). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/fsutil.h"
#include "base/jsonw.h"
#include "serve/serve_int.h"
#include "sweep/sweep.h"

static int cmp_double(const void *a, const void *b)
{
        double x = *(const double *)a, y = *(const double *)b;
        return x < y ? -1 : x > y;
}

/* Mean and percentiles (linear between order statistics) of v[n] in s,
 * as ms; v is sorted. */
static void stat_of(double *v, size_t n, struct serve_stat *st)
{
        *st = (struct serve_stat){ .n = n };
        if (!n)
                return;
        qsort(v, n, sizeof *v, cmp_double);
        double sum = 0;
        for (size_t i = 0; i < n; i++)
                sum += v[i];
        st->mean = sum / (double)n * 1e3;
        double *p[3] = { &st->p50, &st->p90, &st->p99 };
        const double q[3] = { 0.50, 0.90, 0.99 };
        for (int k = 0; k < 3; k++) {
                double x = q[k] * (double)(n - 1);
                size_t i = (size_t)x;
                double f = x - (double)i;
                *p[k] = (i + 1 < n ? v[i] * (1 - f) + v[i + 1] * f : v[i]) * 1e3;
        }
}

static double sec(sim_ps t) { return (double)t * 1e-12; }

static double ttft_of(const struct serve_req *r) { return sec(r->first_tok_ps - r->arrival_ps); }

static double e2el_of(const struct serve_req *r) { return sec(r->finish_ps - r->arrival_ps); }

/* s per output token after the first (requests of 2 or more tokens). */
static double tpot_of(const struct serve_req *r)
{
        return sec(r->finish_ps - r->first_tok_ps) / (double)(r->output - 1);
}

void serve_summarise(const struct serve_opts *o, struct serve_outcome *oc,
                     struct serve_summary *s)
{
        size_t n = oc->n_reqs;
        *s = (struct serve_summary){ .requests = n, .iterations = oc->n_iters,
                                     .preemptions = oc->preemptions, .energy_j = oc->energy_j,
                                     .wall_s = oc->wall_s };
        double *ttft = malloc((n ? n : 1) * sizeof *ttft);
        double *tpot = malloc((n ? n : 1) * sizeof *tpot);
        double *e2el = malloc((n ? n : 1) * sizeof *e2el);
        double *itl = malloc((oc->n_itl ? oc->n_itl : 1) * sizeof *itl);
        if (!ttft || !tpot || !e2el || !itl) {
                free(ttft), free(tpot), free(e2el), free(itl);
                return;
        }
        for (size_t i = 0; i < oc->n_itl; i++)
                itl[i] = sec(oc->itl_ps[i]);
        size_t nt = 0, np = 0, good = 0;
        double tokens = 0, req_j = 0;
        for (size_t i = 0; i < n; i++) {
                const struct serve_req *r = &oc->reqs[i];
                if (!r->done)
                        continue;
                ttft[s->completed] = ttft_of(r);
                e2el[s->completed] = e2el_of(r);
                s->completed++;
                nt++;
                tokens += (double)r->output;
                req_j += r->energy_j;
                bool ok = !(o->slo_ttft_ms > 0 && ttft_of(r) * 1e3 > o->slo_ttft_ms);
                if (r->output > 1) {
                        tpot[np++] = tpot_of(r);
                        ok = ok && !(o->slo_tpot_ms > 0 && tpot_of(r) * 1e3 > o->slo_tpot_ms);
                }
                good += ok;
        }
        s->duration_s = oc->t_last_ps > oc->t_first_ps ? sec(oc->t_last_ps - oc->t_first_ps) : 0;
        double dur = s->duration_s > 0 ? s->duration_s : 1;
        s->throughput_rps = (double)s->completed / dur;
        s->throughput_tok_s = tokens / dur;
        s->goodput_rps = (double)good / dur;
        s->mean_in_system = oc->in_system_area / dur;
        s->mean_queue = oc->queue_area / dur;
        s->mean_batch = oc->n_iters ? oc->batch_sum / (double)oc->n_iters : 0;
        s->kv_peak_frac = oc->kv_blocks ? (double)oc->kv_peak / (double)oc->kv_blocks : 0;
        s->j_per_token = tokens > 0 ? oc->energy_j / tokens : 0;
        s->j_per_request = s->completed ? req_j / (double)s->completed : 0;
        stat_of(ttft, nt, &s->ttft);
        stat_of(tpot, np, &s->tpot);
        stat_of(e2el, s->completed, &s->e2el);
        stat_of(itl, oc->n_itl, &s->itl);
        free(ttft), free(tpot), free(e2el), free(itl);
}

bool serve_meets_slo(const struct serve_opts *o, const struct serve_summary *s)
{
        return s->completed == s->requests && s->ttft.p99 <= o->slo_ttft_ms &&
               s->tpot.p99 <= o->slo_tpot_ms;
}

static json_t *stat_json(const struct serve_stat *st)
{
        return json_pack("{s:o, s:o, s:o, s:o}", "mean", jsonw_real(st->mean), "p50",
                         jsonw_real(st->p50), "p90", jsonw_real(st->p90), "p99",
                         jsonw_real(st->p99));
}

char *serve_summary_json(const struct serve_summary *s, double capacity_qps)
{
        json_t *j = json_pack(
                "{s:I, s:I, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:I, s:I, s:o, s:o}",
                "requests", (json_int_t)s->requests, "completed", (json_int_t)s->completed,
                "duration_s", jsonw_real(s->duration_s), "throughput_rps",
                jsonw_real(s->throughput_rps), "throughput_tok_s",
                jsonw_real(s->throughput_tok_s), "goodput_rps", jsonw_real(s->goodput_rps),
                "ttft_ms", stat_json(&s->ttft), "tpot_ms", stat_json(&s->tpot), "e2el_ms",
                stat_json(&s->e2el), "mean_in_system", jsonw_real(s->mean_in_system),
                "kv_peak_frac", jsonw_real(s->kv_peak_frac), "preemptions",
                (json_int_t)s->preemptions, "iterations", (json_int_t)s->iterations,
                "energy_j", jsonw_real(s->energy_j), "j_per_token",
                jsonw_real(s->j_per_token));
        if (j)
                json_object_set_new(j, "j_per_request", jsonw_real(s->j_per_request));
        if (j && capacity_qps >= 0)
                json_object_set_new(j, "capacity_qps", jsonw_real(capacity_qps));
        if (j)
                json_object_set_new(j, "wall_s", jsonw_fixed(s->wall_s, 3));
        char *buf = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);
        if (!f) {
                json_decref(j);
                return NULL;
        }
        int rc = jsonw_print(f, j, 0);
        if (fclose(f) != 0 || rc < 0) {
                free(buf);
                return NULL;
        }
        return buf;
}

static void stat_line(FILE *f, const char *name, const struct serve_stat *st)
{
        fprintf(f, "%-5s ms   mean %10.3f  p50 %10.3f  p90 %10.3f  p99 %10.3f\n", name,
                st->mean, st->p50, st->p90, st->p99);
}

char *serve_summary_text(const struct serve_opts *o, const struct serve_summary *s,
                         const struct serve_steps *st, double capacity_qps)
{
        char *buf = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);
        if (!f)
                return NULL;
        if (capacity_qps >= 0)
                fprintf(f, "capacity: %.4g req/s with p99 TTFT <= %g ms and p99 TPOT <= %g ms; "
                        "the run at that rate:\n", capacity_qps, o->slo_ttft_ms, o->slo_tpot_ms);
        fprintf(f, "serve %s, policy %s, tp %d, dp %d: %llu requests, %llu completed in "
                "%.3f s simulated\n", st->model->name,
                o->policy == SERVE_VLLM ? "vllm" : o->policy == SERVE_SARATHI ? "sarathi"
                                                                              : "static",
                o->tp, o->dp, (unsigned long long)s->requests,
                (unsigned long long)s->completed, s->duration_s);
        fprintf(f, "throughput   %.4f req/s  %.1f output tok/s  goodput %.4f req/s\n",
                s->throughput_rps, s->throughput_tok_s, s->goodput_rps);
        stat_line(f, "TTFT", &s->ttft);
        stat_line(f, "TPOT", &s->tpot);
        stat_line(f, "ITL", &s->itl);
        stat_line(f, "E2EL", &s->e2el);
        fprintf(f, "in system %.3f (mean)  queue %.3f (mean)  batch %.2f (mean per iteration)\n",
                s->mean_in_system, s->mean_queue, s->mean_batch);
        fprintf(f, "KV cache peak %.1f%%  preemptions %llu  iterations %llu\n",
                100 * s->kv_peak_frac, (unsigned long long)s->preemptions,
                (unsigned long long)s->iterations);
        fprintf(f, "energy %.4g J  %.4g J per output token  %.4g J per request (mean)\n",
                s->energy_j, s->j_per_token, s->j_per_request);
        char how[160] = "";
        if (st->tt)
                snprintf(how, sizeof how, " tt-transformers' programs at %s precision on %s "
                         "(src/llm/tt_llm_model.c),", st->ask.prec.name, st->ask.machine);
        fprintf(f, "step model:%s %llu shapes simulated in %.1f s; serving loop %.2f s\n",
                how, (unsigned long long)st->sims, st->sim_wall_s, s->wall_s);
        if (fclose(f) != 0) {
                free(buf);
                return NULL;
        }
        return buf;
}

/* ---- --out DIR ---- */

/* Replace dir/name with what write puts in a memory stream. */
static int save(const char *dir, const char *name,
                void (*write)(FILE *f, const struct serve_outcome *oc, const void *arg),
                const struct serve_outcome *oc, const void *arg, struct diag *d)
{
        char path[4200];
        if ((size_t)snprintf(path, sizeof path, "%s/%s", dir, name) >= sizeof path) {
                diag_error(d, "--out: the path of %s under %s is too long", name, dir);
                return -ENAMETOOLONG;
        }
        char *buf = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);
        int rc = -ENOMEM;
        if (f) {
                write(f, oc, arg);
                rc = fclose(f) == 0 ? fs_write_atomic(path, buf, len) : -ENOMEM;
        }
        free(buf);
        if (rc < 0)
                diag_error(d, "--out: cannot write %s: %s", path, strerror(-rc));
        return rc;
}

static void w_requests(FILE *f, const struct serve_outcome *oc, const void *arg)
{
        (void)arg;
        fputs("id,replica,arrival_s,prompt_tokens,output_tokens,ttft_ms,tpot_ms,e2el_ms,"
              "max_itl_ms,preemptions,energy_j,status\n", f);
        for (size_t i = 0; i < oc->n_reqs; i++) {
                const struct serve_req *r = &oc->reqs[i];
                fprintf(f, "%u,%u,%.9f,%lld,%lld,", r->id, r->replica, sec(r->arrival_ps),
                        (long long)r->prompt, (long long)r->output);
                if (!r->done) {
                        fprintf(f, ",,,,%u,%.9g,%s\n", r->preemptions, r->energy_j,
                                r->dropped ? "dropped" : "unfinished");
                        continue;
                }
                fprintf(f, "%.6f,", ttft_of(r) * 1e3);
                if (r->output > 1)
                        fprintf(f, "%.6f", tpot_of(r) * 1e3);
                fprintf(f, ",%.6f,%.6f,%u,%.9g,ok\n", e2el_of(r) * 1e3,
                        sec(r->max_itl_ps) * 1e3, r->preemptions, r->energy_j);
        }
}

static void w_iters(FILE *f, const struct serve_outcome *oc, const void *arg)
{
        (void)arg;
        fputs("replica,start_s,end_s,batch,decodes,prefill_tokens,waiting,kv_frac\n", f);
        for (size_t i = 0; i < oc->n_iters; i++) {
                const struct serve_iter *it = &oc->iters[i];
                fprintf(f, "%u,%.9f,%.9f,%d,%d,%lld,%d,%.6f\n", it->replica, sec(it->start_ps),
                        sec(it->end_ps), it->batch, it->n_dec, (long long)it->prefill_tokens,
                        it->waiting, it->kv_frac);
        }
}

static void w_summary(FILE *f, const struct serve_outcome *oc, const void *arg)
{
        (void)oc;
        fputs(arg, f);
}

/* Chrome trace (Perfetto): a process per replica, a slice per iteration
 * (args: batch, decodes, prefill tokens), a flow per request from its
 * first iteration to its last. Times in us. */
static void w_trace(FILE *f, const struct serve_outcome *oc, const void *arg)
{
        const struct serve_opts *o = arg;
        fputs("{\"displayTimeUnit\": \"ms\", \"traceEvents\": [\n", f);
        for (int r = 0; r < o->dp; r++)
                fprintf(f, "{\"ph\": \"M\", \"name\": \"process_name\", \"pid\": %d, \"tid\": 0, "
                        "\"args\": {\"name\": \"replica %d\"}},\n", r, r);
        for (size_t i = 0; i < oc->n_iters; i++) {
                const struct serve_iter *it = &oc->iters[i];
                fprintf(f, "{\"ph\": \"X\", \"name\": \"%s\", \"pid\": %u, \"tid\": 0, "
                        "\"ts\": %.3f, \"dur\": %.3f, \"args\": {\"batch\": %d, \"decodes\": %d, "
                        "\"prefill_tokens\": %lld, \"waiting\": %d}},\n",
                        it->prefill_tokens ? (it->n_dec ? "mixed" : "prefill") : "decode",
                        it->replica, sec(it->start_ps) * 1e6, sec(it->end_ps - it->start_ps) * 1e6,
                        it->batch,
                        it->n_dec, (long long)it->prefill_tokens, it->waiting);
        }
        for (size_t i = 0; i < oc->n_reqs; i++) {
                const struct serve_req *r = &oc->reqs[i];
                if (!r->done)
                        continue;
                const struct serve_iter *a = &oc->iters[oc->flows[i].first];
                const struct serve_iter *b = &oc->iters[oc->flows[i].last];
                fprintf(f, "{\"ph\": \"s\", \"name\": \"request\", \"cat\": \"request\", "
                        "\"id\": %zu, \"pid\": %u, \"tid\": 0, \"ts\": %.3f},\n"
                        "{\"ph\": \"f\", \"bp\": \"e\", \"name\": \"request\", "
                        "\"cat\": \"request\", \"id\": %zu, \"pid\": %u, \"tid\": 0, "
                        "\"ts\": %.3f},\n", i, a->replica, sec(a->start_ps) * 1e6, i, b->replica,
                        sec(b->start_ps) * 1e6);
        }
        fputs("{\"ph\": \"M\", \"name\": \"process_sort_index\", \"pid\": 0, \"tid\": 0, "
              "\"args\": {\"sort_index\": 0}}\n]}\n", f);
}

/* figures/latency_cdf.dat: one block per metric (TTFT, TPOT, E2EL): ms and
 * the fraction of requests at or below. */
static void w_cdf(FILE *f, const struct serve_outcome *oc, const void *arg)
{
        (void)arg;
        size_t n = oc->n_reqs;
        double *v = malloc((n ? n : 1) * sizeof *v);
        if (!v)
                return;
        for (int m = 0; m < 3; m++) {
                size_t k = 0;
                for (size_t i = 0; i < n; i++) {
                        const struct serve_req *r = &oc->reqs[i];
                        if (!r->done || (m == 1 && r->output < 2))
                                continue;
                        v[k++] = m == 0 ? ttft_of(r) : m == 1 ? tpot_of(r) : e2el_of(r);
                }
                qsort(v, k, sizeof *v, cmp_double);
                fprintf(f, "# %s: ms fraction\n", m == 0 ? "TTFT" : m == 1 ? "TPOT" : "E2EL");
                for (size_t i = 0; i < k; i++)
                        fprintf(f, "%.6f %.6f\n", v[i] * 1e3, (double)(i + 1) / (double)k);
                fputs(k ? "\n\n" : "0 0\n\n\n", f);
        }
        free(v);
}

static void w_cdf_gp(FILE *f, const struct serve_outcome *oc, const void *arg)
{
        (void)oc, (void)arg;
        fputs("# Latency CDFs of cubesim serve: cd DIR/figures && gnuplot latency_cdf.gp\n"
              "reset\nset terminal pngcairo size 1200,400\nset output 'latency_cdf.png'\n"
              "set multiplot layout 1,3\nset ylabel 'fraction of requests'\n"
              "set yrange [0:1]\nset grid\nset key off\n"
              "set xlabel 'TTFT (ms)'\nplot 'latency_cdf.dat' index 0 with steps lw 2\n"
              "set xlabel 'TPOT (ms)'\nplot 'latency_cdf.dat' index 1 with steps lw 2\n"
              "set xlabel 'E2EL (ms)'\nplot 'latency_cdf.dat' index 2 with steps lw 2\n"
              "unset multiplot\nset terminal svg size 1200,400\n"
              "set output 'latency_cdf.svg'\nset multiplot layout 1,3\n"
              "set xlabel 'TTFT (ms)'\nplot 'latency_cdf.dat' index 0 with steps lw 2\n"
              "set xlabel 'TPOT (ms)'\nplot 'latency_cdf.dat' index 1 with steps lw 2\n"
              "set xlabel 'E2EL (ms)'\nplot 'latency_cdf.dat' index 2 with steps lw 2\n"
              "unset multiplot\n", f);
}

static void w_timeline_gp(FILE *f, const struct serve_outcome *oc, const void *arg)
{
        (void)oc, (void)arg;
        static const char panels[] =
                "set ylabel 'batch (sequences)'\nset yrange [0:*]\n"
                "plot '../iterations.csv' every ::1 using 2:4 with steps lw 1\n"
                "set ylabel 'KV cache in use (fraction)'\nset yrange [0:1]\n"
                "plot '../iterations.csv' every ::1 using 3:8 with steps lw 1\n"
                "set yrange [0:*]\nset ylabel 'queued requests'\n"
                "plot '../iterations.csv' every ::1 using 2:7 with steps lw 1\n"
                "unset multiplot\n";
        fprintf(f, "# Batch, KV use and queue over time (every replica's iterations):\n"
                "#   cd DIR/figures && gnuplot timeline.gp\n"
                "reset\nset datafile separator ','\nset grid\nset key off\nset xlabel 'time (s)'\n"
                "set terminal pngcairo size 1000,900\nset output 'timeline.png'\n"
                "set multiplot layout 3,1\n%s"
                "set terminal svg size 1000,900\nset output 'timeline.svg'\n"
                "set multiplot layout 3,1\n%s", panels, panels);
}

static int make_dir(const char *path, struct diag *d)
{
        int rc = fs_mkdir_p(path);
        if (rc == 0)
                return 0;
        diag_error(d, "--out: cannot create %s: %s", path, strerror(-rc));
        return -1;
}

int serve_write_outputs(const struct serve_opts *o, const struct serve_outcome *oc,
                        const char *summary_json, struct diag *d)
{
        const char *dir = o->out_dir;
        char figs[4200];
        snprintf(figs, sizeof figs, "%s/figures", dir);
        if (make_dir(dir, d) < 0 || make_dir(figs, d) < 0)
                return -1;
        if (save(dir, "requests.csv", w_requests, oc, NULL, d) < 0 ||
            save(dir, "iterations.csv", w_iters, oc, NULL, d) < 0 ||
            save(dir, "summary.json", w_summary, oc, summary_json, d) < 0 ||
            save(dir, "trace.json", w_trace, oc, o, d) < 0 ||
            save(figs, "latency_cdf.dat", w_cdf, oc, NULL, d) < 0 ||
            save(figs, "latency_cdf.gp", w_cdf_gp, oc, NULL, d) < 0 ||
            save(figs, "timeline.gp", w_timeline_gp, oc, NULL, d) < 0)
                return -1;
        if (o->figures) {
                char scripts[2][300] = { "latency_cdf.gp", "timeline.gp" };
                int rc = sweep_gnuplot(figs, scripts, 2);
                if (rc < 0 && rc != -ENOENT)
                        diag_report(d, DIAG_WARNING, NULL, 0, 0, "--out: gnuplot failed on the "
                                    "figures (see %s/gnuplot.log)", figs);
        }
        return 0;
}
