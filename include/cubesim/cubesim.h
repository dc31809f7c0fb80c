/* cubesim/cubesim.h: the run API of libcubesim.so, which `cubesim run`,
 * `sweep`, `bench run` and `serve`, and the Python package (python/cubesim) go
 * through: load a machine and change it with --set keys, find or load
 * kernels, run a kernel with parameters and options, read the result as
 * the JSON of `cubesim run --json`; run a sweep, a bench, a serving
 * simulation.
 *
 * Every function that can fail returns a status, the exit status the
 * command line would give: CUBESIM_OK, CUBESIM_FAILED (the kernel failed
 * or deadlocked) or CUBESIM_BAD_INPUT (a parameter, a file, a machine).
 * Its messages, errors and warnings alike, are then in cubesim_messages(),
 * in the form the command line prints them. Nothing here exits the
 * process, except a run past opts.timeout_s (the watchdog stops the
 * process, as the command line does). The library keeps no state between
 * runs but the loaded kernel libraries and the last call's messages; it
 * is not thread-safe: one call at a time per process.
 *
 * The library also exports the kernel API (<cubesim/tl.h>), which kernel
 * libraries loaded with cubesim_kernels_load bind to. */
#ifndef CUBESIM_CUBESIM_H
#define CUBESIM_CUBESIM_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define CUBESIM_API __attribute__((visibility("default")))
#else
#define CUBESIM_API
#endif

/* What a call returns: the command line's exit statuses. */
enum cubesim_status {
        CUBESIM_OK = 0,              /* done */
        CUBESIM_FAILED = 1,          /* the kernel failed (kernel error, deadlock, budget) */
        CUBESIM_BAD_INPUT = 2,       /* bad input found at setup, or out of memory */
};

enum cubesim_mode {
        CUBESIM_MODE_OPLOG = 0,      /* timing only */
        CUBESIM_MODE_DATA = 1,       /* real numbers: fp32 compute, rounding on store */
};

/* An array in memory, float32, C order. */
struct cubesim_array {
        const char *name;            /* the kernel's tensor name (NAME.npy) */
        int ndim;                    /* 0..4 */
        const int64_t *shape;        /* ndim extents */
        const float *data;           /* prod(shape) elements */
};

/* How to run. Start from cubesim_run_opts_init; each field is the
 * `cubesim run` option named in its comment. Paths may be NULL (none). */
struct cubesim_run_opts {
        int mode;                    /* --mode: enum cubesim_mode */
        const char *inputs_dir;      /* --inputs DIR */
        int allow_random;            /* --allow-random: generate inputs that have no file */
        const char *save_inputs_dir; /* --save-inputs DIR */
        const char *outputs_dir;     /* --outputs DIR */
        const char *expect_dir;      /* --expect DIR */
        double rtol, atol;           /* --rtol, --atol (< 0: the output dtype's default) */
        int fail_on_nonfinite;       /* --fail-on-nonfinite */
        uint64_t seed;               /* --seed */
        const char *oplog_path;      /* --oplog FILE (.gz: gzip) */
        const char *trace_path;      /* --trace FILE (.gz: gzip) */
        const char *trace_pes;       /* --trace-pes LIST */
        uint64_t trace_t0_ns;        /* --trace-window T0:T1, ns */
        uint64_t trace_t1_ns;        /* (0: to the end) */
        uint64_t max_events;         /* --max-events (0: none) */
        uint64_t max_sim_ns;         /* --max-sim-ns (0: none) */
        double timeout_s;            /* --timeout-s (0: none); past it the process stops */
        int progress;                /* --progress: a progress line on stderr */
        int profile;                 /* --profile: "profile" in the result's JSON */
        const struct cubesim_array *inputs; /* data mode: inputs in memory (not with
                                      * inputs_dir); n_inputs entries */
        size_t n_inputs;
        int keep_outputs;            /* data mode: keep the outputs in the result
                                      * (cubesim_result_output) */
        int critical_path;           /* --critical-path: "critical_path" in the result's JSON
                                      * and its section in the text */
};

/* The defaults of `cubesim run` (op_log mode, seed 1, the default
 * budgets), progress off. */
CUBESIM_API void cubesim_run_opts_init(struct cubesim_run_opts *opts);

/* The messages of the last call that returned a status, one per line:
 * "FILE:LINE:COL: error: ..." when located, else "error: ..." (or
 * "warning: ...", "note: ..."); "" if none. Valid until the next call. */
CUBESIM_API const char *cubesim_messages(void);

