/* kernels/builtin.c: the built-in kernels, in the order `cubesim kernels`
 * lists them. The registry (src/tl/registry.c) looks names up here and in
 * the kernels loaded with --kernels. */
#include <stddef.h>

#include <cubesim/tl.h>

extern const struct tl_kernel tl_kernel_noop;
extern const struct tl_kernel tl_kernel_program_ids;
extern const struct tl_kernel tl_kernel_gemm;
extern const struct tl_kernel tl_kernel_softmax;
extern const struct tl_kernel tl_kernel_gemm_epilogue;
extern const struct tl_kernel tl_kernel_gemm_epilogue_prims;
extern const struct tl_kernel tl_kernel_gqa_decode;
extern const struct tl_kernel tl_kernel_gqa_decode_short;
extern const struct tl_kernel tl_kernel_gqa_decode_opt3;
extern const struct tl_kernel tl_kernel_gqa_decode_opt2;
extern const struct tl_kernel tl_kernel_gqa_prefill;
extern const struct tl_kernel tl_kernel_gqa_prefill_short;
extern const struct tl_kernel tl_kernel_llm_layer;
extern const struct tl_kernel tl_kernel_llm_lm_head;
extern const struct tl_kernel tl_kernel_tt_matmul;
extern const struct tl_kernel tl_kernel_tt_dm;
extern const struct tl_kernel tl_kernel_tt_llm_op;
extern const struct tl_kernel tl_kernel_all_gather;
extern const struct tl_kernel tl_kernel_reduce_scatter;
extern const struct tl_kernel tl_kernel_all_reduce;
extern const struct tl_kernel tl_kernel_ccl_async;
extern const struct tl_kernel *const tl_builtin_kernels[];

const struct tl_kernel *const tl_builtin_kernels[] = {
        &tl_kernel_noop,
        &tl_kernel_program_ids,
        &tl_kernel_gemm,
        &tl_kernel_softmax,
        &tl_kernel_gemm_epilogue,
        &tl_kernel_gemm_epilogue_prims,
        &tl_kernel_gqa_decode,
        &tl_kernel_gqa_decode_short,
        &tl_kernel_gqa_decode_opt3,
        &tl_kernel_gqa_decode_opt2,
        &tl_kernel_gqa_prefill,
        &tl_kernel_gqa_prefill_short,
        &tl_kernel_llm_layer,
        &tl_kernel_llm_lm_head,
        &tl_kernel_tt_matmul,
        &tl_kernel_tt_dm,
        &tl_kernel_tt_llm_op,
        &tl_kernel_all_gather,
        &tl_kernel_reduce_scatter,
        &tl_kernel_all_reduce,
        &tl_kernel_ccl_async,
        NULL,
};
