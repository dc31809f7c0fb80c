/* tests/unit/test_composite.c: the planner (stages, scopes, errors), the
 * feeder (completions, double buffering, tokens), and data-mode equality
 * of composites with the same ops issued one by one. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "base/fp.h"
#include "fixture.h"
#include "plan/plan.h"

/* ---- planner ------------------------------------------------------------------ */

static struct plan_op gemm_op(void)
{
        return (struct plan_op){ .gemm = true, .name = "gemm", .scope = TL_SCOPE_K_TILE };
}

static struct plan_op math_op(const char *name, tl_cscope scope)
{
        return (struct plan_op){ .name = name, .cost_op = TOPO_OP_ADD, .scope = scope,
                                 .elements = 100 };
}

static const struct plan_gemm shape = { .m = 128, .n = 96, .k = 200, .tile_m = 64, .tile_n = 64,
                                        .tile_k = 64, .a_elem_bytes = 2, .b_elem_bytes = 2,
                                        .out_elem_bytes = 2, .a_hbm = true, .b_hbm = true,
                                        .out_hbm = true };

/* Plan the n ops over g into p; the planner must accept them. */
static void plan_ok(const struct plan_op *ops, int n, const struct plan_gemm *g,
                    struct pipeline_plan *p)
{
        char err[256];
        cr_assert_eq(plan_generate_from_ops(ops, n, g, p, err, sizeof err), 0, "%s", err);
}

Test(plan, stages_by_scope)
{
        struct plan_op ops[] = { math_op("pre", TL_SCOPE_KERNEL), gemm_op(),
                                 math_op("dequant", TL_SCOPE_K_TILE), math_op("bias", TL_SCOPE_OUTPUT_TILE),
                                 math_op("relu", TL_SCOPE_OUTPUT_TILE), math_op("post", TL_SCOPE_KERNEL) };
        struct pipeline_plan p;
        plan_ok(ops, 6, &shape, &p);
        cr_assert_eq(p.n_prologue, 1);
        cr_assert_str_eq(plan_prologue(&p)[0].op, "pre");
        cr_assert(p.has_gemm);
        cr_assert_eq(p.tiles_m, 2);
        cr_assert_eq(p.tiles_n, 2);
        cr_assert_eq(p.tiles_k, 4);
        cr_assert_eq(p.n_k_tile, 1);
        cr_assert_str_eq(plan_k_tile(&p)[0].op, "dequant");
        cr_assert_eq(p.n_out_tile, 2);
        cr_assert_str_eq(plan_out_tile(&p)[1].op, "relu");
        cr_assert_eq(p.n_post, 1);
        cr_assert_str_eq(plan_post(&p)[0].op, "post");
        cr_assert_eq(plan_n_completions(&p), 1 + 2 * 2 * 4 + 1);
}

Test(plan, ops_after_the_gemm_go_to_their_sections_in_op_order)
{
        struct plan_op ops[] = { gemm_op(), math_op("post1", TL_SCOPE_KERNEL),
                                 math_op("bias", TL_SCOPE_OUTPUT_TILE), math_op("dq", TL_SCOPE_K_TILE),
                                 math_op("relu", TL_SCOPE_OUTPUT_TILE), math_op("post2", TL_SCOPE_KERNEL) };
        struct pipeline_plan p;
        plan_ok(ops, 6, &shape, &p);
        cr_assert_eq(p.n_prologue, 0);
        cr_assert_eq(p.n_k_tile, 1);
        cr_assert_str_eq(plan_k_tile(&p)[0].op, "dq");
        cr_assert_eq(p.n_out_tile, 2);
        cr_assert_str_eq(plan_out_tile(&p)[0].op, "bias");
        cr_assert_str_eq(plan_out_tile(&p)[1].op, "relu");
        cr_assert_eq(p.n_post, 2);
        cr_assert_str_eq(plan_post(&p)[0].op, "post1");
        cr_assert_str_eq(plan_post(&p)[1].op, "post2");
}

Test(plan, math_only_is_the_plain_plan)
{
        struct plan_op ops[] = { math_op("a", TL_SCOPE_OUTPUT_TILE), math_op("b", TL_SCOPE_KERNEL) };
        struct pipeline_plan p;
        plan_ok(ops, 2, &shape, &p);
        cr_assert(!p.has_gemm);
        cr_assert_eq(p.n_prologue, 2);
        cr_assert_eq(plan_n_completions(&p), 2);
}

