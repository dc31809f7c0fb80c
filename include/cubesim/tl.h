/* cubesim/tl.h: the kernel language.
 *
 * A kernel is a C function `void k(tl_ctx *tl, const void *args)` that
 * cubesim runs on every PE_CPU of a launch, each as its own coroutine. The
 * kernel sees only this header. Simulated time is what the machine would
 * take, not what the host takes.
 *
 * Time. Every tl_* call first costs PE_CPU issue time: the topology's
 * per-op-type table (`pe.cpu.issue_cost_ns`: composite 40 ns, each
 * primitive 5 ns by default; a type missing from the table costs
 * dispatch_cycles at the CPU clock). Work then goes to an engine (PE_DMA,
 * PE_GEMM, PE_MATH) and the call returns at once with a tensor whose data
 * is a *future*: the first op that consumes it waits for it (the lazy
 * load of tl_load generalised to every engine op). So a kernel that issues
 * the next tile's load before this tile's compute overlaps them.
 *
 * Tensors. A tensor lives in HBM (the kernel's inputs and outputs, made
 * by the host before launch), in TCM (persistent PE-local SRAM, tl_alloc)
 * or in scratch (a per-PE arena inside TCM with a ceiling, 1 MiB by
 * default: every op result is allocated there). Scratch is released in
 * scopes: tl_scratch_scope_end frees everything allocated since the
 * matching begin, so a loop whose body is a scope never grows; running
 * state that must survive the scope is written to TCM or HBM with
 * tl_copy_to. Exceeding the ceiling is a kernel error. Tensors have up to
 * 4 dimensions, a dtype (fp32, bf16, fp16, or the block floats bfp8_b and
 * bfp4_b; compute is fp32, results are fp32 unless converted with tl_cast,
 * and stores round to the destination's dtype) and strides; views
 * (tl_view, tl_reshape) share their parent's storage.
 *
 * Block floats. bfp8_b and bfp4_b store a shared 8-bit exponent per 16
 * consecutive elements of the last axis and, per element, a sign and 7
 * (bfp8_b) or 3 (bfp4_b) magnitude bits: 1088 or 576 bytes per 32x32 tile
 * (tl_dtype_bytes). Rounding to them takes a block's largest magnitude,
 * 2^e <= max < 2^(e+1), and rounds each element to a multiple of
 * 2^(e - bits + 1), half to even, at most 2^bits - 1 of them; the groups
 * of 16 restart at every row of the destination tensor. A write (store,
 * copy_to, a composite's output) into a view of a block-float tensor must
 * start each row at a multiple of 16 of the tensor's row (else a kernel
 * error); a row ending inside a block writes the whole block, the rest of
 * it zeros (docs/adr/0019).
 *
 * Aliasing. Views of one tensor may be operands of one op when they share
 * no element; else it is a kernel error where the result would depend on
 * the order of the op's steps: an op's outputs (softmax_merge's m, l, o),
 * an output and an input read with it (a GEMM's out and a or b; the
 * merge's s or v and its state; copy_to's dst and src unless the same
 * view). A composite's epilogue tensor may be its output itself (an
 * in-place residual add), no other view overlapping it.
 *
 * HBM tensors are shared by all PEs and carry no readiness: a store to HBM
 * does not make other PEs' (or this PE's) later loads of it wait. Order
 * HBM traffic between PEs with tl_send/tl_recv; a kernel's end waits for
 * its own stores.
 *
 * Elementwise binary ops broadcast like NumPy on matching trailing
 * dimensions of extent 1 (a [M, 1] row statistic against [M, N]).
 *
 * MATH ops (TL_OPS below): exp, log, sqrt, rsqrt, recip, tanh, erf, sin, cos,
 * sigmoid, relu, silu, gelu (erf form) and gelu_tanh (tanh approximation);
 * add, sub, mul, div, max, min (broadcasting); scalar add and mul; where
 * (select with a mask); sum, amax and mean along any axis, rowmax and
 * rowsum along the last. Each is named NAME in the op_log and costs the
 * topology's issue cost and cycles per element of its key
 * (pe.cpu.issue_cost_ns.KEY, pe.math.cycles_per_element.KEY): its own
 * name, except the ALIAS rows of TL_OPS.
 *
 * Ranks. A PE's rank is its global index: (sip * cubes + cube) * pes + pe.
 * Axes of tl_program_id / tl_num_programs:
 *   0  the PE's index within its cube   (0 .. PEs per cube - 1)
 *   1  the cube's index within its SIP  (0 .. cubes per SIP - 1)
 *   2  the SIP's index                  (0 .. SIPs - 1)
 *
 * Errors. Every entry point is a macro that passes __FILE__ and __LINE__.
 * A misuse (out-of-bounds view, shape mismatch, scratch ceiling exceeded,
 * bad rank, a NULL or stale tensor, a shape of more than 2^48 elements, a
 * dtype or space that is none of the enums) stops the run with exit
 * status 1 and a message naming the kernel's source line, the PE and the
 * op; the call does not return. A tensor made inside a scratch scope
 * (every op result, and tl_alloc inside a scope) dies at the scope's end:
 * using it afterwards is such an error.
 *
 * Modes. In op_log mode (the default) tensors have no data; only time is
 * modelled. In data mode every tensor has real storage and the ops compute,
 * where the machine keeps the data: each cube its own copy of a replicated
 * HBM tensor, each PE its part of a TCM-sharded one. A kernel behaves the
 * same in both, except that data mode also stops a read of data the
 * machine would not deliver (another cube's write to its copy, another
 * PE's part; docs/adr/0017). */
#ifndef CUBESIM_TL_H
#define CUBESIM_TL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* What a kernel may call: the only symbols the cubesim binary exports
 * (it is built with -fvisibility=hidden), so a kernel loaded with
 * --kernels cannot bind to the simulator's internals. */
#if defined(__GNUC__)
#define TL_API __attribute__((visibility("default")))
#else
#define TL_API
#endif

/* Naming. A kernel calls tl_<op>; most are macros that add the call site
 * (__FILE__, __LINE__) and call the exported entry point tl_impl_<op>,
 * which a kernel need not name. The double-underscore prefix is kept for
 * the simulator's own private helpers; the earlier tl__<op> spellings of
 * the entry points are aliases at the end of this header. */

#define TL_MAX_DIMS 4

typedef struct tl_ctx tl_ctx;
typedef struct tl_tensor tl_tensor;

typedef enum tl_dtype { TL_FP32, TL_BF16, TL_FP16, TL_BFP8_B, TL_BFP4_B } tl_dtype;
typedef enum tl_space { TL_HBM, TL_TCM, TL_SCRATCH } tl_space;

/* ---- the kernel's view of itself -------------------------------------- */

TL_API int tl_impl_program_id(tl_ctx *, int axis, const char *file, int line);
TL_API int tl_impl_num_programs(tl_ctx *, int axis, const char *file, int line);
TL_API int tl_impl_rank(tl_ctx *, int pe, int cube, int sip, const char *file, int line);

#define tl_program_id(tl, axis) tl_impl_program_id((tl), (axis), __FILE__, __LINE__)
#define tl_num_programs(tl, axis) tl_impl_num_programs((tl), (axis), __FILE__, __LINE__)
/* The cube's NoC: axis 0 its columns (X), axis 1 its rows (Y). PE p of a
 * cube sits at row p / columns, column p % columns. Free: no issue cost. */
