/* report/critpath.c: the dependence log, the walk back along the critical
 * path and the what-if re-timing. See critpath.h and docs/adr/0028. */
#include "report/critpath.h"

#include <errno.h>
#include <stddef.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#ifdef __linux__
#include <sched.h>
#include <sys/mman.h>
#endif
#if defined(__x86_64__) && defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "base/jsonw.h"
#include "base/spool.h"
#include "report/profile.h"
#include "report/trace.h"

enum cp_kind {
        CP_ISSUE,                    /* a PE's issue time */
        CP_WAIT,                     /* a PE blocked */
        CP_NODE,                     /* an op record */
        CP_SIGNAL,                   /* a thread's push or pop on a circular buffer: an op
                                      * of no length, after its thread's last step */
};

/* Sites an entry can name (its site field's bits): a kernel has a few
 * hundred (lines x what is called there); past these the log is marked
 * out of memory. */
#define CP_SITE_BITS 18

/* An entry's ds and de when its times do not fit them: they are then in
 * rep_cp.longs (at 32K prefill, none). */
#define CP_LONG UINT32_MAX

/* An entry of the log: a step of a PE's timeline or an op (40 bytes: a
 * 32K prefill writes some nine million, 4.8 M of them steps). Its start
 * and end are kept as offsets (ent_s, ent_e): 32 bits, 4.3 ms, hold all
 * but a rare long wait or queue, whose times are kept aside. */
struct cp_ent {
        sim_ps a;                    /* step: its start; op: its issue (arrival) */
        uint32_t ds;                 /* op: its start (its first busy ps) - a; step: 0
                                      * (CP_LONG: in rep_cp.longs) */
        uint32_t de;                 /* its end - its start (CP_LONG: in rep_cp.longs) */
        uint32_t pe;                 /* the PE it is on */
        int32_t prev;                /* step: the PE's step before; op: the PE's last step
                                      * at its issue (-1: none) */
        int32_t dep;                 /* wait: the op that ended at its wake-up; op: the op of
                                      * its PE that ended at its start; a drain: its send
                                      * (-1: none) */
        union {
                struct {
                        uint32_t lat; /* an op without parts: its fixed latency, ps */
                        uint32_t tcm; /* and its TCM time past its engine's */
                };
                uint32_t parts;      /* has_parts: its index in cp->parts */
        };
        unsigned site : CP_SITE_BITS; /* its kernel line and name (cp->sites) */
        unsigned has_parts : 1;      /* split in parts, else: class cls, lat, tcm */
        unsigned kind : 2;           /* enum cp_kind */
        unsigned cls : 4;            /* an op's class (hw_dep_class) */
        unsigned stage : 1;          /* placed after its call returned: started at dep */
        unsigned drain : 1;          /* a receive's drain: dep is its send */
        unsigned trig : 1;           /* a stage: dep ended at its placement (a), not at s */
        unsigned thread : 4;         /* a wait or a signal: its thread on the PE (0: the
                                      * kernel; TL_MAX_THREADS is 8; CP_THREADS - 1: more) */
};
_Static_assert(HW_DEP_COUNT <= 16, "cp_ent's cls field");
#define CP_THREADS 16

/* Thread number t as kept in an entry. */
static unsigned thread_field(int t)
{
        return t < 0 ? 0 : t < CP_THREADS ? (unsigned)t : CP_THREADS - 1;
}

_Static_assert(sizeof(struct cp_ent) <= 40, "a log entry is 40 bytes");

/* The times of an entry whose offsets do not fit its ds and de. */
struct cp_long {
        size_t idx;                  /* the entry (rep_cp.longs are in its order) */
        sim_ps s, e;                 /* its start and end */
};

/* A kernel line and what was called or run there. */
struct cp_site {
        const char *file;            /* NULL: none */
        const char *what;            /* static name, or NULL */
        int line;
};

/* A segment of the path, [t0, t1) on one class. */
struct cp_seg {
        sim_ps t0, t1;               /* its interval */
        uint32_t pe;                 /* the PE */
        uint8_t cls;                 /* enum hw_dep_class or rep_cp_class */
        const char *kind;            /* "issue", "wait", "op", "queue", "transit", "launch" */
        const char *file;            /* kernel line (NULL: none) */
        int line;                    /* and line */
        const char *what;            /* op name, or NULL */
        int32_t ent;                 /* log entry it came from (-1: none) */
};

/* A step of the path from one PE to another. */
struct cp_hop {
        uint32_t pe;                 /* the PE that waited */
        uint32_t on_pe;              /* the PE whose op it waited on */
        int thread, on_thread;       /* a wait on a thread's signal: the threads (else -1) */
        const char *what;            /* that op ("send", "mcast") */
        const char *file;            /* its line */
        int line;
        sim_ps at;                   /* when that op ended */
};


struct cp_line {
        const char *file;
        int line;
        sim_ps ps;
};

/* An op's split when it is more than its class, a latency and TCM time. */
struct cp_parts {
        uint32_t p[HW_DEP_COUNT];    /* ps per class, summing to e - s */
        uint32_t pace, pace_alt;     /* hw_dep's: of p[pace_cls], paced; at the other rate */
        uint8_t pace_cls;            /* 0: no pacing */
        uint8_t alt_cls;             /* the class of pace_alt */
};

/* Ops per PE the look-up of ops by end time keeps: the PE's last ones,
 * newest first (at 32K prefill every producer found was among its PE's
 * last 32 ops; a set-associative index of 256 per PE, before, found the
 * same and missed the cache on most probes). */
#define CP_RECENT 32

/* The classes a what-if is made for: hw_dep's, but the fixed latencies. */
#define CP_WHATIF HW_DEP_LATENCY

/* The moves of an entry's end, one lane per class (CP_WHATIF of them,
 * the last lane unused): GCC's vectors, lane by lane the same IEEE
 * operations as one class at a time (the what-if is computed for every
 * entry of the log: a class at a time it was most of the analysis). */
typedef float cp_v4 __attribute__((vector_size(16)));
typedef int32_t cp_m4 __attribute__((vector_size(16)));
#define CP_LANES 8
_Static_assert(CP_WHATIF < CP_LANES, "a lane per what-if class");

struct cp_mv {
        cp_v4 v[CP_LANES / 4];       /* lanes 0..3, 4..7 */
};

/* An op (or a signal) among its PE's last: it goes into the log only when
 * something refers to it (a wait's producer, the op a later op queued
 * behind, a drain's send). Most ops nothing refers to (at 32K prefill 36%
 * of the ops, 2.6 million): they are no part of the walk or the what-if,
 * and are never written. */
struct cp_staged {
        /* Its first cache line: what a look-up, a fold and most commits read. */
        sim_ps e;                    /* its end */
        sim_ps s;                    /* its start */
        int32_t idx;                 /* its entry in the log (-1: not written yet) */
        struct cp_ent x;             /* the op (x.parts, x.ds and x.de unset: its split is
                                      * pp, its times s and e) */
        /* Its second: read only for an op split in parts, and a drain. */
        struct cp_parts pp __attribute__((aligned(64))); /* its split, when x.has_parts */
        sim_ps dep_end;              /* x.dep >= 0: that op's end */
        /* Its third: read when it is written to the log (commit). */
        struct cp_mv mv __attribute__((aligned(64))); /* the what-if's moves of the end of
                                      * its prev (none: 0) until it is written, then its
                                      * own (moves) */
        struct cp_mv mv_dep;         /* of its dep's end (none: 0) */
} __attribute__((aligned(64)));
_Static_assert(offsetof(struct cp_staged, pp) == 64 && offsetof(struct cp_staged, mv) == 128,
               "a staged op's lines");

/* A PE's look-up: a tag of the end of each of its last CP_RECENT ops
 * (slot (head - 1 - k) % CP_RECENT the k-th newest), in one cache line;
 * every PE's take 4 KiB, which stays in the cache. The ops, in
 * rep_cp.staged, are read only when a tag matches. */
struct cp_recent {
        uint16_t tag[CP_RECENT];     /* tag_of their ends */
};
_Static_assert(sizeof(struct cp_recent) == 64, "a PE's look-up is a cache line");

/* A PE's place in its look-up. */
struct cp_ring {
        uint32_t head;               /* the next slot to fill (mod CP_RECENT) */
        uint32_t last;               /* the slot + 1 of the last op the PE issued (head's
                                      * count; 0: none) */
};

/* The tag of an op's end: 16 bits of a hash (most look-ups find no op
 * ending then; 32 tags tell so in four compares). */
static uint16_t tag_of(sim_ps end)
{
        return (uint16_t)((end * UINT64_C(0x9e3779b97f4a7c15)) >> 48);
}

_Static_assert((CP_RECENT & (CP_RECENT - 1)) == 0 && CP_RECENT % 8 == 0,
               "the look-up's slots wrap by a mask and are read eight at a time");

/* A memo of recent sites before their table (site_memo): 2^CP_MEMO_BITS slots. */
#define CP_MEMO_BITS 8

/* A slot of the memo: a site and its index. */
struct cp_memo {
        const char *file;            /* the site's file */
        const char *what;            /* its name */
        int line;                    /* its line */
        uint32_t site;               /* its index + 1 (0: empty, or out of memory) */
};

/* What the run recorded, in the order it did: a cp_rec, followed, for an
 * op split in parts (split_of), by its cp_parts (CP_REC_PARTS bytes). */
enum cp_rec_kind {
        CP_REC_ISSUE,                /* rep_cp_issue */
        CP_REC_WAIT,                 /* rep_cp_wait */
        CP_REC_SIGNAL,               /* rep_cp_signal */
        CP_REC_OP,                   /* rep_cp_op, rep_cp_stage */
};

