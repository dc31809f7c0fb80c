/* api/cubesim.c: the run API of libcubesim.so (include/cubesim/cubesim.h)
 * over the kernel runtime's one entry point, tl_job_run. `cubesim run` is
 * a parser over it; so is the Python package.
 *
 * In-memory inputs are written as NAME.npy to a private temporary
 * directory that the run reads as its --inputs and that is removed after
 * the run; in-memory outputs are copied from the run's tensors, the values
 * --outputs would write. */
#include <cubesim/cubesim.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/ckd.h"
#include "base/jsonw.h"
#include "base/names.h"
#include "base/params.h"
#include "benches/bench.h"
#include "base/npy.h"
#include "serve/serve.h"
#include "sweep/sweep.h"
#include "tl/tl_int.h"

struct cubesim_machine {
        struct topo topo;            /* the machine with its sets */
};

struct cubesim_result {
        int status;                  /* what cubesim_run returned */
        char *json;                  /* --json text; NULL when the run failed */
        char *text;                  /* the text summary; NULL when the run failed */
        char *inputs_report;         /* tl_report_inputs' lines ("" if none) */
        struct cubesim_summary summary; /* a few numbers (valid when status is 0) */
        struct cubesim_array *outputs; /* keep_outputs: the outputs */
        size_t n_outputs;            /* entries of outputs */
};

/* The last call's messages, formatted; NULL: none. */
static _Thread_local char *last_messages;

/* Keep d's messages as the last call's (d is emptied) and return rc. */
static int finish(struct diag *d, int rc)
{
        free(last_messages);
        last_messages = NULL;
        char *buf = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);
        /* Notes alike (a deadlock's PEs waiting alike) fold into one line. */
        struct diag folded;
        diag_init(&folded);
        folded.max_msgs = d->n_kept + 1;
        diag_copy_folded(&folded, d);
        if (f) {
                for (const struct diag_msg *m = folded.head; m; m = m->next)
                        fprintf(f, "%s\n", m->text);
                if (folded.n_dropped)
                        fprintf(f, "%u more messages not shown\n", folded.n_dropped);
                if (fclose(f) == 0)
                        last_messages = buf;
                else
                        free(buf);
        }
        diag_fini(&folded);
        diag_fini(d);
        return rc;
}

const char *cubesim_messages(void) { return last_messages ? last_messages : ""; }

void cubesim_release(void)
{
        free(last_messages);
        last_messages = NULL;
}

const char *cubesim_version(void) { return CUBESIM_VERSION; }

void cubesim_run_opts_init(struct cubesim_run_opts *o)
{
        struct tl_run_opts t = tl_run_opts_default();
        *o = (struct cubesim_run_opts){
                .mode = t.mode == TL_MODE_DATA ? CUBESIM_MODE_DATA : CUBESIM_MODE_OPLOG,
                .rtol = t.rtol, .atol = t.atol, .seed = t.seed, .max_events = t.max_events,
                .max_sim_ns = t.max_time_ps / SIM_PS_PER_NS, .timeout_s = t.timeout_s,
                .progress = t.progress, .allow_random = t.allow_random,
                .fail_on_nonfinite = t.fail_on_nonfinite,
        };
}

/* ---- kernels ---- */

const char *cubesim_kernel_name(size_t i)
{
        const struct tl_kernel *k = tl_kernel_at(i);
        return k ? k->name : NULL;
}

const char *cubesim_kernel_summary(size_t i)
{
        const struct tl_kernel *k = tl_kernel_at(i);
        return k ? (k->summary ? k->summary : "") : NULL;
}

/* "no kernel 'NAME'" with a hint, to d. */
static void no_kernel(const char *name, struct diag *d)
{
        const char *hint = diag_suggest_at(name, cubesim_kernel_name);
        if (hint)
                diag_error(d, "no kernel '%s'; did you mean '%s'? (a kernel of your own: "
                           "--kernels LIB.so)", name, hint);
        else
                diag_error(d, "no kernel '%s' (see 'cubesim kernels'; a kernel of your own "
                           "is loaded with --kernels LIB.so)", name);
}

