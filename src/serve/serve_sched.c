/* serve/serve_sched.c: the requests of a serving run (Poisson arrivals
 * and length distributions, or a trace file), the router, the three
 * schedulers over a paged KV cache, and the discrete-event loop over
 * arrivals and iteration ends (docs/serving.md). */
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/ckd.h"
#include "base/fsutil.h"
#include "base/params.h"
#include "base/util.h"
#include "serve/serve_int.h"

#define MAX_TOKENS (1 << 24)         /* prompt or output tokens of one request at most */
#define MAX_REQUESTS 10000000        /* requests of one run at most */
#define TRACE_MAX_BYTES (256u << 20) /* a trace file at most */
#define TRACE_MAX_ERRORS 20          /* problems reported per trace */

/* ---- random numbers (splitmix64: the same stream on every host) ---- */

static uint64_t rng_next(uint64_t *s)
{
        uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
        return z ^ (z >> 31);
}

/* Uniform in (0, 1). */
static double rng_unit(uint64_t *s) { return ((double)(rng_next(s) >> 11) + 0.5) * 0x1p-53; }

static int64_t clamp_tokens(double v)
{
        return v < 1 ? 1 : v > MAX_TOKENS ? MAX_TOKENS : (int64_t)llround(v);
}

static int64_t draw(const struct serve_dist *dist, uint64_t *s)
{
        switch (dist->kind) {
        case SERVE_UNIFORM:
                return (int64_t)dist->a +
                       (int64_t)(rng_next(s) % (uint64_t)(dist->b - dist->a + 1));
        case SERVE_LOGNORMAL: {
                /* Box-Muller; mean a of the distribution itself */
                double u1 = rng_unit(s), u2 = rng_unit(s);
                double z = sqrt(-2 * log(u1)) * cos(2 * M_PI * u2);
                double mu = log(dist->a) - dist->b * dist->b / 2;
                return clamp_tokens(exp(mu + dist->b * z));
        }
        default:
                return (int64_t)dist->a;
        }
}

static bool parse_tokens(const char *s, double *out)
{
        int64_t v;
        if (!params_parse_i64(s, &v) || v < 1 || v > MAX_TOKENS)
                return false;
        *out = (double)v;
        return true;
}

bool serve_dist_parse(const char *opt, const char *text, struct serve_dist *out,
                      struct diag *d)
{
        char buf[128];
        snprintf(buf, sizeof buf, "%s", text);
        char *f[4] = { buf, NULL, NULL, NULL };
        int n = 1;
        for (char *p = buf; *p && n < 4; p++)
                if (*p == ':') {
                        *p = '\0';
                        f[n++] = p + 1;
                }
        bool ok = false;
        if (n == 1) {
                out->kind = SERVE_FIXED;
                ok = parse_tokens(f[0], &out->a);
        } else if (n == 3 && strcmp(f[0], "uniform") == 0) {
                out->kind = SERVE_UNIFORM;
                ok = parse_tokens(f[1], &out->a) && parse_tokens(f[2], &out->b) &&
                     out->a <= out->b;
        } else if (n == 3 && strcmp(f[0], "lognormal") == 0) {
                out->kind = SERVE_LOGNORMAL;
                ok = params_parse_double(f[1], &out->a) && out->a >= 1 && out->a <= MAX_TOKENS &&
                     params_parse_double(f[2], &out->b) && out->b >= 0 && out->b <= 4;
        }
        if (!ok || strlen(text) >= sizeof buf)
                diag_error(d, "%s %s: expected N, uniform:A:B or lognormal:MEAN:SIGMA (tokens "
                           "in [1, %d], A <= B, SIGMA in [0, 4])", opt, text, MAX_TOKENS);
        return ok;
}

/* ---- the requests ---- */

static int push_req(struct serve_req **reqs, size_t *n, size_t *cap, double arrival_s,
                    int64_t prompt, int64_t output, struct diag *d)
{
        if (*n == *cap) {
                struct serve_req *r = util_grow(*reqs, *n, cap, sizeof **reqs, 1024);
                if (!r) {
                        diag_error(d, "out of memory for %zu requests", *n);
                        return -1;
                }
                *reqs = r;
        }
        (*reqs)[*n] = (struct serve_req){ .id = (uint32_t)*n,
                                          .arrival_ps = (sim_ps)llround(arrival_s * 1e12),
                                          .prompt = prompt, .output = output };
        (*n)++;
        return 0;
}