struct cp_rec {
        sim_ps t[3];                 /* issue, wait: a, b; signal: at; op: its arrival (its
                                      * issue, or its start if earlier), start, end */
        const char *file;            /* its line */
        const char *what;            /* its name (a wait: NULL) */
        int32_t line;
        uint32_t pe;                 /* the PE */
        uint32_t issuer;             /* an op: the PE that issued it */
        uint32_t lat, tcm;           /* an op not split in parts: its latency and TCM ps
                                      * (CP_SPLIT_NONE: 0) */
        uint8_t kind;                /* enum cp_rec_kind */
        uint8_t thread;              /* a wait, a signal: thread_field's */
        uint8_t cls;                 /* an op: its class */
        uint8_t stage : 1;           /* an op: placed after its call returned */
        uint8_t split : 2;           /* an op: enum cp_split */
};
_Static_assert(sizeof(struct cp_rec) % 16 == 0, "records follow one another 16-byte aligned "
               "(64 bytes on LP64: a cache line)");

/* The bytes a record's cp_parts takes (records stay 16-byte aligned). */
#define CP_REC_PARTS ((sizeof(struct cp_parts) + 15) & ~(size_t)15)

/* An op record held back (rep_cp.held), and its parts. */
struct cp_held {
        struct cp_rec r;
        struct cp_parts pp;
};

/* What the log's fold_stage will see as the last entry staged (its
 * cp->tail): nothing a stage can fold into; a stage of these attributes,
 * spanning [s0, e); or a stage whose fold depends on the log (a drain or
 * not), until the chain is broken by what is certainly none. */
enum cp_chain_state { CP_CHAIN_NONE, CP_CHAIN_OPEN, CP_CHAIN_UNKNOWN };

struct cp_chain {
        enum cp_chain_state state;   /* OPEN: the chain is the held record (rep_cp.held) */
        const char *file;            /* OPEN: the chain's line, PE and class */
        int line;
        uint32_t pe;
        uint8_t cls;
        sim_ps s0, e;                /* OPEN: its span so far */
};

/* Bytes of records gathered before they go to the spool. */
#define CP_OUT ((size_t)4096)

struct rep_cp {
        struct cp_chain chain;       /* the records' side of fold_stage */
        struct cp_held held;         /* the last op record, held back to fold into */
        bool held_on;                /* held is one */
        size_t n_out;                /* bytes of records in out */
        unsigned char out[CP_OUT] __attribute__((aligned(16))); /* records on their way to
                                      * the spool (put_rec, put_out) */
        struct spool *spool;         /* the run's records, built into the log (build) on a
                                      * thread of its own where the process may use two
                                      * processors (build_aside) */
        struct cp_ent *ents;         /* the log */
        size_t n, cap;
        size_t ahead_ents;           /* fault_ahead's mark in ents, bytes */
        struct cp_parts *parts;      /* op splits */
        size_t n_parts, cap_parts;
        size_t ahead_parts;          /* and in parts */
        struct cp_long *longs;       /* times of entries past ds and de's 32 bits */
        size_t n_longs, cap_longs;
        /* Per PE, its last ops and their ends: where a wait's producer
         * and the op an op queued behind are looked up. */
        struct cp_recent *recent;    /* n_pes of them, 64-byte aligned */
        struct cp_ring *ring;        /* and their places */
        struct cp_staged *staged;    /* and their ops, CP_RECENT a PE */
        struct cp_site *sites;       /* interned (file, line, what) */
        size_t n_sites, cap_sites;
        uint32_t *site_slots;        /* their index: entry + 1 (0: empty), a power of two */
        size_t cap_site_slots;
        struct cp_memo memo[1 << CP_MEMO_BITS]; /* recent sites, by a hash */
        const char *cls_of[4];       /* components seen last, by their address (class_of) */
        uint8_t cls[4];              /* and their classes */
        uint32_t n_pes;
        int32_t *last_step;          /* per PE: its last timeline step (-1: none) */
        struct cp_mv *step_mv;       /* per PE: the what-if's moves of its last step's end
                                      * (none: 0) */
        struct cp_staged *tail;      /* the op staged last, while nothing else was logged
                                      * after it (fold_stage), else NULL */
        bool oom;                    /* an entry was lost: no analysis */
        /* After rep_cp_analyse: */
        sim_ps target_start;         /* the kernel's start */
        sim_ps kernel_ps;            /* the kernel time */
        uint32_t end_pe;             /* the PE that ended last */
        struct cp_seg *segs;         /* the path, in time order */
        size_t n_segs, cap_segs;
        struct cp_hop *hops;         /* PE to PE steps, latest first */
        size_t n_hops, cap_hops;
        sim_ps by_class[REP_CP_COUNT];
        struct cp_line *lines;       /* by line, most time first */
        size_t n_lines;
        double whatif[REP_CP_COUNT]; /* estimated kernel time, class 2x faster (-1: none) */
        const sim_ps *exec_end;      /* per PE (the machine's), during analysis */
        const struct hw_sim *sim;    /* during analysis */
};

static const char *const class_names[REP_CP_COUNT] = {
        [HW_DEP_CPU] = "pe_cpu", [HW_DEP_DMA] = "pe_dma", [HW_DEP_GEMM] = "pe_gemm",
        [HW_DEP_MATH] = "pe_math", [HW_DEP_HBM] = "hbm_channel", [HW_DEP_NOC] = "noc",
        [HW_DEP_TCM] = "tcm", [HW_DEP_LATENCY] = "latency", [REP_CP_LAUNCH] = "launch",
        [REP_CP_WAIT] = "wait",
};

const char *rep_cp_class_name(int cls)
{
        return cls >= 0 && cls < REP_CP_COUNT ? class_names[cls] : "?";
}

/* The records' blocks: 1 MiB, eight of them. They are written past the
 * cache (put_out), so their size costs the simulation no cache; a block
 * handed over may wake the builder, which costs tens of microseconds on
 * a virtual machine (at 256 KiB blocks the wake-ups were 2% of the run's
 * samples at 32K prefill; 856 blocks of 1 MiB there). */
#define CP_BLOCK ((size_t)1 << 20)
#define CP_BLOCKS 8

static void build(void *ctx, const unsigned char *buf, size_t len);

/* Whether the log is built on a thread of its own: when the process may
 * run on more than one processor (a run pinned to one would only switch
 * between the two), unless CUBESIM_CP_INLINE is set to other than 0.
 * The log is the same either way: its records are built in the order
 * they were written. */
static bool build_aside(void)
{
        const char *e = getenv("CUBESIM_CP_INLINE");
        if (e && *e && strcmp(e, "0"))
                return false;
#ifdef __linux__
        cpu_set_t set;
        if (sched_getaffinity(0, sizeof set, &set) == 0)
                return CPU_COUNT(&set) > 1;
#endif
#ifdef _SC_NPROCESSORS_ONLN
        return sysconf(_SC_NPROCESSORS_ONLN) > 1;
#else
        return true;
#endif
}

struct rep_cp *rep_cp_new(uint32_t n_pes)
{
        struct rep_cp *cp = calloc(1, sizeof *cp);
        if (!cp)
                return NULL;
        cp->n_pes = n_pes;
        cp->last_step = malloc((n_pes ? n_pes : 1) * sizeof *cp->last_step);
        cp->step_mv = calloc(n_pes ? n_pes : 1, sizeof *cp->step_mv);
        size_t n_rec = n_pes ? n_pes : 1;
        cp->recent = aligned_alloc(64, n_rec * sizeof *cp->recent);
        cp->ring = calloc(n_rec, sizeof *cp->ring);
        cp->staged = aligned_alloc(64, n_rec * CP_RECENT * sizeof *cp->staged);
        cp->chain.state = CP_CHAIN_NONE;
        cp->spool = spool_new(CP_BLOCK, CP_BLOCKS, build_aside(), build, cp);
        if (!cp->last_step || !cp->step_mv || !cp->recent || !cp->ring || !cp->staged ||
            !cp->spool) {
                rep_cp_free(cp);
                return NULL;
        }
        for (uint32_t i = 0; i < n_pes; i++)
                cp->last_step[i] = -1;
        for (size_t i = 0; i < n_rec; i++) {
                for (int k = 0; k < CP_RECENT; k++) {
                        cp->recent[i].tag[k] = tag_of(SIM_PS_MAX);
                        cp->staged[i * CP_RECENT + (size_t)k].e = SIM_PS_MAX;
                        cp->staged[i * CP_RECENT + (size_t)k].idx = -1;
                }
        }
        return cp;
}

void rep_cp_free(struct rep_cp *cp)
{
        if (!cp)
                return;
        spool_free(cp->spool);       /* first: the records still to build, and its thread */
        free(cp->ents);
        free(cp->parts);
        free(cp->longs);
        free(cp->step_mv);
        free(cp->recent);
        free(cp->ring);
        free(cp->staged);
        free(cp->sites);
        free(cp->site_slots);
        free(cp->last_step);
        free(cp->segs);
        free(cp->hops);
        free(cp->lines);
        free(cp);
}

/* Room for one more of n in *v (cap entries of size bytes); false: none. */
static bool grow(void **v, size_t *cap, size_t n, size_t size)
{
        if (n < *cap)
                return true;
        size_t c = *cap ? *cap * 2 : 1024;
        void *p = realloc(*v, c * size);
        if (!p)
                return false;
        *v = p;
        *cap = c;
        return true;
}

/* Bytes of a log array faulted in ahead of its end, in one call: a page
 * fault a page was most of the flag's system time at 32K prefill. */
#define CP_AHEAD ((size_t)4 << 20)

/* Fault in up to CP_AHEAD bytes of array base (used of cap bytes in use)
 * past its end, and set *mark to when to do so again. Where the kernel
 * cannot (before Linux 5.14), the pages fault one by one as before. */
static void fault_ahead(void *base, size_t used, size_t cap, size_t *mark)
{
        *mark = used + CP_AHEAD / 2;
#ifdef __linux__
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23       /* Linux 5.14 */
#endif
        const uintptr_t page = 4096;
        uintptr_t lo = ((uintptr_t)base + used + page - 1) & ~(page - 1);
        uintptr_t hi = ((uintptr_t)base + (cap < used + CP_AHEAD ? cap : used + CP_AHEAD)) &
                       ~(page - 1);
        if (hi > lo)
                (void)madvise((void *)lo, hi - lo, MADV_POPULATE_WRITE);
#else
        (void)base;
        (void)cap;
#endif
}

