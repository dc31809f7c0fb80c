/* report/summary.c: see summary.h. Times are integers: ps where exact,
 * ns (rounded down) where a person reads them. */
#include "report/summary.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "base/ckd.h"
#include "base/jsonw.h"

static sim_ps kernel_end(const struct hw_sim *s)
{
        sim_ps end = 0;
        for (uint32_t i = 0; i < s->n_pes; i++)
                if (s->pes[i].exec_end_ps > end)
                        end = s->pes[i].exec_end_ps;
        return end;
}

static sim_ps kernel_span(const struct hw_sim *s)
{
        return kernel_end(s) - s->target_start_ps;
}

/* ---- busy time per component class ---------------------------------------------- */

enum { N_CLASSES = 5 };

struct busy {
        const char *name;            /* class name */
        sim_ps busy;                 /* summed over its units, ps */
        uint64_t n;                  /* units */
};

static void busy_classes(const struct hw_sim *s, const struct rep_run_stats *st,
                         struct busy out[N_CLASSES])
{
        sim_ps cpu = 0, dma = 0, gemm = 0, math = 0, hbm = 0;
        for (int op = 0; op < TOPO_OP_COUNT; op++)
                cpu += st->issue_ps[op];
        for (uint32_t i = 0; i < s->n_pes; i++) {
                dma += s->pes[i].dma.busy_ps + s->pes[i].dma1.busy_ps + s->pes[i].dma_rx.busy_ps +
                       s->pes[i].dma1_rx.busy_ps;
                gemm += s->pes[i].gemm.busy_ps;
                math += s->pes[i].math.busy_ps;
        }
        uint32_t n_ch = s->topo->cube.hbm.channels;
        for (uint32_t c = 0; c < s->n_cubes; c++)
                for (uint32_t ch = 0; ch < n_ch; ch++)
                        hbm += s->cubes[c].channels[ch].busy_ps;
        out[0] = (struct busy){ "pe_cpu", cpu, s->n_pes };
        out[1] = (struct busy){ "pe_dma", dma, s->n_pes }; /* the data path, shared by the channels */
        out[2] = (struct busy){ "pe_gemm", gemm, s->n_pes };
        out[3] = (struct busy){ "pe_math", math, s->n_pes };
        out[4] = (struct busy){ "hbm_channel", hbm, (uint64_t)s->n_cubes * n_ch };
}

static double utilisation(const struct busy *b, sim_ps span)
{
        return span ? (double)b->busy / ((double)span * (double)b->n) : 0.0;
}

static void hbm_bytes(const struct hw_sim *s, uint64_t *rd, uint64_t *wr)
{
        *rd = *wr = 0;
        for (uint32_t c = 0; c < s->n_cubes; c++) {
                *rd += s->cubes[c].hbm_read_bytes;
                *wr += s->cubes[c].hbm_write_bytes;
        }
}

/* PEs whose engines did no work, and cubes all of whose PEs are so. */
static void count_idle(const struct hw_sim *s, uint32_t *pes, uint32_t *cubes)
{
        *pes = *cubes = 0;
        for (uint32_t c = 0; c < s->n_cubes; c++) {
                uint32_t idle = 0;
                for (uint32_t p = c * s->pes_per_cube; p < (c + 1) * s->pes_per_cube; p++) {
                        const struct hw_pe *pe = &s->pes[p];
                        if (!pe->dma.busy_ps && !pe->dma1.busy_ps && !pe->dma_rx.busy_ps &&
                            !pe->dma1_rx.busy_ps && !pe->gemm.busy_ps && !pe->math.busy_ps)
                                idle++;
                }
                *pes += idle;
                if (idle == s->pes_per_cube)
                        ++*cubes;
        }
}

/* ---- bounds -------------------------------------------------------------------- */

const char *rep_bound_name(enum rep_bound b)
{
        static const char *const names[] = { "PE_GEMM", "PE_MATH", "HBM", "PE_DMA", "NoC" };
        return (unsigned)b < REP_BOUND_COUNT ? names[b] : "?";
}

/* work at rate per second, in ps rounded up; 0 without a rate. */
static sim_ps at_rate(uint64_t work, uint64_t per_s)
{
        return per_s ? hw_bytes_ps(work, per_s) : 0;
}

