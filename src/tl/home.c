/* tl/home.c: where the bytes of an HBM tensor live (tl_setup_replicate,
 * tl_setup_shard, tl_setup_interleave in cubesim/tl.h): how many of them
 * each cube holds (the capacity check) and which cubes an access to a
 * region of the tensor touches (struct hw_hbm_span).
 *
 * A region is seen as the run of the owner's elements from its first to
 * its last, in row-major order; a strided view is charged its own bytes,
 * spread over the cubes in the proportions of that run. An access that
 * touches more than HW_SPAN_MAX_PARTS cubes is spread evenly over every
 * cube.
 *
 * Sizes are counted with checked arithmetic (base/ckd.h): the setup
 * refuses a block whose round over the cubes (block x cubes) overflows,
 * so the counts here fit; they saturate rather than wrap if one did not. */
#include "base/ckd.h"
#include "tl/tl_int.h"

/* Of [0, x), how much falls in the units dealt to bin c when units of
 * `unit` go round n bins in turn (unit 0 of bin 0, unit 1 of bin 1, ...). */
static uint64_t dealt(uint64_t x, uint64_t unit, uint64_t n, uint64_t c)
{
        uint64_t round = sat_mul_u64(unit, n);
        if (round == 0)
                return 0;
        uint64_t rest = x % round, skip = sat_mul_u64(c, unit);
        uint64_t part = rest > skip ? rest - skip : 0;
        return sat_add_u64(sat_mul_u64(x / round, unit), part < unit ? part : unit);
}

/* Elements of the owner after one index of axis (the axes after it). */
static uint64_t inner_count(const tl_tensor *t, int axis)
{
        uint64_t n = 1;
        for (int i = axis + 1; i < t->ndim; i++)
                n = sat_mul_u64(n, (uint64_t)t->shape[i]);
        return n;
}

/* The cube holding index i of an axis of extent e split in n slices, and
 * the slice's last index: slice c is [c * e / n, (c + 1) * e / n). */
static uint64_t slice_of(uint64_t i, uint64_t e, uint64_t n, uint64_t *last)
{
        uint64_t c = (sat_mul_u64(i + 1, n) - 1) / e;
        *last = sat_mul_u64(c + 1, e) / n - 1;
        return c;
}

uint64_t tl__home_cube_bytes(const struct tl_global *g, uint32_t c, uint32_t n_cubes,
                             uint64_t page_bytes)
{
        uint64_t es = tl_dtype_size(g->t.dtype), bytes = sat_mul_u64(g->count, es);
        if (g->t.sharded)
                return 0;    /* in the PEs' TCM (tl_setup_tensor_sharded), none in HBM */
        switch (g->home) {
        case TL_HOME_REPLICATED:
                return bytes;
        case TL_HOME_INTERLEAVED: {
                if (page_bytes == 0 || n_cubes == 0)
                        return bytes;
                uint64_t pages = bytes / page_bytes + (bytes % page_bytes != 0);
                return sat_mul_u64(dealt(pages, 1, n_cubes, c), page_bytes);
        }
        case TL_HOME_SHARDED:
                break;
        }
        uint64_t inner = inner_count(&g->t, g->axis), rows = inner ? g->count / inner : 0;
        uint64_t e = (uint64_t)g->t.shape[g->axis];
        uint64_t mine;
        if (n_cubes == 0 || e == 0)
                return 0;
        if (g->block == 0)
                mine = sat_mul_u64(sat_mul_u64(c + 1, e) / n_cubes - sat_mul_u64(c, e) / n_cubes,
                                   rows / e);
        else
                mine = dealt(rows, (uint64_t)g->block, n_cubes, c);
        return sat_mul_u64(sat_mul_u64(mine, inner), es);
}

/* Add share to cube c of span; false if the span has no room left. */
static bool add_share(struct hw_hbm_span *span, uint32_t c, uint64_t share)
{
        span->total += share;
        for (int i = 0; i < span->n_parts; i++) {
                if (span->cube[i] == c) {
                        span->share[i] += share;
                        return true;
                }
        }
        if (span->n_parts == HW_SPAN_MAX_PARTS)
                return false;
        span->cube[span->n_parts] = c;
        span->share[span->n_parts++] = share;
        return true;
}

/* Runs of rows on one cube walked before giving up on an exact split. */
#define MAX_RUNS 4096

void tl__hbm_span(const struct tl_run *r, const tl_tensor *t, struct hw_hbm_span *out)
{
        /* A span is read up to its n_parts (no further: its arrays are most
         * of its bytes, left as they are). */
        out->kind = HW_HOME_LOCAL;
        out->n_parts = 0;
        out->total = 0;
        out->channel_plus1 = 0;
        const tl_tensor *o = t->owner;
        const struct tl_global *g = NULL;
        for (int i = 0; i < r->n_globals && !g; i++)
                if (o == &r->globals[i].t)
                        g = &r->globals[i];
        if (!g)
                return;
        out->channel_plus1 = g->channel_plus1;
        uint32_t n_cubes = r->sim->n_cubes;
        if (g->home == TL_HOME_REPLICATED || n_cubes == 1 || tl__elems(t) == 0)
                return;
        /* The run of owner elements [f0, f1] the region spans. */
        uint64_t f0 = (uint64_t)t->offset, f1 = f0;
        for (int i = 0; i < t->ndim; i++)
                f1 += (uint64_t)(t->shape[i] - 1) * (uint64_t)t->stride[i];
        out->kind = HW_HOME_CUBES;
        bool fits = true;
        if (g->home == TL_HOME_INTERLEAVED) {
                uint64_t es = tl_dtype_size(o->dtype), page = r->sim->topo->cube.hbm.page_bytes;
                uint64_t b0 = sat_mul_u64(f0, es), b1 = sat_mul_u64(f1 + 1, es);
                for (uint32_t c = 0; c < n_cubes && fits; c++) {
                        uint64_t share = dealt(b1, page, n_cubes, c) - dealt(b0, page, n_cubes, c);
                        if (share)
                                fits = add_share(out, c, share);
                }
        } else {
                uint64_t inner = inner_count(o, g->axis), e = (uint64_t)o->shape[g->axis];
                uint64_t blk = (uint64_t)g->block, row = f0 / inner, last_row = f1 / inner;
                for (int runs = 0; row <= last_row && fits; runs++) {
                        uint64_t c, last;
                        if (blk == 0) {
                                uint64_t i = row % e, last_i;
                                c = slice_of(i, e, n_cubes, &last_i);
                                last = row + (last_i - i);
                        } else {
                                c = row / blk % n_cubes;
                                last = sat_add_u64(row / blk * blk, blk - 1);
                        }
                        if (last > last_row)
                                last = last_row;
                        fits = runs < MAX_RUNS && add_share(out, (uint32_t)c, last - row + 1);
                        row = last + 1;
                }
        }
        if (!fits)
                *out = (struct hw_hbm_span){ .kind = HW_HOME_ALL };
}