/* Field f (len bytes) of a CSV line as a number; false if it is not. */
static bool csv_number(const char *f, size_t len, bool tokens, double *out)
{
        char buf[64];
        while (len && (*f == ' ' || *f == '\t'))
                f++, len--;
        while (len && (f[len - 1] == ' ' || f[len - 1] == '\t' || f[len - 1] == '\r'))
                len--;
        if (len == 0 || len >= sizeof buf)
                return false;
        memcpy(buf, f, len);
        buf[len] = '\0';
        if (tokens)
                return parse_tokens(buf, out);
        return params_parse_double(buf, out) && *out >= 0 && *out <= 1e9;
}

static const char *const trace_cols[3] = { "arrival_s", "prompt_tokens", "output_tokens" };

static void field_error(struct diag *d, const char *path, unsigned line, unsigned col, int k)
{
        if (k == 0)
                diag_error_at(d, path, line, col, "arrival_s: expected a number of seconds in "
                              "[0, 1e9]");
        else
                diag_error_at(d, path, line, col, "%s: expected an integer in [1, %d]",
                              trace_cols[k], MAX_TOKENS);
}

/* One CSV line into v[3]; false after reporting a problem. */
static bool csv_line(const char *path, unsigned ln, const char *s, size_t len, double v[3],
                     struct diag *d)
{
        size_t at = 0;
        for (int k = 0; k < 3; k++) {
                size_t e = at;
                while (e < len && s[e] != ',')
                        e++;
                if (k < 2 && e == len) {
                        diag_error_at(d, path, ln, (unsigned)len + 1, "expected 3 fields "
                                      "(arrival_s,prompt_tokens,output_tokens), got %d", k + 1);
                        return false;
                }
                if (k == 2 && e < len) {
                        diag_error_at(d, path, ln, (unsigned)e + 1, "expected 3 fields "
                                      "(arrival_s,prompt_tokens,output_tokens), got more");
                        return false;
                }
                if (!csv_number(s + at, e - at, k > 0, &v[k])) {
                        field_error(d, path, ln, (unsigned)at + 1, k);
                        return false;
                }
                at = e + 1;
        }
        return true;
}

/* One JSONL line into v[3]; false after reporting a problem. */
static bool jsonl_line(const char *path, unsigned ln, const char *s, size_t len, double v[3],
                       struct diag *d)
{
        json_error_t je;
        json_t *o = json_loadb(s, len, 0, &je);
        if (!o) {
                diag_error_at(d, path, ln, je.column > 0 ? (unsigned)je.column : 1,
                              "invalid JSON: %s", je.text);
                return false;
        }
        bool ok = json_is_object(o);
        if (!ok)
                diag_error_at(d, path, ln, 1, "expected an object {\"arrival_s\": S, "
                              "\"prompt_tokens\": N, \"output_tokens\": N}");
        for (int k = 0; k < 3 && ok; k++) {
                json_t *x = json_object_get(o, trace_cols[k]);
                v[k] = json_is_number(x) ? json_number_value(x) : -1;
                if (!x) {
                        diag_error_at(d, path, ln, 1, "missing \"%s\"", trace_cols[k]);
                        ok = false;
                } else if (k == 0 ? (!json_is_number(x) || v[0] < 0 || v[0] > 1e9)
                                  : (!json_is_integer(x) || v[k] < 1 || v[k] > MAX_TOKENS)) {
                        field_error(d, path, ln, 1, k);
                        ok = false;
                }
        }
        json_decref(o);
        return ok;
}

