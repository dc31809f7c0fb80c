/* tests/unit/test_tt_llm.c: the whole-model tables of validate-tt-llm:
 * the model presets (llm_layer's `model` choices name llm_models in order;
 * the new presets' config.json figures), tt-transformers' precision
 * configurations (src/llm/tt_llm_model.c against model_config.py and
 * PERF.md), and the DRAM a deployment needs. */
#include <criterion/criterion.h>
#include <string.h>

#include "llm/tt_llm_model.h"
#include "tl/tl_run.h"

Test(tt_llm, model_choices_name_the_presets_in_order)
{
        const struct tl_kernel *k = tl_kernel_find("llm_layer");
        cr_assert(k);
        const struct tl_param *p = tl_kernel_param(k, "model", 5);
        cr_assert(p && p->choices);
        cr_assert_str_eq(p->choices[0], "none");
        size_t i = 0;
        for (; llm_models[i].name; i++) {
                cr_assert(p->choices[i + 1], "preset %s has no choice", llm_models[i].name);
                cr_assert_str_eq(p->choices[i + 1], llm_models[i].name);
        }
        cr_assert_null(p->choices[i + 1]);
}

Test(tt_llm, new_presets_carry_their_config)
{
        const struct llm_model *m = llm_model_find("llama3.2-1b");
        cr_assert(m);
        cr_assert_eq(m->hidden, 2048);
        cr_assert_eq(m->head_dim, 64);
        cr_assert_eq(m->layers, 16);
        cr_assert(m->tied);
        cr_assert_float_eq(m->rope_factor, 32.0, 1e-9);
        m = llm_model_find("qwen2.5-7b");
        cr_assert(m);
        cr_assert_eq(m->kv_heads, 4);
        cr_assert_eq(m->ffn, 18944);
        cr_assert(m->qkv_bias && !m->tied);
        cr_assert_float_eq(m->rope_theta, 1e6, 1e-3);
        m = llm_model_find("llama3.1-8b");
        cr_assert(m && m->rope_factor == 8.0 && m->vocab == 128256);
        for (const char *const *n = (const char *const[]){ "llama3.2-3b", "llama3.1-70b",
                                                           "llama3.3-70b", "mistral-7b",
                                                           "qwen2.5-72b", NULL };
             *n; n++)
                cr_assert(llm_model_find(*n), "%s", *n);
        for (const struct llm_model *p = llm_models; p->name; p++) {
                cr_assert(p->hf && strchr(p->hf, '/'), "%s cites no repository", p->name);
                cr_assert(p->rope_theta > 0, "%s", p->name);
        }
}

Test(tt_llm, precision_names_and_groups)
{
        struct tt_precision p;
        const struct llm_model *l8 = llm_model_find("llama3.1-8b");
        cr_assert(tt_precision_get("performance", l8, &p));
        cr_assert_eq(p.w[TT_W_QKV], TL_BFP8_B);
        cr_assert_eq(p.w[TT_W_KV], TL_BFP8_B);
        cr_assert_eq(p.w[TT_W_FF13], TL_BFP4_B);
        cr_assert_eq(p.w[TT_W_FF2], TL_BFP4_B);
        cr_assert_eq(p.fid[TT_F_FF13], 1);
        cr_assert_eq(p.fid[TT_F_QKV_DEC], 2);
        cr_assert_eq(p.fid[TT_F_SDPA_PRE], 4);
        cr_assert(p.last_mlp_bfp8);
        cr_assert(tt_precision_get("performance", llm_model_find("llama3.2-1b"), &p));
        cr_assert(!p.last_mlp_bfp8);
        cr_assert(tt_precision_get("performance", llm_model_find("qwen2.5-7b"), &p));
        cr_assert_eq(p.w[TT_W_QKV], TL_BF16);
        cr_assert_eq(p.w[TT_W_KV], TL_BF16);
        cr_assert_eq(p.w[TT_W_FF13], TL_BFP8_B);
        cr_assert_eq(p.fid[TT_F_O_DEC], 4);
        cr_assert(tt_precision_get("accuracy", llm_model_find("llama3.1-70b"), &p));
        cr_assert_eq(p.w[TT_W_FF13], TL_BFP4_B);
        cr_assert(tt_precision_get("accuracy", l8, &p));
        cr_assert_eq(p.w[TT_W_FF13], TL_BFP8_B);
        cr_assert_eq(p.w[TT_W_QKV], TL_BFP8_B);
        cr_assert(tt_precision_get("ff13_bfp4", l8, &p));
        cr_assert_eq(p.w[TT_W_FF13], TL_BFP4_B);
        cr_assert_eq(p.w[TT_W_FF2], TL_BFP8_B);
        cr_assert(tt_precision_get("bf16", l8, &p));
        for (int i = 0; i < TT_W_COUNT; i++)
                cr_assert_eq(p.w[i], TL_BF16);
        cr_assert(!tt_precision_get("fast", l8, &p));
        cr_assert(!tt_precision_get("", l8, &p));
}

