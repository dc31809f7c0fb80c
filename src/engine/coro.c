/* engine/coro.c: stackful coroutines for kernel processes.
 *
 * Models nothing of the machine: it is the engine's means of suspending a
 * kernel in the middle of a tl_* call and resuming it when the event it waits
 * for has happened.
 *
 * Memory. Stacks are carved from chunk mappings of CHUNK_SLOTS slots
 * (MAP_NORESERVE: untouched slots cost nothing), each slot laid out low to
 * high as
 *     [guard, no access][stack ... grows down ...][struct coro]
 * so the struct lives at the top of its own stack region (the usable stack
 * is stack_bytes minus the struct, rounded to 64 bytes). One mmap and
 * munmap serve 64 stacks: both are slow system calls here. The guard,
 * GUARD_BYTES (64 KiB, or a page if larger: address space, no memory), is a
 * guard region (MADV_GUARD_INSTALL, Linux 6.13) where the kernel has them,
 * which keeps the chunk one mapping, else mprotect(PROT_NONE), which
 * splits it into two mappings per stack; so 38,400 PEs fit under the
 * default vm.max_map_count of 65530 only with guard regions
 * (coro_mappings tells the capacity check). Released
 * coroutines go on the pool's free list whole and coro_create takes from it
 * first, so the steady state (create, run, release, create ...) does no
 * malloc and no mmap.
 *
 * Switch. On x86-64 and aarch64 a hand-written routine pushes the
 * callee-saved registers of the ABI (plus MXCSR and the x87 control word on
 * x86-64, FPCR on aarch64) on the current stack, stores the stack pointer,
 * loads the other one and pops. No system call. Elsewhere, or with
 * CUBESIM_CORO_UCONTEXT, makecontext/swapcontext (one sigprocmask system
 * call per switch).
 *
 * Overflow. A process that runs past its stack touches the guard page. A
 * SIGSEGV/SIGBUS handler, installed on the first coro_create and running on
 * an alternate signal stack (the faulting stack has no room left), checks
 * whether the fault address is in the guard page of the running coroutine;
 * if so it names the coroutine on stderr and _exit(1)s, otherwise it passes
 * the signal on (previous handler, e.g. AddressSanitizer's, or the default
 * action), so ordinary crashes stay ordinary. A frame larger than the guard
 * can step over it; build kernels with -fstack-clash-protection to make
 * every frame probe its pages in order.
 *
 * Threads. A pool is not thread-safe: use one pool per thread, and keep
 * each coroutine on the thread that created it. coro_current() and the
 * alternate signal stack are per thread. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE                  /* MAP_ANONYMOUS, MAP_NORESERVE */
#endif
#include "engine/coro.h"
#include "base/sigsafe.h"
#include "base/util.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#if defined(CUBESIM_CORO_UCONTEXT) || \
        !(defined(__x86_64__) || defined(__aarch64__))
#define CORO_UCONTEXT 1
#include <ucontext.h>
#endif

#ifdef CUBESIM_SANITIZED
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
#endif

#define DEFAULT_STACK_BYTES (256u * 1024u)
#define CHUNK_SLOTS 64            /* stacks per mapping */
#define MIN_STACK_BYTES     (16u * 1024u)   /* least usable stack */
#define ALTSTACK_BYTES      (64u * 1024u)   /* signal stack per thread */
#define GUARD_BYTES         (64u * 1024u)   /* no-access guard below each stack (at least a page) */

/* Invariants: a coroutine is in exactly one of the states
 *   fresh     (!started, !done): on the free list or just created;
 *   suspended (started, !done, !running): sp holds its context;
 *   running   (running): caller_sp holds its resumer's context;
 *   finished  (done): never runs again until coro_create recycles it.
 * The struct sits at the top of its mapping; map is the guard page. */
