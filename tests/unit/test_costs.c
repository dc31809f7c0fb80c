/* tests/unit/test_costs.c: the costs of the engines against their closed
 * forms (the GEMM array's shape, tiles, fill, drain and fidelity; MATH
 * latency and cross-lane reductions; TCM banks), and HBM homes: each
 * cube's share, the cubes an access touches, the route to another cube's
 * memory, and the capacity check. */
#include <errno.h>

#include "fixture.h"
#include "hw/hw.h"

static void set(const char *kv)
{
        int rc = topo_set_kv(&t, kv, &d);
        if (rc < 0)
                diag_print(&d, stderr);
        cr_assert_eq(rc, 0, "%s", kv);
}

/* Build sim again from t (after set). */
static void rebuild(void)
{
        hw_sim_fini(&sim);
        cr_assert_eq(hw_sim_init(&sim, &t, NULL, &d), 0);
}

/* Run a kernel of fn (and setup) on t, with --set values sets. */
static int launch_fn(const char *name, tl_kernel_fn fn, void (*setup)(tl_setup *, void *),
                     const char *const *sets, size_t n_sets)
{
        return fixture_launch(name, fn, setup, 0, NULL, sets, n_sets);
}

static void setup_default(void) { fixture_load("default.yaml"); }

TestSuite(costs, .init = setup_default, .fini = fixture_fini);

static sim_ps gemm_cycles_ps(uint64_t cycles) { return topo_cycles_to_ps(cycles, t.pe.gemm.clock_hz); }
static sim_ps math_cycles_ps(uint64_t cycles) { return topo_cycles_to_ps(cycles, t.pe.math.clock_hz); }

/* ---- GEMM ---- */

Test(costs, gemm_rounds_k_and_n_to_the_array_and_pays_fill_and_drain)
{
        const struct topo_pe_gemm *g = &t.pe.gemm;
        cr_assert_eq(g->array_m, 1);
        cr_assert_eq(g->array_k, 64);
        cr_assert_eq(g->array_n, 64);
        sim_ps edge = g->fill_cycles + g->drain_cycles;
        /* [8, 64] x [64, 128]: 8 rows x 1 K block x 2 N blocks = 16 cycles. */
        sim_ps small = hw_gemm_ps(&t, 8, 128, 64);
        cr_assert_eq(small, gemm_cycles_ps(edge + 16));
        cr_assert_geq(small, 85000, "a 64x64 array needs about 85 ns or more (got %llu ps)",
                      (unsigned long long)small);
        /* M is not rounded; K and N are. */
        cr_assert_eq(hw_gemm_ps(&t, 65, 64, 64), gemm_cycles_ps(edge + 65));
        cr_assert_eq(hw_gemm_ps(&t, 64, 64, 65), gemm_cycles_ps(edge + 128));
        cr_assert_eq(hw_gemm_ps(&t, 64, 65, 64), gemm_cycles_ps(edge + 128));
        cr_assert_eq(hw_gemm_ps(&t, 1, 1, 1), gemm_cycles_ps(edge + 1));
}

Test(costs, gemm_with_operand_tiles_a_per_cycle_block_and_fidelity)
{
        /* A Tenstorrent-like engine: [8, 16] x [16, 16] per cycle, 32x32
         * operand tiles, HiFi4. */
        set("pe.gemm.array_m=8");
        set("pe.gemm.array_k=16");
        set("pe.gemm.array_n=16");
        set("pe.gemm.macs_per_cycle=2048");
        set("pe.gemm.operand_tile=32");
        set("pe.gemm.fill_cycles=6");
        set("pe.gemm.drain_cycles=10");
        set("pe.gemm.fidelity_passes=4");
        /* One 32x32x32 tile: 32768 MACs / 2048 = 16 cycles per pass. */
        cr_assert_eq(hw_gemm_ps(&t, 32, 1, 1), gemm_cycles_ps(16 + 4 * 16));
        /* Fewer rows than a tile pad to the array's 8 rows, not to 32: a
         * [1, 32] x [32, 32] step is [8, 32] x [32, 32], 4 cycles a pass. */
        cr_assert_eq(hw_gemm_ps(&t, 1, 1, 1), gemm_cycles_ps(16 + 4 * 4));
        cr_assert_eq(hw_gemm_ps(&t, 9, 32, 32), gemm_cycles_ps(16 + 4 * 8));
        cr_assert_eq(hw_gemm_ps(&t, 32, 32, 32), gemm_cycles_ps(16 + 4 * 16));
        /* [33, 40] x [40, 64]: tiles 2 x 2 x 2 = 8 -> 128 cycles a pass. */
        cr_assert_eq(hw_gemm_ps(&t, 33, 64, 40), gemm_cycles_ps(16 + 4 * 128));
        set("pe.gemm.fidelity_passes=1");
        cr_assert_eq(hw_gemm_ps(&t, 33, 64, 40), gemm_cycles_ps(16 + 128));
        /* No tiles: M rounds to 8, K and N to 16: [9, 17] x [17, 17]. */
        set("pe.gemm.operand_tile=0");
        cr_assert_eq(hw_gemm_ps(&t, 9, 17, 17), gemm_cycles_ps(16 + 16 * 32 * 32 / 2048));
}

