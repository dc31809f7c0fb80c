/* tests/unit/test_tl.c: the kernel language: each primitive's timing
 * against its closed form, lazy-load overlap, send/recv order and drain,
 * scratch scopes and the ceiling, kernel errors, data-mode GEMM and
 * softmax against a float64 reference, and the machine as kernels and
 * setups see it (tl_machine_info, tl_setup_machine). */
#include <criterion/criterion.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>

#include "fixture.h"

TestSuite(tl, .init = fixture_small, .fini = fixture_fini);

static int run_kernel(tl_kernel_fn fn, enum tl_mode mode)
{
        return fixture_launch("test", fn, NULL, 0, fixture_opts(mode, 1), NULL, 0);
}

static tl_kernel_fn pe0_fn;          /* the body on_pe0 runs */

static void on_pe0(tl_ctx *tl, const void *a)
{
        if (tl->rank == 0)
                pe0_fn(tl, a);
}

/* run_kernel of a body that PE 0 alone runs (the others do nothing). */
static int run_on_pe0(tl_kernel_fn fn, enum tl_mode mode)
{
        pe0_fn = fn;
        return run_kernel(on_pe0, mode);
}

static sim_ps now_of(tl_ctx *tl) { return ev_now(&tl->sim->ev); }
static sim_ps cost(enum topo_op op) { return topo_issue_cost_ps(&t.pe.cpu, op); }

/* Wait for x; return the simulated time since *t0, and move *t0 to now. */
static sim_ps waited(tl_ctx *tl, tl_tensor *x, sim_ps *t0)
{
        tl_wait_tensor(tl, x);
        sim_ps now = now_of(tl), dt = now - *t0;
        *t0 = now;
        return dt;
}

/* ---- timing of each primitive -------------------------------------------- */

static sim_ps measured[8];

static void k_tcm_load(tl_ctx *tl, const void *a)
{
        tl_tensor *src = tl_alloc(tl, TL_TCM, TL_FP32, 2, ((int64_t[]){ 64, 64 }));
        sim_ps t0 = now_of(tl);
        tl_tensor *x = tl_load(tl, src);
        measured[0] = now_of(tl) - t0;           /* the load returns after its issue cost */
        tl_wait_tensor(tl, x);
        measured[1] = now_of(tl) - t0;
}

Test(tl, load_from_tcm_closed_form)
{
        cr_assert_eq(run_on_pe0(k_tcm_load, TL_MODE_OPLOG), 0);
        cr_assert_eq(measured[0], cost(TOPO_OP_LOAD), "a load is lazy: it returns at once");
        /* DMA: one descriptor: its setup, then its bytes at the engine's
         * bandwidth. */
        sim_ps dma = t.pe.dma.setup_ps + hw_bytes_ps(64 * 64 * 4, t.pe.dma.bw_bytes_per_s);
        cr_assert_eq(measured[1], cost(TOPO_OP_LOAD) + dma);
}

Test(tl, block_float_bytes)
{
        cr_assert_eq(tl_dtype_bytes(TL_BFP8_B, 32 * 32, 32), 1088);     /* a 32x32 tile */
        cr_assert_eq(tl_dtype_bytes(TL_BFP4_B, 32 * 32, 32), 576);
        cr_assert_eq(tl_dtype_bytes(TL_BF16, 32 * 32, 32), 2048);
        /* Rows of 17: 17 (or 9) mantissa bytes and 2 exponents each. */
        cr_assert_eq(tl_dtype_bytes(TL_BFP8_B, 3 * 17, 17), 3 * 19);
        cr_assert_eq(tl_dtype_bytes(TL_BFP4_B, 3 * 17, 17), 3 * 11);
}

static tl_dtype load_dtype;

static void k_tcm_load_bfp(tl_ctx *tl, const void *a)
{
        tl_tensor *src = tl_alloc(tl, TL_TCM, load_dtype, 2, ((int64_t[]){ 64, 64 }));
        sim_ps t0 = now_of(tl);
        measured[0] = waited(tl, tl_load(tl, src), &t0);
}

static void check_packed_load(tl_dtype dt, uint64_t bytes)
{
        load_dtype = dt;
        cr_assert_eq(run_on_pe0(k_tcm_load_bfp, TL_MODE_OPLOG), 0);
        sim_ps dma = t.pe.dma.setup_ps + hw_bytes_ps(bytes / t.pe.dma.channels,
                                                     t.pe.dma.bw_bytes_per_s / t.pe.dma.channels);
        cr_assert_eq(measured[0], cost(TOPO_OP_LOAD) + dma, "dtype %d", dt);
}

/* A block-float load moves its packed bytes: 4 tiles of 1088 or 576. */
Test(tl, bfp8_load_moves_packed_bytes) { check_packed_load(TL_BFP8_B, 4 * 1088); }
Test(tl, bfp4_load_moves_packed_bytes) { check_packed_load(TL_BFP4_B, 4 * 576); }

static void k_dot(tl_ctx *tl, const void *a)
{
        tl_tensor *x = tl_alloc(tl, TL_SCRATCH, TL_BF16, 2, ((int64_t[]){ 96, 200 }));
        tl_tensor *y = tl_alloc(tl, TL_SCRATCH, TL_BF16, 2, ((int64_t[]){ 200, 72 }));
        sim_ps t0 = now_of(tl);
        tl_tensor *p = tl_dot(tl, x, y, false);
        measured[0] = waited(tl, p, &t0);
        tl_tensor *e = tl_exp(tl, p);
        measured[1] = waited(tl, e, &t0);
        measured[2] = waited(tl, tl_rowsum(tl, e), &t0);
}

Test(tl, dot_and_math_closed_form)
{
        cr_assert_eq(run_on_pe0(k_dot, TL_MODE_OPLOG), 0);
        /* The wait's own issue cost hides under the engine time. */
        sim_ps gemm = hw_gemm_ps(&t, 96, 72, 200);
        cr_assert_gt(gemm, cost(TOPO_OP_WAIT));
        cr_assert_eq(measured[0], cost(TOPO_OP_DOT) + gemm);
        /* exp: its latency, then ceil(elements / lanes) * cycles_per_element
         * at the MATH clock (its TCM traffic takes less). */
        uint64_t lanes = t.pe.math.lanes, n = 96 * 72;
        sim_ps exp_ps = topo_cycles_to_ps(t.pe.math.latency_cycles[TOPO_OP_EXP] +
                                          (n + lanes - 1) / lanes * t.pe.math.cycles_per_element[TOPO_OP_EXP],
                                          t.pe.math.clock_hz);
        cr_assert_lt(hw_tcm_ps(&t, 8 * n), exp_ps);
        cr_assert_eq(measured[1], cost(TOPO_OP_EXP) + exp_ps);
        cr_assert_eq(measured[2], cost(TOPO_OP_ROWSUM) + hw_math_ps(&t, TOPO_OP_ROWSUM, n, true));
}

/* A load issued before unrelated work completes behind it: total time is
 * the longer of the two, not their sum. */
