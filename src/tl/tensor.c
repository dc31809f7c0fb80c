/* tl/tensor.c: tensor metadata, views, the per-PE arena, persistent TCM
 * allocations and scratch scopes with their ceiling. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/list.h"
#include "base/util.h"
#include "tl/tensor.h"
#include "tl/tl_int.h"

#ifdef CUBESIM_SANITIZED
#include <sanitizer/asan_interface.h>
/* Under AddressSanitizer the arena's free bytes are poisoned and every
 * allocation is followed by a poisoned redzone, so an op that reads or
 * writes past a tensor's data is reported like a heap overflow. */
#define ARENA_REDZONE 16
#define POISON(p, n) ASAN_POISON_MEMORY_REGION((p), (n))
#define UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION((p), (n))
#else
#define ARENA_REDZONE 0
#define POISON(p, n) ((void)(p), (void)(n))
#define UNPOISON(p, n) ((void)(p), (void)(n))
#endif

/* ---- checks ---------------------------------------------------------------- */

_Noreturn void tl__bad_tensor(tl_ctx *tl, const tl_tensor *t, const char *file, int line,
                              const char *op, const char *which)
{
        if (!t)
                tl__fail(tl, file, line, op, "%s is NULL", which);
        if (t->magic != TL_TENSOR_MAGIC)
                tl__fail(tl, file, line, op, "%s is not a tensor (a stale or wild pointer?)",
                         which);
        if (t->ctx && t->ctx->first != tl->first)
                tl__fail(tl, file, line, op, "%s was made on PE %s; send it with tl_send", which,
                         t->ctx->pe->name);
        if (t->ctx && t->ctx != tl && t->scope_depth)
                tl__fail(tl, file, line, op, "%s is another thread's scratch (%s); share "
                         "tensors made outside scratch scopes, or a circular buffer's pages",
                         which, t->ctx->thread ? t->ctx->thread->name : t->ctx->pe->name);
        /* The only check left: its scope has ended. */
        tl__fail(tl, file, line, op,
                 "%s was made in a scratch scope that has ended (tl_scratch_scope_end "
                 "freed it; keep values across scopes with tl_copy_to)", which);
}

bool tl__dtype_known(tl_dtype dt)
{
        return (unsigned)dt <= TL_BFP4_B;
}

void tl__check_dtype(tl_ctx *tl, tl_dtype dt, const char *file, int line, const char *op)
{
        if (!tl__dtype_known(dt))
                tl__fail(tl, file, line, op, "dtype %d: expected %s", (int)dt, TL__DTYPES);
}

/* ---- metadata ------------------------------------------------------------ */

/* t checked when a kernel is running (on the host side, NULL gives 0). */
static bool meta_ok(const tl_tensor *t, const char *file, int line, const char *op)
{
        tl_ctx *tl = tl__current();
        if (tl)
                tl__check_tensor(tl, t, file, line, op, "the tensor");
        return t != NULL;
}

int tl_impl_ndim(const tl_tensor *t, const char *file, int line)
{
        return meta_ok(t, file, line, "tl_ndim") ? t->ndim : 0;
}

tl_dtype tl_impl_dtype_of(const tl_tensor *t, const char *file, int line)
{
        return meta_ok(t, file, line, "tl_dtype_of") ? t->dtype : TL_FP32;
}

tl_space tl_impl_space_of(const tl_tensor *t, const char *file, int line)
{
        return meta_ok(t, file, line, "tl_space_of") ? t->space : TL_HBM;
}

int64_t tl_impl_dim(const tl_tensor *t, int axis, const char *file, int line)
{
        if (!meta_ok(t, file, line, "tl_dim"))
                return 0;
        if (axis < 0)
                axis += t->ndim;
        return axis >= 0 && axis < t->ndim ? t->shape[axis] : 0;
}

int64_t tl_impl_numel(const tl_tensor *t, const char *file, int line)
{
        return meta_ok(t, file, line, "tl_numel") ? tl__elems(t) : 0;
}

size_t tl_dtype_size(tl_dtype dt)
{
        switch (dt) {
        case TL_FP32: return 4;
        case TL_BF16:
        case TL_FP16: return 2;
        case TL_BFP8_B:
        case TL_BFP4_B: return 1;
        }
        return 4;
}