TL_API int tl_impl_mesh_dim(tl_ctx *, int axis, const char *file, int line);
#define tl_mesh_dim(tl, axis) tl_impl_mesh_dim((tl), (axis), __FILE__, __LINE__)
/* The global rank of (pe, cube, sip); tl_rank(tl, -1, -1, -1) is this PE. */
#define tl_rank(tl, pe, cube, sip) tl_impl_rank((tl), (pe), (cube), (sip), __FILE__, __LINE__)

/* ---- the machine (free: no issue cost) --------------------------------- */

/* What a kernel sizes its tiles by: the machine of this run, with its
 * topology file and --set overrides applied. Rates are per engine (one
 * PE's) unless named per cube. */
typedef struct tl_machine {
        int sips;                    /* SIPs */
        int cubes_per_sip;           /* cubes per SIP */
        int cubes;                   /* cubes, all SIPs */
        int pes_per_cube;            /* PEs per cube */
        int mesh_rows, mesh_cols;    /* a cube's PE mesh; PE p sits at row p / mesh_cols */
        int64_t tcm_bytes;           /* a PE's TCM, bytes, the scratch arena included */
        int64_t scratch_bytes;       /* its scratch ceiling, bytes */
        int64_t tcm_alloc_bytes;     /* persistent TCM (tl_alloc TL_TCM) beside scratch, bytes */
        double gemm_macs_per_cycle;  /* PE_GEMM multiply-accumulates per cycle */
        double gemm_clock_hz;        /* PE_GEMM clock, hertz */
        double gemm_flops_per_s;     /* PE_GEMM peak, 2 x MACs x clock, FLOP/s */
        double math_lanes;           /* PE_MATH elements per cycle at 1 cycle/element */
        double math_clock_hz;        /* PE_MATH clock, hertz */
        int dma_channels;            /* PE_DMA transfers in flight at once */
        double dma_bytes_per_s;      /* PE_DMA bandwidth, bytes/s */
        int hbm_channels;            /* HBM channels per cube */
        double hbm_bytes_per_s;      /* HBM bandwidth per cube, bytes/s */
        double noc_link_bytes_per_s; /* a mesh link, each direction, bytes/s */
        int cpu_cores;               /* issuing cores per PE (pe.cpu.cores; tl_thread_start) */
        int nocs;                    /* NoCs a core's transfers choose from (tl_set_noc) */
} tl_machine;

TL_API tl_machine tl_machine_info(tl_ctx *);

/* ---- tensor metadata (free: no issue cost) ---------------------------- */

TL_API int tl_impl_ndim(const tl_tensor *, const char *file, int line);
TL_API int64_t tl_impl_dim(const tl_tensor *, int axis, const char *file, int line);
TL_API tl_dtype tl_impl_dtype_of(const tl_tensor *, const char *file, int line);
TL_API tl_space tl_impl_space_of(const tl_tensor *, const char *file, int line);
TL_API int64_t tl_impl_numel(const tl_tensor *, const char *file, int line);
/* Bytes of one element, rounded up to whole bytes (1 for the block floats). */
TL_API size_t tl_dtype_size(tl_dtype);
/* Bytes of n elements of dt laid out in rows of row_len: exact for the block
 * floats (mantissas plus one exponent byte per started group of 16 of each
 * row), n * tl_dtype_size otherwise. */
TL_API uint64_t tl_dtype_bytes(tl_dtype dt, int64_t n, int64_t row_len);

#define tl_ndim(t) tl_impl_ndim((t), __FILE__, __LINE__)
/* Extent of axis; a negative axis counts from the end; 0 past the last. */
#define tl_dim(t, axis) tl_impl_dim((t), (axis), __FILE__, __LINE__)
#define tl_dtype_of(t) tl_impl_dtype_of((t), __FILE__, __LINE__)
#define tl_space_of(t) tl_impl_space_of((t), __FILE__, __LINE__)
#define tl_numel(t) tl_impl_numel((t), __FILE__, __LINE__)

/* ---- views (free: metadata only, share storage) ----------------------- */

TL_API tl_tensor *tl_impl_view(tl_ctx *, tl_tensor *t, const int64_t *start, const int64_t *shape,
                           const char *file, int line);
TL_API tl_tensor *tl_impl_reshape(tl_ctx *, tl_tensor *t, int ndim, const int64_t *shape,
                              const char *file, int line);

/* The block of t starting at start[] with extents shape[] (t's ndim each;
 * either may be NULL for a 0-D t). */
#define tl_view(tl, t, start, shape) tl_impl_view((tl), (t), (start), (shape), __FILE__, __LINE__)
/* The same elements with another shape; t must be contiguous. */
#define tl_reshape(tl, t, ndim, shape) tl_impl_reshape((tl), (t), (ndim), (shape), __FILE__, __LINE__)

/* ---- memory ----------------------------------------------------------- */

TL_API tl_tensor *tl_impl_alloc(tl_ctx *, tl_space space, tl_dtype dt, int ndim, const int64_t *shape,
                            const char *file, int line);
TL_API void tl_impl_scratch_scope_begin(tl_ctx *, const char *file, int line);
TL_API void tl_impl_scratch_scope_end(tl_ctx *, const char *file, int line);

/* A new tensor in TL_TCM (persistent) or TL_SCRATCH (current scope);
 * contents undefined. */
#define tl_alloc(tl, space, dt, ndim, shape) \
        tl_impl_alloc((tl), (space), (dt), (ndim), (shape), __FILE__, __LINE__)
#define tl_scratch_scope_begin(tl) tl_impl_scratch_scope_begin((tl), __FILE__, __LINE__)
/* Waits for the scope's outstanding ops, then frees its scratch. */
#define tl_scratch_scope_end(tl) tl_impl_scratch_scope_end((tl), __FILE__, __LINE__)

/* ---- data movement (PE_DMA) ------------------------------------------- */

TL_API tl_tensor *tl_impl_load(tl_ctx *, tl_tensor *src, const char *file, int line);
TL_API void tl_impl_store(tl_ctx *, tl_tensor *dst, tl_tensor *src, const char *file, int line);
TL_API void tl_impl_copy_to(tl_ctx *, tl_tensor *dst, tl_tensor *src, const char *file, int line);
TL_API void tl_impl_send(tl_ctx *, int dst_rank, tl_tensor *t, int tag, const char *file, int line);
TL_API tl_tensor *tl_impl_recv(tl_ctx *, int src_rank, int tag, const char *file, int line);
TL_API void tl_impl_recv_into(tl_ctx *, tl_tensor *dst, int src_rank, int tag, const char *file,
                          int line);
TL_API void tl_impl_wait_tensor(tl_ctx *, tl_tensor *t, const char *file, int line);
TL_API void tl_impl_mcast(tl_ctx *, int row0, int col0, int n_rows, int n_cols, tl_tensor *t,
                      int tag, const char *file, int line);
TL_API void tl_impl_mcast_linked(tl_ctx *, int row0, int col0, int n_rows, int n_cols, tl_tensor *t,
                             int tag, const char *file, int line);
TL_API int tl_impl_hbm_channel_pe(tl_ctx *, int channel, const char *file, int line);
TL_API int tl_impl_sip_link_pe(tl_ctx *, int sip, int peer, int k, const char *file, int line);