/* fault_ahead when n of cap elements of size bytes pass *mark. */
static inline void ahead(void *base, size_t n, size_t cap, size_t size, size_t *mark)
{
        if (n * size >= *mark)
                fault_ahead(base, n * size, cap * size, mark);
}

/* Entry x, the log's idx-th, is [s, e): its times kept aside (set_times).
 * False when out of memory (the log is then marked incomplete). */
static __attribute__((noinline, cold)) bool set_long(struct rep_cp *cp, struct cp_ent *x,
                                                      size_t idx, sim_ps s, sim_ps e)
{
        x->ds = x->de = CP_LONG;
        if (!grow((void **)&cp->longs, &cp->cap_longs, cp->n_longs, sizeof *cp->longs)) {
                cp->oom = true;
                return false;
        }
        cp->longs[cp->n_longs++] = (struct cp_long){ .idx = idx, .s = s, .e = e };
        return true;
}

/* Entry x, the log's idx-th, is [s, e) from a (a <= s <= e): its offsets,
 * or its times in cp->longs. False when out of memory (the log is then
 * marked incomplete). Every entry comes here: inline, the rare long one
 * apart. */
static inline __attribute__((always_inline)) bool
set_times(struct rep_cp *cp, struct cp_ent *x, size_t idx, sim_ps a, sim_ps s, sim_ps e)
{
        x->a = a;
        if (__builtin_expect(s - a < CP_LONG && e - s < CP_LONG, 1)) {
                x->ds = (uint32_t)(s - a);
                x->de = (uint32_t)(e - s);
                return true;
        }
        return set_long(cp, x, idx, s, e);
}

/* The times kept aside of entry x of the log (its ds is CP_LONG). */
static const struct cp_long *long_of(const struct rep_cp *cp, const struct cp_ent *x)
{
        size_t idx = (size_t)(x - cp->ents), lo = 0, hi = cp->n_longs;
        while (hi - lo > 1) {
                size_t mid = lo + (hi - lo) / 2;
                if (cp->longs[mid].idx <= idx)
                        lo = mid;
                else
                        hi = mid;
        }
        return &cp->longs[lo];
}

/* The start of entry x of the log. */
static inline sim_ps ent_s(const struct rep_cp *cp, const struct cp_ent *x)
{
        if (__builtin_expect(x->ds == CP_LONG, 0))
                return long_of(cp, x)->s;
        return x->a + x->ds;
}

/* The end of entry x of the log. */
static inline sim_ps ent_e(const struct rep_cp *cp, const struct cp_ent *x)
{
        if (__builtin_expect(x->ds == CP_LONG, 0))
                return long_of(cp, x)->e;
        return x->a + x->ds + x->de;
}

/* Store the n bytes at src (a multiple of 4) to dst (4-byte aligned),
 * past the cache where the machine can: the log is written once, in
 * order, and read only by the analysis at the end; half a gigabyte of it
 * at 32K prefill went through the cache and pushed out the simulator's
 * own data. */
static inline __attribute__((always_inline)) void put_stream(void *dst, const void *src, size_t n)
{
#if defined(__x86_64__) && defined(__SSE2__)
        size_t k = 0;
#pragma GCC unroll 8
        for (; k + 8 <= n; k += 8) {
                long long w;
                memcpy(&w, (const char *)src + k, 8);
                _mm_stream_si64((long long *)((char *)dst + k), w);
        }
        if (k < n) {
                int w;
                memcpy(&w, (const char *)src + k, 4);
                _mm_stream_si32((int *)((char *)dst + k), w);
        }
#else
        memcpy(dst, src, n);
#endif
}

static struct cp_mv moves(const struct cp_ent *x, sim_ps s, sim_ps e, const struct cp_parts *pp,
                          sim_ps dep_end, const struct cp_mv *dp, const struct cp_mv *dd);

/* Staged op st's entry in the log, written now if it is not yet; -1 when
 * out of memory (the log is then marked incomplete). What it refers to
 * was written before it (its PE's last step, its dep: looked up, so
 * written, when it was staged), so the log stays in topological order,
 * and the what-if's moves of its end follow from theirs, kept with it
 * when it was staged: they are worked out now, once, as the log is
 * written (st->mv). */
static int32_t commit(struct rep_cp *cp, struct cp_staged *st)
{
        if (st->idx >= 0)
                return st->idx;
        if (cp->oom || cp->n >= INT32_MAX ||
            !grow((void **)&cp->ents, &cp->cap, cp->n, sizeof *cp->ents)) {
                cp->oom = true;
                return -1;
        }
        struct cp_ent x = st->x;
        if (x.has_parts) {
                if (!grow((void **)&cp->parts, &cp->cap_parts, cp->n_parts, sizeof *cp->parts)) {
                        cp->oom = true;
                        return -1;
                }
                put_stream(&cp->parts[cp->n_parts], &st->pp, sizeof st->pp);
                x.parts = (uint32_t)cp->n_parts++;
                ahead(cp->parts, cp->n_parts, cp->cap_parts, sizeof *cp->parts, &cp->ahead_parts);
        }
        if (!set_times(cp, &x, cp->n, x.a, st->s, st->e))
                return -1;
        put_stream(&cp->ents[cp->n], &x, sizeof x);
        st->idx = (int32_t)cp->n++;
        st->mv = moves(&x, st->s, st->e, &st->pp, st->dep_end, &st->mv, &st->mv_dep);
        ahead(cp->ents, cp->n, cp->cap, sizeof *cp->ents, &cp->ahead_ents);
        return st->idx;
}

/* The latest op of pe that ended at end, if among its last CP_RECENT
 * (written to the log now, if it was not), or NULL (also when it could
 * not be written: the log is then marked incomplete). Most look-ups find
 * none: the tags are compared eight at a time first. */
static struct cp_staged *op_ending(struct rep_cp *cp, uint32_t pe, sim_ps end)
{
        typedef uint16_t cp_t8 __attribute__((vector_size(16)));
        typedef uint64_t cp_u2 __attribute__((vector_size(16)));
        const struct cp_recent *rc = &cp->recent[pe];
        uint16_t t = tag_of(end);
        cp_t8 key = { 0 }, any = { 0 };
        key += t;
        for (int k = 0; k < CP_RECENT; k += 8) {
                cp_t8 v;
                memcpy(&v, &rc->tag[k], sizeof v);
                any |= (cp_t8)(v == key);
        }
        cp_u2 a2 = (cp_u2)any;
        if (!(a2[0] | a2[1]))
                return NULL;
        struct cp_staged *op = &cp->staged[(size_t)pe * CP_RECENT];
        uint32_t head = cp->ring[pe].head;
        for (uint32_t k = 1; k <= CP_RECENT; k++) {
                uint32_t at = (head - k) & (CP_RECENT - 1);
                if (rc->tag[at] == t && op[at].e == end)
                        return commit(cp, &op[at]) >= 0 ? &op[at] : NULL;
        }
        return NULL;
}

/* A slot for a new op of pe, its newest (its entry then set by the
 * caller, its end by set_end). */
static struct cp_staged *stage_op(struct rep_cp *cp, uint32_t pe)
{
        struct cp_ring *rg = &cp->ring[pe];
        struct cp_staged *st = &cp->staged[(size_t)pe * CP_RECENT + (rg->head++ & (CP_RECENT - 1))];
        /* The slot after it, written next on this PE: on its way to the
         * cache by then (it was last written CP_RECENT ops ago). */
        __builtin_prefetch(&cp->staged[(size_t)pe * CP_RECENT + (rg->head & (CP_RECENT - 1))], 1);
        st->idx = -1;
        cp->tail = st;
        return st;
}

/* Staged op st of pe ends at end. */
static void set_end(struct rep_cp *cp, uint32_t pe, struct cp_staged *st, sim_ps end)
{
        size_t at = (size_t)(st - &cp->staged[(size_t)pe * CP_RECENT]);
        st->e = end;
        cp->recent[pe].tag[at] = tag_of(end);
}

/* The last op PE pe issued, written now if it was not (NULL: none, no
 * longer among its last CP_RECENT, or not written: out of memory). */
static struct cp_staged *last_op(struct rep_cp *cp, uint32_t pe)
{
        const struct cp_ring *rg = &cp->ring[pe];
        if (!rg->last || rg->head - (rg->last - 1) > CP_RECENT)
                return NULL;
        struct cp_staged *st =
                &cp->staged[(size_t)pe * CP_RECENT + ((rg->last - 1) & (CP_RECENT - 1))];
        return commit(cp, st) >= 0 ? st : NULL;
}

/* No moves: of no entry. */
static const struct cp_mv cp_mv_none;

static size_t site_hash(const char *file, const char *what, int line)
{
        uint64_t h = ((uint64_t)(uintptr_t)file * UINT64_C(0x9e3779b97f4a7c15)) ^
                     ((uint64_t)(uintptr_t)what * UINT64_C(0xbf58476d1ce4e5b9)) ^ (uint64_t)line;
        return (size_t)(h ^ h >> 31);
}