uint64_t tl_dtype_bytes(tl_dtype dt, int64_t n, int64_t row_len)
{
        if (n <= 0)
                return 0;
        if (dt != TL_BFP8_B && dt != TL_BFP4_B)
                return (uint64_t)n * tl_dtype_size(dt);
        uint64_t rows = row_len > 0 ? (uint64_t)(n / row_len) : 1;
        uint64_t per_row = row_len > 0 ? (uint64_t)row_len : (uint64_t)n;
        uint64_t mant = dt == TL_BFP8_B ? per_row : (per_row + 1) / 2;
        return rows * (mant + (per_row + 15) / 16);
}

uint64_t tl__bytes_as(const tl_tensor *t, tl_dtype dt)
{
        return tl_dtype_bytes(dt, tl__elems(t), t->ndim ? t->shape[t->ndim - 1] : 1);
}

uint64_t tl__tensor_bytes(const tl_tensor *t)
{
        return tl__bytes_as(t, t->dtype);
}

/* ---- arena ------------------------------------------------------------------ */

#define ARENA_CHUNK (1u << 20)

/* A new malloc'd block of bytes appended to *blocks (n used, cap
 * entries; the array grows by doubling): the block, or NULL. The arena's
 * chunks and the tensor structs' blocks. */
static char *block_push(char ***blocks, size_t *n, size_t *cap, size_t bytes)
{
        char **b = util_grow(*blocks, *n, cap, sizeof *b, 8);
        if (!b)
                return NULL;
        *blocks = b;
        char *p = malloc(bytes);
        if (p)
                (*blocks)[(*n)++] = p;
        return p;
}

void *tl__arena_alloc(tl_ctx *tl, size_t bytes)
{
        struct tl_arena *a = &tl->arena;
        size_t asked = bytes;
        bytes = (bytes + ARENA_REDZONE + 15) & ~(size_t)15;
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
                char *c = block_push(&a->chunks, &a->n_chunks, &a->cap_chunks, a->chunk_bytes);
                if (!c)
                        return NULL;
                POISON(c, a->chunk_bytes);
        }
        a->pos = chunk * a->chunk_bytes + off + bytes;
        UNPOISON(a->chunks[chunk] + off, asked);
        return a->chunks[chunk] + off;
}

void tl__arena_rollback(tl_ctx *tl, size_t mark)
{
        struct tl_arena *a = &tl->arena;
#ifdef CUBESIM_SANITIZED
        /* Poison [mark, pos): what the rollback frees. */
        for (size_t at = mark; at < a->pos;) {
                size_t chunk = at / a->chunk_bytes, off = at % a->chunk_bytes;
                size_t end = a->pos - at < a->chunk_bytes - off ? off + (a->pos - at)
                                                                 : a->chunk_bytes;
                POISON(a->chunks[chunk] + off, end - off);
                at += end - off;
        }
#endif
        a->pos = mark;
}

static void arena_free(struct tl_arena *a)
{
        for (size_t i = 0; i < a->n_chunks; i++) {
                UNPOISON(a->chunks[i], a->chunk_bytes);
                free(a->chunks[i]);
        }
        free(a->chunks);
        memset(a, 0, sizeof *a);
}

/* ---- making tensors -------------------------------------------------------- */

/* The row-major strides of shape[ndim] into stride. */
static void contiguous_strides(int ndim, const int64_t *shape, int64_t *stride)
{
        int64_t s = 1;
        for (int i = ndim - 1; i >= 0; i--) {
                stride[i] = s;
                s *= shape[i];
        }
}

/* ndim and shape of a new tensor: extents in [1, 2^40], at most 2^48
 * elements in all (checked products: they must not wrap); its elements. */
