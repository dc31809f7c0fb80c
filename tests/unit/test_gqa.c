/* tests/unit/test_gqa.c: the GQA kernels in data mode against a float64
 * reference computed here from the run's own inputs (q, k, v as the
 * kernel saw them, already rounded to the dtype): every kernel, the three
 * dtypes, tails (S dividing neither the tile nor the PE count), groups
 * G = 1, 4, 8, causal prefill with Sq < S, Sq == S and Sq > S (fully
 * masked rows must give 0, never NaN), decode with fewer keys than PEs
 * (merges of empty states), and the shapes a kernel must reject. All on
 * topologies/small.yaml (2 cubes x 2x2 PEs). */
#include <criterion/criterion.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "fixture.h"

TestSuite(gqa, .init = fixture_small, .fini = fixture_fini);

/* Run kernel `name` with --set values. */
static int run_sets(const char *name, enum tl_mode mode, const char *const *sets, int n)
{
        return fixture_run(tl_kernel_find(name), fixture_opts(mode, 11),
                           sets, (size_t)n);
}

static void tolerance(tl_dtype dt, double *atol, double *rtol)
{
        *atol = 2e-4;
        *rtol = 2e-4;
        switch (dt) {
        case TL_FP32: *atol = 2e-4; *rtol = 2e-4; break;
        case TL_BF16: *atol = 1.5e-2; *rtol = 1e-2; break;
        case TL_FP16: *atol = 1e-2; *rtol = 1e-3; break;
        case TL_BFP8_B: *atol = 3e-2; *rtol = 3e-2; break;
        case TL_BFP4_B: *atol = 0.25; *rtol = 0.25; break;
        }
}

/* Check o against softmax(scale q k^T [causal]) v in float64. Returns the
 * number of rows that see no key (their output must be exactly 0). */
static int check_reference(bool causal, double scale)
{
        struct tl_global *gq = fixture_global("q"), *gk = fixture_global("k"), *gv = fixture_global("v"), *go = fixture_global("o");
        const int64_t *qs = gq->t.shape, *ks = gk->t.shape;
        int64_t B = qs[0], Hq = qs[1], Sq = qs[2], D = qs[3], Hkv = ks[1], S = ks[2];
        int64_t G = Hq / Hkv;
        if (scale == 0)
                scale = 1.0 / sqrt((double)D);
        double atol, rtol;
        tolerance(go->t.dtype, &atol, &rtol);
        static double w[1 << 16];
        cr_assert_leq(S, 1 << 16);
        double worst = 0;
        int empty = 0;
        for (int64_t b = 0; b < B; b++)
                for (int64_t h = 0; h < Hq; h++)
                        for (int64_t i = 0; i < Sq; i++) {
                                int64_t kvh = h / G;
                                const float *q = gq->data + ((b * Hq + h) * Sq + i) * D;
                                const float *k = gk->data + (b * Hkv + kvh) * S * D;
                                const float *v = gv->data + (b * Hkv + kvh) * S * D;
                                const float *o = go->data + ((b * Hq + h) * Sq + i) * D;
                                int64_t last = causal ? i + S - Sq : S - 1;
                                if (last > S - 1)
                                        last = S - 1;
                                double mx = -INFINITY, sum = 0;
                                for (int64_t j = 0; j <= last; j++) {
                                        double s = 0;
                                        for (int64_t c = 0; c < D; c++)
                                                s += (double)q[c] * k[j * D + c];
                                        w[j] = s * scale;
                                        mx = fmax(mx, w[j]);
                                }
                                for (int64_t j = 0; j <= last; j++) {
                                        w[j] = exp(w[j] - mx);
                                        sum += w[j];
                                }
                                if (last < 0)
                                        empty++;
                                for (int64_t c = 0; c < D; c++) {
                                        double ref = 0;
                                        for (int64_t j = 0; j <= last; j++)
                                                ref += w[j] * v[j * D + c];
                                        if (last >= 0)
                                                ref /= sum;
                                        cr_assert(isfinite(o[c]), "o[%lld, %lld, %lld, %lld] = %g",
                                                  (long long)b, (long long)h, (long long)i,
                                                  (long long)c, o[c]);
                                        if (last < 0)
                                                cr_assert_eq(o[c], 0.0f,
                                                             "a row that sees no key gives 0");
                                        double err = fabs(o[c] - ref) / (atol + rtol * fabs(ref));
                                        if (err > worst)
                                                worst = err;
                                        cr_assert_leq(err, 1.0, "o[%lld, %lld, %lld, %lld] = %.7g, "
                                                      "reference %.7g",
                                                      (long long)b, (long long)h, (long long)i,
                                                      (long long)c, o[c], ref);
                                }
                        }
        return empty;
}