/* The library's version ("0.1.0"). */
CUBESIM_API const char *cubesim_version(void);

/* ---- kernels ---- */

/* The name and one-line summary of the i-th known kernel (built-ins
 * first, then loaded ones); NULL past the last. */
CUBESIM_API const char *cubesim_kernel_name(size_t i);
CUBESIM_API const char *cubesim_kernel_summary(size_t i);
/* CUBESIM_OK if a kernel is called name, else CUBESIM_BAD_INPUT with
 * "error: no kernel 'NAME'" (and a did-you-mean hint). */
CUBESIM_API int cubesim_kernel_find(const char *name);
/* Load the kernels a shared object exports as cubesim_kernels (see
 * examples/user_kernel/). A kernel named like a known one is refused. */
CUBESIM_API int cubesim_kernels_load(const char *path);

/* ---- machines ---- */

typedef struct cubesim_machine cubesim_machine;

/* A machine from a topology file, or the built-in default (path NULL);
 * *out NULL on failure. */
CUBESIM_API int cubesim_machine_load(const char *path, cubesim_machine **out);
/* Set a topology parameter by its dotted YAML path ("pe.dma.bw_gbps",
 * value "128"; issue_cost.OP_ns is short for pe.cpu.issue_cost_ns.OP); on
 * error m is unchanged. */
CUBESIM_API int cubesim_machine_set(cubesim_machine *m, const char *key, const char *value);
/* The HBM capacity of machine m, bytes: every cube of every SIP. */
CUBESIM_API uint64_t cubesim_machine_hbm_bytes(const cubesim_machine *m);
/* A copy of m, to change apart; NULL when out of memory. */
CUBESIM_API cubesim_machine *cubesim_machine_copy(const cubesim_machine *m);
CUBESIM_API void cubesim_machine_free(cubesim_machine *m);

/* ---- runs ---- */

typedef struct cubesim_result cubesim_result;

/* Run kernel on every PE of machine (NULL: the built-in default) with the
 * "key=value" sets (as --set: a kernel parameter, or a topology
 * parameter of this run) and opts (NULL: the defaults). *out is the
 * result, also of a failed run once it began (its inputs report, its
 * output files), NULL when the run never began; free it with
 * cubesim_result_free. */
CUBESIM_API int cubesim_run(const char *kernel, const cubesim_machine *machine,
                            const char *const *sets, size_t n_sets,
                            const struct cubesim_run_opts *opts, cubesim_result **out);

/* The run summary as `cubesim run --json` prints it (with "profile" when
 * opts.profile); NULL for a failed run. */
CUBESIM_API const char *cubesim_result_json(const cubesim_result *r);
/* The summary as `cubesim run` prints it without --json; NULL for a
 * failed run. */
CUBESIM_API const char *cubesim_result_text(const cubesim_result *r);
/* Data mode: one line per input saying where its values came from; "" in
 * op_log mode. */
CUBESIM_API const char *cubesim_result_inputs_report(const cubesim_result *r);

/* A few numbers of the summary, for C callers. */
struct cubesim_summary {
        uint64_t sim_ps;             /* simulated time of the whole run, ps */
        uint64_t kernel_ps;          /* from the first kernel's start to the last's end, ps */
        uint64_t events;             /* events the engine ran */
        double run_wall_s;           /* host seconds of the run proper */
};
/* CUBESIM_OK, or CUBESIM_FAILED for a failed run. */
CUBESIM_API int cubesim_result_summary(const cubesim_result *r, struct cubesim_summary *out);

/* With opts.keep_outputs, in data mode: the i-th output (float32, C
 * order, as --outputs writes it), owned by r; NULL past the last. */
CUBESIM_API const struct cubesim_array *cubesim_result_output(const cubesim_result *r, size_t i);

CUBESIM_API void cubesim_result_free(cubesim_result *r);

/* ---- text for the caller ---- */

/* Where a call writes the text the command line prints on standard
 * output (a sweep's summary, its --list, a bench's figures): called with
 * each piece in order, len bytes (not NUL-terminated). NULL: nowhere. */
typedef void (*cubesim_print_fn)(void *ctx, const char *text, size_t len);

/* This process's MPI rank as mpirun announces it in the environment (0
 * when not launched by mpirun). Every rank of a sweep or a bench finds
 * the same bad input: a caller prints the messages on rank 0 alone. */
CUBESIM_API int cubesim_mpi_rank(void);

/* ---- sweeps ---- */

