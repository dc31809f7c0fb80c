/* tl/setup.c: the host side of a launch, the tl_setup_* API a kernel's
 * setup calls: its parameters from --set, its HBM tensors and their homes,
 * the capacity check; then the tensor files (files.c). Every problem is
 * bad input (exit 2). */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/ckd.h"
#include "base/names.h"
#include "tl/tl_int.h"

struct tl_setup {
        struct tl_run *run;          /* the run being set up */
        struct diag *d;              /* problems */
        const struct tl_param *defs; /* the kernel's parameters */
        int n_defs;                  /* how many */
        double values[TL_MAX_PARAMS];   /* resolved values (CHOICE: index) */
        bool given[TL_MAX_PARAMS];      /* came from --set */
        const char *made_file[TL_MAX_GLOBALS]; /* per tensor: its tl_setup_tensor call's file */
        int made_line[TL_MAX_GLOBALS]; /* ... and line */
};

static int find_def(const tl_setup *s, const char *name)
{
        for (int i = 0; name && i < s->n_defs; i++)
                if (strcmp(s->defs[i].name, name) == 0)
                        return i;
        return -1;
}

static int need_def(tl_setup *s, const char *name, tl_param_kind kind)
{
        int i = find_def(s, name);
        if (i < 0 || s->defs[i].kind != kind) {
                diag_error(s->d, "kernel %s: internal: no %s parameter '%s'", s->run->kernel->name,
                           kind == TL_PARAM_CHOICE ? "choice" : "numeric", name ? name : "(NULL)");
                return -1;
        }
        return i;
}

int64_t tl_setup_int(tl_setup *s, const char *name)
{
        int i = need_def(s, name, TL_PARAM_INT);
        return i < 0 ? 0 : (int64_t)s->values[i];
}

double tl_setup_float(tl_setup *s, const char *name)
{
        int i = need_def(s, name, TL_PARAM_FLOAT);
        return i < 0 ? 0 : s->values[i];
}

tl_machine tl_setup_machine(tl_setup *s)
{
        return tl__machine_of(s->run->sim);
}

int tl_setup_choice(tl_setup *s, const char *name)
{
        int i = need_def(s, name, TL_PARAM_CHOICE);
        return i < 0 ? 0 : (int)s->values[i];
}

bool tl_setup_is_set(tl_setup *s, const char *name)
{
        int i = find_def(s, name);
        return i >= 0 && s->given[i];
}

void tl_setup_error(tl_setup *s, const char *fmt, ...)
{
        char msg[512];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(msg, sizeof msg, fmt, ap);
        va_end(ap);
        diag_error(s->d, "kernel %s: %s", s->run->kernel->name, msg);
}

int64_t tl_setup_input_dim(tl_setup *s, const char *tensor, int axis)
{
        return tl__input_dim(s->run, tensor, axis);
}

/* Whether name can be the file stem of a new tensor: a name (base/names.h)
 * no tensor of the launch has yet; if not, reported at file:line. */
static bool tensor_name_ok(tl_setup *s, const char *name, const char *file, int line)
{
        const struct tl_run *r = s->run;
        const char *k = r->kernel->name;
        unsigned at = line > 0 ? (unsigned)line : 0;
        char why[512];
        if (!name_ok(name, why, sizeof why)) {
                diag_error_at(s->d, file, at, 0, "kernel %s: tensor name %s; %s", k, why, NAME_RULE);
                return false;
        }
        for (int i = 0; i < r->n_globals; i++)
                if (strcmp(r->globals[i].name, name) == 0) {
                        diag_error_at(s->d, file, at, 0,
                                      "kernel %s: tensor '%s' declared twice (first at %s:%d): "
                                      "both would be %s.npy",
                                      k, name, s->made_file[i] ? s->made_file[i] : "?",
                                      s->made_line[i], name);
                        return false;
                }
        return true;
}

