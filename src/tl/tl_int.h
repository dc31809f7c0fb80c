/* tl/tl_int.h: the kernel runtime's private side, for src/tl and its unit
 * tests only: tensors and their storage, the per-PE context behind
 * tl_ctx, scratch scopes, messages, the host-side setup, and a run's
 * state. Other modules use tl_run.h. */
#ifndef CUBESIM_TL_TL_INT_H
#define CUBESIM_TL_TL_INT_H

#include <stddef.h>

#include <cubesim/tl.h>

#include "base/names.h"
#include "plan/plan.h"
#include "report/critpath.h"
#include "report/oplog.h"
#include "report/profile.h"
#include "report/trace.h"
#include "report/trace_hw.h"
#include "tl/tl_run.h"

/* A tensor or a view. Storage (data mode) is fp32 values, already rounded
 * to the tensor's dtype where a store put them; views share the storage
 * and the readiness of their owner.
 *
 * Laid out for the per-op path: the first 64 bytes are what the checks of
 * every operand (tl__check_tensor) and of a handle (tl_wait) read, the
 * owner link, readiness (busy) and the pool's link (next_made); a view is the first TL_VIEW_BYTES
 * (clone_view copies no more); the owner-only state after them is read
 * through owner, never in a view, where it is left as the struct's last
 * use had it. The pool's structs are 256 bytes on 64-byte boundaries
 * (struct_new). */
struct tl_tensor {
        uint32_t magic;              /* TL_TENSOR_MAGIC (TL_HANDLE_MAGIC: a composite's handle) */
        tl_space space;              /* where it lives */
        tl_dtype dtype;              /* element type */
        int ndim;                    /* 0..TL_MAX_DIMS */
        int scope_depth;             /* scopes open when it was made; 0: kernel level */
        bool pinned;                 /* consumed in place from TCM (no DMA needed) */
        bool sharded;                /* owner: a launch tensor sharded over TCMs (readiness untracked) */
        bool busy;                   /* owner: ready is not done (kept here, in the line
                                        every op's checks read, not in ready's) */
        const struct tl_ctx *ctx;    /* the PE that made it; NULL: the setup's (HBM) */
        uint64_t scope_gen;          /* generation of that scope (scopes[scope_depth - 1].gen) */
        struct tl_tensor *owner;     /* whose storage and future this is (itself if not a view) */
        union {
                float *base;         /* data mode: the owner's storage; NULL in op_log mode */
                void *handle_rec;    /* a handle's composite record until placed (then NULL,
                                      * and ready_at is its end) */
        };
        struct tl_tensor *next_made; /* the struct made after it in its scope, or next dead one */
        int64_t offset;              /* elements from the owner's base */
        int64_t shape[TL_MAX_DIMS];  /* extents */
        int64_t stride[TL_MAX_DIMS]; /* elements between neighbours along each axis */
        const char *name;            /* HBM tensors: the setup's name; else NULL */
        /* Owner only: */
        sim_ps ready_at;             /* when ready completes (ops may extend it) */
        const char *made_by;         /* op that produced it, for wait notes */
        struct ev_event ready_ev;    /* completes ready at the producing op's end */
        struct ev_future ready;      /* data is ready */
        struct rep_trace_ref made_at; /* the producing op's trace slice */
};

/* The bytes of a view: the struct up to its owner-only state. */
#define TL_VIEW_BYTES offsetof(struct tl_tensor, ready_at)

#define TL_TENSOR_MAGIC 0x7e115a11u
#define TL_HANDLE_MAGIC 0xc0de5117u

/* Most elements a tensor may have (2^48): its bytes, offsets and the
 * products of its extents (a dot's flops) then stay far from overflow. */
#define TL_MAX_NUMEL (INT64_C(1) << 48)
/* Largest extent of one axis (2^40). */
#define TL_MAX_EXTENT (INT64_C(1) << 40)

/* Data mode: the values a send carried, one contiguous copy of the sent
 * tensor, shared by every message of one multicast and freed with the
 * last of them. */
struct tl_payload {
        uint32_t refs;               /* messages holding it */
        float data[];                /* the values, row-major */
};

/* A message in flight or waiting in an inbox (IPCQ). */
struct tl_msg {
        struct ev_event land;        /* fires when the last byte has drained */
        struct tl_msg *next;         /* its inbox queue, or the free list */
        struct tl_msg *all_next;     /* every message of the run, for freeing */
        struct tl_ctx *dst;          /* receiving PE */
        uint32_t src_rank;           /* sender */
        int tag;                     /* sender's tag */
        tl_dtype dtype;              /* of the sent tensor */
        int ndim;                    /* its shape */
        int64_t shape[TL_MAX_DIMS];
        struct tl_payload *payload;  /* data mode: its values (shared); else NULL */
        const char *file;            /* the tl_send or tl_mcast that made it */
        int line;                    /* and its line */
        const char *op;              /* "tl_send" or "tl_mcast" */
        uint64_t seq;                /* order of sending in the run (1, 2, ..) */
        uint64_t flow_id;            /* joins send and recv in the trace */
        struct rep_trace_ref send_at; /* trace: the sender's send (or mcast) slice */
        struct rep_trace_ref drain_at; /* trace: the receiver's drain slice */
};

