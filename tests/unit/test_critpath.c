/* tests/unit/test_critpath.c: the critical path's log (report/critpath.h)
 * on a hand-made timeline, without a machine.
 *
 * A log entry keeps its start and end as 32-bit offsets (docs/adr/0051);
 * a wait, an op or a queue longer than that (4.3 ms) keeps its times
 * aside. These timelines have such steps, between short ones, and the
 * path must still split the kernel time exactly as recorded. */
#include <criterion/criterion.h>

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>

#include "hw/hw.h"
#include "report/critpath.h"

/* Longer than a 32-bit offset in ps. */
#define LONG_PS (UINT64_C(5) << 32)

/* A machine of one PE, as much of it as the log reads. */
struct fake {
        struct hw_sim s;             /* the run (n_pes, pes, the clock) */
        struct hw_pe pe;             /* its PE */
};

static struct fake *fake_new(void)
{
        struct fake *f = calloc(1, sizeof *f);
        cr_assert(f);
        f->s.n_pes = 1;
        f->s.pes = &f->pe;
        return f;
}

/* PE 0's op of component comp named what, issued at now, over [start, end). */
static void op(struct rep_cp *cp, struct fake *f, const char *comp, const char *what, sim_ps now,
               sim_ps start, sim_ps end, int line)
{
        f->s.ev.now = now;
        struct rep_op o = { .pe = "pe0", .pe_index = 0, .component = comp, .op = what,
                            .start_ps = start, .end_ps = end };
        rep_cp_op(cp, &f->s, 0, &o, "k.c", line, false);
}

/* The critical_path object of cp's JSON (released by the caller): the
 * path is printed as the last member of a run's summary (here, one
 * member). */
static json_t *path_json(const struct rep_cp *cp)
{
        char *buf = NULL;
        size_t len = 0;
        FILE *m = open_memstream(&buf, &len);
        cr_assert(m);
        json_t *summary = json_pack("{s:s}", "kernel", "fake");
        cr_assert_eq(rep_cp_json_print(cp, m, summary, 2), 0);
        cr_assert_eq(fclose(m), 0);
        json_error_t err;
        json_t *j = json_loads(buf, 0, &err);
        cr_assert(j, "%s: %s", err.text, buf);
        free(buf);
        json_t *p = json_incref(json_object_get(j, "critical_path"));
        json_decref(j);
        cr_assert(p);
        return p;
}

static uint64_t ps_of(json_t *o, const char *key)
{
        json_t *v = json_object_get(o, key);
        cr_assert(json_is_integer(v), "%s", key);
        return (uint64_t)json_integer_value(v);
}

/* Issue, an op of 5 x 2^32 ps its PE waits for, a second op that queues
 * 5 x 2^32 ps before it starts, waited for too, then issue: the path is
 * 30 ps of issue and 2 x 5 x 2^32 + 10 ps on the DMA engine, to the
 * picosecond. */
Test(critpath, long_steps_keep_their_times)
{
        const sim_ps L = LONG_PS;
        struct fake *f = fake_new();
        struct rep_cp *cp = rep_cp_new(1);
        cr_assert(cp);
        rep_cp_issue(cp, 0, 0, 10, "k.c", 1, "tl_load");
        op(cp, f, "pe_dma", "load", 10, 10, 10 + L, 1);
        rep_cp_wait(cp, 0, 0, 10, 10 + L, "k.c", 2);
        rep_cp_issue(cp, 0, 10 + L, 20 + L, "k.c", 3, "tl_load");
        op(cp, f, "pe_dma", "load", 20 + L, 20 + 2 * L, 30 + 2 * L, 3);
        rep_cp_wait(cp, 0, 0, 20 + L, 30 + 2 * L, "k.c", 4);
        rep_cp_issue(cp, 0, 30 + 2 * L, 40 + 2 * L, "k.c", 5, "tl_store");
        f->pe.exec_end_ps = 40 + 2 * L;
        cr_assert_eq(rep_cp_analyse(cp, &f->s), 0);
        cr_assert_eq(rep_cp_kernel_ps(cp), 40 + 2 * L);
        json_t *p = path_json(cp);
        json_t *bc = json_object_get(p, "by_class");
        cr_assert_eq(ps_of(p, "kernel_ps"), 40 + 2 * L);
        cr_assert_eq(ps_of(bc, "pe_cpu"), 30);
        cr_assert_eq(ps_of(bc, "pe_dma"), 2 * L + 10);
        cr_assert_eq(ps_of(bc, "wait"), 0);
        cr_assert_eq(ps_of(bc, "launch"), 0);
        json_decref(p);
        rep_cp_free(cp);
        free(f);
}

/* Issue (10 ps), a DMA op of 100 ps the PE waits for, issue (10 ps): the
 * what-if re-times the log forward, keeping an entry's moves only while
 * later entries still read them (their count, kept as the log is
 * written: docs/adr/0051's second amendment). 2x DMA: the op ends 50 ps
 * sooner, 70 ps; 2x PE_CPU: each issue 5 ps shorter, 110 ps. A count
 * that missed the wait's read of the op would free (or never fill) the
 * op's moves before the wait reads them. */
Test(critpath, whatif_reads_each_entry_while_it_is_referred_to)
{
        struct fake *f = fake_new();
        struct rep_cp *cp = rep_cp_new(1);
        cr_assert(cp);
        rep_cp_issue(cp, 0, 0, 10, "k.c", 1, "tl_load");
        op(cp, f, "pe_dma", "load", 10, 10, 110, 1);
        rep_cp_wait(cp, 0, 0, 10, 110, "k.c", 2);
        rep_cp_issue(cp, 0, 110, 120, "k.c", 3, "tl_store");
        f->pe.exec_end_ps = 120;
        cr_assert_eq(rep_cp_analyse(cp, &f->s), 0);
        json_t *p = path_json(cp);
        json_t *w = json_object_get(p, "what_if_2x_kernel_ps");
        cr_assert_eq(ps_of(p, "kernel_ps"), 120);
        cr_assert_eq(ps_of(json_object_get(p, "by_class"), "pe_dma"), 100);
        cr_assert_eq(ps_of(w, "pe_dma"), 70);
        cr_assert_eq(ps_of(w, "pe_cpu"), 110);
        json_decref(p);
        rep_cp_free(cp);
        free(f);
}