/* The index of (file, line, what), made on first use; UINT32_MAX: no memory. */
static uint32_t site_of(struct rep_cp *cp, const char *file, int line, const char *what)
{
        if (2 * (cp->n_sites + 1) > cp->cap_site_slots) {
                size_t cap = cp->cap_site_slots ? cp->cap_site_slots * 2 : 256;
                uint32_t *sl = calloc(cap, sizeof *sl);
                if (!sl)
                        return UINT32_MAX;
                for (size_t k = 0; k < cp->n_sites; k++) {
                        const struct cp_site *t = &cp->sites[k];
                        size_t i = site_hash(t->file, t->what, t->line) & (cap - 1);
                        while (sl[i])
                                i = (i + 1) & (cap - 1);
                        sl[i] = (uint32_t)k + 1;
                }
                free(cp->site_slots);
                cp->site_slots = sl;
                cp->cap_site_slots = cap;
        }
        size_t mask = cp->cap_site_slots - 1;
        size_t i = site_hash(file, what, line) & mask;
        for (; cp->site_slots[i]; i = (i + 1) & mask) {
                const struct cp_site *t = &cp->sites[cp->site_slots[i] - 1];
                if (t->file == file && t->what == what && t->line == line)
                        return cp->site_slots[i] - 1;
        }
        if (!grow((void **)&cp->sites, &cp->cap_sites, cp->n_sites, sizeof *cp->sites))
                return UINT32_MAX;
        cp->sites[cp->n_sites] = (struct cp_site){ .file = file, .what = what, .line = line };
        cp->site_slots[i] = (uint32_t)++cp->n_sites;
        return (uint32_t)(cp->n_sites - 1);
}

/* site_of through the memo: a run logs from a few hundred sites, over and
 * over (every op record and timeline step comes here). */
static inline uint32_t site_memo(struct rep_cp *cp, const char *file, int line, const char *what)
{
        struct cp_memo *m = &cp->memo[(((uintptr_t)what ^ (uintptr_t)line) *
                                       UINT64_C(0x9e3779b97f4a7c15)) >> (64 - CP_MEMO_BITS)];
        if (m->what != what || m->line != line || m->file != file || !m->site)
                *m = (struct cp_memo){ .file = file, .what = what, .line = line,
                                       .site = site_of(cp, file, line, what) + 1 };
        return m->site - 1;
}

/* A new entry (its fields unset), or NULL (the log is then marked
 * incomplete). */
static struct cp_ent *new_ent(struct rep_cp *cp)
{
        if (cp->oom || cp->n >= INT32_MAX ||
            !grow((void **)&cp->ents, &cp->cap, cp->n, sizeof *cp->ents)) {
                cp->oom = true;
                return NULL;
        }
        ahead(cp->ents, cp->n + 1, cp->cap, sizeof *cp->ents, &cp->ahead_ents);
        return &cp->ents[cp->n++];   /* the caller sets every field */
}

/* A new entry and, in *site, its site's index; NULL when out of memory
 * (the log is then marked incomplete). */
static struct cp_ent *site_ent(struct rep_cp *cp, const char *file, int line, const char *what,
                               uint32_t *site)
{
        *site = site_memo(cp, file, line, what);
        struct cp_ent *x = *site >= (UINT32_C(1) << CP_SITE_BITS) ? NULL : new_ent(cp);
        if (!x)
                cp->oom = true;
        return x;
}

/* A step of PE pe's timeline (thread: a wait's, as thread_field keeps it). */
static void step(struct rep_cp *cp, enum cp_kind kind, uint32_t pe, unsigned thread, sim_ps a,
                 sim_ps b, const char *file, int line, const char *what)
{
        cp->tail = NULL;
        /* Its producer first: written to the log, if it was not, before it. */
        const struct cp_staged *d = kind == CP_WAIT ? op_ending(cp, pe, b) : NULL;
        uint32_t site;
        struct cp_ent *at = site_ent(cp, file, line, what, &site);
        if (!at)
                return;
        struct cp_ent x = { .site = site, .pe = pe, .prev = cp->last_step[pe],
                            .dep = d ? d->idx : -1, .kind = kind, .thread = thread };
        if (!set_times(cp, &x, cp->n - 1, a, a, b))
                return;
        put_stream(at, &x, sizeof x);
        cp->step_mv[pe] = moves(&x, a, b, NULL, d ? d->e : 0,
                                x.prev >= 0 ? &cp->step_mv[pe] : &cp_mv_none,
                                d ? &d->mv : &cp_mv_none);
        cp->last_step[pe] = (int32_t)(cp->n - 1);
}

/* Thread `thread` (thread_field's) of PE pe signalled at `at` (rep_cp_signal). */
static void signal_op(struct rep_cp *cp, uint32_t pe, unsigned thread, sim_ps at,
                      const char *file, int line, const char *what)
{
        uint32_t site = site_memo(cp, file, line, what);
        if (site >= (UINT32_C(1) << CP_SITE_BITS)) {
                cp->oom = true;
                return;
        }
        /* The latest op ending then: the producer of a wait woken now. */
        struct cp_staged *st = stage_op(cp, pe);
        st->s = at;
        st->x = (struct cp_ent){ .a = at, .site = site, .pe = pe,
                                 .prev = cp->last_step[pe], .dep = -1, .kind = CP_SIGNAL,
                                 .cls = HW_DEP_CPU, .thread = thread };
        st->mv = st->x.prev >= 0 ? cp->step_mv[pe] : cp_mv_none;
        st->mv_dep = cp_mv_none;
        set_end(cp, pe, st, at);
}

/* How split_of keeps an op's split. */
enum cp_split {
        CP_SPLIT_NONE,               /* it fits neither: a part or a pacing past 2^32 ps
                                      * (4.3 ms); the op is left all of its class */
        CP_SPLIT_ENT,                /* in its entry: its class, a latency and TCM time */
        CP_SPLIT_PARTS,              /* beside it, in a cp_parts */
};

/* An op's split as split_of kept it. */
struct cp_split_of {
        enum cp_split how;
        uint32_t lat, tcm;           /* but CP_SPLIT_PARTS: its entry's (CP_SPLIT_NONE: 0) */
        const struct cp_parts *pp;   /* CP_SPLIT_PARTS: its parts */
};

/* The split d of an op of class x->cls as an entry keeps it: in x, or in
 * *pp (which is not touched otherwise: a staged op's is in a cache line
 * of its own). Every op record comes here: the checks are ORs, not a
 * loop. */
static enum cp_split split_of(struct cp_ent *x, struct cp_parts *pp, const struct hw_dep *d)
{
        _Static_assert(HW_DEP_COUNT == 8 && HW_DEP_CPU == 0 && HW_DEP_NOC == 5 &&
                       HW_DEP_TCM == 6 && HW_DEP_LATENCY == 7, "split_of's classes");
        const sim_ps *p = d->part;
        if ((p[0] | p[1] | p[2] | p[3] | p[4] | p[5] | p[6] | p[7]) > UINT32_MAX)
                return CP_SPLIT_NONE;
        /* Time in a class other than its own, the latency and TCM. */
        unsigned c = x->cls;
        sim_ps other = p[0] | p[4] | p[5] | (c != 1 ? p[1] : 0) | (c != 2 ? p[2] : 0) |
                       (c != 3 ? p[3] : 0);
        if (!d->pace_cls && !other) {
                x->lat = (uint32_t)p[HW_DEP_LATENCY];
                x->tcm = (uint32_t)p[HW_DEP_TCM];
                return CP_SPLIT_ENT;
        }
        if (d->pace > UINT32_MAX || d->pace_alt > UINT32_MAX)
                return CP_SPLIT_NONE;
        for (int k = 0; k < HW_DEP_COUNT; k++)
                pp->p[k] = (uint32_t)p[k];
        pp->pace = (uint32_t)d->pace;
        pp->pace_alt = (uint32_t)d->pace_alt;
        pp->pace_cls = d->pace_cls;
        pp->alt_cls = d->alt_cls;
        return CP_SPLIT_PARTS;
}

static void parts_of(const struct cp_ent *x, const struct cp_parts *pp, sim_ps total,
                     sim_ps p[HW_DEP_COUNT]);

/* Add xs's pacing to pp's when it is of the same kind (or pp has none). */
static void merge_pace(struct cp_parts *pp, const struct cp_parts *xs)
{
        if (xs->pace_cls && (!pp->pace_cls || (pp->pace_cls == xs->pace_cls &&
                                               pp->alt_cls == xs->alt_cls))) {
                pp->pace += xs->pace;
                pp->pace_alt += xs->pace_alt;
                pp->pace_cls = xs->pace_cls;
                pp->alt_cls = xs->alt_cls;
        }
}

/* Add parts xs, and their pacing, to pp. */
static void add_parts(struct cp_parts *pp, const struct cp_parts *xs)
{
        for (int c = 0; c < HW_DEP_COUNT; c++)
                pp->p[c] += xs->p[c];
        merge_pace(pp, xs);
}

/* Add to op w's split (its lat and tcm, or pp when it has parts), over
 * total ps, that of the op after it, sp over x_total ps: w then spans
 * both. w may come to have parts: pp is room for them. */
static void add_split(struct cp_ent *w, struct cp_parts *pp, sim_ps total,
                      const struct cp_split_of *sp, sim_ps x_total)
{
        struct cp_ent x = { .kind = CP_NODE, .cls = w->cls, .stage = 1 };
        bool x_parts = sp->how == CP_SPLIT_PARTS;
        if (!x_parts) {
                x.lat = sp->lat;
                x.tcm = sp->tcm;
        }
        if (!w->has_parts && !x_parts) {
                w->lat += x.lat;     /* both < 2^32 and their sum < e - s */
                w->tcm += x.tcm;
        } else if (w->has_parts && x_parts) {
                add_parts(pp, sp->pp);
        } else {
                /* w's split, and x's, beside w. */
                sim_ps pw[HW_DEP_COUNT], px[HW_DEP_COUNT];
                parts_of(w, pp, total, pw);
                if (x_parts)
                        for (int c = 0; c < HW_DEP_COUNT; c++)
                                px[c] = sp->pp->p[c];
                else
                        parts_of(&x, NULL, x_total, px);
                if (!w->has_parts) {
                        *pp = (struct cp_parts){ .pace_cls = 0 };
                        w->has_parts = 1;
                }
                for (int c = 0; c < HW_DEP_COUNT; c++)
                        pp->p[c] = (uint32_t)(pw[c] + px[c]);
                if (x_parts)
                        merge_pace(pp, sp->pp);
        }
}

/* A composite's stage that starts where the last entry, w, a stage of the
 * same class and call, ends (a chain of MATH stages) is folded into w,
 * which keeps its name: the same times and dependences, one entry instead
 * of many. Its dependence would be w (the PE's op ending at its start:
 * the newest is w), so nothing else is looked up, and it is never written
 * to the log. True when folded. */