/* The tensor structs of a PE. A struct records the scope it was made in
 * and that scope's generation (unique per scope of the PE), so once the
 * scope has ended the struct is dead and a stale pointer to it is caught.
 * A scope's structs then wait in a FIFO quarantine (spliced in at its end,
 * in O(1)): one is reused only when more than TL_QUARANTINE others have
 * died since, so a tensor carried into the next iteration of a loop of
 * scopes is still caught there. Structs made at kernel level live until
 * the run ends. */
struct tl_tensors {
        char **blocks;               /* malloc'd blocks of TL_STRUCTS_PER_BLOCK structs */
        size_t n_blocks, cap_blocks; /* blocks used, entries of blocks */
        size_t block_used;           /* structs handed out of the last block */
        struct tl_tensor *dead_head; /* quarantine, oldest first */
        struct tl_tensor *dead_tail; /* newest */
        size_t n_dead;               /* structs in the quarantine */
};

#define TL_STRUCTS_PER_BLOCK 64
#define TL_QUARANTINE 32

/* Scratch bookkeeping of one open scope. */
struct tl_scope {
        size_t arena_mark;           /* host arena position at begin */
        uint64_t scratch_mark;       /* simulated scratch bytes in use at begin */
        uint64_t gen;                /* unique per scope of the PE: its structs carry it */
        struct tl_tensor *made;      /* structs made in the scope, oldest first */
        struct tl_tensor *made_last; /* the newest of them (the list's tail) */
        size_t n_made;               /* how many */
        sim_ps busy_until;           /* latest end of the ops issued in the scope */
        const char *file;            /* where tl_scratch_scope_begin was called */
        int line;                    /* and its line */
};

#define TL_MAX_SCOPES 32

/* A bump allocator for a PE's tensor structs and data-mode storage, in
 * chunks; scopes roll it back. */
struct tl_arena {
        char **chunks;               /* chunk base pointers */
        size_t n_chunks;             /* chunks allocated */
        size_t cap_chunks;           /* entries of chunks */
        size_t chunk_bytes;          /* size of each chunk */
        size_t pos;                  /* global position: chunk * chunk_bytes + offset */
};

/* The landed messages of one (receiver, source, tag), oldest first: a
 * slot of the run's inbox index. */
struct tl_inbox_q {
        uint32_t dst;                /* receiving rank */
        uint32_t src;                /* sending rank */
        int tag;                     /* sender's tag */
        bool used;                   /* the slot holds a queue (never empty) */
        struct tl_msg *head;         /* oldest landed message */
        struct tl_msg *tail;         /* newest */
};

/* Every PE's inbox (IPCQ), indexed by (receiver, source, tag): an open-
 * addressing table with linear probing, a power-of-two size kept at least
 * twice the messages sent and not yet received (so at most half full: a
 * queue is never empty), grown by tl_send where a failure can be reported.
 * A receive finds its queue in O(1) whatever else waits. */
struct tl_inbox {
        struct tl_inbox_q *slots;    /* cap entries */
        size_t cap;                  /* 0 or a power of two */
        size_t n_out;                /* messages sent and not yet received */
};

struct tl_run;
struct tl_inflight;

/* What a blocked process waits for, kept as pointers and numbers and
 * formatted only when a deadlock or budget report reads it. */
enum tl_note_kind {
        TL_NOTE_AT,                  /* "file:line: op" */
        TL_NOTE_RESULT,              /* "file:line: op waits for a what result" */
        TL_NOTE_RECV,                /* "file:line: tl_recv from what tag N" */
};
struct tl_note {
        enum tl_note_kind kind;      /* which text */
        const char *file;            /* kernel file of the waiting call */
        int line;                    /* and its line */
        const char *op;              /* the waiting op, or the whole text after file:line */
        const char *what;            /* the op that makes the awaited tensor; the sending PE's name */
        int tag;                     /* TL_NOTE_RECV: the awaited tag */
};

/* Records reused once done (a composite's feed, a DMA copy's record): a
 * fresh one per op would miss the cache on every write. A pooled record
 * starts with a struct tl_pooled. */
struct tl_pooled {
        struct tl_pooled *next_free; /* in the pool's free list */
        struct tl_pooled *next_all;  /* in its list of every record, for freeing */
};

