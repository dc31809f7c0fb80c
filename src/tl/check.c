/* tl/check.c: data mode's checks of the numbers: non-finite values in the
 * inputs and outputs (count and first index), and each output against
 * --expect DIR/NAME.npy within rtol and atol.
 *
 * An element passes when |got - want| <= atol + rtol * |want|; NaN
 * matches NaN and an infinity the same infinity (numpy.testing's
 * assert_allclose). Defaults by the output's dtype are those of
 * torch.testing.assert_close: fp32 rtol 1.3e-6, atol 1e-5; bf16 rtol
 * 1.6e-2, atol 1e-5; fp16 rtol 1e-3, atol 1e-5; for the block floats,
 * whose error is a step of the element's group, rtol 2^-5 (bfp8_b) and
 * 2^-2 (bfp4_b), which an element within a factor 4 of its group's
 * largest meets, atol 1e-5. A missing or misshapen
 * expect file is bad input (exit 2), found before the run; a mismatch or
 * (with --fail-on-nonfinite) a non-finite value fails the run (exit 1). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/npy.h"
#include "tl/tl_int.h"

/* The multi-index of flat element i of g, "[0, 3, 5]". */
static void index_text(char *buf, size_t len, const struct tl_global *g, uint64_t i)
{
        int64_t idx[TL_MAX_DIMS];
        for (int k = g->t.ndim - 1; k >= 0; k--) {
                idx[k] = (int64_t)(i % (uint64_t)g->t.shape[k]);
                i /= (uint64_t)g->t.shape[k];
        }
        tl__shape_text(buf, len, g->t.ndim, idx);
}

static const char *io_word(tl_io io)
{
        return io == TL_INPUT ? "input" : io == TL_OUTPUT ? "output" : "tensor";
}

/* Report g's non-finite values; their count. */
static uint64_t report_nonfinite(const struct tl_global *g, bool fatal, struct diag *d)
{
        uint64_t n = 0, first = 0;
        for (uint64_t i = 0; i < g->count; i++)
                if (!isfinite(g->data[i]) && n++ == 0)
                        first = i;
        if (!n)
                return 0;
        char shape[96], at[96];
        tl__shape_text(shape, sizeof shape, g->t.ndim, g->t.shape);
        index_text(at, sizeof at, g, first);
        diag_report(d, fatal ? DIAG_ERROR : DIAG_WARNING, NULL, 0, 0,
                    "%s %s %s: %llu non-finite value%s of %llu (first at %s: %g)%s",
                    io_word(g->io), g->name, shape, (unsigned long long)n, n > 1 ? "s" : "",
                    (unsigned long long)g->count, at, (double)g->data[first],
                    fatal ? " (--fail-on-nonfinite)" : "");
        return n;
}

static void default_tolerance(tl_dtype dt, double *rtol, double *atol)
{
        *atol = 1e-5;
        *rtol = dt == TL_BF16     ? 1.6e-2
                : dt == TL_FP16   ? 1e-3
                : dt == TL_BFP8_B ? 0x1p-5
                : dt == TL_BFP4_B ? 0x1p-2
                                  : 1.3e-6;
}

/* DIR/NAME.npy of output g under --expect, malloc'd, or NULL. */
static char *expect_path(const struct tl_run *r, const struct tl_global *g, struct diag *d)
{
        char *p;
        if (asprintf(&p, "%s/%s.npy", r->opts->expect_dir, g->name) < 0) {
                diag_error(d, "out of memory for the path of %s.npy", g->name);
                return NULL;
        }
        return p;
}