void rep_run_bounds(const struct hw_sim *s, const struct rep_run_stats *st,
                    struct rep_bounds *b)
{
        const struct topo *t = s->topo;
        const struct rep_work *w = &st->work;
        struct topo_totals tot;
        topo_totals(t, &tot);
        uint64_t rd, wr, noc_bw = 0;
        hbm_bytes(s, &rd, &wr);
        for (uint32_t e = 0; e < s->graph.n_edges; e++)
                if (s->graph.edges[e].cls == TOPO_EDGE_NOC)
                        noc_bw += s->graph.edges[e].bw_bytes_per_s;
        memset(b, 0, sizeof *b);
        /* The engine's peak is one pass per step; each of the run's
         * fidelity passes (pe.gemm.fidelity_passes, set per launch) takes
         * a step's time again. */
        b->ps[REP_BOUND_GEMM] = at_rate(sat_mul_u64(w->gemm_flops, t->pe.gemm.fidelity_passes),
                                        tot.peak_gemm_flops_per_s);
        uint64_t lane_cycles_per_s = (uint64_t)t->pe.math.lanes * t->pe.math.clock_hz * s->n_pes;
        b->ps[REP_BOUND_MATH] = at_rate(w->math_elem_cycles, lane_cycles_per_s);
        /* The memory's and the data paths' best rates: the channels at the
         * better of their efficiencies, a core's transfers on its NoCs. */
        uint32_t near = t->cube.hbm.near_efficiency_pct, far = t->cube.hbm.far_efficiency_pct;
        uint64_t hbm_bw = tot.hbm_bw_bytes_per_s;
        if (near && far && near < 100 && far < 100) /* 0: the channel's whole rate */
                hbm_bw = hbm_bw / 100 * (near > far ? near : far);
        b->ps[REP_BOUND_HBM] = at_rate(rd + wr, hbm_bw);
        b->ps[REP_BOUND_DMA] = at_rate(w->dma_bytes, hw_dma_bw(t) * s->n_pes);
        b->ps[REP_BOUND_NOC] = at_rate(s->class_bytes[TOPO_EDGE_NOC], noc_bw);
        b->by = REP_BOUND_GEMM;
        for (int i = 1; i < REP_BOUND_COUNT; i++)
                if (b->ps[i] > b->ps[b->by])
                        b->by = (enum rep_bound)i;
        b->kernel_ps = kernel_span(s);
        if (b->kernel_ps) {
                double sec = (double)b->kernel_ps * 1e-12;
                b->of_bound = (double)b->ps[b->by] / (double)b->kernel_ps;
                if (b->of_bound > 1.0) /* rounding of a bound met exactly */
                        b->of_bound = 1.0;
                b->gemm_tflops = (double)w->gemm_flops / sec * 1e-12;
                b->hbm_gbps = (double)(rd + wr) / sec * 1e-9;
        }
        b->peak_tflops = (double)tot.peak_gemm_flops_per_s * 1e-12;
        b->peak_hbm_gbps = (double)tot.hbm_bw_bytes_per_s * 1e-9;
}

/* ---- energy (docs/adr/0024) ------------------------------------------------------- */

const char *rep_energy_class_name(enum rep_energy_class c)
{
        static const char *const names[] = { "pe_cpu", "pe_dma", "pe_gemm", "pe_math", "tcm",
                                             "noc", "hbm", "inter_cube", "inter_sip" };
        return (unsigned)c < REP_EN_COUNT ? names[c] : "?";
}

/* Static energy of n units of e over span ps, busy ps of it in all (at
 * most n x span), joules: idle power while idle, active power while busy. */
static double static_j(const struct topo_energy *e, uint64_t n, sim_ps span, sim_ps busy)
{
        double all = (double)n * (double)span;
        double on = (double)busy < all ? (double)busy : all;
        return ((double)e->idle_mw * (all - on) + (double)e->active_mw * on) * 1e-15;
}

/* Dynamic energy of work units at e's energy per unit, joules. */
static double dyn_j(const struct topo_energy *e, double work)
{
        return (double)e->dyn_fj * work * 1e-15;
}

/* Dynamic energy of the run's GEMM MACs, joules: each operand class's
 * MACs x fidelity passes (each pass runs the array again,
 * pe.gemm.fidelity_passes) x the class's energy per MAC. */