Test(costs, gemm_fidelity_is_checked)
{
        cr_assert_lt(topo_set_kv(&t, "pe.gemm.fidelity_passes=5", &d), 0);
        cr_assert_lt(topo_set_kv(&t, "pe.gemm.fidelity_passes=0", &d), 0);
}

Test(costs, gemm_fill_and_drain_are_latency_not_occupancy)
{
        struct hw_pe *pe = &sim.pes[0];
        sim_ps lone = hw_gemm_ps(sim.topo, 64, 64, 64);
        sim_ps work = gemm_cycles_ps(64);
        sim_ps s0, e0 = hw_gemm_run(pe, 64, 64, 64, 0, 0, &s0);
        sim_ps s1, e1 = hw_gemm_run(pe, 64, 64, 64, 0, 0, &s1);
        cr_assert_eq(s0, 0);
        cr_assert_eq(e0, lone);
        /* The second op enters the array when the first one's rows are in. */
        cr_assert_eq(s1, work);
        cr_assert_eq(e1, work + lone);
}

/* ---- MATH ---- */

Test(costs, math_latency_and_cross_lane_reductions)
{
        const struct topo_pe_math *m = &t.pe.math;
        uint64_t n = 1000, passes = (n + m->lanes - 1) / m->lanes;
        cr_assert_eq(m->lanes, 128);
        for (int op = TOPO_OP_MATH_FIRST; op < TOPO_OP_COUNT; op++) {
                uint64_t cpe = m->cycles_per_element[op], lat = m->latency_cycles[op];
                cr_assert_gt(lat, 0, "%s", topo_op_name(op));
                cr_assert_eq(hw_math_ps(&t, op, n, false), math_cycles_ps(lat + passes * cpe),
                             "%s", topo_op_name(op));
                /* Across the lanes: log2(128) = 7 more steps. */
                cr_assert_eq(hw_math_ps(&t, op, n, true), math_cycles_ps(lat + (passes + 7) * cpe),
                             "%s", topo_op_name(op));
        }
        /* A 32-element exp is its pipeline, not 2.7 ns. */
        cr_assert_eq(hw_math_ps(&t, TOPO_OP_EXP, 32, false),
                     math_cycles_ps(m->latency_cycles[TOPO_OP_EXP] + m->cycles_per_element[TOPO_OP_EXP]));
        /* ceil(log2(lanes)) steps when lanes is not a power of two. */
        set("pe.math.lanes=100");
        cr_assert_eq(hw_math_ps(&t, TOPO_OP_ROWSUM, 100, true),
                     math_cycles_ps(m->latency_cycles[TOPO_OP_ROWSUM] +
                                    (1 + 7) * m->cycles_per_element[TOPO_OP_ROWSUM]));
}

/* ---- TCM ---- */

Test(costs, tcm_spreads_lines_over_banks)
{
        const struct topo_tcm *tc = &t.pe.tcm;
        uint64_t bank_bw = tc->bw_bytes_per_s / tc->banks;
        cr_assert_eq(tc->line_bytes, 64);
        cr_assert_eq(hw_tcm_ps(&t, 0), 0);
        /* 100 bytes: two lines, two banks, 50 bytes each. */
        cr_assert_eq(hw_tcm_ps(&t, 100), hw_bytes_ps(50, bank_bw));
        /* 1 MiB: every bank, 1/banks of it each: the whole bandwidth. */
        cr_assert_eq(hw_tcm_ps(&t, 1 << 20), hw_bytes_ps((1 << 20) / tc->banks, bank_bw));
        set("pe.tcm.banks=4");
        cr_assert_eq(hw_tcm_ps(&t, 1000), hw_bytes_ps(250, t.pe.tcm.bw_bytes_per_s / 4));
}