static int load_trace(const struct serve_opts *o, struct serve_req **reqs, size_t *n,
                      struct diag *d)
{
        char *text;
        size_t len, cap = 0;
        const char *path = o->trace_path;
        if (fs_read_capped(path, TRACE_MAX_BYTES, &text, &len, d) < 0)
                return -1;
        if (len > TRACE_MAX_BYTES) {
                diag_error_at(d, path, 0, 0, "the trace is larger than %u MiB",
                              TRACE_MAX_BYTES >> 20);
                free(text);
                return -1;
        }
        const char *p = text;
        while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
                p++;
        bool jsonl = *p == '{';
        unsigned ln = 0, errors = d->n_errors;
        double prev = 0;
        bool header_ok = jsonl;
        for (const char *s = text; *s && d->n_errors - errors < TRACE_MAX_ERRORS;) {
                const char *nl = strchr(s, '\n');
                size_t l = nl ? (size_t)(nl - s) : strlen(s);
                const char *line = s;
                s += l + (nl != NULL);
                ln++;
                size_t k = 0;
                while (k < l && (line[k] == ' ' || line[k] == '\t' || line[k] == '\r'))
                        k++;
                if (k == l || line[k] == '#')
                        continue;
                if (!header_ok) {
                        header_ok = true;
                        if ((line[0] < '0' || line[0] > '9') && line[0] != '.') {
                                size_t hl = l && line[l - 1] == '\r' ? l - 1 : l;
                                const char *want = "arrival_s,prompt_tokens,output_tokens";
                                if (hl != strlen(want) || memcmp(line, want, hl) != 0)
                                        diag_error_at(d, path, ln, 1, "expected the header "
                                                      "%s or a first request", want);
                                continue;
                        }
                }
                double v[3];
                if (!(jsonl ? jsonl_line(path, ln, line, l, v, d)
                            : csv_line(path, ln, line, l, v, d)))
                        continue;
                if (v[0] < prev) {
                        diag_error_at(d, path, ln, 1, "arrival_s %g is before the previous "
                                      "request's %g (a trace is in arrival order)", v[0], prev);
                        continue;
                }
                prev = v[0];
                if ((o->duration_s > 0 && v[0] >= o->duration_s) ||
                    (o->requests && *n >= o->requests) || d->n_errors > errors)
                        continue;
                if (*n == MAX_REQUESTS) {
                        diag_error_at(d, path, ln, 1, "more than %d requests", MAX_REQUESTS);
                        break;
                }
                if (push_req(reqs, n, &cap, v[0], (int64_t)v[1], (int64_t)v[2], d) < 0)
                        break;
        }
        if (d->n_errors == errors && *n == 0)
                diag_error_at(d, path, ln, 1, "the trace has no requests%s",
                              o->duration_s > 0 ? " before --duration-s" : "");
        free(text);
        return d->n_errors > errors ? -1 : 0;
}

int serve_requests(const struct serve_opts *o, double qps, struct serve_req **reqs, size_t *n,
                   struct diag *d)
{
        *reqs = NULL;
        *n = 0;
        if (o->trace_path && load_trace(o, reqs, n, d) < 0)
                goto fail;
        if (o->trace_path)
                return 0;
        size_t cap = 0;
        uint64_t s_arr = o->seed, s_len = o->seed ^ 0x5eed1e57ull;
        double t = 0;
        if (qps <= 0)
                qps = o->qps;
        for (uint64_t i = 0; !o->requests || i < o->requests; i++) {
                t += -log(rng_unit(&s_arr)) / qps;
                if (o->duration_s > 0 && t >= o->duration_s)
                        break;
                if (i == MAX_REQUESTS) {
                        diag_error(d, "--duration-s %g at --qps %g: more than %d requests",
                                   o->duration_s, qps, MAX_REQUESTS);
                        goto fail;
                }
                int64_t p = draw(&o->prompt, &s_len), out = draw(&o->output, &s_len);
                if (push_req(reqs, n, &cap, t, p, out, d) < 0)
                        goto fail;
        }
        if (*n == 0) {
                diag_error(d, "--duration-s %g at --qps %g: no request arrives", o->duration_s,
                           qps);
                goto fail;
        }
        return 0;
fail:
        free(*reqs);
        *reqs = NULL;
        *n = 0;
        return -1;
}

/* ---- replicas ---- */

/* A queue of request indexes. */
struct queue {
        uint32_t *v;                 /* entries */
        size_t n;                    /* in use */
};

struct replica {
        struct queue wait;           /* arrived, not running (preempted ones first) */
        struct queue run;            /* admitted, in admission order */
        int64_t free_blocks;         /* KV blocks free */
        bool busy;                   /* an iteration is in flight */
        sim_ps until_ps;             /* its end */
        size_t iter;                 /* its record in the outcome */
        struct serve_chunk *chunks;  /* this iteration's chunks (max_batch) */
        uint32_t *members;           /* its requests, batch order */
        int64_t *q;                  /* tokens each computes this iteration */
        size_t n_members;            /* entries */
};

