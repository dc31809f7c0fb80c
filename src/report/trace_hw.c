/* report/trace_hw.c: see trace_hw.h. */
#include "report/trace_hw.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"

enum { LINK_TID_BASE = 4096 };

static bool traced_class(uint8_t cls)
{
        return cls == TOPO_EDGE_NOC || cls == TOPO_EDGE_INTER_CUBE || cls == TOPO_EDGE_INTER_SIP;
}

static void name_cube(struct rep_trace_hw *h, uint32_t cube)
{
        if (h->cube_named[cube])
                return;
        h->cube_named[cube] = 1;
        const struct hw_cube *c = &h->s->cubes[cube];
        char name[64];
        snprintf(name, sizeof name, "sip%u.cube%u memory+links", c->sip, c->cube);
        rep_trace_name(h->t, h->s->n_pes + cube, -1, name, h->s->n_pes + cube);
}

static void track_name(const struct hw_sim *s, enum hw_busy_kind kind, uint32_t index,
                       uint32_t lane, char *buf, size_t len)
{
        char lane_s[16] = "";
        if (lane)
                snprintf(lane_s, sizeof lane_s, " #%u", lane);
        if (kind == HW_BUSY_HBM) {
                snprintf(buf, len, "hbm ch%u%s", index, lane_s);
                return;
        }
        char a[48], b[48];
        const struct topo_edge *e = &s->graph.edges[index];
        topo_node_name(&s->graph, e->src, a, sizeof a);
        topo_node_name(&s->graph, e->dst, b, sizeof b);
        snprintf(buf, len, "link %s->%s%s", a, b, lane_s);
}

/* The open busy period of a track, written as one slice. */
static void flush_run(struct rep_trace_hw *h, enum hw_busy_kind kind, uint32_t cube,
                      uint32_t index)
{
        struct hw_sim *s = h->s;
        uint32_t res = kind == HW_BUSY_HBM ? cube * s->topo->cube.hbm.channels + index
                                           : h->n_channels + index;
        uint32_t tid = kind == HW_BUSY_HBM ? index : LINK_TID_BASE + index;
        struct rep_busy_run *run = &h->runs[res];
        if (!run->open)
                return;
        uint32_t pid = s->n_pes + cube;
        char track[112];
        if (!h->res_named[res]) {
                h->res_named[res] = 1;
                name_cube(h, cube);
                track_name(s, kind, index, 0, track, sizeof track);
                rep_trace_name(h->t, pid, (int)tid, track, tid);
        }
        uint32_t opened = rep_trace_slice(h->t, &h->res_lanes[res], pid, tid,
                                          kind == HW_BUSY_HBM ? "hbm" : "xfer", run->start,
                                          run->end, run->bytes, run->n);
        if (opened) {
                track_name(s, kind, index, opened >> 24, track, sizeof track);
                rep_trace_name(h->t, pid, (int)opened, track, opened);
        }
        run->open = false;
}

/* Change c by d0 at t0 and by d1 at t1 (d1 0: no second change), then
 * write what is before now. A change the host has no memory for fails
 * the trace (ENOMEM at close) rather than leave the counter wrong. */
static void count(struct rep_trace_hw *h, struct rep_counter *c, sim_ps t0, int64_t d0,
                  sim_ps t1, int64_t d1)
{
        if (rep_counter_add(c, t0, d0) < 0 || (d1 && rep_counter_add(c, t1, d1) < 0)) {
                if (!h->t->err)
                        h->t->err = ENOMEM;
                return;
        }
        rep_counter_flush(h->t, c, ev_now(&h->s->ev));
}

static void on_busy(void *ctx, enum hw_busy_kind kind, uint32_t cube, uint32_t index,
                    sim_ps start, sim_ps end, uint64_t bytes)
{
        struct rep_trace_hw *h = ctx;
        struct hw_sim *s = h->s;
        uint32_t res;
        if (kind == HW_BUSY_HBM) {
                res = cube * s->topo->cube.hbm.channels + index;
        } else {
                if (!traced_class(s->graph.edges[index].cls))
                        return;
                cube = hw_edge_cube(s, index);
                res = h->n_channels + index;
        }
        if (cube == TOPO_NONE || !h->cube_sel[cube])
                return;
        struct rep_busy_run *run = &h->runs[res];
        if (run->open && start >= run->start && start <= run->end) {
                /* Back to back (or overlapping): the same busy period. */
                if (end > run->end)
                        run->end = end;
                run->bytes += bytes;
                run->n++;
        } else {
                flush_run(h, kind, cube, index);
                *run = (struct rep_busy_run){ .start = start, .end = end, .bytes = bytes,
                                              .n = 1, .open = true };
        }
        if (kind == HW_BUSY_HBM && end > start) {
                /* Bandwidth as a step function: this piece's rate while it
                 * is served (whole MB/s, so the steps cancel exactly). */
                unsigned __int128 bps = (unsigned __int128)bytes * 1000000000000ull / (end - start);
                int64_t mbps = (int64_t)(bps / 1000000);
                if (mbps > 0)
                        count(h, &h->hbm_bw[cube], start, mbps, end, -mbps);
        }
}

