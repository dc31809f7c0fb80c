/* tests/unit/test_hw.c: hardware cost models against their closed forms,
 * link contention, HBM interleave, and the launch barrier on every shipped
 * topology. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdio.h>
#include <string.h>

#include "fixture.h"

TestSuite(hw, .init = fixture_small, .fini = fixture_fini);
static void fixture_default(void) { fixture_load("default.yaml"); }
TestSuite(hw_default, .init = fixture_default, .fini = fixture_fini);

Test(hw, bytes_to_ps_rounds_up)
{
        cr_assert_eq(hw_bytes_ps(1000, 1000000000000ull), 1000);  /* 1 TB/s: 1 ps per byte */
        cr_assert_eq(hw_bytes_ps(1, 3000000000000ull), 1);        /* a third of a ps -> 1 */
        cr_assert_eq(hw_bytes_ps(64, 64000000000ull), 1000);      /* 64 B at 64 GB/s = 1 ns */
        cr_assert_eq(hw_bytes_ps(0, 5), 0);
        /* No overflow for large transfers: 1 TiB at 1 GB/s. */
        cr_assert_eq(hw_bytes_ps(1ull << 40, 1000000000ull), (1ull << 40) * 1000);
}

static uint32_t dma(uint32_t pe) { return sim.pes[pe].node_dma; }

Test(hw, one_link_latency_plus_drain)
{
        uint32_t router = topo_node_router(&sim.graph, dma(0));
        const struct topo_link *l = &t.pe.links.dma_noc;
        uint64_t bytes = 4096;
        /* One 4 KiB packet: its payload and one header on the wire. */
        sim_ps want = l->latency_ps + t.cube.noc.router_node_overhead_ps +
                      hw_bytes_ps(bytes + t.cube.noc.header_bytes, l->bw_bytes_per_s);
        cr_assert_eq(hw_xfer(&sim, dma(0), router, bytes, 0), want);
}

Test(hw, two_transfers_on_one_link_take_twice_the_drain)
{
        uint32_t router = topo_node_router(&sim.graph, dma(0));
        const struct topo_link *l = &t.pe.links.dma_noc;
        uint64_t bytes = 1 << 20;
        sim_ps drain = hw_bytes_ps(hw_wire_bytes(&t, TOPO_EDGE_NOC, bytes), l->bw_bytes_per_s);
        sim_ps first = hw_xfer(&sim, dma(0), router, bytes, 0);
        sim_ps second = hw_xfer(&sim, dma(0), router, bytes, 0);
        cr_assert_eq(second - first, drain);
        /* Relative to one transfer alone, the drain part doubles. */
        cr_assert_eq(second, first + drain);
        cr_assert_eq(sim.links[topo_edge_between(&sim.graph, dma(0), router)].res.busy_ps, 2 * drain);
}

/* Packets: a header per packet of at most packet_bytes, on NoC links only. */
Test(hw, packets_add_a_header_each)
{
        uint64_t p = t.cube.noc.packet_bytes, h = t.cube.noc.header_bytes;
        cr_assert_gt(h, 0);
        cr_assert_eq(hw_wire_bytes(&t, TOPO_EDGE_NOC, 1), 1 + h);
        cr_assert_eq(hw_wire_bytes(&t, TOPO_EDGE_NOC, p), p + h);
        cr_assert_eq(hw_wire_bytes(&t, TOPO_EDGE_NOC, 2 * p + 1), 2 * p + 1 + 3 * h);
        cr_assert_eq(hw_wire_bytes(&t, TOPO_EDGE_HBM, p + 1), p + 1);
        cr_assert_eq(hw_wire_bytes(&t, TOPO_EDGE_INTRA_PE, 2 * p), 2 * p);
        cr_assert_eq(hw_wire_bytes(&t, TOPO_EDGE_NOC, 0), 0);
}

/* Links are divisible: a transfer placed later that reaches a link before
 * an earlier-placed one takes the link's idle time first. */
Test(hw, link_serves_the_earlier_arrival)
{
        uint32_t router = topo_node_router(&sim.graph, dma(0));
        const struct topo_link *l = &t.pe.links.dma_noc;
        uint64_t bytes = 4096;
        sim_ps drain = hw_bytes_ps(bytes + t.cube.noc.header_bytes, l->bw_bytes_per_s);
        sim_ps hop = l->latency_ps + t.cube.noc.router_node_overhead_ps;
        sim_ps later = 10 * drain;
        cr_assert_eq(hw_xfer(&sim, dma(0), router, bytes, later), later + hop + drain);
        cr_assert_eq(hw_xfer(&sim, dma(0), router, bytes, 0), hop + drain,
                     "not held up by the booking at %llu ps", (unsigned long long)later);
}

