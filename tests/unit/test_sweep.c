/* tests/unit/test_sweep.c: sweep specs (what a spec expands to, and the
 * located messages of bad ones), parameter values as JSON, atomic writes.
 * Running sweeps (workers, MPI, resume, figures) is tests/sweep.sh. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/fsutil.h"
#include "sweep/sweep_int.h"
#include "tl/tl_run.h"

static int load(const char *text, struct sweep_spec *s, struct diag *d)
{
        diag_init(d);
        return sweep_spec_load_text("spec.yaml", text, strlen(text), NULL, s, d);
}

/* The point's coordinates as "k=v k=v". */
static const char *coords(const struct sweep_spec *s, size_t i)
{
        static char buf[512];
        size_t at = 0;
        buf[0] = '\0';
        for (size_t c = 0; c < s->points[i].n_coords; c++)
                at += (size_t)snprintf(buf + at, sizeof buf - at, "%s%s=%s", c ? " " : "",
                                       s->points[i].coords[c].key,
                                       s->points[i].coords[c].value);
        return buf;
}

static bool has_msg(const struct diag *d, const char *needle)
{
        for (const struct diag_msg *m = d->head; m; m = m->next)
                if (strstr(m->text, needle))
                        return true;
        return false;
}

static void dump(const struct diag *d)
{
        for (const struct diag_msg *m = d->head; m; m = m->next)
                fprintf(stderr, "  got: %s\n", m->text);
}

/* load that must succeed: otherwise print its messages and fail. */
static void load_ok(const char *text, struct sweep_spec *s, struct diag *d)
{
        int rc = load(text, s, d);
        if (rc)
                dump(d);
        cr_assert_eq(rc, 0, "the spec does not load:\n%s", text);
}

/* Spec s is called name and has panels panels of points points in all. */
static void expect_counts(const struct sweep_spec *s, const char *name, size_t panels,
                          size_t points)
{
        cr_assert_str_eq(s->name, name);
        cr_assert_eq(s->n_panels, panels);
        cr_assert_eq(s->n_points, points);
}

Test(sweep_spec, grid_is_row_major_with_linked_axes_then_points)
{
        struct sweep_spec s;
        struct diag d;
        load_ok("version: 1\n"
                "kernel: gemm\n"
                "params: {tile_m: 32, dtype: bf16}\n"
                "grid:\n"
                "  dtype: [fp32, fp16]\n"
                "  size: {m: [64, 128], n: [64, 128]}\n"
                "points:\n"
                "  - {m: 8, k: 16}\n",
                &s, &d);
        expect_counts(&s, "spec", 1, 5);
        cr_assert_str_eq(coords(&s, 0), "dtype=fp32 m=64 n=64");
        cr_assert_str_eq(coords(&s, 1), "dtype=fp32 m=128 n=128");
        cr_assert_str_eq(coords(&s, 2), "dtype=fp16 m=64 n=64");
        cr_assert_str_eq(coords(&s, 3), "dtype=fp16 m=128 n=128");
        cr_assert_str_eq(coords(&s, 4), "m=8 k=16");
        cr_assert_eq(s.panels[0].n_params, 2);
        /* A coordinate wins over a fixed parameter; absent keys are NULL. */
        cr_assert_str_eq(sweep_point_param(&s, 0, "dtype")->value, "fp32");
        cr_assert_str_eq(sweep_point_param(&s, 4, "dtype")->value, "bf16");
        cr_assert_str_eq(sweep_point_param(&s, 4, "tile_m")->value, "32");
        cr_assert_null(sweep_point_param(&s, 0, "k"));
        cr_assert_null(s.topo_path);
        sweep_spec_fini(&s);
        diag_fini(&d);
}

