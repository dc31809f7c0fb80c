/* hw/power.c: busy time binned in windows (power.h). */
#include <string.h>

#include "hw/power.h"

void hw_power_start(struct hw_power *p, sim_ps origin)
{
        memset(p, 0, sizeof *p);
        p->origin_ps = origin;
        p->window_ps = HW_POWER_FIRST_WINDOW_PS;
}

void hw_power_grow(struct hw_power *p)
{
        for (uint32_t w = 0; w < HW_POWER_BINS / 2; w++)
                for (int c = 0; c < HW_PW_COUNT; c++)
                        p->busy[w][c] = p->busy[2 * w][c] + p->busy[2 * w + 1][c];
        memset(p->busy[HW_POWER_BINS / 2], 0, sizeof p->busy[0] * (HW_POWER_BINS / 2));
        p->window_ps *= 2;
}

void hw_power_book(struct hw_power *p, enum hw_pw_class c, sim_ps begin, sim_ps end)
{
        if (end <= p->origin_ps || !p->window_ps)
                return;
        begin = begin > p->origin_ps ? begin - p->origin_ps : 0;
        end -= p->origin_ps;
        if (end <= begin)
                return;
        while ((end - 1) / HW_POWER_BINS >= p->window_ps)
                hw_power_grow(p);
        uint64_t w = begin / p->window_ps;
        sim_ps at = begin;
        while (at < end) {
                sim_ps edge = (w + 1) * p->window_ps;
                sim_ps to = end < edge ? end : edge;
                p->busy[w][c] += to - at;
                at = to;
                w++;
        }
}
