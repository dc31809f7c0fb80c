/* serve/serve_steps.c: the time and energy of a serving iteration from
 * cubesim's own model step (docs/adr/0027-serving.md).
 *
 * One iteration is layers x one decoder layer (kernel llm_layer) plus the
 * LM head (kernel llm_lm_head) of the sequences that emit a token. The
 * layer of a batch is simulated as one of these, through cubesim_run:
 *   - decodes alone: llm_layer batch=B q_len=1 past_len=P, P the decodes'
 *     mean KV length (the same KV bytes as the batch's);
 *   - one prefill chunk alone: llm_layer batch=1 q_len=Q past_len=P;
 *   - anything else (several chunks, chunks and decodes): the layer's
 *     work but attention for all T token rows (a chunk of T rows, less
 *     that chunk's attention alone, part=attention), plus each chunk's
 *     attention and the decodes' attention, each alone.
 * Each family's shapes are simulated once and cached. Unless exact, a
 * shape is read off a grid of 8 points per octave in each extent
 * (every integer up to 16), linearly interpolated between the grid
 * points around it; --check-steps measures that against exact
 * simulation.
 *
 * On a Tenstorrent machine (a machine of Tensix cores, topologies/tt_*.yaml)
 * an iteration is what tt-transformers runs under vLLM, timed by the
 * program model llm-step and validate-tt-llm use (src/llm/tt_llm_model.c):
 * the decodes as one decode iteration of their batch at their mean
 * context (tt_decode_step), then each prefill chunk as one user's prefill
 * (tt_prefill_step), one after another; each includes its LM head. The
 * same grid applies. */
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/ckd.h"
#include "base/params.h"
#include "base/util.h"
#include "serve/serve_int.h"
#include "topo/topo.h"

double serve_weight_bytes(const struct llm_model *m, int bytes_per_elem)
{
        double h = (double)m->hidden, d = (double)m->head_dim;
        double per_layer = h * (double)(m->q_heads + 2 * m->kv_heads) * d +
                           (double)m->q_heads * d * h + 3 * h * (double)m->ffn + 2 * h;
        /* the layers, the embedding and the LM head (untied), the final norm */
        return bytes_per_elem * (per_layer * (double)m->layers + 2 * h * (double)m->vocab + h);
}

double serve_kv_token_bytes(const struct llm_model *m, int bytes_per_elem)
{
        return 2.0 * bytes_per_elem * (double)m->kv_heads * (double)m->head_dim *
               (double)m->layers;
}

static uint64_t shape_hash(int family, int64_t x, int64_t y)
{
        uint64_t h = (uint64_t)family * 0x9e3779b97f4a7c15ull ^
                     (uint64_t)x * 0xbf58476d1ce4e5b9ull ^ (uint64_t)y * 0x94d049bb133111ebull;
        return h ^ (h >> 31);
}

static struct serve_shape *slot(struct serve_shape *tab, size_t cap, int family, int64_t x,
                                int64_t y)
{
        for (size_t i = shape_hash(family, x, y) & (cap - 1);; i = (i + 1) & (cap - 1))
                if (tab[i].x < 0 || (tab[i].family == family && tab[i].x == x && tab[i].y == y))
                        return &tab[i];
}

static bool grow(struct serve_steps *s)
{
        size_t cap = s->cap ? s->cap * 2 : 256;
        struct serve_shape *t = malloc(cap * sizeof *t);
        if (!t)
                return false;
        for (size_t i = 0; i < cap; i++)
                t[i].x = -1;
        for (size_t i = 0; i < s->cap; i++)
                if (s->tab[i].x >= 0)
                        *slot(t, cap, s->tab[i].family, s->tab[i].x, s->tab[i].y) = s->tab[i];
        free(s->tab);
        s->tab = t;
        s->cap = cap;
        return true;
}

/* The library's messages (one a line) into d. */
static void take_messages(struct diag *d)
{
        for (const char *t = cubesim_messages(); *t;) {
                size_t len = strcspn(t, "\n");
                diag_add_text(d, DIAG_ERROR, t, len);
                t += len + (t[len] == '\n');
        }
}

/* The kernel time and energy of one run from its JSON. */
static void read_result(const cubesim_result *r, double *ps, double *j)
{
        struct cubesim_summary sum;
        cubesim_result_summary(r, &sum);
        *ps = (double)sum.kernel_ps;
        *j = 0;
        json_t *root = json_loads(cubesim_result_json(r), 0, NULL);
        json_t *e = json_object_get(root, "energy_j");
        if (json_is_number(e))
                *j = json_number_value(e);
        json_decref(root);
}

/* A Tenstorrent machine's shape (SERVE_DEC_ALL or SERVE_CHUNK_ALL) into
 * *e from tt-transformers' programs; false after a failure (s->rc). */
