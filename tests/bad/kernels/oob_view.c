/* tests/bad/kernels/oob_view.c: one PE views past the end of an HBM tensor.
 * The run stops at that call: exit 1, the kernel's file:line, the PE, the op.
// args: --topo topologies/small.yaml
// expect: tests/bad/kernels/oob_view.c:@LINE@: error: PE sip0.cube0.pe3: tl_view: out of bounds: axis 0, [32, 96) of extent 64 of x
// expect-count: 1
 */
#include <cubesim/tl.h>

struct args {
        tl_tensor *x;                /* HBM input [64, 64] */
};

static void setup(tl_setup *s, void *argp)
{
        struct args *a = argp;
        int64_t shape[2] = { 64, 64 };
        a->x = tl_setup_tensor(s, "x", TL_INPUT, TL_FP32, 2, shape);
}

static void body(tl_ctx *tl, const void *argp)
{
        const struct args *a = argp;
        int64_t start[2] = { 32, 0 }, shape[2] = { 64, 64 };
        if (tl_rank(tl, -1, -1, -1) == 3)
                tl_load(tl, tl_view(tl, a->x, start, shape)); /* FAULT */
}

static const struct tl_kernel kernel = {
        .name = "oob_view", .fn = body, .args_size = sizeof(struct args), .setup = setup,
};
const struct tl_kernel *const cubesim_kernels[] = { &kernel, NULL };