static void k_overlap(tl_ctx *tl, const void *a)
{
        tl_tensor *src = tl_alloc(tl, TL_TCM, TL_FP32, 2, ((int64_t[]){ 128, 128 }));
        tl_tensor *w = tl_alloc(tl, TL_SCRATCH, TL_FP32, 2, ((int64_t[]){ 64, 64 }));
        sim_ps t0 = now_of(tl);
        tl_tensor *x = tl_load(tl, src);         /* 64 KiB on the DMA */
        tl_tensor *e = tl_exp(tl, w);            /* meanwhile on PE_MATH */
        tl_wait_tensor(tl, e);
        measured[1] = now_of(tl) - t0;
        tl_wait_tensor(tl, x);
        measured[0] = now_of(tl) - t0;
}

Test(tl, lazy_load_overlaps_unrelated_work)
{
        cr_assert_eq(run_on_pe0(k_overlap, TL_MODE_OPLOG), 0);
        sim_ps load = cost(TOPO_OP_LOAD) + t.pe.dma.setup_ps +
                      hw_bytes_ps(128 * 128 * 4 / t.pe.dma.channels,
                                  t.pe.dma.bw_bytes_per_s / t.pe.dma.channels);
        /* The exp runs beside the load; its TCM traffic (16 KiB in and
         * out) shares the TCM with the load's (64 KiB read and written), so
         * it waits at most that long. */
        sim_ps exp_alone = cost(TOPO_OP_LOAD) + cost(TOPO_OP_EXP) +
                           hw_math_ps(&t, TOPO_OP_EXP, 64 * 64, false);
        cr_assert_lt(measured[1], load, "the exp finished while the load was in flight");
        cr_assert_geq(measured[1], exp_alone);
        cr_assert_leq(measured[1], exp_alone + hw_tcm_ps(&t, 2 * 128 * 128 * 4));
        cr_assert_eq(measured[0], load, "the load ended on its own schedule, hidden behind the exp");
}

/* tl_delay: the thread is busy exactly that long, and a load issued
 * before it goes on meanwhile. */
static void k_delay(tl_ctx *tl, const void *a)
{
        tl_tensor *src = tl_alloc(tl, TL_TCM, TL_FP32, 2, ((int64_t[]){ 64, 64 }));
        sim_ps t0 = now_of(tl);
        tl_delay(tl, 0);
        measured[0] = now_of(tl) - t0;
        tl_tensor *x = tl_load(tl, src);
        t0 = now_of(tl);
        tl_delay(tl, 2500);
        measured[1] = now_of(tl) - t0;
        tl_wait_tensor(tl, x);
        measured[2] = now_of(tl) - t0;
}

Test(tl, delay_is_busy_time_beside_outstanding_ops)
{
        cr_assert_eq(run_on_pe0(k_delay, TL_MODE_OPLOG), 0);
        cr_assert_eq(measured[0], 0, "a zero delay takes no time");
        cr_assert_eq(measured[1], 2500 * 1000, "the delay took %lld ps", (long long)measured[1]);
        /* the load (its DMA shorter than the delay) ran during it */
        sim_ps dma = t.pe.dma.setup_ps + hw_bytes_ps(64 * 64 * 4, t.pe.dma.bw_bytes_per_s);
        cr_assert_lt(dma, 2500 * 1000);
        cr_assert_eq(measured[2], 2500 * 1000 + cost(TOPO_OP_WAIT),
                     "the load was not done by the delay's end");
}

/* tl_sip_link_pe on a row of 8 Galaxy chips: a chip's links to its
 * previous neighbour come first (system.inter_sip.ports[0..3]), those to
 * its next after them; no link to a chip that is not a neighbour, nor a
 * fifth to a neighbour. */
static int link_pe[6];

static void k_link_pe(tl_ctx *tl, const void *a)
{
        link_pe[0] = tl_sip_link_pe(tl, 1, 0, 0);
        link_pe[1] = tl_sip_link_pe(tl, 1, 2, 0);
        link_pe[2] = tl_sip_link_pe(tl, 1, 2, 3);
        link_pe[3] = tl_sip_link_pe(tl, 0, 1, 1);
        link_pe[4] = tl_sip_link_pe(tl, 1, 2, 4);
        link_pe[5] = tl_sip_link_pe(tl, 0, 2, 0);
}

Test(tl, sip_link_pe_is_the_router_of_the_link)
{
        fixture_fini();
        fixture_load("tt_galaxy.yaml");
        cr_assert_eq(topo_set(&t, "system.sips", "8", &d), 0);
        cr_assert_eq(topo_set(&t, "system.inter_sip.mesh_cols", "8", &d), 0);
        cr_assert_eq(run_on_pe0(k_link_pe, TL_MODE_OPLOG), 0);
        int cols = (int)t.cube.noc.cols;
        const struct topo_coord *p = t.system.inter_sip_ports.at;
        cr_assert_eq(link_pe[0], p[0].row * cols + p[0].col);
        cr_assert_eq(link_pe[1], p[4].row * cols + p[4].col);
        cr_assert_eq(link_pe[2], p[7].row * cols + p[7].col);
        cr_assert_eq(link_pe[3], p[1].row * cols + p[1].col, "the first chip's links are its first");
        cr_assert_eq(link_pe[4], -1);
        cr_assert_eq(link_pe[5], -1);
}

/* ---- the fabric's Ethernet cores and slots ----------------------------------- */

/* PE 0 of SIP 0 streams fab_msgs messages of 64 KiB to PE 0 of SIP 1 and,
 * with fab_both, SIP 1's streams as many back; each takes what it is sent.
 * fab_end[s]: when SIP s's PE 0 took its last message; fab_second: when
 * SIP 0's second send returned; fab_token: how long a one-packet send
 * took after them. */
static int fab_msgs;
static bool fab_both;
static sim_ps fab_end[2], fab_second, fab_token;

static void k_fabric(tl_ctx *tl, const void *a)
{
        (void)a;
        int sip = tl_program_id(tl, 2);
        if (tl_program_id(tl, 0) != 0 || (sip == 1 && !fab_both && fab_msgs == 0))
                return;
        int peer = tl_rank(tl, 0, 0, 1 - sip);
        if (sip == 0 || fab_both) {
                tl_tensor *v = tl_fill(tl, TL_FP32, 1, ((int64_t[]){ 16384 }), 1.0f);
                tl_wait_tensor(tl, v);
                for (int i = 0; i < fab_msgs; i++) {
                        tl_send(tl, peer, v, 1);
                        if (sip == 0 && i == 1)
                                fab_second = now_of(tl);
                }
                if (sip == 0) {
                        tl_tensor *one = tl_fill(tl, TL_FP32, 1, ((int64_t[]){ 4 }), 1.0f);
                        tl_wait_tensor(tl, one);
                        sim_ps t0 = now_of(tl);
                        tl_send(tl, peer, one, 2);
                        fab_token = now_of(tl) - t0;
                }
        }
        if (sip == 1 || fab_both) {
                for (int i = 0; i < fab_msgs; i++) {
                        tl_scratch_scope_begin(tl);
                        tl_wait_tensor(tl, tl_recv(tl, peer, 1));
                        tl_scratch_scope_end(tl);
                }
                fab_end[sip] = now_of(tl);
        }
        if (sip == 1) {
                tl_scratch_scope_begin(tl);
                tl_recv(tl, peer, 2);
                tl_scratch_scope_end(tl);
        }
}

