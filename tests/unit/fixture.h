/* tests/unit/fixture.h: the unit tests' machine. Before each test,
 * fixture_small loads topologies/small.yaml (2 cubes x 2x2 PEs) into t and
 * builds it into sim (for tests that drive the hardware or the planner
 * directly); fixture_run runs a kernel on a copy of t through tl_job_run,
 * the entry point of `cubesim run`; fixture_fini releases everything.
 * Its state is static: one test file includes it once. */
#ifndef CUBESIM_TESTS_UNIT_FIXTURE_H
#define CUBESIM_TESTS_UNIT_FIXTURE_H

#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tl/tl_int.h"

#define FIXTURE_UNUSED __attribute__((unused))

/* The number of elements of array a. */
#define FIXTURE_N(a) (sizeof(a) / sizeof((a)[0]))

/* FIXTURE_TABLE_TEST(suite, name, type, table) { ... }: a test run once per
 * row of table (a static array of type), each row in its own process as
 * any test; the body sees its row as `row` (const type *). Criterion
 * copies a parameter into the test's process byte for byte, where a
 * pointer of the parent's (a string) would dangle, so the parameter is the
 * row's index and the table stays in the binary. A row names itself in
 * its failures: the report names only suite::name. */
#define FIXTURE_TABLE_TEST(suite, name, type, table)                                          \
        ParameterizedTestParameters(suite, name)                                              \
        {                                                                                     \
                static size_t rows[FIXTURE_N(table)];                                         \
                for (size_t i = 0; i < FIXTURE_N(table); i++)                                 \
                        rows[i] = i;                                                          \
                return cr_make_param_array(size_t, rows, FIXTURE_N(table));                   \
        }                                                                                     \
        static void suite##_##name##_row(const type *row);                                    \
        ParameterizedTest(size_t *i, suite, name) { suite##_##name##_row(&(table)[*i]); }     \
        static void suite##_##name##_row(const type *row)

static struct topo t FIXTURE_UNUSED;    /* the test's machine description */
static struct hw_sim sim FIXTURE_UNUSED; /* built from t */
static struct diag d FIXTURE_UNUSED;    /* every problem of the test */
static struct tl_job job FIXTURE_UNUSED; /* the test's last kernel run; job.run, job.sim */
static bool fixture_have_sim;           /* sim is built */
static bool fixture_have_job;           /* job holds a run */

/* Load topologies/FILE into t and build sim. */
static inline void fixture_load(const char *file)
{
        diag_init(&d);
        char path[512];
        snprintf(path, sizeof path, "%s/topologies/%s", getenv("CUBESIM_SOURCE_DIR"), file);
        int rc = topo_load_file(path, &t, &d);
        if (rc < 0)
                diag_print(&d, stderr);
        cr_assert_eq(rc, 0, "cannot load %s", path);
        cr_assert_eq(hw_sim_init(&sim, &t, NULL, &d), 0);
        fixture_have_sim = true;
}

static inline void fixture_small(void) { fixture_load("small.yaml"); }

static inline void fixture_fini(void)
{
        if (fixture_have_job)
                tl_job_fini(&job);
        fixture_have_job = false;
        if (fixture_have_sim)
                hw_sim_fini(&sim);
        fixture_have_sim = false;
        topo_fini(&t);
        diag_fini(&d);
}

/* The default run options (tl_run_opts_default) with mode and seed, in a
 * buffer the next call overwrites (fixture_run copies them). */
static inline const struct tl_run_opts *fixture_opts(enum tl_mode mode, uint64_t seed)
{
        static struct tl_run_opts o;
        o = tl_run_opts_default();
        o.mode = mode;
        o.seed = seed;
        return &o;
}

/* Run kernel k on t with the --set values sets (borrowed until the test
 * ends) and opts (copied; NULL: tl_run_opts_default()); returns
 * tl_job_run's result. The run stays in job until the next fixture_run
 * or the test's end. */
static inline int fixture_run(const struct tl_kernel *k, const struct tl_run_opts *opts,
                              const char *const *sets, size_t n_sets)
{
        cr_assert_not_null(k, "no such kernel");
        if (fixture_have_job)
                tl_job_fini(&job);
        job = (struct tl_job){ .kernel = k, .topo = &t, .sets = sets, .n_sets = n_sets,
                               .opts = tl_run_opts_default() };
        if (opts)
                job.opts = *opts;
        fixture_have_job = true;
        return tl_job_run(&job, &d);
}

/* fixture_run of the kernel name made of fn, setup (NULL: none) and
 * args_size (name borrowed until the test ends). */
static inline int fixture_launch(const char *name, tl_kernel_fn fn,
                                 void (*setup)(tl_setup *, void *), size_t args_size,
                                 const struct tl_run_opts *opts, const char *const *sets,
                                 size_t n_sets)
{
        static struct tl_kernel k;   /* the job's kernel, until the next launch */
        k = (struct tl_kernel){ .name = name, .fn = fn, .setup = setup, .args_size = args_size };
        return fixture_run(&k, opts, sets, n_sets);
}

/* fixture_run that must succeed: otherwise print the run's problems and
 * fail the test, naming what. */
static inline void fixture_run_ok(const char *what, const struct tl_kernel *k,
                                  const struct tl_run_opts *opts, const char *const *sets,
                                  size_t n_sets)
{
        int rc = fixture_run(k, opts, sets, n_sets);
        if (rc)
                diag_print(&d, stderr);
        cr_assert_eq(rc, 0, "%s: the run failed (%d)", what, rc);
}

/* Some message of d contains needle. */
static inline bool diag_has(const char *needle)
{
        for (const struct diag_msg *m = d.head; m; m = m->next)
                if (strstr(m->text, needle))
                        return true;
        return false;
}

/* The HBM tensor called name of the last run. */
static inline struct tl_global *fixture_global(const char *name)
{
        cr_assert_not_null(job.run, "no run");
        for (int i = 0; i < job.run->n_globals; i++)
                if (strcmp(job.run->globals[i].name, name) == 0)
                        return &job.run->globals[i];
        cr_assert_fail("no tensor %s", name);
        return NULL;
}

#endif