int rep_trace_hw_open(struct rep_trace_hw *h, struct rep_trace *t, struct hw_sim *s)
{
        memset(h, 0, sizeof *h);
        h->t = t;
        h->s = s;
        h->n_channels = s->n_cubes * s->topo->cube.hbm.channels;
        size_t n_res = (size_t)h->n_channels + s->graph.n_edges;
        h->cube_sel = calloc(s->n_cubes ? s->n_cubes : 1, 1);
        h->cube_named = calloc(s->n_cubes ? s->n_cubes : 1, 1);
        h->res_named = calloc(n_res ? n_res : 1, 1);
        h->res_lanes = calloc(n_res ? n_res : 1, sizeof *h->res_lanes);
        h->runs = calloc(n_res ? n_res : 1, sizeof *h->runs);
        h->hbm_bw = calloc(s->n_cubes ? s->n_cubes : 1, sizeof *h->hbm_bw);
        h->scratch = calloc(s->n_pes ? s->n_pes : 1, sizeof *h->scratch);
        h->dma_q = calloc(s->n_pes ? s->n_pes : 1, sizeof *h->dma_q);
        if (!h->cube_sel || !h->cube_named || !h->res_named || !h->res_lanes || !h->runs ||
            !h->hbm_bw || !h->scratch || !h->dma_q) {
                rep_trace_hw_close(h);
                return -ENOMEM;
        }
        for (uint32_t c = 0; c < s->n_cubes; c++)
                h->hbm_bw[c] = (struct rep_counter){ .pid = s->n_pes + c, .name = "hbm MB/s" };
        for (uint32_t p = 0; p < s->n_pes; p++) {
                h->scratch[p] = (struct rep_counter){ .pid = p, .name = "scratch bytes" };
                h->dma_q[p] = (struct rep_counter){ .pid = p, .name = "dma queue depth" };
                if (rep_trace_wants_pe(t, p))
                        h->cube_sel[p / s->pes_per_cube] = 1;
        }
        s->on_busy = on_busy;
        s->on_busy_ctx = h;
        return 0;
}

void rep_trace_hw_scratch(struct rep_trace_hw *h, uint32_t pe, int64_t delta)
{
        if (!delta || !rep_trace_wants_pe(h->t, pe))
                return;
        count(h, &h->scratch[pe], ev_now(&h->s->ev), delta, 0, 0);
}

void rep_trace_hw_dma(struct rep_trace_hw *h, uint32_t pe, sim_ps end)
{
        if (!rep_trace_wants_pe(h->t, pe))
                return;
        sim_ps now = ev_now(&h->s->ev);
        count(h, &h->dma_q[pe], now, 1, end > now ? end : now, -1);
}

void rep_trace_hw_power(struct rep_trace_hw *h, const struct rep_run_stats *st)
{
        struct hw_sim *s = h->s;
        struct rep_energy *en = malloc(sizeof *en);
        double *win = malloc(sizeof(double[HW_POWER_BINS]));
        if (en && win) {
                rep_run_energy(s, st, en);
                for (uint32_t c = 0; c < s->n_cubes; c++) {
                        uint32_t n = h->cube_sel[c] ? rep_energy_cube_windows(s, en, c, win) : 0;
                        if (!n)
                                continue;
                        name_cube(h, c);
                        struct rep_counter k = { .pid = s->n_pes + c, .name = "power mW" };
                        int64_t was = 0;
                        for (uint32_t w = 0; w <= n; w++) {
                                sim_ps from = s->power.origin_ps + (sim_ps)w * en->window_ps;
                                double len = (double)(w == 0 && n == 1 ? en->peak_len_ps
                                                                       : en->window_ps);
                                int64_t mw = w < n ? (int64_t)llround(win[w] / (len * 1e-15)) : 0;
                                if (mw != was && rep_counter_add(&k, from, mw - was) == 0)
                                        was = mw;
                        }
                        rep_counter_flush(h->t, &k, SIM_PS_MAX);
                        rep_counter_fini(&k);
                }
        }
        free(en);
        free(win);
}

void rep_trace_hw_close(struct rep_trace_hw *h)
{
        struct hw_sim *s = h->s;
        if (s && s->on_busy_ctx == h) {
                s->on_busy = NULL;
                s->on_busy_ctx = NULL;
        }
        if (h->runs) {
                uint32_t per_cube = s->topo->cube.hbm.channels;
                for (uint32_t ch = 0; ch < h->n_channels; ch++)
                        flush_run(h, HW_BUSY_HBM, ch / per_cube, ch % per_cube);
                for (uint32_t e = 0; e < s->graph.n_edges; e++)
                        if (h->runs[h->n_channels + e].open)
                                flush_run(h, HW_BUSY_LINK, hw_edge_cube(s, e), e);
        }
        for (uint32_t c = 0; h->hbm_bw && c < s->n_cubes; c++) {
                rep_counter_flush(h->t, &h->hbm_bw[c], SIM_PS_MAX);
                rep_counter_fini(&h->hbm_bw[c]);
        }
        for (uint32_t p = 0; h->scratch && h->dma_q && p < s->n_pes; p++) {
                rep_counter_flush(h->t, &h->scratch[p], SIM_PS_MAX);
                rep_counter_flush(h->t, &h->dma_q[p], SIM_PS_MAX);
                rep_counter_fini(&h->scratch[p]);
                rep_counter_fini(&h->dma_q[p]);
        }
        free(h->cube_sel);
        free(h->cube_named);
        free(h->res_named);
        free(h->res_lanes);
        free(h->runs);
        free(h->hbm_bw);
        free(h->scratch);
        free(h->dma_q);
        memset(h, 0, sizeof *h);
}