Test(sweep_spec, panels_inherit_and_override)
{
        struct sweep_spec s;
        struct diag d;
        load_ok("version: 1\n"
                "name: two\n"
                "kernel: gemm\n"
                "params: {pe.dma.bw_gbps: 64}\n"
                "grid: {k: [16, 32]}\n"
                "figure: {x: k, x_label: \"K (elements)\", roofline_bytes_per_x: 8}\n"
                "panels:\n"
                "  - name: first\n"
                "    params: {m: 64, n: 128}\n"
                "  - name: second\n"
                "    kernel: softmax\n"
                "    params: {rows: 32}\n"
                "    grid: {cols: [64, 128, 256]}\n"
                "    figure: {x: cols, log: false}\n",
                &s, &d);
        expect_counts(&s, "two", 2, 5);
        const struct sweep_panel *a = &s.panels[0], *b = &s.panels[1];
        cr_assert_str_eq(a->name, "first");
        cr_assert_str_eq(a->kernel, "gemm");
        cr_assert_eq(a->first_point, 0);
        cr_assert_eq(a->n_points, 2);
        cr_assert_str_eq(sweep_point_param(&s, 0, "n")->value, "128");
        cr_assert_str_eq(sweep_point_param(&s, 1, "m")->value, "64");
        cr_assert_str_eq(sweep_point_param(&s, 3, "pe.dma.bw_gbps")->value, "64");
        cr_assert_eq(b->n_params, 2);
        cr_assert_str_eq(a->figure.x, "k");
        cr_assert_eq(a->figure.roofline_bytes_per_x, 8);
        cr_assert_eq(a->figure.log, -1);
        cr_assert_str_eq(b->kernel, "softmax");
        cr_assert_eq(b->first_point, 2);
        cr_assert_eq(b->n_points, 3);
        cr_assert_str_eq(coords(&s, 4), "cols=256");
        /* Figure keys merge: x and log from the panel, the rest inherited. */
        cr_assert_str_eq(b->figure.x, "cols");
        cr_assert_str_eq(b->figure.x_label, "K (elements)");
        cr_assert_eq(b->figure.log, 0);
        sweep_spec_fini(&s);
        diag_fini(&d);
}

Test(sweep_spec, topology_parameters_and_issue_cost_alias)
{
        struct sweep_spec s;
        struct diag d;
        load_ok("version: 1\nkernel: noop\n"
                "grid:\n  pe.dma.bw_gbps: [64, 128]\n  issue_cost.composite_ns: [40, 60]\n",
                &s, &d);
        cr_assert_eq(s.n_points, 4);
        char buf[128];
        cr_assert_str_eq(tl_set_topo_path("issue_cost.composite_ns", 23, buf, sizeof buf),
                         "pe.cpu.issue_cost_ns.composite");
        cr_assert_str_eq(tl_set_topo_path("pe.dma.bw_gbps", 14, buf, sizeof buf), "pe.dma.bw_gbps");
        sweep_spec_fini(&s);
        diag_fini(&d);
}

/* Each bad spec gives exactly these located messages (and exit status 2
 * at the command line: load returns -EINVAL). */
struct bad_case {
        const char *text;            /* the spec */
        const char *msg;             /* a message it must produce */
};

Test(sweep_spec, bad_specs_are_located)
{
        static const struct bad_case cases[] = {
                { "kernel: gemm\ngrid: {m: [64]}\n",
                  "spec.yaml:1:1: error: the spec has no 'version:'; write 'version: 1' first" },
                { "version: 2\nkernel: gemm\ngrid: {m: [64]}\n",
                  "spec.yaml:1:10: error: version must be 1, got '2'" },
                { "version: 1\nkernel: gemm\ngird: {m: [64]}\n",
                  "spec.yaml:3:1: error: unknown key 'gird' in the sweep spec; did you mean "
                  "'grid'?" },
                { "version: 1\nkernel: gemn\ngrid: {m: [64]}\n",
                  "spec.yaml:2:9: error: no kernel 'gemn'; did you mean 'gemm'?" },
                { "version: 1\nkernel: gemm\ngrid:\n  tile_q: [64]\n",
                  "spec.yaml:4:3: error: kernel gemm has no parameter 'tile_q'; did you mean "
                  "'tile_m'?" },
                { "version: 1\nkernel: gemm\ngrid:\n  m: [64, 0]\n",
                  "spec.yaml:4:11: error: m=0: expected an integer in [1, 1048576]" },
                { "version: 1\nkernel: gemm\ngrid:\n  s: {m: [1, 2], n: [3]}\n",
                  "spec.yaml:4:21: error: linked grid parameter 'n' has 1 values, but 'm' has 2" },
                { "version: 1\nkernel: gemm\nparams: {pe.dma.bw_gbps: -3}\ngrid: {m: [64]}\n",
                  "spec.yaml:3:26: error: pe.dma.bw_gbps must be > 0 (got -3)" },
                { "version: 1\nkernel: gemm\ngrid: {m: [64]}\npanels:\n  - name: a\n"
                  "  - name: a\n",
                  "spec.yaml:6:11: error: panel name 'a' is used twice (first at line 5)" },
                { "version: 1\nkernel: gemm\ngrid: {m: [64, 128]}\nfigure: {x: n}\n",
                  "spec.yaml:4:9: error: figure x 'n' is not a parameter that panel spec varies "
                  "(its grid varies: m)" },
                { "version: 1\nkernel: gemm\n",
                  "spec.yaml:1:1: error: panel spec has no points" },
                { "version: 1\nkernel: gemm\ngrid: {m: [64}\n",
                  "spec.yaml:3:14: error: YAML syntax error" },
                { "# only a comment\n",
                  "spec.yaml:1:1: error: the spec is empty" },
        };
        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
                struct sweep_spec s;
                struct diag d;
                int rc = load(cases[i].text, &s, &d);
                if (rc == 0 || !has_msg(&d, cases[i].msg)) {
                        fprintf(stderr, "case %zu: want: %s\n", i, cases[i].msg);
                        dump(&d);
                }
                cr_expect_neq(rc, 0, "case %zu loaded", i);
                cr_expect(has_msg(&d, cases[i].msg), "case %zu: message", i);
                sweep_spec_fini(&s);
                diag_fini(&d);
        }
}