struct tl_pool {
        struct tl_pooled *free;      /* records to reuse */
        struct tl_pooled *all;       /* every record */
};

#define TL_HINTS 32

/* A semaphore of a PE (sem.c). */
struct tl_sem {
        uint32_t value;              /* its count */
        bool armed;                  /* a thread waits on changed */
        struct ev_future changed;    /* completed at the next increment or set */
        char note[96];               /* the blocked wait's deadlock note */
};

struct tl_thread;

struct tl_ctx {
        struct hw_pe *pe;            /* the PE running this kernel instance */
        struct hw_sim *sim;          /* its machine */
        struct ev_proc *proc;        /* its process */
        struct tl_run *run;          /* the run (mode, outputs, error state) */
        uint32_t rank;               /* global PE index */
        struct tl_arena arena;       /* tensor structs and data */
        struct tl_scope scopes[TL_MAX_SCOPES]; /* open scratch scopes */
        int n_scopes;                /* depth; 0 = kernel level */
        struct tl_tensors structs;   /* tensor and view structs (not their data) */
        uint64_t n_scope_gens;       /* scopes begun so far: the last scope's generation */
        uint64_t scratch_bytes;      /* simulated scratch in use */
        uint64_t scratch_peak;       /* stat: most scratch in use at once */
        uint64_t tcm_bytes;          /* persistent TCM allocated */
        sim_ps busy_until;           /* latest end of any op issued */
        struct rep_line_hint issued; /* the profile entry of the op being issued */
        struct rep_line_hint hints[TL_HINTS]; /* the entries of the lines issued last, by line
                                        modulo TL_HINTS: a loop's lines hit */
        struct tl_inflight *inflight; /* ops issued but not yet placed on the engines */
        struct tl_pool dma_ops;      /* DMA copy records (struct tl_dma_op) */
        struct tl_pool feeds;        /* composite feeds (struct tl_feed) */
        struct tl_pool recs;         /* composite records (struct composite_rec) */
        struct pipeline_plan merge_plan; /* the softmax_merge recipe as planned first
                                        (has_gemm false: not yet), reused (plan_replan) */
        struct ev_future recv_ready; /* a blocked tl_recv's wake-up */
        int recv_src;                /* blocked tl_recv's source rank, or -1 */
        int recv_tag;                /* and tag */
        struct tl_msg *recv_got;     /* the message handed to it */
        struct tl_note note;         /* the current wait's note */
        sim_ps issue_ps[TOPO_OP_COUNT]; /* stat: PE_CPU issue time by op type */
        uint64_t n_ops[TOPO_OP_COUNT]; /* stat: ops issued by type */
        struct rep_trace_ref last_slice; /* trace: the current op's last engine slice */
        struct rep_trace_ref deps[4]; /* trace: producers of the current op's operands */
        int n_deps;                  /* entries of deps */
        uint32_t site_hints[TL_HINTS]; /* data mode: its write sites (tl_run.sites) by line
                                        modulo TL_HINTS (0: none) */
        /* Kernel threads (thread.c): */
        struct tl_ctx *first;        /* the PE's first core's context (itself there) */
        struct tl_thread *thread;    /* a started thread's record; NULL on the first core */
        unsigned core;               /* the core it issues on (thread index % pe.cpu.cores) */
        unsigned noc;                /* the NoC its transfers move on (tl_set_noc) */
        sim_ps fabric_hold;          /* its last send over the fabric: when that one's last
                                      * packet has a slot (system.inter_sip.slots) */
        uint32_t fabric_payload;     /* its sends' fabric payload a packet over inter-SIP
                                      * links (tl_set_fabric_payload), 0: the machine's */
        /* First core only: */
        struct tl_thread *threads;   /* the threads started on the PE, newest first */
        int n_threads;               /* how many (the kernel itself not counted) */
        int threads_live;            /* of them, not yet returned */
        bool threads_waited;         /* the kernel's end waits on threads_done */
        struct ev_future threads_done; /* completed when the last live thread returns */
        sim_ps core_free[TL_MAX_THREADS]; /* per core: the end of its last issue */
        struct tl_cb *cbs;           /* the PE's circular buffers, newest first */
        struct tl_sem sems[TL_MAX_SEMS]; /* the PE's semaphores (tl_sem_*) */
};

/* A tl_sem_inc on its way to its PE (sem.c; pooled in struct tl_run). */
struct tl_sem_inc {
        struct ev_event land;        /* fires when it reaches the PE */
        struct tl_ctx *dst;          /* the PE's first core's context */
        int sem;                     /* which semaphore */
        uint32_t n;                  /* added */
        struct tl_sem_inc *next_free; /* in the run's free list */
        struct tl_sem_inc *next_all; /* in the run's list of every record */
};

/* Free the run's semaphore increment records. */
void tl__sems_fini(struct tl_run *r);

