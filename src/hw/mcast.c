/* hw/mcast.c: one transfer delivered to several nodes (NoC multicast).
 *
 * The bytes follow the union of the routes from the source to each
 * destination: a link shared by several routes (the injection port, the
 * common prefix along the source's row) carries them once, and they are
 * copied where the routes part, as a NoC router replicates a multicast
 * packet along its path. Each link is served as in hw_xfer (cut-through:
 * the head waits for the link, occupies it for N / bw, reaches the next
 * node after the link latency and that node's overhead); a destination's
 * last byte arrives one bottleneck drain of its own route after the head.
 * Dimension-ordered routes from one source form a tree, so every link's
 * head time is the same along every route that uses it. */
#include <stdlib.h>
#include <string.h>

#include "hw/hw.h"

struct hw_mcast_scratch {
        uint32_t n_edges;            /* entries of each array */
        uint32_t stamp;              /* the current transfer */
        uint32_t *seen;              /* per edge: stamp of the transfer that reserved it */
        struct hw_front *front;      /* per edge: the transfer's front past it */
};

void hw__mcast_free(struct hw_mcast_scratch *m)
{
        if (!m)
                return;
        free(m->seen);
        free(m->front);
        free(m);
}

static struct hw_mcast_scratch *scratch_of(struct hw_sim *s)
{
        if (s->mcast)
                return s->mcast;
        struct hw_mcast_scratch *m = calloc(1, sizeof *m);
        uint32_t n = s->graph.n_edges ? s->graph.n_edges : 1;
        if (!m)
                return NULL;
        m->n_edges = n;
        m->seen = calloc(n, sizeof *m->seen);
        m->front = malloc(n * sizeof *m->front);
        if (!m->seen || !m->front) {
                hw__mcast_free(m);
                return NULL;
        }
        s->mcast = m;
        return m;
}

sim_ps hw_xfer_mcast(struct hw_sim *s, uint32_t src, const uint32_t *dsts, uint32_t n,
                     uint64_t bytes, sim_ps start, sim_ps *arrive)
{
        struct hw_mcast_scratch *m = scratch_of(s);
        if (!m) {
                ev_set_nomem(&s->ev);
                return TOPO_PS_NONE;
        }
        if (++m->stamp == 0) {
                memset(m->seen, 0, m->n_edges * sizeof *m->seen);
                m->stamp = 1;
        }
        sim_ps last = start;
        for (uint32_t i = 0; i < n; i++) {
                const uint32_t *route;
                uint32_t len;
                if (topo_route(&s->graph, src, dsts[i], &route, &len) < 0) {
                        ev_set_nomem(&s->ev);
                        return TOPO_PS_NONE;
                }
                struct hw_front f = { .head = start, .tail = start };
                for (uint32_t j = 0; j < len; j++) {
                        uint32_t e = route[j];
                        if (m->seen[e] != m->stamp) {
                                hw__link_pass(s, e, bytes, &f);
                                m->seen[e] = m->stamp;
                                m->front[e] = f;
                        }
                        f = m->front[e];
                }
                arrive[i] = hw__front_arrival(&f);
                if (arrive[i] > last)
                        last = arrive[i];
        }
        return last;
}