Test(sweep_spec, every_problem_at_once_and_each_once)
{
        /* Two panels share a bad top-level parameter: reported once. */
        struct sweep_spec s;
        struct diag d;
        int rc = load("version: 1\nkernel: gemm\nparams: {tile_q: 1}\ngrid:\n  m: [0]\n"
                      "panels:\n  - name: a\n  - name: b\n",
                      &s, &d);
        cr_assert_neq(rc, 0);
        if (d.n_errors != 2)
                dump(&d);
        cr_expect_eq(d.n_errors, 2);
        sweep_spec_fini(&s);
        diag_fini(&d);
}

Test(sweep_spec, values_keep_their_json_type)
{
        struct sweep_kv kv = { .key = "k" };
        const char *vals[] = { "4096", "-3", "0.5", "1e3", "bf16", "12abc", "" };
        const char *want[] = { "4096", "-3", "0.5", "1000.0", "\"bf16\"", "\"12abc\"", "\"\"" };
        for (size_t i = 0; i < sizeof vals / sizeof vals[0]; i++) {
                kv.value = vals[i];
                json_t *j = sweep__kv_json(&kv);
                char *t = json_dumps(j, JSON_ENCODE_ANY);
                cr_expect_str_eq(t, want[i], "value %s", vals[i]);
                free(t);
                json_decref(j);
        }
        kv.value = "4096";
        kv.quoted = true;
        json_t *j = sweep__kv_json(&kv);
        cr_expect(json_is_string(j), "a quoted number stays a string");
        json_decref(j);
}

static size_t count_entries(const char *dir)
{
        DIR *dp = opendir(dir);
        size_t n = 0;
        for (struct dirent *e; dp && (e = readdir(dp));)
                if (e->d_name[0] != '.' || strstr(e->d_name, ".tmp."))
                        n++;
        if (dp)
                closedir(dp);
        return n;
}

Test(sweep_io, atomic_write_replaces_whole_or_leaves_alone)
{
        char dir[] = "/tmp/test_sweep.XXXXXX";
        cr_assert_not_null(mkdtemp(dir));
        char path[256], sub[256];
        snprintf(path, sizeof path, "%s/out.json", dir);
        cr_assert_eq(fs_write_atomic(path, "first\n", 6), 0);
        cr_assert_eq(fs_write_atomic(path, "second\n", 7), 0);
        FILE *f = fopen(path, "r");
        char buf[32] = "";
        cr_assert_not_null(f);
        cr_assert_not_null(fgets(buf, sizeof buf, f));
        fclose(f);
        cr_expect_str_eq(buf, "second\n");
        cr_expect_eq(count_entries(dir), 1, "no temporary file is left");
        /* The target is a directory: rename fails, the directory stays, no
         * temporary file remains. */
        snprintf(sub, sizeof sub, "%s/adir", dir);
        cr_assert_eq(mkdir(sub, 0755), 0);
        cr_expect_lt(fs_write_atomic(sub, "x", 1), 0);
        struct stat st;
        cr_expect(stat(sub, &st) == 0 && S_ISDIR(st.st_mode));
        cr_expect_eq(count_entries(dir), 2, "only out.json and adir");
        /* A directory that does not exist: an error, nothing made. */
        snprintf(sub, sizeof sub, "%s/missing/x.json", dir);
        cr_expect_lt(fs_write_atomic(sub, "x", 1), 0);
        rmdir(path);
        unlink(path);
        snprintf(sub, sizeof sub, "%s/adir", dir);
        rmdir(sub);
        cr_expect_eq(rmdir(dir), 0);
}