Test(costs, a_math_op_streaming_more_than_the_tcm_gives_is_held_to_it)
{
        set("pe.tcm.bw_gbps=512");
        rebuild();
        struct hw_pe *pe = &sim.pes[0];
        uint64_t n = 64 * 64, bytes = 3 * 4 * n;   /* fp32 add: a, b in, sum out */
        sim_ps work = math_cycles_ps(n / t.pe.math.lanes * t.pe.math.cycles_per_element[TOPO_OP_ADD]);
        sim_ps latency = hw_math_ps(sim.topo, TOPO_OP_ADD, n, false) - work;
        sim_ps tcm = hw_tcm_ps(sim.topo, bytes);
        cr_assert_gt(tcm, work, "48 KiB at 512 GB/s outlasts 32 passes of the lanes");
        sim_ps start, end = hw_math_run(pe, TOPO_OP_ADD, n, false, bytes, 1000, &start);
        cr_assert_eq(start, 1000);
        cr_assert_eq(end, 1000 + tcm + latency);
        /* The engine is held as long: the next op starts after it. */
        sim_ps s2;
        hw_math_run(pe, TOPO_OP_ADD, n, false, bytes, 1000, &s2);
        cr_assert_eq(s2, 1000 + tcm);
        cr_assert_eq(pe->tcm_bytes, 2 * bytes);
        cr_assert_eq(sim.class_bytes[TOPO_EDGE_INTRA_PE], 2 * bytes);
}

Test(costs, a_dma_copy_takes_the_tcm_banks_for_its_tcm_side)
{
        struct hw_pe *pe = &sim.pes[0];
        struct hw_hbm_span local = { .kind = HW_HOME_LOCAL };
        hw_dma_copy(pe, &local, NULL, 4096, 0, NULL);       /* a load: written */
        cr_assert_eq(pe->tcm_bytes, 4096);
        hw_dma_copy(pe, NULL, NULL, 4096, 0, NULL);         /* TCM to TCM: both */
        cr_assert_eq(pe->tcm_bytes, 3 * 4096);
        hw_dma_copy(pe, NULL, &local, 4096, 0, NULL);       /* a store: read */
        cr_assert_eq(pe->tcm_bytes, 4 * 4096);
}

/* ---- HBM homes ---- */

static struct tl_run run;            /* a run that holds one tensor, never launched */

/* A run of the default machine (4 cubes) holding one tensor of shape,
 * its home set by the caller; no kernel is run. */
static struct tl_global *one_tensor(int ndim, const int64_t *shape, tl_dtype dt)
{
        memset(&run, 0, sizeof run);
        run.sim = &sim;
        run.n_globals = 1;
        struct tl_global *g = &run.globals[0];
        snprintf(g->name, sizeof g->name, "x");
        g->t.space = TL_HBM;
        g->t.dtype = dt;
        g->t.ndim = ndim;
        g->count = 1;
        for (int i = ndim - 1; i >= 0; i--) {
                g->t.shape[i] = shape[i];
                g->t.stride[i] = (int64_t)g->count;
                g->count *= (uint64_t)shape[i];
        }
        g->t.owner = &g->t;
        return g;
}

/* A view of g's tensor: start and extents per axis. */
static tl_tensor view_of(struct tl_global *g, const int64_t *start, const int64_t *shape)
{
        tl_tensor v = g->t;
        v.offset = 0;
        for (int i = 0; i < v.ndim; i++) {
                v.offset += start[i] * v.stride[i];
                v.shape[i] = shape[i];
        }
        return v;
}

static uint64_t share_of(const struct hw_hbm_span *s, uint32_t cube)
{
        for (int i = 0; i < s->n_parts; i++)
                if (s->cube[i] == cube)
                        return s->share[i];
        return 0;
}