static bool simulate_tt(struct serve_steps *s, int family, int64_t x, int64_t y,
                        struct serve_shape *e)
{
        struct tt_cost c = { 0 };
        bool dec = family == SERVE_DEC_ALL;
        double t0 = util_now_s();
        int rc = dec ? tt_decode_step(s->tt, &s->ask, x, y, &c) :
                 tt_prefill_step(s->tt, &s->ask, x, y, &c);
        s->sim_wall_s += util_now_s() - t0;
        s->sims++;
        if (rc) {
                diag_error(s->d, "the model step (tt-transformers' %s of %lld %s after %lld "
                           "cached) failed", dec ? "decode" : "prefill", (long long)x,
                           dec ? "users" : "tokens", (long long)y);
                s->rc = rc == 2 ? CUBESIM_BAD_INPUT : CUBESIM_FAILED;
                return false;
        }
        *e = (struct serve_shape){ .x = x, .y = y, .family = family, .ps = c.ns * 1e3,
                                   .j = c.j };
        return true;
}

/* Simulate one shape: the entry, or NULL after a failure (s->rc). */
static const struct serve_shape *simulate(struct serve_steps *s, int family, int64_t x,
                                          int64_t y)
{
        if ((s->n + 1) * 2 > s->cap && !grow(s)) {
                diag_error(s->d, "out of memory for the step cache");
                s->rc = CUBESIM_BAD_INPUT;
                return NULL;
        }
        struct serve_shape *e = slot(s->tab, s->cap, family, x, y);
        if (e->x >= 0)
                return e;
        if (s->tt) {
                if (!simulate_tt(s, family, x, y, e))
                        return NULL;
                s->n++;
                return e;
        }
        char sets[8][64];
        size_t n = 0;
        bool head = family == SERVE_HEAD;
        bool dec = family == SERVE_DEC_ALL || family == SERVE_DEC_ATT;
        snprintf(sets[n++], 64, "model=%s", s->model->name);
        snprintf(sets[n++], 64, "batch=%lld", (long long)(dec || head ? x : 1));
        snprintf(sets[n++], 64, "dtype=%s", s->dtype);
        snprintf(sets[n++], 64, "weight_dtype=%s", s->dtype);
        if (!head) {
                snprintf(sets[n++], 64, "q_len=%lld", (long long)(dec ? 1 : x));
                snprintf(sets[n++], 64, "past_len=%lld", (long long)y);
                snprintf(sets[n++], 64, "tp=%d", s->tp);
                snprintf(sets[n++], 64, "part=%s",
                         family == SERVE_DEC_ATT || family == SERVE_CHUNK_ATT ? "attention"
                                                                               : "all");
        }
        const char *argv[8];
        for (size_t i = 0; i < n; i++)
                argv[i] = sets[i];
        cubesim_result *r = NULL;
        double t0 = util_now_s();
        int rc = cubesim_run(head ? "llm_lm_head" : "llm_layer", s->machine, argv, n, NULL, &r);
        s->sim_wall_s += util_now_s() - t0;
        s->sims++;
        if (rc != CUBESIM_OK) {
                take_messages(s->d);
                diag_error(s->d, "the model step %s %s %s %s failed", head ? "llm_lm_head"
                           : "llm_layer", sets[1], n > 4 ? sets[4] : "", n > 5 ? sets[5] : "");
                cubesim_result_free(r);
                s->rc = rc;
                return NULL;
        }
        *e = (struct serve_shape){ .x = x, .y = y, .family = family };
        read_result(r, &e->ps, &e->j);
        cubesim_result_free(r);
        s->n++;
        return e;
}

/* The grid points around v: *lo <= v <= *hi, the same when v is on it. */
static void grid(int64_t v, int64_t *lo, int64_t *hi)
{
        if (v <= 16) {
                *lo = *hi = v;
                return;
        }
        int k = 63 - __builtin_clzll((unsigned long long)v);
        int64_t step = (int64_t)1 << (k - 3);
        *lo = v / step * step;
        *hi = *lo == v ? v : *lo + step;
}

/* A family's time and energy at (x, y): simulated, or interpolated. */
static void lookup(struct serve_steps *s, int family, int64_t x, int64_t y, bool exact,
                   double *ps, double *j)
{
        *ps = *j = 0;
        if (s->rc != CUBESIM_OK)
                return;
        int64_t x0 = x, x1 = x, y0 = y, y1 = y;
        if (!exact && !s->exact) {
                grid(x, &x0, &x1);
                if (family != SERVE_HEAD)
                        grid(y, &y0, &y1);
        }
        s->off_grid = s->off_grid || x1 != x0 || y1 != y0;
        double ax = x1 > x0 ? (double)(x - x0) / (double)(x1 - x0) : 0;
        double ay = y1 > y0 ? (double)(y - y0) / (double)(y1 - y0) : 0;
        int64_t xs[2] = { x0, x1 }, ys[2] = { y0, y1 };
        double wx[2] = { 1 - ax, ax }, wy[2] = { 1 - ay, ay };
        for (int a = 0; a < 2; a++)
                for (int b = 0; b < 2; b++) {
                        double w = wx[a] * wy[b];
                        if (w == 0)
                                continue;
                        const struct serve_shape *e = simulate(s, family, xs[a], ys[b]);
                        if (!e)
                                return;
                        *ps += w * e->ps;
                        *j += w * e->j;
                }
}