int cubesim_kernel_find(const char *name)
{
        struct diag d;
        diag_init(&d);
        if (name && tl_kernel_find(name))
                return finish(&d, CUBESIM_OK);
        no_kernel(name ? name : "", &d);
        return finish(&d, CUBESIM_BAD_INPUT);
}

int cubesim_kernels_load(const char *path)
{
        struct diag d;
        diag_init(&d);
        int rc = tl_kernels_load(path, &d) < 0 ? CUBESIM_BAD_INPUT : CUBESIM_OK;
        return finish(&d, rc);
}

/* ---- machines ---- */

int cubesim_machine_load(const char *path, cubesim_machine **out)
{
        struct diag d;
        diag_init(&d);
        *out = NULL;
        cubesim_machine *m = calloc(1, sizeof *m);
        if (!m) {
                diag_error(&d, "out of memory");
                return finish(&d, CUBESIM_BAD_INPUT);
        }
        int rc = path ? topo_load_file(path, &m->topo, &d) : topo_load_default(&m->topo, &d);
        if (rc < 0) {
                cubesim_machine_free(m);
                return finish(&d, CUBESIM_BAD_INPUT);
        }
        *out = m;
        return finish(&d, CUBESIM_OK);
}

int cubesim_machine_set(cubesim_machine *m, const char *key, const char *value)
{
        struct diag d;
        diag_init(&d);
        char path[256];
        size_t klen = strlen(key);
        if (klen >= sizeof path) {
                diag_error(&d, "--set %.64s...: the key is too long", key);
                return finish(&d, CUBESIM_BAD_INPUT);
        }
        int rc = topo_set(&m->topo, tl_set_topo_path(key, klen, path, sizeof path), value, &d);
        return finish(&d, rc < 0 ? CUBESIM_BAD_INPUT : CUBESIM_OK);
}

const struct topo *cubesim_machine_topo(const cubesim_machine *m)
{
        return &m->topo;
}

uint64_t cubesim_machine_hbm_bytes(const cubesim_machine *m)
{
        const struct topo *t = &m->topo;
        return sat_mul_u64(sat_mul_u64(t->system.sips, t->sip.cubes), t->cube.hbm.size_bytes);
}

cubesim_machine *cubesim_machine_copy(const cubesim_machine *m)
{
        cubesim_machine *c = malloc(sizeof *c);
        if (c)
                *c = *m;             /* a topo is plain data */
        return c;
}

void cubesim_machine_free(cubesim_machine *m)
{
        if (!m)
                return;
        topo_fini(&m->topo);
        free(m);
}

/* ---- runs ---- */

/* The run options of o, checked as `cubesim run` checks them; errors to
 * d. */
