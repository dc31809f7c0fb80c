/* tl/tensor.c: tensor metadata, views, the per-PE arena, persistent TCM
 * allocations and scratch scopes with their ceiling. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "tl/tl_int.h"

/* ---- metadata ------------------------------------------------------------ */

int tl_ndim(const tl_tensor *t) { return t->ndim; }
tl_dtype tl_dtype_of(const tl_tensor *t) { return t->dtype; }
tl_space tl_space_of(const tl_tensor *t) { return t->space; }

int64_t tl_dim(const tl_tensor *t, int axis)
{
        if (axis < 0)
                axis += t->ndim;
        return axis >= 0 && axis < t->ndim ? t->shape[axis] : 0;
}

int64_t tl_numel(const tl_tensor *t)
{
        int64_t n = 1;
        for (int i = 0; i < t->ndim; i++)
                n *= t->shape[i];
        return n;
}

size_t tl_dtype_size(tl_dtype dt)
{
        return dt == TL_FP32 ? 4 : 2;
}

/* ---- arena ------------------------------------------------------------------ */

#define ARENA_CHUNK (1u << 20)

void *tl__arena_alloc(tl_ctx *tl, size_t bytes)
{
        struct tl_arena *a = &tl->arena;
        bytes = (bytes + 15) & ~(size_t)15;
        if (!a->chunk_bytes)
                a->chunk_bytes = ARENA_CHUNK;
        size_t chunk = a->pos / a->chunk_bytes, off = a->pos % a->chunk_bytes;
        if (bytes > a->chunk_bytes)
                return NULL; /* callers check sizes against the scratch ceiling first */
        if (off + bytes > a->chunk_bytes) {
                chunk++;
                off = 0;
        }
        if (chunk >= a->n_chunks) {
                if (a->n_chunks == a->cap_chunks) {
                        size_t cap = a->cap_chunks ? a->cap_chunks * 2 : 4;
                        char **c = realloc(a->chunks, cap * sizeof *c);
                        if (!c)
                                return NULL;
                        a->chunks = c;
                        a->cap_chunks = cap;
                }
                a->chunks[a->n_chunks] = malloc(a->chunk_bytes);
                if (!a->chunks[a->n_chunks])
                        return NULL;
                a->n_chunks++;
        }
        a->pos = chunk * a->chunk_bytes + off + bytes;
        return a->chunks[chunk] + off;
}

static void arena_free(struct tl_arena *a)
{
        for (size_t i = 0; i < a->n_chunks; i++)
                free(a->chunks[i]);
        free(a->chunks);
        memset(a, 0, sizeof *a);
}

/* ---- making tensors -------------------------------------------------------- */

static void contiguous_strides(tl_tensor *t)
{
        int64_t s = 1;
        for (int i = t->ndim - 1; i >= 0; i--) {
                t->stride[i] = s;
                s *= t->shape[i];
        }
}

static void check_shape(tl_ctx *tl, const char *file, int line, const char *op, int ndim,
                        const int64_t *shape)
{
        if (ndim < 0 || ndim > TL_MAX_DIMS)
                tl__fail(tl, file, line, op, "ndim %d: expected 0..%d", ndim, TL_MAX_DIMS);
        for (int i = 0; i < ndim; i++)
                if (shape[i] <= 0 || shape[i] > (INT64_C(1) << 40))
                        tl__fail(tl, file, line, op, "shape[%d] = %lld: expected a positive extent",
                                 i, (long long)shape[i]);
}

static void format_bytes(char *buf, size_t len, uint64_t b)
{
        if (b >= (1u << 20))
                snprintf(buf, len, "%.2f MiB", (double)b / (1u << 20));
        else if (b >= 1024)
                snprintf(buf, len, "%.1f KiB", (double)b / 1024);
        else
                snprintf(buf, len, "%llu B", (unsigned long long)b);
}

/* Account bytes of simulated memory in space; a kernel error past the
 * ceiling (scratch) or the TCM left beside it. */