Test(costs, replicated_is_every_cube_local)
{
        struct tl_global *g = one_tensor(2, (int64_t[]){ 100, 64 }, TL_FP32);
        for (uint32_t c = 0; c < 4; c++)
                cr_assert_eq(tl__home_cube_bytes(g, c, 4, 4096), 100 * 64 * 4);
        struct hw_hbm_span s;
        tl__hbm_span(&run, &g->t, &s);
        cr_assert_eq(s.kind, HW_HOME_LOCAL);
}

Test(costs, sharded_slices_match_an_even_split_of_the_axis)
{
        /* [2, 10, 8]: axis 1 over 4 cubes: [0,2) [2,5) [5,7) [7,10). */
        struct tl_global *g = one_tensor(3, (int64_t[]){ 2, 10, 8 }, TL_BF16);
        g->home = TL_HOME_SHARDED;
        g->axis = 1;
        static const uint64_t rows[4] = { 2, 3, 2, 3 };
        for (uint32_t c = 0; c < 4; c++)
                cr_assert_eq(tl__home_cube_bytes(g, c, 4, 4096), rows[c] * 2 * 8 * 2, "cube %u", c);
        struct hw_hbm_span s;
        /* Rows 2..4 of batch 1: all on cube 1. */
        tl_tensor v = view_of(g, (int64_t[]){ 1, 2, 0 }, (int64_t[]){ 1, 3, 8 });
        tl__hbm_span(&run, &v, &s);
        cr_assert_eq(s.kind, HW_HOME_CUBES);
        cr_assert_eq(s.n_parts, 1);
        cr_assert_eq(s.cube[0], 1);
        /* Rows 4..5 cross into cube 2: one row each. */
        v = view_of(g, (int64_t[]){ 0, 4, 0 }, (int64_t[]){ 1, 2, 8 });
        tl__hbm_span(&run, &v, &s);
        cr_assert_eq(s.n_parts, 2);
        cr_assert_eq(share_of(&s, 1), share_of(&s, 2));
        cr_assert_eq(s.total, 2 * share_of(&s, 1));
}

Test(costs, block_cyclic_shards_count_rows_through_the_axis)
{
        /* [3, 4, 16] by (batch, head) rows, 2 rows a block over 4 cubes:
         * row r = b * 4 + h on cube (r / 2) % 4. 12 rows: cubes 0 and 1
         * get 4, cubes 2 and 3 get 2. */
        struct tl_global *g = one_tensor(3, (int64_t[]){ 3, 4, 16 }, TL_FP32);
        g->home = TL_HOME_SHARDED;
        g->axis = 1;
        g->block = 2;
        static const uint64_t rows[4] = { 4, 4, 2, 2 };
        for (uint32_t c = 0; c < 4; c++)
                cr_assert_eq(tl__home_cube_bytes(g, c, 4, 4096), rows[c] * 16 * 4, "cube %u", c);
        struct hw_hbm_span s;
        tl_tensor v = view_of(g, (int64_t[]){ 2, 1, 0 }, (int64_t[]){ 1, 1, 16 });   /* row 9 */
        tl__hbm_span(&run, &v, &s);
        cr_assert_eq(s.n_parts, 1);
        cr_assert_eq(s.cube[0], 0);
        v = view_of(g, (int64_t[]){ 1, 0, 0 }, (int64_t[]){ 1, 4, 16 });             /* rows 4..7 */
        tl__hbm_span(&run, &v, &s);
        cr_assert_eq(s.n_parts, 2);
        cr_assert_eq(share_of(&s, 2), 2);
        cr_assert_eq(share_of(&s, 3), 2);
}

Test(costs, interleaved_deals_pages_round_the_cubes)
{
        /* 10 pages of 4 KiB and a half: 11 pages (the half takes a whole
         * one), pages 0, 4, 8 on cube 0 ... page 10 on cube 2. */
        struct tl_global *g = one_tensor(1, (int64_t[]){ 10 * 1024 + 512 }, TL_FP32);
        g->home = TL_HOME_INTERLEAVED;
        static const uint64_t pages[4] = { 3, 3, 3, 2 };
        for (uint32_t c = 0; c < 4; c++)
                cr_assert_eq(tl__home_cube_bytes(g, c, 4, 4096), pages[c] * 4096, "cube %u", c);
        /* Bytes [6 KiB, 14 KiB): half of page 1, pages 2 and 3 whole... up
         * to 14 KiB: 2 KiB on cube 1, 4 KiB on cube 2, 2 KiB on cube 3. */
        struct hw_hbm_span s;
        tl_tensor v = view_of(g, (int64_t[]){ 1536 }, (int64_t[]){ 2048 });
        tl__hbm_span(&run, &v, &s);
        cr_assert_eq(s.kind, HW_HOME_CUBES);
        cr_assert_eq(s.total, 8192);
        cr_assert_eq(share_of(&s, 0), 0);
        cr_assert_eq(share_of(&s, 1), 2048);
        cr_assert_eq(share_of(&s, 2), 4096);
        cr_assert_eq(share_of(&s, 3), 2048);
}

