/* tl/copies.c: data mode follows placement (docs/adr/0017). A replicated
 * HBM tensor has a copy in every cube and each PE uses its own cube's
 * (cubesim/tl.h). Its storage models that: one shared buffer (the
 * tensor's data, what the host put in every copy) until a cube writes the
 * tensor; that cube then gets a copy of its own (copy on write, per cube),
 * and its PEs read and write that copy from then on, as on the machine.
 *
 * A read on cube c of an element that c's copy never received, while
 * another cube's copy did, is a kernel error naming both calls: the
 * machine returns what the host put in c's copy (an input's value;
 * nothing defined for a temporary or an output), never the other cube's
 * write, so the kernel meant one copy where it made C. For that, every
 * element of a written tensor records its last write (a site: file, line,
 * PE) and each cube a bit per element its copy received. At the run's end
 * each element of a written tensor is gathered from the copy of the cube
 * that wrote it last: what the outputs hold.
 *
 * Sharded and interleaved tensors have one copy of each byte, which every
 * PE reads: nothing to follow. A machine of one cube has one copy.
 *
 * A launch tensor sharded over the PEs' TCM (tl_setup_tensor_sharded) has
 * each part in one PE's TCM, the PE that uses it: each element is the
 * part of the first PE that touches it (reads or writes it), and a touch
 * by another PE is a kernel error naming both lines; the machine would
 * read that PE's own TCM instead. One site per element (4 bytes) once the
 * tensor is touched.
 *
 * Memory: nothing for a tensor no cube writes (an input only read); a
 * written one costs 4 bytes per element (its sites), and each cube that
 * writes it a copy (4 bytes per element) and a bit per element. */
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "tl/tl_int.h"

/* The per-cube state of a written replicated tensor. */
struct tl_copies {
        uint32_t *site;              /* per element: its last write, an index of tl_run.sites
                                        (0: never written) */
        float **data;                /* per cube: its own copy once it wrote (NULL: it reads the
                                        shared buffer) */
        uint64_t **got;              /* per cube: a bit per element its copy was written */
};

/* The launch tensor of HBM tensor t (a view) if it is replicated over
 * more than one cube, else NULL. */
static struct tl_global *replica_of(const tl_ctx *tl, const tl_tensor *t)
{
        struct tl_run *r = tl->run;
        if (t->space != TL_HBM || r->sim->n_cubes < 2)
                return NULL;
        for (int i = 0; i < r->n_globals; i++)
                if (t->owner == &r->globals[i].t)
                        return r->globals[i].home == TL_HOME_REPLICATED ? &r->globals[i] : NULL;
        return NULL;
}

static uint32_t cube_of_rank(const struct tl_run *r, uint32_t rank)
{
        return rank / r->sim->pes_per_cube;
}

/* The site of a write by tl at file:line (made if new); 0 when out of
 * memory. Each PE remembers the sites of its lines by line modulo TL_HINTS,
 * so a loop's stores find theirs at once. */
static uint32_t site_of(tl_ctx *tl, const char *file, int line)
{
        struct tl_run *r = tl->run;
        uint32_t *hint = &tl->site_hints[(unsigned)line % TL_HINTS];
        const struct tl_site *s = *hint ? &r->sites[*hint] : NULL;
        if (s && s->line == line && s->file == file)
                return *hint;
        if (r->n_sites + 1 >= r->cap_sites) {
                size_t cap = r->cap_sites ? 2 * (size_t)r->cap_sites : 64;
                struct tl_site *v = cap < UINT32_MAX ? realloc(r->sites, cap * sizeof *v) : NULL;
                if (!v)
                        return 0;
                r->sites = v;
                r->cap_sites = (uint32_t)cap;
        }
        *hint = ++r->n_sites;
        r->sites[*hint] = (struct tl_site){ .file = file, .line = line, .rank = tl->rank };
        return *hint;
}

/* An owner's element indices, C order, of view t: t's extents and strides
 * padded to 4 axes. */
struct region {
        int64_t ext[4];              /* extents (1 on the padded axes) */
        int64_t st[4];               /* strides, elements */
        int64_t off;                 /* the first element */
};

