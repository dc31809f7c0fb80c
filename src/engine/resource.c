/* engine/resource.c: server banks served at arrival time (interval
 * reservations with gap filling). See ev.h and docs/adr/0010. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "engine/ev.h"

static void server_init(struct ev_server *s)
{
        memset(s, 0, sizeof *s);
        s->iv = s->small;
        s->cap = sizeof s->small / sizeof s->small[0];
}

int ev_resource_init(struct ev_resource *r, struct ev_loop *ev, const char *name,
                     unsigned n_servers, enum ev_share share)
{
        memset(r, 0, sizeof *r);
        CS_ASSERT(n_servers >= 1 && n_servers <= EV_RESOURCE_MAX_SERVERS);
        CS_ASSERT(share == EV_WHOLE || n_servers == 1);
        r->name = name;
        r->ev = ev;
        r->share = share;
        r->n_servers = n_servers;
        r->servers = &r->one;
        if (n_servers > 1) {
                r->servers = calloc(n_servers, sizeof *r->servers);
                if (!r->servers) {
                        r->servers = &r->one;
                        r->n_servers = 1;
                        return -ENOMEM;
                }
        }
        for (unsigned i = 0; i < r->n_servers; i++)
                server_init(&r->servers[i]);
        return 0;
}

void ev_resource_fini(struct ev_resource *r)
{
        if (!r->servers)
                return;
        for (unsigned i = 0; i < r->n_servers; i++)
                if (r->servers[i].iv != r->servers[i].small)
                        free(r->servers[i].iv);
        if (r->servers != &r->one)
                free(r->servers);
        r->servers = NULL;
}

/* Drop the intervals that ended by floor: no request arrives before it. */
static void prune(struct ev_server *s, sim_ps floor)
{
        while (s->head < s->n && s->iv[s->head].end <= floor)
                s->head++;
        if (s->head == s->n) {
                s->head = s->n = 0;
                s->max_gap = 0;
        }
}

/* The first interval of [lo, hi) that ends after t (hi if none). */
static uint32_t bsearch_ending_after(const struct ev_server *s, uint32_t lo, uint32_t hi, sim_ps t)
{
        while (lo < hi) {
                uint32_t mid = lo + (hi - lo) / 2;
                if (s->iv[mid].end > t)
                        hi = mid;
                else
                        lo = mid + 1;
        }
        return lo;
}

/* How many intervals a search walks before it halves instead. */
#define EV_WALK 8

/* The first live interval that ends after t: found walking back from the
 * last, where a divisible request's arrival lies (prefill 8K: within 2
 * intervals of the last for 74% of them, within 6 for 99%), then by
 * halving. */
static uint32_t first_ending_after(const struct ev_server *s, sim_ps t)
{
        uint32_t i = s->n;
        for (int k = 0; k < EV_WALK; k++) {
                if (i == s->head || s->iv[i - 1].end <= t)
                        return i;
                i--;
        }
        return bsearch_ending_after(s, s->head, i, t);
}

/* The same, walking on from the first live interval: whole requests, whose
 * lists are pruned to now first, arrive near its start. */
static uint32_t first_ending_after_head(const struct ev_server *s, sim_ps t)
{
        uint32_t i = s->head;
        for (int k = 0; k < EV_WALK; k++) {
                if (i == s->n || s->iv[i].end > t)
                        return i;
                i++;
        }
        return bsearch_ending_after(s, i, s->n, t);
}

/* Room for one more interval: drop the dead ones and compact, else grow.
 * Rare: kept out of line so that mark stays small. */
__attribute__((noinline)) static bool make_room(struct ev_server *s, sim_ps floor)
{
        if (s->n < s->cap)
                return true;
        prune(s, floor);
        if (s->n < s->cap)
                return true;
        if (s->head > 0) {
                memmove(s->iv, s->iv + s->head, (s->n - s->head) * sizeof s->iv[0]);
                s->n -= s->head;
                s->head = 0;
                return true;
        }
        uint32_t cap = s->cap * 2;
        struct ev_busy *iv = s->iv == s->small ? malloc(cap * sizeof *iv)
                                               : realloc(s->iv, cap * sizeof *iv);
        if (!iv)
                return false;
        if (s->iv == s->small)
                memcpy(iv, s->small, sizeof s->small);
        s->iv = iv;
        s->cap = cap;
        return true;
}