/* Lazy: issues the DMA (HBM or TCM -> a new scratch tensor) and returns at
 * once; the data is a future that the first consuming op waits for. */
#define tl_load(tl, src) tl_impl_load((tl), (src), __FILE__, __LINE__)
/* Write src (waited for) to dst (HBM or TCM), rounding to dst's dtype.
 * Asynchronous; the kernel's end waits for every outstanding store. */
#define tl_store(tl, dst, src) tl_impl_store((tl), (dst), (src), __FILE__, __LINE__)
/* Write src to a persistent TCM or HBM tensor (e.g. running softmax state
 * that must outlive a scratch scope). */
#define tl_copy_to(tl, dst, src) tl_impl_copy_to((tl), (dst), (src), __FILE__, __LINE__)
/* Fire-and-forget: the bytes travel to dst_rank's inbox (IPCQ). Every
 * message must be taken with tl_recv by the kernel's end: one left in an
 * inbox is a kernel error (exit status 1) naming the first one's send.
 * Over an inter-SIP link of a machine with system.inter_sip.slots, a
 * message of more than one fabric packet first waits until the thread's
 * last such message has at most that many packets left to go on the wire
 * (the router's buffer slots); a message of one packet never waits. */
#define tl_send(tl, dst_rank, t, tag) tl_impl_send((tl), (dst_rank), (t), (tag), __FILE__, __LINE__)
/* Multicast: t to every PE of this PE's cube in rows [row0, row0 + n_rows)
 * and columns [col0, col0 + n_cols) of its NoC, except the sender. One
 * issue (the send cost) and one read-out by the sender's DMA; the bytes
 * cross each NoC link of the routes' union once and are copied where the
 * routes part. Each receiver takes it with tl_recv(sender's rank, tag),
 * as if it had been sent with tl_send (and must). In data mode the
 * receivers share one copy of the values until each takes its own. */
#define tl_mcast(tl, row0, col0, n_rows, n_cols, t, tag) \
        tl_impl_mcast((tl), (row0), (col0), (n_rows), (n_cols), (t), (tag), __FILE__, __LINE__)
/* tl_mcast as one of a chain to the same rectangle (tt-metal's linked
 * multicast: the path stays set up for the next one). The same delivery;
 * the sender pays the machine's pe.dma.mcast_linked_dest_ns per packet and
 * destination instead of pe.dma.mcast_dest_ns. */
#define tl_mcast_linked(tl, row0, col0, n_rows, n_cols, t, tag)                                \
        tl_impl_mcast_linked((tl), (row0), (col0), (n_rows), (n_cols), (t), (tag), __FILE__, \
                         __LINE__)
/* The PE (index in the cube) whose router HBM channel `channel` attaches
 * to (cube.hbm.attach), or -1 if the channels line the mesh's edges. A
 * channel serves that PE at cube.hbm.near_efficiency_pct of its rate and
 * every other requester at far_efficiency_pct. Free: no issue cost. */
#define tl_hbm_channel_pe(tl, channel) tl_impl_hbm_channel_pe((tl), (channel), __FILE__, __LINE__)
/* The PE (index in cube 0) at whose router the k-th link (from 0) from
 * SIP sip to SIP peer leaves sip (system.inter_sip.ports, else the cube's
 * gateway), or -1 if the two are not neighbours or have no k-th link.
 * Free: no issue cost. */
#define tl_sip_link_pe(tl, sip, peer, k) \
        tl_impl_sip_link_pe((tl), (sip), (peer), (k), __FILE__, __LINE__)
/* Block until a message from src_rank with tag has drained into this PE's
 * inbox; returns it as a new scratch tensor. Messages of one (src, tag)
 * arrive in send order. */
#define tl_recv(tl, src_rank, tag) tl_impl_recv((tl), (src_rank), (tag), __FILE__, __LINE__)
/* tl_recv into dst (TCM or scratch, the message's dtype and shape) rather
 * than a new scratch tensor: the receiving DMA wrote the bytes there as
 * they drained (a multicast into a receiver's circular buffer page, as
 * tt-metal's receivers take it). No time beyond tl_recv's. */
#define tl_recv_into(tl, dst, src_rank, tag) \
        tl_impl_recv_into((tl), (dst), (src_rank), (tag), __FILE__, __LINE__)
/* Block until t's data is ready. */
#define tl_wait_tensor(tl, t) tl_impl_wait_tensor((tl), (t), __FILE__, __LINE__)

/* ---- compute ---------------------------------------------------------- */

/* The ops of the kernel language, one row each. The table generates the
 * tl_op enum, the names in op_logs and messages, and (in the simulator)
 * the keys of the topology's cost tables and the checks of each entry
 * point. A row is
 *     OP(ID, name, KEY, form)      priced by its own cost-table entries,
 *                                  keyed `name` (pe.cpu.issue_cost_ns.NAME,
 *                                  pe.math.cycles_per_element.NAME)
 *     ALIAS(ID, name, KEY, form)   priced by the entries of op KEY
 * ID makes the enumerator TL_ID; form is how the op is called (its arity):
 *     UNARY    tl_impl_math1: x -> f(x), elementwise
 *     BINARY   tl_impl_math2: a, b -> f(a, b), elementwise, broadcasting
 *     REDUCE   tl_impl_math1 (the last axis) or tl_impl_reduce (any axis)
 *     SCALAR   tl_impl_scalar: x, a float -> f(x, s)
 *     TENSOR   a composite epilogue with a tensor operand only
 *     OWN      its own entry point (tl_cast, tl_fill, tl_mask_causal)
 *     NONE     not a MATH op (a MATH-only composite's head; the GEMM)
 * Values are stable only within one build: kernels use the names. */