/* Stream 16 messages one way (both: and 16 back) on the n300 with the
 * given system.inter_sip.core_ns and slots; SIP 1's last arrival. */
static sim_ps fabric_stream(const char *core_ns, const char *slots, bool both)
{
        fixture_fini();
        fixture_load("tt_wormhole_n300.yaml");
        cr_assert_eq(topo_set(&t, "system.inter_sip.core_ns", core_ns, &d), 0);
        cr_assert_eq(topo_set(&t, "system.inter_sip.slots", slots, &d), 0);
        fab_msgs = 16;
        fab_both = both;
        fab_end[0] = fab_end[1] = 0;
        cr_assert_eq(run_kernel(k_fabric, TL_MODE_OPLOG), 0);
        return fab_end[1];
}

/* The link's Ethernet cores serve both directions: a stream each way, whose
 * packets need more of them than they have, runs slower than one alone,
 * which runs as without them (throughput only); without the cores the two
 * directions do not meet. */
Test(tl, ethernet_cores_slow_a_link_loaded_both_ways)
{
        sim_ps alone = fabric_stream("400", "8", false);
        sim_ps both = fabric_stream("400", "8", true);
        sim_ps alone_free = fabric_stream("0", "8", false);
        sim_ps both_free = fabric_stream("0", "8", true);
        cr_assert_eq(alone, alone_free, "one direction alone: %lld ps, %lld without the cores",
                     (long long)alone, (long long)alone_free);
        cr_assert_eq(both_free, alone_free, "without the cores the directions do not meet");
        /* 2 x 400 ns a 6 KiB packet against ~0.5 us on the wire */
        cr_assert_gt(both, alone + alone / 10, "both ways %lld ps, one way %lld ps",
                     (long long)both, (long long)alone);
}

/* A sender's second message of several packets waits until the first has
 * at most `slots` packets left to go on the wire; without slots it goes at
 * once; a one-packet message never waits. */
Test(tl, a_send_waits_for_the_fabric_slots)
{
        fabric_stream("0", "0", false);
        sim_ps free_second = fab_second, free_token = fab_token;
        fabric_stream("0", "8", false);
        /* 64 KiB is 11 packets of 6 KiB: the first has 3 beyond the slots */
        cr_assert_gt(fab_second, free_second + 3 * 400 * 1000,
                     "the second send returned at %lld ps, %lld without slots",
                     (long long)fab_second, (long long)free_second);
        cr_assert_eq(fab_token, free_token, "a one-packet send waited");
}

/* ---- send / recv ------------------------------------------------------------ */

static float got[4];

static void k_sendrecv(tl_ctx *tl, const void *a)
{
        int64_t shape[2] = { 1, 256 };
        if (tl->rank == 0) {
                measured[0] = now_of(tl);
                for (int i = 0; i < 3; i++) {
                        tl_tensor *v = tl_fill(tl, TL_FP32, 2, shape, (float)(i + 1));
                        tl_send(tl, 1, v, 7);
                }
                tl_send(tl, 1, tl_fill(tl, TL_FP32, 2, shape, 99.0f), 8);
        } else if (tl->rank == 1) {
                /* The tag-8 message is taken first though it was sent last. */
                tl_tensor *m8 = tl_recv(tl, 0, 8);
                got[3] = m8->base ? m8->base[0] : 0;
                for (int i = 0; i < 3; i++) {
                        tl_tensor *m = tl_recv(tl, 0, 7);
                        if (i == 0)
                                measured[1] = now_of(tl);
                        got[i] = m->base ? m->base[m->offset] : 0;
                }
        }
}

Test(tl, send_recv_order_by_source_and_tag)
{
        cr_assert_eq(run_kernel(k_sendrecv, TL_MODE_DATA), 0);
        cr_assert_float_eq(got[0], 1.0f, 0);
        cr_assert_float_eq(got[1], 2.0f, 0);
        cr_assert_float_eq(got[2], 3.0f, 0);
        cr_assert_float_eq(got[3], 99.0f, 0);
}

/* Many sources, tags and messages per (source, tag), received in an order
 * unlike the sending one: each (source, tag) must still come first in,
 * first out, through the inbox index's growth and deletions. */
enum { FIFO_SRCS = 3, FIFO_TAGS = 61, FIFO_EACH = 4 };
static int fifo_bad, fifo_got;

static void k_fifo_many(tl_ctx *tl, const void *a)
{
        int64_t shape[2] = { 1, 1 };
        if (tl->rank >= 1 && tl->rank <= FIFO_SRCS) {
                for (int e = 0; e < FIFO_EACH; e++)
                        for (int tag = 0; tag < FIFO_TAGS; tag++) {
                                float v = (float)(tl->rank * 100000 + tag * 100 + e);
                                tl_send(tl, 0, tl_fill(tl, TL_FP32, 2, shape, v), tag);
                        }
        } else if (tl->rank == 0) {
                for (int tag = FIFO_TAGS - 1; tag >= 0; tag--)
                        for (int k = 0; k < FIFO_SRCS; k++) {
                                int src = 1 + (tag + k) % FIFO_SRCS;
                                for (int e = 0; e < FIFO_EACH; e++) {
                                        tl_tensor *m = tl_recv(tl, src, tag);
                                        float want = (float)(src * 100000 + tag * 100 + e);
                                        fifo_bad += m->base[m->offset] != want;
                                        fifo_got++;
                                }
                        }
        }
}

Test(tl, recv_is_fifo_per_source_and_tag_among_many)
{
        cr_assert_eq(run_kernel(k_fifo_many, TL_MODE_DATA), 0);
        cr_assert_eq(fifo_got, FIFO_SRCS * FIFO_TAGS * FIFO_EACH);
        cr_assert_eq(fifo_bad, 0, "%d messages out of order", fifo_bad);
        cr_assert_eq(job.run->inbox.n_out, 0, "every message sent was received");
}

static int64_t pingpong_rows = 16;                             /* x 64 fp32 */

static void k_pingpong(tl_ctx *tl, const void *a)
{
        int64_t shape[2] = { pingpong_rows, 64 };
        if (tl->rank == 0) {
                tl_tensor *v = tl_alloc(tl, TL_SCRATCH, TL_FP32, 2, shape);
                measured[0] = now_of(tl);
                tl_send(tl, 1, v, 1);
                measured[1] = now_of(tl);                      /* fire-and-forget */
        } else if (tl->rank == 1) {
                tl_recv(tl, 0, 1);
                measured[2] = now_of(tl);
        }
}