/* How to run a sweep: the options of `cubesim sweep`. */
struct cubesim_sweep_opts {
        const char *out_dir;         /* --out DIR: where sweep.json and the rest go
                                      * (NULL: out/NAME, NAME the spec's name) */
        unsigned jobs;               /* --jobs N: worker processes (>= 1) */
        int figures;                 /* draw the figures (gnuplot); 0: --no-figures */
        int resume;                  /* --resume: keep the points already in out_dir */
        double timeout_s;            /* --timeout-s: wall-clock limit of one point (0: none) */
        int progress;                /* --progress: a progress line on stderr (1), none (0),
                                      * or one when stderr is a terminal (-1) */
        int list;                    /* --list: check the spec and print its points; run
                                      * nothing */
        cubesim_print_fn print;      /* the summary lines (or --list's), on the process that
                                      * writes the results (MPI rank 0); NULL: none */
        void *print_ctx;             /* print's first argument */
        void (*on_progress)(void *ctx, size_t done, size_t todo, size_t failed);
                                     /* called as points finish (done of todo to run now,
                                      * failed of them), on the process that writes the
                                      * results; NULL: none */
        void *progress_ctx;          /* on_progress's first argument */
};

/* What a sweep did. */
struct cubesim_sweep_result {
        size_t n_points;             /* points in the spec */
        size_t n_failed;             /* points that failed or timed out */
        size_t n_resumed;            /* points kept from an earlier run (--resume) */
        unsigned ranks;              /* MPI ranks (1 without mpirun) */
        int root;                    /* this process wrote the results (0 on MPI ranks > 0) */
        double wall_s;               /* the whole sweep, seconds */
        uint64_t events;             /* simulated events of the points run now */
};

/* One worker, figures on, no timeout, no progress, no printing. */
CUBESIM_API void cubesim_sweep_opts_init(struct cubesim_sweep_opts *opts);
/* Run the sweep spec (docs/sweeps.md) in the file spec_path ("-":
 * standard input), or, when spec_text is not NULL, in that text (YAML;
 * JSON is YAML too; its relative machine paths resolve against the
 * current directory and its messages name it "<spec>"). The results are
 * opts->out_dir/sweep.json and the rest of `cubesim sweep`'s files.
 * CUBESIM_OK: every point ran; CUBESIM_FAILED: some point failed
 * (recorded in sweep.json); CUBESIM_BAD_INPUT: the spec, the options, or
 * results that could not be written. *out (may be NULL) says what ran
 * (zeros when nothing did). Worker processes are forked from the calling
 * process; under mpirun every rank calls this. */
CUBESIM_API int cubesim_sweep(const char *spec_path, const char *spec_text,
                              const struct cubesim_sweep_opts *opts,
                              struct cubesim_sweep_result *out);

/* ---- benches ---- */

/* The name, one-line summary and help (its parameters) of the i-th
 * bench; NULL past the last. */
CUBESIM_API const char *cubesim_bench_name(size_t i);
CUBESIM_API const char *cubesim_bench_summary(size_t i);
CUBESIM_API const char *cubesim_bench_help(size_t i);
/* CUBESIM_OK if a bench is called name, else CUBESIM_BAD_INPUT with
 * "error: no bench 'NAME'" (and a did-you-mean hint). */
CUBESIM_API int cubesim_bench_find(const char *name);

/* How to run a bench: the options of `cubesim bench run`. */
struct cubesim_bench_opts {
        const char *const *sets;     /* --set key=value: bench parameters (and, for benches
                                      * that run kernels, dotted topology keys) */
        size_t n_sets;               /* entries of sets */
        const char *topo_path;       /* --topo FILE (NULL: the built-in machine) */
        const char *out_dir;         /* --out DIR (NULL: the bench's default, under out/) */
        unsigned jobs;               /* --jobs N: worker processes of benches that sweep */
        int json;                    /* --json: the figures as one JSON object */
        cubesim_print_fn print;      /* where the figures go; NULL: nowhere */
        void *print_ctx;             /* print's first argument */
};

/* One worker, text figures, printed nowhere. */
CUBESIM_API void cubesim_bench_opts_init(struct cubesim_bench_opts *opts);
/* Run bench name as `cubesim bench run NAME` does with opts (NULL: the
 * defaults): CUBESIM_OK, CUBESIM_FAILED (a simulation failed) or
 * CUBESIM_BAD_INPUT (its parameters; any message makes a run that
 * succeeded this). */
CUBESIM_API int cubesim_bench_run(const char *name, const struct cubesim_bench_opts *opts);
/* cubesim_bench_run with --json, the "key=value" sets, out_dir and jobs;
 * *json_out the JSON it prints (free it with cubesim_free), NULL unless
 * CUBESIM_OK. */