Test(tt_llm, dram_need)
{
        const struct llm_model *m = llm_model_find("llama3.1-8b");
        struct tt_precision p;
        struct tt_mem mem;
        uint64_t n150 = UINT64_C(12) << 30;
        cr_assert(tt_precision_get("bf16", m, &p));
        tt_mem_need(m, &p, 1, 328, 128, n150, &mem);
        /* bf16: 32 x 218,112,000 weights, a 525,336,576-weight embedding and
         * LM head, 2 bytes each */
        cr_assert_eq(mem.weights, UINT64_C(2) * (32 * UINT64_C(218112000) + 2 * UINT64_C(525336576)));
        cr_assert_gt(mem.total, n150);
        cr_assert(tt_precision_get("performance", m, &p));
        tt_mem_need(m, &p, 1, 328, 128, n150, &mem);
        cr_assert_lt(mem.total, n150);
        /* K and V: 2 x 32 layers x 8 heads x 328 positions x 136 bytes (bfp8 row of 128) */
        cr_assert_eq(mem.kv, UINT64_C(2) * 32 * 8 * 328 * 136);
        /* A tied bf16 head is the embedding itself. */
        const struct llm_model *t = llm_model_find("llama3.2-1b");
        struct tt_mem a, b;
        cr_assert(tt_precision_get("bf16", t, &p));
        tt_mem_need(t, &p, 1, 1, 32, n150, &a);
        cr_assert(tt_precision_get("bf16", m, &p));
        struct llm_model untied = *t;
        untied.tied = false;
        tt_mem_need(&untied, &p, 1, 1, 32, n150, &b);
        cr_assert_eq(b.weights - a.weights, UINT64_C(2) * 2048 * 128256);
}

/* Tensor parallelism: a chip's share of the heads, FF columns and
 * vocabulary (KV heads replicated when fewer than chips), its bf16
 * weights 1/tp of the model's to within the replicated norms, and the
 * program sequence gains two all-gathers and two reduce-scatters a layer
 * (the head one all-gather), none on one chip. */
Test(tt_llm, tensor_parallel)
{
        const struct llm_model *m = llm_model_find("llama3.1-70b");
        struct llm_model s;
        char why[200];
        cr_assert(tt_shard_model(m, 8, &s, why, sizeof why));
        cr_assert_eq(s.q_heads, 8);
        cr_assert_eq(s.kv_heads, 1);
        cr_assert_eq(s.ffn, 28672 / 8);
        cr_assert_eq(s.vocab, (128256 + 7) / 8);
        cr_assert_eq(s.hidden, 8192);
        cr_assert(tt_shard_model(m, 32, &s, why, sizeof why));
        cr_assert_eq(s.q_heads, 2);
        cr_assert_eq(s.kv_heads, 1);   /* 8 KV heads over 32 chips: one a chip */
        cr_assert(!tt_shard_model(llm_model_find("qwen2.5-7b"), 8, &s, why, sizeof why));
        cr_assert_str_eq(why, "qwen2.5-7b's 28 query heads, 4 KV heads and hidden size 3584 do "
                              "not split over 8 chips");
        const struct llm_model *l8 = llm_model_find("llama3.1-8b");
        struct tt_precision p;
        struct tt_mem one, two;
        cr_assert(tt_precision_get("bf16", l8, &p));
        tt_mem_need(l8, &p, 1, 1, 32, 0, &one);
        cr_assert(tt_shard_model(l8, 2, &s, why, sizeof why));
        tt_mem_need(&s, &p, 1, 1, 32, 0, &two);
        /* everything halves but each layer's two bf16 norms (2 x 4096 x 2 bytes) */
        cr_assert_eq(2 * two.weights - one.weights, 32 * UINT64_C(2) * 4096 * 2);
        struct tt_prog pr[TT_MAX_PROGS];
        struct tt_tp none = { .tp = 1, .algo = "line" }, tp2 = { .tp = 2, .algo = "line" };
        int n1 = tt_layer_progs(l8, &p, &none, false, 1, 128, TL_BF16, TL_BF16, pr);
        int n2 = tt_layer_progs(&s, &p, &tp2, false, 1, 128, TL_BF16, TL_BF16, pr);
        cr_assert_eq(n2, n1 + 4);
        int ag = 0, rs = 0;
        for (int i = 0; i < n2; i++) {
                ag += pr[i].kernel == TT_K_ALL_GATHER;
                rs += pr[i].kernel == TT_K_REDUCE_SCATTER;
        }
        cr_assert_eq(ag, 2);
        cr_assert_eq(rs, 2);
        /* the all-gather's input: 32 rows x 2048 bf16 columns a chip */
        cr_assert_str_eq(pr[0].sets[0], "bytes=131072");
        cr_assert_eq(tt_head_progs(&s, &p, &tp2, 1, pr), tt_head_progs(l8, &p, &none, 1, pr) + 1);
}

