/* fuzz/fuzz_kernel.c: libFuzzer harness for the kernel language (tl/):
 * what a user kernel can do to cubesim through the tl_* entry points.
 *
 * Each input is a program: a sequence of tl_* calls whose arguments come
 * from the bytes, run in data mode as the kernel of PE 0 of
 * topologies/small.yaml (the other PEs return at once). Tensor arguments
 * are slots of a table of what the program has made so far (first the
 * launch's HBM tensors), NULL, or tensors whose scratch scope has ended;
 * shapes, starts, offsets, ranks, tags, dtypes, spaces and epilogues are
 * mostly small and valid, sometimes extremes (INT64_MAX, 2^40, -1) or
 * values none of the enums has. The run may succeed or stop with a kernel
 * error (or a deadlock, or the event budget); either way the outcome must
 * be consistent: 0 exactly when no error was reported, and a kernel error
 * names PE 0. A crash, a sanitizer report or a leak is a finding. Pointers
 * that never were tensors are not fed: nothing can check those. Build and
 * run: fuzz/README.md or scripts/fuzz.sh. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/diag.h"
#include "tl/tl_int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#ifndef CUBESIM_SOURCE_DIR
#error "build with -DCUBESIM_SOURCE_DIR='\"/path/to/the/tree\"' (scripts/fuzz.sh does)"
#endif
/* (The CMake build defines it too: tests/unit/test_fuzz_replay.c includes
 * this file to replay the corpus.) */

/* ---- the program's bytes ---- */

static const uint8_t *prog;          /* the input */
static size_t prog_len, prog_at;     /* its length, the next byte */

static uint8_t u8(void)
{
        return prog_at < prog_len ? prog[prog_at++] : 0;
}

/* An extent, start or offset: mostly 0..23, sometimes an extreme, rarely
 * any 64 bits. */
static int64_t i64(void)
{
        static const int64_t extremes[] = {
                -1, -2, INT64_MAX, INT64_MIN, INT64_MAX - 2, INT64_C(1) << 40,
                (INT64_C(1) << 40) + 1, INT64_C(1) << 24, INT64_C(1) << 32, 64, 128, 4096,
                INT64_C(1) << 62, -(INT64_C(1) << 40),
        };
        uint8_t b = u8();
        if (b < 200)
                return b % 24;
        if (b < 255)
                return extremes[(b - 200) % (sizeof extremes / sizeof extremes[0])];
        uint64_t v = 0;
        for (int i = 0; i < 8; i++)
                v = v << 8 | u8();
        return (int64_t)v;
}

/* ---- the program's state ---- */

#define N_SLOTS 32
#define N_HANDLES 4

struct fuzz_args {
        tl_tensor *hbm[4];           /* the launch's tensors */
};

static tl_tensor *slots[N_SLOTS];    /* tensors made so far, a ring */
static size_t n_made;                /* tensors ever put in the ring */
static tl_handle handles[N_HANDLES]; /* composites issued, a ring */
static size_t n_handles;             /* handles ever put in the ring */

static void keep(tl_tensor *t)
{
        slots[n_made++ % N_SLOTS] = t;
}

static tl_tensor *slot(void)
{
        uint8_t b = u8();
        size_t n = n_made < N_SLOTS ? n_made : N_SLOTS;
        if (b == 255 || n == 0)
                return NULL;
        return slots[b % n];
}

static int ndim_of(void)
{
        return u8() % 6;             /* 5: one more than TL_MAX_DIMS */
}

static void shape_of(int64_t *shape)
{
        for (int i = 0; i < TL_MAX_DIMS; i++)
                shape[i] = i64();
}

static tl_dtype dtype_of(void)
{
        uint8_t b = u8();
        return b < 240 ? (tl_dtype)(b % 3) : (tl_dtype)(int8_t)b;
}

static tl_op math_op(void)
{
        return (tl_op)(u8() % 20);   /* all of tl_op and a little past it */
}

/* ---- the kernel ---- */