Test(plan, two_gemms_is_an_error_naming_them)
{
        struct plan_op ops[] = { gemm_op(), math_op("x", TL_SCOPE_OUTPUT_TILE), gemm_op() };
        struct pipeline_plan p;
        char err[256];
        cr_assert_eq(plan_generate_from_ops(ops, 3, &shape, &p, err, sizeof err), -1);
        cr_assert_str_eq(err, "two GEMM ops (#0 gemm and #2 gemm); a composite has at most one");
}

/* A plan made again for other shapes from one already made is the plan
 * its ops would give with those shapes: stages, elements, GEMM, tiles. */
Test(plan, replan_equals_a_fresh_plan)
{
        struct plan_op ops[] = { math_op("pre", TL_SCOPE_KERNEL), gemm_op(),
                                 math_op("dequant", TL_SCOPE_K_TILE),
                                 math_op("bias", TL_SCOPE_OUTPUT_TILE),
                                 math_op("post", TL_SCOPE_KERNEL) };
        struct pipeline_plan first, fresh, again;
        plan_ok(ops, 5, &shape, &first);
        struct plan_gemm g2 = shape;
        g2.m = 300;
        g2.k = 70;
        g2.tile_n = 0;                /* defaulted to 64 either way */
        const uint64_t el[4] = { 11, 22, 33, 44 };
        for (int i = 0, j = 0; i < 5; i++)
                if (!ops[i].gemm)
                        ops[i].elements = el[j++];
        plan_ok(ops, 5, &g2, &fresh);
        memset(&again, 0xa5, sizeof again);
        plan_replan(&again, &first, &g2, el);
        cr_assert_eq(again.n_prologue, fresh.n_prologue);
        cr_assert_eq(again.n_k_tile, fresh.n_k_tile);
        cr_assert_eq(again.n_out_tile, fresh.n_out_tile);
        cr_assert_eq(again.n_post, fresh.n_post);
        cr_assert_eq(again.has_gemm, fresh.has_gemm);
        cr_assert_eq(again.tiles_m, 5);
        cr_assert_eq(again.tiles_m, fresh.tiles_m);
        cr_assert_eq(again.tiles_n, fresh.tiles_n);
        cr_assert_eq(again.tiles_k, fresh.tiles_k);
        const struct plan_gemm *x = &again.gemm, *y = &fresh.gemm;
        cr_assert(x->m == y->m && x->n == y->n && x->k == y->k && x->tile_m == y->tile_m &&
                  x->tile_n == y->tile_n && x->tile_k == y->tile_k);
        int n = fresh.n_prologue + fresh.n_k_tile + fresh.n_out_tile + fresh.n_post;
        for (int i = 0; i < n; i++) {
                const struct plan_stage *sa = &again.stage[i], *sf = &fresh.stage[i];
                cr_assert(sa->unit == sf->unit && sa->op == sf->op && sa->scope == sf->scope &&
                          sa->cost_op == sf->cost_op && sa->elements == sf->elements,
                          "stage %d differs", i);
        }
}

Test(plan, prologue_must_read_tcm)
{
        struct plan_op ops[] = { math_op("head", TL_SCOPE_KERNEL), math_op("exp", TL_SCOPE_KERNEL),
                                 gemm_op() };
        ops[0].reads_hbm = true;      /* the head op may stream */
        ops[0].hbm_name = "x";
        struct pipeline_plan p;
        char err[256];
        plan_ok(ops, 3, &shape, &p);
        ops[1].reads_hbm = true;
        ops[1].hbm_name = "y";
        cr_assert_eq(plan_generate_from_ops(ops, 3, &shape, &p, err, sizeof err), -1);
        cr_assert_str_eq(err, "prologue op #1 exp reads HBM tensor 'y'; prologue ops read TCM only "
                              "(load it first)");
        struct plan_op bad[] = { math_op("tile", TL_SCOPE_OUTPUT_TILE), gemm_op() };
        cr_assert_eq(plan_generate_from_ops(bad, 2, &shape, &p, err, sizeof err), -1);
}