static void charge(tl_ctx *tl, const char *file, int line, const char *op, tl_space space,
                   uint64_t bytes)
{
        const struct topo_tcm *tcm = &tl->sim->topo->pe.tcm;
        char want[32], cap[32];
        if (space == TL_SCRATCH) {
                if (tl->scratch_bytes + bytes > tcm->scratch_ceiling_bytes) {
                        format_bytes(want, sizeof want, tl->scratch_bytes + bytes);
                        format_bytes(cap, sizeof cap, tcm->scratch_ceiling_bytes);
                        tl__fail(tl, file, line, op,
                                 "scratch: %s requested, %s ceiling (free scratch with "
                                 "tl_scratch_scope_begin/end; keep running state with tl_copy_to)",
                                 want, cap);
                }
                tl->scratch_bytes += bytes;
                if (tl->scratch_bytes > tl->scratch_peak)
                        tl->scratch_peak = tl->scratch_bytes;
        } else if (space == TL_TCM) {
                uint64_t room = tcm->size_bytes - tcm->scratch_ceiling_bytes;
                if (tl->tcm_bytes + bytes > room) {
                        format_bytes(want, sizeof want, tl->tcm_bytes + bytes);
                        format_bytes(cap, sizeof cap, room);
                        tl__fail(tl, file, line, op,
                                 "TCM: %s requested, %s outside the scratch arena", want, cap);
                }
                tl->tcm_bytes += bytes;
        }
}

tl_tensor *tl__new_tensor(tl_ctx *tl, const char *file, int line, const char *op, tl_space space,
                          tl_dtype dt, int ndim, const int64_t *shape)
{
        check_shape(tl, file, line, op, ndim, shape);
        tl_tensor tmp = { .ndim = ndim };
        memcpy(tmp.shape, shape, (size_t)ndim * sizeof shape[0]);
        uint64_t n = (uint64_t)tl_numel(&tmp);
        charge(tl, file, line, op, space, n * tl_dtype_size(dt));
        tl_tensor *t = tl__arena_alloc(tl, sizeof *t);
        float *data = NULL;
        if (t && tl->run->opts->mode == TL_MODE_DATA)
                data = tl__arena_alloc(tl, n * sizeof(float));
        if (!t || (tl->run->opts->mode == TL_MODE_DATA && !data))
                tl__fail(tl, file, line, op, "host out of memory for a %llu-element tensor",
                         (unsigned long long)n);
        *t = tmp;
        t->space = space;
        t->dtype = dt;
        t->base = data;
        t->owner = t;
        t->made_by = op;
        t->pinned = space != TL_HBM;
        contiguous_strides(t);
        ev_future_init(&t->ready, op);
        t->ready.done = true;
        return t;
}

void tl_set_pinned(tl_tensor *t, bool pinned)
{
        t->pinned = pinned && t->space != TL_HBM;
}

tl_tensor *tl__alloc(tl_ctx *tl, tl_space space, tl_dtype dt, int ndim, const int64_t *shape,
                     const char *file, int line)
{
        if (space == TL_HBM)
                tl__fail(tl, file, line, "tl_alloc",
                         "HBM tensors are made by the kernel's setup, not by tl_alloc");
        return tl__new_tensor(tl, file, line, "tl_alloc", space, dt, ndim, shape);
}

/* ---- views ---------------------------------------------------------------- */

static tl_tensor *clone_view(tl_ctx *tl, const tl_tensor *t, const char *file, int line,
                             const char *op)
{
        tl_tensor *v = tl__arena_alloc(tl, sizeof *v);
        if (!v)
                tl__fail(tl, file, line, op, "host out of memory");
        *v = *t;
        v->owner = t->owner;
        return v;
}