static void q_remove(struct queue *q, size_t i)
{
        memmove(&q->v[i], &q->v[i + 1], (q->n - i - 1) * sizeof *q->v);
        q->n--;
}

static void q_push_front(struct queue *q, uint32_t id)
{
        memmove(&q->v[1], &q->v[0], q->n * sizeof *q->v);
        q->v[0] = id;
        q->n++;
}

/* The state shared by the loop's steps. */
struct loop {
        const struct serve_opts *o;
        struct serve_steps *steps;
        struct serve_req *reqs;
        struct replica *rep;
        struct serve_outcome *out;
        int64_t block;               /* tokens per KV block */
        int64_t total_blocks;        /* per replica */
        int64_t *used;               /* per replica: blocks in use, for the peak */
        sim_ps now;                  /* the loop's time */
};

static int64_t blocks_for(int64_t tokens, int64_t block) { return (tokens + block - 1) / block; }

static bool in_prefill(const struct serve_req *r) { return r->prefilling; }

/* Hold blocks for r to have tokens in its cache; false if short. */
static bool ensure(struct loop *L, struct replica *rp, struct serve_req *r, int64_t tokens)
{
        int64_t need = blocks_for(tokens, L->block) - r->blocks;
        if (need <= 0)
                return true;
        if (need > rp->free_blocks)
                return false;
        rp->free_blocks -= need;
        r->blocks += need;
        return true;
}

static void release(struct replica *rp, struct serve_req *r)
{
        rp->free_blocks += r->blocks;
        r->blocks = 0;
}

/* Preempt the newest running request: its blocks go, it is recomputed
 * from the front of the queue. */
static uint32_t preempt_last(struct loop *L, struct replica *rp)
{
        uint32_t v = rp->run.v[rp->run.n - 1];
        struct serve_req *r = &L->reqs[v];
        rp->run.n--;
        release(rp, r);
        r->computed = 0;
        r->prefilling = true;
        r->preemptions++;
        L->out->preemptions++;
        q_push_front(&rp->wait, v);
        return v;
}

static void add_member(struct replica *rp, uint32_t id, int64_t q)
{
        rp->members[rp->n_members] = id;
        rp->q[rp->n_members++] = q;
}

/* The decodes of the running requests: each gets a block for its token,
 * preempting the newest when none is free (not in static batches, which
 * hold their blocks from the start). */
static void pick_decodes(struct loop *L, struct replica *rp, struct serve_batch *b)
{
        for (size_t i = 0; i < rp->run.n; i++) {
                uint32_t id = rp->run.v[i];
                struct serve_req *r = &L->reqs[id];
                if (in_prefill(r))
                        continue;
                bool victim = false;
                while (!ensure(L, rp, r, r->computed + 1)) {
                        if (preempt_last(L, rp) == id) {
                                victim = true;
                                break;
                        }
                }
                if (victim)
                        break;
                add_member(rp, id, 1);
                b->n_dec++;
                b->dec_past += r->computed;
        }
}

static void add_chunk(struct replica *rp, struct serve_batch *b, uint32_t id,
                      const struct serve_req *r, int64_t q)
{
        rp->chunks[b->n_chunks++] = (struct serve_chunk){ .q = q, .past = r->computed };
        add_member(rp, id, q);
}

/* A static batch: the requests at the front of the queue, up to the
 * batch size, each holding the blocks of its prompt and whole output. */
static void form_static_batch(struct loop *L, struct replica *rp)
{
        while (rp->wait.n && (int64_t)rp->run.n < L->o->max_batch) {
                uint32_t id = rp->wait.v[0];
                struct serve_req *r = &L->reqs[id];
                if (!ensure(L, rp, r, r->prompt + r->output))
                        break;
                q_remove(&rp->wait, 0);
                rp->run.v[rp->run.n++] = id;
        }
}

/* Admit requests from the front of the queue while they fit: budget
 * tokens (whole prompts unless chunked), the batch size, the KV blocks
 * of the tokens computed. */