/* ---- feeder ------------------------------------------------------------------ */


struct rec {
        char unit[16];               /* dma_read, gemm, math, dma_write */
        char op[16];                 /* stage op */
        int64_t tile;                /* tile index */
        sim_ps start, end;           /* times */
};

static struct rec recs[512];
static int n_recs;

static void capture(void *ctx, const struct rep_op *op)
{
        (void)ctx;
        if (n_recs == 512)
                return;
        struct rec *r = &recs[n_recs++];
        memset(r, 0, sizeof *r);
        for (unsigned i = 0; i < op->n_params; i++) {
                if (strcmp(op->params[i].name, "unit") == 0)
                        snprintf(r->unit, sizeof r->unit, "%s", op->params[i].s);
                if (strcmp(op->params[i].name, "tile") == 0)
                        r->tile = op->params[i].i;
        }
        snprintf(r->op, sizeof r->op, "%s", op->op);
        r->start = op->start_ps;
        r->end = op->end_ps;
}

static const struct rec *find(const char *unit, int64_t tile)
{
        for (int i = 0; i < n_recs; i++)
                if (strcmp(recs[i].unit, unit) == 0 && recs[i].tile == tile)
                        return &recs[i];
        cr_assert_fail("no %s stage for tile %lld", unit, (long long)tile);
        return NULL;
}

TestSuite(feed, .init = fixture_small, .fini = fixture_fini);

static struct pipeline_plan feed_plan; /* the plan feed made */
static struct plan_run feed_run;       /* its feed */

/* Plan the n ops over g, feed the plan to PE 0 from time start with its
 * stages logged into recs, and run the loop until every stage is placed:
 * the feed's results. */
static const struct plan_ctx *feed(const struct plan_op *ops, int n, const struct plan_gemm *g,
                                   sim_ps start)
{
        plan_ok(ops, n, g, &feed_plan);
        n_recs = 0;
        plan_feed(&feed_run, &feed_plan,
                  &(struct plan_ctx){ .pe = &sim.pes[0], .start = start, .log = capture });
        cr_assert_eq(ev_run(&sim.ev, &d), EV_DONE);
        return &feed_run.pc;
}

Test(feed, double_buffering_overlaps_dma_and_gemm)
{
        struct plan_op ops[] = { gemm_op(), math_op("bias", TL_SCOPE_OUTPUT_TILE) };
        struct plan_gemm g = shape;
        g.m = 64;
        g.n = 64;
        g.k = 512;                   /* 8 K tiles of one output tile */
        const struct plan_ctx *pc = feed(ops, 2, &g, 0);
        cr_assert_eq(pc->completions, 8);
        /* Tile 1's read is in flight while tile 0's GEMM runs. */
        cr_assert_lt(find("dma_read", 1)->start, find("gemm", 0)->end);
        /* ... but tile 2's read waits for tile 0's GEMM to free its buffer. */
        cr_assert_geq(find("dma_read", 2)->start, find("gemm", 0)->end);
        /* The bias runs once, after the last K tile. */
        int n_bias = 0;
        for (int i = 0; i < n_recs; i++)
                n_bias += strcmp(recs[i].op, "bias") == 0;
        cr_assert_eq(n_bias, 1);
        cr_assert_geq(find("math", 7)->start, find("gemm", 7)->end);
}

Test(feed, prologue_and_post_are_standalone_tiles)
{
        struct plan_op ops[] = { math_op("pre1", TL_SCOPE_KERNEL), math_op("pre2", TL_SCOPE_KERNEL),
                                 gemm_op(), math_op("post", TL_SCOPE_KERNEL) };
        struct plan_gemm g = shape;
        g.a_pinned = true;           /* produced by the prologue, used in place */
        const struct plan_ctx *pc = feed(ops, 4, &g, 1000);
        cr_assert_eq(pc->completions, plan_n_completions(&feed_plan));
        cr_assert_eq(pc->completions, 2 + 2 * 2 * 4 + 1);
        /* Tile 0 and 1 are the prologue, each on PE_MATH, in order. */
        cr_assert_str_eq(find("math", 0)->op, "pre1");
        cr_assert_str_eq(find("math", 1)->op, "pre2");
        /* The GEMM of the first loop tile starts after the prologue: it reads P. */
        cr_assert_geq(find("gemm", 2)->start, find("math", 1)->end);
        /* No DMA for the pinned operand: one read (b) per loop tile. */
        int reads = 0;
        for (int i = 0; i < n_recs; i++)
                reads += strcmp(recs[i].unit, "dma_read") == 0;
        cr_assert_eq(reads, 2 * 2 * 4);
        /* The post stage is last and after every loop tile. */
        const struct rec *post = find("math", 2 + 16);
        cr_assert_str_eq(post->op, "post");
        for (int i = 0; i < n_recs; i++)
                if (strcmp(recs[i].unit, "gemm") == 0)
                        cr_assert_geq(post->start, recs[i].end);
        cr_assert_eq(pc->end, post->end);
}

