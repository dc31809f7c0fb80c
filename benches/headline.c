/* benches/headline.c: milestone-gqa-headline, the GQA attention kernels
 * over the model presets and contexts, as a sweep (src/sweep).
 *
 * Four panels, each a grid of model preset x context, batch 1, bf16, op_log
 * mode, on the built-in default machine (or --set topo=FILE):
 *   decode-long    gqa_decode         contexts 4K, 32K, 128K
 *   decode-short   gqa_decode_short   contexts 4K, 32K, 128K
 *   prefill-long   gqa_prefill        contexts 1K to 8K (query = context)
 *   prefill-short  gqa_prefill_short  contexts 1K to 8K
 * Models: llama3-8b, llama3-70b, llama31-405b, qwen2-72b, mistral-7b.
 * Prefill at 16K and 32K runs for llama3-70b only, as explicit points after
 * each prefill panel's grid: a 32K prefill point simulates tens of millions
 * of events, and these two contexts over every preset would take the bench
 * past its one-minute budget on a 2-core host (measured: 133 s with all
 * five presets, most of it in the 32K points).
 * Decode panels draw the HBM roofline: every model here has 8 KV heads of
 * dimension 128, so a token of context is 2 (K and V) x 8 x 128 x 2 bytes
 * (bf16) = 4096 bytes that must cross HBM once.
 *
 * The bench writes the spec it ran to DIR/spec.yaml: `cubesim sweep
 * DIR/spec.yaml` runs the same sweep, and is where to start a variant.
 * It runs under mpirun like any sweep. Kernels not (yet) registered are
 * bad input, named with their panel, before anything runs. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "kernels/gqa_common.h"
#include "sweep/sweep.h"
#include "tl/tl_run.h"

static const char *const headline_params[] = { "panels", "models", "decode_contexts",
                                               "prefill_contexts", "long_prefill_models",
                                               "long_prefill_contexts", "topo", "resume",
                                               "figures",
                                               NULL };

struct panel_def {
        const char *name;            /* panel name */
        const char *kernel;          /* registry name of its kernel */
        bool prefill;                /* query length = context; contexts from prefill_contexts */
};

static const struct panel_def panel_defs[] = {
        { "decode-long", "gqa_decode", false },
        { "decode-short", "gqa_decode_short", false },
        { "prefill-long", "gqa_prefill", true },
        { "prefill-short", "gqa_prefill_short", true },
};

#define N_PANELS (sizeof panel_defs / sizeof panel_defs[0])

static const char default_models[] = "llama3-8b,llama3-70b,llama31-405b,qwen2-72b,mistral-7b";
static const char default_decode[] = "4096,32768,131072";
static const char default_prefill[] = "1024,2048,4096,8192";
static const char default_long_models[] = "llama3-70b";
static const char default_long_prefill[] = "16384,32768";

static bool in_list(const char *list, const char *word)
{
        size_t n = strlen(word);
        for (const char *p = list; p && *p;) {
                const char *e = strchr(p, ',');
                size_t len = e ? (size_t)(e - p) : strlen(p);
                if (len == n && strncmp(p, word, n) == 0)
                        return true;
                p = e ? e + 1 : NULL;
        }
        return false;
}

/* The spec text of the selected panels. */
/* Explicit points: every model of `models` at every context of `contexts`
 * (query = context when the kernel has q_len). */
static void long_points(FILE *f, const char *models, const char *contexts, bool q_len)
{
        fputs("    points:\n", f);
        for (const char *m = models; *m;) {
                size_t ml = strcspn(m, ",");
                for (const char *x = contexts; *x;) {
                        size_t xl = strcspn(x, ",");
                        fprintf(f, "      - {model: %.*s, seq_len: %.*s", (int)ml, m, (int)xl, x);
                        if (q_len)
                                fprintf(f, ", q_len: %.*s", (int)xl, x);
                        fputs("}\n", f);
                        x += xl + (x[xl] == ',');
                }
                m += ml + (m[ml] == ',');
        }
}

