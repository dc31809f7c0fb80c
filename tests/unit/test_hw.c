/* tests/unit/test_hw.c: hardware cost models against their closed forms,
 * link contention, HBM interleave, and the launch barrier on every shipped
 * topology. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdio.h>
#include <string.h>

#include "fixture.h"

TestSuite(hw, .init = fixture_small, .fini = fixture_fini);

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
        sim_ps want = l->latency_ps + t.cube.noc.router_node_overhead_ps +
                      hw_bytes_ps(bytes, l->bw_bytes_per_s);
        cr_assert_eq(hw_xfer(&sim, dma(0), router, bytes, 0), want);
}

Test(hw, two_transfers_on_one_link_take_twice_the_drain)
{
        uint32_t router = topo_node_router(&sim.graph, dma(0));
        const struct topo_link *l = &t.pe.links.dma_noc;
        uint64_t bytes = 1 << 20;
        sim_ps drain = hw_bytes_ps(bytes, l->bw_bytes_per_s);
        sim_ps first = hw_xfer(&sim, dma(0), router, bytes, 0);
        sim_ps second = hw_xfer(&sim, dma(0), router, bytes, 0);
        cr_assert_eq(second - first, drain);
        /* Relative to one transfer alone, the drain part doubles. */
        cr_assert_eq(second, first + drain);
        cr_assert_eq(sim.links[topo_edge_between(&sim.graph, dma(0), router)].res.busy_ps, 2 * drain);
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
        cr_assert_eq(hw_xfer(&sim, dma(0), dma(1), bytes, 0), head + hw_bytes_ps(bytes, min_bw));
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
        uint64_t macs = t.pe.gemm.macs_per_cycle;
        /* M*N*K = 64*64*64: ceil(262144 / macs) cycles. */
        uint64_t cycles = (262144 + macs - 1) / macs;
        cr_assert_eq(hw_gemm_ps(&t, 64, 64, 64), topo_cycles_to_ps(cycles, t.pe.gemm.clock_hz));
        uint64_t lanes = t.pe.math.lanes;
        uint64_t cpe = t.pe.math.cycles_per_element[TOPO_OP_EXP];
        cr_assert_gt(cpe, 0);
        cr_assert_eq(hw_math_ps(&t, TOPO_OP_EXP, 1000),
                     topo_cycles_to_ps(((1000 + lanes - 1) / lanes) * cpe, t.pe.math.clock_hz));
        cr_assert_eq(hw_dma_ps(&t, 0), t.pe.dma.setup_ps);
}

/* ---- launch ---- */

static void check_launch(const char *file, const char *kernel)
{
        const struct tl_kernel *k = tl_kernel_find(kernel);
        cr_assert_not_null(k);
        int rc = fixture_run(k, NULL, NULL, 0);
        if (rc)
                diag_print(&d, stderr);
        cr_assert_eq(rc, 0, "%s on %s", kernel, file);
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
        if (strcmp(kernel, "program_ids") == 0)
                cr_assert_eq(dur, 6 * topo_issue_cost_ps(&t.pe.cpu, TOPO_OP_PROGRAM_ID));
        else
                cr_assert_eq(dur, 0);
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
