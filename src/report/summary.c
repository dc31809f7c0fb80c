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

json_t *rep_run_summary(const struct tl_run *r, const char *kernel)
{
        const struct hw_sim *s = r->sim;
        json_t *o = json_object();
        json_object_set_new(o, "kernel", json_string(kernel));
        json_object_set_new(o, "machine", json_string(s->topo->name));
        json_object_set_new(o, "sim_ns", json_integer((json_int_t)(s->done_ps / SIM_PS_PER_NS)));
        json_object_set_new(o, "sim_ps", json_integer((json_int_t)s->done_ps));
        json_object_set_new(o, "target_start_ps", json_integer((json_int_t)s->target_start_ps));
        json_object_set_new(o, "kernel_ps",
                            json_integer((json_int_t)(kernel_end(s) - s->target_start_ps)));
        json_object_set_new(o, "events", json_integer((json_int_t)s->ev.n_events));

        sim_ps issue[TOPO_OP_COUNT] = { 0 };
        uint64_t ops[TOPO_OP_COUNT] = { 0 };
        for (uint32_t i = 0; i < s->n_pes; i++)
                for (int op = 0; op < TOPO_OP_COUNT; op++) {
                        issue[op] += r->ctx[i].issue_ps[op];
                        ops[op] += r->ctx[i].n_ops[op];
                }
        json_t *iss = json_object(), *cnt = json_object();
        for (int op = 0; op < TOPO_OP_COUNT; op++) {
                if (!ops[op])
                        continue;
                json_object_set_new(iss, topo_op_name(op), json_integer((json_int_t)issue[op]));
                json_object_set_new(cnt, topo_op_name(op), json_integer((json_int_t)ops[op]));
        }
        json_object_set_new(o, "pe_cpu_issue_ps", iss);
        json_object_set_new(o, "op_counts", cnt);

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

void rep_run_summary_text(const struct tl_run *r, const char *kernel, FILE *out)
{
        const struct hw_sim *s = r->sim;
        sim_ps end = kernel_end(s);
        fprintf(out, "kernel %s on %s: %u PEs (%u SIPs x %u cubes x %u PEs)\n", kernel,
                s->topo->name, s->n_pes, s->n_sips, s->topo->sip.cubes, s->pes_per_cube);
        fprintf(out, "  launch to completion: %" PRIu64 " ns\n", s->done_ps / SIM_PS_PER_NS);
        fprintf(out, "  kernel start (all PEs): %.3f ns\n", (double)s->target_start_ps / 1e3);
        fprintf(out, "  kernel time (first start to last end): %.3f ns\n",
                (double)(end - s->target_start_ps) / 1e3);
        fprintf(out, "  events: %" PRIu64 "\n", s->ev.n_events);
}