tl_tensor *tl__view(tl_ctx *tl, tl_tensor *t, const int64_t *start, const int64_t *shape,
                    const char *file, int line)
{
        for (int i = 0; i < t->ndim; i++) {
                if (start[i] < 0 || shape[i] <= 0 || start[i] + shape[i] > t->shape[i])
                        tl__fail(tl, file, line, "tl_view",
                                 "out of bounds: axis %d, [%lld, %lld) of extent %lld%s%s", i,
                                 (long long)start[i], (long long)(start[i] + shape[i]),
                                 (long long)t->shape[i], t->name ? " of " : "",
                                 t->name ? t->name : "");
        }
        tl_tensor *v = clone_view(tl, t, file, line, "tl_view");
        for (int i = 0; i < t->ndim; i++) {
                v->offset += start[i] * t->stride[i];
                v->shape[i] = shape[i];
        }
        return v;
}

static bool is_contiguous(const tl_tensor *t)
{
        int64_t s = 1;
        for (int i = t->ndim - 1; i >= 0; i--) {
                if (t->shape[i] != 1 && t->stride[i] != s)
                        return false;
                s *= t->shape[i];
        }
        return true;
}

tl_tensor *tl__reshape(tl_ctx *tl, tl_tensor *t, int ndim, const int64_t *shape,
                       const char *file, int line)
{
        check_shape(tl, file, line, "tl_reshape", ndim, shape);
        tl_tensor tmp = { .ndim = ndim };
        memcpy(tmp.shape, shape, (size_t)ndim * sizeof shape[0]);
        if (tl_numel(&tmp) != tl_numel(t))
                tl__fail(tl, file, line, "tl_reshape", "%lld elements cannot take a shape of %lld",
                         (long long)tl_numel(t), (long long)tl_numel(&tmp));
        if (!is_contiguous(t))
                tl__fail(tl, file, line, "tl_reshape", "the tensor is a strided view; load it first");
        tl_tensor *v = clone_view(tl, t, file, line, "tl_reshape");
        v->ndim = ndim;
        memcpy(v->shape, shape, (size_t)ndim * sizeof shape[0]);
        contiguous_strides(v);
        return v;
}

/* ---- scopes ---------------------------------------------------------------- */

void tl__scratch_scope_begin(tl_ctx *tl, const char *file, int line)
{
        tl__issue(tl, TOPO_OP_SCRATCH_SCOPE, file, line);
        if (tl->n_scopes == TL_MAX_SCOPES)
                tl__fail(tl, file, line, "tl_scratch_scope_begin", "more than %d nested scopes",
                         TL_MAX_SCOPES);
        tl->scopes[tl->n_scopes++] = (struct tl_scope){ .arena_mark = tl->arena.pos,
                                                        .scratch_mark = tl->scratch_bytes,
                                                        .busy_until = 0, .file = file,
                                                        .line = line };
}

void tl__scratch_scope_end(tl_ctx *tl, const char *file, int line)
{
        tl__issue(tl, TOPO_OP_SCRATCH_SCOPE, file, line);
        if (tl->n_scopes == 0)
                tl__fail(tl, file, line, "tl_scratch_scope_end", "no scope is open");
        struct tl_scope *s = &tl->scopes[--tl->n_scopes];
        /* The scope's ops may still read or write its scratch. */
        tl__wait_inflight(tl, tl->n_scopes + 1, "tl_scratch_scope_end");
        if (s->busy_until > ev_now(&tl->sim->ev)) {
                ev_proc_note(tl->proc, "%s:%d: tl_scratch_scope_end", file, line);
                ev_sleep_until(tl->proc, s->busy_until);
        }
        if (tl->n_scopes > 0 && s->busy_until > tl->scopes[tl->n_scopes - 1].busy_until)
                tl->scopes[tl->n_scopes - 1].busy_until = s->busy_until;
        tl->arena.pos = s->arena_mark;
        tl->scratch_bytes = s->scratch_mark;
}

void tl__ctx_fini(tl_ctx *tl)
{
        tl__dma_ops_fini(tl);
        arena_free(&tl->arena);
}
