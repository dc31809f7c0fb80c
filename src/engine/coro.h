/* engine/coro.h: stackful coroutines for kernel processes.
 *
 * Each coroutine runs on its own mmap'd stack with a PROT_NONE guard page
 * below it; stacks are pooled and reused. The switch is a short hand-written
 * routine on x86-64 and aarch64 (callee-saved registers only, no system
 * call), with ucontext as the portable fallback. A stack overflow faults on
 * the guard page; a SIGSEGV handler running on an alternate signal stack
 * recognises the guard page, reports which coroutine overflowed and exits
 * the process with status 1, so memory is never corrupted.
 *
 * Model: asymmetric. The "main" context (the event loop) resumes a
 * coroutine with coro_resume(); the coroutine returns control with
 * coro_yield(). When the coroutine's function returns, the coroutine is
 * marked done and control goes back to the resumer for good. */
#ifndef CUBESIM_ENGINE_CORO_H
#define CUBESIM_ENGINE_CORO_H

#include <stdbool.h>
#include <stddef.h>

typedef void (*coro_fn)(void *arg);

struct coro;

/* A pool of stacks of one size. Stacks freed by coro_release are kept and
 * reused; coro_pool_fini unmaps them all. */
struct coro_pool {
        size_t stack_bytes;          /* usable stack size, page multiple */
        struct coro *free;           /* released coroutines, reusable */
        size_t n_live;               /* coroutines created and not released */
        size_t n_mapped;             /* stacks carved out so far (live + free) */
        char **chunks;               /* mappings that stacks are carved from */
        size_t n_chunks;             /* entries of chunks in use */
        size_t cap_chunks;           /* entries allocated */
        char *carve;                 /* next unused slot of the newest chunk */
        size_t carve_left;           /* unused slots left there */
};

/* stack_bytes is rounded up to whole pages; 0 picks the default (256 KiB).
 * The struct coro is carved from the top of each stack (under 200 bytes
 * with the asm switch; 2 KiB, or 9 KiB on aarch64, with ucontext); sizes
 * leaving less than 16 KiB besides it are raised. */
void coro_pool_init(struct coro_pool *, size_t stack_bytes);
void coro_pool_fini(struct coro_pool *);

/* A coroutine ready to run fn(arg) on its first resume; NULL (errno set) if
 * no stack could be mapped. name is borrowed and used in the overflow
 * report. */
struct coro *coro_create(struct coro_pool *, coro_fn fn, void *arg, const char *name);

/* From the main context: run co until it yields or finishes. */
void coro_resume(struct coro *co);

/* From inside co: return to the context that resumed it. */
void coro_yield(struct coro *co);

/* Symmetric hand-off, for an event loop that dispatches from inside a
 * coroutine: the running coroutine `from` suspends and `to` (suspended or
 * new) runs in its place; when `to` later yields, control goes to the
 * context that resumed `from`. Only where coro_can_transfer() is true (the
 * hand-written switches without AddressSanitizer); callers fall back to
 * yield + resume elsewhere. */
bool coro_can_transfer(void);
void coro_transfer(struct coro *from, struct coro *to);

/* The running coroutine, or NULL in the main context. */
struct coro *coro_current(void);

bool coro_done(const struct coro *co);

/* Give a finished (or never started) coroutine's stack back to the pool. */
void coro_release(struct coro_pool *, struct coro *co);

/* Give back a coroutine that is suspended for good (its process waits on
 * something that will never come, after a deadlock or a stopped run): its
 * frames are abandoned without unwinding. Not for a running coroutine. */
void coro_discard(struct coro_pool *, struct coro *co);

/* How many memory mappings (each counted against vm.max_map_count) n
 * stacks take: one per 64 where the kernel has guard regions, else two
 * per stack (the guard page splits its chunk). CUBESIM_TEST_NO_GUARD_REGIONS=1
 * in the environment makes this host behave as one without (for tests). */
size_t coro_mappings(size_t n_stacks);
/* Whether stacks are guarded by guard regions (one mapping per chunk). */
bool coro_guard_regions(void);

/* Which switch this build uses: "x86-64", "aarch64" or "ucontext". */
const char *coro_backend(void);

/* x86-64 assembly text: push the callee-saved general registers of the
 * SysV ABI, and pop them in the reverse order (coro__switch's frame; the
 * coroutine tests' register probe saves them the same way). */
#define CORO__X86_64_PUSH_SAVED                                                            \
        "        pushq   %rbp\n"                                                            \
        "        pushq   %rbx\n"                                                            \
        "        pushq   %r12\n"                                                            \
        "        pushq   %r13\n"                                                            \
        "        pushq   %r14\n"                                                            \
        "        pushq   %r15\n"
#define CORO__X86_64_POP_SAVED                                                             \
        "        popq    %r15\n"                                                            \
        "        popq    %r14\n"                                                            \
        "        popq    %r13\n"                                                            \
        "        popq    %r12\n"                                                            \
        "        popq    %rbx\n"                                                            \
        "        popq    %rbp\n"

#endif
