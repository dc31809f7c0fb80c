/* kernels/softmax.c: row softmax of X [rows, cols], rows dealt in blocks
 * to every PE. Per block: load, row max, subtract, exp, row sum, divide,
 * store; each block is a scratch scope. Input x.npy, output y.npy. */
#include <cubesim/tl.h>

struct softmax_args {
        tl_tensor *x, *y;            /* HBM input and output */
        int64_t rows, cols, block;   /* shape and rows per block */
};

static const char *const dtypes[] = { "fp32", "bf16", "fp16", NULL };

static const struct tl_param softmax_params[] = {
        { "rows", TL_PARAM_INT, 256, 1, 1 << 24, NULL, "rows of X" },
        { "cols", TL_PARAM_INT, 256, 1, 1 << 20, NULL, "columns of X (softmax axis)" },
        { "block", TL_PARAM_INT, 16, 1, 4096, NULL, "rows per block" },
        { "dtype", TL_PARAM_CHOICE, 0, 0, 0, dtypes, "element type of X and Y" },
        { NULL, 0, 0, 0, 0, NULL, NULL },
};

static void softmax_declare(tl_setup *s, void *argp)
{
        struct softmax_args *a = argp;
        a->rows = tl_setup_dim(s, "rows", "x", 0);
        a->cols = tl_setup_dim(s, "cols", "x", 1);
        a->block = tl_setup_int(s, "block");
        tl_dtype dt = (tl_dtype)tl_setup_choice(s, "dtype");
        a->x = tl_setup_tensor(s, "x", TL_INPUT, dt, 2, (int64_t[]){ a->rows, a->cols });
        a->y = tl_setup_tensor(s, "y", TL_OUTPUT, dt, 2, (int64_t[]){ a->rows, a->cols });
}

static void softmax(tl_ctx *tl, const void *argp)
{
        const struct softmax_args *a = argp;
        int rank = tl_rank(tl, -1, -1, -1);
        int n_ranks = tl_num_programs(tl, 0) * tl_num_programs(tl, 1) * tl_num_programs(tl, 2);
        int64_t blocks = (a->rows + a->block - 1) / a->block;
        for (int64_t b = rank; b < blocks; b += n_ranks) {
                int64_t r0 = b * a->block;
                int64_t n = a->rows - r0 < a->block ? a->rows - r0 : a->block;
                int64_t start[2] = { r0, 0 }, shape[2] = { n, a->cols };
                tl_scratch_scope_begin(tl);
                tl_tensor *x = tl_load(tl, tl_view(tl, a->x, start, shape));
                tl_tensor *e = tl_exp(tl, tl_sub(tl, x, tl_rowmax(tl, x)));
                tl_tensor *y = tl_div(tl, e, tl_rowsum(tl, e));
                tl_store(tl, tl_view(tl, a->y, start, shape), y);
                tl_scratch_scope_end(tl);
        }
}

/* Scratch of a block of n rows (softmax()): x, its row max, x - max,
 * exp, its row sum, the quotient. */
static uint64_t block_bytes(int64_t n, int64_t cols, tl_dtype dt)
{
        return tl_dtype_bytes(dt, n * cols, cols) + 3 * tl_dtype_bytes(TL_FP32, n * cols, cols) +
               2 * tl_dtype_bytes(TL_FP32, n, 1);
}

/* Reject a block the PEs' scratch cannot hold (a run would stop at its
 * first block), naming the largest block that fits. */
static void check_scratch(tl_setup *s, const struct softmax_args *a, tl_dtype dt)
{
        int64_t ceiling = tl_setup_machine(s).scratch_bytes;
        int64_t n = a->block < a->rows ? a->block : a->rows;
        uint64_t need = block_bytes(n, a->cols, dt);
        if (need <= (uint64_t)ceiling)
                return;
        int64_t fit = n;
        while (fit > 0 && block_bytes(fit, a->cols, dt) > (uint64_t)ceiling)
                fit--;
        if (fit > 0)
                tl_setup_error(s, "block (%lld) x cols (%lld): a block needs %llu bytes of "
                               "scratch, more than the %lld ceiling; block at most %lld fits",
                               (long long)a->block, (long long)a->cols, (unsigned long long)need,
                               (long long)ceiling, (long long)fit);
        else
                tl_setup_error(s, "cols (%lld): one row needs %llu bytes of scratch, more than "
                               "the %lld ceiling", (long long)a->cols,
                               (unsigned long long)block_bytes(1, a->cols, dt), (long long)ceiling);
}

/* softmax_declare, then the check (defined here, below the body, so that
 * the body keeps its lines in op_logs). */
static void softmax_setup(tl_setup *s, void *argp)
{
        softmax_declare(s, argp);
        check_scratch(s, argp, (tl_dtype)tl_setup_choice(s, "dtype"));
}

TL_KERNEL(softmax, softmax,
          "row softmax, row blocks spread over every PE",
          "input x.npy [rows, cols]; output y.npy [rows, cols]");
