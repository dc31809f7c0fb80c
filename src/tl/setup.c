/* tl/setup.c: the host side of a launch: a kernel's parameters from
 * --set, its HBM tensors, inputs read from --inputs DIR (NAME.npy) or
 * generated (seeded, uniform in [-1, 1), rounded to the dtype), outputs
 * written to --outputs DIR as float32 .npy. With --inputs every input
 * must have its file unless --allow-random lets the missing ones be
 * generated; --save-inputs DIR writes the generated ones. Each input's
 * origin is reported as a note. Every problem is bad input (exit 2).
 * Paths are built to their full length (no fixed buffers); input files
 * must be regular files (a FIFO would block the run). */
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/ckd.h"
#include "base/names.h"
#include "base/npy.h"
#include "tl/tl_int.h"

#define MAX_PARAMS 64

struct tl_setup {
        struct tl_run *run;          /* the run being set up */
        struct diag *d;              /* problems */
        const struct tl_param *defs; /* the kernel's parameters */
        int n_defs;                  /* how many */
        double values[MAX_PARAMS];   /* resolved values (CHOICE: index) */
        bool given[MAX_PARAMS];      /* came from --set */
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

/* DIR/NAME.npy, malloc'd; NULL (and a message) when out of memory. */
static char *npy_path(const char *dir, const char *name, struct diag *d)
{
        char *p;
        if (asprintf(&p, "%s/%s.npy", dir, name) < 0) {
                diag_error(d, "out of memory for the path of %s.npy", name);
                return NULL;
        }
        return p;
}

enum file_kind { FILE_ABSENT, FILE_REGULAR, FILE_OTHER };

static enum file_kind file_kind(const char *path)
{
        struct stat st;
        if (stat(path, &st) != 0)
                return FILE_ABSENT;
        return S_ISREG(st.st_mode) ? FILE_REGULAR : FILE_OTHER;
}

int64_t tl_setup_input_dim(tl_setup *s, const char *tensor, int axis)
{
        const struct tl_run *r = s->run;
        if (!r->opts->inputs_dir || !name_ok(tensor, NULL, 0))
                return -1;           /* a bad name is reported where the tensor is declared */
        struct diag quiet;
        diag_init(&quiet);
        char *path = npy_path(r->opts->inputs_dir, tensor, &quiet);
        struct npy_array a;
        int rc = path && file_kind(path) == FILE_REGULAR ? npy_read_header(path, &a, &quiet) : -1;
        diag_fini(&quiet);
        free(path);
        if (rc < 0 || axis < 0 || axis >= a.ndim)
                return -1; /* the full read reports it */
        return a.shape[axis];
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

tl_tensor *tl__setup_tensor(tl_setup *s, const char *name, tl_io io, tl_dtype dt, int ndim,
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

void tl__setup_replicate(tl_setup *s, tl_tensor *t, const char *file, int line)
{
        set_home(s, t, TL_HOME_REPLICATED, 0, 0, "tl_setup_replicate", file, line);
}

void tl__setup_shard(tl_setup *s, tl_tensor *t, int axis, int64_t block, const char *file,
                     int line)
{
        set_home(s, t, TL_HOME_SHARDED, axis, block, "tl_setup_shard", file, line);
}

void tl__setup_interleave(tl_setup *s, tl_tensor *t, const char *file, int line)
{
        set_home(s, t, TL_HOME_INTERLEAVED, 0, 0, "tl_setup_interleave", file, line);
}

void tl__setup_hbm_channel(tl_setup *s, tl_tensor *t, int channel, const char *file, int line)
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
        return tl__setup_tensor(s, name, io, dt, ndim, shape, NULL, 0);
}

tl_tensor *(tl_setup_tensor_sharded)(tl_setup *s, const char *name, tl_io io, tl_dtype dt,
                                     int ndim, const int64_t *shape)
{
        return tl__setup_tensor_sharded(s, name, io, dt, ndim, shape, NULL, 0);
}

void (tl_setup_replicate)(tl_setup *s, tl_tensor *t)
{
        tl__setup_replicate(s, t, NULL, 0);
}

void (tl_setup_shard)(tl_setup *s, tl_tensor *t, int axis, int64_t block)
{
        tl__setup_shard(s, t, axis, block, NULL, 0);
}

void (tl_setup_interleave)(tl_setup *s, tl_tensor *t)
{
        tl__setup_interleave(s, t, NULL, 0);
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

tl_tensor *tl__setup_tensor_sharded(tl_setup *s, const char *name, tl_io io, tl_dtype dt,
                                    int ndim, const int64_t *shape, const char *file, int line)
{
        int before = s->run->n_globals;
        tl_tensor *t = tl__setup_tensor(s, name, io, dt, ndim, shape, file, line);
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

int tl_setup_grid(tl_setup *s, int axis)
{
        const struct topo_cube *c = &s->run->sim->topo->cube;
        uint32_t v = axis == 0 ? c->compute_cols : c->compute_rows;
        return v ? (int)v : tl_setup_mesh_dim(s, axis);
}

/* The file's shape must be the kernel's; else a located error. */
static int check_file_shape(const char *path, const struct npy_array *a, const struct tl_global *g,
                            struct diag *d)
{
        bool same = a->ndim == g->t.ndim;
        for (int i = 0; same && i < a->ndim; i++)
                same = a->shape[i] == g->t.shape[i];
        if (same)
                return 0;
        char fs[96], ks[96];
        tl__shape_text(fs, sizeof fs, a->ndim, a->shape);
        tl__shape_text(ks, sizeof ks, g->t.ndim, g->t.shape);
        diag_error_at(d, path, 0, 0,
                      "shape %s does not match the kernel's %s for '%s' (set the shape "
                      "parameters to agree, or leave them unset to take them from the file)",
                      fs, ks, g->name);
        return -EINVAL;
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

/* One parameter definition of kernel k; problems to d at where. */
static int check_param_def(const struct tl_kernel *k, const struct tl_param *p, const char *where,
                           struct diag *d)
{
        const char *name = p->name;
        switch (p->kind) {
        case TL_PARAM_INT:
        case TL_PARAM_FLOAT:
                if (!(p->min <= p->def && p->def <= p->max) ||
                    (p->kind == TL_PARAM_INT && p->def != floor(p->def))) {
                        diag_error_at(d, where, 0, 0,
                                      "kernel %s: parameter '%s': default %g is not %s in "
                                      "[%g, %g]", k->name, name, p->def,
                                      p->kind == TL_PARAM_INT ? "an integer" : "a number",
                                      p->min, p->max);
                        return -EINVAL;
                }
                return 0;
        case TL_PARAM_CHOICE: {
                int n = 0;
                while (p->choices && p->choices[n] && n < 256)
                        n++;
                if (n == 0) {
                        diag_error_at(d, where, 0, 0,
                                      "kernel %s: parameter '%s': a choice parameter needs "
                                      "choices, a NULL-terminated list of words (got %s)",
                                      k->name, name, p->choices ? "an empty list" : "NULL");
                        return -EINVAL;
                }
                if (!(p->def >= 0 && p->def < n && p->def == floor(p->def))) {
                        diag_error_at(d, where, 0, 0,
                                      "kernel %s: parameter '%s': default %g is not an index "
                                      "into its %d choices (0..%d)", k->name, name, p->def, n,
                                      n - 1);
                        return -EINVAL;
                }
                return 0;
        }
        }
        diag_error_at(d, where, 0, 0, "kernel %s: parameter '%s': kind %d is not INT, FLOAT or "
                      "CHOICE", k->name, name, (int)p->kind);
        return -EINVAL;
}

int tl_kernel_check(const struct tl_kernel *k, const char *where, struct diag *d)
{
        int rc = 0, n = 0;
        for (const struct tl_param *p = k->params; p && p->name; p++, n++) {
                if (n == MAX_PARAMS) {
                        diag_error_at(d, where, 0, 0, "kernel %s: more than %d parameters",
                                      k->name, MAX_PARAMS);
                        return -EINVAL;
                }
                if (check_param_def(k, p, where, d) < 0)
                        rc = -EINVAL;
        }
        return rc;
}

bool tl_param_parse(const struct tl_param *p, const char *v, double *out, char *msg, size_t len)
{
        if (p->kind == TL_PARAM_CHOICE) {
                for (int k = 0; p->choices[k]; k++) {
                        if (strcmp(p->choices[k], v) == 0) {
                                *out = k;
                                return true;
                        }
                }
                size_t n = (size_t)snprintf(msg, len, "expected one of");
                for (int j = 0; p->choices[j] && n < len; j++)
                        n += (size_t)snprintf(msg + n, len - n, "%s %s", j ? "," : "",
                                              p->choices[j]);
                return false;
        }
        if (p->kind == TL_PARAM_INT) {
                int64_t i;
                if (params_parse_i64(v, &i) && (double)i >= p->min && (double)i <= p->max) {
                        *out = (double)i;
                        return true;
                }
                snprintf(msg, len, "expected an integer in [%.0f, %.0f]", p->min, p->max);
                return false;
        }
        if (params_parse_double(v, out) && *out >= p->min && *out <= p->max)
                return true;
        snprintf(msg, len, "expected a number in [%g, %g]", p->min, p->max);
        return false;
}

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

/* ---- inputs ------------------------------------------------------------------- */

static uint64_t splitmix(uint64_t *st)
{
        uint64_t z = (*st += UINT64_C(0x9e3779b97f4a7c15));
        z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
        z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
        return z ^ (z >> 31);
}

/* An input value as stored before round_blocks: rounded to the dtype, or
 * as it is for a block float (rounded in groups afterwards). */
static float input_value(const struct tl_global *g, float v)
{
        return tl__is_bfp(g->t.dtype) ? v : tl__round(v, g->t.dtype);
}

/* A block-float input is rounded row by row, in groups of 16. */
static void round_blocks(struct tl_global *g)
{
        if (!tl__is_bfp(g->t.dtype))
                return;
        int64_t n = g->t.ndim ? g->t.shape[g->t.ndim - 1] : 1;
        for (uint64_t i = 0; n > 0 && i < g->count; i += (uint64_t)n)
                tl__bfp_round(g->data + i, n, 1, g->t.dtype);
}

/* Read input g from path into g->data (allocated); its shape must agree. */
static int read_input(struct tl_global *g, const char *path, struct diag *d)
{
        struct npy_array a;
        if (npy_read(path, &a, d) < 0)
                return -EINVAL;
        if (check_file_shape(path, &a, g, d) < 0) {
                npy_free(&a);
                return -EINVAL;
        }
        for (uint64_t i = 0; i < g->count; i++)
                g->data[i] = input_value(g, a.data[i]);
        npy_free(&a);
        round_blocks(g);
        return 0;
}

/* Input number index, uniform in [-1, 1) from the run's seed. */
static void generate_input(const struct tl_run *r, struct tl_global *g, int index)
{
        uint64_t st = r->opts->seed * UINT64_C(1000003) + (uint64_t)index;
        for (uint64_t i = 0; i < g->count; i++) {
                double u = (double)(splitmix(&st) >> 11) * 0x1.0p-53;
                g->data[i] = input_value(g, (float)(2.0 * u - 1.0));
        }
        round_blocks(g);
}

/* Where input g comes from: its file under --inputs (a regular file), or
 * NULL with *missing set when there is none. A path that is not a regular
 * file is an error. */
static int find_input(const struct tl_run *r, const struct tl_global *g, char **path,
                      bool *missing, struct diag *d)
{
        *path = NULL;
        *missing = false;
        if (!r->opts->inputs_dir)
                return 0;
        char *p = npy_path(r->opts->inputs_dir, g->name, d);
        if (!p)
                return -ENOMEM;
        switch (file_kind(p)) {
        case FILE_REGULAR:
                *path = p;
                return 0;
        case FILE_OTHER:
                diag_error_at(d, p, 0, 0, "not a regular file (input '%s' must be a .npy file)",
                              g->name);
                free(p);
                return -EINVAL;
        case FILE_ABSENT:
                break;
        }
        free(p);
        *missing = true;
        return 0;
}

/* With --inputs and no --allow-random, a missing input file is an error
 * naming every expected file and shape, and the .npy files of the
 * directory that are not inputs (a misspelt name). */
static int check_inputs_present(struct tl_run *r, struct diag *d)
{
        if (!r->opts->inputs_dir || r->opts->allow_random)
                return 0;
        char missing[512] = "", expected[1024] = "";
        int n_missing = 0, rc = 0;
        for (int i = 0; i < r->n_globals; i++) {
                const struct tl_global *g = &r->globals[i];
                if (g->io != TL_INPUT)
                        continue;
                char *path;
                bool absent;
                if ((rc = find_input(r, g, &path, &absent, d)) < 0)
                        return rc;
                free(path);
                char shape[96];
                tl__shape_text(shape, sizeof shape, g->t.ndim, g->t.shape);
                snprintf(expected + strlen(expected), sizeof expected - strlen(expected),
                         "%s%s.npy %s", expected[0] ? ", " : "", g->name, shape);
                if (absent) {
                        snprintf(missing + strlen(missing), sizeof missing - strlen(missing),
                                 "%s%s.npy", n_missing ? ", " : "", g->name);
                        n_missing++;
                }
        }
        if (!n_missing)
                return 0;
        diag_error_at(d, r->opts->inputs_dir, 0, 0, "no %s for kernel %s (it reads %s); give "
                      "the file%s, or --allow-random to generate what is missing", missing,
                      r->kernel->name, expected, n_missing > 1 ? "s" : "");
        DIR *dir = opendir(r->opts->inputs_dir);
        for (struct dirent *e; dir && (e = readdir(dir));) {
                size_t len = strlen(e->d_name);
                if (len < 5 || strcmp(e->d_name + len - 4, ".npy") != 0)
                        continue;
                bool known = false;
                for (int i = 0; i < r->n_globals && !known; i++)
                        known = r->globals[i].io == TL_INPUT &&
                                strlen(r->globals[i].name) == len - 4 &&
                                strncmp(r->globals[i].name, e->d_name, len - 4) == 0;
                if (!known)
                        diag_report(d, DIAG_NOTE, r->opts->inputs_dir, 0, 0,
                                    "%s is not an input of kernel %s", e->d_name, r->kernel->name);
        }
        if (dir)
                closedir(dir);
        return -EINVAL;
}

/* Data mode: each tensor's storage; inputs read or generated (and noted),
 * others zero. */
static int fill_tensor(struct tl_run *r, struct tl_global *g, int index, struct diag *d)
{
        g->data = malloc(g->count * sizeof(float) + 1);
        if (!g->data) {
                diag_error(d, "tensor %s: host out of memory for %llu elements", g->name,
                           (unsigned long long)g->count);
                return -ENOMEM;
        }
        g->t.base = g->data;
        if (g->io != TL_INPUT) {
                memset(g->data, 0, g->count * sizeof(float));
                return 0;
        }
        char *path;
        bool missing;
        int rc = find_input(r, g, &path, &missing, d);
        if (rc < 0)
                return rc;
        if (path) {
                rc = read_input(g, path, d);
                free(path);
                if (rc == 0)
                        g->source = TL_SOURCE_FILE;
                return rc;
        }
        if (missing && !r->opts->allow_random)
                return -EINVAL;      /* reported by check_inputs_present */
        generate_input(r, g, index);
        g->source = TL_SOURCE_SEED;
        return 0;
}

void tl_report_inputs(const struct tl_run *r, FILE *out)
{
        for (int i = 0; r && i < r->n_globals; i++) {
                const struct tl_global *g = &r->globals[i];
                if (g->io != TL_INPUT || g->source == TL_SOURCE_NONE)
                        continue;
                char shape[96];
                tl__shape_text(shape, sizeof shape, g->t.ndim, g->t.shape);
                fprintf(out, "note: input %s %s: ", g->name, shape);
                if (g->source == TL_SOURCE_FILE)
                        fprintf(out, "read from %s/%s.npy", r->opts->inputs_dir, g->name);
                else
                        fprintf(out, "generated%s, uniform in [-1, 1) from seed %llu",
                                r->opts->inputs_dir ? " (no file; --allow-random)" : "",
                                (unsigned long long)r->opts->seed);
                if (g->saved)
                        fprintf(out, "; saved to %s/%s.npy", r->opts->save_inputs_dir, g->name);
                fputc('\n', out);
        }
}

/* Directory dir of option opt exists (made if need be), before the run:
 * a path that cannot be one is bad input, not a failure after the run. */
static int need_dir(const char *dir, const char *opt, struct diag *d)
{
        struct stat st;
        if (!dir)
                return 0;
        if (mkdir(dir, 0777) < 0 && errno != EEXIST) {
                diag_error_at(d, dir, 0, 0, "cannot create the directory for %s: %s", opt,
                              strerror(errno));
                return -EINVAL;
        }
        if (stat(dir, &st) < 0 || !S_ISDIR(st.st_mode)) {
                diag_error_at(d, dir, 0, 0, "not a directory (%s writes NAME.npy files into one)",
                              opt);
                return -EINVAL;
        }
        return 0;
}

/* --save-inputs DIR: the generated inputs as float32 .npy files. */
static int save_inputs(struct tl_run *r, struct diag *d)
{
        const char *dir = r->opts->save_inputs_dir;
        if (!dir)
                return 0;
        if (need_dir(dir, "--save-inputs", d) < 0)
                return -EINVAL;
        for (int i = 0; i < r->n_globals; i++) {
                struct tl_global *g = &r->globals[i];
                if (g->source != TL_SOURCE_SEED)
                        continue;
                char *path = npy_path(dir, g->name, d);
                if (!path || npy_write(path, NPY_F32, g->t.ndim, g->t.shape, g->data, d) < 0) {
                        free(path);
                        return -EINVAL;
                }
                g->saved = true;
                free(path);
        }
        return 0;
}

int tl_setup_run(struct tl_run *r, struct diag *d)
{
        const struct tl_kernel *k = r->kernel;
        tl_setup s = { .run = r, .d = d, .defs = k->params };
        while (k->params && k->params[s.n_defs].name && s.n_defs < MAX_PARAMS)
                s.n_defs++;
        struct params empty;
        params_init(&empty);
        struct params *ps = r->opts->params ? r->opts->params : &empty;
        parse_params(&s, ps);
        const char *known[MAX_PARAMS + 1];
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
        /* Every problem of the files at once: the missing ones, then those
         * that cannot be read. */
        int rc = check_inputs_present(r, d);
        if (r->opts->mode == TL_MODE_DATA) {
                for (int i = 0; i < r->n_globals; i++)
                        if (fill_tensor(r, &r->globals[i], i, d) < 0)
                                rc = -EINVAL;
                /* Every check before --save-inputs writes: a rejected run
                 * leaves the files there as they were. */
                if (rc < 0 || need_dir(r->opts->outputs_dir, "--outputs", d) < 0)
                        return -EINVAL;
                tl__check_inputs(r, d);
                if ((rc = tl__check_expect_files(r, d)) < 0)
                        return rc;
                return save_inputs(r, d) < 0 ? -EINVAL : 0;
        }
        /* Timing only: the files must still agree with the shapes. */
        for (int i = 0; i < r->n_globals; i++) {
                struct tl_global *g = &r->globals[i];
                char *path;
                bool missing;
                if (g->io != TL_INPUT)
                        continue;
                if (find_input(r, g, &path, &missing, d) < 0)
                        return -EINVAL;
                if (!path)
                        continue;
                struct npy_array a;
                if (npy_read_header(path, &a, d) < 0 || check_file_shape(path, &a, g, d) < 0)
                        rc = -EINVAL;
                free(path);
        }
        return rc < 0 ? -EINVAL : 0;
}

int tl_write_outputs(struct tl_run *r, struct diag *d)
{
        if (r->opts->mode != TL_MODE_DATA || !r->opts->outputs_dir)
                return 0;
        if (mkdir(r->opts->outputs_dir, 0777) < 0 && errno != EEXIST) {
                diag_error_at(d, r->opts->outputs_dir, 0, 0, "cannot create the directory: %s",
                              strerror(errno));
                return -errno;
        }
        int rc = 0;
        for (int i = 0; i < r->n_globals; i++) {
                struct tl_global *g = &r->globals[i];
                if (g->io != TL_OUTPUT)
                        continue;
                char *path = npy_path(r->opts->outputs_dir, g->name, d);
                if (!path || npy_write(path, NPY_F32, g->t.ndim, g->t.shape, g->data, d) < 0)
                        rc = -EIO;
                free(path);
        }
        return rc;
}