struct coro {
#ifdef CORO_UCONTEXT
        ucontext_t ctx;              /* co's context while suspended */
        ucontext_t caller_ctx;       /* resumer's context while co runs */
#else
        void *sp;                    /* co's stack pointer while suspended */
        void *caller_sp;             /* resumer's stack pointer while co runs */
#endif
        coro_fn fn;                  /* body, run on the first resume */
        void *arg;                   /* its argument */
        const char *name;            /* borrowed; for the overflow report */
        struct coro *prev;           /* coro_current() of the resumer */
        struct coro *next;           /* free-list link */
        char *map;                   /* mapping base = guard page */
        size_t map_bytes;            /* its slot: guard + stack */
        size_t stack_bytes;          /* the pool's stack size, for reports */
        char *stack_lo;              /* lowest usable stack byte = guard end */
        char *stack_hi;              /* one past the highest, 64-aligned */
        bool started;                /* has been resumed at least once */
        bool running;                /* is on the CPU now (maybe nested) */
        bool done;                   /* fn has returned */
#ifdef CUBESIM_SANITIZED
        void *asan_fake;             /* ASan fake stack while suspended */
        const void *caller_bottom;   /* resumer's stack, reported by ASan */
        size_t caller_size;          /* its size in bytes */
#endif
};

static pthread_once_t init_once = PTHREAD_ONCE_INIT;  /* for init_process */
static struct sigaction prev_segv;   /* SIGSEGV handler before ours */
static struct sigaction prev_bus;    /* SIGBUS handler before ours */
static _Thread_local struct coro *running_co;  /* innermost running one */
static _Thread_local bool altstack_ok;         /* this thread has one */

/* ---- the switch ---------------------------------------------------- */

#ifndef CORO_UCONTEXT
/* Save the callee-saved state on the current stack, store the stack pointer
 * in *save_sp, switch to new_sp and restore what is saved there. Defined in
 * assembly below; hidden so it is not part of the library's interface. */
__attribute__((visibility("hidden")))
void coro__switch(void **save_sp, void *new_sp);
#endif

#if defined(CORO_UCONTEXT)
/* swapcontext does it all. */
#elif defined(__x86_64__)
/* Saved frame, low to high (the stored stack pointer points at its start):
 * MXCSR (4 bytes), x87 control word (2, padded to 4), r15, r14, r13, r12,
 * rbx, rbp, return address: 8 words. The caller's call left rsp = 16k - 8,
 * so the stored pointer is 16-aligned; nothing here needs it to be. */
__asm__(
        ".pushsection .text\n"
        ".p2align 4\n"
        ".globl coro__switch\n"
        ".hidden coro__switch\n"
        ".type coro__switch, @function\n"
        "coro__switch:\n"
        CORO__X86_64_PUSH_SAVED
        "        subq    $8, %rsp\n"
        "        stmxcsr (%rsp)\n"
        "        fnstcw  4(%rsp)\n"
        "        movq    %rsp, (%rdi)\n"
        "        movq    %rsi, %rsp\n"
        /* Load MXCSR and the x87 control word only when they differ
         * from the current ones: both loads are slow (serialising or
         * microcoded) and kernels almost never change them. */
        "        stmxcsr -8(%rsp)\n"
        "        movl    -8(%rsp), %eax\n"
        "        cmpl    (%rsp), %eax\n"
        "        je      1f\n"
        "        ldmxcsr (%rsp)\n"
        "1:      fnstcw  -8(%rsp)\n"
        "        movzwl  -8(%rsp), %eax\n"
        "        cmpw    4(%rsp), %ax\n"
        "        je      2f\n"
        "        fldcw   4(%rsp)\n"
        "2:      addq    $8, %rsp\n"
        CORO__X86_64_POP_SAVED
        "        ret\n"
        ".size coro__switch, .-coro__switch\n"
        ".popsection\n");

enum { FRAME_WORDS = 8 };            /* csr, r15..r12, rbx, rbp, ret */
#elif defined(__aarch64__)
/* Frame, low to high: x19..x28, x29 (fp), x30 (lr), d8..d15, FPCR, pad.
 * 176 bytes, a multiple of 16 as sp must always be. */
