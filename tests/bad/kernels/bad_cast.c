/* tests/bad/kernels/bad_cast.c: tl_cast to dtype -1.
// args: --topo topologies/small.yaml
// expect: tests/bad/kernels/bad_cast.c:@LINE@: error: PE sip0.cube0.pe0: cast: dtype -1: expected TL_FP32, TL_BF16, TL_FP16, TL_BFP8_B or TL_BFP4_B
// expect-count: 1
 */
#include <cubesim/tl.h>

static void body(tl_ctx *tl, const void *argp)
{
        if (tl_rank(tl, -1, -1, -1) != 0)
                return;
        tl_tensor *t = tl_fill(tl, TL_FP32, 2, ((int64_t[]){ 8, 8 }), 1.0f);
        tl_cast(tl, t, (tl_dtype)-1); /* FAULT */
}

static const struct tl_kernel kernel = { .name = "bad_cast", .fn = body };
const struct tl_kernel *const cubesim_kernels[] = { &kernel, NULL };