#define TL_OPS(OP, ALIAS)                                                                \
        ALIAS(NONE, none, COMPOSITE, NONE)    /* no op: the head of a MATH-only composite */ \
        OP(EXP, exp, EXP, UNARY)                                                           \
        OP(MAX, max, MAX, BINARY)                                                          \
        OP(MIN, min, MIN, BINARY)                                                          \
        OP(SUM, sum, SUM, REDUCE)                                                          \
        OP(ADD, add, ADD, BINARY)                                                          \
        OP(SUB, sub, SUB, BINARY)                                                          \
        OP(MUL, mul, MUL, BINARY)                                                          \
        OP(DIV, div, DIV, BINARY)                                                          \
        OP(SCALE, scale, SCALE, SCALAR)       /* x * factor */                             \
        OP(RELU, relu, RELU, UNARY)                                                        \
        OP(BIAS, bias, BIAS, TENSOR)          /* composite: x + tensor (broadcast, e.g. [1, N]) */ \
        OP(DEQUANT, dequant, DEQUANT, TENSOR) /* composite: x * tensor[k tile] or x * tensor */ \
        OP(ROWMAX, rowmax, ROWMAX, REDUCE)    /* [.., M, N] -> [.., M, 1] */               \
        OP(ROWSUM, rowsum, ROWSUM, REDUCE)    /* [.., M, N] -> [.., M, 1] */               \
        OP(RECIP, recip, RECIP, UNARY)                                                     \
        OP(MASK, mask, MASK, OWN)             /* tl_mask_causal */                         \
        OP(CAST, cast, CAST, OWN)             /* tl_cast */                                \
        OP(FILL, fill, FILL, OWN)             /* tl_fill */                                \
        OP(SQRT, sqrt, SQRT, UNARY)                                                        \
        OP(RSQRT, rsqrt, RSQRT, UNARY)        /* 1 / sqrt(x) */                            \
        OP(LOG, log, LOG, UNARY)              /* natural logarithm */                      \
        OP(TANH, tanh, TANH, UNARY)                                                        \
        OP(ERF, erf, ERF, UNARY)                                                           \
        OP(SIGMOID, sigmoid, SIGMOID, UNARY)  /* 1 / (1 + e^-x) */                         \
        OP(SILU, silu, SILU, UNARY)           /* x * sigmoid(x) */                         \
        OP(GELU, gelu, GELU, UNARY)           /* x/2 * (1 + erf(x / sqrt 2)) */            \
        OP(GELU_TANH, gelu_tanh, GELU_TANH, UNARY) /* the tanh approximation of GELU */    \
        OP(WHERE, where, WHERE, OWN)          /* tl_where: mask != 0 ? a : b */            \
        OP(ADD_SCALAR, add_scalar, ADD_SCALAR, SCALAR) /* x + s */                         \
        OP(AMAX, amax, AMAX, REDUCE)          /* the largest element along an axis */     \
        OP(MEAN, mean, MEAN, REDUCE)          /* the mean along an axis */                 \
        OP(RMSNORM, rmsnorm, RMSNORM, TENSOR) /* composite: RMS norm of each row */        \
        OP(SIN, sin, SIN, UNARY)              /* sine, x in radians */                     \
        OP(COS, cos, COS, UNARY)              /* cosine, x in radians */                   \
        ALIAS(NEG, neg, SCALE, UNARY)         /* -x: a scale by -1 */                      \
        ALIAS(COPY, copy, CAST, UNARY)        /* x: a cast to fp32 */                      \
        ALIAS(GEMM, gemm, DOT, NONE)          /* composite: out = a . b, fp32 accumulate */

#define TL__OP_ENUM(id, name, key, form) TL_##id,
/* An op of the table above; each MATH op returns a new fp32 scratch
 * tensor whose data is a future. */
typedef enum tl_op { TL_OPS(TL__OP_ENUM, TL__OP_ENUM) } tl_op;
#undef TL__OP_ENUM
typedef tl_op tl_math_op;

TL_API tl_tensor *tl_impl_math1(tl_ctx *, tl_math_op op, tl_tensor *x, const char *file, int line);
TL_API tl_tensor *tl_impl_math2(tl_ctx *, tl_math_op op, tl_tensor *a, tl_tensor *b, const char *file,
                            int line);
TL_API tl_tensor *tl_impl_scale(tl_ctx *, tl_tensor *x, float factor, const char *file, int line);
TL_API tl_tensor *tl_impl_scalar(tl_ctx *, tl_math_op op, tl_tensor *x, float s, const char *file,
                             int line);
TL_API tl_tensor *tl_impl_where(tl_ctx *, tl_tensor *mask, tl_tensor *a, tl_tensor *b,
                            const char *file, int line);
TL_API tl_tensor *tl_impl_reduce(tl_ctx *, tl_math_op op, tl_tensor *x, int axis, const char *file,
                             int line);
TL_API tl_tensor *tl_impl_dot(tl_ctx *, tl_tensor *a, tl_tensor *b, bool trans_b, const char *file,
                          int line);
TL_API tl_tensor *tl_impl_cast(tl_ctx *, tl_tensor *x, tl_dtype dt, const char *file, int line);
TL_API tl_tensor *tl_impl_fill(tl_ctx *, tl_dtype dt, int ndim, const int64_t *shape, float value,
                           const char *file, int line);
TL_API tl_tensor *tl_impl_mask_causal(tl_ctx *, tl_tensor *x, int64_t offset, const char *file,
                                  int line);

#define tl_exp(tl, x) tl_impl_math1((tl), TL_EXP, (x), __FILE__, __LINE__)
#define tl_relu(tl, x) tl_impl_math1((tl), TL_RELU, (x), __FILE__, __LINE__)
#define tl_recip(tl, x) tl_impl_math1((tl), TL_RECIP, (x), __FILE__, __LINE__)
#define tl_neg(tl, x) tl_impl_math1((tl), TL_NEG, (x), __FILE__, __LINE__)
#define tl_add(tl, a, b) tl_impl_math2((tl), TL_ADD, (a), (b), __FILE__, __LINE__)
#define tl_sub(tl, a, b) tl_impl_math2((tl), TL_SUB, (a), (b), __FILE__, __LINE__)
#define tl_mul(tl, a, b) tl_impl_math2((tl), TL_MUL, (a), (b), __FILE__, __LINE__)
#define tl_div(tl, a, b) tl_impl_math2((tl), TL_DIV, (a), (b), __FILE__, __LINE__)
#define tl_max(tl, a, b) tl_impl_math2((tl), TL_MAX, (a), (b), __FILE__, __LINE__)
#define tl_min(tl, a, b) tl_impl_math2((tl), TL_MIN, (a), (b), __FILE__, __LINE__)
/* Row reductions over the last axis, keeping it as extent 1. */
#define tl_rowmax(tl, x) tl_impl_math1((tl), TL_ROWMAX, (x), __FILE__, __LINE__)
#define tl_rowsum(tl, x) tl_impl_math1((tl), TL_ROWSUM, (x), __FILE__, __LINE__)
#define tl_scale(tl, x, factor) tl_impl_scale((tl), (x), (factor), __FILE__, __LINE__)
#define tl_sqrt(tl, x) tl_impl_math1((tl), TL_SQRT, (x), __FILE__, __LINE__)
#define tl_rsqrt(tl, x) tl_impl_math1((tl), TL_RSQRT, (x), __FILE__, __LINE__)
#define tl_log(tl, x) tl_impl_math1((tl), TL_LOG, (x), __FILE__, __LINE__)
#define tl_tanh(tl, x) tl_impl_math1((tl), TL_TANH, (x), __FILE__, __LINE__)
#define tl_sin(tl, x) tl_impl_math1((tl), TL_SIN, (x), __FILE__, __LINE__)
#define tl_cos(tl, x) tl_impl_math1((tl), TL_COS, (x), __FILE__, __LINE__)
#define tl_erf(tl, x) tl_impl_math1((tl), TL_ERF, (x), __FILE__, __LINE__)
#define tl_sigmoid(tl, x) tl_impl_math1((tl), TL_SIGMOID, (x), __FILE__, __LINE__)
#define tl_silu(tl, x) tl_impl_math1((tl), TL_SILU, (x), __FILE__, __LINE__)
/* GELU, exact (erf) form and the tanh approximation. */
#define tl_gelu(tl, x) tl_impl_math1((tl), TL_GELU, (x), __FILE__, __LINE__)
#define tl_gelu_tanh(tl, x) tl_impl_math1((tl), TL_GELU_TANH, (x), __FILE__, __LINE__)
/* x + s and x * s for a scalar s (tl_mul_scalar is tl_scale). */
#define tl_add_scalar(tl, x, s) tl_impl_scalar((tl), TL_ADD_SCALAR, (x), (s), __FILE__, __LINE__)
#define tl_mul_scalar(tl, x, s) tl_impl_scalar((tl), TL_SCALE, (x), (s), __FILE__, __LINE__)
/* Elementwise select: mask != 0 ? a : b; the three broadcast together
 * (e.g. a [M, 1] mask against [M, N] operands). */