/* Keep a copy of b, an off-grid iteration, in the reservoir. */
static void keep_sample(struct serve_steps *s, const struct serve_batch *b)
{
        uint64_t k = s->seen++;
        if (k >= s->want) {
                s->rng += 0x9e3779b97f4a7c15ull;
                uint64_t z = s->rng * 0xbf58476d1ce4e5b9ull;
                k = (z ^ (z >> 31)) % (k + 1);
                if (k >= s->want)
                        return;
        } else {
                s->n_samples++;
        }
        struct serve_batch *d = &s->samples[k];
        struct serve_chunk *c = realloc(d->chunks, (b->n_chunks ? b->n_chunks : 1) * sizeof *c);
        if (!c)
                return;
        memcpy(c, b->chunks, b->n_chunks * sizeof *c);
        *d = *b;
        d->chunks = c;
}

void serve_steps_check(struct serve_steps *s, double *max_err, double *mean_err, size_t *n)
{
        double sum = 0;
        *max_err = 0;
        /* The check's own lookups are no iterations of the run: sampling
         * them would overwrite the reservoir while it is read (a sample's
         * chunks freed under the copy of itself). */
        size_t want = s->want;
        s->want = 0;
        for (size_t i = 0; i < s->n_samples && s->rc == CUBESIM_OK; i++) {
                double grid_ps, exact_ps, j;
                serve_steps_time(s, &s->samples[i], false, &grid_ps, &j);
                serve_steps_time(s, &s->samples[i], true, &exact_ps, &j);
                double e = exact_ps > 0 ? fabs(grid_ps - exact_ps) / exact_ps : 0;
                sum += e;
                if (e > *max_err)
                        *max_err = e;
        }
        s->want = want;
        *n = s->n_samples;
        *mean_err = s->n_samples ? sum / (double)s->n_samples : 0;
}

/* A Tenstorrent machine's iteration: the decode iteration of the decodes,
 * then each chunk's prefill (tt-transformers prefills one user at a time). */
static void time_tt(struct serve_steps *s, const struct serve_batch *b, int64_t mean_past,
                    bool exact, double *ps, double *j)
{
        double p, e;
        *ps = *j = 0;
        if (b->n_dec) {
                lookup(s, SERVE_DEC_ALL, b->n_dec, mean_past, exact, &p, &e);
                *ps += p, *j += e;
        }
        for (size_t i = 0; i < b->n_chunks; i++) {
                lookup(s, SERVE_CHUNK_ALL, b->chunks[i].q, b->chunks[i].past, exact, &p, &e);
                *ps += p, *j += e;
        }
}

void serve_steps_time(struct serve_steps *s, const struct serve_batch *b, bool exact,
                      double *ps, double *j)
{
        s->off_grid = false;
        double lp = 0, lj = 0, p, e;
        int64_t mean_past = b->n_dec ? (b->dec_past + b->n_dec / 2) / b->n_dec : 0;
        if (s->tt) {
                time_tt(s, b, mean_past, exact, ps, j);
                if (s->off_grid && !exact && s->want)
                        keep_sample(s, b);
                return;
        }
        if (b->n_chunks == 0 && b->n_dec) {
                lookup(s, SERVE_DEC_ALL, b->n_dec, mean_past, exact, &lp, &lj);
        } else if (b->n_chunks == 1 && b->n_dec == 0) {
                lookup(s, SERVE_CHUNK_ALL, b->chunks[0].q, b->chunks[0].past, exact, &lp, &lj);
        } else if (b->n_chunks) {
                int64_t rows = b->n_dec;
                for (size_t i = 0; i < b->n_chunks; i++)
                        rows = sat_add_u64((uint64_t)rows, (uint64_t)b->chunks[i].q) > INT64_MAX
                                       ? INT64_MAX
                                       : rows + b->chunks[i].q;
                lookup(s, SERVE_CHUNK_ALL, rows, 0, exact, &lp, &lj);
                lookup(s, SERVE_CHUNK_ATT, rows, 0, exact, &p, &e);
                lp -= p, lj -= e;
                for (size_t i = 0; i < b->n_chunks; i++) {
                        lookup(s, SERVE_CHUNK_ATT, b->chunks[i].q, b->chunks[i].past, exact, &p,
                               &e);
                        lp += p, lj += e;
                }
                if (b->n_dec) {
                        lookup(s, SERVE_DEC_ATT, b->n_dec, mean_past, exact, &p, &e);
                        lp += p, lj += e;
                }
        }
        double layers = (double)s->model->layers;
        *ps = layers * lp;
        *j = layers * lj;
        if (b->n_head) {
                lookup(s, SERVE_HEAD, b->n_head, 0, exact, &p, &e);
                *ps += p;
                *j += e;
        }
        if (s->off_grid && !exact && s->want)
                keep_sample(s, b);
}