static void epilogue_of(tl_epilogue *e, int n)
{
        static const tl_op ops[] = { TL_DEQUANT, TL_BIAS, TL_RELU, TL_SCALE };
        for (int i = 0; i < n; i++) {
                uint8_t b = u8();
                e[i] = (tl_epilogue){ .op = b < 250 ? ops[b % 4] : (tl_op)b, .tensor = slot(),
                                      .factor = 0.5f, .scope = (tl_cscope)(u8() % 4) };
        }
}

static void run_one(tl_ctx *tl)
{
        int64_t shape[TL_MAX_DIMS], start[TL_MAX_DIMS];
        tl_epilogue ep[3];
        switch (u8() % 24) {
        case 0: {
                uint8_t sp = u8();
                tl_space space = sp < 250 ? (tl_space)(1 + sp % 2) : (tl_space)sp;
                tl_dtype dt = dtype_of();
                int nd = ndim_of();
                shape_of(shape);
                keep(tl_alloc(tl, space, dt, nd, shape));
                break;
        }
        case 1: {
                tl_dtype dt = dtype_of();
                int nd = ndim_of();
                shape_of(shape);
                keep(tl_fill(tl, dt, nd, shape, (float)(int8_t)u8()));
                break;
        }
        case 2: keep(tl_load(tl, slot())); break;
        case 3: {
                tl_tensor *dst = slot();
                tl_store(tl, dst, slot());
                break;
        }
        case 4: {
                tl_tensor *dst = slot();
                tl_copy_to(tl, dst, slot());
                break;
        }
        case 5: {
                tl_tensor *t = slot();
                shape_of(start);
                shape_of(shape);
                keep(tl_view(tl, t, start, shape));
                break;
        }
        case 6: {
                tl_tensor *t = slot();
                int nd = ndim_of();
                shape_of(shape);
                keep(tl_reshape(tl, t, nd, shape));
                break;
        }
        case 7: {
                tl_op op = math_op();
                keep(tl__math1(tl, op, slot(), __FILE__, __LINE__));
                break;
        }
        case 8: {
                tl_op op = math_op();
                tl_tensor *a = slot();
                keep(tl__math2(tl, op, a, slot(), __FILE__, __LINE__));
                break;
        }
        case 9: keep(tl_scale(tl, slot(), 0.25f)); break;
        case 10: {
                tl_tensor *a = slot(), *b = slot();
                keep(tl_dot(tl, a, b, u8() & 1));
                break;
        }
        case 11: {
                tl_tensor *x = slot();
                keep(tl_cast(tl, x, dtype_of()));
                break;
        }
        case 12: {
                tl_tensor *x = slot();
                keep(tl_mask_causal(tl, x, i64()));
                break;
        }
        case 13: tl_scratch_scope_begin(tl); break;
        case 14: tl_scratch_scope_end(tl); break;
        case 15: {
                int rank = u8() % 10 - 1;               /* 8 PEs, and either side */
                tl_tensor *t = slot();
                tl_send(tl, rank, t, u8() % 4);
                break;
        }
        case 16: {
                int rank = u8() % 9 == 0 ? 0 : 1;       /* only PE 0 sends: 1 deadlocks */
                keep(tl_recv(tl, rank, u8() % 4));
                break;
        }
        case 17: tl_wait_tensor(tl, slot()); break;
        case 18: {
                uint8_t op = u8();
                tl_tensor *a = slot(), *b = slot(), *out = slot();
                int n = u8() % 4;
                epilogue_of(ep, n < 3 ? n : 3);
                tl_composite_desc d = {
                        .op = op < 128 ? TL_GEMM : op < 250 ? TL_NONE : (tl_op)op, .a = a, .b = b,
                        .trans_b = u8() & 1, .out = out, .epilogue = n == 3 ? NULL : ep,
                        .n_epilogue = n, .tile_m = i64(), .tile_n = i64(), .tile_k = i64() };
                handles[n_handles++ % N_HANDLES] = tl_composite(tl, u8() == 255 ? NULL : &d);
                break;
        }
        case 19: {
                tl_tensor *s = slot(), *v = slot(), *m = slot(), *l = slot(), *o = slot();
                handles[n_handles++ % N_HANDLES] = tl_softmax_merge(tl, s, v, m, l, o);
                break;
        }
        case 20: tl_set_pinned(slot(), u8() & 1); break;
        case 21: {
                tl_tensor *t = slot();
                int axis = (int8_t)u8();
                if (tl_numel(t) < 0 || tl_ndim(t) < 0 || tl_dim(t, axis) < 0)
                        abort();     /* metadata of a live tensor is never negative */
                (void)tl_dtype_of(t);
                (void)tl_space_of(t);
                break;
        }
        case 22: {
                size_t n = n_handles < N_HANDLES ? n_handles : N_HANDLES;
                uint8_t b = u8();
                tl_wait(tl, n && b != 255 ? handles[b % n] : (tl_handle){ 0 });
                break;
        }
        default: (void)tl_program_id(tl, (int8_t)u8() % 4); break;
        }
}