#define tl_where(tl, mask, a, b) tl_impl_where((tl), (mask), (a), (b), __FILE__, __LINE__)
/* Reductions along axis (negative counts from the end), which is kept as
 * extent 1: [M, N] along 0 -> [1, N]. tl_rowmax(x) is tl_amax(x, -1). */
#define tl_sum(tl, x, axis) tl_impl_reduce((tl), TL_SUM, (x), (axis), __FILE__, __LINE__)
#define tl_amax(tl, x, axis) tl_impl_reduce((tl), TL_AMAX, (x), (axis), __FILE__, __LINE__)
#define tl_mean(tl, x, axis) tl_impl_reduce((tl), TL_MEAN, (x), (axis), __FILE__, __LINE__)
/* [M, K] x [K, N] -> [M, N] fp32 accumulate; with trans_b, b is [N, K]. */
#define tl_dot(tl, a, b, trans_b) tl_impl_dot((tl), (a), (b), (trans_b), __FILE__, __LINE__)
/* x rounded to dt (values become representable in dt; storage stays fp32 math). */
#define tl_cast(tl, x, dt) tl_impl_cast((tl), (x), (dt), __FILE__, __LINE__)
/* A new tensor with every element value (e.g. -INFINITY, 0). */
#define tl_fill(tl, dt, ndim, shape, value) \
        tl_impl_fill((tl), (dt), (ndim), (shape), (value), __FILE__, __LINE__)
/* x with element (i, j) of its last two axes set to -inf where j > i + offset. */
#define tl_mask_causal(tl, x, offset) tl_impl_mask_causal((tl), (x), (offset), __FILE__, __LINE__)

/* ---- composite ops ------------------------------------------------------
 *
 * A composite is one fused command: PE_CPU pays one issue cost (the
 * `composite` entry, 40 ns by default) and the PE's engines run a pipeline
 * planned from a flat, ordered op list with at most one GEMM:
 *   - KERNEL-scope ops before the GEMM: prologue stages (single-shot MATH);
 *   - the GEMM: a tile loop; per tile DMA_READ (only for operands that are
 *     not pinned) -> GEMM -> the K_TILE ops; per output tile the
 *     OUTPUT_TILE ops, then DMA_WRITE when the output is not pinned;
 *   - KERNEL-scope ops after the GEMM: post-loop stages.
 * Tile i+1's DMA runs while tile i computes (double buffering). tl_wait on
 * the handle blocks until every stage is done.
 *
 * Accumulating (opt-in: .accumulate = true, a GEMM composite only): out
 * becomes out + a . b, the epilogue ops applying to that sum. The matrix
 * engine starts each output tile from out's values instead of zero, as a
 * Tensix FPU accumulates onto its Dst registers and its packer onto L1:
 * the old values are read from TCM with the operands, and no MATH pass
 * adds them. So a K loop over blocks is one composite per block, each
 * after the first accumulating, with no TL_BIAS epilogue. out must be
 * consumed in place (TCM or scratch, pinned); without the flag a
 * composite overwrites out, as before. */

/* Composite ops are tl_op values: TL_GEMM as the head, and as epilogue ops
 *   - any unary op on x (TL_RELU, TL_GELU, TL_GELU_TANH, TL_SILU, ...);
 *   - a binary op with .tensor as its second operand, broadcast to the
 *     output: TL_ADD of an [M, N] tensor is a residual add;
 *   - TL_SCALE (x * factor) and TL_ADD_SCALAR (x + factor);
 *   - TL_DEQUANT and TL_BIAS with .tensor;
 *   - TL_RMSNORM, KERNEL scope only (it needs whole rows): each row of the
 *     output becomes x / sqrt(mean(x^2) + factor) * tensor, with .tensor
 *     the weight [N] (or [1, N]; NULL for none) and .factor epsilon. */
typedef tl_op tl_cop;

typedef enum tl_cscope {
        TL_SCOPE_OUTPUT_TILE = 0,    /* once per (m, n) output tile, before the store (default) */
        TL_SCOPE_K_TILE,             /* after the GEMM of every K tile */
        TL_SCOPE_KERNEL,             /* once per composite */
} tl_cscope;

typedef struct tl_epilogue {
        tl_cop op;                   /* what */
        tl_tensor *tensor;           /* operand of DEQUANT, BIAS, binary ops; RMSNORM's weight */
        float factor;                /* operand of SCALE, ADD_SCALAR; RMSNORM's epsilon */
        tl_cscope scope;             /* when */
} tl_epilogue;

typedef struct tl_composite_desc {
        tl_cop op;                   /* TL_GEMM, or 0 for a MATH-only composite */
        tl_tensor *a, *b;            /* GEMM operands [M, K] and [K, N] (or [N, K] with trans_b) */
        bool trans_b;                /* b is [N, K] */
        bool accumulate;             /* out += a . b: see "Accumulating" above */
        tl_tensor *out;              /* result [M, N]: HBM, TCM or scratch */
        const tl_epilogue *epilogue; /* ops after the GEMM, in order */
        int n_epilogue;              /* entries of epilogue */
        int64_t tile_m, tile_n, tile_k; /* tile sizes (0: 64) */
} tl_composite_desc;

typedef struct tl_handle {
        void *p;                     /* runtime's record of the composite */
} tl_handle;

TL_API tl_handle tl_impl_composite(tl_ctx *, const tl_composite_desc *d, const char *file, int line);
TL_API void tl_impl_wait(tl_ctx *, tl_handle h, const char *file, int line);
TL_API tl_handle tl_impl_softmax_merge(tl_ctx *, tl_tensor *s, tl_tensor *v, tl_tensor *m, tl_tensor *l,
                                   tl_tensor *o, const char *file, int line);
TL_API void tl_impl_set_pinned(tl_tensor *t, bool pinned, const char *file, int line);

/* Variadic so that a compound literal with commas can be passed as is:
 * tl_composite(tl, &(tl_composite_desc){ .op = TL_GEMM, ... }). */
#define tl_composite(tl, ...) tl_impl_composite((tl), (__VA_ARGS__), __FILE__, __LINE__)
#define tl_wait(tl, h) tl_impl_wait((tl), (h), __FILE__, __LINE__)
/* Whether a TCM or scratch tensor is consumed in place by composites (no
 * DMA); HBM tensors never are. Free: no issue cost. */
#define tl_set_pinned(t, pinned) tl_impl_set_pinned((t), (pinned), __FILE__, __LINE__)
/* The softmax_merge recipe: merge score tile s [M, N] into the running
 * state m, l [M, 1] and o [M, D] (persistent TCM, updated in place):
 *   m' = max(m, rowmax(s)); p = exp(s - m'); alpha = exp(m - m');
 *   l' = alpha * l + rowsum(p); o' = alpha * o + p . v
 * v [N, D] is streamed from HBM in the GEMM's tile loop; p is recipe
 * scratch, used in place by the GEMM. One composite issue. */
#define tl_softmax_merge(tl, s, v, m, l, o) \
        tl_impl_softmax_merge((tl), (s), (v), (m), (l), (o), __FILE__, __LINE__)

/* ---- kernel threads and circular buffers ------------------------------ */