Test(hw, mesh_route_latency_and_bottleneck)
{
        /* PE 0 -> PE 1: DMA, router 0, router 1 (one hop east), DMA. */
        uint64_t bytes = 65536;
        const struct topo_pe_links *pl = &t.pe.links;
        const struct topo_noc *noc = &t.cube.noc;
        sim_ps head = pl->dma_noc.latency_ps + noc->router_node_overhead_ps + noc->hop_latency_ps +
                      noc->router_node_overhead_ps + pl->dma_noc.latency_ps +
                      t.pe.dma.node_overhead_ps;
        uint64_t min_bw = pl->dma_noc.bw_bytes_per_s < noc->link_bw_bytes_per_s
                                  ? pl->dma_noc.bw_bytes_per_s : noc->link_bw_bytes_per_s;
        cr_assert_eq(topo_path_latency(&sim.graph, dma(0), dma(1)), head);
        cr_assert_eq(hw_xfer(&sim, dma(0), dma(1), bytes, 0),
                     head + hw_bytes_ps(hw_wire_bytes(&t, TOPO_EDGE_NOC, bytes), min_bw));
        cr_assert_eq(sim.class_bytes[TOPO_EDGE_NOC], 3 * bytes);
}

Test(hw, hbm_interleaves_over_channels)
{
        struct hw_cube *c = &sim.cubes[0];
        uint32_t n = t.cube.hbm.channels;
        uint64_t bytes = (uint64_t)n * 8192;
        sim_ps done = hw_hbm_read(&sim, c, dma(0), bytes, 0);
        sim_ps per_channel = hw_bytes_ps(8192, t.cube.hbm.channel_bw_bytes_per_s);
        for (uint32_t ch = 0; ch < n; ch++)
                cr_assert_eq(c->channels[ch].busy_ps, per_channel, "channel %u", ch);
        /* At least the channel service plus the path from the nearest channel. */
        cr_assert_geq(done, per_channel + topo_path_latency(&sim.graph, c->first_channel_node, dma(0)));
        cr_assert_eq(c->hbm_read_bytes, bytes);
        /* A second read queues behind the first on every channel. */
        sim_ps done2 = hw_hbm_read(&sim, c, dma(0), bytes, 0);
        cr_assert_gt(done2, done);
        for (uint32_t ch = 0; ch < n; ch++)
                cr_assert_eq(c->channels[ch].busy_ps, 2 * per_channel);
}

Test(hw, engine_costs_closed_form)
{
        const struct topo_pe_gemm *g = &t.pe.gemm;
        uint64_t macs = g->macs_per_cycle;
        /* 64x64x64 fills whole blocks of the array: ceil(262144 / macs)
         * cycles of work between the fill and the drain. */
        cr_assert_eq(64 % g->array_m + 64 % g->array_k + 64 % g->array_n, 0);
        uint64_t cycles = g->fill_cycles + (262144 * g->fidelity_passes + macs - 1) / macs +
                          g->drain_cycles;
        cr_assert_eq(hw_gemm_ps(&t, 64, 64, 64), topo_cycles_to_ps(cycles, g->clock_hz));
        uint64_t lanes = t.pe.math.lanes;
        uint64_t cpe = t.pe.math.cycles_per_element[TOPO_OP_EXP];
        cr_assert_gt(cpe, 0);
        cr_assert_eq(hw_math_ps(&t, TOPO_OP_EXP, 1000, false),
                     topo_cycles_to_ps(t.pe.math.latency_cycles[TOPO_OP_EXP] +
                                       ((1000 + lanes - 1) / lanes) * cpe, t.pe.math.clock_hz));
        cr_assert_eq(hw_dma_ps(&t, 0), t.pe.dma.setup_ps);
}

/* ---- launch ---- */