Test(costs, reading_another_cubes_memory_pays_the_route_between_them)
{
        struct hw_pe *pe = &sim.pes[0];          /* cube 0 */
        uint64_t bytes = 1 << 16;
        struct hw_hbm_span local = { .kind = HW_HOME_LOCAL };
        struct hw_hbm_span there = { .kind = HW_HOME_CUBES, .n_parts = 1, .cube = { 1 },
                                     .share = { 1 }, .total = 1 };
        sim_ps near = hw_hbm_span_access(&sim, &local, 0, pe->node_dma, bytes, false, 0, NULL);
        cr_assert_eq(sim.class_bytes[TOPO_EDGE_INTER_CUBE], 0);
        cr_assert_eq(sim.cubes[0].hbm_read_bytes, bytes);
        /* Cube 1's channels, then the inter-cube link (its latency at least). */
        sim_ps far = hw_hbm_span_access(&sim, &there, 0, pe->node_dma, bytes, false, 0, NULL);
        cr_assert_eq(sim.cubes[1].hbm_read_bytes, bytes);
        cr_assert_eq(sim.class_bytes[TOPO_EDGE_INTER_CUBE], bytes);
        cr_assert_geq(far, near + t.sip.inter_cube.latency_ps);
        /* Every cube's: a quarter from each. */
        struct hw_hbm_span all = { .kind = HW_HOME_ALL };
        hw_hbm_span_access(&sim, &all, 0, pe->node_dma, bytes, false, 0, NULL);
        for (uint32_t c = 0; c < 4; c++)
                cr_assert_eq(sim.cubes[c].hbm_read_bytes, (c < 2 ? bytes : 0) + bytes / 4);
}

/* ---- placement through the setup, and the capacity check ---- */

struct place_args {
        int home;                    /* 0 replicated, 1 sharded, 2 interleaved, 3 sharded in
                                        blocks of 2^62 - 1 rows */
        int64_t mib;                 /* size of the big tensor */
};

static struct place_args want;

static void place_setup(tl_setup *s, void *args)
{
        (void)args;
        /* fp32 [mib, 2^18]: mib MiB; and 1 MiB. */
        tl_tensor *big = tl_setup_tensor(s, "big", TL_INPUT, TL_FP32, 2,
                                         (int64_t[]){ want.mib, INT64_C(1) << 18 });
        tl_tensor *small = tl_setup_tensor(s, "small", TL_INPUT, TL_FP32, 1,
                                           (int64_t[]){ INT64_C(1) << 18 });
        if (want.home == 1)
                tl_setup_shard(s, big, 0, 0);
        else if (want.home == 2)
                tl_setup_interleave(s, big);
        else if (want.home == 3)
                tl_setup_shard(s, big, 0, (INT64_C(1) << 62) - 1);
        tl_setup_replicate(s, small);
}

static void nothing(tl_ctx *tl, const void *args)
{
        (void)tl;
        (void)args;
}

/* On the default machine with 1 GiB of HBM a cube. */
static int place(int home, int64_t mib)
{
        want = (struct place_args){ .home = home, .mib = mib };
        static const char *const sets[] = { "cube.hbm.size_gib=1" };
        return launch_fn("place", nothing, place_setup, sets, 1);
}

Test(costs, a_replicated_tensor_too_big_for_a_cube_is_bad_input_naming_it)
{
        /* 1023 MiB + 1 MiB fits, 1024 MiB + 1 MiB does not. */
        cr_assert_eq(place(0, 1023), 0);
        cr_assert_eq(place(0, 1024), -EINVAL);
        cr_assert(diag_has("tensor small (replicated) does not fit"), "got: %s",
                  d.head ? d.head->text : "(nothing)");
}