/* A PE runs the kernel on its first issuing core. The kernel may start more
 * threads on the same PE, tt-metal's reader, compute and writer kernels:
 * each runs fn(tl', copy) with a context of its own, copy being the
 * thread's own copy of the arg_size (at most TL_THREAD_ARG_BYTES) bytes at
 * arg, so the thread may outlive the caller's frame, (its own scratch
 * scopes, outstanding ops and issue time) on the PE's next core, sharing
 * the PE's engines, TCM and inbox. Thread i (the kernel itself is 0)
 * issues on core i % pe.cpu.cores, so threads beyond the cores share one
 * and take turns issuing. A thread's time is its own: its ops overlap the
 * others' on the engines. The kernel's end waits for every thread it
 * started to return. At most TL_MAX_THREADS threads a PE; a thread may not
 * start threads. Tensors a thread made outside any scratch scope (tl_alloc
 * at its top level, a circular buffer's pages) may be used by the PE's
 * other threads; a scratch tensor belongs to its thread. Costs a wait's
 * issue (pe.cpu.issue_cost_ns.wait). */
#define TL_MAX_THREADS 8
#define TL_THREAD_ARG_BYTES 256
typedef void (*tl_thread_fn)(tl_ctx *tl, void *arg);
TL_API void tl_impl_thread_start(tl_ctx *, tl_thread_fn fn, const void *arg, size_t arg_size,
                             const char *file, int line);
#define tl_thread_start(tl, fn, arg, arg_size) \
        tl_impl_thread_start((tl), (fn), (arg), (arg_size), __FILE__, __LINE__)

/* The NoC (0 .. tl_machine.nocs - 1) this thread's later transfers move
 * on (loads, stores, copies, sends, multicasts; a message drains at its
 * receiver on the NoC it was sent on). A machine whose cores each issue on
 * one NoC of two (pe.dma.thread_nocs half of pe.dma.channels) gives each
 * NoC its own data path at one NoC's rate, so two threads on two NoCs move
 * data side by side; elsewhere there is one NoC. Thread i starts on NoC
 * i % nocs. Free: no issue cost. */
TL_API void tl_impl_set_noc(tl_ctx *, int noc, const char *file, int line);
#define tl_set_noc(tl, noc) tl_impl_set_noc((tl), (noc), __FILE__, __LINE__)

/* The fabric payload a packet (bytes, 0: the machine's
 * system.inter_sip.packet_bytes; at most that) of this thread's later
 * sends and multicasts over inter-SIP links: how full an op fills its
 * packets (a tt-metal kernel that writes at most k pages a packet, k x
 * page bytes). It sets their framing on the wire, their count at the
 * links' Ethernet cores (system.inter_sip.core_ns) and in the slots
 * (system.inter_sip.slots); on a machine without framing it changes
 * nothing. Free: no issue cost. */
TL_API void tl_impl_set_fabric_payload(tl_ctx *, int64_t bytes, const char *file, int line);
#define tl_set_fabric_payload(tl, bytes) \
        tl_impl_set_fabric_payload((tl), (bytes), __FILE__, __LINE__)

/* A circular buffer in TCM: n_pages pages of one shape and dtype, handed
 * from the PE's producing thread to its consuming one in order, as
 * tt-metal's circular buffers in L1 (cb_reserve_back, cb_push_back,
 * cb_wait_front, cb_pop_front; a page here is what a kernel sizes it, e.g.
 * a block of tiles). The producer reserves the back page (waiting while
 * every page is full), writes it (its writes are futures as usual: the
 * consumer's ops wait for them) and pushes it; the consumer waits for the
 * front page, reads it and pops it, which first waits for the consumer's
 * own outstanding ops (tt-metal's read or write barrier before the pop),
 * so the page is free when the producer gets it back. Each call costs a
 * wait's issue (pe.cpu.issue_cost_ns.wait). Made at a thread's top level
 * (outside scratch scopes), once; its pages count as persistent TCM.
 * Misuse is a kernel error: a second reserve before the push, a push
 * without a reserve, a pop with nothing pushed, another PE's buffer. A
 * wait that nothing can end (no thread pushes or pops) is reported as a
 * deadlock naming the buffer and the waiting line. */
typedef struct tl_cb tl_cb;
TL_API tl_cb *tl_impl_cb_make(tl_ctx *, const char *name, tl_dtype dt, int ndim,
                          const int64_t *page_shape, int n_pages, const char *file, int line);
TL_API tl_tensor *tl_impl_cb_reserve_back(tl_ctx *, tl_cb *cb, const char *file, int line);
TL_API void tl_impl_cb_push_back(tl_ctx *, tl_cb *cb, const char *file, int line);
TL_API tl_tensor *tl_impl_cb_wait_front(tl_ctx *, tl_cb *cb, const char *file, int line);
TL_API void tl_impl_cb_pop_front(tl_ctx *, tl_cb *cb, const char *file, int line);
/* A buffer named name (kept; messages use it) of n_pages (1 ..
 * TL_CB_MAX_PAGES) pages of page_shape. */
#define TL_CB_MAX_PAGES 16
#define tl_cb_make(tl, name, dt, ndim, page_shape, n_pages) \
        tl_impl_cb_make((tl), (name), (dt), (ndim), (page_shape), (n_pages), __FILE__, __LINE__)
/* Wait for a free page at the back; returns it (to write). */
#define tl_cb_reserve_back(tl, cb) tl_impl_cb_reserve_back((tl), (cb), __FILE__, __LINE__)
/* Hand the reserved page to the consumer. */
#define tl_cb_push_back(tl, cb) tl_impl_cb_push_back((tl), (cb), __FILE__, __LINE__)
/* Wait for a pushed page at the front; returns it (to read). */
#define tl_cb_wait_front(tl, cb) tl_impl_cb_wait_front((tl), (cb), __FILE__, __LINE__)
/* Wait for this thread's outstanding ops, then free the front page. */
#define tl_cb_pop_front(tl, cb) tl_impl_cb_pop_front((tl), (cb), __FILE__, __LINE__)

/* Semaphores: TL_MAX_SEMS counters per PE, numbered 0 .. TL_MAX_SEMS - 1,
 * the same numbers on every PE, each starting at 0 (tt-metal's
 * CreateSemaphore: one L1 word at the same address on every core of the
 * program), shared by the PE's threads. The handshake of tt-metal's
 * multicast matmul readers: a receiver that has reserved the page a
 * multicast will land in increments its sender's semaphore
 * (noc_semaphore_inc); the sender waits until all its receivers have
 * (noc_semaphore_wait), sets it back to 0 (noc_semaphore_set), then
 * multicasts, so no multicast lands before its page is free.
 *
 * tl_sem_inc adds n (>= 1) to semaphore sem of PE rank (this PE's own too):
 * a NoC atomic that reaches rank after the route's latency (a DMA setup
 * and the hops; this PE's own at once), costing a send's issue
 * (pe.cpu.issue_cost_ns.send). tl_sem_wait blocks until this PE's
 * semaphore sem is at least value (a wait's issue); tl_sem_set sets it
 * (free: a store to the PE's own L1). Misuse is a kernel error (a
 * semaphore number or rank out of range, n < 1, a negative value); a wait
 * that no increment can end is reported as a deadlock naming the
 * semaphore, its value and the waiting line. */