static bool fold_stage(struct rep_cp *cp, const struct cp_split_of *sp, uint32_t pe,
                       enum hw_dep_class cls, uint32_t site, sim_ps start, sim_ps end)
{
        struct cp_staged *ws = cp->tail;
        if (!ws || ws->idx >= 0)
                return false;        /* none, or something refers to it */
        struct cp_ent *w = &ws->x;
        if (w->kind != CP_NODE || !w->stage || w->drain || w->cls != cls || w->pe != pe ||
            ws->e != start || end - ws->s > UINT32_MAX ||
            (w->site != site && (cp->sites[w->site].file != cp->sites[site].file ||
                                 cp->sites[w->site].line != cp->sites[site].line)))
                return false;
        add_split(w, &ws->pp, ws->e - ws->s, sp, end - start);
        set_end(cp, pe, ws, end);
        cp->ring[pe].last = cp->ring[pe].head; /* w is pe's newest */
        return true;
}

/* An op record's class from its component (rep_engine_of's engine). */
static enum hw_dep_class class_named(const char *c)
{
        switch (rep_engine_of(c)) {
        case REP_ENG_DMA: return HW_DEP_DMA;
        case REP_ENG_GEMM: return HW_DEP_GEMM;
        case REP_ENG_MATH: return HW_DEP_MATH;
        default: return HW_DEP_CPU;
        }
}

/* class_named, for components that are static names (every op record
 * comes here): the last of each slot, by its address, first. */
static enum hw_dep_class class_of(struct rep_cp *cp, const char *c)
{
        size_t k = ((uintptr_t)c >> 3) & 3;
        if (cp->cls_of[k] != c || !c) {
                cp->cls_of[k] = c;
                cp->cls[k] = (uint8_t)class_named(c);
        }
        return (enum hw_dep_class)cp->cls[k];
}

/* An op record of class cls on PE pe, issued by issuer, arrived at a
 * (its issue, or its start if earlier), from the site of file:line:what,
 * over [start, end), split as sp says. */
static void log_op(struct rep_cp *cp, const struct cp_split_of *sp, sim_ps a, uint32_t issuer,
                   uint32_t pe, enum hw_dep_class cls, const char *file, int line,
                   const char *what, sim_ps start, sim_ps end, bool stage)
{
        uint32_t site = site_memo(cp, file, line, what);
        if (site >= (UINT32_C(1) << CP_SITE_BITS) || cp->oom) {
                cp->oom = true;
                return;
        }
        if (stage && pe == issuer && fold_stage(cp, sp, pe, cls, site, start, end))
                return;
        /* What it refers to, written to the log (if it was not) now, before
         * it takes the oldest slot of its PE's look-up. */
        int32_t prev = -1;
        const struct cp_staged *d = NULL;
        bool trig = false;
        if (pe != issuer) {
                d = last_op(cp, issuer); /* a drain: the send just recorded */
        } else {
                prev = cp->last_step[pe];
                if (stage || start > a)
                        d = op_ending(cp, pe, start);
                if (stage && !d && a < start) {
                        /* Placed by its feed when an op of the PE ended. */
                        d = op_ending(cp, pe, a);
                        trig = d != NULL;
                }
        }
        /* What it reads of them, before its slot (maybe d's) is taken. */
        int32_t dep = d ? d->idx : -1;
        sim_ps dep_end = d ? d->e : 0;
        struct cp_mv mv_dep = d ? d->mv : cp_mv_none;
        struct cp_staged *st = stage_op(cp, pe);
        st->mv = prev >= 0 ? cp->step_mv[pe] : cp_mv_none;
        st->mv_dep = mv_dep;
        st->dep_end = dep_end;
        /* Written in place (a copy from the stack stalled on its bit-fields). */
        st->s = start;
        st->x = (struct cp_ent){ .a = a, .pe = pe, .prev = prev, .dep = dep,
                                 .site = site, .kind = CP_NODE, .cls = cls, .stage = stage,
                                 .drain = pe != issuer && dep >= 0, .trig = trig };
        if (pe == issuer)
                cp->ring[pe].last = cp->ring[pe].head;
        if (sp->how == CP_SPLIT_PARTS) {
                st->pp = *sp->pp;
                st->x.has_parts = 1;
        } else {
                st->x.lat = sp->lat; /* 0 when CP_SPLIT_NONE */
                st->x.tcm = sp->tcm;
        }
        set_end(cp, pe, st, end);
}

/* ---- the run's records, built into the log beside it ---- */

/* Stream the records gathered in cp->out to the spool, past the cache:
 * the run never reads them again, and the log's builder reads them once,
 * on its own processor. */
static void put_out(struct rep_cp *cp)
{
        if (!cp->n_out)
                return;
        put_stream(spool_put(cp->spool, cp->n_out), cp->out, cp->n_out);
        cp->n_out = 0;
}

/* Gather record r (and its parts, pp, when it is split so). */
static void put_rec(struct rep_cp *cp, const struct cp_rec *r, const struct cp_parts *pp)
{
        bool parts = r->split == CP_SPLIT_PARTS;
        size_t n = sizeof *r + (parts ? CP_REC_PARTS : 0);
        if (cp->n_out + n > CP_OUT)
                put_out(cp);
        memcpy(cp->out + cp->n_out, r, sizeof *r);
        if (parts && pp)
                memcpy(cp->out + cp->n_out + sizeof *r, pp, sizeof *pp);
        cp->n_out += n;
}

/* Write the op record held back for the chain to fold into, if any. */
static void put_held(struct rep_cp *cp)
{
        if (cp->held_on)
                put_rec(cp, &cp->held.r, &cp->held.pp);
        cp->held_on = false;
}

/* A step or a signal: after what is held back, and no chain for a stage
 * to fold into (fold_stage has no tail after it). */
static void put_step(struct rep_cp *cp, enum cp_rec_kind kind, uint32_t pe, unsigned thread,
                     sim_ps a, sim_ps b, const char *file, int line, const char *what)
{
        put_held(cp);
        cp->chain.state = CP_CHAIN_NONE;
        struct cp_rec r = { .t = { a, b }, .file = file, .what = what, .line = line, .pe = pe,
                            .kind = (uint8_t)kind, .thread = (uint8_t)thread,
                            .split = CP_SPLIT_NONE };
        put_rec(cp, &r, NULL);
}

/* Build len bytes of records at buf into the log (the spool's consumer). */
static void build(void *ctx, const unsigned char *buf, size_t len)
{
        struct rep_cp *cp = ctx;
        for (size_t at = 0; at < len;) {
                const struct cp_rec *r = (const void *)(buf + at);
                at += sizeof *r;
                struct cp_split_of sp = { .how = (enum cp_split)r->split, .lat = r->lat,
                                          .tcm = r->tcm };
                if (sp.how == CP_SPLIT_PARTS) {
                        sp.pp = (const void *)(r + 1);
                        at += CP_REC_PARTS;
                }
                switch ((enum cp_rec_kind)r->kind) {
                case CP_REC_ISSUE:
                case CP_REC_WAIT:
                        step(cp, r->kind == CP_REC_ISSUE ? CP_ISSUE : CP_WAIT, r->pe, r->thread,
                             r->t[0], r->t[1], r->file, r->line, r->what);
                        break;
                case CP_REC_SIGNAL:
                        signal_op(cp, r->pe, r->thread, r->t[0], r->file, r->line, r->what);
                        break;
                case CP_REC_OP:
                        log_op(cp, &sp, r->t[0], r->issuer, r->pe, (enum hw_dep_class)r->cls,
                               r->file, r->line, r->what, r->t[1], r->t[2], r->stage);
                        break;
                }
        }
#if defined(__x86_64__) && defined(__SSE2__)
        _mm_sfence();                /* the log's streamed stores (put_stream) */
#endif
}

void rep_cp_issue(struct rep_cp *cp, uint32_t pe, sim_ps a, sim_ps b, const char *file, int line,
                  const char *what)
{
        if (pe < cp->n_pes && b > a)
                put_step(cp, CP_REC_ISSUE, pe, 0, a, b, file, line, what);
}

void rep_cp_wait(struct rep_cp *cp, uint32_t pe, int thread, sim_ps a, sim_ps b, const char *file,
                 int line)
{
        if (pe < cp->n_pes && b > a)
                put_step(cp, CP_REC_WAIT, pe, thread_field(thread), a, b, file, line, NULL);
}

void rep_cp_signal(struct rep_cp *cp, uint32_t pe, int thread, sim_ps at, const char *file,
                   int line, const char *what)
{
        if (cp && pe < cp->n_pes)
                put_step(cp, CP_REC_SIGNAL, pe, thread_field(thread), at, 0, file, line, what);
}

/* Fold the op after held record r, split sp, ending at end, into r
 * (add_split: as fold_stage would). */
static void merge_held(struct cp_rec *r, struct cp_parts *pp, const struct cp_split_of *sp,
                       sim_ps end)
{
        struct cp_ent w = { .kind = CP_NODE, .cls = r->cls, .stage = 1,
                            .has_parts = r->split == CP_SPLIT_PARTS };
        if (!w.has_parts) {
                w.lat = r->lat;
                w.tcm = r->tcm;
        }
        add_split(&w, pp, r->t[2] - r->t[1], sp, end - r->t[2]);
        if (w.has_parts) {
                r->split = CP_SPLIT_PARTS;
        } else {
                r->split = CP_SPLIT_ENT;
                r->lat = w.lat;
                r->tcm = w.tcm;
        }
        r->t[2] = end;
}

/* An op record of class cls (rep_cp_op, rep_cp_stage: inline in each).
 * It is held back until the next record: a composite's chain of stages
 * that the log would fold into one entry (fold_stage) is folded here,
 * into the held record (half the op records at 32K prefill). A chain
 * this cannot tell (after a stage issued by another PE: a drain, or not)
 * the log folds, so the log is the same either way. */
