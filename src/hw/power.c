/* hw/power.c: busy time binned in windows (power.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "hw/power.h"
#include "base/ckd.h"

int hw_power_init(struct hw_power *p, uint32_t n_cubes)
{
        memset(p, 0, sizeof *p);
        p->busy = calloc(n_cubes ? n_cubes : 1, sizeof *p->busy);
        p->n_cubes = n_cubes;
        return p->busy ? 0 : -ENOMEM;
}

void hw_power_fini(struct hw_power *p)
{
        free(p->busy);
        p->busy = NULL;
}

void hw_power_start(struct hw_power *p, sim_ps origin)
{
        memset(p->busy, 0, sizeof *p->busy * p->n_cubes);
        p->origin_ps = origin;
        p->shift = HW_POWER_FIRST_SHIFT;
        p->window_ps = (sim_ps)1 << p->shift;
        p->limit_ps = sat_add_u64(origin, sat_mul_u64(p->window_ps, HW_POWER_BINS));
}

void hw_power_merge(uint64_t b[HW_POWER_BINS][HW_PW_COUNT])
{
        for (uint32_t w = 0; w < HW_POWER_BINS / 2; w++)
                for (int c = 0; c < HW_PW_COUNT; c++)
                        b[w][c] = b[2 * w][c] + b[2 * w + 1][c];
        memset(b[HW_POWER_BINS / 2], 0, sizeof b[0] * (HW_POWER_BINS / 2));
}

void hw__power_book(struct hw_power *p, uint32_t cube, enum hw_pw_class c, sim_ps begin,
                    sim_ps end)
{
        if (end <= p->origin_ps || !p->window_ps)
                return;
        begin = begin > p->origin_ps ? begin - p->origin_ps : 0;
        end -= p->origin_ps;
        if (end <= begin)
                return;
        while ((end - 1) / HW_POWER_BINS >= p->window_ps) {
                for (uint32_t k = 0; k < p->n_cubes; k++)
                        hw_power_merge(p->busy[k]);
                p->shift++;
                p->window_ps *= 2;
                p->limit_ps = sat_add_u64(p->origin_ps, sat_mul_u64(p->window_ps, HW_POWER_BINS));
        }
        uint64_t (*b)[HW_PW_COUNT] = p->busy[cube];
        uint64_t w = begin / p->window_ps;
        sim_ps at = begin;
        while (at < end) {
                sim_ps edge = (w + 1) * p->window_ps;
                sim_ps to = end < edge ? end : edge;
                b[w][c] += to - at;
                at = to;
                w++;
        }
}
