/* tl/files.c: a launch's tensor files: inputs read from --inputs DIR
 * (NAME.npy) or generated (seeded, uniform in [-1, 1), rounded to the
 * dtype), outputs written to --outputs DIR as float32 .npy. With --inputs
 * every input must have its file unless --allow-random lets the missing
 * ones be generated; --save-inputs DIR writes the generated ones. Each
 * input's origin is reported as a note. Every problem is bad input (exit
 * 2). Paths are built to their full length (no fixed buffers); input
 * files must be regular files (a FIFO would block the run). */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/names.h"
#include "base/npy.h"
#include "tl/tl_int.h"

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

int64_t tl__input_dim(const struct tl_run *r, const char *tensor, int axis)
{
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

int tl__load_files(struct tl_run *r, struct diag *d)
{
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