static inline __attribute__((always_inline)) void
record_op(struct rep_cp *cp, const struct hw_sim *s, uint32_t issuer, uint32_t pe,
          enum hw_dep_class cls, const char *file, int line, const char *what, sim_ps start,
          sim_ps end, bool stage)
{
        /* Its split, as its entry will keep it (s->dep, when it describes
         * this op). */
        struct cp_ent x = { .cls = cls };
        struct cp_parts xs;
        enum cp_split how = s->dep.start == start && s->dep.end == end && end > start
                                    ? split_of(&x, &xs, &s->dep)
                                    : CP_SPLIT_NONE;
        struct cp_chain *ch = &cp->chain;
        if (stage && pe == issuer && ch->state == CP_CHAIN_OPEN && ch->pe == pe &&
            ch->cls == cls && ch->e == start && end - ch->s0 <= UINT32_MAX &&
            ch->file == file && ch->line == line) {
                struct cp_rec *r = &cp->held.r;
                if (r->split == CP_SPLIT_PARTS && how == CP_SPLIT_PARTS) {
                        add_parts(&cp->held.pp, &xs); /* the common case, as add_split */
                        r->t[2] = end;
                } else {
                        struct cp_split_of sp = { .how = how, .lat = x.lat, .tcm = x.tcm,
                                                  .pp = &xs };
                        merge_held(r, &cp->held.pp, &sp, end);
                }
                ch->e = end;
                return;
        }
        put_held(cp);
        sim_ps now = ev_now(&s->ev);
        cp->held.r = (struct cp_rec){ .t = { now < start ? now : start, start, end },
                                      .file = file, .what = what, .line = line, .pe = pe,
                                      .issuer = issuer, .lat = x.lat, .tcm = x.tcm,
                                      .kind = CP_REC_OP, .cls = (uint8_t)cls, .stage = stage,
                                      .split = how };
        if (how == CP_SPLIT_PARTS)
                cp->held.pp = xs;
        cp->held_on = true;
        if (!stage)
                ch->state = CP_CHAIN_NONE;
        else if (pe != issuer)
                ch->state = CP_CHAIN_UNKNOWN; /* a drain or not: the log knows */
        else if (ch->state != CP_CHAIN_UNKNOWN)
                *ch = (struct cp_chain){ .state = CP_CHAIN_OPEN, .file = file, .line = line,
                                         .pe = pe, .cls = (uint8_t)cls, .s0 = start, .e = end };
}

void rep_cp_op(struct rep_cp *cp, const struct hw_sim *s, uint32_t issuer, const struct rep_op *op,
               const char *file, int line, bool stage)
{
        uint32_t pe = op->pe_index;
        if (pe >= cp->n_pes || issuer >= cp->n_pes || op->end_ps < op->start_ps)
                return;
        enum hw_dep_class cls = class_of(cp, op->component);
        if (cls == HW_DEP_CPU)
                return;              /* the PE_CPU's own records: its issue steps */
        record_op(cp, s, issuer, pe, cls, file, line, op->op, op->start_ps, op->end_ps, stage);
}

void rep_cp_stage(struct rep_cp *cp, const struct hw_sim *s, uint32_t pe, const char *component,
                  const char *what, sim_ps start, sim_ps end, const char *file, int line)
{
        if (pe >= cp->n_pes || end < start)
                return;
        record_op(cp, s, pe, pe, class_of(cp, component), file, line, what, start, end, true);
}

/* ---- the walk ---- */

/* Op x's time [s, e), total ps, by class. */
static void parts_of(const struct cp_ent *x, const struct cp_parts *pp, sim_ps total,
                     sim_ps p[HW_DEP_COUNT])
{
        memset(p, 0, sizeof(sim_ps) * HW_DEP_COUNT);
        if (x->has_parts) {
                for (int c = 0; c < HW_DEP_COUNT; c++)
                        p[c] = pp->p[c];
                return;
        }
        sim_ps fixed = (sim_ps)x->lat + x->tcm;
        p[HW_DEP_LATENCY] = x->lat;
        p[HW_DEP_TCM] += x->tcm;
        p[x->cls] += total > fixed ? total - fixed : 0;
}

/* The split of op x's [s, e), scaled to len ps: the largest part takes
 * the rounding. */
static void split(const struct rep_cp *cp, const struct cp_ent *x, sim_ps len,
                  sim_ps out[HW_DEP_COUNT])
{
        memset(out, 0, sizeof(sim_ps) * HW_DEP_COUNT);
        sim_ps total = ent_e(cp, x) - ent_s(cp, x);
        if (total == 0) {
                out[x->cls] = len;
                return;
        }
        sim_ps p[HW_DEP_COUNT];
        parts_of(x, x->has_parts ? &cp->parts[x->parts] : NULL, total, p);
        sim_ps sum = 0;
        int big = 0;
        for (int c = 0; c < HW_DEP_COUNT; c++) {
                out[c] = (sim_ps)((unsigned __int128)p[c] * len / total);
                sum += out[c];
                if (p[c] > p[big])
                        big = c;
        }
        out[big] += len - sum;
}

static void emit(struct rep_cp *cp, sim_ps t0, sim_ps t1, int cls, const char *kind,
                 uint32_t pe, int32_t ent)
{
        if (t1 <= t0)
                return;
        const struct cp_ent *x = ent >= 0 ? &cp->ents[ent] : NULL;
        struct cp_seg *last = cp->n_segs ? &cp->segs[cp->n_segs - 1] : NULL;
        cp->by_class[cls] += t1 - t0;
        /* Backwards: the last segment follows this one. */
        if (last && last->ent == ent && ent >= 0 && last->cls == cls && last->t0 == t1 &&
            last->kind == kind) {
                last->t0 = t0;
                return;
        }
        if (!grow((void **)&cp->segs, &cp->cap_segs, cp->n_segs, sizeof *cp->segs)) {
                cp->oom = true;
                return;
        }
        const struct cp_site *st = x ? &cp->sites[x->site] : NULL;
        cp->segs[cp->n_segs++] = (struct cp_seg){ .t0 = t0, .t1 = t1, .pe = pe, .cls = (uint8_t)cls,
                                                   .kind = kind, .file = st ? st->file : NULL,
                                                   .line = st ? st->line : 0,
                                                   .what = st ? st->what : NULL, .ent = ent };
}

/* [t0, t1) of op ent, split like its own time. */
static void emit_split(struct rep_cp *cp, int32_t ent, sim_ps t0, sim_ps t1, const char *kind)
{
        if (t1 <= t0)
                return;
        const struct cp_ent *x = &cp->ents[ent];
        sim_ps part[HW_DEP_COUNT];
        split(cp, x, t1 - t0, part);
        /* Latest first (the walk goes back): fixed latency last in time. */
        sim_ps t = t1;
        for (int c = HW_DEP_COUNT - 1; c >= 0; c--) {
                if (!part[c])
                        continue;
                emit(cp, t - part[c], t, c, kind, x->pe, ent);
                t -= part[c];
        }
}

/* PE pe (its thread, or -1) waited on op p. */
static void hop(struct rep_cp *cp, uint32_t pe, int thread, const struct cp_ent *p)
{
        if (!grow((void **)&cp->hops, &cp->cap_hops, cp->n_hops, sizeof *cp->hops)) {
                cp->oom = true;
                return;
        }
        const struct cp_site *st = &cp->sites[p->site];
        bool sig = p->kind == CP_SIGNAL;
        cp->hops[cp->n_hops++] = (struct cp_hop){ .pe = pe, .on_pe = p->pe,
                                                  .thread = sig ? thread : -1,
                                                  .on_thread = sig ? (int)p->thread : -1,
                                                  .what = st->what,
                                                  .file = st->file, .line = st->line,
                                                  .at = ent_e(cp, p) };
}

static sim_ps min_ps(sim_ps a, sim_ps b) { return a < b ? a : b; }
static sim_ps max_ps(sim_ps a, sim_ps b) { return a > b ? a : b; }

static void walk(struct rep_cp *cp)
{
        const struct cp_ent *E = cp->ents;
        uint32_t pe = cp->end_pe;
        sim_ps t = cp->target_start + cp->kernel_ps;
        int32_t i = cp->last_step[pe];
        bool at_op = false;
        for (;;) {
                if (at_op) {
                        /* Op i, entered at t <= its end. */
                        const struct cp_ent *x = &E[i];
                        sim_ps s = min_ps(ent_s(cp, x), t);
                        if (x->drain) {
                                const struct cp_ent *p = &E[x->dep];
                                sim_ps lo = min_ps(max_ps(s, ent_e(cp, p)), t);
                                emit(cp, lo, t, x->cls, "op", x->pe, i);
                                sim_ps tp = min_ps(ent_e(cp, p), lo);
                                emit(cp, tp, lo, HW_DEP_NOC, "transit", x->pe, i);
                                if (p->pe != x->pe)
                                        hop(cp, x->pe, -1, p);
                                t = tp;
                                i = x->dep;
                                continue;
                        }
                        emit_split(cp, i, s, t, "op");
                        t = s;
                        if (x->dep >= 0 && x->trig) {
                                sim_ps a = min_ps(x->a, t);
                                emit_split(cp, i, a, t, "queue");
                                t = min_ps(ent_e(cp, &E[x->dep]), a);
                                i = x->dep;
                                continue;
                        }
                        if (x->dep >= 0) {
                                sim_ps tq = min_ps(ent_e(cp, &E[x->dep]), t);
                                emit_split(cp, i, tq, t, "queue");
                                t = tq;
                                i = x->dep;
                                continue;
                        }
                        sim_ps a = min_ps(x->a, t);
                        emit_split(cp, i, a, t, "queue");
                        t = a;
                        pe = x->pe;
                        i = x->prev;
                        at_op = false;
                        continue;
                }
                /* PE pe's timeline at t, from step i back. */
                while (i >= 0 && E[i].a >= t)
                        i = E[i].prev;
                if (i < 0) {
                        emit(cp, cp->target_start, t, REP_CP_LAUNCH, "launch", pe, -1);
                        return;
                }
                const struct cp_ent *x = &E[i];
                if (ent_e(cp, x) < t) {
                        emit(cp, ent_e(cp, x), t, REP_CP_WAIT, "wait", pe, i);
                        t = ent_e(cp, x);
                }
                if (x->kind == CP_ISSUE) {
                        emit(cp, x->a, t, HW_DEP_CPU, "issue", pe, i);
                        t = x->a;
                        i = x->prev;
                        continue;
                }
                if (x->dep >= 0 && ent_e(cp, &E[x->dep]) > x->a) {
                        sim_ps tx = min_ps(ent_e(cp, &E[x->dep]), t);
                        emit(cp, tx, t, REP_CP_WAIT, "wait", pe, i);
                        if (E[x->dep].kind == CP_SIGNAL)
                                hop(cp, pe, x->thread, &E[x->dep]);
                        t = tx;
                        i = x->dep;
                        at_op = true;
                        continue;
                }
                emit(cp, x->a, t, REP_CP_WAIT, "wait", pe, i);
                t = x->a;
                i = x->prev;
        }
}