static void body(tl_ctx *tl, const void *argp)
{
        const struct fuzz_args *a = argp;
        if (tl_rank(tl, -1, -1, -1) != 0)
                return;
        n_made = n_handles = 0;
        for (int i = 0; i < 4; i++)
                keep(a->hbm[i]);
        for (int n = 0; prog_at < prog_len && n < 256; n++)
                run_one(tl);
        while (tl->n_scopes)     /* a program may leave scopes open: close them */
                tl_scratch_scope_end(tl);
}

static void setup(tl_setup *s, void *argp)
{
        struct fuzz_args *a = argp;
        a->hbm[0] = tl_setup_tensor(s, "x", TL_INPUT, TL_FP32, 2, (int64_t[]){ 16, 16 });
        a->hbm[1] = tl_setup_tensor(s, "w", TL_INPUT, TL_BF16, 2, (int64_t[]){ 16, 16 });
        a->hbm[2] = tl_setup_tensor(s, "y", TL_OUTPUT, TL_FP32, 2, (int64_t[]){ 16, 16 });
        a->hbm[3] = tl_setup_tensor(s, "v", TL_INPUT, TL_FP16, 1, (int64_t[]){ 8 });
}

static const struct tl_kernel fuzz_kernel = {
        .name = "fuzz", .fn = body, .args_size = sizeof(struct fuzz_args), .setup = setup,
};

/* ---- one input ---- */

static struct topo machine;          /* topologies/small.yaml, loaded once */

static void load_machine(void)
{
        struct diag d;
        diag_init(&d);
        char path[4096];
        snprintf(path, sizeof path, "%s/topologies/small.yaml", CUBESIM_SOURCE_DIR);
        if (topo_load_file(path, &machine, &d) < 0) {
                diag_print(&d, stderr);
                abort();
        }
        diag_fini(&d);
}

/* Run the program in data; its first message (if any) into first[len]. */
static void run_program(const uint8_t *data, size_t size, char *first, size_t len)
{
        static bool loaded;
        if (!loaded) {
                load_machine();
                loaded = true;
        }
        prog = data;
        prog_len = size;
        prog_at = 0;
        struct diag d;
        diag_init(&d);
        struct hw_sim sim;
        if (hw_sim_init(&sim, &machine, NULL, &d) < 0)
                abort();
        struct tl_run_opts o = { .mode = TL_MODE_DATA, .seed = 1, .max_events = 100000,
                                 .max_time_ps = UINT64_C(10000000000) };
        struct tl_run run;
        int rc = tl_run_kernel(&sim, &fuzz_kernel, &o, &run, &d);
        if ((rc == 0) != (d.n_errors == 0))
                abort();     /* an outcome without its message, or the reverse */
        if (run.failed && (!d.head || !strstr(d.head->text, "fuzz_kernel.c:") ||
                           !strstr(d.head->text, ": PE sip0.cube0.pe0: ")))
                abort();     /* a kernel error names the kernel's line and the PE */
        snprintf(first, len, "%s", d.head ? d.head->text : "");
        tl_run_fini(&run);
        hw_sim_fini(&sim);
        diag_fini(&d);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        char first[512];
        run_program(data, size, first, sizeof first);
        return 0;
}