static void check_launch(const char *file, const char *kernel)
{
        const struct tl_kernel *k = tl_kernel_find(kernel);
        cr_assert_not_null(k);
        char what[300];
        snprintf(what, sizeof what, "%s on %s", kernel, file);
        fixture_run_ok(what, k, NULL, NULL, 0);
        const struct hw_sim *s = &job.sim;
        sim_ps start = s->pes[0].exec_start_ps;
        sim_ps dur = s->pes[0].exec_end_ps - start;
        cr_assert_eq(start, s->target_start_ps);
        cr_assert_gt(start, 0, "the launch path takes time");
        for (uint32_t i = 0; i < s->n_pes; i++) {
                cr_assert_eq(s->pes[i].exec_start_ps, start, "%s: %s starts at %llu, PE 0 at %llu",
                             file, s->pes[i].name, (unsigned long long)s->pes[i].exec_start_ps,
                             (unsigned long long)start);
                cr_assert_eq(s->pes[i].exec_end_ps - s->pes[i].exec_start_ps, dur);
        }
        cr_assert_gt(s->done_ps, s->pes[0].exec_end_ps, "completion travels back to the IO_CPU");
        /* The body, after the program's fixed launch (pe.cpu.program_ns). */
        if (strcmp(kernel, "program_ids") == 0)
                cr_assert_eq(dur, t.pe.cpu.program_ps +
                                          6 * topo_issue_cost_ps(&t.pe.cpu, TOPO_OP_PROGRAM_ID));
        else
                cr_assert_eq(dur, t.pe.cpu.program_ps);
}

Test(hw, every_shipped_topology_starts_all_pes_together)
{
        fixture_fini();
        char dir[512];
        snprintf(dir, sizeof dir, "%s/topologies", getenv("CUBESIM_SOURCE_DIR"));
        DIR *dp = opendir(dir);
        cr_assert_not_null(dp);
        struct dirent *de;
        int n = 0;
        while ((de = readdir(dp))) {
                size_t len = strlen(de->d_name);
                if (len < 5 || strcmp(de->d_name + len - 5, ".yaml") != 0)
                        continue;
                for (int kk = 0; kk < 2; kk++) {
                        fixture_load(de->d_name);
                        check_launch(de->d_name, kk ? "program_ids" : "noop");
                        fixture_fini();
                }
                n++;
        }
        closedir(dp);
        cr_assert_geq(n, 3, "default, small and a multi-SIP machine are shipped");
        fixture_small();
}

struct ids {
        int id[3];                   /* program ids seen */
        int n[3];                    /* counts seen */
};

static struct ids seen[64];

static void record_ids(tl_ctx *tl, const void *args)
{
        (void)args;
        struct ids *s = &seen[tl->pe->global];
        for (int a = 0; a < 3; a++) {
                s->id[a] = tl_program_id(tl, a);
                s->n[a] = tl_num_programs(tl, a);
        }
}

Test(hw, program_ids_name_pe_cube_and_sip)
{
        const struct tl_kernel k = { .name = "ids", .fn = record_ids };
        cr_assert_leq(sim.n_pes, 64);
        cr_assert_eq(fixture_run(&k, NULL, NULL, 0), 0);
        for (uint32_t i = 0; i < sim.n_pes; i++) {
                const struct hw_pe *pe = &sim.pes[i];
                cr_assert_eq(seen[i].id[0], (int)pe->pe);
                cr_assert_eq(seen[i].id[1], (int)pe->cube);
                cr_assert_eq(seen[i].id[2], (int)pe->sip);
                cr_assert_eq(seen[i].n[0], (int)sim.pes_per_cube);
                cr_assert_eq(seen[i].n[1], (int)t.sip.cubes);
                cr_assert_eq(seen[i].n[2], (int)t.system.sips);
        }
}

/* ---- streaming balance ---- */

static sim_ps stream_end;
/* Where the test copies' bytes are: the requesting PE's cube. */
static const struct hw_hbm_span local_home = { .kind = HW_HOME_LOCAL };

static void stream_done(struct hw_dma_req *r, sim_ps start, sim_ps end)
{
        (void)r;
        (void)start;
        if (end > stream_end)
                stream_end = end;
}

/* 16 PEs streaming 1 MiB each from their cube's HBM, in descriptors of
 * chunk bytes all issued at 0 (as kernels issue them: placed at the end of
 * the instant): the cube's HBM rate they reach. */
static double stream_fraction(uint64_t chunk)
{
        uint64_t per_pe = 1 << 20;
        static struct hw_dma_req reqs[16 * 256];
        uint32_t n = 0;
        stream_end = 0;
        for (uint64_t off = 0; off < per_pe; off += chunk)
                for (uint32_t p = 0; p < sim.pes_per_cube; p++) {
                        cr_assert_lt(n, sizeof reqs / sizeof reqs[0]);
                        reqs[n] = (struct hw_dma_req){ .pe = &sim.pes[p], .from_hbm = true,
                                                       .from_home = &local_home,
                                                       .bytes = chunk, .done = stream_done };
                        hw_dma_copy_later(&reqs[n++]);
                }
        cr_assert_eq(ev_run(&sim.ev, &d), EV_DONE);
        sim_ps end = stream_end;
        double bytes = (double)per_pe * sim.pes_per_cube;
        double hbm = (double)t.cube.hbm.channel_bw_bytes_per_s * t.cube.hbm.channels;
        return bytes / ((double)end * 1e-12) / hbm;
}