tl_tensor *tl_impl_setup_tensor(tl_setup *s, const char *name, tl_io io, tl_dtype dt, int ndim,
                            const int64_t *shape, const char *file, int line)
{
        struct tl_run *r = s->run;
        static tl_tensor dummy;      /* returned after an error; never run */
        if (r->n_globals == TL_MAX_GLOBALS) {
                tl_setup_error(s, "more than %d tensors", TL_MAX_GLOBALS);
                return &dummy;
        }
        if (!tensor_name_ok(s, name, file, line))
                return &dummy;
        if (ndim < 0 || ndim > TL_MAX_DIMS) {
                tl_setup_error(s, "tensor %s: ndim %d, expected 0..%d", name, ndim, TL_MAX_DIMS);
                return &dummy;
        }
        if (ndim > 0 && !shape) {
                tl_setup_error(s, "tensor %s: shape is NULL", name);
                return &dummy;
        }
        if (!tl__dtype_known(dt)) {
                tl_setup_error(s, "tensor %s: dtype %d, expected %s", name, (int)dt, TL__DTYPES);
                return &dummy;
        }
        if (io != TL_INPUT && io != TL_OUTPUT && io != TL_TEMP) {
                tl_setup_error(s, "tensor %s: io %d, expected TL_INPUT, TL_OUTPUT or TL_TEMP",
                               name, (int)io);
                return &dummy;
        }
        uint64_t count = 1;
        for (int i = 0; i < ndim; i++) {
                if (shape[i] <= 0 || shape[i] > (INT64_C(1) << 32)) {
                        tl_setup_error(s, "tensor %s: extent %lld on axis %d must be in [1, 2^32]",
                                       name, (long long)shape[i], i);
                        return &dummy;
                }
                if (!ckd_mul_u64(&count, count, (uint64_t)shape[i]) ||
                    count > (UINT64_C(1) << 34)) {
                        tl_setup_error(s, "tensor %s: more than 2^34 elements", name);
                        return &dummy;
                }
        }
        s->made_file[r->n_globals] = file;
        s->made_line[r->n_globals] = line;
        struct tl_global *g = &r->globals[r->n_globals++];
        memset(g, 0, sizeof *g);
        snprintf(g->name, sizeof g->name, "%s", name);
        g->io = io;
        g->count = count;
        tl_tensor *t = &g->t;
        t->space = TL_HBM;
        t->dtype = dt;
        t->ndim = ndim;
        if (ndim)    /* a 0-D tensor may have no shape array */
                memcpy(t->shape, shape, (size_t)ndim * sizeof shape[0]);
        int64_t st = 1;
        for (int i = ndim - 1; i >= 0; i--) {
                t->stride[i] = st;
                st *= shape[i];
        }
        t->owner = t;
        t->name = g->name;
        t->made_by = "setup";
        t->magic = TL_TENSOR_MAGIC;
        ev_future_init(&t->ready, g->name);
        t->ready.done = true;
        return t;
}

/* ---- homes ----------------------------------------------------------------- */

/* A setup error at the kernel's file:line (a placement call). */
static void setup_error_at(tl_setup *s, const char *file, int line, const char *fmt, ...)
        __attribute__((format(printf, 4, 5)));
static void setup_error_at(tl_setup *s, const char *file, int line, const char *fmt, ...)
{
        char msg[512];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(msg, sizeof msg, fmt, ap);
        va_end(ap);
        diag_error_at(s->d, file, line > 0 ? (unsigned)line : 0, 0, "kernel %s: %s",
                      s->run->kernel->name, msg);
}

static const char *home_text(const struct tl_global *g, char *buf, size_t len)
{
        switch (g->home) {
        case TL_HOME_REPLICATED: return "replicated";
        case TL_HOME_INTERLEAVED: return "interleaved";
        case TL_HOME_SHARDED: break;
        }
        snprintf(buf, len, "sharded along axis %d", g->axis);
        return buf;
}

