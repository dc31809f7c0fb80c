/* tests/api/api_repeat.c: libcubesim.so used as a library: several
 * kernels run again and again in one process (op_log and data mode,
 * in-memory inputs and outputs, a machine changed with a key, runs that
 * fail and runs refused), sweeps, benches and serving runs, each result
 * checked, the JSON of a repeated run the same every time. Linked against
 * the shared library only (the public header), and run under valgrind
 * memcheck by scripts/test.sh: nothing may leak across runs. Exit status
 * 0, or 1 naming the check that failed. Run from the repository root or
 * with CUBESIM_SOURCE_DIR. */
#include <cubesim/cubesim.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int failures;

#define CHECK(cond, ...)                                                                      \
        do {                                                                                  \
                if (!(cond)) {                                                                \
                        fprintf(stderr, "api_repeat: %s:%d: ", __FILE__, __LINE__);           \
                        fprintf(stderr, __VA_ARGS__);                                         \
                        fprintf(stderr, " (messages: %s)\n", cubesim_messages());             \
                        failures++;                                                           \
                }                                                                             \
        } while (0)

/* Run kernel with sets on m; expect status want; the result (NULL when
 * refused before the run) to *out if out, else freed. */
static int run(const char *kernel, const cubesim_machine *m, const char *const *sets, size_t n,
               const struct cubesim_run_opts *o, int want, cubesim_result **out)
{
        cubesim_result *r = NULL;
        int rc = cubesim_run(kernel, m, sets, n, o, &r);
        CHECK(rc == want, "%s: status %d, want %d", kernel, rc, want);
        CHECK(rc != CUBESIM_OK || (r && cubesim_result_json(r) && cubesim_result_text(r)),
              "%s: a good run without its summary", kernel);
        if (out)
                *out = r;
        else
                cubesim_result_free(r);
        return rc;
}

/* gemm in data mode with A and B from memory: C must be A . B. */
static void data_gemm(const cubesim_machine *m)
{
        enum { M = 24, N = 16, K = 32 };
        static float a[M * K], b[K * N];
        for (int i = 0; i < M * K; i++)
                a[i] = (float)((i * 7) % 11) - 5.0f;
        for (int i = 0; i < K * N; i++)
                b[i] = (float)((i * 5) % 13) - 6.0f;
        const int64_t sa[] = { M, K }, sb[] = { K, N };
        const struct cubesim_array in[] = { { "a", 2, sa, a }, { "b", 2, sb, b } };
        struct cubesim_run_opts o;
        cubesim_run_opts_init(&o);
        o.mode = CUBESIM_MODE_DATA;
        o.inputs = in;
        o.n_inputs = 2;
        o.keep_outputs = 1;
        static const char *const sets[] = { "m=24", "n=16", "k=32", "tile_m=16", "tile_n=16",
                                            "tile_k=16", "dtype=fp32" };
        cubesim_result *r;
        if (run("gemm", m, sets, 7, &o, CUBESIM_OK, &r) != CUBESIM_OK) {
                cubesim_result_free(r);
                return;
        }
        const struct cubesim_array *c = cubesim_result_output(r, 0);
        CHECK(c && strcmp(c->name, "c") == 0 && c->ndim == 2 && c->shape[0] == M &&
              c->shape[1] == N, "gemm: no output c [24, 16]");
        CHECK(!cubesim_result_output(r, 1), "gemm: more than one output");
        for (int i = 0; c && i < M; i++)
                for (int j = 0; j < N; j++) {
                        float want = 0;
                        for (int k = 0; k < K; k++)
                                want += a[i * K + k] * b[k * N + j];
                        CHECK(fabsf(c->data[i * N + j] - want) <= 1e-3f * (1 + fabsf(want)),
                              "gemm: c[%d][%d] = %g, want %g", i, j, c->data[i * N + j], want);
                }
        CHECK(strstr(cubesim_result_inputs_report(r), "input a [24, 32]: read from") != NULL,
              "gemm: no inputs report (%s)", cubesim_result_inputs_report(r));
        cubesim_result_free(r);
}

/* A cubesim_print_fn that appends to the memory stream ctx. */
static void to_stream(void *ctx, const char *text, size_t len)
{
        fwrite(text, 1, len, ctx);
}

/* What a sweep's on_progress saw. */
struct seen {
        size_t calls, done, todo; /* how many calls; the last done and todo */
};

static void on_progress(void *ctx, size_t done, size_t todo, size_t failed)
{
        struct seen *s = ctx;
        CHECK(done <= todo && failed == 0 && (s->calls == 0 || done >= s->done),
              "progress %zu/%zu after %zu", done, todo, s->done);
        s->calls++;
        s->done = done;
        s->todo = todo;
}