static double gemm_dyn_j(const struct topo_pe_gemm *g, const struct rep_work *w)
{
        double j = 0;
        for (int c = 0; c < TOPO_MAC_COUNT; c++) {
                if (!w->gemm_flops_dt[c])
                        continue;
                double macs = (double)w->gemm_flops_dt[c] / 2.0 * (double)g->fidelity_passes;
                j += topo_gemm_mac_fj(g, (enum topo_mac_dt)c) * macs * 1e-15;
        }
        return j;
}

/* The bins of cubes [first, first + n) summed, at windows of window_ps (a
 * multiple of p's), into out. */
static void bins_at(const struct hw_power *p, uint32_t first, uint32_t n, sim_ps window_ps,
                    uint64_t out[HW_POWER_BINS][HW_PW_COUNT])
{
        memset(out, 0, sizeof(uint64_t[HW_POWER_BINS][HW_PW_COUNT]));
        for (uint32_t k = first; k < p->n_cubes && k - first < n; k++)
                        for (uint32_t w = 0; w < HW_POWER_BINS; w++)
                                for (int c = 0; c < HW_PW_COUNT; c++)
                                        out[w][c] += p->busy[k][w][c];
        for (sim_ps w = p->window_ps; w && w < window_ps; w *= 2)
                hw_power_merge(out);
}

/* Energy per window of en's windows of the bins b, which hold the share
 * part of the machine's units (1 for the machine, 1 / cubes for a cube):
 * class c's energy less its idle part goes to the windows by c's busy time
 * in each against the machine's (evenly over the kernel time for PE_CPU,
 * whose issue time is not binned, and for a class busy nowhere), the idle
 * part by each window's length (docs/adr/0024). */
static void windows_j(const struct rep_energy *en, uint64_t b[HW_POWER_BINS][HW_PW_COUNT],
                      double part, double out[HW_POWER_BINS])
{
        static const enum hw_pw_class pw[REP_EN_COUNT] = {
                [REP_EN_PE_CPU] = HW_PW_COUNT,       [REP_EN_PE_DMA] = HW_PW_DMA,
                [REP_EN_PE_GEMM] = HW_PW_GEMM,       [REP_EN_PE_MATH] = HW_PW_MATH,
                [REP_EN_TCM] = HW_PW_TCM,            [REP_EN_NOC] = HW_PW_NOC,
                [REP_EN_HBM] = HW_PW_HBM,            [REP_EN_INTER_CUBE] = HW_PW_INTER_CUBE,
                [REP_EN_INTER_SIP] = HW_PW_INTER_SIP,
        };
        sim_ps span = en->kernel_ps, w_ps = en->window_ps;
        for (uint32_t w = 0; w < en->n_windows; w++) {
                sim_ps from = (sim_ps)w * w_ps;
                double even = (double)(span - from < w_ps ? span - from : w_ps) / (double)span;
                double e = 0;
                for (int c = 0; c < REP_EN_COUNT; c++) {
                        enum hw_pw_class k = pw[c];
                        double share = k != HW_PW_COUNT && en->busy_ps[k] > 0
                                               ? (double)b[w][k] / en->busy_ps[k]
                                               : even * part;
                        e += (en->class_j[c] - en->idle_j[c]) * share + en->idle_j[c] * even * part;
                }
                out[w] = e;
        }
}

/* The machine's windows of out, its peak. */
static void power_windows(const struct hw_power *p, struct rep_energy *out)
{
        sim_ps span = out->kernel_ps, w_ps = p->window_ps;
        if (!span || !w_ps)
                return;
        /* Coarser windows if the kernel outlasts the bookings' windows. */
        while ((span - 1) / HW_POWER_BINS >= w_ps)
                w_ps *= 2;
        uint64_t (*b)[HW_PW_COUNT] = malloc(sizeof(uint64_t[HW_POWER_BINS][HW_PW_COUNT]));
        if (!b)
                return;
        bins_at(p, 0, p->n_cubes, w_ps, b);
        out->n_windows = (uint32_t)((span - 1) / w_ps + 1);
        out->window_ps = w_ps;
        for (uint32_t w = 0; w < out->n_windows; w++)
                for (int c = 0; c < HW_PW_COUNT; c++)
                        out->busy_ps[c] += (double)b[w][c];
        windows_j(out, b, 1.0, out->window_j);
        free(b);
        /* A kernel inside one window: its power over its own time. */
        sim_ps len = out->n_windows == 1 ? span : w_ps;
        out->peak_len_ps = len;
        for (uint32_t w = 0; w < out->n_windows; w++)
                if (out->window_j[w] / ((double)len * 1e-12) > out->peak_power_w)
                        out->peak_power_w = out->window_j[w] / ((double)len * 1e-12);
}

