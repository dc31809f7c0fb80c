/* tests/cb/cb_pipe.c: y = 2 x + 1 through tt-metal's three kernels on
 * every PE, one row block of x at a time: a reader thread loads blocks
 * into circular buffer "in" (pages), the kernel itself computes each into
 * "out", a writer thread stores them. For tests/cb_threads.sh: the order
 * and timing of back-pressure (pages 1 or 2), the NoCs, data mode. With
 * threads 0 the same work runs on the kernel alone, in order. */
#include <cubesim/tl.h>

struct args {
        tl_tensor *x, *y;            /* HBM [rows, cols] */
        int64_t rows, cols, block;   /* shape; rows per block */
        int pages;                   /* pages of each buffer */
        int threads;                 /* 1: reader and writer threads; 0: none */
        tl_cb *in, *out;             /* per PE, set by the kernel (args are per PE) */
};

static const struct tl_param params[] = {
        { "rows", TL_PARAM_INT, 256, 1, 1 << 20, NULL, "rows of x and y" },
        { "cols", TL_PARAM_INT, 256, 1, 1 << 20, NULL, "columns" },
        { "block", TL_PARAM_INT, 32, 1, 1 << 20, NULL, "rows per block (divides rows)" },
        { "pages", TL_PARAM_INT, 2, 1, 16, NULL, "pages per circular buffer" },
        { "threads", TL_PARAM_INT, 1, 0, 1, NULL, "1: reader and writer threads" },
        { NULL, 0, 0, 0, 0, NULL, NULL },
};

static void setup(tl_setup *s, void *argp)
{
        struct args *a = argp;
        a->rows = tl_setup_int(s, "rows");
        a->cols = tl_setup_int(s, "cols");
        a->block = tl_setup_int(s, "block");
        a->pages = (int)tl_setup_int(s, "pages");
        a->threads = (int)tl_setup_int(s, "threads");
        if (a->rows % a->block)
                tl_setup_error(s, "block must divide rows");
        int64_t shape[2] = { a->rows, a->cols };
        a->x = tl_setup_tensor(s, "x", TL_INPUT, TL_FP32, 2, shape);
        a->y = tl_setup_tensor(s, "y", TL_OUTPUT, TL_FP32, 2, shape);
}

struct pe_args {
        const struct args *a;        /* the launch's */
        tl_cb *in, *out;             /* this PE's buffers */
        int64_t r0, n;               /* its rows */
};

static tl_tensor *rows_of(tl_ctx *tl, tl_tensor *t, int64_t r, int64_t n, int64_t cols)
{
        return tl_view(tl, t, ((int64_t[]){ r, 0 }), ((int64_t[]){ n, cols }));
}

static void reader(tl_ctx *tl, void *argp)
{
        const struct pe_args *p = argp;
        for (int64_t r = 0; r < p->n; r += p->a->block) {
                tl_tensor *page = tl_cb_reserve_back(tl, p->in);
                tl_copy_to(tl, page, rows_of(tl, p->a->x, p->r0 + r, p->a->block, p->a->cols));
                tl_cb_push_back(tl, p->in);
        }
}

static void writer(tl_ctx *tl, void *argp)
{
        const struct pe_args *p = argp;
        for (int64_t r = 0; r < p->n; r += p->a->block) {
                tl_tensor *page = tl_cb_wait_front(tl, p->out);
                tl_store(tl, rows_of(tl, p->a->y, p->r0 + r, p->a->block, p->a->cols), page);
                tl_cb_pop_front(tl, p->out);
        }
}

static void compute(tl_ctx *tl, const struct pe_args *p)
{
        for (int64_t r = 0; r < p->n; r += p->a->block) {
                tl_tensor *in = tl_cb_wait_front(tl, p->in);
                tl_tensor *out = tl_cb_reserve_back(tl, p->out);
                tl_scratch_scope_begin(tl);
                tl_copy_to(tl, out, tl_add_scalar(tl, tl_mul_scalar(tl, in, 2.0f), 1.0f));
                tl_scratch_scope_end(tl);
                tl_cb_push_back(tl, p->out);
                tl_cb_pop_front(tl, p->in);
        }
}

static void body(tl_ctx *tl, const void *argp)
{
        const struct args *a = argp;
        int pe = tl_program_id(tl, 0), n_pe = tl_num_programs(tl, 0);
        if (tl_program_id(tl, 1) || tl_program_id(tl, 2))
                return;
        int64_t blocks = a->rows / a->block, per = (blocks + n_pe - 1) / n_pe;
        int64_t b0 = pe * per, b1 = b0 + per < blocks ? b0 + per : blocks;
        if (b0 >= b1)
                return;
        int64_t page[2] = { a->block, a->cols };
        struct pe_args p = { .a = a, .r0 = b0 * a->block, .n = (b1 - b0) * a->block };
        p.in = tl_cb_make(tl, "in", TL_FP32, 2, page, a->pages);
        p.out = tl_cb_make(tl, "out", TL_FP32, 2, page, a->pages);
        if (!a->threads) {
                /* One block at a time on the kernel alone. */
                for (int64_t r = 0; r < p.n; r += a->block) {
                        struct pe_args one = p;
                        one.r0 = p.r0 + r;
                        one.n = a->block;
                        reader(tl, &one);
                        compute(tl, &one);
                        writer(tl, &one);
                }
                return;
        }
        tl_thread_start(tl, reader, &p, sizeof p);
        tl_thread_start(tl, writer, &p, sizeof p);
        compute(tl, &p);
}

static const struct tl_kernel kernel = {
        .name = "cb_pipe", .fn = body, .params = params, .args_size = sizeof(struct args),
        .setup = setup, .summary = "y = 2 x + 1 through reader, compute and writer threads",
};
const struct tl_kernel *const cubesim_kernels[] = { &kernel, NULL };