/* A kernel thread started on a PE (tl_thread_start). */
struct tl_thread {
        struct ev_proc proc;         /* its process */
        struct tl_ctx ctx;           /* its context */
        struct tl_thread *next;      /* the PE's next (older) thread */
        tl_thread_fn fn;             /* its body */
        _Alignas(max_align_t) unsigned char arg[TL_THREAD_ARG_BYTES]; /* its argument's copy */
        char name[64];               /* "sip0.cube0.pe5.t1": reports and deadlocks */
        int index;                   /* its number on the PE, 1.. (the kernel is 0) */
};

/* tl's thread number on its PE: 0 for the kernel. */
static inline int tl__thread_no(const tl_ctx *tl)
{
        return tl->thread ? tl->thread->index : 0;
}

/* For the critical path (rep_cp_signal): tl did what at file:line now,
 * which may wake another thread of its PE. */
void tl__cp_signal(tl_ctx *tl, const char *file, int line, const char *what);
/* For the critical path: a small transfer from this PE to PE dst over
 * [start, end) (a semaphore increment), linked as a send and its landing. */
void tl__cp_remote(tl_ctx *tl, uint32_t dst, const char *what, sim_ps start, sim_ps end,
                   const char *file, int line);

/* Wait for tl's outstanding ops, charged to file:line (what names the
 * wait in the profile and the trace): a circular buffer's pop, a kernel's
 * or a thread's end. */
void tl__drain(tl_ctx *tl, const char *what, const char *file, int line);
/* The end of a kernel or a thread: no scope open (else a kernel error),
 * its stores and sends gone. */
void tl__kernel_end(tl_ctx *tl);
/* The kernel's end on the first core: wait for its threads to return. */
void tl__join_threads(tl_ctx *tl);
/* Free the PE's threads' records and contexts (after the run). */
void tl__threads_fini(tl_ctx *tl);

/* Note what the process is about to wait for (see struct tl_note). */
void tl__note_wait(tl_ctx *tl, enum tl_note_kind kind, const char *file, int line, const char *op,
                   const char *what, int tag);
/* Pay PE_CPU issue time for one op of type op; logs it. */
void tl__issue(tl_ctx *tl, enum topo_op op, const char *file, int line);
/* Report a kernel error at file:line on this PE and stop the run; does not
 * return. */
_Noreturn void tl__fail(tl_ctx *tl, const char *file, int line, const char *op, const char *fmt,
                        ...) __attribute__((format(printf, 5, 6)));

/* Where a data-mode input's values come from. */
enum tl_source {
        TL_SOURCE_NONE,              /* not filled (op_log mode, an output, a failed setup) */
        TL_SOURCE_FILE,              /* read from --inputs DIR/NAME.npy */
        TL_SOURCE_SEED,              /* generated from the seed */
};

/* An HBM tensor of the launch, made by the setup. */
struct tl_global {
        char name[NAME_MAX_LEN + 1]; /* file stem: NAME.npy (a name, base/names.h) */
        tl_io io;                    /* input, output or temporary */
        struct tl_tensor t;          /* the tensor (space TL_HBM, owner itself) */
        float *data;                 /* data mode storage, count floats */
        uint64_t count;              /* elements */
        enum tl_source source;       /* data mode: where an input's values came from */
        bool saved;                  /* written to --save-inputs */
        tl_home home;                /* where it lives in the cubes' HBM */
        int axis;                    /* TL_HOME_SHARDED: the axis split over the cubes */
        int64_t block;               /* TL_HOME_SHARDED: rows per block (0: one slice per cube) */
        const char *home_file;       /* the kernel's placement call (NULL: none, replicated) */
        int home_line;               /* and its line */
        uint32_t channel_plus1;      /* tl_setup_hbm_channel: the HBM channel + 1 holding it
                                      * (0: interleaved over the channels) */
        struct tl_copies *copies;    /* data mode, replicated over cubes, once written: the
                                        cubes' own copies (copies.c); NULL: one shared buffer */
        uint32_t *part;              /* data mode, sharded over the PEs' TCM, once touched: per
                                        element the site (tl_run.sites) of its first touch, whose
                                        PE holds it (0: none yet) */
};

/* A call that wrote a replicated tensor (data mode, copies.c). */
struct tl_site {
        const char *file;            /* the kernel's file */
        int line;                    /* and line */
        uint32_t rank;               /* the writing PE */
};

#define TL_MAX_GLOBALS 32
#define TL_MAX_PARAMS 64 /* parameters a kernel may declare */