uint32_t rep_energy_cube_windows(const struct hw_sim *s, const struct rep_energy *en,
                                 uint32_t cube, double out[HW_POWER_BINS])
{
        if (!en->n_windows || cube >= s->n_cubes)
                return 0;
        uint64_t (*b)[HW_PW_COUNT] = malloc(sizeof(uint64_t[HW_POWER_BINS][HW_PW_COUNT]));
        if (!b)
                return 0;
        bins_at(&s->power, cube, 1, en->window_ps, b);
        windows_j(en, b, 1.0 / (double)s->n_cubes, out);
        free(b);
        return en->n_windows;
}

/* The highest average power of one SIP (a chip) over the kernel time: its
 * cubes' share of each window's energy (as the trace's power per cube),
 * summed; which SIP into *sip. 0 without windows or memory. */
static double max_sip_power(const struct hw_sim *s, const struct rep_energy *en, uint32_t *sip)
{
        uint32_t per = s->topo->sip.cubes, n_sips = per ? s->n_cubes / per : 0;
        double best = 0, w_j[HW_POWER_BINS];
        *sip = 0;
        if (!en->n_windows || !en->kernel_ps)
                return 0;
        uint64_t (*b)[HW_PW_COUNT] = malloc(sizeof(uint64_t[HW_POWER_BINS][HW_PW_COUNT]));
        if (!b)
                return 0;
        for (uint32_t k = 0; k < n_sips; k++) {
                bins_at(&s->power, k * per, per, en->window_ps, b);
                windows_j(en, b, (double)per / (double)s->n_cubes, w_j);
                double j = 0;
                for (uint32_t w = 0; w < en->n_windows; w++)
                        j += w_j[w];
                double p = j / ((double)en->kernel_ps * 1e-12);
                if (p > best) {
                        best = p;
                        *sip = k;
                }
        }
        free(b);
        return best;
}