static void admit(struct loop *L, struct replica *rp, struct serve_batch *b, int64_t *budget,
                  bool chunked)
{
        const struct serve_opts *o = L->o;
        while (rp->wait.n && (int64_t)rp->run.n < o->max_batch && *budget > 0) {
                uint32_t id = rp->wait.v[0];
                struct serve_req *r = &L->reqs[id];
                int64_t target = r->prompt + r->generated;
                int64_t q = target;
                if (chunked && q > *budget)
                        q = *budget;
                if (!chunked && q > *budget && b->n_chunks + (size_t)b->n_dec > 0)
                        break;
                if (!ensure(L, rp, r, q))
                        break;
                q_remove(&rp->wait, 0);
                rp->run.v[rp->run.n++] = id;
                add_chunk(rp, b, id, r, q);
                *budget -= q;
        }
}

/* The chunks of requests already running and still in prefill
 * (sarathi's partly prefilled prompts, static's batch). */
static void continue_prefills(struct loop *L, struct replica *rp, struct serve_batch *b,
                              int64_t *budget, bool chunked)
{
        for (size_t i = 0; i < rp->run.n && *budget > 0; i++) {
                uint32_t id = rp->run.v[i];
                struct serve_req *r = &L->reqs[id];
                if (!in_prefill(r))
                        continue;
                int64_t q = r->prompt + r->generated - r->computed;
                if (q > *budget && (chunked || b->n_chunks))
                        q = chunked ? *budget : 0;
                if (q == 0 || !ensure(L, rp, r, r->computed + q))
                        break;
                add_chunk(rp, b, id, r, q);
                *budget -= q;
        }
}

/* Choose the next iteration of replica rp; false if there is nothing to
 * do. */
static bool pick(struct loop *L, struct replica *rp, struct serve_batch *b)
{
        const struct serve_opts *o = L->o;
        *b = (struct serve_batch){ .chunks = rp->chunks };
        rp->n_members = 0;
        int64_t budget;
        switch (o->policy) {
        case SERVE_VLLM:
                budget = o->max_batch_tokens;
                admit(L, rp, b, &budget, false);
                if (b->n_chunks == 0)
                        pick_decodes(L, rp, b);
                break;
        case SERVE_SARATHI:
                pick_decodes(L, rp, b);
                budget = o->chunk_tokens - b->n_dec;
                continue_prefills(L, rp, b, &budget, true);
                admit(L, rp, b, &budget, true);
                break;
        case SERVE_STATIC:
                budget = o->max_batch_tokens;
                if (rp->run.n == 0)
                        form_static_batch(L, rp);
                continue_prefills(L, rp, b, &budget, false);
                if (b->n_chunks == 0)
                        pick_decodes(L, rp, b);
                break;
        }
        for (size_t i = 0; i < rp->n_members; i++) {
                const struct serve_req *r = &L->reqs[rp->members[i]];
                if (!in_prefill(r) || r->computed + rp->q[i] >= r->prompt + r->generated)
                        b->n_head++;
        }
        return rp->n_members > 0;
}

/* pick, preempting the newest running request while the running ones
 * can make no progress: without it, partly prefilled sarathi prompts that
 * each need a block, none free, would leave the replica idle for good. */
static bool schedule(struct loop *L, struct replica *rp, struct serve_batch *b)
{
        while (!pick(L, rp, b)) {
                if (rp->run.n < 2)
                        return false;
                preempt_last(L, rp);
        }
        return true;
}

static bool record_iter(struct serve_outcome *out, const struct serve_iter *it)
{
        if (out->n_iters == out->cap_iters) {
                struct serve_iter *v = util_grow(out->iters, out->n_iters, &out->cap_iters,
                                                 sizeof *v, 4096);
                if (!v)
                        return false;
                out->iters = v;
        }
        out->iters[out->n_iters++] = *it;
        return true;
}

static bool record_itl(struct serve_outcome *out, sim_ps gap)
{
        if (out->n_itl == out->cap_itl) {
                sim_ps *v = util_grow(out->itl_ps, out->n_itl, &out->cap_itl, sizeof *v, 4096);
                if (!v)
                        return false;
                out->itl_ps = v;
        }
        out->itl_ps[out->n_itl++] = gap;
        return true;
}

static size_t total_waiting(const struct loop *L)
{
        size_t n = 0;
        for (int i = 0; i < L->o->dp; i++)
                n += L->rep[i].wait.n;
        return n;
}

/* An iteration's energy j to its members, by the tokens it computes for
 * each (a prefill chunk's q, a decode's 1): the shares sum to j. */