/* ---- what-if: re-time the log forward with one class 2x faster ---- */

static float lane(const struct cp_mv *m, int c)
{
        return m->v[c / 4][c % 4];
}

static void set_lane(struct cp_mv *m, int c, float f)
{
        m->v[c / 4][c % 4] = f;
}

/* a > b ? a : b, lane by lane. */
static cp_v4 vmax(cp_v4 a, cp_v4 b)
{
        cp_m4 gt = a > b;
        return (cp_v4)((gt & (cp_m4)a) | (~gt & (cp_m4)b));
}

/* k in lane c, 0 in the others. */
static struct cp_mv one_lane(int c, float k)
{
        struct cp_mv m = { { { 0 } } };
        if (c >= 0 && c < CP_WHATIF)
                set_lane(&m, c, k);
        return m;
}

/* How op x's own time [s, e) changes with each class 2x faster (<= 0);
 * its mean factor over its split (for a queue behind ops like it) in kq. */
static struct cp_mv own_change(const struct cp_ent *x, sim_ps total, const struct cp_parts *pp,
                               struct cp_mv *kq)
{
        struct cp_mv p = { { { 0 } } }, d;
        if (x->has_parts) {
                for (int c = 0; c < CP_WHATIF; c++)
                        set_lane(&p, c, (float)pp->p[c]);
        } else {
                /* As parts_of: its latency, TCM time and the rest its class's. */
                sim_ps fixed = (sim_ps)x->lat + x->tcm, rest = total > fixed ? total - fixed : 0;
                set_lane(&p, HW_DEP_TCM, (float)(sim_ps)x->tcm);
                if (x->cls < CP_WHATIF)
                        set_lane(&p, x->cls, (float)(x->cls == HW_DEP_TCM ? x->tcm + rest : rest));
        }
        for (int h = 0; h < CP_LANES / 4; h++)
                d.v[h] = -0.5f * p.v[h];
        if (x->has_parts && pp->pace_cls) {
                /* Paced at the slower of two rates: the slower one after. */
                int c = pp->pace_cls;
                float paced = (float)pp->pace * 0.5f;
                float other = (float)pp->pace_alt * (pp->alt_cls == c ? 0.5f : 1.0f);
                if (c < CP_WHATIF && other > paced)
                        set_lane(&d, c, lane(&d, c) + ((other > (float)pp->pace ? (float)pp->pace
                                                                               : other) - paced));
        }
        if (total) {
                float t = (float)total;
                for (int h = 0; h < CP_LANES / 4; h++)
                        kq->v[h] = 1.0f + d.v[h] / t;
        } else {
                for (int h = 0; h < CP_LANES / 4; h++)
                        kq->v[h] = (cp_v4){ 1.0f, 1.0f, 1.0f, 1.0f };
                if (x->cls < CP_WHATIF)
                        set_lane(kq, x->cls, 0.5f);
        }
        return d;
}

/* How entry x's end moves with each class 2x faster, from the moves of
 * its prev (dp) and its dep (dd), x being [s, e) split as its entry or pp
 * says, and its dep ending at dep_end. */
static struct cp_mv moves(const struct cp_ent *x, sim_ps s, sim_ps e, const struct cp_parts *pp,
                          sim_ps dep_end, const struct cp_mv *dp, const struct cp_mv *dd)
{
        struct cp_mv v;
        if (x->kind == CP_ISSUE) {
                struct cp_mv k = one_lane(HW_DEP_CPU, 0.5f * (float)(e - x->a));
                for (int h = 0; h < CP_LANES / 4; h++)
                        v.v[h] = dp->v[h] - k.v[h];
                return v;
        }
        if (x->kind == CP_WAIT) {
                /* Woken by its producer's end, or on its own. */
                if (!(x->dep >= 0 && dep_end > x->a))
                        return *dp;
                float w = (float)(e - x->a);
                for (int h = 0; h < CP_LANES / 4; h++)
                        v.v[h] = vmax(dp->v[h] - w, dd->v[h]);
                return v;
        }
        if (x->drain) {
                sim_ps transit = s > dep_end ? s - dep_end : 0;
                sim_ps tail = e - max_ps(s, dep_end);
                struct cp_mv kn = one_lane(HW_DEP_NOC, 0.5f * (float)transit);
                struct cp_mv kt = one_lane(x->cls, 0.5f * (float)tail);
                for (int h = 0; h < CP_LANES / 4; h++)
                        v.v[h] = dd->v[h] - kn.v[h] - kt.v[h];
                return v;
        }
        struct cp_mv kq, own = own_change(x, e - s, pp, &kq);
        float queue = (float)(s - x->a);
        /* Its start moves with what it waited for: the op it queued
         * behind, or its issue and its queue. A stage placed when an op
         * ended (trig) that starts later waited for what the log does not
         * have (its operands' landing, a TCM bank, a gap in its engine's
         * calendar): that wait is kept as it was, not scaled like the
         * stage's own work (scaled, 2x GEMM on gqa_prefill_short was
         * estimated 10% too fast). */
        for (int h = 0; h < CP_LANES / 4; h++) {
                cp_v4 start;
                if (x->dep >= 0 && (x->trig || x->stage))
                        start = dd->v[h];
                else if (x->dep >= 0)
                        start = vmax(dp->v[h] - queue, dd->v[h]);
                else
                        start = dp->v[h] - (1.0f - kq.v[h]) * queue;
                v.v[h] = start + own.v[h];
        }
        return v;
}

/* The kernel time with each class c 2x faster, in out[c]: each PE's end
 * moves as its last step's end does (the moves of every entry follow
 * from those of its prev and its dep, and were worked out as the log was
 * written, forward, in its order: commit, step). */
static void retime(const struct rep_cp *cp, double out[CP_WHATIF])
{
        for (int c = 0; c < CP_WHATIF; c++) {
                double end = (double)cp->target_start;
                for (uint32_t p = 0; p < cp->n_pes; p++) {
                        double f = (double)cp->exec_end[p] +
                                   (cp->last_step[p] >= 0 ? lane(&cp->step_mv[p], c) : 0);
                        if (f > end)
                                end = f;
                }
                out[c] = end - (double)cp->target_start;
        }
}

static int line_cmp(const void *a, const void *b)
{
        const struct cp_line *x = a, *y = b;
        if (x->ps != y->ps)
                return x->ps < y->ps ? 1 : -1;
        int c = strcmp(x->file ? x->file : "", y->file ? y->file : "");
        return c ? c : (x->line > y->line) - (x->line < y->line);
}

static int line_key_cmp(const void *a, const void *b)
{
        const struct cp_line *x = a, *y = b;
        int c = strcmp(x->file ? x->file : "", y->file ? y->file : "");
        return c ? c : (x->line > y->line) - (x->line < y->line);
}

static int by_lines(struct rep_cp *cp)
{
        cp->lines = malloc((cp->n_segs ? cp->n_segs : 1) * sizeof *cp->lines);
        if (!cp->lines)
                return -ENOMEM;
        size_t n = 0;
        for (size_t i = 0; i < cp->n_segs; i++)
                cp->lines[n++] = (struct cp_line){ .file = cp->segs[i].file,
                                                   .line = cp->segs[i].line,
                                                   .ps = cp->segs[i].t1 - cp->segs[i].t0 };
        qsort(cp->lines, n, sizeof *cp->lines, line_key_cmp);
        size_t m = 0;
        for (size_t i = 0; i < n; i++) {
                if (m && !line_key_cmp(&cp->lines[m - 1], &cp->lines[i]))
                        cp->lines[m - 1].ps += cp->lines[i].ps;
                else
                        cp->lines[m++] = cp->lines[i];
        }
        qsort(cp->lines, m, sizeof *cp->lines, line_cmp);
        cp->n_lines = m;
        return 0;
}

int rep_cp_analyse(struct rep_cp *cp, const struct hw_sim *s)
{
        put_held(cp);
        put_out(cp);
        cp->chain.state = CP_CHAIN_NONE;
        spool_drain(cp->spool);
        if (cp->oom)
                return -ENOMEM;
        sim_ps *ends = malloc((s->n_pes ? s->n_pes : 1) * sizeof *ends);
        if (!ends)
                return -ENOMEM;
        cp->target_start = s->target_start_ps;
        cp->end_pe = 0;
        sim_ps end = 0;
        for (uint32_t p = 0; p < s->n_pes && p < cp->n_pes; p++) {
                ends[p] = s->pes[p].exec_end_ps;
                if (ends[p] > end) {
                        end = ends[p];
                        cp->end_pe = p;
                }
        }
        cp->kernel_ps = end > cp->target_start ? end - cp->target_start : 0;
        cp->exec_end = ends;
        cp->sim = s;
        walk(cp);
        /* Backwards to time order. */
        for (size_t i = 0; i < cp->n_segs / 2; i++) {
                struct cp_seg tmp = cp->segs[i];
                cp->segs[i] = cp->segs[cp->n_segs - 1 - i];
                cp->segs[cp->n_segs - 1 - i] = tmp;
        }
        double wi[CP_WHATIF];
        for (int c = 0; c < REP_CP_COUNT; c++)
                cp->whatif[c] = -1;
        retime(cp, wi);
        for (int c = 0; c < CP_WHATIF; c++)
                cp->whatif[c] = wi[c];
        int rc = by_lines(cp);
        cp->exec_end = NULL;
        cp->sim = NULL;
        free(ends);
        return rc < 0 ? rc : cp->oom ? -ENOMEM : 0;
}