CUBESIM_API int cubesim_bench(const char *name, const char *const *sets, size_t n_sets,
                              const char *out_dir, unsigned jobs, char **json_out);

/* ---- serving ---- */

/* How to serve: the options of `cubesim serve` (docs/serving.md). Start
 * from cubesim_serve_opts_init; strings may be NULL (the default). */
struct cubesim_serve_opts {
        const char *model;           /* --model: a preset (required) */
        const char *topo_path;       /* --topo FILE (NULL: the built-in machine) */
        const char *const *sets;     /* --set key=value: topology parameters */
        size_t n_sets;               /* entries of sets */
        int tp;                      /* --tp */
        int dp;                      /* --dp */
        const char *precision;       /* --precision: bf16, fp16, fp32; performance,
                                      * accuracy, ff13_bfp4, bf16 on a Tenstorrent machine
                                      * (NULL: bf16; performance there) */
        double qps;                  /* --qps (0: trace_path) */
        const char *trace_path;      /* --trace FILE */
        uint64_t requests;           /* --requests (0: as many as arrive in duration_s) */
        double duration_s;           /* --duration-s (0: none) */
        const char *prompt_len;      /* --prompt-len DIST (NULL: 512) */
        const char *output_len;      /* --output-len DIST (NULL: 128) */
        int64_t max_batch;           /* --max-batch (0: 256; 32 on a Tenstorrent machine) */
        int64_t max_batch_tokens;    /* --max-batch-tokens */
        int64_t chunk_tokens;        /* --chunk-tokens */
        int64_t kv_block;            /* --kv-block */
        const char *policy;          /* --policy: vllm, sarathi, static */
        const char *router;          /* --router: round-robin, least-loaded */
        double slo_ttft_ms;          /* --slo-ttft-ms (0: none) */
        double slo_tpot_ms;          /* --slo-tpot-ms (0: none) */
        uint64_t seed;               /* --seed */
        int find_capacity;           /* --find-capacity */
        const char *out_dir;         /* --out DIR (NULL: no files) */
        int figures;                 /* with out_dir: run gnuplot (0: --no-figures) */
        int exact_steps;             /* --exact-steps: simulate every iteration's exact
                                      * shape (no grid) */
        uint64_t check_steps;        /* --check-steps N: after the run, simulate N off-grid
                                      * iterations exactly; the grid's error ends the text
                                      * summary (0: none) */
        int progress;                /* --progress: a line on stderr per --find-capacity
                                      * probe */
        int json;                    /* --json: print the summary as JSON, not as text */
        cubesim_print_fn print;      /* where the summary goes (the command's stdout);
                                      * NULL: nowhere */
        void *print_ctx;             /* print's first argument */
};

/* The defaults of `cubesim serve`; model and qps still to give. */
CUBESIM_API void cubesim_serve_opts_init(struct cubesim_serve_opts *opts);
/* Serve as `cubesim serve` does with opts: the summary to opts->print
 * (text, or JSON with opts->json); *json_out (json_out may be NULL) the
 * summary as --json prints it (free it with cubesim_free), NULL unless
 * CUBESIM_OK. Bad options give CUBESIM_BAD_INPUT with the command's
 * messages; a step that failed to simulate, or an output that could not
 * be written, CUBESIM_FAILED. */
CUBESIM_API int cubesim_serve(const struct cubesim_serve_opts *opts, char **json_out);
/* Check opts as cubesim_serve does, and run nothing: CUBESIM_OK, or
 * CUBESIM_BAD_INPUT with every problem at once in cubesim_messages().
 * refused: the caller has already refused the value of some option (left
 * at its default), so a missing --qps is not said: it may be the one
 * refused (the command reports all its problems at once this way). */
CUBESIM_API int cubesim_serve_check(const struct cubesim_serve_opts *opts, int refused);
/* The range [*min, *max] of serve's integer option opt ("--tp", "--dp",
 * "--requests", "--max-batch", "--max-batch-tokens", "--chunk-tokens",
 * "--kv-block", "--check-steps"); CUBESIM_BAD_INPUT for another name. */
CUBESIM_API int cubesim_serve_int_range(const char *opt, int64_t *min, int64_t *max);

/* Free a string the library gave the caller to own. */
CUBESIM_API void cubesim_free(void *p);

/* Release what the library keeps between calls (the last messages). */
CUBESIM_API void cubesim_release(void);

#ifdef __cplusplus
}
#endif

#endif