Test(costs, sharding_or_interleaving_spreads_a_tensor_over_the_cubes)
{
        /* 4092 MiB over 4 cubes: 1023 MiB each, and the 1 MiB copy. */
        cr_assert_eq(place(1, 4092), 0);
        cr_assert_eq(place(2, 4092), 0);
        /* 4093 MiB: slices of 1023, 1023, 1023 and 1024 MiB. */
        cr_assert_eq(place(1, 4093), -EINVAL);
        cr_assert(diag_has("tensor small (replicated) does not fit"));
}

Test(costs, a_block_larger_than_the_rows_puts_them_all_on_cube_0)
{
        /* (2^62 - 1) x 4 cubes still fits in 64 bits: one block, on cube 0. */
        cr_assert_eq(place(3, 1023), 0);
        cr_assert_eq(place(3, 1024), -EINVAL);
        cr_assert(diag_has("tensor small (replicated) does not fit in HBM: cube 0 would hold"),
                  "got: %s", d.head ? d.head->text : "(nothing)");
}

static void tcm_sharded_setup(tl_setup *s, void *args)
{
        (void)args;
        /* fp32 [2048, 2^18]: 2 GiB, in the PEs' TCM. */
        tl_setup_tensor_sharded(s, "big", TL_INPUT, TL_FP32, 2,
                                (int64_t[]){ 2048, INT64_C(1) << 18 });
}

Test(costs, a_tensor_sharded_over_the_tcms_takes_no_hbm)
{
        static const char *const sets[] = { "cube.hbm.size_gib=1" };
        cr_assert_eq(launch_fn("tcm_sharded", nothing, tcm_sharded_setup, sets, 1), 0,
                     "got: %s", d.head ? d.head->text : "(nothing)");
}

static void bad_axis_setup(tl_setup *s, void *args)
{
        (void)args;
        tl_tensor *x = tl_setup_tensor(s, "x", TL_INPUT, TL_FP32, 2, (int64_t[]){ 4, 4 });
        tl_setup_shard(s, x, 2, 0);
}

Test(costs, a_shard_axis_out_of_range_is_bad_input)
{
        cr_assert_eq(launch_fn("bad_axis", nothing, bad_axis_setup, NULL, 0), -EINVAL);
        cr_assert(diag_has("tl_setup_shard: tensor x: axis 2, expected 0..1"));
}

static void shard_0d_setup(tl_setup *s, void *args)
{
        (void)args;
        tl_setup_shard(s, tl_setup_tensor(s, "x", TL_INPUT, TL_FP32, 0, NULL), 0, 0);
}

Test(costs, sharding_a_0d_tensor_says_it_has_no_axis)
{
        cr_assert_eq(launch_fn("shard_0d", nothing, shard_0d_setup, NULL, 0), -EINVAL);
        cr_assert(diag_has("tl_setup_shard: tensor x is 0-D: it has no axis to shard along "
                           "(got axis 0)"));
}

/* ---- fidelity from the setup ---- */

static sim_ps dot_time;

static void fidelity_setup(tl_setup *s, void *args)
{
        (void)args;
        tl_setup_gemm_fidelity(s, want.home);
}

static void one_dot(tl_ctx *tl, const void *args)
{
        (void)args;
        if (tl->rank != 0)
                return;
        tl_tensor *a = tl_alloc(tl, TL_SCRATCH, TL_BF16, 2, ((int64_t[]){ 64, 64 }));
        sim_ps t0 = ev_now(&tl->sim->ev);
        tl_wait_tensor(tl, tl_dot(tl, a, a, false));
        dot_time = ev_now(&tl->sim->ev) - t0;
}

Test(costs, a_kernel_sets_the_gemm_fidelity_of_its_launch)
{
        want.home = 3;                   /* HiFi3 */
        cr_assert_eq(launch_fn("fidelity", one_dot, fidelity_setup, NULL, 0), 0);
        const struct topo_pe_gemm *g = &t.pe.gemm;
        cr_assert_eq(dot_time, topo_issue_cost_ps(&t.pe.cpu, TOPO_OP_DOT) +
                                       gemm_cycles_ps(g->fill_cycles + 3 * 64 + g->drain_cycles));
}

/* ---- the GQA kernels' K/V placement ---- */