static void share_energy(struct loop *L, const struct replica *rp, double j)
{
        double tokens = 0;
        for (size_t i = 0; i < rp->n_members; i++)
                tokens += (double)rp->q[i];
        for (size_t i = 0; i < rp->n_members && tokens > 0; i++)
                L->reqs[rp->members[i]].energy_j += j * (double)rp->q[i] / tokens;
}

/* Start an iteration on replica ri if it has work. */
static int start(struct loop *L, int ri)
{
        struct replica *rp = &L->rep[ri];
        struct serve_batch b;
        if (rp->busy || !schedule(L, rp, &b))
                return 0;
        double ps, j;
        serve_steps_time(L->steps, &b, false, &ps, &j);
        if (L->steps->rc != CUBESIM_OK)
                return -1;
        L->out->energy_j += j;
        share_energy(L, rp, j);
        L->out->batch_sum += (double)rp->n_members;
        int64_t used = L->total_blocks - rp->free_blocks;
        if (used > L->out->kv_peak)
                L->out->kv_peak = used;
        int64_t pre = 0;
        for (size_t i = 0; i < b.n_chunks; i++)
                pre += b.chunks[i].q;
        struct serve_iter it = { .replica = (uint32_t)ri, .start_ps = L->now,
                                 .end_ps = L->now + (sim_ps)llround(ps), .batch = (int32_t)rp->n_members,
                                 .n_dec = (int32_t)b.n_dec, .prefill_tokens = pre,
                                 .waiting = (int32_t)total_waiting(L),
                                 .kv_frac = (double)used / (double)L->total_blocks };
        rp->iter = L->out->n_iters;
        if (!record_iter(L->out, &it))
                return -ENOMEM;
        for (size_t i = 0; i < rp->n_members; i++) {
                struct serve_req *r = &L->reqs[rp->members[i]];
                if (!r->started) {
                        r->started = true;
                        L->out->flows[r->id].first = (uint32_t)rp->iter;
                }
        }
        rp->busy = true;
        rp->until_ps = it.end_ps;
        return 0;
}

/* The end of replica ri's iteration: tokens, finished requests. */
static int finish_iter(struct loop *L, int ri)
{
        struct replica *rp = &L->rep[ri];
        rp->busy = false;
        for (size_t i = 0; i < rp->n_members; i++) {
                struct serve_req *r = &L->reqs[rp->members[i]];
                r->computed += rp->q[i];
                if (r->prefilling && r->computed < r->prompt + r->generated)
                        continue;            /* a chunk short of the prompt: no token */
                r->prefilling = false;
                if (r->generated == 0)
                        r->first_tok_ps = L->now;
                else if (!record_itl(L->out, L->now - r->last_tok_ps))
                        return -ENOMEM;
                if (r->generated && L->now - r->last_tok_ps > r->max_itl_ps)
                        r->max_itl_ps = L->now - r->last_tok_ps;
                r->last_tok_ps = L->now;
                r->generated++;
                L->out->flows[r->id].last = (uint32_t)rp->iter;
        }
        L->out->iters[rp->iter].kv_frac =
                (double)(L->total_blocks - rp->free_blocks) / (double)L->total_blocks;
        for (size_t i = 0; i < rp->run.n;) {
                struct serve_req *r = &L->reqs[rp->run.v[i]];
                if (r->generated < r->output) {
                        i++;
                        continue;
                }
                r->finish_ps = L->now;
                r->done = true;
                release(rp, r);
                q_remove(&rp->run, i);
        }
        return 0;
}

static int route(struct loop *L, const struct serve_req *r)
{
        if (L->o->router == SERVE_ROUND_ROBIN)
                return (int)(r->id % (uint32_t)L->o->dp);
        int best = 0;
        for (int i = 1; i < L->o->dp; i++)
                if (L->rep[i].wait.n + L->rep[i].run.n <
                    L->rep[best].wait.n + L->rep[best].run.n)
                        best = i;
        return best;
}

static void reset(struct serve_req *reqs, size_t n)
{
        for (size_t i = 0; i < n; i++) {
                struct serve_req *r = &reqs[i];
                *r = (struct serve_req){ .id = r->id, .arrival_ps = r->arrival_ps,
                                         .prompt = r->prompt, .output = r->output,
                                         .prefilling = true };
        }
}