/* The engine time and work of the records logged. */
static sim_ps logged_busy[REP_ENG_COUNT];
static struct rep_work logged_work;
static int n_logged;

static void log_work(void *ctx, const struct rep_op *op)
{
        (void)ctx;
        enum rep_engine e = rep_engine_of(op->component);
        cr_assert_lt(e, REP_ENG_COUNT);
        logged_busy[e] += op->end_ps - op->start_ps;
        rep_work_add(&logged_work, e, op->bytes, op->flops, op->elem_cycles,
                     (enum topo_mac_dt)op->mac_dt);
        n_logged++;
}

static void log_never(void *ctx, const struct rep_op *op)
{
        (void)ctx;
        cr_assert_fail("log called for stage %s although tally is set", op->op);
}

/* A caller that writes no records has the stages tallied: the same engine
 * time and work as the full records add up to, which log never gets (the
 * same plan on the first PE of each cube, side by side). */
Test(feed, tally_sums_what_log_sees)
{
        struct plan_op ops[] = { math_op("pre", TL_SCOPE_KERNEL), gemm_op(),
                                 math_op("dequant", TL_SCOPE_K_TILE),
                                 math_op("bias", TL_SCOPE_OUTPUT_TILE),
                                 math_op("post", TL_SCOPE_KERNEL) };
        static struct pipeline_plan p;
        static struct plan_run a, b;
        plan_ok(ops, 5, &shape, &p);
        p.gemm.mac_dt = TOPO_MAC_FP32; /* the GEMM's MACs are counted in its class */
        n_logged = 0;
        memset(logged_busy, 0, sizeof logged_busy);
        memset(&logged_work, 0, sizeof logged_work);
        plan_feed(&a, &p, &(struct plan_ctx){ .pe = &sim.pes[0], .log = log_work });
        plan_feed(&b, &p, &(struct plan_ctx){ .pe = &sim.pes[sim.pes_per_cube], .log = log_never,
                                              .tally = true });
        cr_assert_eq(ev_run(&sim.ev, &d), EV_DONE);
        /* pre; per K tile two reads, the GEMM, dequant; per output tile bias and
         * the write; post. */
        cr_assert_eq(n_logged, 1 + 2 * 2 * 4 * 4 + 2 * 2 * 2 + 1);
        for (int e = 0; e < REP_ENG_COUNT; e++) {
                cr_assert_gt(logged_busy[e], 0);
                cr_assert_eq(b.pc.busy_ps[e], logged_busy[e], "engine %d", e);
                cr_assert_eq(a.pc.busy_ps[e], 0, "no tally without tally set");
        }
        cr_assert_gt(logged_work.math_elem_cycles, 0);
        cr_assert_eq(memcmp(&b.pc.work, &logged_work, sizeof logged_work), 0);
        cr_assert_gt(logged_work.gemm_flops, 0);
        cr_assert_eq(logged_work.gemm_flops_dt[TOPO_MAC_FP32], logged_work.gemm_flops);
        cr_assert_eq(b.pc.work.gemm_flops_dt[TOPO_MAC_FP32], b.pc.work.gemm_flops);
        cr_assert_eq(b.pc.completions, a.pc.completions);
        cr_assert_eq(b.pc.end, a.pc.end);
}