/* The Galaxy's 2D split (tt-transformers' TG): 32 chips as 4 rows of 8,
 * heads and FF columns over the 8 of a row (axis 0), the hidden size over
 * the 4 of a column (axis 1); every weight matrix 1/32 a chip. The
 * all-reduces after WO and FF2 run along axis 0 (8 chips, a mesh row),
 * the others along axis 1 (4 chips, a column); a model whose KV heads do
 * not divide over a row, or a machine not of 32 chips, keeps the 1D split. */
Test(tt_llm, galaxy_2d_split)
{
        const struct llm_model *l70 = llm_model_find("llama3.1-70b");
        struct llm_model s;
        struct tt_tp tp = { .tp = 0, .algo = "line" };
        cr_assert(tt_shard_model_2d(l70, 32, 8, &s, &tp));
        cr_assert_eq(tp.tp, 32);
        cr_assert_eq(tp.a0, 8);
        cr_assert_eq(tp.a1, 4);
        cr_assert_eq(s.q_heads, 8);
        cr_assert_eq(s.kv_heads, 1);
        cr_assert_eq(s.hidden, 2048);
        cr_assert_eq(s.ffn, 3584);
        struct tt_precision p;
        struct tt_mem one, chip;
        cr_assert(tt_precision_get("bf16", l70, &p));
        tt_mem_need(l70, &p, 1, 1, 32, 0, &one);
        tt_mem_need(&s, &p, 1, 1, 32, 0, &chip);
        /* the decoder's matrices split 32 ways exactly (norms: hidden / 4) */
        uint64_t norms = 80 * UINT64_C(2) * 8192 * 2;
        cr_assert_eq((one.weights - norms - 2 * UINT64_C(2) * 8192 * 128256) / 32,
                     chip.weights - norms / 4 - 2 * UINT64_C(2) * 2048 * 16032);
        struct tt_prog pr[TT_MAX_PROGS];
        int n = tt_layer_progs(&s, &p, &tp, false, 32, 128, TL_BF16, TL_BF16, pr);
        cr_assert(n <= TT_MAX_PROGS);
        int along[2] = { 0, 0 };
        for (int i = 0; i < n; i++) {
                if (pr[i].kernel < TT_K_ALL_GATHER)
                        continue;
                cr_assert(pr[i].group == 8 || pr[i].group == 4, "%lld", (long long)pr[i].group);
                cr_assert_eq(pr[i].group_cols, pr[i].group == 8 ? 8 : 1);
                along[pr[i].group == 8 ? 0 : 1]++;
        }
        /* (a 70B decode runs as the llama3_70b_galaxy demo, below) axis 0:
         * WO's and FF2's all-reduces (all_reduce_async, one program each);
         * axis 1: two norms' statistics, QKV's reduce-scatter with the
         * heads, the users gathered, FF1's and FF3's reduce-scatters, the
         * product gathered */
        cr_assert_eq(along[0], 2);
        cr_assert_eq(along[1], 7);
        /* SDPA on 32 / 4 users, one KV head */
        for (int i = 0; i < n; i++)
                if (strcmp(pr[i].label, "sdpa") == 0)
                        cr_assert_str_eq(pr[i].sets[1], "batch=8");
        cr_assert(n <= TT_MAX_PROGS && tt_head_progs(&s, &p, &tp, 32, pr) == 3);
        cr_assert(!tt_shard_model_2d(llm_model_find("qwen2.5-7b"), 32, 8, &s, &tp));
        cr_assert(!tt_shard_model_2d(l70, 8, 4, &s, &tp));
        cr_assert(!tt_shard_model_2d(l70, 32, 32, &s, &tp));
}