Test(hw_default, sixteen_pes_streaming_reach_the_hbm_rate)
{
        static const uint64_t chunks[] = { 4 << 10, 16 << 10, 64 << 10, 256 << 10, 1 << 20 };
        for (size_t i = 0; i < sizeof chunks / sizeof chunks[0]; i++) {
                hw_sim_fini(&sim);
                cr_assert_eq(hw_sim_init(&sim, &t, NULL, &d), 0);
                double f = stream_fraction(chunks[i]);
                printf("16 PEs streaming 1 MiB each in %llu KiB loads: %.1f%% of the cube's HBM\n",
                       (unsigned long long)(chunks[i] >> 10), 100 * f);
                cr_assert_geq(f, 0.93, "%llu KiB loads: %.1f%% of the cube's HBM bandwidth",
                              (unsigned long long)(chunks[i] >> 10), 100 * f);
        }
}

/* ---- DMA descriptors ---- */

/* Four TCM copies issued together: with four descriptor slots their setups
 * overlap and the data path moves the bytes back to back (setup + 4 x
 * data); with one slot each waits for the one before (4 x (setup + data)). */
Test(hw, dma_channels_overlap_setup_with_data)
{
        uint64_t bytes = 4096;
        sim_ps setup = t.pe.dma.setup_ps, data = hw_bytes_ps(bytes, t.pe.dma.bw_bytes_per_s);
        cr_assert_eq(t.pe.dma.channels, 4);
        sim_ps end = 0;
        for (int i = 0; i < 4; i++)
                end = hw_dma_copy(&sim.pes[0], false, false, bytes, 0, NULL);
        cr_assert_eq(end, setup + 4 * data);

        hw_sim_fini(&sim);
        t.pe.dma.channels = 1;
        cr_assert_eq(hw_sim_init(&sim, &t, NULL, &d), 0);
        for (int i = 0; i < 4; i++) {
                sim_ps start;
                end = hw_dma_copy(&sim.pes[0], false, false, bytes, 0, &start);
                cr_assert_eq(start, (sim_ps)i * (setup + data), "descriptor %d", i);
        }
        cr_assert_eq(end, 4 * (setup + data));
}

/* A receive drain takes no slot and pays no setup: with every slot held by
 * copies it starts at once, in the data path's idle time during their
 * setup, and the data path stays busy without a gap (5 x data in all). */
Test(hw, a_drain_needs_no_descriptor_slot)
{
        uint64_t bytes = 4096;
        sim_ps setup = t.pe.dma.setup_ps, data = hw_bytes_ps(bytes, t.pe.dma.bw_bytes_per_s);
        cr_assert_lt(setup, data);
        for (uint32_t i = 0; i < t.pe.dma.channels; i++)
                hw_dma_copy(&sim.pes[0], false, false, bytes, 0, NULL);
        sim_ps start, end = hw_dma_reserve(&sim.pes[0], 0, 0, bytes, false, 0, &start);
        cr_assert_eq(start, 0);
        cr_assert_eq(end, (t.pe.dma.channels + 1) * data);
        /* A fifth copy waits for a slot. */
        hw_dma_copy(&sim.pes[0], false, false, bytes, 0, &start);
        cr_assert_eq(start, setup + data);
}

/* With every other PE of the cube streaming, a PE's HBM pieces hold its
 * data path at its fair share of the cube's HBM (channels x channel bw /
 * PEs), not at its DMA's rate; a lone PE streams at its DMA's rate. */