static void check_pingpong(int64_t rows)
{
        pingpong_rows = rows;
        cr_assert_eq(run_kernel(k_pingpong, TL_MODE_OPLOG), 0);
        cr_assert_eq(measured[1] - measured[0], cost(TOPO_OP_SEND));
        uint64_t bytes = (uint64_t)rows * 64 * 4;
        uint32_t a = sim.pes[0].node_dma, b = sim.pes[1].node_dma;
        sim_ps route = topo_path_latency(&sim.graph, a, b);
        /* Bottleneck drain over the route: PE port links and one mesh hop. */
        uint64_t bw = t.pe.links.dma_noc.bw_bytes_per_s < t.cube.noc.link_bw_bytes_per_s
                              ? t.pe.links.dma_noc.bw_bytes_per_s : t.cube.noc.link_bw_bytes_per_s;
        /* The bytes land when both the sender's DMA has read them out and
         * the route has carried them. */
        sim_ps wire = t.pe.dma.setup_ps + route + hw_bytes_ps(hw_wire_bytes(&t, TOPO_EDGE_NOC, bytes), bw);
        sim_ps dma = hw_dma_ps(&t, bytes);
        sim_ps landed = measured[0] + cost(TOPO_OP_SEND) + (dma > wire ? dma : wire);
        cr_assert_eq(measured[2], landed, "recv returns when the bytes have drained (%llu vs %llu)",
                     (unsigned long long)measured[2], (unsigned long long)landed);
}

Test(tl, send_is_fire_and_forget_recv_waits_for_the_drain)
{
        check_pingpong(16);                                    /* 4 KiB */
}

/* A message that arrives sooner after the run's start than its own drain
 * takes: the receiver drains it from now, not from its arrival (the drain
 * guard). */
Test(tl, an_early_large_message_drains_from_now)
{
        check_pingpong(256);                                   /* 64 KiB */
}

static void k_recv_nobody(tl_ctx *tl, const void *a)
{
        if (tl->rank == 1)
                tl_recv(tl, 0, 5);
}

Test(tl, recv_that_nobody_sends_is_a_deadlock_naming_the_line)
{
        cr_assert_eq(run_kernel(k_recv_nobody, TL_MODE_OPLOG), -1);
        cr_assert(diag_has("deadlock"));
        cr_assert(diag_has("process 'sip0.cube0.pe1' waits on future 'tl_recv'"));
        cr_assert(diag_has("test_tl.c:"));
        cr_assert(diag_has("tl_recv from sip0.cube0.pe0 tag 5"));
}

/* A PE whose process gets no stack stops the run with a message, and no
 * other PE touches it (a send to it, a recv from it). The address space
 * is capped so that no stack chunk can be mapped; AddressSanitizer needs
 * its reservations, so the case runs in plain builds only. */
static __attribute__((unused)) void k_send_to_all(tl_ctx *tl, const void *a)
{
        int64_t shape[2] = { 1, 16 };
        tl_send(tl, (int)((tl->rank + 1) % tl->sim->n_pes), tl_fill(tl, TL_FP32, 2, shape, 1.0f), 3);
        tl_recv(tl, (int)((tl->rank + tl->sim->n_pes - 1) % tl->sim->n_pes), 3);
}

Test(tl, a_pe_without_a_stack_stops_the_run_with_a_message)
{
#ifdef CUBESIM_SANITIZED
        cr_skip_test("RLIMIT_AS under AddressSanitizer");
#else
        FILE *f = fopen("/proc/self/status", "r");
        cr_assert(f);
        char line[256];
        unsigned long long vm_kib = 0;
        while (fgets(line, sizeof line, f))
                if (sscanf(line, "VmSize: %llu", &vm_kib) == 1)
                        break;
        fclose(f);
        cr_assert_gt(vm_kib, 0);
        /* Room for the run's heap, not for one chunk of 64 stacks (16 MiB). */
        struct rlimit rl = { .rlim_cur = (vm_kib + 8192) * 1024, .rlim_max = RLIM_INFINITY };
        /* On the fixture's machine directly: tl_job_run's capacity check
         * would refuse the run under this limit (rightly). */
        static const struct tl_kernel k = { .name = "test", .fn = k_send_to_all };
        struct tl_run r;
        cr_assert_eq(setrlimit(RLIMIT_AS, &rl), 0);
        const struct tl_run_opts o = tl_run_opts_default();
        int rc = tl_run_kernel(&sim, &k, &o, &r, &d);
        cr_assert_eq(rc, -1);
        cr_assert(diag_has("the kernel could not start: no stack could be mapped"));
        cr_assert(diag_has("vm.max_map_count"));
        tl_run_fini(&r);
#endif
}

/* ---- scratch ------------------------------------------------------------------ */

static void k_scoped_loop(tl_ctx *tl, const void *a)
{
        for (int i = 0; i < 200; i++) {
                tl_scratch_scope_begin(tl);
                tl_tensor *x = tl_alloc(tl, TL_SCRATCH, TL_FP32, 2, ((int64_t[]){ 128, 128 }));
                tl_exp(tl, x);                   /* another 64 KiB */
                tl_scratch_scope_end(tl);
        }
}

Test(tl, scratch_scope_reuses_memory)
{
        cr_assert_eq(run_on_pe0(k_scoped_loop, TL_MODE_DATA), 0);
        cr_assert_eq(job.run->ctx[0].scratch_peak, 2 * 128 * 128 * 4);
        cr_assert_eq(job.run->ctx[0].scratch_bytes, 0);
}

static void k_unscoped_loop(tl_ctx *tl, const void *a)
{
        for (int i = 0; i < 200; i++)
                tl_alloc(tl, TL_SCRATCH, TL_FP32, 2, ((int64_t[]){ 128, 128 }));
}

Test(tl, scratch_ceiling_is_a_kernel_error)
{
        cr_assert_eq(run_on_pe0(k_unscoped_loop, TL_MODE_OPLOG), -1);
        cr_assert(diag_has("test_tl.c:"), "names the kernel line");
        cr_assert(diag_has("PE sip0.cube0.pe0: tl_alloc: scratch: 1.06 MiB requested, 1.00 MiB ceiling"),
                  "got: %s", d.head ? d.head->text : "(none)");
}

static void k_oob(tl_ctx *tl, const void *a)
{
        if (tl->rank != 2)
                return;
        tl_tensor *x = tl_alloc(tl, TL_TCM, TL_FP32, 2, ((int64_t[]){ 8, 8 }));
        tl_view(tl, x, ((int64_t[]){ 4, 0 }), ((int64_t[]){ 5, 8 }));
}

Test(tl, out_of_bounds_view_is_a_kernel_error)
{
        cr_assert_eq(run_kernel(k_oob, TL_MODE_OPLOG), -1);
        cr_assert(diag_has("PE sip0.cube0.pe2: tl_view: out of bounds: axis 0, [4, 9) of extent 8"));
}

static void k_mismatch(tl_ctx *tl, const void *a)
{
        tl_tensor *x = tl_alloc(tl, TL_SCRATCH, TL_FP32, 2, ((int64_t[]){ 8, 16 }));
        tl_tensor *y = tl_alloc(tl, TL_SCRATCH, TL_FP32, 2, ((int64_t[]){ 8, 16 }));
        tl_dot(tl, x, y, false);
}

