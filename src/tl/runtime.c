/* tl/runtime.c: running a kernel on every PE, and the tl_* calls that ask
 * about the launch. Each call pays its PE_CPU issue cost (the topology's
 * per-op-type table) before it takes effect. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "tl/tl_int.h"

void tl__issue(tl_ctx *tl, enum topo_op op)
{
        sim_ps cost = topo_issue_cost_ps(&tl->sim->topo->pe.cpu, op);
        tl->issue_ps[op] += cost;
        tl->n_ops[op]++;
        if (cost)
                ev_sleep(tl->proc, cost);
}

static int axis_count(const struct hw_sim *s, int axis)
{
        switch (axis) {
        case 0: return (int)s->pes_per_cube;
        case 1: return (int)s->topo->sip.cubes;
        case 2: return (int)s->n_sips;
        }
        return -1;
}

int tl__program_id(tl_ctx *tl, int axis, const char *file, int line)
{
        (void)file;
        (void)line;
        tl__issue(tl, TOPO_OP_PROGRAM_ID);
        switch (axis) {
        case 0: return (int)tl->pe->pe;
        case 1: return (int)tl->pe->cube;
        case 2: return (int)tl->pe->sip;
        }
        return -1;
}

int tl__num_programs(tl_ctx *tl, int axis, const char *file, int line)
{
        (void)file;
        (void)line;
        tl__issue(tl, TOPO_OP_PROGRAM_ID);
        return axis_count(tl->sim, axis);
}

struct body_arg {
        const struct tl_kernel *k;   /* the kernel */
        const void *args;            /* its argument block */
        struct tl_ctx *ctx;          /* per-PE contexts */
};

static void pe_body(struct hw_pe *pe, void *arg)
{
        struct body_arg *b = arg;
        tl_ctx *tl = &b->ctx[pe->global];
        tl->pe = pe;
        tl->sim = pe->sim;
        tl->proc = &pe->proc;
        b->k->fn(tl, b->args);
}

int tl_run_kernel(struct hw_sim *sim, const struct tl_kernel *k, const void *args,
                  struct tl_run *out, struct diag *d)
{
        memset(out, 0, sizeof *out);
        out->sim = sim;
        out->ctx = calloc(sim->n_pes, sizeof *out->ctx);
        if (!out->ctx) {
                diag_error(d, "out of memory for %u kernel contexts", sim->n_pes);
                return -ENOMEM;
        }
        struct body_arg b = { .k = k, .args = args, .ctx = out->ctx };
        if (hw_launch(sim, pe_body, &b) < 0) {
                diag_error(d, "out of memory launching the kernel");
                return -ENOMEM;
        }
        out->result = ev_run(&sim->ev, d);
        if (out->result != EV_DONE)
                return -1;
        for (uint32_t i = 0; i < sim->n_pes; i++) {
                if (!sim->pes[i].finished) {
                        diag_error(d, "%s: the kernel never finished (no stack could be mapped?)",
                                   sim->pes[i].name);
                        return -1;
                }
        }
        return 0;
}

void tl_run_fini(struct tl_run *r)
{
        free(r->ctx);
        r->ctx = NULL;
}