static int run_opts(const struct cubesim_run_opts *o, struct tl_run_opts *ro, struct diag *d)
{
        *ro = tl_run_opts_default();
        ro->mode = o->mode == CUBESIM_MODE_DATA ? TL_MODE_DATA : TL_MODE_OPLOG;
        ro->inputs_dir = o->inputs_dir;
        ro->allow_random = o->allow_random;
        ro->save_inputs_dir = o->save_inputs_dir;
        ro->outputs_dir = o->outputs_dir;
        ro->expect_dir = o->expect_dir;
        ro->rtol = o->rtol;
        ro->atol = o->atol;
        ro->fail_on_nonfinite = o->fail_on_nonfinite;
        ro->seed = o->seed;
        ro->oplog_path = o->oplog_path;
        ro->trace_path = o->trace_path;
        ro->trace_pes = o->trace_pes;
        ro->max_events = o->max_events;
        ro->timeout_s = o->timeout_s;
        ro->progress = o->progress;
        ro->critical_path = o->critical_path != 0;
        if (o->mode != CUBESIM_MODE_OPLOG && o->mode != CUBESIM_MODE_DATA) {
                diag_error(d, "mode %d: expected 0 (oplog) or 1 (data)", o->mode);
                return -EINVAL;
        }
        if (o->trace_t1_ns && o->trace_t1_ns < o->trace_t0_ns) {
                diag_error(d, "--trace-window %llu:%llu: expected T0 <= T1",
                           (unsigned long long)o->trace_t0_ns, (unsigned long long)o->trace_t1_ns);
                return -EINVAL;
        }
        if (!ckd_mul_u64(&ro->trace_t0, o->trace_t0_ns, SIM_PS_PER_NS) ||
            !ckd_mul_u64(&ro->trace_t1, o->trace_t1_ns, SIM_PS_PER_NS) ||
            !ckd_mul_u64(&ro->max_time_ps, o->max_sim_ns, SIM_PS_PER_NS)) {
                diag_error(d, "--trace-window or --max-sim-ns: too many ns");
                return -EINVAL;
        }
        if (ro->inputs_dir) {
                struct stat st;
                if (stat(ro->inputs_dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
                        diag_error_at(d, ro->inputs_dir, 0, 0,
                                      "--inputs: not a directory (expected a directory of "
                                      "NAME.npy files)");
                        return -EINVAL;
                }
        }
        if ((ro->trace_pes || ro->trace_t0 || ro->trace_t1) && !ro->trace_path) {
                diag_error(d, "--trace-pes and --trace-window filter a trace: add --trace FILE");
                return -EINVAL;
        }
        const char *data_only = ro->outputs_dir ? "--outputs" : ro->save_inputs_dir ? "--save-inputs"
                                : ro->expect_dir ? "--expect" : ro->rtol >= 0 ? "--rtol"
                                : ro->atol >= 0 ? "--atol" : ro->fail_on_nonfinite ?
                                "--fail-on-nonfinite" : o->n_inputs ? "inputs in memory" : NULL;
        if (data_only && ro->mode != TL_MODE_DATA) {
                diag_error(d, "%s needs --mode data (op_log mode computes no numbers)", data_only);
                return -EINVAL;
        }
        if ((ro->rtol >= 0 || ro->atol >= 0) && !ro->expect_dir) {
                diag_error(d, "--rtol and --atol are the tolerances of --expect DIR");
                return -EINVAL;
        }
        if (o->n_inputs && !o->inputs) {
                diag_error(d, "%zu inputs in memory, but no array of them", o->n_inputs);
                return -EINVAL;
        }
        if (o->n_inputs && ro->inputs_dir) {
                diag_error(d, "inputs come from --inputs DIR or from memory, not both");
                return -EINVAL;
        }
        return 0;
}

/* The i-th in-memory input has a name (a file stem, base/names.h) no
 * earlier one has, at most NPY_MAX_DIMS extents >= 0 whose product fits,
 * and data. */
static bool input_ok(const struct cubesim_run_opts *o, size_t i)
{
        const struct cubesim_array *a = &o->inputs[i];
        if (!a->name || !name_ok(a->name, NULL, 0) || a->ndim < 0 || a->ndim > NPY_MAX_DIMS ||
            !a->data || (a->ndim && !a->shape))
                return false;
        uint64_t n;
        for (int k = 0; k < a->ndim; k++)
                if (a->shape[k] < 0)
                        return false;
        if (!ckd_prod_i64(&n, a->shape, a->ndim))
                return false;
        for (size_t j = 0; j < i; j++)
                if (o->inputs[j].name && strcmp(o->inputs[j].name, a->name) == 0)
                        return false;
        return true;
}

/* Write the in-memory inputs to a new temporary directory, whose path
 * goes to *dir (malloc'd). */
static int write_inputs(const struct cubesim_run_opts *o, char **dir, struct diag *d)
{
        const char *tmp = getenv("TMPDIR");
        size_t len = strlen(tmp && *tmp ? tmp : "/tmp") + 32;
        *dir = malloc(len);
        if (!*dir) {
                diag_error(d, "out of memory");
                return -ENOMEM;
        }
        snprintf(*dir, len, "%s/cubesim-inputs-XXXXXX", tmp && *tmp ? tmp : "/tmp");
        if (!mkdtemp(*dir)) {
                diag_error_at(d, *dir, 0, 0, "cannot create a temporary directory: %s",
                              strerror(errno));
                free(*dir);
                *dir = NULL;
                return -EIO;
        }
        for (size_t i = 0; i < o->n_inputs; i++) {
                const struct cubesim_array *a = &o->inputs[i];
                if (!input_ok(o, i)) {
                        diag_error(d, "input %zu ('%s'): expected a tensor name (once), 0 to %d "
                                   "dimensions of extents >= 0 and data", i,
                                   a->name ? a->name : "", NPY_MAX_DIMS);
                        return -EINVAL;
                }
                size_t plen = strlen(*dir) + strlen(a->name) + 8;
                char *path = malloc(plen);
                if (!path) {
                        diag_error(d, "out of memory");
                        return -ENOMEM;
                }
                snprintf(path, plen, "%s/%s.npy", *dir, a->name);
                int rc = npy_write(path, NPY_F32, a->ndim, a->shape, a->data, d);
                free(path);
                if (rc < 0)
                        return -EINVAL;
        }
        return 0;
}

/* Remove dir and the .npy files write_inputs put there. */
static void remove_inputs(const struct cubesim_run_opts *o, char *dir)
{
        if (!dir)
                return;
        for (size_t i = 0; i < o->n_inputs; i++) {
                /* Only names that can have been written: a file stem, no
                 * path (never a file outside dir). */
                if (!o->inputs[i].name || !name_ok(o->inputs[i].name, NULL, 0))
                        continue;
                size_t plen = strlen(dir) + strlen(o->inputs[i].name) + 8;
                char *path = malloc(plen);
                if (path) {
                        snprintf(path, plen, "%s/%s.npy", dir, o->inputs[i].name);
                        unlink(path);
                }
                free(path);
        }
        rmdir(dir);
        free(dir);
}

/* Copy run r's outputs into res; -ENOMEM. */
static int keep_outputs(const struct tl_run *r, struct cubesim_result *res, struct diag *d)
{
        size_t n = 0;
        for (int i = 0; i < r->n_globals; i++)
                n += r->globals[i].io == TL_OUTPUT;
        res->outputs = calloc(n ? n : 1, sizeof *res->outputs);
        if (!res->outputs)
                goto oom;
        for (int i = 0; i < r->n_globals; i++) {
                const struct tl_global *g = &r->globals[i];
                if (g->io != TL_OUTPUT)
                        continue;
                struct cubesim_array *a = &res->outputs[res->n_outputs++];
                char *name = strdup(g->name);
                int64_t *shape = malloc((size_t)(g->t.ndim ? g->t.ndim : 1) * sizeof *shape);
                float *data = malloc((size_t)(g->count ? g->count : 1) * sizeof *data);
                a->name = name;
                a->shape = shape;
                a->data = data;
                a->ndim = g->t.ndim;
                if (!name || !shape || !data)
                        goto oom;
                memcpy(shape, g->t.shape, (size_t)g->t.ndim * sizeof *shape);
                if (g->data)
                        memcpy(data, g->data, (size_t)g->count * sizeof *data);
                else
                        memset(data, 0, (size_t)g->count * sizeof *data);
        }
        return 0;
oom:
        diag_error(d, "out of memory for the outputs");
        return -ENOMEM;
}

/* What FILE-writing fn writes, as a string (NULL when out of memory). */
#define MEMSTREAM(buf, f, body)                                                               \
        do {                                                                                  \
                size_t len_ = 0;                                                              \
                FILE *f = open_memstream(&(buf), &len_);                                      \
                if (f) {                                                                      \
                        body;                                                                 \
                        if (fclose(f) != 0) {                                                 \
                                free(buf);                                                    \
                                (buf) = NULL;                                                 \
                        }                                                                     \
                }                                                                             \
        } while (0)

/* The summaries of a good run into res. */
static int summarise(struct tl_job *job, const struct cubesim_run_opts *o,
                     struct cubesim_result *res, struct diag *d)
{
        json_t *j = rep_run_summary(&job->sim, &job->stats, job->kernel->name);
        if (!j)
                goto oom;
        if (o->profile)
                json_object_set_new(j, "profile", rep_run_profile(&job->stats));
        res->summary.sim_ps = (uint64_t)json_integer_value(json_object_get(j, "sim_ps"));
        res->summary.kernel_ps = (uint64_t)json_integer_value(json_object_get(j, "kernel_ps"));
        res->summary.events = (uint64_t)json_integer_value(json_object_get(j, "events"));
        res->summary.run_wall_s = job->run_wall_s;
        if (job->stats.cp)
                MEMSTREAM(res->json, f, rep_cp_json_print(job->stats.cp, f, j, 2)); /* releases j */
        else
                MEMSTREAM(res->json, f, jsonw_print(f, j, 2)); /* releases j */
        MEMSTREAM(res->text, f,
                  rep_run_summary_text(&job->sim, &job->stats, job->kernel->name, o->profile, f);
                  if (job->stats.cp) rep_cp_text(job->stats.cp, f));
        if (!res->json || !res->text)
                goto oom;
        if (o->keep_outputs && o->mode == CUBESIM_MODE_DATA && job->run)
                return keep_outputs(job->run, res, d);
        return 0;
oom:
        diag_error(d, "out of memory for the run's summary");
        return -ENOMEM;
}

int cubesim_run(const char *kernel, const cubesim_machine *machine, const char *const *sets,
                size_t n_sets, const struct cubesim_run_opts *opts, cubesim_result **out)
{
        struct diag d;
        diag_init(&d);
        *out = NULL;
        struct cubesim_run_opts defaults;
        if (!opts) {
                cubesim_run_opts_init(&defaults);
                opts = &defaults;
        }
        struct tl_run_opts ro;
        if (run_opts(opts, &ro, &d) < 0)
                return finish(&d, CUBESIM_BAD_INPUT);
        const struct tl_kernel *k = kernel ? tl_kernel_find(kernel) : NULL;
        if (!k) {
                no_kernel(kernel ? kernel : "", &d);
                return finish(&d, CUBESIM_BAD_INPUT);
        }
        struct topo def;             /* the built-in default, when no machine is given */
        if (!machine && topo_load_default(&def, &d) < 0)
                return finish(&d, CUBESIM_BAD_INPUT);
        char *tmp_inputs = NULL;
        int rc = CUBESIM_BAD_INPUT;
        cubesim_result *res = NULL;
        if (opts->n_inputs) {
                if (write_inputs(opts, &tmp_inputs, &d) < 0)
                        goto done;
                ro.inputs_dir = tmp_inputs;
        }
        res = calloc(1, sizeof *res);
        if (!res) {
                diag_error(&d, "out of memory");
                goto done;
        }
        struct tl_job job = { .kernel = k, .topo = machine ? &machine->topo : &def, .sets = sets,
                              .n_sets = n_sets, .opts = ro };
        int krc = tl_job_run(&job, &d);
        if (ro.mode == TL_MODE_DATA)
                MEMSTREAM(res->inputs_report, f, tl_report_inputs(job.run, f));
        rc = krc == -EINVAL ? CUBESIM_BAD_INPUT : krc < 0 ? CUBESIM_FAILED : CUBESIM_OK;
        if (rc == CUBESIM_OK && summarise(&job, opts, res, &d) < 0)
                rc = CUBESIM_BAD_INPUT;
        bool began = job.run != NULL;
        tl_job_fini(&job);
        res->status = rc;
        if (began || rc == CUBESIM_OK) {
                *out = res;
                res = NULL;
        }
done:
        cubesim_result_free(res);
        remove_inputs(opts, tmp_inputs);
        if (!machine)
                topo_fini(&def);
        return finish(&d, rc);
}

const char *cubesim_result_json(const cubesim_result *r) { return r->json; }

const char *cubesim_result_text(const cubesim_result *r) { return r->text; }

const char *cubesim_result_inputs_report(const cubesim_result *r)
{
        return r->inputs_report ? r->inputs_report : "";
}

int cubesim_result_summary(const cubesim_result *r, struct cubesim_summary *out)
{
        *out = r->summary;
        return r->status == CUBESIM_OK ? CUBESIM_OK : CUBESIM_FAILED;
}

const struct cubesim_array *cubesim_result_output(const cubesim_result *r, size_t i)
{
        return i < r->n_outputs ? &r->outputs[i] : NULL;
}

void cubesim_result_free(cubesim_result *r)
{
        if (!r)
                return;
        for (size_t i = 0; i < r->n_outputs; i++) {
                free((char *)r->outputs[i].name);
                free((int64_t *)r->outputs[i].shape);
                free((float *)r->outputs[i].data);
        }
        free(r->outputs);
        free(r->json);
        free(r->text);
        free(r->inputs_report);
        free(r);
}

/* ---- text for the caller ---- */

/* The cookie of a print stream: the caller's function. */
struct print_sink {
        cubesim_print_fn fn;         /* the caller's print */
        void *ctx;                   /* its first argument */
};

static ssize_t sink_write(void *c, const char *buf, size_t len)
{
        const struct print_sink *s = c;
        s->fn(s->ctx, buf, len);
        return (ssize_t)len;
}

/* A stream that hands what is written to it to fn, unbuffered (the
 * caller sees each piece when it is written, in order with the library's
 * stderr, and a forked worker inherits nothing to write twice); NULL
 * when fn is NULL or out of memory. Close it with fclose. */
static FILE *print_open(cubesim_print_fn fn, void *ctx, struct print_sink *s)
{
        if (!fn)
                return NULL;
        *s = (struct print_sink){ .fn = fn, .ctx = ctx };
        FILE *f = fopencookie(s, "w", (cookie_io_functions_t){ .write = sink_write });
        if (f)
                setvbuf(f, NULL, _IONBF, 0);
        return f;
}

int cubesim_mpi_rank(void) { return sweep_launch_rank(); }

/* ---- sweeps ---- */

void cubesim_sweep_opts_init(struct cubesim_sweep_opts *o)
{
        *o = (struct cubesim_sweep_opts){ .jobs = 1, .figures = 1 };
}

/* Run the loaded spec as opts say (its --list, or the sweep into
 * out_dir, by default out/NAME); out filled. The status. */
static int sweep_loaded(const struct sweep_spec *spec, const struct cubesim_sweep_opts *opts,
                        FILE *print, struct cubesim_sweep_result *out, struct diag *d)
{
        if (opts->list) {
                if (print && sweep_launch_rank() == 0) /* every rank has the spec */
                        sweep_spec_list(spec, print);
                return CUBESIM_OK;
        }
        char dir[4200];
        if (!opts->out_dir)
                snprintf(dir, sizeof dir, "out/%s", spec->name);
        struct sweep_opts so = { .out_dir = opts->out_dir ? opts->out_dir : dir,
                                 .jobs = opts->jobs, .resume = opts->resume,
                                 .no_figures = !opts->figures,
                                 .progress = opts->progress < 0 ? -1 : opts->progress != 0,
                                 .out = print, .timeout_s = opts->timeout_s,
                                 .on_progress = opts->on_progress,
                                 .progress_ctx = opts->progress_ctx };
        struct sweep_outcome o;
        int rc = sweep_run(spec, &so, &o, d);
        *out = (struct cubesim_sweep_result){ .n_points = o.n_points, .n_failed = o.n_failed,
                                              .n_resumed = o.n_resumed, .ranks = o.ranks,
                                              .root = o.root, .wall_s = o.wall_s,
                                              .events = o.events };
        return rc == 0 ? CUBESIM_OK : rc == 1 ? CUBESIM_FAILED : CUBESIM_BAD_INPUT;
}

int cubesim_sweep(const char *spec_path, const char *spec_text,
                  const struct cubesim_sweep_opts *opts, struct cubesim_sweep_result *out)
{
        struct diag d;
        diag_init(&d);
        struct cubesim_sweep_result none;
        if (!out)
                out = &none;
        *out = (struct cubesim_sweep_result){ 0 };
        if ((opts->out_dir && !*opts->out_dir) || opts->jobs < 1 || opts->jobs > 1024 ||
            !(opts->timeout_s >= 0)) {
                diag_error(&d, "a sweep needs an output directory, 1 to 1024 jobs and a "
                           "timeout >= 0");
                return finish(&d, CUBESIM_BAD_INPUT);
        }
        if (!spec_text && !spec_path) {
                diag_error(&d, "which spec? (a file or the spec's text)");
                return finish(&d, CUBESIM_BAD_INPUT);
        }
        struct sweep_spec spec;
        int rc = spec_text ? sweep_spec_load_text("<spec>", spec_text, strlen(spec_text), NULL,
                                                  &spec, &d)
                           : sweep_spec_load_file(spec_path, &spec, &d);
        if (rc == 0) {
                struct print_sink sink;
                FILE *print = print_open(opts->print, opts->print_ctx, &sink);
                rc = sweep_loaded(&spec, opts, print, out, &d);
                if (print)
                        fclose(print);
        } else {
                rc = CUBESIM_BAD_INPUT;
        }
        sweep_spec_fini(&spec);
        return finish(&d, rc);
}

/* ---- benches ---- */

const char *cubesim_bench_name(size_t i)
{
        for (size_t j = 0; bench_registry[j]; j++)
                if (j == i)
                        return bench_registry[j]->name;
        return NULL;
}

const char *cubesim_bench_summary(size_t i)
{
        return cubesim_bench_name(i) ? bench_registry[i]->summary : NULL;
}

const char *cubesim_bench_help(size_t i)
{
        return cubesim_bench_name(i) ? bench_registry[i]->help : NULL;
}

/* bench name, or NULL with "no bench" (and a hint) in d. */
static const struct bench *bench_named(const char *name, struct diag *d)
{
        const struct bench *b = name ? bench_find(name) : NULL;
        if (!b) {
                const char *hint = diag_suggest_at(name ? name : "", cubesim_bench_name);
                if (hint)
                        diag_error(d, "no bench '%s'; did you mean '%s'?", name ? name : "", hint);
                else
                        diag_error(d, "no bench '%s' (see 'cubesim bench list')",
                                   name ? name : "");
        }
        return b;
}

int cubesim_bench_find(const char *name)
{
        struct diag d;
        diag_init(&d);
        return finish(&d, bench_named(name, &d) ? CUBESIM_OK : CUBESIM_BAD_INPUT);
}

/* The defaults of a bench run. */
static const struct cubesim_bench_opts bench_defaults = { .jobs = 1 };

void cubesim_bench_opts_init(struct cubesim_bench_opts *o) { *o = bench_defaults; }

/* Where the figures go when the caller prints them nowhere. */
static void print_nowhere(void *ctx, const char *text, size_t len)
{
        (void)ctx, (void)text, (void)len;
}

int cubesim_bench_run(const char *name, const struct cubesim_bench_opts *opts)
{
        struct diag d;
        diag_init(&d);
        if (!opts)
                opts = &bench_defaults;
        const struct bench *b = bench_named(name, &d);
        if (!b)
                return finish(&d, CUBESIM_BAD_INPUT);
        if (opts->jobs < 1 || opts->jobs > 1024) {
                diag_error(&d, "--jobs %u: expected an integer in [1, 1024]", opts->jobs);
                return finish(&d, CUBESIM_BAD_INPUT);
        }
        struct params ps;
        params_init(&ps);
        for (size_t i = 0; i < opts->n_sets; i++)
                params_add(&ps, opts->sets[i], &d);
        struct print_sink sink;
        FILE *f = print_open(opts->print ? opts->print : print_nowhere, opts->print_ctx, &sink);
        int rc = CUBESIM_BAD_INPUT;
        if (!f) {
                diag_error(&d, "out of memory");
        } else {
                struct bench_ctx ctx = { .params = &ps, .json = opts->json != 0,
                                         .out_dir = opts->out_dir, .jobs = opts->jobs,
                                         .topo = opts->topo_path, .out = f, .diag = &d };
                if (d.n_errors == 0)
                        rc = b->run(&ctx);
                fclose(f);
                /* A message makes a run that succeeded a bad-input one: an
                 * unknown or unused parameter is said, never passed over. */
                if (d.head && rc == CUBESIM_OK)
                        rc = CUBESIM_BAD_INPUT;
        }
        return finish(&d, rc);
}

/* cubesim_bench's print: append to the memory stream ctx. */
static void print_to_stream(void *ctx, const char *text, size_t len)
{
        fwrite(text, 1, len, ctx);
}

void cubesim_free(void *p) { free(p); }

int cubesim_bench(const char *name, const char *const *sets, size_t n_sets, const char *out_dir,
                  unsigned jobs, char **json_out)
{
        *json_out = NULL;
        char *buf = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);
        if (!f) {
                struct diag d;
                diag_init(&d);
                diag_error(&d, "out of memory");
                return finish(&d, CUBESIM_BAD_INPUT);
        }
        struct cubesim_bench_opts o = { .sets = sets, .n_sets = n_sets, .out_dir = out_dir,
                                        .jobs = jobs, .json = 1, .print = print_to_stream,
                                        .print_ctx = f };
        int rc = cubesim_bench_run(name, &o);
        bool bad = ferror(f) != 0;
        if (fclose(f) != 0 || bad) {
                free(buf);
                buf = NULL;
        }
        if (rc == CUBESIM_OK && !buf) {
                struct diag d;
                diag_init(&d);
                diag_error(&d, "out of memory for the bench's output");
                return finish(&d, CUBESIM_BAD_INPUT);
        }
        if (rc == CUBESIM_OK)
                *json_out = buf;
        else
                free(buf);
        return rc;
}