Test(tl, shape_mismatch_is_a_kernel_error)
{
        cr_assert_eq(run_kernel(k_mismatch, TL_MODE_OPLOG), -1);
        cr_assert(diag_has("dot: inner dimensions differ: a is [8, 16], b is [8, 16]"));
}

/* ---- data mode against float64 ----------------------------------------------- */

static void run_builtin(const char *name, const char *const *sets, int n)
{
        fixture_run_ok(name, tl_kernel_find(name), fixture_opts(TL_MODE_DATA, 3),
                       sets, (size_t)n);
}

Test(tl, gemm_matches_float64_reference)
{
        /* Tails in every dimension: 100 x 70 x 130 over 64-tiles. */
        const char *sets[] = { "m=100", "n=70", "k=130", "dtype=fp32" };
        run_builtin("gemm", sets, 4);
        const float *a = fixture_global("a")->data, *b = fixture_global("b")->data, *c = fixture_global("c")->data;
        double worst = 0;
        for (int i = 0; i < 100; i++)
                for (int j = 0; j < 70; j++) {
                        double ref = 0;
                        for (int k = 0; k < 130; k++)
                                ref += (double)a[i * 130 + k] * b[k * 70 + j];
                        double err = fabs(c[i * 70 + j] - ref) / (2e-4 + 2e-4 * fabs(ref));
                        if (err > worst)
                                worst = err;
                }
        cr_assert_leq(worst, 1.0, "worst error %.3g of the tolerance", worst);
}

Test(tl, softmax_matches_float64_reference)
{
        const char *sets[] = { "rows=37", "cols=50", "block=8" };
        run_builtin("softmax", sets, 3);
        const float *x = fixture_global("x")->data, *y = fixture_global("y")->data;
        for (int i = 0; i < 37; i++) {
                double mx = -INFINITY, sum = 0;
                for (int j = 0; j < 50; j++)
                        mx = fmax(mx, x[i * 50 + j]);
                for (int j = 0; j < 50; j++)
                        sum += exp((double)x[i * 50 + j] - mx);
                for (int j = 0; j < 50; j++) {
                        double ref = exp((double)x[i * 50 + j] - mx) / sum;
                        cr_assert_float_eq(y[i * 50 + j], ref, 2e-4 + 2e-4 * ref, "(%d, %d)", i, j);
                }
        }
}

Test(tl, bf16_store_rounds)
{
        const char *sets[] = { "m=16", "n=16", "k=16", "dtype=bf16" };
        run_builtin("gemm", sets, 4);
        const float *c = fixture_global("c")->data;
        for (int i = 0; i < 256; i++)
                cr_assert_eq(c[i], tl__round(c[i], TL_BF16), "c[%d] = %.9g is not a bf16 value", i,
                             c[i]);
}

/* ---- budgets ---------------------------------------------------------------- */

static void k_forever(tl_ctx *tl, const void *a)
{
        for (;;)
                tl_program_id(tl, 0);
}

Test(tl, a_kernel_that_never_ends_hits_the_time_budget)
{
        static struct tl_kernel k = { .name = "forever", .fn = k_forever };
        struct tl_run_opts o = *fixture_opts(TL_MODE_OPLOG, 1);
        o.max_time_ps = 2000 * SIM_PS_PER_NS;
        cr_assert_eq(fixture_run(&k, &o, NULL, 0), -1);
        cr_assert(diag_has("simulated time budget exceeded: the next event is at 2002.000 ns, past "
                           "the budget of 2000.000 ns"), "got: %s",
                  d.head ? d.head->text : "(none)");
        cr_assert(diag_has("process 'sip0.cube0.pe0' waits on a timer"));
}

Test(tl, a_kernel_that_never_ends_hits_the_event_budget)
{
        static struct tl_kernel k = { .name = "forever", .fn = k_forever };
        struct tl_run_opts o = *fixture_opts(TL_MODE_OPLOG, 1);
        o.max_events = 5000;
        cr_assert_eq(fixture_run(&k, &o, NULL, 0), -1);
        cr_assert(diag_has("event budget exceeded: 5000 events"));
}

/* A wait's note is kept unformatted and written only when a report reads it:
 * the budget report still names the line and what is awaited. */
static void k_wait_long_load(tl_ctx *tl, const void *a)
{
        if (tl->rank != 0)
                return;
        tl_tensor *src = tl_alloc(tl, TL_TCM, TL_FP32, 2, ((int64_t[]){ 256, 256 }));
        tl_tensor *x = tl_load(tl, src);
        tl_wait_tensor(tl, x);
}

/* Run fn with a 1 us budget: the report must say what PE 0 waits on and
 * its note. */
static void expect_budget_note(tl_kernel_fn fn, const char *waits, const char *note)
{
        static struct tl_kernel k = { .name = "waits" };
        k.fn = fn;
        struct tl_run_opts o = *fixture_opts(TL_MODE_OPLOG, 1);
        o.max_time_ps = 1000 * SIM_PS_PER_NS;
        cr_assert_eq(fixture_run(&k, &o, NULL, 0), -1);
        cr_assert(diag_has(waits), "got: %s", d.head ? d.head->text : "(none)");
        cr_assert(diag_has(note));
}

Test(tl, a_budget_report_names_the_awaited_result)
{
        expect_budget_note(k_wait_long_load, "process 'sip0.cube0.pe0' waits on future 'tl_load'; ",
                           ": tl_wait_tensor waits for a tl_load result");
}

static void k_scope_waits(tl_ctx *tl, const void *a)
{
        if (tl->rank != 0)
                return;
        tl_tensor *src = tl_alloc(tl, TL_TCM, TL_FP32, 2, ((int64_t[]){ 256, 256 }));
        tl_scratch_scope_begin(tl);
        tl_load(tl, src);
        tl_scratch_scope_end(tl);
}

Test(tl, a_budget_report_names_a_scope_end_waiting_for_its_ops)
{
        expect_budget_note(k_scope_waits, "process 'sip0.cube0.pe0' waits on a timer; ",
                           ": tl_scratch_scope_end");
}

/* ---- --set routing ------------------------------------------------------------ */

Test(tl, one_rule_routes_set_keys)
{
        static const struct tl_param params[] = {
                { .name = "tile", .kind = TL_PARAM_INT, .max = 10 },
                { .name = "odd.name", .kind = TL_PARAM_INT, .max = 10 },
                { .name = NULL },
        };
        static const struct tl_kernel k = { .name = "k", .fn = k_forever, .params = params };
        cr_assert(!tl_set_is_topo(&k, "tile", 4));
        cr_assert(!tl_set_is_topo(&k, "odd.name", 8), "a kernel's own dotted parameter");
        cr_assert(!tl_set_is_topo(&k, "tiel", 4), "plain keys go to the kernel (with hints)");
        cr_assert(tl_set_is_topo(&k, "pe.dma.bw_gbps", 14));
        cr_assert(tl_set_is_topo(NULL, "pe.dma.bw_gbps", 14));
        char buf[64];
        cr_assert_str_eq(tl_set_topo_path("issue_cost.dot_ns=5", 17, buf, sizeof buf),
                         "pe.cpu.issue_cost_ns.dot");
        cr_assert_str_eq(tl_set_topo_path("issue_cost._ns", 14, buf, sizeof buf),
                         "issue_cost._ns");
}