Test(hw_default, hbm_pieces_paced_at_the_fair_share)
{
        uint64_t bytes = 64 << 10;
        sim_ps setup = t.pe.dma.setup_ps;
        const struct hw_hbm_span local = { .kind = HW_HOME_LOCAL };
        for (uint32_t p = 1; p < sim.pes_per_cube; p++)
                hw_dma_copy(&sim.pes[p], &local, NULL, bytes, 0, NULL);
        hw_dma_copy(&sim.pes[0], &local, NULL, bytes, 0, NULL);
        uint64_t share = t.cube.hbm.channel_bw_bytes_per_s * t.cube.hbm.channels / sim.pes_per_cube;
        cr_assert_lt(share, t.pe.dma.bw_bytes_per_s, "the default machine's HBM is the bottleneck");
        const struct ev_server *dp = &sim.pes[0].dma.servers[0];
        cr_assert_eq(dp->n - dp->head, 1);
        cr_assert_eq(dp->iv[dp->head].start, setup);
        cr_assert_eq(dp->iv[dp->head].end - setup,
                     (bytes / t.cube.noc.packet_bytes) * hw_bytes_ps(t.cube.noc.packet_bytes, share));
        /* A lone PE (the other cube's) at its DMA's rate. */
        const struct ev_server *lone = &sim.pes[sim.pes_per_cube].dma.servers[0];
        hw_dma_copy(&sim.pes[sim.pes_per_cube], &local, NULL, bytes, 0, NULL);
        cr_assert_eq(lone->iv[lone->head].end - setup,
                     (bytes / t.cube.noc.packet_bytes) *
                             hw_bytes_ps(t.cube.noc.packet_bytes, t.pe.dma.bw_bytes_per_s));
}

/* PEs whose data paths are busy with TCM copies (or receive drains) take
 * no share of the HBM: a PE streaming beside them gets its DMA's rate. */
Test(hw_default, tcm_copies_take_no_share_of_the_hbm)
{
        uint64_t bytes = 64 << 10;
        sim_ps setup = t.pe.dma.setup_ps;
        const struct hw_hbm_span local = { .kind = HW_HOME_LOCAL };
        for (uint32_t p = 1; p < sim.pes_per_cube; p++)
                hw_dma_copy(&sim.pes[p], NULL, NULL, 4 * bytes, 0, NULL);
        hw_dma_copy(&sim.pes[0], &local, NULL, bytes, 0, NULL);
        const struct ev_server *dp = &sim.pes[0].dma.servers[0];
        cr_assert_eq(dp->iv[dp->head].end - setup,
                     (bytes / t.cube.noc.packet_bytes) *
                             hw_bytes_ps(t.cube.noc.packet_bytes, t.pe.dma.bw_bytes_per_s));
}

/* HBM copies issued at the same instant are placed together at its end:
 * the first one issued is paced as one of all the PEs streaming. */
static sim_ps later_end[2];
static void later_done(struct hw_dma_req *r, sim_ps start, sim_ps end)
{
        (void)start;
        later_end[r->pe->pe == 0 ? 0 : 1] = end;
}

Test(hw_default, same_instant_hbm_copies_share_fairly)
{
        uint64_t bytes = 1 << 20;
        static struct hw_dma_req reqs[16];
        for (uint32_t p = 0; p < sim.pes_per_cube; p++) {
                reqs[p] = (struct hw_dma_req){ .pe = &sim.pes[p], .from_hbm = true,
                                               .from_home = &local_home, .bytes = bytes,
                                               .done = later_done };
                hw_dma_copy_later(&reqs[p]);
                if (p == 0)
                        cr_assert_eq(later_end[0], 0, "not placed before the instant's end");
        }
        cr_assert_eq(ev_run(&sim.ev, &d), EV_DONE);
        uint64_t share = t.cube.hbm.channel_bw_bytes_per_s * t.cube.hbm.channels / sim.pes_per_cube;
        cr_assert_geq(later_end[0], hw_bytes_ps(bytes, share),
                      "the first PE is paced at its share, not at its DMA's rate");
        /* ... so the first and the last finish close together (within 5%). */
        sim_ps gap = later_end[1] > later_end[0] ? later_end[1] - later_end[0]
                                                 : later_end[0] - later_end[1];
        cr_assert_lt(gap, later_end[0] / 20, "first %llu, last %llu",
                     (unsigned long long)later_end[0], (unsigned long long)later_end[1]);
}

/* Data movement on the Tenstorrent files (ADR 0022). */
static void fixture_wormhole(void) { fixture_load("tt_wormhole_n150.yaml"); }
static void fixture_blackhole(void) { fixture_load("tt_blackhole_p150.yaml"); }
TestSuite(hw_wormhole, .init = fixture_wormhole, .fini = fixture_fini);
TestSuite(hw_blackhole, .init = fixture_blackhole, .fini = fixture_fini);