/* Mark [a, b) busy, where it lies in the gap before interval i (i == n: after
 * the last). Returns the index of the interval that now holds it; false in
 * *ok when a new interval was needed and memory ran out (nothing marked).
 * Inlined into its two callers: the call cost as much as the marking. */
__attribute__((always_inline)) static inline uint32_t mark(struct ev_server *s, uint32_t i, sim_ps a, sim_ps b, sim_ps floor, bool *ok)
{
        bool join_prev = i > s->head && s->iv[i - 1].end == a;
        bool join_next = i < s->n && s->iv[i].start == b;
        *ok = true;
        if (join_prev && join_next) {
                s->iv[i - 1].end = s->iv[i].end;
                memmove(s->iv + i, s->iv + i + 1, (s->n - i - 1) * sizeof s->iv[0]);
                s->n--;
                return i - 1;
        }
        if (join_prev) {
                s->iv[i - 1].end = b;
                return i - 1;
        }
        if (join_next) {
                s->iv[i].start = a;
                return i;
        }
        if (s->n == s->cap) {
                if (!make_room(s, floor)) {
                        *ok = false;
                        return i;
                }
                i = first_ending_after(s, a); /* the intervals moved */
        }
        /* The new interval splits a gap (or opens one after the last). */
        if (i > s->head && a - s->iv[i - 1].end > s->max_gap)
                s->max_gap = a - s->iv[i - 1].end;
        if (i < s->n && s->iv[i].start - b > s->max_gap)
                s->max_gap = s->iv[i].start - b;
        memmove(s->iv + i + 1, s->iv + i, (s->n - i) * sizeof s->iv[0]);
        s->iv[i] = (struct ev_busy){ a, b };
        s->n++;
        return i;
}

/* The earliest start >= t on s of a gap that fits service; *at the index of
 * the interval after that gap. */
static sim_ps fit(struct ev_server *s, sim_ps t, sim_ps service, uint32_t *at)
{
        uint32_t i = first_ending_after_head(s, t);
        if (i < s->n && service > s->max_gap) {
                /* No gap between the intervals can hold it: only the one
                 * before interval i (from t), or after the last. */
                if (!(s->iv[i].start > t && s->iv[i].start - t >= service)) {
                        *at = s->n;
                        return s->iv[s->n - 1].end > t ? s->iv[s->n - 1].end : t;
                }
                *at = i;
                return t;
        }
        bool whole = i == s->head;   /* the walk sees every gap */
        sim_ps widest = 0;
        for (; i < s->n; i++) {
                if (s->iv[i].start > t && s->iv[i].start - t >= service)
                        break;
                if (i > s->head && s->iv[i].start - s->iv[i - 1].end > widest)
                        widest = s->iv[i].start - s->iv[i - 1].end;
                if (s->iv[i].end > t)
                        t = s->iv[i].end;
        }
        if (whole && i == s->n)
                s->max_gap = widest;
        *at = i;
        return t;
}

/* No memory for a gap: place [t, t + service) after the last booking,
 * extending it (the gap before is lost, the times stay consistent). */
static sim_ps place_last(struct ev_resource *r, struct ev_server *s, sim_ps t, sim_ps service,
                         sim_ps *start)
{
        if (r->ev)
                ev_set_nomem(r->ev);
        struct ev_busy *last = &s->iv[s->n - 1];
        sim_ps begin = last->end > t ? last->end : t;
        last->end = begin + service;
        s->last_end = last->end;
        *start = begin;
        return begin + service;
}