void rep_run_energy(const struct hw_sim *s, const struct rep_run_stats *st,
                    struct rep_energy *out)
{
        const struct topo *t = s->topo;
        memset(out, 0, sizeof *out);
        sim_ps span = kernel_span(s);
        out->kernel_ps = span;
        struct busy cls[N_CLASSES];
        busy_classes(s, st, cls);
        uint64_t ops = 0, tcm_bytes = 0, rd, wr;
        sim_ps tcm_busy = 0;
        for (int op = 0; op < TOPO_OP_COUNT; op++)
                ops += st->n_ops[op];
        for (uint32_t i = 0; i < s->n_pes; i++) {
                tcm_bytes += s->pes[i].tcm_bytes;
                tcm_busy += s->pes[i].tcm.busy_ps;
        }
        hbm_bytes(s, &rd, &wr);
        const uint64_t *lb = s->class_bytes;
        out->dyn_j[REP_EN_PE_CPU] = dyn_j(&t->pe.cpu.energy, (double)ops);
        out->dyn_j[REP_EN_PE_GEMM] = gemm_dyn_j(&t->pe.gemm, &st->work);
        out->dyn_j[REP_EN_PE_MATH] = dyn_j(&t->pe.math.energy, (double)st->work.math_elem_cycles);
        out->dyn_j[REP_EN_TCM] = dyn_j(&t->pe.tcm.energy, (double)tcm_bytes);
        out->dyn_j[REP_EN_NOC] = dyn_j(&t->cube.noc.energy, (double)lb[TOPO_EDGE_NOC]);
        out->dyn_j[REP_EN_HBM] = dyn_j(&t->cube.hbm.energy, (double)rd + (double)wr);
        out->dyn_j[REP_EN_INTER_CUBE] = dyn_j(&t->sip.inter_cube_energy,
                                              (double)lb[TOPO_EDGE_INTER_CUBE]);
        out->dyn_j[REP_EN_INTER_SIP] = dyn_j(&t->system.inter_sip_energy,
                                             (double)lb[TOPO_EDGE_INTER_SIP]);
        uint64_t n = s->n_pes;
        out->static_j[REP_EN_PE_CPU] = static_j(&t->pe.cpu.energy, n, span, cls[0].busy);
        out->static_j[REP_EN_PE_DMA] = static_j(&t->pe.dma.energy, n, span, cls[1].busy);
        out->static_j[REP_EN_PE_GEMM] = static_j(&t->pe.gemm.energy, n, span, cls[2].busy);
        out->static_j[REP_EN_PE_MATH] = static_j(&t->pe.math.energy, n, span, cls[3].busy);
        out->static_j[REP_EN_TCM] = static_j(&t->pe.tcm.energy, n, span, tcm_busy);
        out->static_j[REP_EN_NOC] = static_j(&t->cube.noc.energy, s->n_cubes, span, 0);
        out->static_j[REP_EN_HBM] = static_j(&t->cube.hbm.energy, s->n_cubes, span, 0);
        for (int c = 0; c < REP_EN_COUNT; c++) {
                out->class_j[c] = out->dyn_j[c] + out->static_j[c];
                out->total_j += out->class_j[c];
                out->static_total_j += out->static_j[c];
        }
        if (span)
                out->avg_power_w = out->total_j / ((double)span * 1e-12);
        /* The idle part of each class's static energy, spread evenly. */
        out->idle_j[REP_EN_PE_CPU] = static_j(&t->pe.cpu.energy, n, span, 0);
        out->idle_j[REP_EN_PE_DMA] = static_j(&t->pe.dma.energy, n, span, 0);
        out->idle_j[REP_EN_PE_GEMM] = static_j(&t->pe.gemm.energy, n, span, 0);
        out->idle_j[REP_EN_PE_MATH] = static_j(&t->pe.math.energy, n, span, 0);
        out->idle_j[REP_EN_TCM] = static_j(&t->pe.tcm.energy, n, span, 0);
        out->idle_j[REP_EN_NOC] = static_j(&t->cube.noc.energy, s->n_cubes, span, 0);
        out->idle_j[REP_EN_HBM] = static_j(&t->cube.hbm.energy, s->n_cubes, span, 0);
        power_windows(&s->power, out);
        out->tdp_w = (double)t->system.tdp_mw / 1e3;
        out->over_tdp = out->tdp_w > 0 && out->avg_power_w > out->tdp_w;
        out->sip_tdp_w = (double)t->sip.tdp_mw / 1e3;
        if (out->sip_tdp_w > 0) {
                out->max_sip_power_w = max_sip_power(s, out, &out->max_sip);
                out->over_sip_tdp = out->max_sip_power_w > out->sip_tdp_w;
        }
}

/* ---- JSON ---------------------------------------------------------------------- */