static void region_of(const tl_tensor *t, struct region *g)
{
        int pad = 4 - t->ndim;
        for (int i = 0; i < 4; i++) {
                g->ext[i] = i < pad ? 1 : t->shape[i - pad];
                g->st[i] = i < pad ? 0 : t->stride[i - pad];
        }
        g->off = t->offset;
}

#define FOR_REGION(g, e, ...)                                                                 \
        for (int64_t i0 = 0; i0 < (g).ext[0]; i0++)                                            \
                for (int64_t i1 = 0; i1 < (g).ext[1]; i1++)                                    \
                        for (int64_t i2 = 0; i2 < (g).ext[2]; i2++)                            \
                                for (int64_t i3 = 0; i3 < (g).ext[3]; i3++) {                  \
                                        uint64_t e = (uint64_t)((g).off + i0 * (g).st[0] +     \
                                                                i1 * (g).st[1] +               \
                                                                i2 * (g).st[2] + i3 * (g).st[3]); \
                                        __VA_ARGS__;                                           \
                                }

static bool has_bit(const uint64_t *bits, uint64_t e)
{
        return bits && (bits[e / 64] >> (e % 64) & 1);
}

/* t's view over storage base, in *tmp. */
static tl_tensor *image(const tl_tensor *t, float *base, tl_tensor *tmp)
{
        memcpy(tmp, t, TL_VIEW_BYTES);
        tmp->base = base;
        return tmp;
}

/* "[3, 0]": owner element e of g's tensor as an index. */
static void index_text(const struct tl_global *g, uint64_t e, char *buf, size_t len)
{
        int64_t idx[TL_MAX_DIMS];
        for (int i = g->t.ndim - 1; i >= 0; i--) {
                idx[i] = (int64_t)(e % (uint64_t)g->t.shape[i]);
                e /= (uint64_t)g->t.shape[i];
        }
        tl__shape_text(buf, len, g->t.ndim, idx);
}

/* The kernel error of op at file:line reading element e of g, which
 * the write (a replicated tensor) or first touch (one sharded over the
 * PEs' TCM) at site put where this PE does not see it. */
_Noreturn static void clash(tl_ctx *tl, const struct tl_global *g, uint64_t e, uint32_t site,
                            const char *file, int line, const char *op)
{
        const struct tl_run *r = tl->run;
        const struct tl_site *w = &r->sites[site];
        const char *who = r->ctx[w->rank].pe->name;
        char at[96];
        index_text(g, e, at, sizeof at);
        if (g->t.sharded)
                tl__fail(tl, file, line, op,
                         "touches element %s of %s, which is sharded over the PEs' TCM "
                         "(tl_setup_tensor_sharded): it is PE %s's part, first touched at %s:%d, "
                         "in that PE's TCM (a PE touches only its own part; send the data with "
                         "tl_send)", at, g->name, who, w->file, w->line);
        tl__fail(tl, file, line, op,
                 "reads element %s of %s, which is replicated (a copy per cube, each PE reading "
                 "its own cube's), and cube %u's copy never received it: PE %s wrote it to cube "
                 "%u's copy at %s:%d (interleave or shard %s with tl_setup_interleave or "
                 "tl_setup_shard for one copy every PE sees, or have each cube write its own)",
                 at, g->name, cube_of_rank(r, tl->rank), who, cube_of_rank(r, w->rank), w->file,
                 w->line, g->name);
}

const tl_tensor *tl__data_read(tl_ctx *tl, const tl_tensor *t, tl_tensor *tmp, const char *file,
                               int line, const char *op)
{
        struct tl_global *g = replica_of(tl, t);
        if (!g || !g->copies)
                return t;
        struct tl_run *r = tl->run;
        struct tl_copies *cp = g->copies;
        uint32_t c = cube_of_rank(r, tl->rank);
        const uint64_t *mine = cp->got[c];
        struct region rg;
        region_of(t, &rg);
        FOR_REGION(rg, e, if (cp->site[e] && !has_bit(mine, e))
                clash(tl, g, e, cp->site[e], file, line, op));
        return cp->data[c] ? image(t, cp->data[c], tmp) : t;
}