/* ---- serving ---- */

/* The fields cubesim_serve_opts and serve_opts share, by name (flags an
 * int there, a bool here): copied as they are both ways, so that the
 * defaults are serve_opts_init's alone. The others are words the library
 * turns into serve's enums and distributions, and how to print. */
#define SERVE_SHARED_FIELDS(X)                                                            \
        X(model) X(topo_path) X(sets) X(n_sets) X(tp) X(dp) X(precision) X(qps)          \
        X(trace_path) X(requests) X(duration_s) X(max_batch) X(max_batch_tokens)         \
        X(chunk_tokens) X(kv_block) X(slo_ttft_ms) X(slo_tpot_ms) X(seed)                \
        X(find_capacity) X(out_dir) X(figures) X(exact_steps) X(check_steps) X(progress)
#define COPY_TO_API(f) o->f = so.f;
#define COPY_FROM_API(f) so->f = o->f;

void cubesim_serve_opts_init(struct cubesim_serve_opts *o)
{
        struct serve_opts so;
        serve_opts_init(&so);
        *o = (struct cubesim_serve_opts){ 0 };
        SERVE_SHARED_FIELDS(COPY_TO_API)
}

int cubesim_serve_int_range(const char *opt, int64_t *min, int64_t *max)
{
        struct diag d;
        diag_init(&d);
        *min = 1;
        *max = 0;
        serve_int_range(opt ? opt : "", min, max);
        if (*min > *max)
                diag_error(&d, "%s: not an integer option of serve", opt ? opt : "");
        return finish(&d, d.n_errors ? CUBESIM_BAD_INPUT : CUBESIM_OK);
}