sim_ps rep_cp_kernel_ps(const struct rep_cp *cp)
{
        return cp->kernel_ps;
}

/* ---- output ---- */

/* Written in pieces, not as jansson values: a long path's segments as
 * values cost many times their bytes to build, print and free (at 4K
 * prefill, 1,852 segments were 66 M instructions, a sixth of the flag's). */
static void put_json(struct jsonw_out *o, const void *ctx)
{
        const struct rep_cp *cp = ctx;
        jsonw_out_open(o, NULL, '{');
        jsonw_out_int(o, "kernel_ps", (long long)cp->kernel_ps);
        jsonw_out_open(o, "by_class", '{');
        for (int c = 0; c < REP_CP_COUNT; c++)
                jsonw_out_int(o, class_names[c], (long long)cp->by_class[c]);
        jsonw_out_close(o, '}');
        jsonw_out_open(o, "by_line", '[');
        for (size_t i = 0; i < cp->n_lines; i++) {
                jsonw_out_open(o, NULL, '{');
                jsonw_out_str(o, "file", cp->lines[i].file ? cp->lines[i].file : "");
                jsonw_out_int(o, "line", cp->lines[i].line);
                jsonw_out_int(o, "ps", (long long)cp->lines[i].ps);
                jsonw_out_close(o, '}');
        }
        jsonw_out_close(o, ']');
        jsonw_out_open(o, "segments", '[');
        for (size_t i = 0; i < cp->n_segs; i++) {
                const struct cp_seg *g = &cp->segs[i];
                jsonw_out_open(o, NULL, '{');
                jsonw_out_int(o, "pe", g->pe);
                jsonw_out_str(o, "class", class_names[g->cls]);
                jsonw_out_str(o, "kind", g->kind);
                if (g->what)
                        jsonw_out_str(o, "op", g->what);
                if (g->file) {
                        jsonw_out_str(o, "file", g->file);
                        jsonw_out_int(o, "line", g->line);
                }
                jsonw_out_int(o, "start_ps", (long long)g->t0);
                jsonw_out_int(o, "end_ps", (long long)g->t1);
                jsonw_out_close(o, '}');
        }
        jsonw_out_close(o, ']');
        jsonw_out_open(o, "chain", '[');
        for (size_t i = cp->n_hops; i-- > 0;) {
                const struct cp_hop *h = &cp->hops[i];
                jsonw_out_open(o, NULL, '{');
                jsonw_out_int(o, "pe", h->pe);
                jsonw_out_int(o, "waited_on_pe", h->on_pe);
                if (h->thread >= 0) {
                        jsonw_out_int(o, "thread", h->thread);
                        jsonw_out_int(o, "waited_on_thread", h->on_thread);
                }
                jsonw_out_str(o, "op", h->what ? h->what : "");
                jsonw_out_str(o, "file", h->file ? h->file : "");
                jsonw_out_int(o, "line", h->line);
                jsonw_out_int(o, "at_ps", (long long)h->at);
                jsonw_out_close(o, '}');
        }
        jsonw_out_close(o, ']');
        jsonw_out_open(o, "what_if_2x_kernel_ps", '{');
        for (int c = 0; c < REP_CP_COUNT; c++)
                if (cp->whatif[c] >= 0)
                        jsonw_out_int(o, class_names[c], (long long)(cp->whatif[c] + 0.5));
        jsonw_out_close(o, '}');
        jsonw_out_close(o, '}');
}

int rep_cp_json_print(const struct rep_cp *cp, FILE *f, json_t *summary, int indent)
{
        return jsonw_print_with(f, summary, indent, "critical_path", put_json, cp);
}

static int seg_len_cmp(const void *a, const void *b)
{
        const struct cp_seg *x = a, *y = b;
        sim_ps lx = x->t1 - x->t0, ly = y->t1 - y->t0;
        if (lx != ly)
                return lx < ly ? 1 : -1;
        return (x->t0 > y->t0) - (x->t0 < y->t0);
}

static double us(sim_ps ps)
{
        return (double)ps / 1e6;
}

static const char *base_name(const char *file)
{
        const char *slash = file ? strrchr(file, '/') : NULL;
        return slash ? slash + 1 : file ? file : "?";
}

void rep_cp_text(const struct rep_cp *cp, FILE *out)
{
        double k = cp->kernel_ps ? 100.0 / (double)cp->kernel_ps : 0;
        fprintf(out, "  critical path (back from PE %u's end to the kernel start: %zu segments, "
                "%zu steps between PEs):\n", cp->end_pe, cp->n_segs, cp->n_hops);
        fprintf(out, "    by class (us, %% of the kernel time):\n");
        for (int c = 0; c < REP_CP_COUNT; c++)
                if (cp->by_class[c])
                        fprintf(out, "      %-12s %12.3f  %5.1f%%\n", class_names[c],
                                us(cp->by_class[c]), k * (double)cp->by_class[c]);
        size_t nl = cp->n_lines < 5 ? cp->n_lines : 5;
        if (nl)
                fprintf(out, "    by kernel source line (top %zu of %zu):\n", nl, cp->n_lines);
        for (size_t i = 0; i < nl; i++) {
                char place[256];
                if (cp->lines[i].file)
                        snprintf(place, sizeof place, "%s:%d", base_name(cp->lines[i].file),
                                 cp->lines[i].line);
                else
                        snprintf(place, sizeof place, "(launch)");
                fprintf(out, "      %-36s %12.3f  %5.1f%%\n", place, us(cp->lines[i].ps),
                        k * (double)cp->lines[i].ps);
        }
        struct cp_seg *v = malloc((cp->n_segs ? cp->n_segs : 1) * sizeof *v);
        if (v && cp->n_segs) {
                memcpy(v, cp->segs, cp->n_segs * sizeof *v);
                qsort(v, cp->n_segs, sizeof *v, seg_len_cmp);
                size_t ns = cp->n_segs < 5 ? cp->n_segs : 5;
                fprintf(out, "    longest segments:\n");
                for (size_t i = 0; i < ns; i++) {
                        char place[256] = "";
                        if (v[i].file)
                                snprintf(place, sizeof place, " at %s:%d", base_name(v[i].file),
                                         v[i].line);
                        fprintf(out, "      %.3f us  PE %u %s %s%s%s%s (%.3f..%.3f us)\n",
                                us(v[i].t1 - v[i].t0), v[i].pe, v[i].kind, class_names[v[i].cls],
                                v[i].what ? " " : "", v[i].what ? v[i].what : "", place,
                                us(v[i].t0), us(v[i].t1));
                }
        }
        free(v);
        if (cp->n_hops) {
                size_t nh = cp->n_hops < 8 ? cp->n_hops : 8;
                fprintf(out, "    chain across PEs and threads (latest first, %zu of %zu):\n",
                        nh, cp->n_hops);
                for (size_t i = 0; i < nh; i++) {
                        const struct cp_hop *h = &cp->hops[i];
                        const char *what = h->what ? h->what : "op";
                        if (h->thread >= 0)
                                fprintf(out, "      thread t%d of PE %u waited on thread t%d's %s "
                                        "at %s:%d (%.3f us)\n", h->thread, h->pe, h->on_thread,
                                        what, base_name(h->file), h->line, us(h->at));
                        else
                                fprintf(out, "      PE %u waited on PE %u's %s at %s:%d (ended "
                                        "%.3f us)\n", h->pe, h->on_pe, what, base_name(h->file),
                                        h->line, us(h->at));
                }
        }
        int most = -1;
        for (int c = 0; c < REP_CP_COUNT; c++)
                if (cp->whatif[c] >= 0 && (most < 0 || cp->whatif[c] < cp->whatif[most]))
                        most = c;
        fprintf(out, "    what-if, one class 2x faster (the recorded graph re-timed; an "
                "estimate):\n");
        for (int c = 0; c < REP_CP_COUNT; c++) {
                if (cp->whatif[c] < 0)
                        continue;
                double d = cp->kernel_ps ? 100.0 * (cp->whatif[c] - (double)cp->kernel_ps) /
                                                   (double)cp->kernel_ps
                                         : 0;
                fprintf(out, "      %-12s %12.3f us  %+6.1f%%\n", class_names[c],
                        cp->whatif[c] / 1e6, d);
        }
        if (most >= 0 && cp->kernel_ps && cp->whatif[most] < (double)cp->kernel_ps)
                fprintf(out, "    a 2x faster %s moves the kernel time most (estimated %+.1f%%)\n",
                        class_names[most],
                        100.0 * (cp->whatif[most] - (double)cp->kernel_ps) / (double)cp->kernel_ps);
}

void rep_cp_trace(const struct rep_cp *cp, struct rep_trace *t, uint32_t pid)
{
        rep_trace_name(t, pid, -1, "critical path", pid);
        rep_trace_name(t, pid, 0, "path", 0);
        struct rep_lanes lanes = { 0 };
        for (size_t i = 0; i < cp->n_segs; i++) {
                const struct cp_seg *g = &cp->segs[i];
                char name[160];
                snprintf(name, sizeof name, "PE %u %s %s%s%s", g->pe, g->kind, class_names[g->cls],
                         g->what ? " " : "", g->what ? g->what : "");
                uint32_t opened = rep_trace_slice(t, &lanes, pid, 0, name, g->t0, g->t1, 0, 1);
                if (opened)
                        rep_trace_name(t, pid, (int)opened, "path", opened);
        }
}