/* A run: per-PE contexts, the setup's tensors, outputs, error state. */
struct tl_run {
        struct hw_sim *sim;          /* the machine */
        const struct tl_kernel *kernel; /* what runs */
        const struct tl_run_opts *opts; /* how */
        struct tl_ctx *ctx;          /* per PE, n_pes */
        void *args;                  /* the kernel's argument block */
        struct tl_global globals[TL_MAX_GLOBALS]; /* HBM tensors */
        int n_globals;               /* entries used */
        struct diag *diag;           /* kernel errors go here */
        struct rep_oplog oplog;      /* when opts->oplog_path */
        struct rep_trace trace;      /* when opts->trace_path */
        bool have_oplog, have_trace; /* which are open */
        struct rep_trace_hw trace_hw; /* the trace's machine-level tracks, when have_trace */
        uint8_t *trace_sel;          /* per PE: traced (--trace-pes), or NULL: all */
        struct rep_profile profile;  /* time per kernel source line */
        struct rep_work work;        /* the run's work, for its bounds */
        bool failed;                 /* a kernel error stopped the run */
        bool nonfinite_inputs;       /* data mode: an input holds a NaN or an infinity */
        struct ev_future never;      /* what a failed kernel waits on forever */
        struct tl_msg *free_msgs;    /* recycled messages */
        struct tl_msg *all_msgs;     /* every message made (owns them) */
        struct tl_inbox inbox;       /* landed messages not yet received */
        struct tl_sem_inc *free_incs; /* recycled semaphore increments */
        struct tl_sem_inc *all_incs; /* every one made (owns them) */
        uint64_t n_msgs_sent;        /* messages made by tl_send and tl_mcast */
        uint64_t next_flow;          /* trace flow ids */
        struct tl_site *sites;       /* data mode: writes to replicated tensors; [0] unused */
        uint32_t n_sites, cap_sites; /* the last index used, entries allocated */
        enum ev_run_result result;   /* how the loop ended */
        struct rep_cp *cp;           /* --critical-path: the dependence log, or NULL */
};

/* The kernel's view of machine s (tl_machine_info, tl_setup_machine). */
tl_machine tl__machine_of(const struct hw_sim *s);

/* Account an executed op (profile, work) and record it in the op_log and
 * the trace (if open); where the trace put it. */
struct rep_trace_ref tl__log(tl_ctx *tl, const struct rep_op *op);
/* tl__log of a record of component's op, start..end, on this PE. */
struct rep_trace_ref tl__log_engine(tl_ctx *tl, const char *component, const char *op,
                                    sim_ps start, sim_ps end, uint64_t bytes, uint64_t flops,
                                    uint64_t elem_cycles, const struct rep_param *p, unsigned n);
/* The same for a record placed after its call returned (an HBM copy, a
 * composite's stage): charged to the call at file:line (its profile entry
 * kept in *hint, or NULL), with no arrows (the PE_CPU has moved on to
 * other ops). */
struct rep_trace_ref tl__log_stage(tl_ctx *tl, const struct rep_op *op, const char *file,
                                   int line, struct rep_line_hint *hint);
/* The engine time and work of record op on engine e, charged to file:line
 * (its profile entry kept in *hint, or NULL); what tl__log_stage does
 * besides writing the record. */
void tl__account(tl_ctx *tl, enum rep_engine e, const struct rep_op *op, const char *file,
                 int line, struct rep_line_hint *hint);
/* The same for records never made: their engine time by engine and their
 * work, summed (a composite's stages when no record is written). */
void tl__account_sums(tl_ctx *tl, const sim_ps busy_ps[REP_ENG_COUNT], const struct rep_work *w,
                      const char *file, int line, struct rep_line_hint *hint);
/* The PE_CPU was blocked from since until now on what, at file:line:
 * charged to the line, and a "blocked on" slice in the trace. */
void tl__waited(tl_ctx *tl, sim_ps since, const char *what, const char *file, int line);

/* The built-in kernels (kernels/builtin.c), NULL-terminated. */
extern const struct tl_kernel *const tl_builtin_kernels[];
/* Check a kernel's definition (its parameters: a default in range, a
 * choice parameter's list of words); problems to d at where. 0 or -EINVAL. */
int tl_kernel_check(const struct tl_kernel *k, const char *where, struct diag *d);

/* Data mode follows placement (copies.c, docs/adr/0017). The storage PE
 * tl reads of tensor t (a view) for op at file:line: t itself, or t's
 * image over its cube's copy of a replicated HBM tensor in *tmp; a kernel
 * error when the region holds an element another cube's copy received and
 * this cube's never did. */
const tl_tensor *tl__data_read(tl_ctx *tl, const tl_tensor *t, tl_tensor *tmp, const char *file,
                               int line, const char *op);
/* The same for a write: a replicated tensor's cube gets its own copy
 * (copy on write) and the region records the write. */
tl_tensor *tl__data_write(tl_ctx *tl, tl_tensor *t, tl_tensor *tmp, const char *file, int line,
                          const char *op);