static char *make_spec(const struct bench_ctx *bc, const char *panels, const char *models, const char *decode,
                       const char *prefill, const char *long_models, const char *long_prefill,
                       const char *topo, size_t *len)
{
        char *buf = NULL;
        FILE *f = bench_spec_begin(bc, "# The spec of `cubesim bench run milestone-gqa-headline` "
                                   "(benches/headline.c):\n"
                                   "# GQA attention over the model presets and contexts. Rerun "
                                   "or vary it with\n"
                                   "#     cubesim sweep THIS_FILE [--jobs N]\n"
                                   "# The decode rooflines: every model here has 8 KV heads of "
                                   "dimension 128,\n"
                                   "# so a token of context is 2 (K, V) x 8 x 128 x 2 bytes "
                                   "(bf16) = 4096 bytes.\n",
                                   "gqa_headline", topo, "  batch: 1\n  dtype: bf16\n", &buf, len);
        if (!f)
                return NULL;
        for (size_t i = 0; i < N_PANELS; i++) {
                const struct panel_def *p = &panel_defs[i];
                if (panels && !in_list(panels, p->name))
                        continue;
                const struct tl_kernel *k = tl_kernel_find(p->kernel);
                fprintf(f, "  - name: %s\n    kernel: %s\n", p->name, p->kernel);
                /* Causal prefill, when the kernel has the switch. */
                const struct tl_param *causal = tl_kernel_param(k, "causal", strlen("causal"));
                if (p->prefill && causal) {
                        const char *on = "1";
                        if (causal->kind == TL_PARAM_CHOICE)
                                for (int c = 0; causal->choices[c]; c++)
                                        if (strcmp(causal->choices[c], "true") == 0 ||
                                            strcmp(causal->choices[c], "yes") == 0 ||
                                            strcmp(causal->choices[c], "on") == 0)
                                                on = causal->choices[c];
                        fprintf(f, "    params:\n      causal: %s\n", on);
                }
                fputs("    grid:\n      model: ", f);
                bench_flow_list(f, models);
                if (p->prefill && k && tl_kernel_param(k, "q_len", strlen("q_len"))) {
                        fputs("\n      context:\n        seq_len: ", f);
                        bench_flow_list(f, prefill);
                        fputs("\n        q_len: ", f);
                        bench_flow_list(f, prefill);
                } else {
                        fputs("\n      seq_len: ", f);
                        bench_flow_list(f, p->prefill ? prefill : decode);
                }
                fputc('\n', f);
                if (p->prefill && *long_models && *long_prefill)
                        long_points(f, long_models, long_prefill,
                                    k && tl_kernel_param(k, "q_len", strlen("q_len")));
                fprintf(f, "    figure:\n      x: seq_len\n      series: model\n"
                        "      x_label: \"%s\"\n",
                        p->prefill ? "context = query length (tokens)" : "context (tokens)");
                if (!p->prefill)
                        fputs("      roofline_bytes_per_x: 4096\n", f);
        }
        return bench_spec_end(f, &buf);
}

/* The report's table of the model presets' shapes, with a note for each
 * set of presets that share one (their points are the same runs). */
