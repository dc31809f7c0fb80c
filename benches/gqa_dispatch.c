/* benches/gqa_dispatch.c: PE_CPU dispatch time per KV tile of GQA decode,
 * opt2 (two composites per tile) against opt3 (the same work as
 * primitives), swept over R, the KV tile length as a fraction of a PE's
 * KV span (DESIGN.md 7; the earlier simulator measured opt3 960 ns vs
 * opt2 184 ns per tile, 5.22x, gate > 2x).
 *
 * Each point runs the kernel on the default machine in op_log mode at the
 * Llama-3-70B decode shape (bf16, batch 1, seq_len S keys) with
 * kv_tile = R x S / PEs. A run's PE_CPU issue time also holds per-pair
 * work (Q loads, the chain reduce) that does not depend on the tiling; to
 * leave it out, the figure is the slope between runs at S and 2S keys with
 * the same kv_tile (same pairs, same reduce, same commands per tile,
 * twice the tiles): (issue(2S) - issue(S)) / (tiles(2S) - tiles(S)), per
 * PE, averaged over PEs. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "tl/tl_run.h"

static const char *const dispatch_params[] = { "seq_len", "prim_tile", NULL };

static const double ratios[] = { 0.25, 0.0625, 0.03125 };

/* Mean PE_CPU issue time per PE (ps) of kernel over seq keys in tiles of
 * kv_tile; the tiles each PE ran through *tiles. 0, -1 (run failed) or
 * -EINVAL. */
static int issue_per_pe(const char *kernel, uint64_t seq, int64_t kv_tile, uint64_t prim_tile,
                        double *issue_ps, int64_t *tiles, struct diag *d)
{
        struct topo t;
        if (topo_load_default(&t, d) < 0)
                return -EINVAL;
        char s_seq[48], s_tile[48], s_prim[48];
        snprintf(s_seq, sizeof s_seq, "seq_len=%" PRIu64, seq);
        snprintf(s_tile, sizeof s_tile, "kv_tile=%" PRId64, kv_tile);
        snprintf(s_prim, sizeof s_prim, "prim_tile=%" PRIu64, prim_tile);
        /* OPT2: its composites tile in hardware; it takes no prim_tile. */
        const char *sets[] = { "model=llama3-70b", "dtype=bf16", s_seq, s_tile, s_prim };
        bool opt3 = strcmp(kernel, "gqa_decode_opt3") == 0;
        struct tl_job job = { .kernel = tl_kernel_find(kernel), .topo = &t, .sets = sets,
                              .n_sets = opt3 ? 5 : 4,
                              .opts = tl_run_opts_default() };
        int rc = tl_job_run(&job, d);
        if (rc == 0) {
                uint32_t n_pes = job.sim.n_pes;
                double sum = 0;
                for (int op = 0; op < TOPO_OP_COUNT; op++)
                        sum += (double)job.stats.issue_ps[op];
                *issue_ps = sum / n_pes;
                /* 8 pairs (batch 1 x 8 KV heads) of seq / PEs keys each. */
                int64_t span = (int64_t)(seq / n_pes);
                *tiles = 8 * ((span + kv_tile - 1) / kv_tile);
        }
        tl_job_fini(&job);
        topo_fini(&t);
        return rc;
}

/* ns per tile of kernel at each R, or -1 when the kernel is not built. */
static int sweep(const char *kernel, uint64_t seq, uint64_t prim_tile, double *ns,
                 struct diag *d)
{
        size_t n = sizeof ratios / sizeof ratios[0];
        for (size_t i = 0; i < n; i++)
                ns[i] = -1;
        if (!tl_kernel_find(kernel))
                return 0;
        int rc = 0;
        for (size_t i = 0; i < n && rc == 0; i++) {
                int64_t kv_tile = (int64_t)(ratios[i] * (double)(seq / 64) + 0.5);
                if (kv_tile < 1)
                        kv_tile = 1;
                double ps1, ps2;
                int64_t tiles1, tiles2;
                rc = issue_per_pe(kernel, seq, kv_tile, prim_tile, &ps1, &tiles1, d);
                if (rc == 0)
                        rc = issue_per_pe(kernel, 2 * seq, kv_tile, prim_tile, &ps2, &tiles2, d);
                if (rc == 0 && tiles2 > tiles1)
                        ns[i] = (ps2 - ps1) / (double)(tiles2 - tiles1) / 1000;
        }
        return rc;
}