/* The launch's tensor t, or NULL after a message naming what. */
static struct tl_global *global_of(tl_setup *s, tl_tensor *t, const char *what, const char *file,
                                   int line)
{
        struct tl_run *r = s->run;
        for (int i = 0; i < r->n_globals; i++)
                if (t == &r->globals[i].t)
                        return &r->globals[i];
        if (!s->d->n_errors)   /* else t may be the dummy of an earlier error */
                setup_error_at(s, file, line, "%s: not a tensor of this launch (made by "
                               "tl_setup_tensor)", what);
        return NULL;
}

/* Set t's home (what: the call, at file:line). Placement is for HBM
 * tensors, once each; a block-cyclic shard's round (block x cubes) must
 * fit in 64 bits (home.c counts in it). */
static void set_home(tl_setup *s, tl_tensor *t, tl_home home, int axis, int64_t block,
                     const char *what, const char *file, int line)
{
        struct tl_global *g = global_of(s, t, what, file, line);
        if (!g)
                return;
        char was[48];
        if (g->t.sharded) {
                setup_error_at(s, file, line, "%s: tensor %s lives in the PEs' TCM "
                               "(tl_setup_tensor_sharded): it has no HBM home to place", what,
                               g->name);
                return;
        }
        if (g->home_file) {
                setup_error_at(s, file, line, "%s: tensor %s is already placed (%s, at %s:%d); "
                               "a tensor's placement is set once", what, g->name,
                               home_text(g, was, sizeof was), g->home_file, g->home_line);
                return;
        }
        if (home == TL_HOME_SHARDED && (axis < 0 || axis >= g->t.ndim)) {
                if (g->t.ndim == 0)
                        setup_error_at(s, file, line, "%s: tensor %s is 0-D: it has no axis to "
                                       "shard along (got axis %d)", what, g->name, axis);
                else
                        setup_error_at(s, file, line, "%s: tensor %s: axis %d, expected 0..%d",
                                       what, g->name, axis, g->t.ndim - 1);
                return;
        }
        uint32_t n_cubes = s->run->sim->n_cubes;
        uint64_t round;
        if (block < 0) {
                setup_error_at(s, file, line, "%s: tensor %s: block %lld, expected >= 0", what,
                               g->name, (long long)block);
                return;
        }
        if (!ckd_mul_u64(&round, (uint64_t)block, n_cubes)) {
                setup_error_at(s, file, line, "%s: tensor %s: block %lld over %u cubes: a round "
                               "of blocks (block x cubes) overflows 64 bits", what, g->name,
                               (long long)block, n_cubes);
                return;
        }
        g->home = home;
        g->axis = axis;
        g->block = block;
        g->home_file = file ? file : "?";
        g->home_line = line;
}

void tl_impl_setup_replicate(tl_setup *s, tl_tensor *t, const char *file, int line)
{
        set_home(s, t, TL_HOME_REPLICATED, 0, 0, "tl_setup_replicate", file, line);
}

void tl_impl_setup_shard(tl_setup *s, tl_tensor *t, int axis, int64_t block, const char *file,
                     int line)
{
        set_home(s, t, TL_HOME_SHARDED, axis, block, "tl_setup_shard", file, line);
}

void tl_impl_setup_interleave(tl_setup *s, tl_tensor *t, const char *file, int line)
{
        set_home(s, t, TL_HOME_INTERLEAVED, 0, 0, "tl_setup_interleave", file, line);
}

void tl_impl_setup_hbm_channel(tl_setup *s, tl_tensor *t, int channel, const char *file, int line)
{
        static const char what[] = "tl_setup_hbm_channel";
        struct tl_global *g = global_of(s, t, what, file, line);
        if (!g)
                return;
        uint32_t channels = s->run->sim->topo->cube.hbm.channels;
        if (g->t.sharded)
                setup_error_at(s, file, line, "%s: tensor %s lives in the PEs' TCM "
                               "(tl_setup_tensor_sharded): it has no HBM channel", what, g->name);
        else if (channel < 0 || (uint32_t)channel >= channels)
                setup_error_at(s, file, line, "%s: tensor %s: channel %d, expected 0..%u "
                               "(cube.hbm.channels - 1)", what, g->name, channel, channels - 1);
        else if (g->channel_plus1)
                setup_error_at(s, file, line, "%s: tensor %s is already held in channel %u; a "
                               "tensor's channel is set once", what, g->name,
                               g->channel_plus1 - 1);
        else
                g->channel_plus1 = (uint32_t)channel + 1;
}