__asm__(
        ".pushsection .text\n"
        ".p2align 4\n"
        ".globl coro__switch\n"
        ".hidden coro__switch\n"
        ".type coro__switch, %function\n"
        "coro__switch:\n"
        "        sub     sp, sp, #176\n"
        "        stp     x19, x20, [sp, #0]\n"
        "        stp     x21, x22, [sp, #16]\n"
        "        stp     x23, x24, [sp, #32]\n"
        "        stp     x25, x26, [sp, #48]\n"
        "        stp     x27, x28, [sp, #64]\n"
        "        stp     x29, x30, [sp, #80]\n"
        "        stp     d8, d9, [sp, #96]\n"
        "        stp     d10, d11, [sp, #112]\n"
        "        stp     d12, d13, [sp, #128]\n"
        "        stp     d14, d15, [sp, #144]\n"
        "        mrs     x9, fpcr\n"
        "        str     x9, [sp, #160]\n"
        "        mov     x9, sp\n"
        "        str     x9, [x0]\n"
        "        mov     sp, x1\n"
        "        ldp     x19, x20, [sp, #0]\n"
        "        ldp     x21, x22, [sp, #16]\n"
        "        ldp     x23, x24, [sp, #32]\n"
        "        ldp     x25, x26, [sp, #48]\n"
        "        ldp     x27, x28, [sp, #64]\n"
        "        ldp     x29, x30, [sp, #80]\n"
        "        ldp     d8, d9, [sp, #96]\n"
        "        ldp     d10, d11, [sp, #112]\n"
        "        ldp     d12, d13, [sp, #128]\n"
        "        ldp     d14, d15, [sp, #144]\n"
        "        ldr     x9, [sp, #160]\n"
        "        mrs     x10, fpcr\n"
        "        cmp     x9, x10\n"
        "        b.eq    1f\n"
        "        msr     fpcr, x9\n"
        "1:\n"
        "        add     sp, sp, #176\n"
        "        ret\n"
        ".size coro__switch, .-coro__switch\n"
        /* First return of a new coroutine lands here with the entry
         * function in x19: clear lr so the entry's frame ends the chain. */
        ".p2align 2\n"
        ".globl coro__start\n"
        ".hidden coro__start\n"
        ".type coro__start, %function\n"
        "coro__start:\n"
        "        mov     x30, xzr\n"
        "        br      x19\n"
        ".size coro__start, .-coro__start\n"
        ".popsection\n");

__attribute__((visibility("hidden")))
void coro__start(void);

enum { FRAME_WORDS = 22 };           /* 176 bytes */
#endif

/* ---- AddressSanitizer stack-switch annotations --------------------- */

#ifdef CUBESIM_SANITIZED
#define asan_start(save, bottom, size) \
        __sanitizer_start_switch_fiber((save), (bottom), (size))
#define asan_finish(fake, bottom, size) \
        __sanitizer_finish_switch_fiber((fake), (bottom), (size))
#else
#define asan_start(save, bottom, size) ((void)0)
#define asan_finish(fake, bottom, size) ((void)0)
#endif

/* ---- overflow report ----------------------------------------------- */

/* Hand the signal on as if we had not been here. */
static void pass_on(int sig, siginfo_t *info, void *uctx)
{
        const struct sigaction *prev = sig == SIGBUS ? &prev_bus : &prev_segv;

        if (prev->sa_flags & SA_SIGINFO) {
                if (prev->sa_sigaction) {
                        prev->sa_sigaction(sig, info, uctx);
                        return;
                }
        } else if (prev->sa_handler != SIG_DFL && prev->sa_handler != SIG_IGN) {
                prev->sa_handler(sig);
                return;
        }
        /* Default action: returning re-executes the faulting access, which
         * now kills us; the raise covers a signal sent by kill(2). */
        struct sigaction dfl;
        memset(&dfl, 0, sizeof dfl);
        dfl.sa_handler = SIG_DFL;
        sigemptyset(&dfl.sa_mask);
        sigaction(sig, &dfl, NULL);
        raise(sig);
}