/* g's per-cube state, made at its first write; NULL when out of memory. */
static struct tl_copies *copies_of(struct tl_run *r, struct tl_global *g)
{
        if (g->copies)
                return g->copies;
        struct tl_copies *cp = calloc(1, sizeof *cp);
        if (!cp)
                return NULL;
        cp->site = calloc(g->count ? g->count : 1, sizeof *cp->site);
        cp->data = calloc(r->sim->n_cubes, sizeof *cp->data);
        cp->got = calloc(r->sim->n_cubes, sizeof *cp->got);
        if (!cp->site || !cp->data || !cp->got) {
                free(cp->site);
                free(cp->data);
                free(cp->got);
                free(cp);
                return NULL;
        }
        return g->copies = cp;
}

tl_tensor *tl__data_write(tl_ctx *tl, tl_tensor *t, tl_tensor *tmp, const char *file, int line,
                          const char *op)
{
        struct tl_global *g = replica_of(tl, t);
        if (!g)
                return t;
        struct tl_run *r = tl->run;
        uint32_t c = cube_of_rank(r, tl->rank), s = site_of(tl, file, line);
        struct tl_copies *cp = copies_of(r, g);
        if (cp && !cp->data[c]) {
                cp->data[c] = malloc(g->count * sizeof(float) + 1);
                cp->got[c] = calloc((g->count + 63) / 64 + 1, sizeof(uint64_t));
                if (cp->data[c])
                        memcpy(cp->data[c], g->data, g->count * sizeof(float));
        }
        if (!s || !cp || !cp->data[c] || !cp->got[c])
                tl__fail(tl, file, line, op, "host out of memory for cube %u's copy of %s (%llu "
                         "elements)", c, g->name, (unsigned long long)g->count);
        uint64_t *mine = cp->got[c];
        struct region rg;
        region_of(t, &rg);
        FOR_REGION(rg, e, {
                cp->site[e] = s;
                mine[e / 64] |= UINT64_C(1) << (e % 64);
        });
        return image(t, cp->data[c], tmp);
}

void tl__sharded_touch(tl_ctx *tl, const tl_tensor *t, const char *file, int line,
                       const char *op)
{
        struct tl_run *r = tl->run;
        if (r->opts->mode != TL_MODE_DATA)
                return;
        struct tl_global *g = container_of(t->owner, struct tl_global, t);
        if (!g->part)
                g->part = calloc(g->count ? g->count : 1, sizeof *g->part);
        uint32_t s = site_of(tl, file, line);
        if (!g->part || !s)
                tl__fail(tl, file, line, op, "host out of memory for the parts of %s", g->name);
        struct region rg;
        region_of(t, &rg);
        FOR_REGION(rg, e, {
                uint32_t o = g->part[e];
                if (!o)
                        g->part[e] = s;
                else if (r->sites[o].rank != tl->rank)
                        clash(tl, g, e, o, file, line, op);
        });
}

void tl__copies_gather(struct tl_run *r)
{
        for (int i = 0; i < r->n_globals; i++) {
                struct tl_global *g = &r->globals[i];
                const struct tl_copies *cp = g->copies;
                if (!cp || !cp->site || !cp->data || !g->data)
                        continue;
                for (uint64_t e = 0; e < g->count; e++) {
                        if (!cp->site[e])
                                continue;
                        const float *from = cp->data[cube_of_rank(r, r->sites[cp->site[e]].rank)];
                        if (from)
                                g->data[e] = from[e];
                }
        }
}

void tl__copies_free(struct tl_run *r)
{
        for (int i = 0; i < r->n_globals; i++) {
                struct tl_copies *cp = r->globals[i].copies;
                free(r->globals[i].part);
                r->globals[i].part = NULL;
                if (!cp)
                        continue;
                for (uint32_t c = 0; c < r->sim->n_cubes; c++) {
                        free(cp->data ? cp->data[c] : NULL);
                        free(cp->got ? cp->got[c] : NULL);
                }
                free(cp->data);
                free(cp->got);
                free(cp->site);
                free(cp);
                r->globals[i].copies = NULL;
        }
        free(r->sites);
        r->sites = NULL;
        r->n_sites = r->cap_sites = 0;
}