/* The same calls for kernel libraries built before they were macros
 * (tl_int.h). */
tl_tensor *(tl_setup_tensor)(tl_setup *s, const char *name, tl_io io, tl_dtype dt, int ndim,
                             const int64_t *shape)
{
        return tl_impl_setup_tensor(s, name, io, dt, ndim, shape, NULL, 0);
}

tl_tensor *(tl_setup_tensor_sharded)(tl_setup *s, const char *name, tl_io io, tl_dtype dt,
                                     int ndim, const int64_t *shape)
{
        return tl_impl_setup_tensor_sharded(s, name, io, dt, ndim, shape, NULL, 0);
}

void (tl_setup_replicate)(tl_setup *s, tl_tensor *t)
{
        tl_impl_setup_replicate(s, t, NULL, 0);
}

void (tl_setup_shard)(tl_setup *s, tl_tensor *t, int axis, int64_t block)
{
        tl_impl_setup_shard(s, t, axis, block, NULL, 0);
}

void (tl_setup_interleave)(tl_setup *s, tl_tensor *t)
{
        tl_impl_setup_interleave(s, t, NULL, 0);
}

void tl_setup_gemm_fidelity(tl_setup *s, int passes)
{
        if (passes < 1 || passes > 4) {
                tl_setup_error(s, "tl_setup_gemm_fidelity: %d passes, expected 1 (LoFi) .. 4 (HiFi4)",
                               passes);
                return;
        }
        /* The machine is this launch's own (tl_run_kernel: freshly built). */
        s->run->sim->graph.topo.pe.gemm.fidelity_passes = (uint32_t)passes;
}

static void gib_text(uint64_t bytes, char *buf, size_t len)
{
        snprintf(buf, len, "%.2f GiB", (double)bytes / (double)(UINT64_C(1) << 30));
}

/* Every cube's share of the launch's tensors must fit its HBM: the first
 * tensor that overfills a cube is named. */
static int check_capacity(tl_setup *s)
{
        struct tl_run *r = s->run;
        const struct hw_sim *sim = r->sim;
        const struct topo_hbm *h = &sim->topo->cube.hbm;
        int worst = -1;
        uint32_t worst_cube = 0;
        uint64_t worst_total = 0;
        for (uint32_t c = 0; c < sim->n_cubes; c++) {
                uint64_t total = 0;
                for (int i = 0; i < r->n_globals && (worst < 0 || i < worst); i++) {
                        total = sat_add_u64(total, tl__home_cube_bytes(&r->globals[i], c,
                                                                       sim->n_cubes,
                                                                       h->page_bytes));
                        if (total > h->size_bytes) {
                                worst = i;
                                worst_cube = c;
                                worst_total = total;
                                break;
                        }
                }
        }
        if (worst < 0)
                return 0;
        const struct tl_global *g = &r->globals[worst];
        char home[48], mine[32], held[32], cap[32];
        gib_text(tl__home_cube_bytes(g, worst_cube, sim->n_cubes, h->page_bytes), mine,
                 sizeof mine);
        gib_text(worst_total, held, sizeof held);
        gib_text(h->size_bytes, cap, sizeof cap);
        tl_setup_error(s, "tensor %s (%s) does not fit in HBM: cube %u would hold %s of the "
                       "launch's tensors, %s of it %s's, more than its %s (cube.hbm.size_gib)",
                       g->name, home_text(g, home, sizeof home), worst_cube, held, mine, g->name,
                       cap);
        return -EINVAL;
}