static void on_fault(int sig, siginfo_t *info, void *uctx)
{
        const struct coro *co = running_co;
        const char *addr = info->si_addr;
        char msg[256];
        size_t n = 0;

        if (!co || addr < co->map || addr >= co->stack_lo) {
                pass_on(sig, info, uctx);
                return;
        }
        sigsafe_put(msg, &n, sizeof msg - 1, "cubesim: error: stack overflow in process '");
        sigsafe_put(msg, &n, sizeof msg - 1, co->name ? co->name : "?");
        sigsafe_put(msg, &n, sizeof msg - 1, "' (stack ");
        sigsafe_put_u(msg, &n, sizeof msg - 1, co->stack_bytes / 1024);
        sigsafe_put(msg, &n, sizeof msg - 1, " KiB); raise the stack size");
        msg[n++] = '\n';
        sigsafe_write(STDERR_FILENO, msg, n);
        _exit(1);
}

/* Once per process, on the first coro_create: the fault handlers. */
static void init_process(void)
{
        struct sigaction sa;

        memset(&sa, 0, sizeof sa);
        sa.sa_sigaction = on_fault;
        sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
        sigemptyset(&sa.sa_mask);
        sigaction(SIGSEGV, &sa, &prev_segv);
        sigaction(SIGBUS, &sa, &prev_bus);
}

/* Once per thread: an alternate signal stack, unless one is set already
 * (AddressSanitizer sets its own on the threads it knows). Failure only
 * costs the report: an overflow then dies of a plain SIGSEGV. */
static void ensure_altstack(void)
{
        stack_t ss;

        altstack_ok = true;
        if (sigaltstack(NULL, &ss) == 0 && !(ss.ss_flags & SS_DISABLE))
                return;
        size_t bytes = ALTSTACK_BYTES;
#ifdef _SC_MINSIGSTKSZ
        long min = sysconf(_SC_MINSIGSTKSZ);  /* large with AVX-512, SVE */
        if (min > 0 && (size_t)min * 4 > bytes)
                bytes = (size_t)min * 4;
#endif
        void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (p == MAP_FAILED)
                return;
        ss.ss_sp = p;
        ss.ss_size = bytes;
        ss.ss_flags = 0;
        if (sigaltstack(&ss, NULL) != 0)
                munmap(p, bytes);
        /* Kept for the thread's life: the kernel may use it any time. */
}

/* ---- lifecycle ----------------------------------------------------- */

/* The first code a coroutine runs, on its own stack. Reads the coroutine
 * from running_co, which coro_resume has just set. Never returns. */
static __attribute__((noreturn)) void coro_entry(void)
{
        struct coro *co = running_co;

#ifdef CUBESIM_SANITIZED
        asan_finish(NULL, &co->caller_bottom, &co->caller_size);
#endif
        co->fn(co->arg);
        co->done = true;
        co->running = false;
        running_co = co->prev;
        /* NULL: this fiber ends, ASan may drop its fake stack. */
        asan_start(NULL, co->caller_bottom, co->caller_size);
#ifdef CORO_UCONTEXT
        setcontext(&co->caller_ctx);
#else
        coro__switch(&co->sp, co->caller_sp);
#endif
        abort();                     /* a finished coroutine was resumed */
}

