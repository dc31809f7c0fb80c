/* tests/bad/kernels/null_set_pinned.c: tl_set_pinned on NULL: the call has no context argument; the
 * error still names the kernel's line and the PE.
// args: --topo topologies/small.yaml
// expect: tests/bad/kernels/null_set_pinned.c:@LINE@: error: PE sip0.cube0.pe0: tl_set_pinned: the tensor is NULL
// expect-count: 1
 */
#include <cubesim/tl.h>

static void body(tl_ctx *tl, const void *argp)
{
        if (tl_rank(tl, -1, -1, -1) != 0)
                return;
        tl_set_pinned(NULL, true); /* FAULT */
}

static const struct tl_kernel kernel = { .name = "null_set_pinned", .fn = body };
const struct tl_kernel *const cubesim_kernels[] = { &kernel, NULL };