#define TL_MAX_SEMS 8
TL_API void tl_impl_sem_inc(tl_ctx *, int rank, int sem, int n, const char *file, int line);
TL_API void tl_impl_sem_wait(tl_ctx *, int sem, int value, const char *file, int line);
TL_API void tl_impl_sem_set(tl_ctx *, int sem, int value, const char *file, int line);
#define tl_sem_inc(tl, rank, sem, n) tl_impl_sem_inc((tl), (rank), (sem), (n), __FILE__, __LINE__)
#define tl_sem_wait(tl, sem, value) tl_impl_sem_wait((tl), (sem), (value), __FILE__, __LINE__)
#define tl_sem_set(tl, sem, value) tl_impl_sem_set((tl), (sem), (value), __FILE__, __LINE__)

/* A fixed cost: the calling thread's core is busy for ns nanoseconds (0 ..
 * TL_DELAY_MAX_NS), for work a kernel does not run op by op (a program's
 * start, a handshake whose steps no document times); the thread's
 * outstanding ops go on meanwhile, and threads sharing its core wait as
 * for an issue. Profiled as issue time on its line, traced as "delay".
 * A value out of range is a kernel error. */
#define TL_DELAY_MAX_NS 1000000000LL
TL_API void tl_impl_delay(tl_ctx *, int64_t ns, const char *file, int line);
#define tl_delay(tl, ns) tl_impl_delay((tl), (ns), __FILE__, __LINE__)

/* ---- kernels and their parameters --------------------------------------- */

typedef void (*tl_kernel_fn)(tl_ctx *tl, const void *args);

typedef enum tl_param_kind { TL_PARAM_INT, TL_PARAM_FLOAT, TL_PARAM_CHOICE } tl_param_kind;

/* One `--set name=value` parameter of a kernel. */
struct tl_param {
        const char *name;            /* key; NULL ends a list */
        tl_param_kind kind;          /* value type */
        double def;                  /* default (CHOICE: index into choices) */
        double min, max;             /* valid range (INT, FLOAT) */
        const char *const *choices;  /* CHOICE: NULL-terminated words */
        const char *help;            /* one line */
};

/* The host side of a launch, before the kernel runs: read parameters,
 * declare the HBM tensors (inputs from --inputs DIR as NAME.npy, outputs to
 * --outputs DIR as NAME.npy), fill the argument block. */
typedef struct tl_setup tl_setup;

TL_API int64_t tl_setup_int(tl_setup *, const char *name);
TL_API double tl_setup_float(tl_setup *, const char *name);
TL_API int tl_setup_choice(tl_setup *, const char *name);        /* index into choices */
TL_API bool tl_setup_is_set(tl_setup *, const char *name); /* given with --set */
/* Extent `axis` of input NAME.npy when --inputs gives one, else -1: lets a
        * kernel take shapes it was not told from the files. */
TL_API int64_t tl_setup_input_dim(tl_setup *, const char *tensor, int axis);

/* A shape parameter: its --set value if given, else extent `axis` of input
 * NAME.npy if --inputs has it, else the parameter's default. */
TL_API int64_t tl_setup_dim(tl_setup *, const char *param, const char *tensor, int axis);

typedef enum tl_io { TL_INPUT, TL_OUTPUT, TL_TEMP } tl_io;
/* An HBM tensor of the launch, replicated until told otherwise (below).
 * In data mode outputs are gathered from wherever each element was
 * written. Its name is its file's stem (NAME.npy), so it is 1 to 64
 * letters, digits, '_', '-' or '.', not starting with '.' or '-', and
 * unique in the launch; any other name is rejected (exit status 2) at the
 * caller's file:line. */
TL_API tl_tensor *tl_impl_setup_tensor(tl_setup *, const char *name, tl_io io, tl_dtype dt, int ndim,
                                   const int64_t *shape, const char *file, int line);
#define tl_setup_tensor(s, name, io, dt, ndim, ...) \
        tl_impl_setup_tensor((s), (name), (io), (dt), (ndim), (__VA_ARGS__), __FILE__, __LINE__)

/* Where an HBM tensor lives: its home in the cubes' HBM stacks. A PE that
 * reads or writes a part of it held by another cube pays the route from
 * that cube's HBM channels, over the inter-cube (and inter-SIP) links.
 * Cubes are counted over the whole machine (sip * cubes per SIP + cube,
 * tl_program_id 2 and 1), C of them. A launch whose tensors do not fit a
 * cube's HBM (cube.hbm.size_gib) fails with exit status 2, naming the
 * tensor that does not fit. */
typedef enum tl_home {
        TL_HOME_REPLICATED = 0,      /* a copy in every cube; each PE uses its own cube's */
        TL_HOME_SHARDED,             /* split along an axis over the cubes */
        TL_HOME_INTERLEAVED,         /* page by page round every cube */
} tl_home;

/* A tensor's placement is set at most once, and only for a tensor of
 * tl_setup_tensor (one of tl_setup_tensor_sharded lives in TCM); else,
 * and for a bad axis or block, the setup fails (exit status 2) naming the
 * call's line. In data mode each cube's copy of a replicated tensor is its
 * own (docs/adr/0017): a PE reading what another cube wrote to that
 * cube's copy is a kernel error naming both lines. */
TL_API void tl_impl_setup_replicate(tl_setup *, tl_tensor *t, const char *file, int line);
TL_API void tl_impl_setup_shard(tl_setup *, tl_tensor *t, int axis, int64_t block, const char *file,
                            int line);
TL_API void tl_impl_setup_interleave(tl_setup *, tl_tensor *t, const char *file, int line);
TL_API void tl_impl_setup_hbm_channel(tl_setup *, tl_tensor *t, int channel, const char *file,
                                  int line);
/* A copy in every cube's HBM, each counted against that cube's capacity
 * (the default). */
#define tl_setup_replicate(s, t) tl_impl_setup_replicate((s), (t), __FILE__, __LINE__)
/* Split t along axis over the C cubes. block 0: cube c holds indices
 * [c * E / C, (c + 1) * E / C) (rounded down) of the axis of extent E,
 * for every index of the other axes. block > 0: block-cyclic over the
 * rows counted through that axis: row r, the flat index of
 * (i_0, .., i_axis), is on cube (r / block) mod C; block x C must fit in
 * 64 bits. */
#define tl_setup_shard(s, t, axis, block) \
        tl_impl_setup_shard((s), (t), (axis), (block), __FILE__, __LINE__)
/* Page by page (cube.hbm.page_kib) round every cube: page p of t is on
 * cube p mod C, spread there over the cube's channels. */
#define tl_setup_interleave(s, t) tl_impl_setup_interleave((s), (t), __FILE__, __LINE__)
/* Hold t, in each cube that holds it, in HBM channel `channel` (0 ..
 * cube.hbm.channels - 1) instead of interleaving it over the channels: a
 * single-bank buffer, as tt-metal's DRAM tests read. Independent of the
 * cube placement above; set at most once (else, for a channel out of
 * range, or a tensor of tl_setup_tensor_sharded, the setup fails, exit
 * status 2, naming the call's line). */
#define tl_setup_hbm_channel(s, t, channel) \
        tl_impl_setup_hbm_channel((s), (t), (channel), __FILE__, __LINE__)

/* The GEMM engine's math fidelity for this launch, in passes per op
 * (LoFi 1, HiFi2 2, HiFi3 3, HiFi4 4); without it, the topology's
 * pe.gemm.fidelity_passes. */