Test(feed, stages_hand_over_through_tcm)
{
        struct plan_op ops[] = { gemm_op(), math_op("dequant", TL_SCOPE_K_TILE),
                                 math_op("bias", TL_SCOPE_OUTPUT_TILE),
                                 math_op("relu", TL_SCOPE_OUTPUT_TILE),
                                 math_op("scale", TL_SCOPE_OUTPUT_TILE) };
        feed(ops, 5, &shape, 0);
        /* As primitives do: no link hop between the stages of a tile, only
         * their TCM traffic ... */
        cr_assert_gt(sim.pes[0].tcm_bytes, 0);
        cr_assert_eq(sim.class_bytes[TOPO_EDGE_INTRA_PE], sim.pes[0].tcm_bytes);
        /* ... so a stage starts when the one before it ends, if its engine is free. */
        const struct rec *g0 = find("gemm", 0);
        uint64_t last_read = 0;
        for (int i = 0; i < n_recs; i++)
                if (strcmp(recs[i].unit, "dma_read") == 0 && recs[i].tile == 0 &&
                    recs[i].end > last_read)
                        last_read = recs[i].end;
        cr_assert_eq(g0->start, last_read, "tile 0's GEMM starts when its last operand lands");
}

/* ---- data mode: composite == ops one by one ----------------------------------- */

static float out_composite[64 * 48], out_ops[64 * 48];
static float st_composite[3][64 * 32], st_ops[3][64 * 32];

static tl_tensor *random_tcm(tl_ctx *tl, int64_t r, int64_t c, uint32_t seed)
{
        tl_tensor *x = tl_alloc(tl, TL_TCM, TL_FP32, 2, ((int64_t[]){ r, c }));
        uint32_t s = seed;
        for (int64_t i = 0; i < r * c; i++) {
                s = s * 1664525u + 1013904223u;
                x->base[i] = (float)((s >> 8) & 0xffff) / 32768.0f - 1.0f;
        }
        return x;
}

static void k_epilogue_both_ways(tl_ctx *tl, const void *args)
{
        if (tl->rank != 0)
                return;
        const int64_t M = 64, N = 48, K = 150, TK = 64;
        tl_tensor *a = random_tcm(tl, M, K, 1), *b = random_tcm(tl, K, N, 2);
        tl_tensor *bias = random_tcm(tl, 1, N, 3);
        int64_t nk = 3;
        tl_tensor *s = tl_alloc(tl, TL_TCM, TL_FP32, 1, &nk);
        s->base[0] = 0.5f;
        s->base[1] = -1.25f;
        s->base[2] = 2.0f;
        tl_tensor *out = tl_alloc(tl, TL_TCM, TL_BF16, 2, ((int64_t[]){ M, N }));
        tl_handle h = tl_composite(tl, &(tl_composite_desc){
                .op = TL_GEMM, .a = a, .b = b, .out = out, .tile_m = 32, .tile_n = 32, .tile_k = TK,
                .epilogue = (tl_epilogue[]){
                        { .op = TL_DEQUANT, .tensor = s, .scope = TL_SCOPE_K_TILE },
                        { .op = TL_BIAS, .tensor = bias },
                        { .op = TL_RELU },
                        { .op = TL_SCALE, .factor = 0.5f },
                },
                .n_epilogue = 4,
        });
        tl_wait(tl, h);
        memcpy(out_composite, out->base, sizeof out_composite);
        /* The same, one op at a time. */
        tl_tensor *acc = NULL;
        for (int64_t k0 = 0, kt = 0; k0 < K; k0 += TK, kt++) {
                int64_t kk = K - k0 < TK ? K - k0 : TK;
                tl_tensor *p = tl_dot(tl, tl_view(tl, a, ((int64_t[]){ 0, k0 }), ((int64_t[]){ M, kk })),
                                      tl_view(tl, b, ((int64_t[]){ k0, 0 }), ((int64_t[]){ kk, N })), false);
                p = tl_scale(tl, p, s->base[kt]);
                acc = acc ? tl_add(tl, acc, p) : p;
        }
        tl_tensor *y = tl_scale(tl, tl_relu(tl, tl_add(tl, acc, bias)), 0.5f);
        tl_tensor *out2 = tl_alloc(tl, TL_TCM, TL_BF16, 2, ((int64_t[]){ M, N }));
        tl_copy_to(tl, out2, y);
        tl_wait_tensor(tl, out2);
        memcpy(out_ops, out2->base, sizeof out_ops);
}