/* The run's options from o's, checked as the command checks them
 * (refused: say nothing of missing arrivals); problems to d. */
static void serve_opts_from(const struct cubesim_serve_opts *o, bool refused,
                            struct serve_opts *so, struct diag *d)
{
        serve_opts_init(so);
        SERVE_SHARED_FIELDS(COPY_FROM_API)
        if (o->prompt_len)
                serve_dist_parse("--prompt-len", o->prompt_len, &so->prompt, d);
        if (o->output_len)
                serve_dist_parse("--output-len", o->output_len, &so->output, d);
        if (o->policy)
                so->policy = (enum serve_policy)serve_choice("--policy", o->policy,
                                                             serve_policy_names, d);
        if (o->router)
                so->router = (enum serve_router)serve_choice("--router", o->router,
                                                             serve_router_names, d);
        serve_opts_check(so, refused, d);
}

int cubesim_serve_check(const struct cubesim_serve_opts *o, int refused)
{
        struct diag d;
        diag_init(&d);
        struct serve_opts so;
        serve_opts_from(o, refused != 0, &so, &d);
        return finish(&d, d.n_errors ? CUBESIM_BAD_INPUT : CUBESIM_OK);
}

int cubesim_serve(const struct cubesim_serve_opts *o, char **json_out)
{
        struct diag d;
        diag_init(&d);
        if (json_out)
                *json_out = NULL;
        struct serve_opts so;
        serve_opts_from(o, false, &so, &d);
        if (d.n_errors)
                return finish(&d, CUBESIM_BAD_INPUT);
        char *json = NULL, *text = NULL;
        int rc = serve_run(&so, &json, &text, &d);
        if (rc == CUBESIM_OK && o->print) {
                const char *out = o->json ? json : text;
                o->print(o->print_ctx, out, strlen(out));
        }
        if (rc == CUBESIM_OK && json_out)
                *json_out = json;
        else
                free(json);
        free(text);
        return finish(&d, rc);
}