/* The sweep and bench calls: --list, a sweep with its counts, a bench
 * with its text printed, and their refusals. */
static void sweep_and_bench(int rep)
{
        static const char spec[] = "{version: 1, name: api, kernel: gemm, "
                                   "params: {tile_m: 32, tile_n: 32, tile_k: 32}, "
                                   "grid: {m: [64, 128]}}";
        char *buf = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);
        struct cubesim_sweep_opts so;
        cubesim_sweep_opts_init(&so);
        so.list = 1;
        so.print = to_stream;
        so.print_ctx = f;
        CHECK(cubesim_sweep(NULL, spec, &so, NULL) == CUBESIM_OK, "sweep --list");
        fclose(f);
        CHECK(buf && strstr(buf, "sweep api: 2 points in 1 panel on the default machine\n"),
              "--list printed: %s", buf ? buf : "(none)");
        free(buf);

        char dir[64];
        snprintf(dir, sizeof dir, "/tmp/api_repeat.%ld.%d", (long)getpid(), rep);
        struct seen seen = { 0 };
        cubesim_sweep_opts_init(&so);
        so.out_dir = dir;
        so.figures = 0;
        so.on_progress = on_progress;
        so.progress_ctx = &seen;
        struct cubesim_sweep_result res;
        CHECK(cubesim_sweep(NULL, spec, &so, &res) == CUBESIM_OK, "sweep: %s", cubesim_messages());
        CHECK(res.n_points == 2 && res.n_failed == 0 && res.n_resumed == 0 && res.ranks == 1 &&
              res.root && res.events > 0, "sweep counts: %zu points, %zu failed", res.n_points,
              res.n_failed);
        CHECK(seen.calls >= 3 && seen.done == 2 && seen.todo == 2, "progress: %zu calls, %zu/%zu",
              seen.calls, seen.done, seen.todo);
        so.resume = 1;
        seen = (struct seen){ 0 };
        CHECK(cubesim_sweep(NULL, spec, &so, &res) == CUBESIM_OK && res.n_resumed == 2 &&
              seen.calls == 1 && seen.todo == 0, "resumed: %zu", res.n_resumed);
        char cmd[128];
        snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
        CHECK(system(cmd) == 0, "%s", cmd);
        so.jobs = 0;
        CHECK(cubesim_sweep(NULL, spec, &so, &res) == CUBESIM_BAD_INPUT && res.n_points == 0 &&
              strstr(cubesim_messages(), "1 to 1024 jobs"), "jobs 0 refused");

        static const char *const hold[] = { "procs=10", "iters=100" };
        struct cubesim_bench_opts bo;
        cubesim_bench_opts_init(&bo);
        bo.sets = hold;
        bo.n_sets = 2;
        buf = NULL;
        f = open_memstream(&buf, &len);
        bo.print = to_stream;
        bo.print_ctx = f;
        CHECK(cubesim_bench_run("engine-hold", &bo) == CUBESIM_OK, "bench text");
        fclose(f);
        CHECK(buf && strstr(buf, "events: 1010\n"), "bench text: %s", buf ? buf : "(none)");
        free(buf);
        static const char *const typo[] = { "proc=10" };
        bo.sets = typo;
        bo.n_sets = 1;
        bo.print = NULL;
        CHECK(cubesim_bench_run("engine-hold", &bo) == CUBESIM_BAD_INPUT &&
              strstr(cubesim_messages(), "proc"), "unknown bench parameter: %s",
              cubesim_messages());
        CHECK(cubesim_bench_find("engine-hold") == CUBESIM_OK &&
              cubesim_bench_find("nope") == CUBESIM_BAD_INPUT &&
              strcmp(cubesim_messages(), "error: no bench 'nope' (see 'cubesim bench list')\n") ==
                      0, "bench_find: %s", cubesim_messages());
        CHECK(cubesim_bench_summary(0) && cubesim_bench_help(0) && !cubesim_bench_help(100000),
              "bench summary and help");
}

/* The serve calls on machine file topo: the text summary printed with
 * the grid's check, --exact-steps, --find-capacity (its probes on stderr
 * with progress), the JSON the same every time, and refusals. */
