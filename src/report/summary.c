/* report/summary.c: see summary.h. Times are integers: ps where exact,
 * ns (rounded down) where a person reads them. */
#include "report/summary.h"

#include <inttypes.h>

static sim_ps kernel_end(const struct hw_sim *s)
{
        sim_ps end = 0;
        for (uint32_t i = 0; i < s->n_pes; i++)
                if (s->pes[i].exec_end_ps > end)
                        end = s->pes[i].exec_end_ps;
        return end;
}

json_t *rep_run_summary(const struct hw_sim *s, const struct rep_run_stats *st,
                        const char *kernel)
{
        json_t *o = json_object();
        json_object_set_new(o, "kernel", json_string(kernel));
        json_object_set_new(o, "machine", json_string(s->topo->name));
        json_object_set_new(o, "sim_ns", json_integer((json_int_t)(s->done_ps / SIM_PS_PER_NS)));
        json_object_set_new(o, "sim_ps", json_integer((json_int_t)s->done_ps));
        json_object_set_new(o, "target_start_ps", json_integer((json_int_t)s->target_start_ps));
        json_object_set_new(o, "kernel_ps",
                            json_integer((json_int_t)(kernel_end(s) - s->target_start_ps)));
        json_object_set_new(o, "events", json_integer((json_int_t)s->ev.n_events));

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
        sim_ps span = kernel_end(s) - s->target_start_ps;
        sim_ps busy_cpu = 0, busy_dma = 0, busy_gemm = 0, busy_math = 0, busy_hbm = 0;
        for (int op = 0; op < TOPO_OP_COUNT; op++)
                busy_cpu += issue[op];
        for (uint32_t i = 0; i < s->n_pes; i++) {
                busy_dma += s->pes[i].dma.busy_ps;
                busy_gemm += s->pes[i].gemm.busy_ps;
                busy_math += s->pes[i].math.busy_ps;
        }
        uint64_t hbm_rd = 0, hbm_wr = 0;
        uint32_t n_ch = s->topo->cube.hbm.channels;
        for (uint32_t c = 0; c < s->n_cubes; c++) {
                for (uint32_t ch = 0; ch < n_ch; ch++)
                        busy_hbm += s->cubes[c].channels[ch].busy_ps;
                hbm_rd += s->cubes[c].hbm_read_bytes;
                hbm_wr += s->cubes[c].hbm_write_bytes;
        }
        struct { const char *name; sim_ps busy; uint64_t n; } cls[] = {
                { "pe_cpu", busy_cpu, s->n_pes },
                { "pe_dma", busy_dma, s->n_pes }, /* the data path, shared by the channels */
                { "pe_gemm", busy_gemm, s->n_pes },
                { "pe_math", busy_math, s->n_pes },
                { "hbm_channel", busy_hbm, (uint64_t)s->n_cubes * n_ch },
        };
        json_t *busy = json_object(), *util = json_object();
        for (size_t i = 0; i < sizeof cls / sizeof cls[0]; i++) {
                json_object_set_new(busy, cls[i].name, json_integer((json_int_t)cls[i].busy));
                double u = span ? (double)cls[i].busy / ((double)span * (double)cls[i].n) : 0.0;
                json_object_set_new(util, cls[i].name, json_real(u));
        }
        json_object_set_new(o, "busy_ps", busy);
        json_object_set_new(o, "utilisation", util);
        json_t *bytes = json_object();
        for (int c = 0; c < TOPO_EDGE_CLASS_COUNT; c++)
                json_object_set_new(bytes, topo_edge_class_name(c),
                                    json_integer((json_int_t)s->class_bytes[c]));
        json_object_set_new(o, "link_bytes", bytes);
        json_object_set_new(o, "hbm_read_bytes", json_integer((json_int_t)hbm_rd));
        json_object_set_new(o, "hbm_write_bytes", json_integer((json_int_t)hbm_wr));

        json_t *pes = json_array();
        for (uint32_t i = 0; i < s->n_pes; i++) {
                const struct hw_pe *pe = &s->pes[i];
                json_t *p = json_object();
                json_object_set_new(p, "pe", json_string(pe->name));
                json_object_set_new(p, "exec_start_ps", json_integer((json_int_t)pe->exec_start_ps));
                json_object_set_new(p, "exec_end_ps", json_integer((json_int_t)pe->exec_end_ps));
                json_array_append_new(pes, p);
        }
        json_object_set_new(o, "pes", pes);
        return o;
}

void rep_run_summary_text(const struct hw_sim *s, const char *kernel, FILE *out)
{
        sim_ps end = kernel_end(s);
        fprintf(out, "kernel %s on %s: %u PEs (%u SIPs x %u cubes x %u PEs)\n", kernel,
                s->topo->name, s->n_pes, s->n_sips, s->topo->sip.cubes, s->pes_per_cube);
        fprintf(out, "  launch to completion: %" PRIu64 " ns\n", s->done_ps / SIM_PS_PER_NS);
        fprintf(out, "  kernel start (all PEs): %.3f ns\n", (double)s->target_start_ps / 1e3);
        fprintf(out, "  kernel time (first start to last end): %.3f ns\n",
                (double)(end - s->target_start_ps) / 1e3);
        fprintf(out, "  events: %" PRIu64 "\n", s->ev.n_events);
}