Test(feed, gemm_epilogue_composite_equals_ops_one_by_one)
{
        static struct tl_kernel k = { .name = "both", .fn = k_epilogue_both_ways };
        const struct tl_run_opts *o = fixture_opts(TL_MODE_DATA, 1);
        fixture_run_ok(k.name, &k, o, NULL, 0);
        for (int i = 0; i < 64 * 48; i++)
                cr_assert_eq(out_composite[i], out_ops[i], "element %d: %.9g vs %.9g", i,
                             out_composite[i], out_ops[i]);
        int nonzero = 0;
        for (int i = 0; i < 64 * 48; i++)
                nonzero += out_ops[i] != 0.0f;
        cr_assert_gt(nonzero, 100, "relu left something");
}

/* A handle's record is reused once its composite is placed: waiting on
 * the handle again, after a later composite took the record, waits for
 * nothing (its own composite is done), not for the later one. */
static sim_ps again_at, second_end;
static void k_wait_twice(tl_ctx *tl, const void *args)
{
        if (tl->rank != 0)
                return;
        int64_t dims[2] = { 128, 128 };
        tl_tensor *a = tl_alloc(tl, TL_TCM, TL_BF16, 2, dims);
        tl_tensor *b = tl_alloc(tl, TL_TCM, TL_BF16, 2, dims);
        tl_tensor *c1 = tl_alloc(tl, TL_TCM, TL_FP32, 2, dims);
        tl_tensor *c2 = tl_alloc(tl, TL_TCM, TL_FP32, 2, dims);
        tl_composite_desc cd = { .op = TL_GEMM, .a = a, .b = b, .out = c1, .tile_m = 128,
                                .tile_n = 128, .tile_k = 128 };
        tl_handle h1 = tl_composite(tl, &cd);
        tl_wait(tl, h1);
        cd.out = c2;
        tl_handle h2 = tl_composite(tl, &cd);
        tl_wait(tl, h1);
        again_at = ev_now(&tl->sim->ev);
        tl_wait(tl, h2);
        second_end = ev_now(&tl->sim->ev);
}

Test(feed, a_handle_waited_again_after_its_record_is_reused)
{
        static struct tl_kernel k = { .name = "twice", .fn = k_wait_twice };
        const struct tl_run_opts *o = fixture_opts(TL_MODE_OPLOG, 1);
        fixture_run_ok(k.name, &k, o, NULL, 0);
        cr_assert_gt(second_end, again_at + 10 * SIM_PS_PER_NS,
                     "the second wait on h1 returned at %llu ps, h2 ended at %llu ps",
                     (unsigned long long)again_at, (unsigned long long)second_end);
}

static void k_merge_both_ways(tl_ctx *tl, const void *args)
{
        if (tl->rank != 0)
                return;
        const int64_t M = 64, N = 100, D = 32;
        tl_tensor *sc = random_tcm(tl, M, N, 7), *v = random_tcm(tl, N, D, 8);
        tl_tensor *state[2][3];
        for (int w = 0; w < 2; w++) {
                state[w][0] = random_tcm(tl, M, 1, 9);     /* m */
                state[w][1] = random_tcm(tl, M, 1, 10);    /* l */
                state[w][2] = random_tcm(tl, M, D, 11);    /* o */
                for (int i = 0; i < M; i++)
                        state[w][1]->base[i] = fabsf(state[w][1]->base[i]);
        }
        tl_handle h = tl_softmax_merge(tl, sc, v, state[0][0], state[0][1], state[0][2]);
        tl_wait(tl, h);
        /* One by one, with P . V in the recipe's K tiles of 64. */
        tl_tensor *m = state[1][0], *l = state[1][1], *o = state[1][2];
        tl_tensor *m_new = tl_max(tl, m, tl_rowmax(tl, sc));
        tl_tensor *p = tl_exp(tl, tl_sub(tl, sc, m_new));
        tl_tensor *alpha = tl_exp(tl, tl_sub(tl, m, m_new));
        tl_tensor *l_new = tl_add(tl, tl_mul(tl, alpha, l), tl_rowsum(tl, p));
        tl_tensor *pv = NULL;
        for (int64_t k0 = 0; k0 < N; k0 += 64) {
                int64_t kk = N - k0 < 64 ? N - k0 : 64;
                tl_tensor *part = tl_dot(tl, tl_view(tl, p, ((int64_t[]){ 0, k0 }), ((int64_t[]){ M, kk })),
                                         tl_view(tl, v, ((int64_t[]){ k0, 0 }), ((int64_t[]){ kk, D })), false);
                pv = pv ? tl_add(tl, pv, part) : part;
        }
        tl_copy_to(tl, o, tl_add(tl, tl_mul(tl, alpha, o), pv));
        tl_copy_to(tl, l, l_new);
        tl_copy_to(tl, m, m_new);
        tl_wait_tensor(tl, o);
        for (int w = 0; w < 3; w++) {
                memcpy(st_composite[w], state[0][w]->base, (size_t)tl_numel(state[0][w]) * 4);
                memcpy(st_ops[w], state[1][w]->base, (size_t)tl_numel(state[1][w]) * 4);
        }
}