/* Make co's saved context start coro_entry on an empty stack. */
static void prime(struct coro *co)
{
#ifdef CORO_UCONTEXT
        getcontext(&co->ctx);
        co->ctx.uc_stack.ss_sp = co->stack_lo;
        co->ctx.uc_stack.ss_size = (size_t)(co->stack_hi - co->stack_lo);
        co->ctx.uc_link = NULL;
        makecontext(&co->ctx, coro_entry, 0);
#elif defined(__x86_64__)
        /* stack_hi is 16-aligned; below it a zero return address (ends
         * backtraces), then the frame coro__switch pops. After its ret,
         * rsp = stack_hi - 8, as after a call: the ABI's entry alignment. */
        uint64_t *top = (uint64_t *)(void *)co->stack_hi;
        uint64_t *f = top - 1 - FRAME_WORDS;

        top[-1] = 0;                         /* entry's return address */
        f[7] = (uint64_t)(uintptr_t)coro_entry;
        f[6] = 0;                            /* rbp: ends the frame chain */
        f[5] = f[4] = f[3] = f[2] = f[1] = 0;  /* rbx, r12..r15 */
        f[0] = 0x1f80u | (uint64_t)0x037fu << 32;  /* MXCSR, x87 CW */
        co->sp = f;
#elif defined(__aarch64__)
        /* Frame at stack_hi - 176; after coro__switch pops it sp = stack_hi,
         * 16-aligned; its ret goes to coro__start, which jumps to x19. */
        uint64_t *f = (uint64_t *)(void *)co->stack_hi - FRAME_WORDS;

        memset(f, 0, FRAME_WORDS * sizeof *f);  /* x29 = 0, FPCR default */
        f[0] = (uint64_t)(uintptr_t)coro_entry;   /* x19 */
        f[11] = (uint64_t)(uintptr_t)coro__start; /* x30 */
        co->sp = f;
#endif
}

void coro_pool_init(struct coro_pool *pool, size_t stack_bytes)
{
        size_t page_bytes = (size_t)sysconf(_SC_PAGESIZE);

        if (stack_bytes == 0)
                stack_bytes = DEFAULT_STACK_BYTES;
        if (stack_bytes < MIN_STACK_BYTES + sizeof(struct coro))
                stack_bytes = MIN_STACK_BYTES + sizeof(struct coro);
        stack_bytes = (stack_bytes + page_bytes - 1) / page_bytes * page_bytes;
        pool->stack_bytes = stack_bytes;
        pool->free = NULL;
        pool->n_live = 0;
        pool->n_mapped = 0;
        pool->chunks = NULL;
        pool->n_chunks = pool->cap_chunks = 0;
        pool->carve = NULL;
        pool->carve_left = 0;
}

/* The guard below each stack: GUARD_BYTES, or a page if that is larger. */
static size_t guard_bytes(void)
{
        size_t page_bytes = (size_t)sysconf(_SC_PAGESIZE);
        return page_bytes > GUARD_BYTES ? page_bytes : GUARD_BYTES;
}

void coro_pool_fini(struct coro_pool *pool)
{
        struct coro *co = pool->free;

        while (co) {
                pool->n_mapped--;
                co = co->next;
        }
        pool->free = NULL;
        /* Live coroutines (n_live != 0) were the caller's to release; their
         * chunk goes all the same. */
        size_t chunk_bytes = CHUNK_SLOTS * (pool->stack_bytes + guard_bytes());
        for (size_t i = 0; i < pool->n_chunks; i++)
                munmap(pool->chunks[i], chunk_bytes);
        free(pool->chunks);
        pool->chunks = NULL;
        pool->n_chunks = pool->cap_chunks = 0;
        pool->carve = NULL;
        pool->carve_left = 0;
}

#ifdef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE_ MADV_POPULATE_WRITE
#else
#define MADV_POPULATE_WRITE_ 23
#endif

#ifndef MADV_GUARD_INSTALL
#define MADV_GUARD_INSTALL 102       /* Linux 6.13 */
#endif

static pthread_once_t guard_once = PTHREAD_ONCE_INIT;  /* for guard_probe */
static bool guard_regions;           /* MADV_GUARD_INSTALL works here */

/* Does MADV_GUARD_INSTALL make a page fault here? The kernel refuses
 * advice it does not know (EINVAL); qemu-user, which runs the aarch64
 * tests, accepts and ignores it. So install a guard and have the kernel
 * read the page: a guard gives EFAULT. */