static int64_t check_shape(tl_ctx *tl, const char *file, int line, const char *op, int ndim,
                           const int64_t *shape)
{
        if (ndim < 0 || ndim > TL_MAX_DIMS)
                tl__fail(tl, file, line, op, "ndim %d: expected 0..%d", ndim, TL_MAX_DIMS);
        if (ndim > 0 && !shape)
                tl__fail(tl, file, line, op, "shape is NULL");
        int64_t n = 1;
        for (int i = 0; i < ndim; i++) {
                if (shape[i] <= 0 || shape[i] > TL_MAX_EXTENT)
                        tl__fail(tl, file, line, op,
                                 "shape[%d] = %lld: expected an extent in [1, 2^40]", i,
                                 (long long)shape[i]);
                if (__builtin_mul_overflow(n, shape[i], &n) || n > TL_MAX_NUMEL) {
                        char text[128];
                        tl__shape_text(text, sizeof text, ndim, shape);
                        tl__fail(tl, file, line, op, "shape %s: more than 2^48 elements", text);
                }
        }
        return n;
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
                /* One arena for the PE's threads. */
                uint64_t used = tl->first->scratch_bytes;
                for (const struct tl_thread *th = tl->first->threads; th; th = th->next)
                        used += th->ctx.scratch_bytes;
                if (used + bytes > tcm->scratch_ceiling_bytes) {
                        format_bytes(want, sizeof want, used + bytes);
                        format_bytes(cap, sizeof cap, tcm->scratch_ceiling_bytes);
                        tl__fail(tl, file, line, op,
                                 "scratch: %s requested, %s ceiling (pe.tcm.scratch_ceiling_kib; free scratch with "
                                 "tl_scratch_scope_begin/end; keep running state with tl_copy_to)",
                                 want, cap);
                }
                tl->scratch_bytes += bytes;
                if (tl->run->have_trace)
                        rep_trace_hw_scratch(&tl->run->trace_hw, tl->rank, (int64_t)bytes);
                if (tl->scratch_bytes > tl->scratch_peak)
                        tl->scratch_peak = tl->scratch_bytes;
        } else if (space == TL_TCM) {
                uint64_t room = tcm->size_bytes - tcm->scratch_ceiling_bytes;
                tl_ctx *home = tl->first;    /* the PE's threads share its TCM */
                if (home->tcm_bytes + bytes > room) {
                        format_bytes(want, sizeof want, home->tcm_bytes + bytes);
                        format_bytes(cap, sizeof cap, room);
                        tl__fail(tl, file, line, op,
                                 "TCM: %s requested, %s outside the scratch arena", want, cap);
                }
                home->tcm_bytes += bytes;
        }
}

/* ---- tensor structs ---------------------------------------------------------- */

/* Cache line size the tensor structs are laid out for: a block's
 * structs start on a line (its first LINE_BYTES - 1 bytes are slack), so
 * the parts of struct tl_tensor (tl_int.h) sit on lines of their own. */
#define LINE_BYTES 64

/* The first struct of a pool block. */
static tl_tensor *block_structs(char *block)
{
        return (tl_tensor *)(void *)(block + (-(uintptr_t)block & (LINE_BYTES - 1)));
}

/* A struct for a new tensor or view (contents undefined), or NULL. */
static tl_tensor *struct_new(tl_ctx *tl)
{
        struct tl_tensors *p = &tl->structs;
        if (p->n_dead > TL_QUARANTINE) {
                tl_tensor *t = p->dead_head;
                p->dead_head = t->next_made;
                p->n_dead--;
                /* The next one to reuse has been cold a while: fetch it
                 * now, while the kernel runs to its next op. */
                for (size_t off = 0; off < sizeof *t; off += 64)
                        __builtin_prefetch((char *)p->dead_head + off, 1);
                return t;
        }
        if (p->n_blocks == 0 || p->block_used == TL_STRUCTS_PER_BLOCK) {
                if (!block_push(&p->blocks, &p->n_blocks, &p->cap_blocks,
                                TL_STRUCTS_PER_BLOCK * sizeof(tl_tensor) + LINE_BYTES - 1))
                        return NULL;
                p->block_used = 0;
        }
        return block_structs(p->blocks[p->n_blocks - 1]) + p->block_used++;
}

/* t (its fields set) becomes a live tensor of tl, made in the innermost
 * open scope. */
static void stamp(tl_ctx *tl, tl_tensor *t)
{
        t->magic = TL_TENSOR_MAGIC;
        t->ctx = tl;
        t->scope_depth = tl->n_scopes;
        t->scope_gen = 0;
        t->next_made = NULL;
        if (tl->n_scopes) {
                struct tl_scope *s = &tl->scopes[tl->n_scopes - 1];
                t->scope_gen = s->gen;
                LIST_APPEND(s->made, s->made_last, t, next_made);
                s->n_made++;
        }
}

tl_tensor *tl__new_handle(tl_ctx *tl, void *rec)
{
        tl_tensor *h = struct_new(tl);
        if (h) {
                /* Only what tl_wait reads (stamp's fields, the record): a
                 * handle is never read as a tensor (its magic says so). */
                stamp(tl, h);
                h->magic = TL_HANDLE_MAGIC;
                h->handle_rec = rec;
        }
        return h;
}

/* The structs made in scope s are dead (their generation has ended): the
 * whole list joins the quarantine's tail, without touching them. */