#define N(a) ((int)(sizeof(a) / sizeof((a)[0])))
#define MAX_SETS 10

/* A data-mode run checked against the float64 reference. */
struct ref_case {
        const char *name;               /* what it covers, named in a failure */
        const char *kernel;             /* the kernel run */
        bool causal;                    /* the reference masks keys past a row's diagonal */
        double scale;                   /* the reference's scale; 0: 1/sqrt(head_dim) */
        int n_empty;                    /* query rows that see no key (their output is 0) */
        const char *sets[MAX_SETS];     /* --set values, NULL-terminated */
};

/* A case of gqa_decode_short: one shape, with kv_per_cube and the dtype. */
#define DECODE_SHORT(kpc, dt)                                                                 \
        { "decode_short_kv_per_cube_" #kpc "_" #dt, "gqa_decode_short", false, 0, 0,         \
          { "batch=2", "q_heads=16", "kv_heads=4", "head_dim=32", "seq_len=203",              \
            "kv_tile=32", "kv_per_cube=" #kpc, "dtype=" #dt } }

static int n_sets(const char *const *sets)
{
        int n = 0;
        while (n < MAX_SETS && sets[n])
                n++;
        return n;
}

static const struct ref_case ref_cases[] = {
        /* ---- decode, long context ---- */
        /* 1000 keys over 8 PEs (125 each) in tiles of 48: tails everywhere. */
        { "decode_fp32_tails_g4", "gqa_decode", false, 0, 0,
          { "batch=2", "q_heads=8", "kv_heads=2", "head_dim=32", "seq_len=1000",
            "kv_tile=48", "dtype=fp32" } },
        { "decode_bf16_g8_odd_context", "gqa_decode", false, 0, 0,
          { "q_heads=8", "kv_heads=1", "head_dim=64", "seq_len=77", "kv_tile=4",
            "dtype=bf16" } },
        { "decode_fp16_g1_explicit_scale", "gqa_decode", false, 0.3, 0,
          { "q_heads=3", "kv_heads=3", "head_dim=16", "seq_len=500", "dtype=fp16",
            "scale=0.3", "depth=3" } },
        /* 3 keys over 8 PEs: five hold none; PE 1 sends its empty state
         * to PE 0, which is empty too (a merge of two "-inf" states). */
        { "decode_fewer_keys_than_pes_merges_empty_states", "gqa_decode", false, 0, 0,
          { "q_heads=4", "kv_heads=1", "head_dim=16", "seq_len=3", "dtype=fp32" } },
        { "decode_opt3_tile_frac", "gqa_decode_opt3", false, 0, 0,
          { "batch=2", "q_heads=8", "kv_heads=2", "head_dim=32", "seq_len=333",
            "tile_frac=0.25", "dtype=fp32" } },
        /* 41-42 keys per PE in tiles of 40, loaded and multiplied 16 keys
         * at a time: chunks 16 + 16 + 8, then a 1- or 2-key tile. */
        { "decode_opt3_primitive_chunks_bf16", "gqa_decode_opt3", false, 0, 0,
          { "q_heads=8", "kv_heads=1", "head_dim=32", "seq_len=333", "kv_tile=40",
            "prim_tile=16", "dtype=bf16" } },
        { "decode_opt3_folded_fp16", "gqa_decode_opt3", false, 0, 0,
          { "q_heads=8", "kv_heads=2", "head_dim=32", "seq_len=300", "kv_tile=24",
            "prim_tile=16", "fold=1", "dtype=fp16" } },
        /* Tiles of 40 keys over 41-42 keys per PE: a full tile, then a
         * 1- or 2-key tail; the composites tile the keys by 64. */
        { "decode_opt2_composites_fp32_tails", "gqa_decode_opt2", false, 0, 0,
          { "batch=2", "q_heads=8", "kv_heads=2", "head_dim=32", "seq_len=333",
            "kv_tile=40", "dtype=fp32" } },
        { "decode_opt2_bf16_long_tiles", "gqa_decode_opt2", false, 0, 0,
          { "q_heads=16", "kv_heads=2", "head_dim=64", "seq_len=1500", "kv_tile=150",
            "dtype=bf16" } },
        { "decode_opt2_fp16", "gqa_decode_opt2", false, 0, 0,
          { "q_heads=4", "kv_heads=4", "head_dim=32", "seq_len=77", "dtype=fp16" } },

        /* ---- decode, short context ---- */
        DECODE_SHORT(1, fp32),
        DECODE_SHORT(2, bf16),
        DECODE_SHORT(4, fp16),
        /* 8 KV heads per cube on 4 PEs: each PE runs two groups in turn. */
        DECODE_SHORT(8, fp32),

        /* ---- prefill, long context ---- */
        { "prefill_causal_square_fp32", "gqa_prefill", true, 0, 0,
          { "q_heads=4", "kv_heads=2", "head_dim=32", "seq_len=300", "kv_tile=64",
            "q_tile=16", "dtype=fp32" } },
        { "prefill_causal_fewer_queries_bf16_g8", "gqa_prefill", true, 0, 0,
          { "batch=2", "q_heads=8", "kv_heads=1", "head_dim=16", "seq_len=257",
            "q_len=77", "kv_tile=32", "dtype=bf16" } },
        /* Sq > S: the first Sq - S query rows see no key at all. */
        { "prefill_causal_more_queries_than_keys_fp16", "gqa_prefill", true, 0, 4 * 60,
          { "q_heads=4", "kv_heads=4", "head_dim=16", "seq_len=40", "q_len=100",
            "kv_tile=16", "q_tile=8", "dtype=fp16" } },
        { "prefill_not_causal_fp32", "gqa_prefill", false, 0, 0,
          { "q_heads=8", "kv_heads=2", "head_dim=32", "seq_len=150", "q_len=50",
            "causal=0", "kv_tile=32", "dtype=fp32" } },
        /* One query row on two cubes: cube 1 has no rows and no work. */
        { "prefill_single_query_row_leaves_a_cube_idle", "gqa_prefill", true, 0, 0,
          { "q_heads=4", "kv_heads=2", "head_dim=16", "seq_len=90", "q_len=1",
            "kv_tile=16", "dtype=fp32" } },
        /* Blocks of 8 heads x 30 rows (240; sub-blocks of 4 heads): each
         * cube's two 50-row chunks end in 20-row tail blocks, and the
         * diagonal of a block crosses two 16-key tiles. */
        { "prefill_240_row_blocks_with_tails_bf16", "gqa_prefill", true, 0, 0,
          { "q_heads=8", "kv_heads=1", "head_dim=16", "seq_len=200", "q_tile=30",
            "heads_per_pe=8", "kv_tile=16", "dtype=bf16" } },
        /* One head per block: its 7 rows split into sub-blocks of 3 and 4
         * rows with their own diagonals; 3 blocks per PE, an odd count on
         * its two output buffers. */
        { "prefill_rows_split_into_odd_sub_blocks_fp32", "gqa_prefill", true, 0, 0,
          { "q_heads=2", "kv_heads=2", "head_dim=16", "seq_len=70", "q_tile=7",
            "heads_per_pe=1", "kv_tile=16", "dtype=fp32" } },
        /* Three heads per block cannot be halved: one sub-block of all 48
         * rows (3 heads x 16), no ping-pong, its score buffers a block's. */
        { "prefill_one_sub_block_of_three_heads_fp16", "gqa_prefill", true, 0, 0,
          { "q_heads=3", "kv_heads=1", "head_dim=16", "seq_len=130", "q_len=128",
            "q_tile=16", "kv_tile=16", "dtype=fp16" } },
        /* The setup sizes blocks from the machine: under a 64 KiB scratch
         * ceiling the default machine's blocks would be a kernel error;
         * smaller ones run and give the same numbers. */
        { "prefill_blocks_sized_to_a_small_scratch_fp32", "gqa_prefill", true, 0, 0,
          { "q_heads=8", "kv_heads=2", "head_dim=32", "seq_len=160", "dtype=fp32",
            "pe.tcm.scratch_ceiling_kib=64" } },

        /* ---- prefill, short context ---- */
        { "prefill_short_causal_kv_per_cube_1_bf16", "gqa_prefill_short", true, 0, 0,
          { "q_heads=8", "kv_heads=2", "head_dim=32", "seq_len=130", "kv_tile=32",
            "q_tile=16", "kv_per_cube=1", "dtype=bf16" } },
        { "prefill_short_kv_per_cube_2_fp16_fewer_queries", "gqa_prefill_short", true, 0, 0,
          { "batch=2", "q_heads=4", "kv_heads=4", "head_dim=16", "seq_len=99", "q_len=33",
            "kv_tile=16", "kv_per_cube=2", "dtype=fp16" } },
        { "prefill_short_kv_per_cube_8_not_causal_fp32", "gqa_prefill_short", false, 0, 0,
          { "q_heads=16", "kv_heads=8", "head_dim=16", "seq_len=70", "q_len=20",
            "causal=0", "kv_tile=16", "kv_per_cube=8", "dtype=fp32" } },
};

static void run_ok(const char *name, const char *what, const char *const *sets, int n)
{
        fixture_run_ok(what, tl_kernel_find(name), fixture_opts(TL_MODE_DATA, 11),
                       sets, (size_t)n);
}

FIXTURE_TABLE_TEST(gqa, matches_reference, struct ref_case, ref_cases)
{
        run_ok(row->kernel, row->name, row->sets, n_sets(row->sets));
        cr_assert_eq(check_reference(row->causal, row->scale), row->n_empty,
                     "%s: rows that see no key", row->name);
}

Test(gqa, decode_model_preset)
{
        const char *sets[] = { "model=mistral-7b", "seq_len=64", "dtype=bf16" };
        run_ok("gqa_decode", "decode_model_preset", sets, N(sets));
        cr_assert_eq(fixture_global("q")->t.shape[1], 32);
        cr_assert_eq(fixture_global("k")->t.shape[1], 8);
        cr_assert_eq(fixture_global("k")->t.shape[3], 128);
        check_reference(false, 0);
}

/* ---- shapes a kernel rejects (exit 2) ---------------------------------------------- */

/* A run the kernel's setup refuses with -EINVAL and a message. */
struct reject_case {
        const char *kernel;             /* the kernel run (op_log mode) */
        const char *message;            /* some message of the run contains it */
        const char *sets[MAX_SETS];     /* --set values, NULL-terminated */
};

static const struct reject_case reject_cases[] = {
        { "gqa_decode", "q_heads (12) must be a multiple of kv_heads (8)",
          { "q_heads=12", "kv_heads=8" } },
        { "gqa_prefill_short", "kv_per_cube (3) must be 1, 2, 4 or 8", { "kv_per_cube=3" } },
        { "gqa_decode", "the K/V prefetch ring needs", { "kv_tile=2048", "depth=8", "dtype=fp32" } },
        { "gqa_prefill", "a query block of 4096 rows", { "q_tile=4096", "dtype=fp32" } },
        /* Two tiles stay in use while the sub-blocks ping-pong. */
        { "gqa_prefill", "depth (2): prefill needs at least 3 K/V prefetch slots", { "depth=2" } },
};

FIXTURE_TABLE_TEST(gqa, rejects, struct reject_case, reject_cases)
{
        cr_assert_eq(run_sets(row->kernel, TL_MODE_OPLOG, row->sets, n_sets(row->sets)), -EINVAL,
                     "%s: not refused", row->message);
        cr_assert(diag_has(row->message), "no message: %s", row->message);
}