/* After the run: each written element of a replicated tensor from the copy
 * of the cube that wrote it last, into the tensor's data (the outputs). */
void tl__copies_gather(struct tl_run *r);
void tl__copies_free(struct tl_run *r);

/* Homes (home.c). The bytes of g on global cube c of n_cubes, with
 * page_bytes the interleave page; what the capacity check adds up. */
uint64_t tl__home_cube_bytes(const struct tl_global *g, uint32_t c, uint32_t n_cubes,
                             uint64_t page_bytes);
/* Where the HBM bytes of t (an HBM tensor or a view of one) live. */
void tl__hbm_span(const struct tl_run *r, const tl_tensor *t, struct hw_hbm_span *out);

/* Host side: parameters, tensors, inputs. Fills r->args and r->globals;
 * problems go to d (exit 2). 0 or -EINVAL. */
int tl_setup_run(struct tl_run *r, struct diag *d);
/* Data mode: write the outputs to opts->outputs_dir. */
int tl_write_outputs(struct tl_run *r, struct diag *d);
/* Extent of axis of input tensor's file under --inputs, or -1 when there
 * is none (tl_setup_input_dim). */
int64_t tl__input_dim(const struct tl_run *r, const char *tensor, int axis);
/* After the kernel's setup: the input files checked against the shapes
 * and, in data mode, every tensor's storage filled (inputs read or
 * generated, --save-inputs written); 0 or a negative errno, reported. */
int tl__load_files(struct tl_run *r, struct diag *d);

/* Data-mode checks (check.c). Before the run: every output has its
 * --expect file, of its shape (else -EINVAL); the inputs' non-finite
 * values are reported (count, first index). After it: so are the
 * outputs', and each output is compared with its --expect file; -1 when
 * one is out of tolerance or, with fail_on_nonfinite, a value of an input
 * or output is not finite. */
int tl__check_expect_files(struct tl_run *r, struct diag *d);
void tl__check_inputs(struct tl_run *r, struct diag *d);
int tl__check_data(struct tl_run *r, struct diag *d);
/* "[1, 2, 3]" into buf. */
void tl__shape_text(char *buf, size_t len, int ndim, const int64_t *shape);
/* Whether two shapes have the same rank and extents. */
bool tl__same_shape(int na, const int64_t *a, int nb, const int64_t *b);

/* Run kernel k on sim, which must be freshly built (tl_job_run does the
 * rest), with opts (borrowed for the run's life; tl_run_opts_default() for
 * none in particular). Problems (bad parameters: -EINVAL; kernel error or deadlock: -1)
 * go to d. */
int tl_run_kernel(struct hw_sim *sim, const struct tl_kernel *k, const struct tl_run_opts *opts,
                  struct tl_run *out, struct diag *d);
void tl_run_fini(struct tl_run *);
/* An op issued now whose engine times are known only once it is placed
 * later (docs/adr/0010): a composite, whose feed places a tile's stages as
 * its buffers free; an HBM copy, placed at the end of its instant with the
 * cube's other HBM copies of that instant. Until then its results are not
 * ready, and the scope's and the kernel's ends wait for it. */
#define TL_INFLIGHT_OUTS 3
struct tl_inflight {
        tl_ctx *tl;                  /* the PE's context */
        tl_tensor *outs[TL_INFLIGHT_OUTS]; /* owners of its results whose readiness is
                                              tracked, ready at its end (NULL: none) */
        int depth;                   /* scopes open at its issue */
        struct ev_future placed;     /* placed: end is known */
        sim_ps end;                  /* when its last engine work ends, once placed */
        struct tl_inflight *next;    /* in tl_ctx.inflight while not placed (newest first) */
        struct tl_inflight *prev;    /* the one before it there (NULL: the head), for an O(1)
                                        unlink: the oldest are placed first */
};
/* Issue f now with results outs (each ready now; NULL entries: none). */
void tl__inflight_begin(tl_ctx *, struct tl_inflight *f, tl_tensor *const outs[TL_INFLIGHT_OUTS]);
/* f is placed and ends at end: account it as an op ending then. */
void tl__inflight_placed(struct tl_inflight *f, sim_ps end);
/* A record of size bytes from p: a reused one (as it was left), or a new
 * one zeroed; out of memory fails op at file:line. */
void *tl__pool_get(tl_ctx *tl, struct tl_pool *p, size_t size, const char *file, int line,
                   const char *op);
/* Give rec (from p) back for reuse. */
void tl__pool_put(struct tl_pool *p, void *rec);
/* When t will be ready (now if it is); waits if an op in flight makes it
 * and its end is not known yet. */
sim_ps tl__ready_at(tl_ctx *, tl_tensor *t, const char *file, int line, const char *op);
/* Wait until every op issued with at least depth scopes open is placed
 * (scope end, kernel end). what names the waiter. */
