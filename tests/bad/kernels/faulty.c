/* tests/bad/kernels/faulty.c: a kernel with a fault chosen by a parameter,
 * for the sweep that must go on past its faulty points (kernel_faults.sh
 * sweeps fault over none, view, deadlock, crash); as a case of its own,
 * the default fault.
// args: --topo topologies/small.yaml
// expect: tests/bad/kernels/faulty.c:@LINE@: error: PE sip0.cube0.pe0: tl_view: out of bounds: axis 1, [8, 16) of extent 8 of x
 */
#include <stddef.h>

#include <cubesim/tl.h>

struct args {
        tl_tensor *x;                /* HBM input [8, 8] */
        int fault;                   /* index into faults */
};

static const char *const faults[] = { "view", "none", "deadlock", "crash", NULL };

static const struct tl_param params[] = {
        { "fault", TL_PARAM_CHOICE, 0, 0, 0, faults, "which fault" },
        { NULL, 0, 0, 0, 0, NULL, NULL },
};

static void setup(tl_setup *s, void *argp)
{
        struct args *a = argp;
        int64_t shape[2] = { 8, 8 };
        a->x = tl_setup_tensor(s, "x", TL_INPUT, TL_FP32, 2, shape);
        a->fault = tl_setup_choice(s, "fault");
}

static void body(tl_ctx *tl, const void *argp)
{
        const struct args *a = argp;
        int64_t start[2] = { 0, 8 }, shape[2] = { 8, 8 };
        switch (a->fault) {
        case 0:
                tl_load(tl, tl_view(tl, a->x, start, shape)); /* FAULT */
                break;
        case 1:
                tl_wait_tensor(tl, tl_load(tl, a->x));
                break;
        case 2:
                tl_recv(tl, tl_rank(tl, -1, -1, -1), 1);
                break;
        case 3:
                *(volatile int *)(uintptr_t)tl_numel(a->x) = 1;   /* a wild write: address 64 */
                break;
        }
}

static const struct tl_kernel kernel = {
        .name = "faulty", .fn = body, .params = params, .args_size = sizeof(struct args),
        .setup = setup,
};
const struct tl_kernel *const cubesim_kernels[] = { &kernel, NULL };