json_t *rep_run_summary(const struct hw_sim *s, const struct rep_run_stats *st,
                        const char *kernel)
{
        json_t *o = json_object();
        json_object_set_new(o, "kernel", jsonw_string(kernel));
        json_object_set_new(o, "machine", jsonw_string(s->topo->name));
        json_object_set_new(o, "sim_ns", json_integer((json_int_t)(s->done_ps / SIM_PS_PER_NS)));
        json_object_set_new(o, "sim_ps", json_integer((json_int_t)s->done_ps));
        json_object_set_new(o, "target_start_ps", json_integer((json_int_t)s->target_start_ps));
        json_object_set_new(o, "kernel_ps", json_integer((json_int_t)kernel_span(s)));
        json_object_set_new(o, "events", json_integer((json_int_t)s->ev.n_events));
        json_object_set_new(o, "bookings", json_integer((json_int_t)hw_sim_bookings(s)));

        const sim_ps *issue = st->issue_ps;
        const uint64_t *ops = st->n_ops;
        json_t *iss = json_object(), *cnt = json_object();
        for (int op = 0; op < TOPO_OP_COUNT; op++) {
                if (!ops[op])
                        continue;
                json_object_set_new(iss, topo_op_name(op), json_integer((json_int_t)issue[op]));
                json_object_set_new(cnt, topo_op_name(op), json_integer((json_int_t)ops[op]));
        }
        json_object_set_new(o, "pe_cpu_issue_ps", iss);
        json_object_set_new(o, "op_counts", cnt);

        /* Busy time and utilisation per component class, over the kernel's
         * span (first exec start to last end). */
        struct busy cls[N_CLASSES];
        busy_classes(s, st, cls);
        sim_ps span = kernel_span(s);
        json_t *busy = json_object(), *util = json_object();
        for (size_t i = 0; i < N_CLASSES; i++) {
                json_object_set_new(busy, cls[i].name, json_integer((json_int_t)cls[i].busy));
                json_object_set_new(util, cls[i].name, jsonw_real(utilisation(&cls[i], span)));
        }
        json_object_set_new(o, "busy_ps", busy);
        json_object_set_new(o, "utilisation", util);
        json_t *bytes = json_object();
        for (int c = 0; c < TOPO_EDGE_CLASS_COUNT; c++)
                json_object_set_new(bytes, topo_edge_class_name(c),
                                    json_integer((json_int_t)s->class_bytes[c]));
        json_object_set_new(o, "link_bytes", bytes);
        uint64_t hbm_rd, hbm_wr;
        hbm_bytes(s, &hbm_rd, &hbm_wr);
        json_object_set_new(o, "hbm_read_bytes", json_integer((json_int_t)hbm_rd));
        json_object_set_new(o, "hbm_write_bytes", json_integer((json_int_t)hbm_wr));

        struct rep_bounds bd;
        rep_run_bounds(s, st, &bd);
        json_t *bj = json_object();
        for (int i = 0; i < REP_BOUND_COUNT; i++)
                json_object_set_new(bj, rep_bound_name(i), jsonw_real((double)bd.ps[i] / 1e3));
        json_object_set_new(o, "bounds", bj);
        json_object_set_new(o, "bound_by", jsonw_string(rep_bound_name(bd.by)));
        json_object_set_new(o, "of_bound", jsonw_real(bd.of_bound));
        json_object_set_new(o, "gemm_flops", json_integer((json_int_t)st->work.gemm_flops));
        json_t *md = json_object();
        for (int c = 0; c < TOPO_MAC_COUNT; c++)
                json_object_set_new(md, topo_mac_dt_name((enum topo_mac_dt)c),
                                    json_integer((json_int_t)(st->work.gemm_flops_dt[c] / 2)));
        json_object_set_new(o, "gemm_macs_by_dtype", md);
        json_object_set_new(o, "tflops", jsonw_real(bd.gemm_tflops));
        json_object_set_new(o, "peak_tflops", jsonw_real(bd.peak_tflops));
        json_object_set_new(o, "hbm_gbps", jsonw_real(bd.hbm_gbps));
        json_object_set_new(o, "peak_hbm_gbps", jsonw_real(bd.peak_hbm_gbps));
        /* The run's own machine (after --set), for rooflines per point. */
        struct topo_totals tot;
        topo_totals(s->topo, &tot);
        json_object_set_new(o, "peak_gemm_flops_per_s",
                            json_integer((json_int_t)tot.peak_gemm_flops_per_s));
        json_object_set_new(o, "hbm_bw_bytes_per_s",
                            json_integer((json_int_t)tot.hbm_bw_bytes_per_s));
        uint32_t idle_pes, idle_cubes;
        count_idle(s, &idle_pes, &idle_cubes);
        json_object_set_new(o, "idle_pes", json_integer(idle_pes));
        json_object_set_new(o, "idle_cubes", json_integer(idle_cubes));

        struct rep_energy en;
        rep_run_energy(s, st, &en);
        json_object_set_new(o, "energy_j", jsonw_real(en.total_j));
        json_t *ej = json_object();
        for (int c = 0; c < REP_EN_COUNT; c++)
                json_object_set_new(ej, rep_energy_class_name(c), jsonw_real(en.class_j[c]));
        json_object_set_new(o, "energy_by_class_j", ej);
        json_object_set_new(o, "static_j", jsonw_real(en.static_total_j));
        json_object_set_new(o, "avg_power_w", jsonw_real(en.avg_power_w));
        json_object_set_new(o, "peak_power_w", jsonw_real(en.peak_power_w));
        json_object_set_new(o, "peak_power_window_ns", jsonw_real((double)en.peak_len_ps / 1e3));
        json_t *wj = json_array();
        for (uint32_t w = 0; w < en.n_windows; w++)
                json_array_append_new(wj, jsonw_real(en.window_j[w]));
        json_object_set_new(o, "power_windows_j", wj);
        if (en.tdp_w > 0) {
                json_object_set_new(o, "tdp_w", jsonw_real(en.tdp_w));
                json_object_set_new(o, "over_tdp", json_boolean(en.over_tdp));
        }
        if (en.sip_tdp_w > 0) {
                json_object_set_new(o, "sip_tdp_w", jsonw_real(en.sip_tdp_w));
                json_object_set_new(o, "max_sip_power_w", jsonw_real(en.max_sip_power_w));
                json_object_set_new(o, "max_power_sip", json_integer(en.max_sip));
                json_object_set_new(o, "over_sip_tdp", json_boolean(en.over_sip_tdp));
        }

        json_t *pes = json_array();
        for (uint32_t i = 0; i < s->n_pes; i++) {
                const struct hw_pe *pe = &s->pes[i];
                json_t *p = json_object();
                json_object_set_new(p, "pe", jsonw_string(pe->name));
                json_object_set_new(p, "exec_start_ps", json_integer((json_int_t)pe->exec_start_ps));
                json_object_set_new(p, "exec_end_ps", json_integer((json_int_t)pe->exec_end_ps));
                json_array_append_new(pes, p);
        }
        json_object_set_new(o, "pes", pes);
        return o;
}