static char *model_table(const char *models)
{
        enum { MAX_MODELS = 32 };
        char names[MAX_MODELS][32];
        int64_t shape[MAX_MODELS][3];
        size_t n = 0;
        for (const char *p = models; p && *p && n < MAX_MODELS;) {
                const char *e = strchr(p, ',');
                size_t len = e ? (size_t)(e - p) : strlen(p);
                snprintf(names[n], sizeof names[n], "%.*s", (int)len, p);
                if (gqa_model_shape(names[n], &shape[n][0], &shape[n][1], &shape[n][2]) == 0)
                        n++;
                p = e ? e + 1 : NULL;
        }
        char *buf = NULL;
        size_t blen;
        FILE *f = open_memstream(&buf, &blen);
        if (!f)
                return NULL;
        fputs("\n## Model presets\n\n| model | query heads | KV heads | head dim | group |\n"
              "|---|---:|---:|---:|---:|\n", f);
        for (size_t i = 0; i < n; i++)
                fprintf(f, "| %s | %lld | %lld | %lld | %lld |\n", names[i],
                        (long long)shape[i][0], (long long)shape[i][1], (long long)shape[i][2],
                        (long long)(shape[i][0] / shape[i][1]));
        bool noted[MAX_MODELS] = { false };
        for (size_t i = 0; i < n; i++) {
                if (noted[i])
                        continue;
                size_t same = 0;
                for (size_t j = i + 1; j < n; j++)
                        if (memcmp(shape[i], shape[j], sizeof shape[i]) == 0)
                                same++;
                if (!same)
                        continue;
                fprintf(f, "\nNote: %s", names[i]);
                for (size_t j = i + 1; j < n; j++)
                        if (memcmp(shape[i], shape[j], sizeof shape[i]) == 0) {
                                noted[j] = true;
                                fprintf(f, "%s %s", --same ? "," : " and", names[j]);
                        }
                fprintf(f, " share one attention shape (%lld query heads, %lld KV heads, head "
                        "dim %lld), so their points give the same figures and their lines "
                        "overlap.\n",
                        (long long)shape[i][0], (long long)shape[i][1], (long long)shape[i][2]);
        }
        if (fclose(f) != 0) {
                free(buf);
                return NULL;
        }
        return buf;
}

static int run(const struct bench_ctx *c)
{
        const char *panels, *models, *decode, *prefill, *long_models, *long_prefill, *topo;
        uint64_t resume, figures;
        params_str(c->params, "panels", NULL, &panels);
        params_str(c->params, "models", default_models, &models);
        params_str(c->params, "decode_contexts", default_decode, &decode);
        params_str(c->params, "prefill_contexts", default_prefill, &prefill);
        params_str(c->params, "long_prefill_models", default_long_models, &long_models);
        params_str(c->params, "long_prefill_contexts", default_long_prefill, &long_prefill);
        params_str(c->params, "topo", NULL, &topo);
        char topo_abs[4096];
        bench_machine(c, topo, topo_abs, sizeof topo_abs, &topo);
        params_u64(c->params, "resume", 0, 0, 1, &resume, c->diag);
        params_u64(c->params, "figures", 1, 0, 1, &figures, c->diag);
        params_check_unused(c->params, headline_params, "milestone-gqa-headline", c->diag);
        /* Panels: known names; their kernels registered. */
        size_t n_sel = 0;
        for (const char *p = panels; p && *p;) {
                const char *e = strchr(p, ',');
                size_t len = e ? (size_t)(e - p) : strlen(p);
                bool known = false;
                for (size_t i = 0; i < N_PANELS; i++)
                        if (strlen(panel_defs[i].name) == len &&
                            strncmp(panel_defs[i].name, p, len) == 0)
                                known = true;
                if (!known)
                        diag_error(c->diag, "--set panels=%s: no panel '%.*s' (panels: "
                                   "decode-long, decode-short, prefill-long, prefill-short)",
                                   panels, (int)len, p);
                p = e ? e + 1 : NULL;
        }
        for (size_t i = 0; i < N_PANELS; i++) {
                if (panels && !in_list(panels, panel_defs[i].name))
                        continue;
                n_sel++;
                if (!tl_kernel_find(panel_defs[i].kernel))
                        diag_error(c->diag, "milestone-gqa-headline: panel %s needs kernel '%s', "
                                   "which this cubesim does not have ('cubesim kernels' lists "
                                   "those it has); run the other panels with --set panels=...",
                                   panel_defs[i].name, panel_defs[i].kernel);
        }
        if (n_sel == 0 && !c->diag->n_errors)
                diag_error(c->diag, "--set panels=%s selects no panel", panels);
        bool speak = sweep_launch_rank() == 0;
        if (c->diag->n_errors) {
                if (!speak) {   /* every rank finds it; rank 0 says it */
                        diag_fini(c->diag);
                        diag_init(c->diag);
                }
                return 2;
        }
        size_t len;
        char *text = make_spec(c, panels, models, decode, prefill, long_models, long_prefill, topo, &len);
        if (!text) {
                diag_error(c->diag, "milestone-gqa-headline: out of memory");
                return 1;
        }
        char *models_md = model_table(models);
        struct sweep_spec spec;
        int rc = 2;
        if (sweep_spec_load_text("milestone-gqa-headline (generated spec)", text, len, NULL,
                                 &spec, c->diag) == 0) {
                struct sweep_opts so = {
                        .out_dir = c->out_dir ? c->out_dir : "out/gqa_headline",
                        .jobs = c->jobs ? c->jobs : 1,
                        .resume = resume,
                        .no_figures = !figures,
                        .progress = -1,
                        .out = c->json ? NULL : c->out,
                        .report_extra = models_md,
                };
                struct sweep_outcome o;
                rc = sweep_run(&spec, &so, &o, c->diag);
                if (o.root && c->json && rc != 2) {
                        int prc = bench_print_json(c, json_pack(
                                "{s:s, s:o, s:I, s:I, s:I, s:I, s:I, s:b, s:o, s:I, s:o, s:I, s:o}",
                                "bench", "milestone-gqa-headline", "out", jsonw_string(so.out_dir),
                                "points", (json_int_t)o.n_points, "failed", (json_int_t)o.n_failed,
                                "resumed", (json_int_t)o.n_resumed, "ranks", (json_int_t)o.ranks,
                                "jobs", (json_int_t)so.jobs, "figures", (int)o.figures,
                                "wall_s", jsonw_fixed(o.wall_s, 3), "events", (json_int_t)o.events,
                                "events_per_s", jsonw_fixed(o.events_per_s, 0),
                                "bookings", (json_int_t)o.bookings,
                                "work_per_s", jsonw_fixed(o.work_per_s, 0)));
                        if (rc == 0)
                                rc = prc;
                }
        }
        sweep_spec_fini(&spec);
        free(text);
        free(models_md);
        if (!speak && c->diag->head) {
                diag_fini(c->diag);
                diag_init(c->diag);
        }
        return rc;
}

