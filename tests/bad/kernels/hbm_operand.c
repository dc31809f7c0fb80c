/* tests/bad/kernels/hbm_operand.c: a math op on an HBM tensor that was
 * never loaded.
// args: --topo topologies/small.yaml
// expect: tests/bad/kernels/hbm_operand.c:@LINE@: error: PE sip0.cube0.pe0: 
// expect: is in HBM; tl_load it first
 */
#include <cubesim/tl.h>

struct args {
        tl_tensor *x;                /* HBM input [8, 8] */
};

static void setup(tl_setup *s, void *argp)
{
        struct args *a = argp;
        int64_t shape[2] = { 8, 8 };
        a->x = tl_setup_tensor(s, "x", TL_INPUT, TL_FP32, 2, shape);
}

static void body(tl_ctx *tl, const void *argp)
{
        const struct args *a = argp;
        tl_exp(tl, a->x); /* FAULT */
}

static const struct tl_kernel kernel = {
        .name = "hbm_operand", .fn = body, .args_size = sizeof(struct args), .setup = setup,
};
const struct tl_kernel *const cubesim_kernels[] = { &kernel, NULL };