/* A core's transfers move at one NoC's rate, each packet with its request. */
Test(hw_wormhole, a_core_issues_on_one_noc_with_a_request_per_packet)
{
        cr_assert_eq(t.pe.dma.thread_nocs, 1);
        cr_assert_eq(hw_dma_bw(&t), t.pe.dma.bw_bytes_per_s / t.pe.dma.channels);
        uint64_t p = t.cube.noc.packet_bytes;
        cr_assert_gt(t.pe.dma.request_ps, 0);
        cr_assert_eq(hw_dma_request_ps(&t, p), t.pe.dma.request_ps);
        cr_assert_eq(hw_dma_request_ps(&t, p + 1), 2 * t.pe.dma.request_ps);
        /* A drain of one packet: its bytes at one NoC's rate and its request. */
        sim_ps end = hw_dma_reserve(&sim.pes[0], 0, 0, p, false, 0, NULL);
        cr_assert_eq(end, hw_bytes_ps(p, hw_dma_bw(&t)) + t.pe.dma.request_ps);
}

/* A span held in one channel: every piece goes there, served at the
 * channel's efficiency. */
Test(hw_wormhole, a_tensor_held_in_one_channel_stays_there)
{
        struct hw_hbm_span span = { .kind = HW_HOME_LOCAL, .channel_plus1 = 3 };
        uint64_t bytes = 4 * (uint64_t)t.cube.noc.packet_bytes;
        hw_hbm_span_access(&sim, &span, 0, dma(0), bytes, false, 0, &sim.pes[0].dma);
        struct hw_cube *c = &sim.cubes[0];
        uint64_t rate = t.cube.hbm.channel_bw_bytes_per_s * t.cube.hbm.near_efficiency_pct / 100;
        for (uint32_t ch = 0; ch < t.cube.hbm.channels; ch++)
                cr_assert_eq(c->channels[ch].busy_ps, ch == 2 ? 4 * hw_bytes_ps(bytes / 4, rate) : 0,
                             "channel %u", ch);
}

/* Blackhole: a bank serves the PE at its attach point at 98%, any other at 67%. */
Test(hw_blackhole, a_bank_serves_its_neighbour_faster)
{
        const struct topo_hbm *h = &t.cube.hbm;
        cr_assert_eq(h->near_efficiency_pct, 98);
        cr_assert_eq(h->far_efficiency_pct, 67);
        uint32_t near = sim.channel_attach_pe[0];
        cr_assert_neq(near, 0);
        struct hw_hbm_span span = { .kind = HW_HOME_LOCAL, .channel_plus1 = 1 };
        uint64_t bytes = t.cube.noc.packet_bytes;
        struct hw_cube *c = &sim.cubes[0];
        hw_hbm_span_access(&sim, &span, 0, dma(near), bytes, false, 0, &sim.pes[near].dma);
        sim_ps at_98 = c->channels[0].busy_ps;
        hw_hbm_span_access(&sim, &span, 0, dma(0), bytes, false, 0, &sim.pes[0].dma);
        sim_ps at_67 = c->channels[0].busy_ps - at_98;
        cr_assert_eq(at_98, hw_bytes_ps(bytes, h->channel_bw_bytes_per_s * 98 / 100));
        cr_assert_eq(at_67, hw_bytes_ps(bytes, h->channel_bw_bytes_per_s * 67 / 100));
}

/* Tensix's unpackers (docs/adr/0039): every operand tile pays its
 * UNPACR's two address cycles on the feed, and a subblock of at least
 * 2 x 2 tiles waits at each K step for its held source's refill at the
 * shared rate (32 B/cycle), less the one product it does meanwhile. */
