/* cubesim/tl.h: the kernel language.
 *
 * A kernel is a C function `void k(tl_ctx *tl, const void *args)` that
 * cubesim runs on every PE_CPU of a launch, each as its own coroutine. The
 * kernel sees only this header. Every tl_* call costs PE_CPU issue time
 * (a per-op-type table in the topology) and may suspend the kernel until
 * the simulated hardware is done; simulated time is what the machine would
 * take, not what the host takes.
 *
 * Axes of tl_program_id / tl_num_programs:
 *   0  the PE's index within its cube   (0 .. PEs per cube - 1)
 *   1  the cube's index within its SIP  (0 .. cubes per SIP - 1)
 *   2  the SIP's index                  (0 .. SIPs - 1)
 *
 * Every entry point is a macro that passes __FILE__ and __LINE__, so an
 * error names the kernel's source line and the PE. */
#ifndef CUBESIM_TL_H
#define CUBESIM_TL_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tl_ctx tl_ctx;

/* A kernel's body. args points to the kernel's argument block (NULL when
 * it takes none); it is shared by every PE and must not be written. */
typedef void (*tl_kernel_fn)(tl_ctx *tl, const void *args);

/* A registered kernel. */
struct tl_kernel {
        const char *name;            /* registry key, e.g. "noop" */
        const char *summary;         /* one line for `cubesim kernels` */
        tl_kernel_fn fn;             /* the body */
};

int tl__program_id(tl_ctx *tl, int axis, const char *file, int line);
int tl__num_programs(tl_ctx *tl, int axis, const char *file, int line);

/* This PE's index along axis (0 PE in cube, 1 cube in SIP, 2 SIP). */
#define tl_program_id(tl, axis) tl__program_id((tl), (axis), __FILE__, __LINE__)
/* The number of programs along axis. */
#define tl_num_programs(tl, axis) tl__num_programs((tl), (axis), __FILE__, __LINE__)

#ifdef __cplusplus
}
#endif

#endif