static void structs_die(tl_ctx *tl, struct tl_scope *s)
{
        struct tl_tensors *p = &tl->structs;
        if (!s->made)
                return;
        if (p->n_dead)
                p->dead_tail->next_made = s->made;
        else
                p->dead_head = s->made;
        p->dead_tail = s->made_last;
        p->n_dead += s->n_made;
        s->made = s->made_last = NULL;
        s->n_made = 0;
}

tl_tensor *tl__new_tensor(tl_ctx *tl, const char *file, int line, const char *op, tl_space space,
                          tl_dtype dt, int ndim, const int64_t *shape)
{
        uint64_t n = (uint64_t)check_shape(tl, file, line, op, ndim, shape);
        charge(tl, file, line, op, space, tl_dtype_bytes(dt, (int64_t)n, ndim ? shape[ndim - 1] : 1));
        tl_tensor *t = struct_new(tl);
        float *data = NULL;
        if (t && tl->run->opts->mode == TL_MODE_DATA)
                data = tl__arena_alloc(tl, n * sizeof(float));
        if (!t || (tl->run->opts->mode == TL_MODE_DATA && !data))
                tl__fail(tl, file, line, op, "host out of memory for a %llu-element tensor",
                         (unsigned long long)n);
        memset(t, 0, sizeof *t);
        t->ndim = ndim;
        for (int i = 0; i < ndim; i++)
                t->shape[i] = shape[i];
        t->space = space;
        t->dtype = dt;
        t->base = data;
        t->owner = t;
        t->made_by = op;
        t->pinned = space != TL_HBM;
        stamp(tl, t);
        contiguous_strides(ndim, shape, t->stride);
        ev_future_init(&t->ready, op);
        t->ready.done = true;
        return t;
}

void tl_impl_set_pinned(tl_tensor *t, bool pinned, const char *file, int line)
{
        tl_ctx *tl = tl__current();
        if (tl)
                tl__check_tensor(tl, t, file, line, "tl_set_pinned", "the tensor");
        if (t)
                t->pinned = pinned && t->space != TL_HBM;
}

tl_tensor *tl_impl_alloc(tl_ctx *tl, tl_space space, tl_dtype dt, int ndim, const int64_t *shape,
                     const char *file, int line)
{
        if (space == TL_HBM)
                tl__fail(tl, file, line, "tl_alloc",
                         "HBM tensors are made by the kernel's setup, not by tl_alloc");
        if (space != TL_TCM && space != TL_SCRATCH)
                tl__fail(tl, file, line, "tl_alloc", "space %d: expected TL_TCM or TL_SCRATCH",
                         (int)space);
        tl__check_dtype(tl, dt, file, line, "tl_alloc");
        return tl__new_tensor(tl, file, line, "tl_alloc", space, dt, ndim, shape);
}

/* ---- views ---------------------------------------------------------------- */

static tl_tensor *clone_view(tl_ctx *tl, const tl_tensor *t, const char *file, int line,
                             const char *op)
{
        tl_tensor *v = struct_new(tl);
        if (!v)
                tl__fail(tl, file, line, op, "host out of memory");
        memcpy(v, t, TL_VIEW_BYTES);  /* its owner's state is read through owner */
        stamp(tl, v);
        return v;
}

/* The kernel error of a view whose axis i is out of t's bounds. */
_Noreturn static void bad_view(tl_ctx *tl, const tl_tensor *t, const int64_t *start,
                               const int64_t *shape, int i, const char *file, int line)
{
        int64_t end = 0;
        if (__builtin_add_overflow(start[i], shape[i], &end))
                tl__fail(tl, file, line, "tl_view",
                         "out of bounds: axis %d, start %lld + extent %lld overflows "
                         "(extent %lld%s%s)", i, (long long)start[i],
                         (long long)shape[i], (long long)t->shape[i],
                         t->name ? " of " : "", t->name ? t->name : "");
        tl__fail(tl, file, line, "tl_view",
                 "out of bounds: axis %d, [%lld, %lld) of extent %lld%s%s", i,
                 (long long)start[i], (long long)end, (long long)t->shape[i],
                 t->name ? " of " : "", t->name ? t->name : "");
}