static void guard_probe(void)
{
        /* A test hook: the mprotect guards of older kernels, here. */
        const char *no = getenv("CUBESIM_TEST_NO_GUARD_REGIONS");
        if (no && *no && strcmp(no, "0") != 0)
                return;
        size_t page_bytes = (size_t)sysconf(_SC_PAGESIZE);
        char *p = mmap(NULL, page_bytes, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        int fds[2];
        if (p == MAP_FAILED)
                return;
        if (madvise(p, page_bytes, MADV_GUARD_INSTALL) == 0 && pipe2(fds, O_CLOEXEC) == 0) {
                guard_regions = write(fds[1], p, 1) < 0 && errno == EFAULT;
                close(fds[0]);
                close(fds[1]);
        }
        munmap(p, page_bytes);
}

/* Make the guard at p inaccessible. A guard region (MADV_GUARD_INSTALL)
 * leaves the chunk one mapping; mprotect splits it in two per stack (the
 * guard and the stack), and the kernel caps a process's mappings
 * (vm.max_map_count, 65530 by default). */
static int install_guard(char *p, size_t bytes)
{
        if (guard_regions)
                return madvise(p, bytes, MADV_GUARD_INSTALL);
        return mprotect(p, bytes, PROT_NONE);
}

bool coro_guard_regions(void)
{
        pthread_once(&guard_once, guard_probe);
        return guard_regions;
}

size_t coro_mappings(size_t n_stacks)
{
        if (coro_guard_regions())
                return (n_stacks + CHUNK_SLOTS - 1) / CHUNK_SLOTS;
        return 2 * n_stacks + (n_stacks % CHUNK_SLOTS != 0);
}

/* Carve a new stack with its guard page; the struct goes at its top. */
static struct coro *map_coro(struct coro_pool *pool)
{
        size_t page_bytes = (size_t)sysconf(_SC_PAGESIZE);
        size_t slot_bytes = pool->stack_bytes + guard_bytes();
        if (pool->carve_left == 0) {
                char **c = util_grow(pool->chunks, pool->n_chunks, &pool->cap_chunks,
                                     sizeof *c, 16);
                if (!c)
                        return NULL;
                pool->chunks = c;
                char *chunk = mmap(NULL, CHUNK_SLOTS * slot_bytes, PROT_READ | PROT_WRITE,
                                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
                if (chunk == MAP_FAILED)
                        return NULL;
                pool->chunks[pool->n_chunks++] = chunk;
                pool->carve = chunk;
                pool->carve_left = CHUNK_SLOTS;
        }
        char *map = pool->carve;
        pthread_once(&guard_once, guard_probe);
        if (install_guard(map, guard_bytes()) != 0)
                return NULL;
        /* Fault in the top page (the struct and the first frames) in one
         * call: a demand fault costs several times more on virtual machines.
         * Only an optimisation: failure (old kernel, emulator) is fine. */
        madvise(map + slot_bytes - page_bytes, page_bytes, MADV_POPULATE_WRITE_);
        pool->carve += slot_bytes;
        pool->carve_left--;
        size_t head = (sizeof(struct coro) + 63) & ~(size_t)63;
        struct coro *co = (struct coro *)(void *)(map + slot_bytes - head);
        memset(co, 0, sizeof *co);
        co->map = map;
        co->map_bytes = slot_bytes;
        co->stack_bytes = pool->stack_bytes;
        co->stack_lo = map + guard_bytes();
        co->stack_hi = (char *)co;
        pool->n_mapped++;
        return co;
}

struct coro *coro_create(struct coro_pool *pool, coro_fn fn, void *arg,
                         const char *name)
{
        struct coro *co;

        pthread_once(&init_once, init_process);
        if (!altstack_ok)
                ensure_altstack();
        co = pool->free;
        if (co) {
                pool->free = co->next;
#ifdef CUBESIM_SANITIZED
                /* Frames abandoned by the last run (coro_entry's) may
                 * still be poisoned. */
                ASAN_UNPOISON_MEMORY_REGION(co->stack_lo,
                                            (size_t)(co->stack_hi - co->stack_lo));
#endif
        } else {
                co = map_coro(pool);
                if (!co)
                        return NULL;
        }
        /* A new coroutine but for its slot: every other field starts
         * afresh, whatever an earlier one left there. */
        *co = (struct coro){ .fn = fn, .arg = arg, .name = name, .map = co->map,
                             .map_bytes = co->map_bytes, .stack_bytes = co->stack_bytes,
                             .stack_lo = co->stack_lo, .stack_hi = co->stack_hi };
        prime(co);
        pool->n_live++;
        return co;
}

void coro_resume(struct coro *co)
{
#ifdef CUBESIM_SANITIZED
        void *fake = NULL;
#endif

        if (co->done || co->running)
                abort();             /* engine bug: nothing sane to do */
        if (!altstack_ok)
                ensure_altstack();
        co->started = true;
        co->running = true;
        co->prev = running_co;
        running_co = co;
        asan_start(&fake, co->stack_lo, (size_t)(co->stack_hi - co->stack_lo));
#ifdef CORO_UCONTEXT
        swapcontext(&co->caller_ctx, &co->ctx);
#else
        coro__switch(&co->caller_sp, co->sp);
#endif
        asan_finish(fake, NULL, NULL);
        /* Whichever coroutine came back (co, or one co transferred to)
         * has cleared its running flag and running_co. */
}

void coro_yield(struct coro *co)
{
        if (co != running_co)
                abort();             /* yield from outside co */
        co->running = false;
        running_co = co->prev;
        asan_start(&co->asan_fake, co->caller_bottom, co->caller_size);
#ifdef CORO_UCONTEXT
        swapcontext(&co->ctx, &co->caller_ctx);
#else
        coro__switch(&co->sp, co->caller_sp);
#endif
        asan_finish(co->asan_fake, &co->caller_bottom, &co->caller_size);
}

bool coro_can_transfer(void)
{
#if defined(CORO_UCONTEXT) || defined(CUBESIM_SANITIZED)
        return false;
#else
        return true;
#endif
}

void coro_transfer(struct coro *from, struct coro *to)
{
#if defined(CORO_UCONTEXT) || defined(CUBESIM_SANITIZED)
        (void)from;
        (void)to;
        abort();                     /* coro_can_transfer() said no */
#else
        if (from != running_co || to->done || to->running)
                abort();
        from->running = false;
        to->started = true;
        to->running = true;
        to->prev = from->prev;
        to->caller_sp = from->caller_sp; /* to yields where from would have */
        running_co = to;
        coro__switch(&from->sp, to->sp);
        /* from runs again: resumed by its resumer or transferred to. */
#endif
}

struct coro *coro_current(void)
{
        return running_co;
}

bool coro_done(const struct coro *co)
{
        return co->done;
}

void coro_release(struct coro_pool *pool, struct coro *co)
{
        if (co->running || (co->started && !co->done))
                abort();             /* its frames are still in use */
        co->next = pool->free;
        pool->free = co;
        pool->n_live--;
}

void coro_discard(struct coro_pool *pool, struct coro *co)
{
        if (co->running)
                abort();             /* cannot drop the stack it runs on */
        /* Its frames are abandoned, never unwound: forget their shadow so
         * the stack's next user starts clean. */
#ifdef CUBESIM_SANITIZED
        __asan_unpoison_memory_region(co->stack_lo, (size_t)(co->stack_hi - co->stack_lo));
        co->asan_fake = NULL;
#endif
        co->started = false;         /* release accepts it now */
        coro_release(pool, co);
}

const char *coro_backend(void)
{
#if defined(CORO_UCONTEXT)
        return "ucontext";
#elif defined(__x86_64__)
        return "x86-64";
#else
        return "aarch64";
#endif
}