Test(feed, softmax_merge_equals_ops_one_by_one)
{
        static struct tl_kernel k = { .name = "merge", .fn = k_merge_both_ways };
        const struct tl_run_opts *o = fixture_opts(TL_MODE_DATA, 1);
        fixture_run_ok(k.name, &k, o, NULL, 0);
        const int n[3] = { 64, 64, 64 * 32 };
        const char *name[3] = { "m", "l", "o" };
        for (int w = 0; w < 3; w++)
                for (int i = 0; i < n[w]; i++)
                        cr_assert_eq(st_composite[w][i], st_ops[w][i], "%s[%d]: %.9g vs %.9g",
                                     name[w], i, st_composite[w][i], st_ops[w][i]);
}

static void k_merge_empty(tl_ctx *tl, const void *args)
{
        if (tl->rank != 0)
                return;
        /* Two empty states: every score masked, running max -inf. */
        tl_tensor *sc = tl_alloc(tl, TL_TCM, TL_FP32, 2, ((int64_t[]){ 4, 8 }));
        tl_tensor *v = tl_alloc(tl, TL_TCM, TL_FP32, 2, ((int64_t[]){ 8, 4 }));
        tl_tensor *m = tl_alloc(tl, TL_TCM, TL_FP32, 2, ((int64_t[]){ 4, 1 }));
        tl_tensor *l = tl_alloc(tl, TL_TCM, TL_FP32, 2, ((int64_t[]){ 4, 1 }));
        tl_tensor *o = tl_alloc(tl, TL_TCM, TL_FP32, 2, ((int64_t[]){ 4, 4 }));
        for (int i = 0; i < 32; i++) {
                sc->base[i] = -INFINITY;
                v->base[i] = 1.0f;
        }
        for (int i = 0; i < 4; i++) {
                m->base[i] = -INFINITY;
                l->base[i] = 0;
        }
        for (int i = 0; i < 16; i++)
                o->base[i] = 0;
        tl_wait(tl, tl_softmax_merge(tl, sc, v, m, l, o));
        for (int i = 0; i < 16; i++)
                out_composite[i] = o->base[i];
        for (int i = 0; i < 4; i++)
                out_composite[16 + i] = l->base[i];
}

Test(feed, merge_of_two_empty_states_is_not_nan)
{
        static struct tl_kernel k = { .name = "empty", .fn = k_merge_empty };
        const struct tl_run_opts *o = fixture_opts(TL_MODE_DATA, 1);
        cr_assert_eq(fixture_run(&k, o, NULL, 0), 0);
        for (int i = 0; i < 20; i++)
                cr_assert(!isnan(out_composite[i]) && out_composite[i] == 0.0f, "[%d] = %g", i,
                          out_composite[i]);
}

/* The running state as disjoint views of one TCM tensor [M, 2 + D] (m in
 * column 0, l in 1, o in the rest) merges as three tensors do. */