int serve_steps_init(struct serve_steps *s, const struct serve_opts *o,
                     const struct llm_model *m, struct diag *d)
{
        *s = (struct serve_steps){ .model = m, .tp = o->tp, .dtype = o->precision,
                                   .exact = o->exact_steps, .rc = CUBESIM_OK, .d = d };
        if (o->check_steps && !o->exact_steps) {
                s->samples = calloc(o->check_steps, sizeof *s->samples);
                if (!s->samples) {
                        diag_error(d, "--check-steps %llu: out of memory",
                                   (unsigned long long)o->check_steps);
                        return -1;
                }
                s->want = o->check_steps;
                s->rng = o->seed;
        }
        if (cubesim_machine_load(o->topo_path, &s->machine) != CUBESIM_OK) {
                take_messages(d);
                return -1;
        }
        for (size_t i = 0; i < o->n_sets; i++) {
                const char *eq = strchr(o->sets[i], '=');
                char key[256];
                if (!eq || eq == o->sets[i] || (size_t)(eq - o->sets[i]) >= sizeof key) {
                        diag_error(d, "--set %s: expected key=value (a topology parameter)",
                                   o->sets[i]);
                        continue;
                }
                snprintf(key, sizeof key, "%.*s", (int)(eq - o->sets[i]), o->sets[i]);
                if (cubesim_machine_set(s->machine, key, eq + 1) != CUBESIM_OK)
                        take_messages(d);
        }
        if (d->n_errors)
                return -1;
        if (tt_machine_is_tensix(cubesim_machine_topo(s->machine))) {
                struct params none;
                params_init(&none);
                s->tt = calloc(1, sizeof *s->tt);
                if (!s->tt) {
                        diag_error(d, "out of memory for the step model");
                        return -1;
                }
                tt_runner_options(&none, d, s->tt);
        }
        return 0;
}

int serve_steps_tt(struct serve_steps *s, struct serve_opts *o, int64_t *blocks,
                   struct diag *d)
{
        const struct topo *t = cubesim_machine_topo(s->machine);
        struct tt_ask *a = &s->ask;
        if (!o->precision)
                o->precision = "performance";
        /* the longest prefill step: sarathi's budget, else a prefill
         * iteration's tokens (tt-transformers prefills one user at a time) */
        *a = (struct tt_ask){ .m = s->model, .batch = 1, .prompt = o->kv_block, .tp = o->tp,
                              .dp = 1, .machine = t->name,
                              .chunk = o->policy == SERVE_SARATHI ? o->chunk_tokens
                                                                  : o->max_batch_tokens };
        if (!tt_precision_get(o->precision, s->model, &a->prec))
                diag_error(d, "--precision %s: expected performance, accuracy, ff13_bfp4 or bf16 "
                           "on a Tenstorrent machine ('%s')", o->precision, t->name);
        if (o->max_batch > TT_TILE)
                diag_error(d, "--max-batch %lld: a Tenstorrent machine ('%s') decodes at most %d "
                           "users an iteration (tt-transformers' batch)",
                           (long long)o->max_batch, t->name, TT_TILE);
        if (d->n_errors)
                return -1;
        if (!o->max_batch)
                o->max_batch = TT_TILE;
        struct tt_pred p;
        if (tt_prepare(s->tt, t, a, &p)) {
                if (s->tt->fail == TT_FAIL_FIT && (uint64_t)o->tp < t->system.sips)
                        diag_error(d, "%s; --tp N splits it over N of the machine's %llu "
                                   "chips", s->tt->why, (unsigned long long)t->system.sips);
                else if (s->tt->fail == TT_FAIL_FIT)
                        diag_error(d, "%s", s->tt->why);
                else
                        diag_error(d, "--tp %d: %s", o->tp, s->tt->why);
                return -1;
        }
        *blocks = tt_kv_blocks(s->tt, &p);
        return 0;
}

void serve_steps_fini(struct serve_steps *s)
{
        free(s->tt);
        s->tt = NULL;
        cubesim_machine_free(s->machine);
        free(s->tab);
        for (size_t i = 0; i < s->n_samples; i++)
                free(s->samples[i].chunks);
        free(s->samples);
        s->samples = NULL;
        s->machine = NULL;
        s->tab = NULL;
}
