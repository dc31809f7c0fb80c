/* hw/power.h: busy time of the machine's priced components binned in
 * fixed windows of simulated time, for the power over a window
 * (docs/adr/0024). Each engine, TCM, DMA data path, link and HBM channel
 * booking adds its busy interval to the windows it overlaps; the report
 * spreads each class's energy over the windows by these shares. The
 * windows start at the kernel's start and double in length (pairs of
 * windows merged) whenever a booking ends past the last one, so a run
 * keeps at most HW_POWER_BINS of them whatever its length. Kept per cube
 * (a link is its source's cube's, or its destination's when the source is
 * in no cube), for the trace's power counter of each cube. */
#ifndef CUBESIM_HW_POWER_H
#define CUBESIM_HW_POWER_H

#include <stdint.h>

#include "engine/ev.h"

/* The binned classes. */
enum hw_pw_class {
        HW_PW_DMA,                   /* a PE's DMA data path */
        HW_PW_GEMM,                  /* a PE's GEMM array */
        HW_PW_MATH,                  /* a PE's MATH engine */
        HW_PW_TCM,                   /* a PE's TCM banks */
        HW_PW_NOC,                   /* NoC links */
        HW_PW_INTER_CUBE,            /* links between cubes of a SIP */
        HW_PW_INTER_SIP,             /* links between SIPs */
        HW_PW_HBM,                   /* HBM channels */
        HW_PW_COUNT
};

enum { HW_POWER_BINS = 256, HW_POWER_FIRST_SHIFT = 10 /* 1.024 ns */ };

struct hw_power {
        sim_ps origin_ps;            /* start of window 0 (the kernel's start) */
        sim_ps window_ps;            /* length of every window: 1 << shift, 0 before the start */
        unsigned shift;              /* log2 of window_ps */
        sim_ps limit_ps;             /* end of the last window (0 before the start) */
        uint32_t n_cubes;            /* cubes of the machine */
        uint64_t (*busy)[HW_POWER_BINS][HW_PW_COUNT]; /* per cube, window and class: busy
                                      * ps summed over the cube's units; owned */
};

/* Room for n_cubes cubes, no windows yet. 0 or -ENOMEM. */
int hw_power_init(struct hw_power *, uint32_t n_cubes);
void hw_power_fini(struct hw_power *);

/* Empty the windows and start them at origin. */
void hw_power_start(struct hw_power *, sim_ps origin);
/* Double the window of bins b: window i takes old windows 2i and 2i + 1. */
void hw_power_merge(uint64_t b[HW_POWER_BINS][HW_PW_COUNT]);
/* hw_power_book's slow path: an interval across windows, past the last
 * window or before the origin. */
void hw__power_book(struct hw_power *, uint32_t cube, enum hw_pw_class c, sim_ps begin,
                    sim_ps end);

/* A unit of class c in cube was busy over [begin, end): the part after the
 * origin is added to the windows it overlaps. Inline: most bookings fall
 * in one window. */
static inline void hw_power_book(struct hw_power *p, uint32_t cube, enum hw_pw_class c,
                                 sim_ps begin, sim_ps end)
{
        sim_ps b = begin - p->origin_ps, e = end - p->origin_ps;
        if (begin >= p->origin_ps && end <= p->limit_ps && b < e &&
            b >> p->shift == (e - 1) >> p->shift)
                p->busy[cube][b >> p->shift][c] += e - b;
        else
                hw__power_book(p, cube, c, begin, end);
}

#endif