Test(tl, a_job_applies_topology_sets_to_its_own_copy)
{
        const char *sets[] = { "issue_cost.program_id_ns=7", "pe.dma.bw_gbps=32" };
        cr_assert_eq(fixture_run(tl_kernel_find("program_ids"), NULL, sets, 2), 0);
        cr_assert_eq(topo_issue_cost_ps(&job.machine.pe.cpu, TOPO_OP_PROGRAM_ID), 7000);
        cr_assert_eq(job.sim.topo->pe.dma.bw_bytes_per_s, 32000000000ull);
        cr_assert_neq(t.pe.dma.bw_bytes_per_s, 32000000000ull, "the fixture's topology changed");
        uint64_t n = 0;
        for (int op = 0; op < TOPO_OP_COUNT; op++)
                n += job.stats.n_ops[op];
        cr_assert_eq(n, 6 * job.sim.n_pes, "program_ids issues six ops on every PE");
        cr_assert_eq(job.stats.issue_ps[TOPO_OP_PROGRAM_ID], n * 7000);

        const char *bad[] = { "pe.dma.bw_gbps=-3", "=1", "tile=2" };
        cr_assert_eq(fixture_run(tl_kernel_find("program_ids"), NULL, bad, 3), -EINVAL);
        cr_assert(diag_has("error: --set pe.dma.bw_gbps=-3:"), "%s", d.head->text);
        cr_assert(diag_has("--set =1: expected key=value"));
}

/* ---- multicast ---------------------------------------------------------------- */

static sim_ps recv_at[16];
static float recv_val[16];
static int uni_dst;

/* The test's machine: one cube whose NoC is 1 x cols of shape, with 50 ns
 * hops so that distance, not the sender's DMA, decides arrivals. */
static void one_row(const char *cols, const char *shape)
{
        cr_assert_eq(topo_set(&t, "cube.noc.hop_latency_ns", "50", &d), 0);
        cr_assert_eq(topo_set(&t, "sip.cubes", "1", &d), 0);
        cr_assert_eq(topo_set(&t, "cube.noc.rows", "1", &d), 0);
        cr_assert_eq(topo_set(&t, "cube.noc.cols", cols, &d), 0);
        cr_assert_eq(topo_set(&t, "cube.noc.shape", shape, &d), 0);
}

static void k_mcast_row(tl_ctx *tl, const void *a)
{
        int64_t shape[2] = { 16, 64 };                         /* 4 KiB fp32 */
        if (tl->rank == 0) {
                tl_tensor *v = tl_fill(tl, TL_FP32, 2, shape, 3.5f);
                tl_wait_tensor(tl, v);
                measured[0] = now_of(tl);
                tl_mcast(tl, 0, 0, 1, tl_mesh_dim(tl, 0), v, 5);
                measured[1] = now_of(tl);
        } else {
                tl_tensor *m = tl_recv(tl, 0, 5);
                recv_at[tl->rank] = now_of(tl) - measured[0];
                recv_val[tl->rank] = m->base ? m->base[m->offset + 17] : 0;
        }
}

static void k_unicast_one(tl_ctx *tl, const void *a)
{
        int64_t shape[2] = { 16, 64 };
        if (tl->rank == 0) {
                tl_tensor *v = tl_fill(tl, TL_FP32, 2, shape, 3.5f);
                tl_wait_tensor(tl, v);
                measured[0] = now_of(tl);
                tl_send(tl, uni_dst, v, 5);
        } else if ((int)tl->rank == uni_dst) {
                tl_recv(tl, 0, 5);
                recv_at[tl->rank] = now_of(tl) - measured[0];
        }
}

/* One injection reaches a row of PEs: each gets the data, each at the time
 * a lone send to it alone would land (the shared links carry it once, so
 * the copies do not queue behind each other), and the NoC carries the
 * bytes over 1 + 5 + 5 links instead of the 20 of five sends. */
Test(tl, mcast_row_lands_like_lone_sends)
{
        one_row("6", "mesh");
        memset(recv_at, 0, sizeof recv_at);
        cr_assert_eq(run_kernel(k_mcast_row, TL_MODE_DATA), 0);
        cr_assert_eq(measured[1] - measured[0], cost(TOPO_OP_SEND), "one issue, fire and forget");
        sim_ps first[6];
        memcpy(first, recv_at, sizeof first);
        for (int r = 1; r < 6; r++)
                cr_assert_float_eq(recv_val[r], 3.5f, 0, "PE %d", r);
        uint64_t bytes = 16 * 64 * 4;
        cr_assert_eq(job.sim.class_bytes[TOPO_EDGE_NOC], bytes * (1 + 5 + 5));
        for (int r = 1; r < 6; r++) {
                uni_dst = r;
                cr_assert_eq(run_kernel(k_unicast_one, TL_MODE_OPLOG), 0);
                cr_assert_eq(first[r], recv_at[r], "PE %d: multicast %llu ps, lone send %llu ps", r,
                             (unsigned long long)first[r], (unsigned long long)recv_at[r]);
                cr_assert_eq(job.sim.class_bytes[TOPO_EDGE_NOC], bytes * (uint64_t)(r + 2));
        }
        /* Later PEs are farther: each hop adds the hop latency and a router. */
        for (int r = 2; r < 6; r++)
                cr_assert_eq(first[r] - first[r - 1],
                             t.cube.noc.hop_latency_ps + t.cube.noc.router_node_overhead_ps);
}

/* On a ring of 6 the copies go both ways round: PE 5 is one hop west. */
Test(tl, mcast_on_a_torus_goes_both_ways)
{
        one_row("6", "torus");
        cr_assert_eq(run_kernel(k_mcast_row, TL_MODE_OPLOG), 0);
        cr_assert_eq(recv_at[5], recv_at[1]);
        cr_assert_eq(recv_at[4], recv_at[2]);
        uint64_t bytes = 16 * 64 * 4;
        cr_assert_eq(job.sim.class_bytes[TOPO_EDGE_NOC], bytes * (1 + 5 + 5));
}

static void k_mcast_unreceived(tl_ctx *tl, const void *a)
{
        if (tl->rank == 0)
                tl_mcast(tl, 0, 0, 1, tl_mesh_dim(tl, 0),
                         tl_fill(tl, TL_FP32, 2, ((int64_t[]){ 16, 64 }), 2.0f), 9);
}

/* In data mode the receivers of a multicast share one copy of its values
 * (not one each); left unreceived, the messages are a kernel error at the
 * kernel's end that names the multicast's line, the count and the first
 * receiver and tag. */