/* A 70B model's decode on the whole Galaxy runs as tt-metal's
 * llama3_70b_galaxy demo (docs/adr/0046): the 16 ops a layer of its
 * decoder_perf_targets_6u.json, each one program (the fused parts pay no
 * per-program cost); its prefill, and a model of another hidden size,
 * keep tt-transformers' 2D programs. */
Test(tt_llm, galaxy_demo_decode)
{
        static const char *const ops[] = { "rms_allgather", "qkv", "rs_create_heads", "rotary",
                                           "kv_cache", "sdpa", "all_gather_concat", "wo",
                                           "all_reduce", "rms_allgather", "ff1_ff3_rs",
                                           "reduce_scatter", "silu_mul", "all_gather", "ff2",
                                           "all_reduce" };
        struct llm_model s;
        struct tt_tp tp = { .tp = 0, .algo = "line" };
        struct tt_precision p;
        struct tt_prog pr[TT_MAX_PROGS];
        cr_assert(tt_shard_model_2d(llm_model_find("llama3.3-70b"), 32, 8, &s, &tp));
        cr_assert(tt_precision_get("performance", &s, &p));
        int n = tt_layer_progs(&s, &p, &tp, false, 32, 128, TL_BFP4_B, TL_BFP8_B, pr), k = 0;
        cr_assert(n <= TT_MAX_PROGS);
        for (int i = 0; i < n; i++) {
                if (pr[i].fused) {      /* a part of the op before it, under its label */
                        cr_assert(i > 0 && strcmp(pr[i].label, pr[i - 1].label) == 0);
                        continue;
                }
                cr_assert(k < 16);
                cr_assert_str_eq(pr[i].label, ops[k], "op %d: %s", k, pr[i].label);
                k++;
        }
        cr_assert_eq(k, 16);
        /* its matmuls compute from the prefetcher's L1 buffer (docs/adr/0049),
         * W2 in bfp8 whatever the precision says; its collectives are the
         * demo's persistent-buffer ones */
        n = tt_layer_progs(&s, &p, &tp, false, 32, 128, TL_BFP4_B, TL_BFP4_B, pr);
        int mm = 0, cca = 0;
        for (int i = 0; i < n; i++) {
                cca += pr[i].kernel == TT_K_CCL_ASYNC;
                cr_assert(pr[i].kernel != TT_K_ALL_GATHER && pr[i].kernel != TT_K_REDUCE_SCATTER);
                if (!pr[i].prefetched)
                        continue;
                mm++;
                cr_assert_str_eq(pr[i].sets[0], "op=mm_ring");
                cr_assert(pr[i].weight_bytes > 0);
                if (strcmp(pr[i].label, "ff2") == 0)
                        cr_assert_str_eq(pr[i].sets[4], "wdtype=bfp8_b");
        }
        cr_assert_eq(mm, 5);
        cr_assert_eq(cca, 9);
        /* the prefill: tt-transformers' 2D programs, none fused */
        n = tt_layer_progs(&s, &p, &tp, true, 1, 128, TL_BFP4_B, TL_BFP8_B, pr);
        for (int i = 0; i < n; i++)
                cr_assert(!pr[i].fused && strcmp(pr[i].label, "rms_allgather") != 0);
        /* an 8B model (hidden 4096) decodes with tt-transformers' programs */
        cr_assert(tt_shard_model_2d(llm_model_find("llama3.1-8b"), 32, 8, &s, &tp));
        n = tt_layer_progs(&s, &p, &tp, false, 32, 128, TL_BFP4_B, TL_BFP8_B, pr);
        for (int i = 0; i < n; i++)
                cr_assert(!pr[i].fused && strcmp(pr[i].label, "rms_allgather") != 0);
}