static int loop_run(struct loop *L, size_t n)
{
        struct serve_outcome *out = L->out;
        size_t next = 0, in_system = 0;
        sim_ps last = n ? L->reqs[0].arrival_ps : 0;
        out->t_first_ps = last;
        for (;;) {
                int ri = -1;
                for (int i = 0; i < L->o->dp; i++)
                        if (L->rep[i].busy &&
                            (ri < 0 || L->rep[i].until_ps < L->rep[ri].until_ps))
                                ri = i;
                bool arrival =
                        next < n && (ri < 0 || L->reqs[next].arrival_ps < L->rep[ri].until_ps);
                if (!arrival && ri < 0)
                        break;
                L->now = arrival ? L->reqs[next].arrival_ps : L->rep[ri].until_ps;
                out->in_system_area += (double)in_system * (double)(L->now - last) * 1e-12;
                out->queue_area += (double)total_waiting(L) * (double)(L->now - last) * 1e-12;
                last = L->now;
                int rc;
                if (arrival) {
                        struct serve_req *r = &L->reqs[next++];
                        if (blocks_for(r->prompt + r->output, L->block) > L->total_blocks) {
                                r->dropped = true;
                                continue;
                        }
                        ri = route(L, r);
                        r->replica = (uint32_t)ri;
                        L->rep[ri].wait.v[L->rep[ri].wait.n++] = r->id;
                        in_system++;
                        rc = start(L, ri);
                } else {
                        size_t before = L->rep[ri].run.n;
                        rc = finish_iter(L, ri);
                        in_system -= before - L->rep[ri].run.n;
                        if (before != L->rep[ri].run.n)
                                out->t_last_ps = L->now;
                        if (rc == 0)
                                rc = start(L, ri);
                }
                if (rc < 0)
                        return rc;
                int64_t used = L->total_blocks - L->rep[ri].free_blocks;
                if (used > out->kv_peak)
                        out->kv_peak = used;
        }
        return 0;
}

int serve_simulate(const struct serve_opts *o, struct serve_steps *steps, int64_t kv_blocks,
                   struct serve_req *reqs, size_t n, struct serve_outcome *out)
{
        double t0 = util_now_s();
        *out = (struct serve_outcome){ .reqs = reqs, .n_reqs = n, .kv_blocks = kv_blocks };
        reset(reqs, n);
        struct loop L = { .o = o, .steps = steps, .reqs = reqs, .out = out,
                          .block = o->kv_block, .total_blocks = kv_blocks };
        L.rep = calloc((size_t)o->dp, sizeof *L.rep);
        out->flows = calloc(n ? n : 1, sizeof *out->flows);
        int rc = L.rep && out->flows ? 0 : -ENOMEM;
        for (int i = 0; i < o->dp && rc == 0; i++) {
                struct replica *rp = &L.rep[i];
                rp->free_blocks = kv_blocks;
                rp->wait.v = malloc((n ? n : 1) * sizeof *rp->wait.v);
                rp->run.v = malloc((n ? n : 1) * sizeof *rp->run.v);
                size_t mb = (size_t)o->max_batch;
                rp->chunks = malloc(mb * sizeof *rp->chunks);
                rp->members = malloc(mb * sizeof *rp->members);
                rp->q = malloc(mb * sizeof *rp->q);
                if (!rp->wait.v || !rp->run.v || !rp->chunks || !rp->members || !rp->q)
                        rc = -ENOMEM;
        }
        if (rc == 0)
                rc = loop_run(&L, n);
        if (rc == -ENOMEM) {
                diag_error(steps->d, "out of memory for %zu requests", n);
                steps->rc = CUBESIM_BAD_INPUT;
        }
        for (int i = 0; L.rep && i < o->dp; i++) {
                free(L.rep[i].wait.v);
                free(L.rep[i].run.v);
                free(L.rep[i].chunks);
                free(L.rep[i].members);
                free(L.rep[i].q);
        }
        free(L.rep);
        out->wall_s = util_now_s() - t0;
        return rc < 0 ? -1 : 0;
}

void serve_outcome_fini(struct serve_outcome *out)
{
        free(out->iters);
        free(out->flows);
        free(out->itl_ps);
        out->iters = NULL;
        out->flows = NULL;
        out->itl_ps = NULL;
}