static sim_ps reserve_whole(struct ev_resource *r, sim_ps floor, sim_ps t, sim_ps service,
                            sim_ps *start)
{
        unsigned best = 0;
        uint32_t best_at = 0;
        sim_ps best_t = SIM_PS_MAX;
        for (unsigned k = 0; k < r->n_servers; k++) {
                uint32_t at;
                sim_ps b = fit(&r->servers[k], t, service, &at);
                if (b < best_t) {
                        best_t = b;
                        best = k;
                        best_at = at;
                }
        }
        struct ev_server *s = &r->servers[best];
        bool ok;
        mark(s, best_at, best_t, best_t + service, floor, &ok);
        s->last_end = s->iv[s->n - 1].end;
        if (!ok)
                return place_last(r, s, best_t, service, start);
        *start = best_t;
        return best_t + service;
}

static sim_ps reserve_split(struct ev_resource *r, sim_ps floor, sim_ps t, sim_ps service,
                            sim_ps *start)
{
        struct ev_server *s = &r->servers[0];
        /* Most requests come after every booking. */
        uint32_t i = t >= s->last_end ? s->n : first_ending_after(s, t);
        sim_ps left = service;
        bool first = true;
        while (left > 0) {
                if (i < s->n && s->iv[i].start <= t) {
                        t = s->iv[i].end;
                        i++;
                        continue;
                }
                sim_ps gap = i < s->n ? s->iv[i].start - t : SIM_PS_MAX;
                sim_ps take = left < gap ? left : gap;
                bool ok;
                i = mark(s, i, t, t + take, floor, &ok);
                s->last_end = s->iv[s->n - 1].end;
                if (!ok) {
                        sim_ps b, e = place_last(r, s, t, left, &b);
                        if (first)
                                *start = b;
                        return e;
                }
                if (first)
                        *start = t;
                first = false;
                t += take;
                left -= take;
        }
        return t;
}

/* A request that needs a search of the interval lists; out of line so that
 * the common append above stays cheap to call. */
__attribute__((noinline)) static sim_ps reserve_search(struct ev_resource *r, sim_ps floor,
                                                       sim_ps t, sim_ps service, sim_ps *start)
{
        sim_ps begin = t, end = t;
        if (service > 0 && r->share == EV_SPLIT) {
                /* Dead intervals are dropped when the list is full. */
                end = reserve_split(r, floor, t, service, &begin);
        } else if (service > 0) {
                /* Dropped now: the widest-gap bound is kept over live ones. */
                for (unsigned k = 0; k < r->n_servers; k++)
                        prune(&r->servers[k], floor);
                end = reserve_whole(r, floor, t, service, &begin);
        }
        r->busy_ps += service;
        r->n_requests++;
        if (start)
                *start = begin;
        return end;
}

sim_ps ev__resource_reserve(struct ev_resource *r, sim_ps arrive, sim_ps service, sim_ps *start)
{
        sim_ps floor = r->ev ? r->ev->now : 0;
        sim_ps t = arrive > floor ? arrive : floor;
        struct ev_server *s = r->servers;
        /* Arriving while the last booking is being served: served after
         * it (what the search would find, found here). */
        if (r->share == EV_SPLIT && service > 0 && t < s->last_end && s->n > s->head &&
            s->iv[s->n - 1].start <= t)
                t = s->last_end;
        /* After every booking (of the one server of a whole bank, or of a
         * divisible one): extend the last or append, what the search would
         * do (a whole bank first drops its dead intervals, and the widest
         * gap is kept), without it. */
        if (t >= s->last_end && service > 0 && (r->share == EV_SPLIT || r->n_servers == 1)) {
                if (r->share == EV_WHOLE)
                        prune(s, floor);
                bool extend = s->n > s->head && s->iv[s->n - 1].end == t;
                if (extend || s->n < s->cap)
                        return ev__resource_append(r, s, t, service, start);
        }
        return reserve_search(r, floor, t, service, start);
}

void ev_resource_use(struct ev_proc *p, struct ev_resource *r, sim_ps service)
{
        sim_ps end = ev_resource_reserve(r, p->ev->now, service, NULL);
        ev_sleep_until(p, end);
}

sim_ps ev_resource_booked_until(const struct ev_resource *r)
{
        sim_ps until = 0;
        for (unsigned k = 0; k < r->n_servers; k++)
                if (r->servers[k].last_end > until)
                        until = r->servers[k].last_end;
        return until;
}