TL_API void tl_setup_gemm_fidelity(tl_setup *, int passes);
/* The machine the kernel will run on (as tl_machine_info), for sizing
 * tiles and rejecting shapes that cannot fit before the launch. */
TL_API tl_machine tl_setup_machine(tl_setup *);

/* A tensor of the launch held, sharded, in the TCM of the PEs that use it
 * (an L1-sharded tensor): an input starts there and an output ends there,
 * so a PE reads and writes its part with TCM costs, never HBM's, and
 * consumes it in place (tl_dot, tl_send, tl_mcast take views of it). Each
 * PE must touch only its own part: in data mode an element is the part of
 * the first PE that touches it, and another PE's touch is a kernel error
 * (docs/adr/0017). The parts are not charged to the PEs' TCM, nor to HBM.
 * Files as for tl_setup_tensor. */
TL_API tl_tensor *tl_impl_setup_tensor_sharded(tl_setup *, const char *name, tl_io io, tl_dtype dt,
                                           int ndim, const int64_t *shape, const char *file,
                                           int line);
#define tl_setup_tensor_sharded(s, name, io, dt, ndim, ...)                               \
        tl_impl_setup_tensor_sharded((s), (name), (io), (dt), (ndim), (__VA_ARGS__), __FILE__, \
                                 __LINE__)
/* The machine's default compute grid (cube.compute_cols / compute_rows,
 * else the whole NoC): axis 0 its columns, axis 1 its rows. */
TL_API int tl_setup_grid(tl_setup *, int axis);
/* The cube's NoC: axis 0 its columns, axis 1 its rows. */
TL_API int tl_setup_mesh_dim(tl_setup *, int axis);
/* How the machine's SIPs are laid out for collectives: the SIPs of a mesh
 * (system.inter_sip.topology mesh) are rows of this many, SIP s at row
 * s / it, column s % it; any other network is one row of all the SIPs. */
TL_API int tl_setup_sip_row(tl_setup *);
/* The parallel links between two neighbouring SIPs
 * (system.inter_sip.links, at least 1). */
TL_API int tl_setup_sip_links(tl_setup *);

/* Reject the parameters (exit status 2): the message should name the
 * constraint, e.g. "q_heads (12) must be a multiple of kv_heads (8)". */
TL_API void tl_setup_error(tl_setup *, const char *fmt, ...)
        __attribute__((format(printf, 2, 3)));

/* A registered kernel. */
struct tl_kernel {
        const char *name;            /* registry key, e.g. "gqa_decode" */
        const char *summary;         /* one line for `cubesim kernels` */
        tl_kernel_fn fn;             /* the body, run on every PE */
        const struct tl_param *params; /* its parameters, ended by name NULL; may be NULL */
        size_t args_size;            /* bytes of its argument block (0: none) */
        /* Fill args (zeroed, args_size bytes) from the parameters and
         * declare tensors; NULL if the kernel needs none. */
        void (*setup)(tl_setup *s, void *args);
        const char *io_help;         /* its .npy inputs and outputs, for `cubesim kernels` */
};

/* Define `const struct tl_kernel tl_kernel_<name>` the usual way: the body
 * is the function <name>; its parameters are <pfx>_params, its argument
 * block struct <pfx>_args, filled by <pfx>_setup. Several kernels may
 * share one pfx (one argument block, parameters and setup, two bodies).
 * A kernel whose pieces are named otherwise, or that has none, fills a
 * struct tl_kernel itself. For example:
 *     TL_KERNEL(axpy, axpy, "out = alpha * x + y",
 *               "inputs x.npy, y.npy [1, n]; output out.npy [1, n]");  */
#define TL_KERNEL(name_, pfx, summary_, io_help_)                                        \
        const struct tl_kernel tl_kernel_##name_ = {                                     \
                .name = #name_,                                                         \
                .summary = (summary_),                                                  \
                .fn = name_,                                                            \
                .params = pfx##_params,                                                 \
                .args_size = sizeof(struct pfx##_args),                                 \
                .setup = pfx##_setup,                                                   \
                .io_help = (io_help_),                                                  \
        }

/* A shared object given with --kernels exports this symbol (TL_API keeps
 * it visible when the library is built with -fvisibility=hidden):
 *     TL_API const struct tl_kernel *const cubesim_kernels[] = { &mine, NULL };  */
#define TL_KERNELS_SYMBOL "cubesim_kernels"

/* Earlier names of the exported entry points (kernels that called them
 * directly compile unchanged). */
#define tl__alloc tl_impl_alloc
#define tl__cast tl_impl_cast
#define tl__cb_make tl_impl_cb_make
#define tl__cb_pop_front tl_impl_cb_pop_front
#define tl__cb_push_back tl_impl_cb_push_back
#define tl__cb_reserve_back tl_impl_cb_reserve_back
#define tl__cb_wait_front tl_impl_cb_wait_front
#define tl__composite tl_impl_composite
#define tl__copy_to tl_impl_copy_to
#define tl__delay tl_impl_delay
#define tl__dim tl_impl_dim
#define tl__dot tl_impl_dot
#define tl__dtype_of tl_impl_dtype_of
#define tl__fill tl_impl_fill
#define tl__hbm_channel_pe tl_impl_hbm_channel_pe
#define tl__sip_link_pe tl_impl_sip_link_pe
#define tl__load tl_impl_load
#define tl__mask_causal tl_impl_mask_causal
#define tl__math1 tl_impl_math1
#define tl__math2 tl_impl_math2
#define tl__mcast tl_impl_mcast
#define tl__mcast_linked tl_impl_mcast_linked
#define tl__mesh_dim tl_impl_mesh_dim
#define tl__ndim tl_impl_ndim
#define tl__num_programs tl_impl_num_programs
#define tl__numel tl_impl_numel
#define tl__program_id tl_impl_program_id
#define tl__rank tl_impl_rank
#define tl__recv tl_impl_recv
#define tl__recv_into tl_impl_recv_into
#define tl__reduce tl_impl_reduce
#define tl__reshape tl_impl_reshape
#define tl__scalar tl_impl_scalar
#define tl__scale tl_impl_scale
#define tl__scratch_scope_begin tl_impl_scratch_scope_begin
#define tl__scratch_scope_end tl_impl_scratch_scope_end
#define tl__sem_inc tl_impl_sem_inc
#define tl__sem_set tl_impl_sem_set
#define tl__sem_wait tl_impl_sem_wait
#define tl__send tl_impl_send
#define tl__set_fabric_payload tl_impl_set_fabric_payload
#define tl__set_noc tl_impl_set_noc
#define tl__set_pinned tl_impl_set_pinned
#define tl__setup_hbm_channel tl_impl_setup_hbm_channel
#define tl__setup_interleave tl_impl_setup_interleave
#define tl__setup_replicate tl_impl_setup_replicate
#define tl__setup_shard tl_impl_setup_shard
#define tl__setup_tensor tl_impl_setup_tensor
#define tl__setup_tensor_sharded tl_impl_setup_tensor_sharded
#define tl__softmax_merge tl_impl_softmax_merge
#define tl__space_of tl_impl_space_of
#define tl__store tl_impl_store
#define tl__thread_start tl_impl_thread_start
#define tl__view tl_impl_view
#define tl__wait tl_impl_wait
#define tl__wait_tensor tl_impl_wait_tensor
#define tl__where tl_impl_where

#ifdef __cplusplus
}
#endif

#endif