static void k_merge_one_buffer(tl_ctx *tl, const void *args)
{
        if (tl->rank != 0)
                return;
        const int64_t M = 16, N = 40, D = 8;
        tl_tensor *sc = random_tcm(tl, M, N, 7), *v = random_tcm(tl, N, D, 8);
        tl_tensor *m = random_tcm(tl, M, 1, 9), *l = random_tcm(tl, M, 1, 10);
        tl_tensor *o = random_tcm(tl, M, D, 11);
        tl_tensor *all = tl_alloc(tl, TL_TCM, TL_FP32, 2, ((int64_t[]){ M, 2 + D }));
        for (int64_t i = 0; i < M; i++) {
                l->base[i] = fabsf(l->base[i]);
                all->base[i * (2 + D)] = m->base[i];
                all->base[i * (2 + D) + 1] = l->base[i];
                for (int64_t j = 0; j < D; j++)
                        all->base[i * (2 + D) + 2 + j] = o->base[i * D + j];
        }
        tl_tensor *vm = tl_view(tl, all, ((int64_t[]){ 0, 0 }), ((int64_t[]){ M, 1 }));
        tl_tensor *vl = tl_view(tl, all, ((int64_t[]){ 0, 1 }), ((int64_t[]){ M, 1 }));
        tl_tensor *vo = tl_view(tl, all, ((int64_t[]){ 0, 2 }), ((int64_t[]){ M, D }));
        tl_wait(tl, tl_softmax_merge(tl, sc, v, m, l, o));
        tl_wait(tl, tl_softmax_merge(tl, sc, v, vm, vl, vo));
        for (int64_t i = 0; i < M; i++) {
                st_ops[0][i] = m->base[i];
                st_ops[1][i] = l->base[i];
                st_composite[0][i] = all->base[i * (2 + D)];
                st_composite[1][i] = all->base[i * (2 + D) + 1];
                for (int64_t j = 0; j < D; j++) {
                        st_ops[2][i * D + j] = o->base[i * D + j];
                        st_composite[2][i * D + j] = all->base[i * (2 + D) + 2 + j];
                }
        }
}

Test(feed, merge_state_in_views_of_one_tensor)
{
        static struct tl_kernel k = { .name = "one_buffer", .fn = k_merge_one_buffer };
        const struct tl_run_opts *o = fixture_opts(TL_MODE_DATA, 1);
        fixture_run_ok(k.name, &k, o, NULL, 0);
        const int n[3] = { 16, 16, 16 * 8 };
        for (int w = 0; w < 3; w++)
                for (int i = 0; i < n[w]; i++)
                        cr_assert_eq(st_composite[w][i], st_ops[w][i], "state %d [%d]: %.9g vs %.9g",
                                     w, i, st_composite[w][i], st_ops[w][i]);
}

/* A bf16 running state is written back as bf16 values. */
static void k_merge_bf16_state(tl_ctx *tl, const void *args)
{
        if (tl->rank != 0)
                return;
        const int64_t M = 8, N = 24, D = 8;
        tl_tensor *sc = random_tcm(tl, M, N, 3), *v = random_tcm(tl, N, D, 4);
        tl_tensor *st[3] = { tl_alloc(tl, TL_TCM, TL_BF16, 2, ((int64_t[]){ M, 1 })),
                             tl_alloc(tl, TL_TCM, TL_BF16, 2, ((int64_t[]){ M, 1 })),
                             tl_alloc(tl, TL_TCM, TL_BF16, 2, ((int64_t[]){ M, D })) };
        for (int64_t i = 0; i < M; i++) {
                st[0]->base[i] = -INFINITY;
                st[1]->base[i] = 0.0f;
        }
        for (int64_t i = 0; i < M * D; i++)
                st[2]->base[i] = 0.0f;
        tl_wait(tl, tl_softmax_merge(tl, sc, v, st[0], st[1], st[2]));
        for (int w = 0; w < 3; w++)
                memcpy(st_composite[w], st[w]->base, (size_t)tl_numel(st[w]) * sizeof(float));
}

Test(feed, a_bf16_merge_state_holds_bf16_values)
{
        static struct tl_kernel k = { .name = "bf16_state", .fn = k_merge_bf16_state };
        const struct tl_run_opts *o = fixture_opts(TL_MODE_DATA, 1);
        fixture_run_ok(k.name, &k, o, NULL, 0);
        const int n[3] = { 8, 8, 64 };
        for (int w = 0; w < 3; w++)
                for (int i = 0; i < n[w]; i++) {
                        float x = st_composite[w][i];
                        cr_assert_eq(x, fp_bf16_to_f32(fp_f32_to_bf16(x)),
                                     "state %d [%d] = %.9g is not a bf16 value", w, i, x);
                }
}
