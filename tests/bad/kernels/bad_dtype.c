/* tests/bad/kernels/bad_dtype.c: tl_alloc with a dtype that is none of tl_dtype.
// args: --topo topologies/small.yaml
// expect: tests/bad/kernels/bad_dtype.c:@LINE@: error: PE sip0.cube0.pe0: tl_alloc: dtype 77: expected TL_FP32, TL_BF16, TL_FP16, TL_BFP8_B or TL_BFP4_B
// expect-count: 1
 */
#include <cubesim/tl.h>

static void body(tl_ctx *tl, const void *argp)
{
        if (tl_rank(tl, -1, -1, -1) != 0)
                return;
        tl_alloc(tl, TL_TCM, (tl_dtype)77, 2, ((int64_t[]){ 8, 8 })); /* FAULT */
}

static const struct tl_kernel kernel = { .name = "bad_dtype", .fn = body };
const struct tl_kernel *const cubesim_kernels[] = { &kernel, NULL };