BENCH_DEFINE(bench_headline, "milestone-gqa-headline", headline_params,
             "GQA decode/prefill, long/short context, over model presets and contexts: "
             "sweep.json, figures, report",
             "Runs the GQA kernels (gqa_decode, gqa_decode_short, gqa_prefill,\n"
             "gqa_prefill_short) as four panels over the model presets and contexts,\n"
             "batch 1, bf16, op_log mode, and writes DIR/sweep.json, DIR/figures/ (time\n"
             "vs context per model with the HBM roofline, utilisation per component\n"
             "class, PE_CPU dispatch share), DIR/report.md and DIR/spec.yaml (the spec\n"
             "it ran: 'cubesim sweep DIR/spec.yaml' reruns it). DIR is --out, default\n"
             "out/gqa_headline; --jobs N runs N points at once; under mpirun the points\n"
             "are spread over the ranks.\n"
             "\n"
             "Parameters (--set):\n"
             "  panels=a,b           a subset of decode-long, decode-short, prefill-long,\n"
             "                       prefill-short (default: all four)\n"
             "  models=a,b           model presets (default: llama3-8b, llama3-70b,\n"
             "                       llama31-405b, qwen2-72b, mistral-7b)\n"
             "  decode_contexts=...  decode contexts in tokens (default 4096,32768,131072)\n"
             "  prefill_contexts=... prefill contexts = query lengths (default\n"
             "                       1024,2048,4096,8192)\n"
             "  long_prefill_models=a,b  models also run at the long prefill\n"
             "                       contexts (default llama3-70b; empty: none)\n"
             "  long_prefill_contexts=... those contexts (default 16384,32768)\n"
             "  topo=FILE            the machine (default: the built-in default; or\n"
             "                       bench run --topo FILE, which wins)\n"
             "  KEY=VALUE            a dotted machine parameter (pe.dma.bw_gbps=512)\n"
             "  resume=1             keep the points already done in DIR\n"
             "  figures=0            skip gnuplot (data, scripts and report still)\n"
             "\n"
             "--json prints one object: out, points, failed, resumed, ranks, jobs,\n"
             "figures, wall_s, events, events_per_s, bookings (requests served at\n"
             "arrival) and work_per_s ((events + bookings) / wall_s).\n");