/* A time per tile for --json: null where the point failed (v < 0). */
static json_t *ns_json(double v)
{
        return v < 0 ? json_null() : jsonw_fixed(v, 1);
}

static int run(const struct bench_ctx *c)
{
        uint64_t seq, prim_tile;
        params_u64(c->params, "seq_len", 32768, 64, UINT64_C(1) << 24, &seq, c->diag);
        params_u64(c->params, "prim_tile", 64, 0, 1 << 20, &prim_tile, c->diag);
        params_check_unused(c->params, dispatch_params, "gqa-decode-dispatch", c->diag);
        if (seq % 64 != 0)
                diag_error(c->diag, "--set seq_len=%" PRIu64 ": expected a multiple of 64 (the "
                           "default machine's PEs)", seq);
        if (c->diag->n_errors)
                return 2;
        size_t n = sizeof ratios / sizeof ratios[0];
        double opt2[sizeof ratios / sizeof ratios[0]], opt3[sizeof ratios / sizeof ratios[0]];
        /* OPT2: measured the same way once gqa_decode_opt2 is registered
         * (with the gqa_decode parameters, kv_tile among them); until then
         * its figures are null. */
        int rc = sweep("gqa_decode_opt2", seq, prim_tile, opt2, c->diag);
        if (rc == 0)
                rc = sweep("gqa_decode_opt3", seq, prim_tile, opt3, c->diag);
        if (rc == -EINVAL)
                return 2;
        if (rc < 0)
                return 1;
        if (c->json) {
                json_t *pts = json_array();
                for (size_t i = 0; i < n; i++)
                        json_array_append_new(pts, json_pack("{s:o, s:o, s:o}", "R",
                                                             jsonw_real(ratios[i]),
                                                             "opt2_dispatch_ns_per_tile",
                                                             ns_json(opt2[i]),
                                                             "opt3_dispatch_ns_per_tile",
                                                             ns_json(opt3[i])));
                return bench_print_json(c, json_pack("{s:o}", "points", pts));
        }
        fprintf(c->out, "PE_CPU dispatch per KV tile, Llama-3-70B decode, %" PRIu64
                " keys, default machine\n%-9s %10s %10s %8s\n", seq, "R", "opt2_ns", "opt3_ns",
                "opt3/2");
        for (size_t i = 0; i < n; i++) {
                if (opt2[i] < 0)
                        fprintf(c->out, "%-9g %10s %10.1f %8s\n", ratios[i], "-", opt3[i], "-");
                else
                        fprintf(c->out, "%-9g %10.1f %10.1f %8.2f\n", ratios[i], opt2[i], opt3[i],
                                opt3[i] / opt2[i]);
        }
        if (opt2[0] < 0)
                fprintf(c->out, "(gqa_decode_opt2 is not built yet)\n");
        return 0;
}

BENCH_DEFINE(bench_gqa_decode_dispatch, "gqa-decode-dispatch", dispatch_params,
             "GQA decode PE_CPU dispatch per KV tile, opt2 vs opt3, over R",
             "Parameters:\n"
             "  seq_len=N    keys (default 32768); Llama-3-70B shape, bf16, batch 1\n"
             "  prim_tile=N  opt3: keys per primitive load and dot (default 64, the\n"
             "               composites' tile; 0: one per KV tile)\n"
             "For R in {0.25, 0.0625, 0.03125} (KV tile / a PE's KV span) runs\n"
             "gqa_decode_opt2 and gqa_decode_opt3 in op_log mode on the default machine\n"
             "with kv_tile = R x seq_len / 64, at seq_len and at twice it.\n"
             "Prints (--json) {\"points\": [{\"R\": r, \"opt2_dispatch_ns_per_tile\": x,\n"
             "\"opt3_dispatch_ns_per_tile\": y}, ...]}: PE_CPU issue time per tile (the\n"
             "slope between the two runs); null for a kernel not built.\n");
