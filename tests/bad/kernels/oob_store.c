/* tests/bad/kernels/oob_store.c: a store whose source does not fit its
 * destination (a tile one row too tall), in data mode.
// args: --topo topologies/small.yaml --mode data
// expect: tests/bad/kernels/oob_store.c:@LINE@: error: PE sip0.cube0.pe0: tl_store: shape mismatch: destination [8, 64], source [9, 64]
 */
#include <cubesim/tl.h>

struct args {
        tl_tensor *y;                /* HBM output [64, 64] */
};

static void setup(tl_setup *s, void *argp)
{
        struct args *a = argp;
        int64_t shape[2] = { 64, 64 };
        a->y = tl_setup_tensor(s, "y", TL_OUTPUT, TL_FP32, 2, shape);
}

static void body(tl_ctx *tl, const void *argp)
{
        const struct args *a = argp;
        int64_t start[2] = { 8 * tl_rank(tl, -1, -1, -1), 0 }, shape[2] = { 8, 64 };
        int64_t tall[2] = { 9, 64 };
        tl_tensor *t = tl_fill(tl, TL_FP32, 2, tall, 1.0f);
        tl_store(tl, tl_view(tl, a->y, start, shape), t); /* FAULT */
}

static const struct tl_kernel kernel = {
        .name = "oob_store", .fn = body, .args_size = sizeof(struct args), .setup = setup,
};
const struct tl_kernel *const cubesim_kernels[] = { &kernel, NULL };