/* Run a GQA kernel on the small machine (2 cubes): K and V are split over
 * the cubes (each holds half; all of them with replicated: gqa_prefill
 * reads every key from its own cube), and no PE touches another cube's
 * HBM. */
static void gqa_reads_only_its_cube_as(const char *kernel, const char *const *sets,
                                       bool replicated)
{
        fixture_fini();
        fixture_small();
        size_t n = 0;
        while (sets[n])
                n++;
        fixture_run_ok(kernel, tl_kernel_find(kernel), NULL, sets, n);
        static const char *const kv[] = { "k", "v" };
        for (int i = 0; i < 2; i++) {
                const struct tl_global *g = fixture_global(kv[i]);
                uint64_t all = g->count * tl_dtype_size(g->t.dtype);
                for (uint32_t c = 0; c < 2; c++)
                        cr_assert_eq(tl__home_cube_bytes(g, c, 2, t.cube.hbm.page_bytes),
                                     replicated ? all : all / 2,
                                     "%s: %s on cube %u", kernel, g->name, c);
        }
        const struct hw_sim *js = &job.sim;
        cr_assert_gt(js->cubes[0].hbm_read_bytes + js->cubes[1].hbm_read_bytes, 0);
        cr_assert_eq(js->hbm_remote_bytes, 0, "%s: %llu bytes of another cube's HBM", kernel,
                     (unsigned long long)js->hbm_remote_bytes);
}

static void gqa_reads_only_its_cube(const char *kernel, const char *const *sets)
{
        gqa_reads_only_its_cube_as(kernel, sets, false);
}

Test(costs, gqa_decode_places_kv_where_its_split_reads_it)
{
        gqa_reads_only_its_cube("gqa_decode", (const char *const[]){ "seq_len=1024", NULL });
}

Test(costs, gqa_decode_short_places_kv_where_its_split_reads_it)
{
        gqa_reads_only_its_cube("gqa_decode_short", (const char *const[]){ "seq_len=512",
                                "kv_per_cube=2", "batch=3", NULL });
}

Test(costs, gqa_prefill_places_kv_where_its_split_reads_it)
{
        gqa_reads_only_its_cube_as("gqa_prefill", (const char *const[]){ "seq_len=512", NULL },
                                   true);
}

Test(costs, gqa_prefill_short_places_kv_where_its_split_reads_it)
{
        gqa_reads_only_its_cube("gqa_prefill_short", (const char *const[]){ "seq_len=256",
                                "kv_per_cube=4", NULL });
}

/* ---- composites and kernel parameters see the same costs ---- */

static tl_tensor *remote_b;

static void remote_setup(tl_setup *s, void *args)
{
        (void)args;
        remote_b = tl_setup_tensor(s, "b", TL_INPUT, TL_BF16, 2, (int64_t[]){ 256, 64 });
        /* Rows [0, 128) on cube 0, [128, 256) on cube 1. */
        tl_setup_shard(s, remote_b, 0, 0);
}

static void composite_reads_b(tl_ctx *tl, const void *args)
{
        (void)args;
        if (tl->rank != 0)
                return;
        tl_tensor *a = tl_alloc(tl, TL_SCRATCH, TL_BF16, 2, ((int64_t[]){ 64, 128 }));
        tl_tensor *out = tl_alloc(tl, TL_SCRATCH, TL_FP32, 2, ((int64_t[]){ 64, 64 }));
        tl_tensor *b = tl_view(tl, remote_b, ((int64_t[]){ want.mib, 0 }), ((int64_t[]){ 128, 64 }));
        tl_wait(tl, tl_composite(tl, &(tl_composite_desc){ .op = TL_GEMM, .a = a, .b = b,
                                                           .out = out }));
}

static uint64_t remote_bytes_of_composite(int64_t row0)
{
        want.mib = row0;
        cr_assert_eq(launch_fn("remote", composite_reads_b, remote_setup, NULL, 0), 0);
        return job.sim.hbm_remote_bytes;
}

Test(costs, a_composite_streams_its_operand_from_the_cube_holding_it)
{
        fixture_fini();
        fixture_small();
        cr_assert_eq(remote_bytes_of_composite(0), 0, "rows 0..127 are on PE 0's cube");
        cr_assert_eq(remote_bytes_of_composite(128), 128 * 64 * 2, "rows 128..255 are cube 1's");
}