tl_tensor *tl_impl_view(tl_ctx *tl, tl_tensor *t, const int64_t *start, const int64_t *shape,
                    const char *file, int line)
{
        tl__check_tensor(tl, t, file, line, "tl_view", "t");
        if (t->ndim > 0 && (!start || !shape))   /* a 0-D tensor's may be NULL */
                tl__fail(tl, file, line, "tl_view", "%s is NULL", !start ? "start" : "shape");
        /* Made first: a view out of bounds stops the run, and its struct
         * dies with the scope. */
        tl_tensor *v = clone_view(tl, t, file, line, "tl_view");
        int nd = t->ndim;
        int64_t offset = t->offset;
        for (int i = 0; i < nd; i++) {
                /* 0 <= start <= extent and 1 <= shape <= extent - start, as
                 * unsigned compares (extents are at most 2^40: no overflow). */
                uint64_t ext = (uint64_t)t->shape[i], s0 = (uint64_t)start[i];
                if (s0 > ext || (uint64_t)shape[i] - 1 >= ext - s0)
                        bad_view(tl, t, start, shape, i, file, line);
                offset += start[i] * t->stride[i];
                v->shape[i] = shape[i];
        }
        v->offset = offset;
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

tl_tensor *tl_impl_reshape(tl_ctx *tl, tl_tensor *t, int ndim, const int64_t *shape,
                       const char *file, int line)
{
        tl__check_tensor(tl, t, file, line, "tl_reshape", "t");
        int64_t n = check_shape(tl, file, line, "tl_reshape", ndim, shape);
        if (n != tl__elems(t))
                tl__fail(tl, file, line, "tl_reshape", "%lld elements cannot take a shape of %lld",
                         (long long)tl__elems(t), (long long)n);
        if (!is_contiguous(t))
                tl__fail(tl, file, line, "tl_reshape", "the tensor is a strided view; load it first");
        tl_tensor *v = clone_view(tl, t, file, line, "tl_reshape");
        v->ndim = ndim;
        for (int i = 0; i < ndim; i++)
                v->shape[i] = shape[i];
        contiguous_strides(ndim, shape, v->stride);
        return v;
}

/* ---- scopes ---------------------------------------------------------------- */

void tl__scope_open(tl_ctx *tl, const char *file, int line)
{
        if (tl->n_scopes == TL_MAX_SCOPES)
                tl__fail(tl, file, line, "tl_scratch_scope_begin", "more than %d nested scopes",
                         TL_MAX_SCOPES);
        tl->scopes[tl->n_scopes++] = (struct tl_scope){ .arena_mark = tl->arena.pos,
                                                        .scratch_mark = tl->scratch_bytes,
                                                        .gen = ++tl->n_scope_gens,
                                                        .busy_until = 0, .file = file,
                                                        .line = line };
}

void tl__scope_close(tl_ctx *tl, struct tl_scope *s)
{
        if (tl->n_scopes > 0 && s->busy_until > tl->scopes[tl->n_scopes - 1].busy_until)
                tl->scopes[tl->n_scopes - 1].busy_until = s->busy_until;
        tl__arena_rollback(tl, s->arena_mark);
        if (tl->run->have_trace)
                rep_trace_hw_scratch(&tl->run->trace_hw, tl->rank,
                                     (int64_t)s->scratch_mark - (int64_t)tl->scratch_bytes);
        tl->scratch_bytes = s->scratch_mark;
        structs_die(tl, s);
}

/* ---- record pools -------------------------------------------------------- */

void *tl__pool_get(tl_ctx *tl, struct tl_pool *p, size_t size, const char *file, int line,
                   const char *op)
{
        struct tl_pooled *r = p->free;
        if (r) {
                p->free = r->next_free;
                return r;
        }
        r = calloc(1, size);
        if (!r)
                tl__fail(tl, file, line, op, "host out of memory");
        r->next_all = p->all;
        p->all = r;
        return r;
}

void tl__pool_put(struct tl_pool *p, void *rec)
{
        struct tl_pooled *r = rec;
        r->next_free = p->free;
        p->free = r;
}

static void pool_free(struct tl_pool *p)
{
        while (p->all) {
                struct tl_pooled *r = p->all;
                p->all = r->next_all;
                free(r);
        }
        p->free = NULL;
}

void tl__ctx_fini(tl_ctx *tl)
{
        pool_free(&tl->dma_ops);
        pool_free(&tl->feeds);
        pool_free(&tl->recs);
        arena_free(&tl->arena);
        struct tl_tensors *p = &tl->structs;
        for (size_t i = 0; i < p->n_blocks; i++)
                free(p->blocks[i]);
        free(p->blocks);
        memset(p, 0, sizeof *p);
}