void tl__wait_inflight(tl_ctx *, int depth, const char *what);

/* A new owner tensor in space (charged to scratch or TCM); storage in data
 * mode; ready at once. */
tl_tensor *tl__new_tensor(tl_ctx *tl, const char *file, int line, const char *op, tl_space space,
                          tl_dtype dt, int ndim, const int64_t *shape);
/* The elements of t (a checked tensor: no checks here, unlike tl_numel).
 * Tensors are made with checked shapes (check_shape): no overflow. */
static inline int64_t tl__elems(const tl_tensor *t)
{
        int64_t n = 1;
        for (int i = 0; i < t->ndim; i++)
                n *= t->shape[i];
        return n;
}
/* t (a tensor or handle) is dead: made in a scope of tl that has ended. */
static inline bool tl__struct_dead(const tl_ctx *tl, const tl_tensor *t)
{
        return t->scope_depth > 0 && (t->scope_depth > tl->n_scopes ||
                                      tl->scopes[t->scope_depth - 1].gen != t->scope_gen);
}
/* t (if any) becomes ready at end; the op counts toward the open scope. */
void tl__finish_at(tl_ctx *tl, tl_tensor *t, sim_ps end);
/* Data mode (copies.c): op at file:line of tl touches t, a view of a
 * launch tensor sharded over the PEs' TCM; each element is the part of
 * the first PE that touches it, and a touch of another PE's part is a
 * kernel error naming both lines (the machine has it in that PE's TCM).
 * Every operand comes here through tl__wait_ready. */
void tl__sharded_touch(tl_ctx *tl, const tl_tensor *t, const char *file, int line,
                       const char *op);
/* A kernel error unless dt is one of tl_dtype. */
void tl__check_dtype(tl_ctx *tl, tl_dtype dt, const char *file, int line, const char *op);
/* The PE whose kernel is running on this thread now, or NULL (host side). */
tl_ctx *tl__current(void);
/* Make r the run of this thread (NULL: none); returns the one it was. */
struct tl_run *tl__enter_run(struct tl_run *r);
/* A kernel error unless t is a live tensor (tl__check_tensor) and local
 * (TCM or scratch). */
void tl__need_local(tl_ctx *tl, const tl_tensor *t, const char *file, int line, const char *op,
                    const char *which);
/* How a tl_op is called: the form column of TL_OPS. */
enum tl__form {
        TL__FORM_NONE,               /* not a MATH op */
        TL__FORM_UNARY,              /* x -> f(x) */
        TL__FORM_BINARY,             /* a, b -> f(a, b), broadcasting */
        TL__FORM_REDUCE,             /* x -> reduced along one axis (kept as extent 1) */
        TL__FORM_SCALAR,             /* x, s -> f(x, s) */
        TL__FORM_TENSOR,             /* composite epilogue with a tensor operand */
        TL__FORM_OWN,                /* its own entry point */
};

/* Whether op is a value of TL_OPS. */
bool tl__op_valid(tl_op op);
/* The cost-table entry, the op_log name ("exp"), the enumerator's name
 * for messages ("TL_EXP") and the form of a valid tl_op. */
enum topo_op tl__math_type(tl_op op);
const char *tl__op_name(tl_op op);
const char *tl__op_id(tl_op op);
enum tl__form tl__op_form(tl_op op);
void tl__ctx_fini(tl_ctx *tl);
void tl__inbox_fini(struct tl_inbox *in);
/* Let go of m's payload: freed with its last message. */
void tl__msg_drop_payload(struct tl_msg *m);
/* At the kernel's end: every message sent was received, else a kernel
 * error (the count, the first sender's file:line, its receiving PE and
 * tag) and -1. */
int tl__inbox_check_empty(struct tl_run *r, struct diag *d);
/* st: the run's op counts, issue time and work so far, no profile
 * (runtime.c). */
void tl__run_counts(const struct tl_run *r, struct rep_run_stats *st);

/* Arena: bytes (16-aligned) or NULL; rollback frees all allocated since
 * pos was mark (poisoned under AddressSanitizer: a later access is
 * reported). */
void *tl__arena_alloc(tl_ctx *tl, size_t bytes);
void tl__arena_rollback(tl_ctx *tl, size_t mark);
/* Bytes of t's elements held as dt; as its own dtype. */
uint64_t tl__bytes_as(const tl_tensor *t, tl_dtype dt);
uint64_t tl__tensor_bytes(const tl_tensor *t);
/* Scratch scopes' memory side (the ops are tl_impl_scratch_scope_begin/end):
 * open a scope at file:line (a kernel error past TL_MAX_SCOPES); close s,
 * just popped: its arena, scratch bytes and tensor structs die. */