tl_tensor *tl_impl_setup_tensor_sharded(tl_setup *s, const char *name, tl_io io, tl_dtype dt,
                                    int ndim, const int64_t *shape, const char *file, int line)
{
        int before = s->run->n_globals;
        tl_tensor *t = tl_impl_setup_tensor(s, name, io, dt, ndim, shape, file, line);
        if (s->run->n_globals > before) {
                t->space = TL_TCM;
                t->sharded = true;
                t->pinned = true;    /* consumed in place, as a TCM tensor is */
        }
        return t;
}

int tl_setup_mesh_dim(tl_setup *s, int axis)
{
        const struct topo_noc *noc = &s->run->sim->topo->cube.noc;
        return (int)(axis == 0 ? noc->cols : noc->rows);
}

int tl_setup_sip_row(tl_setup *s)
{
        const struct topo_system *sy = &s->run->sim->topo->system;
        return (int)(sy->sip_net == TOPO_NET_MESH && sy->mesh_cols ? sy->mesh_cols : sy->sips);
}

int tl_setup_sip_links(tl_setup *s)
{
        uint32_t links = s->run->sim->topo->system.inter_sip_links;
        return links ? (int)links : 1;
}

int tl_setup_grid(tl_setup *s, int axis)
{
        const struct topo_cube *c = &s->run->sim->topo->cube;
        uint32_t v = axis == 0 ? c->compute_cols : c->compute_rows;
        return v ? (int)v : tl_setup_mesh_dim(s, axis);
}

int64_t tl_setup_dim(tl_setup *s, const char *param, const char *tensor, int axis)
{
        if (!tl_setup_is_set(s, param)) {
                int64_t from_file = tl_setup_input_dim(s, tensor, axis);
                int i = find_def(s, param);
                if (from_file > 0 && i >= 0) {
                        /* The file stands for --set param=extent: same range. */
                        const struct tl_param *p = &s->defs[i];
                        if ((double)from_file < p->min || (double)from_file > p->max) {
                                tl_setup_error(s, "%s.npy: extent %lld of axis %d gives %s = "
                                               "%lld, outside its range [%.0f, %.0f]", tensor,
                                               (long long)from_file, axis, param,
                                               (long long)from_file, p->min, p->max);
                                return (int64_t)p->def;
                        }
                        s->values[i] = (double)from_file;
                        return from_file;
                }
        }
        return tl_setup_int(s, param);
}

/* ---- parameters ------------------------------------------------------------ */

static int parse_params(tl_setup *s, struct params *ps)
{
        const struct tl_param *defs = s->defs;
        for (int i = 0; i < s->n_defs; i++) {
                const struct tl_param *p = &defs[i];
                s->values[i] = p->def;
                const char *v;
                params_str(ps, p->name, NULL, &v);
                if (!v)
                        continue;
                s->given[i] = true;
                char msg[320];
                if (!tl_param_parse(p, v, &s->values[i], msg, sizeof msg))
                        diag_error(s->d, "--set %s=%s: %s", p->name, v, msg);
        }
        return 0;
}

int tl_setup_run(struct tl_run *r, struct diag *d)
{
        const struct tl_kernel *k = r->kernel;
        tl_setup s = { .run = r, .d = d, .defs = k->params };
        while (k->params && k->params[s.n_defs].name && s.n_defs < TL_MAX_PARAMS)
                s.n_defs++;
        struct params empty;
        params_init(&empty);
        struct params *ps = r->opts->params ? r->opts->params : &empty;
        parse_params(&s, ps);
        const char *known[TL_MAX_PARAMS + 1];
        for (int i = 0; i < s.n_defs; i++)
                known[i] = s.defs[i].name;
        known[s.n_defs] = NULL;
        char what[96];
        snprintf(what, sizeof what, "kernel %s", k->name);
        params_check_unused(ps, known, what, d);
        if (d->n_errors)
                return -EINVAL;
        if (k->args_size) {
                r->args = calloc(1, k->args_size);
                if (!r->args) {
                        diag_error(d, "out of memory");
                        return -ENOMEM;
                }
        }
        if (k->setup)
                k->setup(&s, r->args);
        if (d->n_errors || check_capacity(&s) < 0)
                return -EINVAL;
        return tl__load_files(r, d);
}