json_t *rep_run_profile(const struct rep_run_stats *st)
{
        struct rep_line *v;
        size_t n = rep_profile_sorted(&st->profile, &v);
        json_t *a = json_array();
        for (size_t i = 0; i < n; i++) {
                json_t *l = json_object();
                json_object_set_new(l, "file", jsonw_string(v[i].file));
                json_object_set_new(l, "line", json_integer(v[i].line));
                json_object_set_new(l, "ops", json_integer((json_int_t)v[i].n_ops));
                json_object_set_new(l, "issue_ps", json_integer((json_int_t)v[i].issue_ps));
                for (int e = 0; e < REP_ENG_COUNT; e++) {
                        char key[24];
                        snprintf(key, sizeof key, "%s_ps", rep_engine_name(e));
                        json_object_set_new(l, key, json_integer((json_int_t)v[i].engine_ps[e]));
                }
                json_object_set_new(l, "waited_ps", json_integer((json_int_t)v[i].wait_ps));
                json_array_append_new(a, l);
        }
        free(v);
        return a;
}

/* ---- text ---------------------------------------------------------------------- */

static double us(sim_ps ps)
{
        return (double)ps / 1e6;
}

/* The per-line table: times summed over PEs (PE_DMA's over each PE's
 * channels too), and the PE_CPU's time at the line (issue + waited) as a
 * mean over the n_pes PEs, which compares with the kernel time: a PE's
 * lines together take at most its time from start to end. */
static void profile_table(const struct rep_run_stats *st, uint32_t n_pes, size_t max_lines,
                          FILE *out)
{
        struct rep_line *v;
        size_t n = rep_profile_sorted(&st->profile, &v);
        if (n == 0)
                return;
        size_t shown = n < max_lines ? n : max_lines;
        if (shown < n)
                fprintf(out, "  top %zu kernel source lines by time (us, summed over PEs and DMA "
                        "channels; per PE: issue + waited over %" PRIu32 " PEs; --profile: all "
                        "%zu):\n", shown, n_pes, n);
        else
                fprintf(out, "  time per kernel source line (us, summed over PEs and DMA "
                        "channels; per PE: issue + waited over %" PRIu32 " PEs):\n", n_pes);
        fprintf(out, "    %-36s %10s %10s %10s %10s %10s %10s %10s\n", "file:line", "ops", "issue",
                "pe_dma", "pe_gemm", "pe_math", "waited", "per PE");
        for (size_t i = 0; i < shown; i++) {
                char place[256];
                snprintf(place, sizeof place, "%s:%d", v[i].file, v[i].line);
                fprintf(out, "    %-36s %10" PRIu64 " %10.3f %10.3f %10.3f %10.3f %10.3f %10.3f\n",
                        place, v[i].n_ops, us(v[i].issue_ps), us(v[i].engine_ps[REP_ENG_DMA]),
                        us(v[i].engine_ps[REP_ENG_GEMM]), us(v[i].engine_ps[REP_ENG_MATH]),
                        us(v[i].wait_ps),
                        n_pes ? us(v[i].issue_ps + v[i].wait_ps) / n_pes : 0.0);
        }
        free(v);
}