static void serve(const char *topo, int rep, char **first_json)
{
        struct cubesim_serve_opts so;
        cubesim_serve_opts_init(&so);
        CHECK(so.tp == 1 && so.dp == 1 && so.requests == 1000 && so.figures == 1 &&
              so.seed == 1 && !so.exact_steps && !so.check_steps && !so.print,
              "serve defaults");
        so.model = "llama3.2-1b";
        so.topo_path = topo;
        so.qps = 200;
        so.requests = 4;
        so.prompt_len = "uniform:5:40";
        so.output_len = "uniform:2:5";
        so.check_steps = 2;
        char *buf = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);
        so.print = to_stream;
        so.print_ctx = f;
        CHECK(cubesim_serve(&so, NULL) == CUBESIM_OK, "serve text");
        fclose(f);
        CHECK(buf && strstr(buf, "serve llama3.2-1b, policy vllm, tp 1, dp 1: 4 requests") &&
              strstr(buf, "\nstep check: 2 off-grid iterations, grid vs exact simulation"),
              "serve text: %s", buf ? buf : "(none)");
        free(buf);

        char *json = NULL;
        so.print = NULL;
        so.check_steps = 0;
        so.exact_steps = 1;
        CHECK(cubesim_serve(&so, &json) == CUBESIM_OK && json &&
              strstr(json, "\"requests\": 4, \"completed\": 4"), "serve --exact-steps: %s",
              json ? json : "(none)");
        char *wall = json ? strstr(json, "\"wall_s\"") : NULL;
        if (wall)
                *wall = '\0';
        if (json && !*first_json)
                *first_json = json;
        else if (json)
                CHECK(strcmp(json, *first_json) == 0, "serve %d: the JSON changed", rep);
        if (json != *first_json)
                cubesim_free(json);

        so.exact_steps = 0;
        so.qps = 0;
        so.requests = 3;
        so.find_capacity = 1;
        so.progress = 1;
        so.slo_ttft_ms = 8;
        so.slo_tpot_ms = 8;
        so.json = 1;
        buf = NULL;
        f = open_memstream(&buf, &len);
        so.print = to_stream;
        so.print_ctx = f;
        CHECK(cubesim_serve(&so, NULL) == CUBESIM_OK, "serve --find-capacity");
        fclose(f);
        CHECK(buf && strstr(buf, "\"capacity_qps\": "), "capacity: %s", buf ? buf : "(none)");
        free(buf);

        so.print = NULL;
        so.find_capacity = 0;
        so.exact_steps = 1;
        so.check_steps = 3;
        so.policy = "orca";
        CHECK(cubesim_serve(&so, &json) == CUBESIM_BAD_INPUT && !json &&
              strcmp(cubesim_messages(), "error: --policy orca: expected vllm, sarathi or "
                     "static\nerror: which arrivals? --qps X or --trace FILE\nerror: "
                     "--check-steps compares the grid with --exact-steps: give one\n") == 0,
              "serve refused: %s", cubesim_messages());
        CHECK(cubesim_serve_check(&so, 1) == CUBESIM_BAD_INPUT &&
              !strstr(cubesim_messages(), "which arrivals"), "serve_check: %s",
              cubesim_messages());
        so.policy = NULL;
        so.exact_steps = 0;
        so.check_steps = 0;
        so.qps = 1;
        CHECK(cubesim_serve_check(&so, 0) == CUBESIM_OK && !*cubesim_messages(),
              "serve_check ok: %s", cubesim_messages());
        so.model = "llama3.1-70b";
        so.topo_path = "topologies/nosuch.yaml";
        CHECK(cubesim_serve(&so, NULL) == CUBESIM_BAD_INPUT &&
              strstr(cubesim_messages(), "nosuch.yaml"), "serve: no machine file: %s",
              cubesim_messages());
        int64_t lo = 0, hi = 0;
        CHECK(cubesim_serve_int_range("--tp", &lo, &hi) == CUBESIM_OK && lo == 1 && hi == 4096 &&
              cubesim_serve_int_range("--qps", &lo, &hi) == CUBESIM_BAD_INPUT,
              "serve int ranges");
}