Test(hw_wormhole, a_paired_subblock_waits_for_its_refill_at_each_k_step)
{
        /* The simulator's own copy of the machine (its graph's). */
        struct topo_pe_gemm *g = (struct topo_pe_gemm *)&sim.topo->pe.gemm;
        cr_assert_eq(g->unpack_setup_cycles, 2);
        cr_assert_eq(g->unpack_shared_bytes_per_cycle, 32);
        g->fidelity_passes = 2; /* HiFi2: 32 cycles a tile product */
        g->math_issue_cycles = 0; /* the math thread's instructions: the next test */
        g->src_handover_cycles = 0; /* the banks' hand-over: the test after it */
        struct hw_pe *pe = &sim.pes[0];
        sim_ps s0, s1, s2;
        /* 4 x 2 tiles, 4 K steps, bf16 (2048 B a tile): 32 products of
         * 32 cycles, and at each K step 2 + 2048 / 32 - 32 = 34 more; the
         * feed (24 tiles: 49152 / 64 + 24 x 2 = 816) is shorter. */
        sim_ps e0 = hw_gemm_run_fed(pe, 128, 64, 128, 0, 16 * 2048, 8 * 2048, 0, &s0);
        cr_assert_eq(e0 - s0, topo_cycles_to_ps(1024 + 4 * 34, g->clock_hz));
        /* 1 x 8 tiles: no pair held, no wait; the feed binds: 36 tiles'
         * 73728 / 64 + 36 x 2 = 1224 cycles. */
        sim_ps e1 = hw_gemm_run_fed(pe, 32, 256, 128, 0, 4 * 2048, 32 * 2048, e0, &s1);
        cr_assert_eq(e1 - s1, topo_cycles_to_ps(1224, g->clock_hz));
        /* Without the shared rate the 4 x 2 subblock runs at its math. */
        g->unpack_shared_bytes_per_cycle = 0;
        sim_ps e2 = hw_gemm_run_fed(pe, 128, 64, 128, 0, 16 * 2048, 8 * 2048, e1, &s2);
        cr_assert_eq(e2 - s2, topo_cycles_to_ps(1024, g->clock_hz));
}

/* The math thread's instructions beside its MVMULs (docs/adr/0040), one
 * cycle each: at each K step a SETC16 before each tile product, at HiFi2-4
 * the MOP's closing SETRWC after it, and the bank moves of tt-metal's
 * matmul (a 4 x 2 subblock: two held tiles, four streamed, 2 x 4 + 1; a
 * 1 x N subblock: one). */
Test(hw_wormhole, the_math_thread_spends_a_cycle_per_instruction_between_products)
{
        struct topo_pe_gemm *g = (struct topo_pe_gemm *)&sim.topo->pe.gemm;
        cr_assert_eq(g->math_issue_cycles, 1);
        g->unpack_shared_bytes_per_cycle = 0; /* the refill: the previous test */
        g->operand_bytes_per_cycle = 0;       /* and no feed bound */
        g->src_handover_cycles = 0;           /* nor a bank hand-over (the next test) */
        struct hw_pe *pe = &sim.pes[0];
        sim_ps s0, s1, s2, s3;
        /* 4 x 2 tiles, 4 K steps, HiFi2: 32 products of 32 cycles, and at
         * each K step 8 x 2 + 9 = 25 instructions. */
        g->fidelity_passes = 2;
        sim_ps e0 = hw_gemm_run_fed(pe, 128, 64, 128, 0, 16 * 2048, 8 * 2048, 0, &s0);
        cr_assert_eq(e0 - s0, topo_cycles_to_ps(1024 + 4 * 25, g->clock_hz));
        /* LoFi: no closing SETRWC, 8 + 9 a K step. */
        g->fidelity_passes = 1;
        sim_ps e1 = hw_gemm_run_fed(pe, 128, 64, 128, 0, 16 * 2048, 8 * 2048, e0, &s1);
        cr_assert_eq(e1 - s1, topo_cycles_to_ps(512 + 4 * 17, g->clock_hz));
        /* 1 x 8 at HiFi4: 8 products of 64 cycles, 8 x 2 + 1 a K step. */
        g->fidelity_passes = 4;
        sim_ps e2 = hw_gemm_run_fed(pe, 32, 256, 128, 0, 4 * 2048, 32 * 2048, e1, &s2);
        cr_assert_eq(e2 - s2, topo_cycles_to_ps(4 * 8 * 64 + 4 * 17, g->clock_hz));
        /* Off (the default machine): the MVMULs alone. */
        g->math_issue_cycles = 0;
        sim_ps e3 = hw_gemm_run_fed(pe, 32, 256, 128, 0, 4 * 2048, 32 * 2048, e2, &s3);
        cr_assert_eq(e3 - s3, topo_cycles_to_ps(4 * 8 * 64, g->clock_hz));
}

/* The source banks' hand-over (docs/adr/0047): a subblock of one row of
 * tiles takes a new tile of its streamed source at every product, and the
 * unpacker refills a bank only once the FPU has given it back, so each
 * product waits for the refill's 2 address cycles, 2048 / 64 byte cycles
 * and the hand-over beyond one product; a subblock of 4 x 2 tiles pays
 * the hand-over once a K step, in its held source's refill. */