void rep_run_summary_text(const struct hw_sim *s, const struct rep_run_stats *st,
                          const char *kernel, bool profile, FILE *out)
{
        sim_ps span = kernel_span(s);
        fprintf(out, "kernel %s on %s: %u PEs (%u SIPs x %u cubes x %u PEs)\n", kernel,
                s->topo->name, s->n_pes, s->n_sips, s->topo->sip.cubes, s->pes_per_cube);
        fprintf(out, "  launch to completion: %" PRIu64 " ns\n", s->done_ps / SIM_PS_PER_NS);
        fprintf(out, "  kernel start (all PEs): %.3f ns\n", (double)s->target_start_ps / 1e3);
        fprintf(out, "  kernel time (first start to last end): %.3f ns\n", (double)span / 1e3);
        fprintf(out, "  events: %" PRIu64 " (and %" PRIu64 " requests served at arrival)\n",
                s->ev.n_events, hw_sim_bookings(s));

        struct busy cls[N_CLASSES];
        busy_classes(s, st, cls);
        fprintf(out, "  busy time and utilisation over the kernel time:\n");
        for (int i = 0; i < N_CLASSES; i++)
                fprintf(out, "    %-12s %12.3f us busy over %4" PRIu64 " units  %5.1f%%\n",
                        cls[i].name, us(cls[i].busy), cls[i].n,
                        100.0 * utilisation(&cls[i], span));

        uint32_t idle_pes, idle_cubes;
        count_idle(s, &idle_pes, &idle_cubes);
        if (idle_pes)
                fprintf(out, "  warning: %u of %u cubes and %u of %u PEs did no DMA, GEMM or "
                        "MATH work\n", idle_cubes, s->n_cubes, idle_pes, s->n_pes);
        struct rep_bounds b;
        rep_run_bounds(s, st, &b);
        fprintf(out, "  bounds (the same work at the machine's aggregate rate):\n");
        for (int i = 0; i < REP_BOUND_COUNT; i++)
                fprintf(out, "    %-12s %12.3f ns%s\n", rep_bound_name(i), (double)b.ps[i] / 1e3,
                        (enum rep_bound)i == b.by ? "  <- binding" : "");
        fprintf(out, "  binding: %s; the run reaches %.1f%% of that bound (%.3f ns of %.3f ns)\n",
                rep_bound_name(b.by), 100.0 * b.of_bound, (double)b.ps[b.by] / 1e3,
                (double)span / 1e3);
        fprintf(out, "  achieved: %.3f TFLOP/s GEMM (%.1f%% of %.1f peak), %.1f GB/s HBM "
                "(%.1f%% of %.1f)\n", b.gemm_tflops,
                b.peak_tflops > 0 ? 100.0 * b.gemm_tflops / b.peak_tflops : 0.0, b.peak_tflops,
                b.hbm_gbps, b.peak_hbm_gbps > 0 ? 100.0 * b.hbm_gbps / b.peak_hbm_gbps : 0.0,
                b.peak_hbm_gbps);
        struct rep_energy en;
        rep_run_energy(s, st, &en);
        fprintf(out, "  energy: %.6g J (%.6g J static), average power %.4g W over the kernel time\n",
                en.total_j, en.static_total_j, en.avg_power_w);
        if (en.n_windows)
                fprintf(out, "  peak power: %.4g W over a %.6g ns window (%" PRIu32 " windows)\n",
                        en.peak_power_w, (double)en.peak_len_ps / 1e3, en.n_windows);
        for (int c = 0; c < REP_EN_COUNT; c++)
                if (en.class_j[c] > 0)
                        fprintf(out, "    %-12s %12.6g J  %5.1f%%\n", rep_energy_class_name(c),
                                en.class_j[c], 100.0 * en.class_j[c] / en.total_j);
        if (en.over_tdp)
                fprintf(out, "  warning: average power %.4g W exceeds the machine's power limit "
                        "system.tdp_w = %.4g W (by %.1f%%)\n", en.avg_power_w, en.tdp_w,
                        100.0 * (en.avg_power_w / en.tdp_w - 1));
        if (en.over_sip_tdp)
                fprintf(out, "  warning: SIP %" PRIu32 "'s average power %.4g W exceeds the "
                        "per-chip power limit sip.tdp_w = %.4g W (by %.1f%%)\n", en.max_sip,
                        en.max_sip_power_w, en.sip_tdp_w,
                        100.0 * (en.max_sip_power_w / en.sip_tdp_w - 1));
        profile_table(st, s->n_pes, profile ? SIZE_MAX : 5, out);
}