static bool regular_file(const char *path)
{
        struct stat st;
        return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

int tl__check_expect_files(struct tl_run *r, struct diag *d)
{
        if (!r->opts->expect_dir)
                return 0;
        int rc = 0;
        for (int i = 0; i < r->n_globals; i++) {
                const struct tl_global *g = &r->globals[i];
                if (g->io != TL_OUTPUT)
                        continue;
                char *path = expect_path(r, g, d);
                if (!path)
                        return -ENOMEM;
                char shape[96];
                tl__shape_text(shape, sizeof shape, g->t.ndim, g->t.shape);
                struct npy_array a;
                if (!regular_file(path)) {
                        diag_error_at(d, path, 0, 0, "no such regular file: --expect needs "
                                      "output %s %s of kernel %s as %s.npy", g->name, shape,
                                      r->kernel->name, g->name);
                        rc = -EINVAL;
                } else if (npy_read_header(path, &a, d) < 0) {
                        rc = -EINVAL;
                } else {
                        bool same = a.ndim == g->t.ndim;
                        for (int k = 0; same && k < a.ndim; k++)
                                same = a.shape[k] == g->t.shape[k];
                        if (!same) {
                                char fs[96];
                                tl__shape_text(fs, sizeof fs, a.ndim, a.shape);
                                diag_error_at(d, path, 0, 0, "shape %s, expected output %s's %s",
                                              fs, g->name, shape);
                                rc = -EINVAL;
                        }
                }
                free(path);
        }
        return rc;
}

/* Compare output g with its expect file; -1 when out of tolerance. */
static int compare_output(const struct tl_run *r, const struct tl_global *g, struct diag *d)
{
        char *path = expect_path(r, g, d);
        struct npy_array a;
        if (!path || npy_read(path, &a, d) < 0) {
                free(path);
                return -1;
        }
        double rtol, atol;
        default_tolerance(g->t.dtype, &rtol, &atol);
        if (r->opts->rtol >= 0)
                rtol = r->opts->rtol;
        if (r->opts->atol >= 0)
                atol = r->opts->atol;
        uint64_t bad = 0, worst_at = 0;
        double worst = -1;           /* largest |got - want| / (atol + rtol |want|) */
        for (uint64_t i = 0; i < g->count; i++) {
                double got = g->data[i], want = a.data[i], ratio;
                if (isnan(got) || isnan(want) || isinf(got) || isinf(want))
                        ratio = (isnan(got) && isnan(want)) || got == want ? 0 : INFINITY;
                else
                        ratio = fabs(got - want) / (atol + rtol * fabs(want));
                if (ratio > 1)
                        bad++;
                if (ratio > worst) {
                        worst = ratio;
                        worst_at = i;
                }
        }
        char shape[96], at[96];
        tl__shape_text(shape, sizeof shape, g->t.ndim, g->t.shape);
        index_text(at, sizeof at, g, worst_at);
        double got = g->data[worst_at], want = a.data[worst_at];
        if (bad)
                diag_error_at(d, path, 0, 0, "output %s %s: %llu of %llu elements out of "
                              "tolerance (rtol %g, atol %g); worst at %s: got %.9g, want %.9g",
                              g->name, shape, (unsigned long long)bad,
                              (unsigned long long)g->count, rtol, atol, at, got, want);
        else
                diag_report(d, DIAG_NOTE, path, 0, 0, "output %s %s matches within rtol %g, "
                            "atol %g (closest to the limit: %s, got %.9g, want %.9g)", g->name,
                            shape, rtol, atol, at, got, want);
        npy_free(&a);
        free(path);
        return bad ? -1 : 0;
}

void tl__check_inputs(struct tl_run *r, struct diag *d)
{
        for (int i = 0; i < r->n_globals; i++)
                if (r->globals[i].io == TL_INPUT &&
                    report_nonfinite(&r->globals[i], r->opts->fail_on_nonfinite, d))
                        r->nonfinite_inputs = true;
}

int tl__check_data(struct tl_run *r, struct diag *d)
{
        if (r->opts->mode != TL_MODE_DATA)
                return 0;
        bool fatal = r->opts->fail_on_nonfinite;
        int rc = fatal && r->nonfinite_inputs ? -1 : 0;
        for (int i = 0; i < r->n_globals; i++) {
                const struct tl_global *g = &r->globals[i];
                if (g->io == TL_OUTPUT && report_nonfinite(g, fatal, d) && fatal)
                        rc = -1;
        }
        for (int i = 0; r->opts->expect_dir && i < r->n_globals; i++)
                if (r->globals[i].io == TL_OUTPUT && compare_output(r, &r->globals[i], d) < 0)
                        rc = -1;
        return rc;
}
