/* tests/lib/coro_probe.h: the register probe of the coroutine tests
 * (tests/unit/test_coro.c, tests/cross/engine_selftest.c), in assembly
 * for x86-64 and aarch64; HAVE_PROBE is defined where it exists.
 *
 * coro_probe_call(fn, arg, out, base) loads base+0, base+1, ... into
 * every callee-saved register, calls fn(arg), then stores those registers
 * to out (PROBE_N of them). Whatever runs while fn is switched away must
 * not disturb them; probe_body runs PROBE_ROUNDS such calls in a
 * coroutine. Include it once, in one test program. */
#ifndef CUBESIM_TESTS_CORO_PROBE_H
#define CUBESIM_TESTS_CORO_PROBE_H

#include <stdint.h>

#include "engine/coro.h"

#ifndef PROBE_ROUNDS
#define PROBE_ROUNDS 100             /* probe rounds per coroutine */
#endif

#if defined(__x86_64__)
enum { PROBE_N = 6 };                /* rbx, rbp, r12..r15 */
__asm__(
        ".pushsection .text\n"
        ".p2align 4\n"
        ".globl coro_probe_call\n"
        ".hidden coro_probe_call\n"
        ".type coro_probe_call, @function\n"
        "coro_probe_call:\n"
        CORO__X86_64_PUSH_SAVED
        "        pushq   %rdx\n"
        "        movq    %rdi, %rax\n"
        "        movq    %rsi, %rdi\n"
        "        movq    %rcx, %rbx\n"
        "        leaq    1(%rcx), %rbp\n"
        "        leaq    2(%rcx), %r12\n"
        "        leaq    3(%rcx), %r13\n"
        "        leaq    4(%rcx), %r14\n"
        "        leaq    5(%rcx), %r15\n"
        "        call    *%rax\n"
        "        popq    %rdx\n"
        "        movq    %rbx, 0(%rdx)\n"
        "        movq    %rbp, 8(%rdx)\n"
        "        movq    %r12, 16(%rdx)\n"
        "        movq    %r13, 24(%rdx)\n"
        "        movq    %r14, 32(%rdx)\n"
        "        movq    %r15, 40(%rdx)\n"
        CORO__X86_64_POP_SAVED
        "        ret\n"
        ".size coro_probe_call, .-coro_probe_call\n"
        ".popsection\n");
#define HAVE_PROBE 1
#elif defined(__aarch64__)
enum { PROBE_N = 18 };               /* x19..x28, d8..d15 */
__asm__(
        ".pushsection .text\n"
        ".p2align 2\n"
        ".globl coro_probe_call\n"
        ".hidden coro_probe_call\n"
        ".type coro_probe_call, %function\n"
        "coro_probe_call:\n"
        "        stp     x29, x30, [sp, #-176]!\n"
        "        mov     x29, sp\n"
        "        stp     x19, x20, [sp, #16]\n"
        "        stp     x21, x22, [sp, #32]\n"
        "        stp     x23, x24, [sp, #48]\n"
        "        stp     x25, x26, [sp, #64]\n"
        "        stp     x27, x28, [sp, #80]\n"
        "        stp     d8, d9, [sp, #96]\n"
        "        stp     d10, d11, [sp, #112]\n"
        "        stp     d12, d13, [sp, #128]\n"
        "        stp     d14, d15, [sp, #144]\n"
        "        str     x2, [sp, #160]\n"
        "        mov     x19, x3\n"
        "        add     x20, x3, #1\n"
        "        add     x21, x3, #2\n"
        "        add     x22, x3, #3\n"
        "        add     x23, x3, #4\n"
        "        add     x24, x3, #5\n"
        "        add     x25, x3, #6\n"
        "        add     x26, x3, #7\n"
        "        add     x27, x3, #8\n"
        "        add     x28, x3, #9\n"
        "        add     x9, x3, #10\n"
        "        fmov    d8, x9\n"
        "        add     x9, x3, #11\n"
        "        fmov    d9, x9\n"
        "        add     x9, x3, #12\n"
        "        fmov    d10, x9\n"
        "        add     x9, x3, #13\n"
        "        fmov    d11, x9\n"
        "        add     x9, x3, #14\n"
        "        fmov    d12, x9\n"
        "        add     x9, x3, #15\n"
        "        fmov    d13, x9\n"
        "        add     x9, x3, #16\n"
        "        fmov    d14, x9\n"
        "        add     x9, x3, #17\n"
        "        fmov    d15, x9\n"
        "        mov     x9, x0\n"
        "        mov     x0, x1\n"
        "        blr     x9\n"
        "        ldr     x2, [sp, #160]\n"
        "        stp     x19, x20, [x2, #0]\n"
        "        stp     x21, x22, [x2, #16]\n"
        "        stp     x23, x24, [x2, #32]\n"
        "        stp     x25, x26, [x2, #48]\n"
        "        stp     x27, x28, [x2, #64]\n"
        "        stp     d8, d9, [x2, #80]\n"
        "        stp     d10, d11, [x2, #96]\n"
        "        stp     d12, d13, [x2, #112]\n"
        "        stp     d14, d15, [x2, #128]\n"
        "        ldp     x19, x20, [sp, #16]\n"
        "        ldp     x21, x22, [sp, #32]\n"
        "        ldp     x23, x24, [sp, #48]\n"
        "        ldp     x25, x26, [sp, #64]\n"
        "        ldp     x27, x28, [sp, #80]\n"
        "        ldp     d8, d9, [sp, #96]\n"
        "        ldp     d10, d11, [sp, #112]\n"
        "        ldp     d12, d13, [sp, #128]\n"
        "        ldp     d14, d15, [sp, #144]\n"
        "        ldp     x29, x30, [sp], #176\n"
        "        ret\n"
        ".size coro_probe_call, .-coro_probe_call\n"
        ".popsection\n");
#define HAVE_PROBE 1
#endif

#ifdef HAVE_PROBE
__attribute__((visibility("hidden")))
void coro_probe_call(void (*fn)(void *), void *arg, uint64_t *out,
                     uint64_t base);

static inline void do_yield(void *co) { coro_yield(co); }
static inline void do_resume(void *co) { coro_resume(co); }

struct probe_job {
        struct coro *co;             /* the coroutine under test */
        int n_bad;                   /* its registers that came back wrong */
};

static inline int probe_bad(const uint64_t *out, uint64_t base)
{
        int bad = 0;

        for (int k = 0; k < PROBE_N; k++)
                bad += out[k] != base + (uint64_t)k;
        return bad;
}

/* A coroutine body that runs PROBE_ROUNDS probes, each yielding inside,
 * and counts the registers that came back wrong. */
static inline void probe_body(void *arg)
{
        struct probe_job *job = arg;
        uint64_t out[PROBE_N];

        for (int i = 0; i < PROBE_ROUNDS; i++) {
                uint64_t base = 0xc0c0c0c000000000u + (uint64_t)i * 0x100;
                coro_probe_call(do_yield, job->co, out, base);
                job->n_bad += probe_bad(out, base);
        }
}
#endif

#endif