int main(void)
{
        const char *src = getenv("CUBESIM_SOURCE_DIR");
        char path[1024];
        snprintf(path, sizeof path, "%s/topologies/small.yaml", src ? src : ".");
        cubesim_machine *small = NULL, *fast = NULL;
        CHECK(cubesim_machine_load(path, &small) == CUBESIM_OK, "cannot load %s", path);
        if (!small)
                return 1;
        fast = cubesim_machine_copy(small);
        CHECK(cubesim_machine_set(fast, "pe.dma.bw_gbps", "1024") == CUBESIM_OK, "set");
        CHECK(cubesim_machine_set(fast, "pe.dma.bw_gbps", "fast") == CUBESIM_BAD_INPUT &&
              strstr(cubesim_messages(), "pe.dma.bw_gbps"), "a bad value is refused");
        CHECK(cubesim_kernel_find("gemm") == CUBESIM_OK, "gemm is known");
        CHECK(cubesim_kernel_name(0) && !cubesim_kernel_name(100000), "kernel names");

        char *first = NULL, *serve_json = NULL;
        for (int rep = 0; rep < 3; rep++) {
                static const char *const gemm_sets[] = { "m=64", "n=48", "k=32" };
                cubesim_result *r = NULL;
                run("gemm", small, gemm_sets, 3, NULL, CUBESIM_OK, &r);
                if (r && cubesim_result_json(r)) {
                        if (!first)
                                first = strdup(cubesim_result_json(r));
                        else
                                CHECK(strcmp(first, cubesim_result_json(r)) == 0,
                                      "run %d: the JSON changed", rep);
                }
                struct cubesim_summary s;
                CHECK(r && cubesim_result_summary(r, &s) == CUBESIM_OK && s.sim_ps > 0 &&
                      s.kernel_ps > 0 && s.kernel_ps <= s.sim_ps && s.events > 0,
                      "gemm: summary");
                cubesim_result_free(r);

                /* Faster DMA: never slower. */
                cubesim_result *rf = NULL, *rs = NULL;
                run("gemm", fast, gemm_sets, 3, NULL, CUBESIM_OK, &rf);
                run("gemm", small, gemm_sets, 3, NULL, CUBESIM_OK, &rs);
                struct cubesim_summary sf = { 0 }, ss = { 0 };
                if (rf && rs) {
                        cubesim_result_summary(rf, &sf);
                        cubesim_result_summary(rs, &ss);
                }
                CHECK(sf.kernel_ps > 0 && sf.kernel_ps <= ss.kernel_ps,
                      "faster DMA, slower run: %llu > %llu", (unsigned long long)sf.kernel_ps,
                      (unsigned long long)ss.kernel_ps);
                cubesim_result_free(rf);
                cubesim_result_free(rs);

                static const char *const dec[] = { "seq_len=256" };
                struct cubesim_run_opts prof;
                cubesim_run_opts_init(&prof);
                prof.profile = 1;
                cubesim_result *rp = NULL;
                run("gqa_decode", small, dec, 1, &prof, CUBESIM_OK, &rp);
                CHECK(rp && strstr(cubesim_result_json(rp), "\"profile\""), "no profile");
                cubesim_result_free(rp);
                run("softmax", NULL, NULL, 0, NULL, CUBESIM_OK, NULL);
                data_gemm(small);

                /* Refused and failed runs. */
                run("gemmm", small, NULL, 0, NULL, CUBESIM_BAD_INPUT, NULL);
                CHECK(strcmp(cubesim_messages(), "error: no kernel 'gemmm'; did you mean "
                             "'gemm'? (a kernel of your own: --kernels LIB.so)\n") == 0,
                      "unknown kernel message");
                static const char *const bad[] = { "m=abc" };
                run("gemm", small, bad, 1, NULL, CUBESIM_BAD_INPUT, NULL);
                CHECK(strstr(cubesim_messages(), "--set m=abc: expected an integer") != NULL,
                      "bad parameter message");
                struct cubesim_run_opts budget;
                cubesim_run_opts_init(&budget);
                budget.max_events = 50;
                cubesim_result *rb = NULL;
                run("gemm", small, NULL, 0, &budget, CUBESIM_FAILED, &rb);
                CHECK(rb && !cubesim_result_json(rb), "a failed run has no summary");
                CHECK(strstr(cubesim_messages(), "event budget exceeded") != NULL,
                      "budget message");
                cubesim_result_free(rb);
                static const char *const hold[] = { "procs=10", "iters=100" };
                char *bj = NULL;
                CHECK(cubesim_bench("engine-hold", hold, 2, NULL, 1, &bj) == CUBESIM_OK && bj &&
                      strstr(bj, "\"events\": 1010"), "bench: %s", bj ? bj : "(none)");
                cubesim_free(bj);
                CHECK(cubesim_bench("engine-hld", NULL, 0, NULL, 1, &bj) == CUBESIM_BAD_INPUT &&
                      !bj && strstr(cubesim_messages(), "did you mean 'engine-hold'"),
                      "unknown bench");
                struct cubesim_run_opts odd;
                cubesim_run_opts_init(&odd);
                odd.outputs_dir = "/tmp";
                run("gemm", small, NULL, 0, &odd, CUBESIM_BAD_INPUT, NULL);
                CHECK(strstr(cubesim_messages(), "--outputs needs --mode data") != NULL,
                      "data-only option message");
                sweep_and_bench(rep);
                serve(path, rep, &serve_json);
        }
        free(first);
        cubesim_free(serve_json);
        cubesim_machine_free(small);
        cubesim_machine_free(fast);
        cubesim_release();
        if (failures)
                fprintf(stderr, "api_repeat: %d checks failed\n", failures);
        return failures ? 1 : 0;
}
