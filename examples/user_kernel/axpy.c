/* examples/user_kernel/axpy.c: a user kernel compiled outside cubesim.
 *
 *   cc -std=c11 -O2 -shared -fPIC -fstack-clash-protection -I include examples/user_kernel/axpy.c -o libaxpy.so
 *   build/cubesim run axpy --kernels ./libaxpy.so --mode data --set n=4096 --outputs out/
 *
 * y = alpha * x + y over a vector of n elements, split in chunks over every
 * PE. It includes only <cubesim/tl.h>; the tl_* calls resolve against the
 * cubesim binary when it loads the library. */
#include <cubesim/tl.h>

struct axpy_args {
        tl_tensor *x, *y, *out;      /* HBM vectors, [1, n] */
        int64_t n, chunk;            /* length, elements per chunk */
        float alpha;                 /* the scale */
};

static const struct tl_param axpy_params[] = {
        { "n", TL_PARAM_INT, 65536, 1, 1 << 28, NULL, "vector length" },
        { "chunk", TL_PARAM_INT, 4096, 1, 1 << 20, NULL, "elements per chunk" },
        { "alpha", TL_PARAM_FLOAT, 2.0, -1e30, 1e30, NULL, "the scale of x" },
        { NULL, 0, 0, 0, 0, NULL, NULL },
};

static void axpy_setup(tl_setup *s, void *argp)
{
        struct axpy_args *a = argp;
        a->n = tl_setup_dim(s, "n", "x", 1);
        a->chunk = tl_setup_int(s, "chunk");
        a->alpha = (float)tl_setup_float(s, "alpha");
        int64_t shape[2] = { 1, a->n };
        a->x = tl_setup_tensor(s, "x", TL_INPUT, TL_FP32, 2, shape);
        a->y = tl_setup_tensor(s, "y", TL_INPUT, TL_FP32, 2, shape);
        a->out = tl_setup_tensor(s, "out", TL_OUTPUT, TL_FP32, 2, shape);
        /* Chunks go round every PE of every cube: spread the vectors page
         * by page over every cube's HBM rather than a copy in each. */
        tl_setup_interleave(s, a->x);
        tl_setup_interleave(s, a->y);
        tl_setup_interleave(s, a->out);
}

static void axpy(tl_ctx *tl, const void *argp)
{
        const struct axpy_args *a = argp;
        int rank = tl_rank(tl, -1, -1, -1);
        int ranks = tl_num_programs(tl, 0) * tl_num_programs(tl, 1) * tl_num_programs(tl, 2);
        for (int64_t c0 = (int64_t)rank * a->chunk; c0 < a->n; c0 += (int64_t)ranks * a->chunk) {
                int64_t len = a->n - c0 < a->chunk ? a->n - c0 : a->chunk;
                int64_t start[2] = { 0, c0 }, shape[2] = { 1, len };
                tl_scratch_scope_begin(tl);
                tl_tensor *x = tl_load(tl, tl_view(tl, a->x, start, shape));
                tl_tensor *y = tl_load(tl, tl_view(tl, a->y, start, shape));
                tl_store(tl, tl_view(tl, a->out, start, shape), tl_add(tl, tl_scale(tl, x, a->alpha), y));
                tl_scratch_scope_end(tl);
        }
}

static TL_KERNEL(axpy, axpy,
                 "out = alpha * x + y (an example user kernel)",
                 "inputs x.npy, y.npy [1, n]; output out.npy [1, n]");

TL_API const struct tl_kernel *const cubesim_kernels[] = { &tl_kernel_axpy, NULL };