Test(hw_wormhole, a_streamed_bank_waits_for_its_hand_over)
{
        struct topo_pe_gemm *g = (struct topo_pe_gemm *)&sim.topo->pe.gemm;
        cr_assert_gt(g->src_handover_cycles, 0);
        g->src_handover_cycles = 12;
        g->math_issue_cycles = 0; /* the math thread's instructions: their own test */
        g->fidelity_passes = 2;   /* HiFi2: 32 cycles a tile product */
        struct hw_pe *pe = &sim.pes[0];
        sim_ps s0, s1, s2, s3;
        /* 1 x 8 tiles, 4 K steps: 32 products, each 2 + 32 + 12 = 46 cycles
         * (the feed's 36 tiles, 73728 / 64 + 36 x 2 = 1224, are fewer). */
        sim_ps e0 = hw_gemm_run_fed(pe, 32, 256, 128, 0, 4 * 2048, 32 * 2048, 0, &s0);
        cr_assert_eq(e0 - s0, topo_cycles_to_ps(32 * 46, g->clock_hz));
        /* 4 x 2 tiles, 4 K steps: 32 products of 32 cycles, and at each K
         * step the refill at the shared rate, 2 + 64 + 12 - 32 = 46. */
        sim_ps e1 = hw_gemm_run_fed(pe, 128, 64, 128, 0, 16 * 2048, 8 * 2048, e0, &s1);
        cr_assert_eq(e1 - s1, topo_cycles_to_ps(1024 + 4 * 46, g->clock_hz));
        /* HiFi4: a product (64 cycles) outlasts the refill, no wait. */
        g->fidelity_passes = 4;
        sim_ps e2 = hw_gemm_run_fed(pe, 32, 256, 128, 0, 4 * 2048, 32 * 2048, e1, &s2);
        cr_assert_eq(e2 - s2, topo_cycles_to_ps(32 * 64, g->clock_hz));
        /* Off (the default machine): the 1 x 8 subblock at its feed. */
        g->fidelity_passes = 2;
        g->src_handover_cycles = 0;
        sim_ps e3 = hw_gemm_run_fed(pe, 32, 256, 128, 0, 4 * 2048, 32 * 2048, e2, &s3);
        cr_assert_eq(e3 - s3, topo_cycles_to_ps(1224, g->clock_hz));
}

/* The streamed source's tiles at their own format's bytes: a bfp4_b weight
 * tile (512 B of mantissas and 64 exponents, 576 B) streamed past a held
 * bf16 tile of in0 refills in 2 + 576 / 64 + the hand-over, not at the
 * mean of the two operands' tiles (739 B: 2 + 12 + the hand-over). */
Test(hw_wormhole, a_streamed_bank_refills_its_own_format)
{
        struct topo_pe_gemm *g = (struct topo_pe_gemm *)&sim.topo->pe.gemm;
        g->src_handover_cycles = 12;
        g->math_issue_cycles = 0;
        g->fidelity_passes = 1;   /* LoFi: 16 cycles a tile product */
        struct hw_pe *pe = &sim.pes[0];
        sim_ps s0, s1;
        /* 1 x 8 tiles, 4 K steps: 32 products of 2 + 9 + 12 = 23 cycles */
        sim_ps e0 = hw_gemm_run_fed(pe, 32, 256, 128, 0, 4 * 2048, 32 * 576, 0, &s0);
        cr_assert_eq(e0 - s0, topo_cycles_to_ps(32 * 23, g->clock_hz));
        /* 8 x 1 tiles: in0's column streams, its bfp4_b tiles the same */
        sim_ps e1 = hw_gemm_run_fed(pe, 256, 32, 128, 0, 32 * 576, 4 * 2048, e0, &s1);
        cr_assert_eq(e1 - s1, topo_cycles_to_ps(32 * 23, g->clock_hz));
}

/* A NoC atomic on a virtual channel of its own (cube.noc.atomic_vc,
 * docs/adr/0047): one flit passes links busy with a transfer at their
 * latency, where a packet booked on them waits for the transfer's end. */
Test(hw_wormhole, a_flit_passes_a_busy_route)
{
        uint32_t a = sim.pes[0].node_dma, b = sim.pes[1].node_dma;
        sim_ps idle = hw_xfer_flit(&sim, a, b, 4, 0);
        cr_assert_gt(idle, 0);
        sim_ps bulk = hw_xfer(&sim, a, b, 1 << 20, 0); /* 1 MiB on the same route */
        cr_assert_gt(bulk, 1000 * idle);
        cr_assert_eq(hw_xfer_flit(&sim, a, b, 4, 0), idle);
        cr_assert_gt(hw_xfer(&sim, a, b, 4, 0), bulk / 2);
}