Test(tl, mcast_data_is_one_copy_and_unreceived_is_an_error)
{
        one_row("6", "mesh");
        cr_assert_eq(run_kernel(k_mcast_unreceived, TL_MODE_DATA), -1);
        const struct tl_inbox *in = &job.run->inbox;
        const struct tl_payload *shared = NULL;
        int n = 0;
        for (size_t i = 0; i < in->cap; i++)
                for (const struct tl_msg *m = in->slots[i].used ? in->slots[i].head : NULL; m;
                     m = m->next, n++) {
                        cr_assert_not_null(m->payload);
                        if (!shared)
                                shared = m->payload;
                        cr_assert_eq(m->payload, shared, "one payload for every receiver");
                        cr_assert_float_eq(m->payload->data[17], 2.0f, 0);
                }
        cr_assert_eq(n, 5);
        cr_assert_eq(shared->refs, 5);
        cr_assert(diag_has("PE sip0.cube0.pe0: tl_mcast: 5 messages sent and never received by "
                           "the kernel's end (the first sent: to PE sip0.cube0.pe1, tag 9)"));
        cr_assert(diag_has("test_tl.c:"));
}

static void k_mcast_bad(tl_ctx *tl, const void *a)
{
        if (tl->rank == 0)
                tl_mcast(tl, 0, 1, 1, 2, tl_fill(tl, TL_FP32, 1, ((int64_t[]){ 4 }), 0.0f), 1);
}

Test(tl, mcast_outside_the_noc_is_a_kernel_error)
{
        cr_assert_eq(run_kernel(k_mcast_bad, TL_MODE_OPLOG), -1);
        cr_assert(diag_has("tl_mcast"));
        cr_assert(diag_has("rows [0, +1) x cols [1, +2) is not a rectangle of the 2 x 2 NoC"));
        cr_assert(diag_has("test_tl.c:"));
}

/* ---- extreme arguments -------------------------------------------------------- */

static float masked[2][4][4];        /* rows of tl_mask_causal at INT64_MAX, INT64_MIN */

static void k_mask_extremes(tl_ctx *tl, const void *a)
{
        tl_tensor *x = tl_fill(tl, TL_FP32, 2, ((int64_t[]){ 4, 4 }), 2.0f);
        const int64_t offsets[2] = { INT64_MAX, INT64_MIN };
        for (int k = 0; k < 2; k++) {
                tl_tensor *m = tl_mask_causal(tl, x, offsets[k]);
                tl_wait_tensor(tl, m);
                memcpy(masked[k], m->base + m->offset, sizeof masked[k]);
        }
}

Test(tl, mask_causal_at_the_extremes_of_the_offset)
{
        /* i + offset used to overflow (UBSan; wrong masks in release). */
        cr_assert_eq(run_on_pe0(k_mask_extremes, TL_MODE_DATA), 0);
        for (int i = 0; i < 4; i++)
                for (int j = 0; j < 4; j++) {
                        cr_assert_eq(masked[0][i][j], 2.0f, "INT64_MAX masks nothing (%d, %d)", i, j);
                        cr_assert(isinf(masked[1][i][j]) && masked[1][i][j] < 0,
                                  "INT64_MIN masks everything (%d, %d)", i, j);
                }
}

Test(tl, every_builtin_kernel_has_valid_parameters)
{
        for (size_t i = 0; tl_kernel_at(i); i++)
                cr_assert_eq(tl_kernel_check(tl_kernel_at(i), "builtin", &d), 0, "%s: %s",
                             tl_kernel_at(i)->name, d.head ? d.head->text : "");
}

static void k_wait_after_scope(tl_ctx *tl, const void *a)
{
        tl_tensor *o = tl_alloc(tl, TL_TCM, TL_FP32, 2, ((int64_t[]){ 8, 8 }));
        tl_scratch_scope_begin(tl);
        tl_tensor *x = tl_fill(tl, TL_FP32, 2, ((int64_t[]){ 8, 8 }), 1.0f);
        tl_handle h = tl_composite(tl, &(tl_composite_desc){ .op = TL_GEMM, .a = x, .b = x,
                                                             .out = o });
        tl_scratch_scope_end(tl);
        tl_fill(tl, TL_FP32, 2, ((int64_t[]){ 8, 8 }), 2.0f);
        tl_wait(tl, h);
}

Test(tl, waiting_on_a_composite_whose_scope_ended_returns)
{
        /* The scope's end waited for it; its record (freed with the scope,
         * poisoned under ASan) must not be read as live. */
        cr_assert_eq(run_on_pe0(k_wait_after_scope, TL_MODE_DATA), 0, "got: %s",
                     d.head ? d.head->text : "(none)");
}

/* ---- the machine as kernels and setups see it ------------------------------- */

static tl_machine seen_run, seen_setup;

static void k_machine(tl_ctx *tl, const void *a)
{
        (void)a;
        if (tl->rank == 0)
                seen_run = tl_machine_info(tl);
}

static void s_machine(tl_setup *s, void *a)
{
        (void)a;
        seen_setup = tl_setup_machine(s);
}

Test(tl, machine_info_follows_the_topology_and_its_overrides)
{
        static const struct tl_kernel k = { .name = "machine", .fn = k_machine,
                                            .setup = s_machine };
        const char *sets[] = { "pe.tcm.scratch_ceiling_kib=256", "pe.gemm.macs_per_cycle=1024",
                               "cube.hbm.channel_bw_gbps=10" };
        memset(&seen_run, 0, sizeof seen_run);
        cr_assert_eq(fixture_run(&k, NULL, sets, 3), 0);
        const tl_machine *m = &seen_run;
        cr_assert_eq(m->sips, 1);
        cr_assert_eq(m->cubes_per_sip, (int)t.sip.cubes);
        cr_assert_eq(m->cubes, (int)t.sip.cubes);
        cr_assert_eq(m->pes_per_cube, (int)(t.cube.noc.rows * t.cube.noc.cols));
        cr_assert_eq(m->mesh_rows, (int)t.cube.noc.rows);
        cr_assert_eq(m->mesh_cols, (int)t.cube.noc.cols);
        cr_assert_eq(m->tcm_bytes, (int64_t)t.pe.tcm.size_bytes);
        cr_assert_eq(m->scratch_bytes, 256 * 1024);
        cr_assert_eq(m->tcm_alloc_bytes, (int64_t)t.pe.tcm.size_bytes - 256 * 1024);
        cr_assert_eq(m->gemm_macs_per_cycle, 1024.0);
        cr_assert_eq(m->gemm_flops_per_s, 2.0 * 1024 * (double)t.pe.gemm.clock_hz);
        cr_assert_eq(m->math_lanes, (double)t.pe.math.lanes);
        cr_assert_eq(m->dma_channels, (int)t.pe.dma.channels);
        cr_assert_eq(m->dma_bytes_per_s, (double)t.pe.dma.bw_bytes_per_s);
        cr_assert_eq(m->hbm_channels, (int)t.cube.hbm.channels);
        cr_assert_eq(m->hbm_bytes_per_s, (double)t.cube.hbm.channels * 10e9);
        /* The setup sees the machine the kernel runs on. */
        cr_assert_eq(seen_setup.pes_per_cube, m->pes_per_cube);
        cr_assert_eq(seen_setup.scratch_bytes, m->scratch_bytes);
        cr_assert_eq(seen_setup.gemm_flops_per_s, m->gemm_flops_per_s);
        cr_assert_eq(seen_setup.hbm_bytes_per_s, m->hbm_bytes_per_s);
}

