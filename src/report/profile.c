/* report/profile.c: see profile.h. */
#include "report/profile.h"

#include <stdlib.h>
#include <string.h>

enum rep_engine rep_engine_of(const char *c)
{
        /* Compared in place: it is asked for every engine record. */
        if (!c || c[0] != 'p' || c[1] != 'e' || c[2] != '_')
                return REP_ENG_CPU;
        c += 3;
        if (c[0] == 'd' && c[1] == 'm' && c[2] == 'a' && !c[3])
                return REP_ENG_DMA;
        if (c[0] == 'g' && c[1] == 'e' && c[2] == 'm' && c[3] == 'm' && !c[4])
                return REP_ENG_GEMM;
        if (c[0] == 'm' && c[1] == 'a' && c[2] == 't' && c[3] == 'h' && !c[4])
                return REP_ENG_MATH;
        return REP_ENG_CPU;
}

const char *rep_engine_name(enum rep_engine e)
{
        static const char *const names[] = { "pe_dma", "pe_gemm", "pe_math", "pe_cpu" };
        return (unsigned)e <= REP_ENG_CPU ? names[e] : "?";
}

sim_ps rep_line_total_ps(const struct rep_line *l)
{
        sim_ps t = l->issue_ps + l->wait_ps;
        for (int e = 0; e < REP_ENG_COUNT; e++)
                t += l->engine_ps[e];
        return t;
}

static size_t slot_of(const char *file, int line, size_t cap)
{
        uint64_t h = (uint64_t)(uintptr_t)file * UINT64_C(0x9e3779b97f4a7c15) ^ (uint64_t)line *
                     UINT64_C(0xc2b2ae3d27d4eb4f);
        return (size_t)(h ^ h >> 29) & (cap - 1);
}

static int grow(struct rep_profile *p)
{
        size_t cap = p->cap ? p->cap * 2 : 256;
        struct rep_line *s = calloc(cap, sizeof *s);
        if (!s)
                return -1;
        for (size_t i = 0; i < p->cap; i++) {
                if (!p->slots[i].file)
                        continue;
                size_t j = slot_of(p->slots[i].file, p->slots[i].line, cap);
                while (s[j].file)
                        j = (j + 1) & (cap - 1);
                s[j] = p->slots[i];
        }
        free(p->slots);
        p->slots = s;
        p->cap = cap;
        p->n_grown++;
        return 0;
}

struct rep_line *rep_profile_at(struct rep_profile *p, const char *file, int line)
{
        if (!file)
                file = "?";
        if (p->cap) {
                size_t i = slot_of(file, line, p->cap);
                for (; p->slots[i].file; i = (i + 1) & (p->cap - 1))
                        if (p->slots[i].file == file && p->slots[i].line == line)
                                return &p->slots[i];
        }
        if ((p->n + 1) * 2 > p->cap && grow(p) < 0) {
                p->oom = true;
                return NULL;
        }
        size_t i = slot_of(file, line, p->cap);
        while (p->slots[i].file)
                i = (i + 1) & (p->cap - 1);
        p->slots[i] = (struct rep_line){ .file = file, .line = line };
        p->n++;
        return &p->slots[i];
}

struct rep_line *rep_profile_rehint(struct rep_profile *p, const char *file, int line,
                                    struct rep_line_hint *hint)
{
        struct rep_line *l = rep_profile_at(p, file, line);
        *hint = (struct rep_line_hint){ .l = l, .n_grown = p->n_grown };
        return l;
}

static int by_place(const void *a, const void *b)
{
        const struct rep_line *x = a, *y = b;
        int c = strcmp(x->file, y->file);
        return c ? c : (x->line > y->line) - (x->line < y->line);
}

static int by_time(const void *a, const void *b)
{
        sim_ps ta = rep_line_total_ps(a), tb = rep_line_total_ps(b);
        if (ta != tb)
                return ta > tb ? -1 : 1;
        return by_place(a, b);
}

size_t rep_profile_sorted(const struct rep_profile *p, struct rep_line **out)
{
        *out = NULL;
        if (!p->n)
                return 0;
        struct rep_line *v = malloc(p->n * sizeof *v);
        if (!v)
                return 0;
        size_t n = 0;
        for (size_t i = 0; i < p->cap; i++)
                if (p->slots[i].file)
                        v[n++] = p->slots[i];
        /* The same file name under two pointers (two translation units)
         * is one place. */
        qsort(v, n, sizeof *v, by_place);
        size_t m = 0;
        for (size_t i = 0; i < n; i++) {
                if (m && by_place(&v[m - 1], &v[i]) == 0) {
                        struct rep_line *d = &v[m - 1];
                        d->issue_ps += v[i].issue_ps;
                        d->wait_ps += v[i].wait_ps;
                        d->n_ops += v[i].n_ops;
                        for (int e = 0; e < REP_ENG_COUNT; e++)
                                d->engine_ps[e] += v[i].engine_ps[e];
                } else {
                        v[m++] = v[i];
                }
        }
        qsort(v, m, sizeof *v, by_time);
        *out = v;
        return m;
}

void rep_profile_fini(struct rep_profile *p)
{
        free(p->slots);
        memset(p, 0, sizeof *p);
}
