/* kernels/gemm_tiles.c: see gemm_tiles.h. */
#include "gemm_tiles.h"

tl_dtype gemm_setup_ab(tl_setup *s, struct gemm_shape *sh, tl_tensor **a, tl_tensor **b)
{
        sh->m = tl_setup_dim(s, "m", "a", 0);
        sh->k = tl_setup_dim(s, "k", "a", 1);
        sh->n = tl_setup_dim(s, "n", "b", 1);
        sh->tm = tl_setup_int(s, "tile_m");
        sh->tn = tl_setup_int(s, "tile_n");
        sh->tk = tl_setup_int(s, "tile_k");
        tl_dtype dt = gemm_setup_dtype(s, sh);
        if (tl_setup_choice(s, "fidelity") > 0)
                tl_setup_gemm_fidelity(s, tl_setup_choice(s, "fidelity"));
        *a = tl_setup_tensor(s, "a", TL_INPUT, dt, 2, (int64_t[]){ sh->m, sh->k });
        *b = tl_setup_tensor(s, "b", TL_INPUT, dt, 2, (int64_t[]){ sh->k, sh->n });
        return dt;
}

/* The GEMM engine's fidelity, passes 1..4; "topology": pe.gemm.fidelity_passes. */
const char *const gemm_fidelities[] = { "topology", "lofi", "hifi2", "hifi3", "hifi4", NULL };

bool gemm_deal_begin(tl_ctx *tl, const struct gemm_shape *sh, struct gemm_deal *d)
{
        *d = (struct gemm_deal){
                .sh = sh,
                .next = tl_rank(tl, -1, -1, -1),
                .stride = tl_num_programs(tl, 0) * tl_num_programs(tl, 1) * tl_num_programs(tl, 2),
                .n_tiles = ((sh->m + sh->tm - 1) / sh->tm) * ((sh->n + sh->tn - 1) / sh->tn),
        };
        return d->next < d->n_tiles;
}

bool gemm_deal_next(struct gemm_deal *d)
{
        if (d->next >= d->n_tiles)
                return false;
        const struct gemm_shape *sh = d->sh;
        int64_t tiles_n = (sh->n + sh->tn - 1) / sh->tn;
        d->i0 = (d->next / tiles_n) * sh->tm;
        d->j0 = (d->next % tiles_n) * sh->tn;
        d->mm = min64(sh->tm, sh->m - d->i0);
        d->nn = min64(sh->tn, sh->n - d->j0);
        d->next += d->stride;
        return true;
}

tl_tensor *gemm_block(tl_ctx *tl, tl_tensor *t, int64_t r, int64_t c, int64_t nr, int64_t nc)
{
        return tl_view(tl, t, ((int64_t[]){ r, c }), ((int64_t[]){ nr, nc }));
}

int64_t gemm_kwalk_steps(const struct gemm_kwalk *w)
{
        return (w->k + w->tk - 1) / w->tk;
}

/* Load step s's blocks of A and B into buffer pair i. */
static void load(tl_ctx *tl, struct gemm_kwalk *w, int64_t s, int i)
{
        int64_t k0 = s * w->tk, kn = min64(w->tk, w->k - k0);
        tl_copy_to(tl, gemm_block(tl, w->abuf[i], 0, 0, w->mm, kn),
                   gemm_block(tl, w->a, w->i0, k0, w->mm, kn));
        tl_copy_to(tl, gemm_block(tl, w->bbuf[i], 0, 0, kn, w->nn),
                   gemm_block(tl, w->b, k0, w->j0, kn, w->nn));
}

void gemm_kwalk_begin(tl_ctx *tl, struct gemm_kwalk *w, const struct gemm_deal *d)
{
        w->i0 = d->i0;
        w->j0 = d->j0;
        w->mm = d->mm;
        w->nn = d->nn;
        load(tl, w, 0, 0);
}

void gemm_kwalk_step(tl_ctx *tl, struct gemm_kwalk *w, int64_t s, tl_tensor **a,
                     tl_tensor **b)
{
        int cur = (int)(s % 2);
        int64_t kn = min64(w->tk, w->k - s * w->tk);
        if (s + 1 < gemm_kwalk_steps(w))
                load(tl, w, s + 1, 1 - cur);
        *a = gemm_block(tl, w->abuf[cur], 0, 0, w->mm, kn);
        *b = gemm_block(tl, w->bbuf[cur], 0, 0, kn, w->nn);
}

tl_dtype gemm_setup_dtype(tl_setup *s, const struct gemm_shape *sh)
{
        tl_dtype dt = (tl_dtype)tl_setup_choice(s, "dtype");
        /* A block float is stored in whole blocks of 16 along a row: output
         * tiles must start on one (docs/adr/0019). */
        if ((dt == TL_BFP8_B || dt == TL_BFP4_B) && sh->tn % 16 && sh->tn < sh->n)
                tl_setup_error(s, "tile_n = %lld: a %s output is stored in whole blocks of 16 "
                               "columns, so its tiles must start at multiples of 16; expected a "
                               "multiple of 16 (or at least n = %lld)", (long long)sh->tn,
                               dt == TL_BFP8_B ? "bfp8_b" : "bfp4_b", (long long)sh->n);
        return dt;
}

uint64_t gemm_kwalk_bytes(const struct gemm_shape *sh, tl_dtype dt)
{
        return 2 * (tl_dtype_bytes(dt, sh->tm * sh->tk, sh->tk) +
                    tl_dtype_bytes(dt, sh->tk * sh->tn, sh->tn));
}