static void k_mcast_square(tl_ctx *tl, const void *a)
{
        int64_t shape[1] = { 256 };                            /* 1 KiB fp32 */
        if (tl->rank == 0)
                tl_mcast(tl, 0, 0, 3, 3, tl_fill(tl, TL_FP32, 1, shape, 1.0f), 9);
        else if (tl->rank < 9)
                tl_recv(tl, 0, 9);
}

/* A 3 x 3 rectangle from its corner on a 3 x 3 mesh: XY routes from one
 * source form a tree, so the bytes cross the injection port, 2 links east
 * along row 0, 2 links south down each of the 3 columns and 8 ejection
 * ports: 17 links, against 34 for eight sends (2 ports + row + col hops). */
Test(tl, mcast_rectangle_crosses_the_route_tree_once)
{
        cr_assert_eq(topo_set(&t, "sip.cubes", "1", &d), 0);
        cr_assert_eq(topo_set(&t, "cube.noc.rows", "3", &d), 0);
        cr_assert_eq(topo_set(&t, "cube.noc.cols", "3", &d), 0);
        cr_assert_eq(run_kernel(k_mcast_square, TL_MODE_OPLOG), 0);
        cr_assert_eq(job.sim.class_bytes[TOPO_EDGE_NOC], 1024 * 17);
}

static void k_mesh_dim_bad(tl_ctx *tl, const void *a)
{
        if (tl_mesh_dim(tl, 0) != 2 || tl_mesh_dim(tl, 1) != 2)
                return;
        tl_mesh_dim(tl, 2);
}

Test(tl, mesh_dim_axes)
{
        cr_assert_eq(run_kernel(k_mesh_dim_bad, TL_MODE_OPLOG), -1);
        cr_assert(diag_has("tl_mesh_dim"));
        cr_assert(diag_has("axis 2: expected 0 (columns) or 1 (rows)"));
}

/* ---- launch tensors sharded over the PEs' TCM ---------------------------------- */

/* An input x and an output y, fp32 [n, n]: the launch tensors of the
 * placement tests below. */
struct xy_args {
        tl_tensor *x;                /* input */
        tl_tensor *y;                /* output */
};

/* Declare x and y of [n, n], sharded over the PEs' TCM or in HBM. */
static void xy_setup(tl_setup *s, void *argp, int64_t n, bool sharded)
{
        struct xy_args *g = argp;
        int64_t shape[2] = { n, n };
        g->x = sharded ? tl_setup_tensor_sharded(s, "x", TL_INPUT, TL_FP32, 2, shape)
                       : tl_setup_tensor(s, "x", TL_INPUT, TL_FP32, 2, shape);
        g->y = sharded ? tl_setup_tensor_sharded(s, "y", TL_OUTPUT, TL_FP32, 2, shape)
                       : tl_setup_tensor(s, "y", TL_OUTPUT, TL_FP32, 2, shape);
}

/* x and y [64, 64], sharded. */
static void sharded_setup(tl_setup *s, void *argp) { xy_setup(s, argp, 64, true); }

/* PE 0 loads its rows of x; PE 0 and PE 1 store their halves of y at once. */
static void k_sharded(tl_ctx *tl, const void *argp)
{
        const struct xy_args *g = argp;
        if (tl->rank > 1)
                return;
        int64_t r0 = tl->rank * 32;
        tl_tensor *mine = tl_view(tl, g->x, ((int64_t[]){ r0, 0 }), ((int64_t[]){ 32, 64 }));
        sim_ps t0 = now_of(tl);
        tl_tensor *v = tl_load(tl, mine);
        measured[tl->rank] = waited(tl, v, &t0);
        tl_store(tl, tl_view(tl, g->y, ((int64_t[]){ r0, 0 }), ((int64_t[]){ 32, 64 })), v);
        measured[2 + tl->rank] = waited(tl, v, &t0);
}

/* A sharded tensor is local: a load costs a TCM copy (no HBM), and two PEs
 * writing their own parts do not wait for each other (its readiness is not
 * tracked, as HBM's is not). */
Test(tl, sharded_tensors_are_local_and_shared)
{
        cr_assert_eq(fixture_launch("sharded", k_sharded, sharded_setup, sizeof(struct xy_args),
                                    fixture_opts(TL_MODE_DATA, 1), NULL, 0),
                     0);
        sim_ps dma = t.pe.dma.setup_ps + hw_bytes_ps(32 * 64 * 4 / t.pe.dma.channels,
                                                     t.pe.dma.bw_bytes_per_s / t.pe.dma.channels);
        cr_assert_eq(measured[0], cost(TOPO_OP_LOAD) + dma);
        cr_assert_eq(measured[1], measured[0]);
        cr_assert_eq(job.sim.cubes[0].hbm_read_bytes, 0);
        cr_assert_eq(measured[3], measured[2], "PE 1's store waited for PE 0's");
        /* Data mode: y holds x's rows. */
        struct tl_global *x = &job.run->globals[0], *y = &job.run->globals[1];
        cr_assert(memcmp(x->data, y->data, 64 * 64 * sizeof(float)) == 0);
}

/* ---- data mode follows placement (docs/adr/0017) ------------------------------- */

/* x [8, 8] replicated and only read, y [8, 8] replicated. */
static void replica_setup(tl_setup *s, void *argp) { xy_setup(s, argp, 8, false); }

/* PE 0 of cube c writes c + 1 to rows [4c, 4c + 4) of y, in its cube's
 * copy, and reads them back from there; both read x. */
static void k_replica(tl_ctx *tl, const void *argp)
{
        const struct xy_args *g = argp;
        int c = tl_program_id(tl, 1);
        if (tl_program_id(tl, 0) != 0)
                return;
        int64_t start[2] = { 4 * c, 0 }, rows[2] = { 4, 8 };
        tl_load(tl, g->x);
        tl_tensor *mine = tl_view(tl, g->y, start, rows);
        tl_store(tl, mine, tl_fill(tl, TL_FP32, 2, rows, (float)(c + 1)));
        tl_load(tl, mine);
}

/* Each cube writes its own copy; the output is gathered from the copy of
 * each row's writer; an input only read is never copied. */
Test(tl, replicated_outputs_are_gathered_from_each_cubes_copy)
{
        cr_assert_eq(fixture_launch("replica", k_replica, replica_setup, sizeof(struct xy_args),
                                    fixture_opts(TL_MODE_DATA, 1), NULL, 0),
                     0);
        struct tl_global *x = &job.run->globals[0], *y = &job.run->globals[1];
        cr_assert_null(x->copies, "an input only read was copied");
        cr_assert_not_null(y->copies);
        for (int i = 0; i < 64; i++)
                cr_assert_eq(y->data[i], i < 32 ? 1.0f : 2.0f, "y[%d] = %g", i, y->data[i]);
}