void tl__scope_open(tl_ctx *tl, const char *file, int line);
void tl__scope_close(tl_ctx *tl, struct tl_scope *s);
/* A struct of the PE's tensor pool for a composite's handle: magic
 * TL_HANDLE_MAGIC, handle_rec = rec; it lives and dies with the innermost
 * open scope like a tensor, so a handle whose scope ended is known as such
 * without reading its record (reused once placed). NULL: out of memory. */
tl_tensor *tl__new_handle(tl_ctx *tl, void *rec);

/* Data-mode kernels of the ops (compute.c). */
void tl__compute_math1(tl_math_op op, const tl_tensor *x, tl_tensor *out);
void tl__compute_math2(tl_math_op op, const tl_tensor *a, const tl_tensor *b, tl_tensor *out);
void tl__compute_scalar(tl_math_op op, const tl_tensor *x, float v, tl_tensor *out);
void tl__compute_reduce(tl_math_op op, const tl_tensor *x, int axis, tl_tensor *out);
void tl__compute_where(const tl_tensor *mask, const tl_tensor *a, const tl_tensor *b,
                       tl_tensor *out);
/* Each row (last axis) of x: x / sqrt(mean(x^2) + eps) * w, w broadcast
 * along the row (NULL: 1); out may be x. */
void tl__compute_rmsnorm(const tl_tensor *x, const tl_tensor *w, float eps, tl_tensor *out);
void tl__compute_dot(const tl_tensor *a, const tl_tensor *b, bool trans_b, tl_tensor *out);
/* dst = src rounded to round_to; a block float rounds dst row by row, in
 * blocks from each row's start (tl__check_block_start: a block of dst's
 * owner), and a row that ends inside a block of the owner pads the rest of
 * that block with zeros, as the packer writes a partial block. */
void tl__compute_copy(const tl_tensor *src, tl_tensor *dst, tl_dtype round_to);
void tl__compute_fill(tl_tensor *out, float v);
void tl__compute_mask_causal(const tl_tensor *x, int64_t offset, tl_tensor *out);
/* Round v to a value representable in dt (a block float: v as the largest
 * element of its block). */
float tl__round(float v, tl_dtype dt);
/* Is dt a block float (bfp8_b, bfp4_b)? */
bool tl__is_bfp(tl_dtype dt);
/* Is dt one of the dtypes (TL__DTYPES says which, for messages)? */
bool tl__dtype_known(tl_dtype dt);
#define TL__DTYPES "TL_FP32, TL_BF16, TL_FP16, TL_BFP8_B or TL_BFP4_B"
/* Elements of a block float's block (one shared exponent), along a row. */
#define TL_BFP_BLOCK 16
/* Round n elements at x (stride apart, one row) to the block float dt:
 * groups of TL_BFP_BLOCK from the first element (see tl.h). */
void tl__bfp_round(float *x, int64_t n, int64_t stride, tl_dtype dt);

/* Views and their owners' elements (layout.c). Do a and b share an
 * element of storage? */
bool tl__overlap(const tl_tensor *a, const tl_tensor *b);
/* Are a and b the same elements in the same order (one view twice)? */
bool tl__same_view(const tl_tensor *a, const tl_tensor *b);
/* A kernel error of op at file:line if operands a and b (named an, bn)
 * share an element; why says what that would break. */
void tl__check_apart(tl_ctx *tl, const char *file, int line, const char *op, const tl_tensor *a,
                     const char *an, const tl_tensor *b, const char *bn, const char *why);
/* A kernel error of op at file:line unless t (operand which), if a block
 * float view, starts each row of its last axis at a block edge of its
 * owner (a multiple of TL_BFP_BLOCK) and, if the owner's rows are not
 * whole blocks, ends it within the owner's row: what a write into t needs
 * (docs/adr/0019; a row ending inside a block pads it, tl__compute_copy). */
void tl__check_block_start(tl_ctx *tl, const char *file, int line, const char *op,
                           const tl_tensor *t, const char *which);

/* The setup calls under their own names, for kernel libraries built before
 * they became macros over tl__setup_* (which add the caller's file:line):
 * such a library loads and runs unchanged; its messages name the kernel
 * without a line. (The parentheses keep the macros from expanding.) */
TL_API tl_tensor *(tl_setup_tensor)(tl_setup *, const char *name, tl_io io, tl_dtype dt,
                                    int ndim, const int64_t *shape);
TL_API tl_tensor *(tl_setup_tensor_sharded)(tl_setup *, const char *name, tl_io io, tl_dtype dt,
                                            int ndim, const int64_t *shape);
TL_API void (tl_setup_replicate)(tl_setup *, tl_tensor *t);
TL_API void (tl_setup_shard)(tl_setup *, tl_tensor *t, int axis, int64_t block);
TL_API void (tl_setup_interleave)(tl_setup *, tl_tensor *t);

#endif