static sim_ps gemm_kernel_ps(const char *fidelity)
{
        static char kv[64];
        snprintf(kv, sizeof kv, "fidelity=%s", fidelity);
        static const char *const sets[] = { kv, "m=64", "n=64", "k=64" };
        cr_assert_eq(fixture_run(tl_kernel_find("gemm"), NULL, sets, 4), 0);
        return job.sim.done_ps;
}

Test(costs, the_gemm_kernels_fidelity_parameter_sets_the_passes)
{
        /* One 64x64x64 dot on the path from the loads to the store: HiFi4
         * makes it (and the run) 3 x 64 cycles of work longer. */
        sim_ps lofi = gemm_kernel_ps("lofi"), hifi4 = gemm_kernel_ps("hifi4");
        cr_assert_eq(gemm_kernel_ps("topology"), lofi);
        sim_ps one = hw_gemm_ps(&t, 64, 64, 64);
        set("pe.gemm.fidelity_passes=4");
        cr_assert_eq(hifi4 - lofi, hw_gemm_ps(&t, 64, 64, 64) - one, "lofi %llu ps, hifi4 %llu ps",
                     (unsigned long long)lofi, (unsigned long long)hifi4);
}

/* ---- reductions: across the lanes only along the last axis ---- */

static sim_ps reduce_ps[2];

static void sums(tl_ctx *tl, const void *args)
{
        (void)args;
        if (tl->rank != 0)
                return;
        tl_tensor *x = tl_alloc(tl, TL_SCRATCH, TL_FP32, 2, ((int64_t[]){ 64, 256 }));
        for (int i = 0; i < 2; i++) {
                sim_ps t0 = ev_now(&tl->sim->ev);
                tl_wait_tensor(tl, tl_sum(tl, x, i == 0 ? 0 : -1));
                reduce_ps[i] = ev_now(&tl->sim->ev) - t0;
        }
}

Test(costs, a_reduction_pays_the_lane_tree_only_along_the_last_axis)
{
        cr_assert_eq(launch_fn("sums", sums, NULL, NULL, 0), 0);
        sim_ps issue = topo_issue_cost_ps(&t.pe.cpu, TOPO_OP_SUM);
        uint64_t n = 64 * 256;
        cr_assert_eq(reduce_ps[0], issue + hw_math_ps(&t, TOPO_OP_SUM, n, false));
        cr_assert_eq(reduce_ps[1], issue + hw_math_ps(&t, TOPO_OP_SUM, n, true));
        cr_assert_eq(hw_math_ps(&t, TOPO_OP_SUM, n, true) - hw_math_ps(&t, TOPO_OP_SUM, n, false),
                     math_cycles_ps(7 * t.pe.math.cycles_per_element[TOPO_OP_SUM]));
}

/* ---- tl_cast: its own issue cost ---- */

static sim_ps cast_issue_ps, cast_end_ps;

static void casts(tl_ctx *tl, const void *args)
{
        (void)args;
        if (tl->rank != 0)
                return;
        tl_tensor *x = tl_alloc(tl, TL_SCRATCH, TL_FP32, 2, ((int64_t[]){ 8, 64 }));
        sim_ps t0 = ev_now(&tl->sim->ev);
        tl_tensor *y = tl_cast(tl, x, TL_BF16);
        cast_issue_ps = ev_now(&tl->sim->ev) - t0;
        tl_wait_tensor(tl, y);
        cast_end_ps = ev_now(&tl->sim->ev) - t0;
}

Test(costs, tl_cast_pays_its_own_issue_cost)
{
        /* A cost of its own (no other op's is 37 ns): the PE_CPU is busy
         * that long before the call returns, then the MATH engine. */
        set("pe.cpu.issue_cost_ns.cast=37");
        cr_assert_eq(launch_fn("casts", casts, NULL, NULL, 0), 0);
        cr_assert_eq(topo_issue_cost_ps(&t.pe.cpu, TOPO_OP_CAST), 37000);
        cr_assert_eq(cast_issue_ps, 37000, "the cast's issue took %llu ps",
                     (unsigned long long)cast_issue_ps);
        cr_assert_eq(cast_end_ps, 37000 + hw_math_ps(&t, TOPO_OP_CAST, 8 * 64, false),
                     "the cast ended after %llu ps", (unsigned long long)cast_end_ps);
}
