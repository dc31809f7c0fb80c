/* benches/llm-step: time per token of whole models, from one simulated
 * decoder layer (kernel llm_layer) times the model's layers plus its LM
 * head GEMM (kernel llm_lm_head), as a sweep (src/sweep), bf16, op_log
 * mode, on the built-in default machine or --topo FILE, with the machine
 * --set keys (dotted paths) in its spec's params.
 *
 * Panels:
 *   decode    llm_layer, q_len 1: model x batch (1, 32) x past_len (4K, 32K)
 *   prefill   llm_layer, q_len 2048, no cache (time to first token)
 *   lm-head   llm_lm_head: model x batch (1, 32)
 *   tp        llm_layer, llama3-70b decode, batch 1, 4K: tp = SIPs = 1, 2,
 *             4, 8 on the machine of topologies/8sip.yaml (the default
 *             with system.sips = tp and 225 GB/s inter-SIP links)
 *   energy-M, energy-head-M  per preset M of energy_models: a decode layer
 *             (batch 1, the first context) and the LM head on the smallest
 *             machine file that holds M (the section before write_results)
 * Every llm_layer point runs once per `part`: all (the layer), and gemm,
 * attention, norm, allreduce alone; a class's share of the layer is its
 * time alone, "other" the rest (barriers, RoPE of the new keys, residual
 * adds, silu * up, and whatever does not overlap).
 *
 * From sweep.json it derives, per model and case: time per output token
 * (layers x layer + LM head), tokens/s per user and in all, time to first
 * token, the decode HBM roofline ((weight + KV bytes) / HBM bandwidth) and
 * how close the token comes to it, joules per token and tokens per joule
 * (each point's energy_j: layers x layer + LM head, over the batch's
 * tokens), and the TP scaling with the all-reduce's share; it writes them as DIR/llm_step.json, a section
 * appended to DIR/report.md and a stacked-bar figure
 * DIR/figures/llm_breakdown.{gp,dat,png,svg}. */
#include <dirent.h>
#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../kernels/llm.h"
#include "base/fsutil.h"
#include "base/util.h"
#include "bench.h"
#include "sweep/sweep.h"
#include "topo/topo.h"
#include "llm/tt_llm_model.h"

static const char *const step_params[] = { "models", "batches", "contexts", "prefill_models",
                                           "tp_sips", "figures", "energy_models",
                                           "energy_machines", NULL };

static const char default_models[] = "llama3-8b,llama3-70b,llama31-405b,qwen2-72b,mistral-7b";
/* Prefill of the large models takes minutes of host time each; the
 * default keeps the bench to a few minutes (`--set prefill_models=...`). */
static const char default_prefill[] = "llama3-8b,mistral-7b";
static const char default_tp[] = "1,2,4,8";
static const char default_batches[] = "1,32";
static const char default_contexts[] = "4096,32768";
#define MAX_LIST 8                   /* values of a batches or contexts list */
#define MAX_CASES 512                /* cases of one report: presets x batches x contexts */

/* The numbers of a comma list into out (at most MAX_LIST); their count, or
 * -1 with a message when one is not a positive integer. */
static int parse_list(const char *key, const char *list, int64_t *out, struct diag *d)
{
        int n = 0;
        for (const char *p = list; *p;) {
                char *end;
                long long v = strtoll(p, &end, 10);
                bool bad = end == p || v < 1 || v > (1LL << 24) || (*end && *end != ',');
                if (bad || n == MAX_LIST) {
                        diag_error(d, "--set %s=%s: expected up to %d positive integers, comma "
                                   "separated", key, list, MAX_LIST);
                        return -1;
                }
                out[n++] = v;
                p = *end ? end + 1 : end;
        }
        return n;
}
#define TP_MODEL "llama3-70b"
#define TP_INTER_SIP_GBPS 225        /* topologies/8sip.yaml's inter-SIP links */

static const char *const classes[] = { "gemm", "attention", "norm", "allreduce" };
#define N_CLASSES 4

/* Every word of a comma list names a model preset; else a message. */
static void check_models(const char *key, const char *list, struct diag *d)
{
        for (const char *p = list; p && *p;) {
                const char *e = strchr(p, ',');
                size_t len = e ? (size_t)(e - p) : strlen(p);
                char name[64];
                snprintf(name, sizeof name, "%.*s", (int)(len < 63 ? len : 63), p);
                if (!llm_model_find(name))
                        diag_error(d, "--set %s=%s: no model preset '%s' (presets: %s)", key, list,
                                   name, default_models);
                p = e ? e + 1 : NULL;
        }
}

/* What the bench was asked for. */
struct step_opts {
        const char *models, *prefill, *tp; /* comma lists of presets; SIP counts */
        const char *batches, *contexts; /* comma lists of decode batches and past lengths */
        int64_t batch[MAX_LIST], ctx[MAX_LIST]; /* the same, parsed */
        int n_batch, n_ctx;          /* entries */
        const struct en_plan *energy; /* the energy-per-token panels (NULL: none) */
};

struct en_plan;
static void en_panels(FILE *f, const struct en_plan *pl);

static char *make_spec(const struct bench_ctx *c, const struct step_opts *so, const char *topo,
                       size_t *len)
{
        char *buf = NULL;
        FILE *f = bench_spec_begin(c, "# The spec of `cubesim bench run llm-step` "
                                   "(benches/llm_step.c): one decoder\n"
                                   "# layer per model and case, each class of its ops alone, "
                                   "and the LM head.\n"
                                   "# Rerun or vary it with  cubesim sweep THIS_FILE [--jobs N]\n",
                                   "llm_step", topo, "  dtype: bf16\n  weight_dtype: bf16\n", &buf,
                                   len);
        if (!f)
                return NULL;
        const char *models = so->models, *prefill = so->prefill, *tp = so->tp;
        fputs("  - name: decode\n    kernel: llm_layer\n    params: {q_len: 1}\n"
              "    grid:\n      model: ", f);
        bench_flow_list(f, models);
        fputs("\n      batch: ", f);
        bench_flow_list(f, so->batches);
        fputs("\n      past_len: ", f);
        bench_flow_list(f, so->contexts);
        fputs("\n      part: [all, gemm, attention, norm, allreduce]\n"
              "    figure: {x: past_len, x_label: \"past length (tokens)\"}\n", f);
        if (*prefill) {
                fputs("  - name: prefill\n    kernel: llm_layer\n"
                      "    params: {q_len: 2048, past_len: 0, batch: 1}\n"
                      "    grid:\n      model: ", f);
                bench_flow_list(f, prefill);
                fputs("\n      part: [all, gemm, attention, norm, allreduce]\n", f);
        }
        fputs("  - name: lm-head\n    kernel: llm_lm_head\n    grid:\n      model: ", f);
        bench_flow_list(f, models);
        bool one = false;            /* batch 1 is there for the time to first token */
        for (int i = 0; i < so->n_batch; i++)
                one = one || so->batch[i] == 1;
        fprintf(f, "\n      batch: [%s", one ? "" : "1, ");
        for (int i = 0; i < so->n_batch; i++)
                fprintf(f, "%s%lld", i ? ", " : "", (long long)so->batch[i]);
        fputs("]\n", f);
        if (*tp) {
                fprintf(f, "  - name: tp\n    kernel: llm_layer\n"
                        "    params: {model: %s, q_len: 1, batch: 1, past_len: 4096, "
                        "system.inter_sip.bw_gbps: %d}\n    grid:\n      ways:\n        tp: ",
                        TP_MODEL, TP_INTER_SIP_GBPS);
                bench_flow_list(f, tp);
                fputs("\n        system.sips: ", f);
                bench_flow_list(f, tp);
                fputs("\n      part: [all, allreduce]\n"
                      "    figure: {x: tp, x_label: \"tensor-parallel SIPs\"}\n", f);
        }
        en_panels(f, so->energy);
        return bench_spec_end(f, &buf);
}

/* ---- reading sweep.json ------------------------------------------------------------ */

static json_t *find_panel(json_t *sw, const char *name)
{
        size_t i;
        json_t *p;
        json_array_foreach(json_object_get(sw, "panels"), i, p)
                if (strcmp(json_string_value(json_object_get(p, "name")), name) == 0)
                        return p;
        return NULL;
}

/* A point's parameter as text (numbers are printed). */
static void param_text(json_t *pt, const char *key, char *buf, size_t len)
{
        json_t *v = json_object_get(json_object_get(pt, "params"), key);
        buf[0] = 0;
        if (json_is_string(v))
                snprintf(buf, len, "%s", json_string_value(v));
        else if (json_is_integer(v))
                snprintf(buf, len, "%lld", (long long)json_integer_value(v));
}

/* The number key (kernel_ps, energy_j) of the good point of panel whose
 * parameters match keys[i] = vals[i]; -1 if there is none. */
static double point_num(json_t *panel, const char *key, const char *const *keys,
                        const char *const *vals, int n)
{
        size_t i;
        json_t *pt;
        json_array_foreach(json_object_get(panel, "points"), i, pt) {
                bool match = true;
                for (int k = 0; k < n && match; k++) {
                        char buf[64];
                        param_text(pt, keys[k], buf, sizeof buf);
                        match = strcmp(buf, vals[k]) == 0;
                }
                const char *st = json_string_value(json_object_get(pt, "status"));
                json_t *v = json_object_get(pt, key);
                if (match && st && strcmp(st, "ok") == 0)
                        return json_is_number(v) ? json_number_value(v) : -1;
        }
        return -1;
}

static double point_ps(json_t *panel, const char *const *keys, const char *const *vals, int n)
{
        return point_num(panel, "kernel_ps", keys, vals, n);
}

/* ---- the figures of one case ------------------------------------------------------- */

struct step_case {
        char label[64];              /* "llama3-8b b1 4K" */
        const struct llm_model *m;   /* the model */
        int64_t batch, past, q_len;  /* the case */
        double layer_ps;             /* one layer */
        double class_ps[N_CLASSES];  /* one layer, each class alone */
        double head_ps;              /* the LM head */
        double token_ps;             /* layers x layer + head */
        double roofline_ps;          /* (weights + KV) / HBM bandwidth (decode) */
        double layer_j;              /* one layer's energy, joules (docs/adr/0024) */
        double head_j;               /* the LM head's */
        double step_j;               /* layers x layer + head: one step of the batch */
        double j_per_token;          /* step_j / (batch x q_len) */
        double of_peak;              /* the layer's GEMM FLOP/s / the machine's peak (prefill) */
};

static double weight_bytes(const struct llm_model *m)
{
        double h = (double)m->hidden, d = (double)m->head_dim;
        double per_layer = h * (double)(m->q_heads + 2 * m->kv_heads) * d +
                           (double)m->q_heads * d * h + 3 * h * (double)m->ffn;
        return 2 * (per_layer * (double)m->layers + h * (double)m->vocab);
}

static double kv_bytes(const struct llm_model *m, int64_t batch, int64_t past)
{
        return 2.0 * 2 * (double)batch * (double)m->kv_heads * (double)past *
               (double)m->head_dim * (double)m->layers;
}

/* Fill c from the panel's points; false when a point is missing or failed. */
static bool fill_case(struct step_case *c, json_t *panel, json_t *head, const char *model,
                      double hbm_bw)
{
        char b[24], p[24];
        snprintf(b, sizeof b, "%lld", (long long)c->batch);
        snprintf(p, sizeof p, "%lld", (long long)c->past);
        const char *keys[] = { "model", "batch", "past_len", "part" };
        const char *vals[] = { model, b, p, "all" };
        int n = c->q_len == 1 ? 4 : 2;
        if (c->q_len > 1) {
                keys[1] = "part";
                vals[1] = "all";
        }
        c->layer_ps = point_ps(panel, keys, vals, n);
        c->layer_j = point_num(panel, "energy_j", keys, vals, n);
        double tf = point_num(panel, "tflops", keys, vals, n);
        double peak = point_num(panel, "peak_tflops", keys, vals, n);
        c->of_peak = tf >= 0 && peak > 0 ? tf / peak : 0;
        for (int k = 0; k < N_CLASSES; k++) {
                vals[n - 1] = classes[k];
                c->class_ps[k] = point_ps(panel, keys, vals, n);
        }
        c->head_ps = point_ps(head, (const char *[]){ "model", "batch" },
                              (const char *[]){ model, b }, 2);
        c->head_j = point_num(head, "energy_j", (const char *[]){ "model", "batch" },
                              (const char *[]){ model, b }, 2);
        if (c->layer_ps < 0 || c->head_ps < 0 || c->layer_j < 0 || c->head_j < 0)
                return false;
        for (int k = 0; k < N_CLASSES; k++)
                if (c->class_ps[k] < 0)
                        return false;
        double layers = (double)c->m->layers;
        c->token_ps = layers * c->layer_ps + c->head_ps;
        c->step_j = layers * c->layer_j + c->head_j;
        c->j_per_token = c->step_j / ((double)c->batch * (double)c->q_len);
        c->roofline_ps = (weight_bytes(c->m) + kv_bytes(c->m, c->batch, c->past)) / hbm_bw * 1e12;
        return true;
}

/* The per-token breakdown of c in ps: GEMM (with the LM head), attention,
 * norm, all-reduce, other. */
static void breakdown(const struct step_case *c, double out[5])
{
        double layers = (double)c->m->layers, sum = 0;
        for (int k = 0; k < N_CLASSES; k++) {
                out[k] = layers * c->class_ps[k] + (k == 0 ? c->head_ps : 0);
                sum += out[k];
        }
        out[4] = c->token_ps > sum ? c->token_ps - sum : 0;
}

/* ---- outputs ----------------------------------------------------------------------- */

static int run_gnuplot(const char *dir, const char *script)
{
        const char *gp = getenv("CUBESIM_GNUPLOT");
        pid_t pid = fork();
        if (pid < 0)
                return -errno;
        if (pid == 0) {
                if (chdir(dir) == 0)
                        execlp(gp ? gp : "gnuplot", gp ? gp : "gnuplot", script, (char *)NULL);
                _exit(127);
        }
        int st;
        if (waitpid(pid, &st, 0) < 0)
                return -errno;
        return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -1;
}

/* DIR/figures/NAME.dat with dat's text, NAME.gp with gp's, and, when
 * draw, gnuplot run on it; whether it drew. */
static bool save_figure(const char *out_dir, const char *name, const char *dat, size_t dat_len,
                        const char *gp, bool draw)
{
        char dir[4096], path[4400], script[128];
        snprintf(dir, sizeof dir, "%s/figures", out_dir);
        snprintf(path, sizeof path, "%s/%s.dat", dir, name);
        if (fs_write_atomic(path, dat, dat_len) < 0)
                return false;
        snprintf(script, sizeof script, "%s.gp", name);
        snprintf(path, sizeof path, "%s/%s", dir, script);
        if (fs_write_atomic(path, gp, strlen(gp)) < 0)
                return false;
        return draw && run_gnuplot(dir, script) == 0;
}

/* DIR/figures/llm_breakdown.{dat,gp} and, with gnuplot, .png and .svg. */
static bool breakdown_figure(const char *out_dir, const struct step_case *cs, size_t n,
                             bool draw)
{
        char *buf;
        size_t len;
        FILE *f = open_memstream(&buf, &len);
        if (!f)
                return false;
        fputs("# case gemm_ms attention_ms norm_ms allreduce_ms other_ms (per output token)\n", f);
        for (size_t i = 0; i < n; i++) {
                double b[5];
                breakdown(&cs[i], b);
                fprintf(f, "\"%s\" %.6f %.6f %.6f %.6f %.6f\n", cs[i].label, b[0] / 1e9,
                        b[1] / 1e9, b[2] / 1e9, b[3] / 1e9, b[4] / 1e9);
        }
        bool ok = fclose(f) == 0;
        ok = ok && save_figure(out_dir, "llm_breakdown", buf, len,
              "# llm-step: where a token's time goes, per op class (benches/llm_step.c)\n"
              "set style data histograms\nset style histogram rowstacked\n"
              "set style fill solid 0.8 border -1\nset boxwidth 0.75\n"
              "set ylabel \"time per token (ms)\"\nset xtics rotate by -45 font \",8\"\n"
              "set key outside right top\nset grid ytics\n"
              "set title \"llm-step: time per output token by op class (decode), "
              "time to first token (prefill)\"\n"
              "set terminal pngcairo size 1400,700\nset output 'llm_breakdown.png'\n"
              "plot for [c=2:6] 'llm_breakdown.dat' using c:xtic(1) "
              "title word(\"GEMM attention norm all-reduce other\", c-1)\n"
              "set terminal svg size 1400,700\nset output 'llm_breakdown.svg'\nreplot\n", draw);
        free(buf);
        return ok;
}

static void md_ms(FILE *f, double ps) { fprintf(f, " %.3f |", ps / 1e9); }

static json_t *case_json(const struct step_case *c)
{
        double b[5];
        breakdown(c, b);
        json_t *o = json_pack("{s:o, s:s, s:I, s:I, s:I, s:o, s:o, s:o, s:o}", "case",
                              jsonw_string(c->label), "model", c->m->name, "batch",
                              (json_int_t)c->batch, "past_len", (json_int_t)c->past, "q_len",
                              (json_int_t)c->q_len, "layer_ps", jsonw_real(c->layer_ps),
                              "lm_head_ps", jsonw_real(c->head_ps), "token_ps",
                              jsonw_real(c->token_ps), "tokens_per_s_per_user",
                              jsonw_real(1e12 / c->token_ps));
        json_object_set_new(o, "tokens_per_s", jsonw_real((double)c->batch * 1e12 / c->token_ps));
        if (c->q_len > 1)
                json_object_set_new(o, "of_peak_gemm", jsonw_real(c->of_peak));
        json_t *bd = json_object();
        const char *names[5] = { "gemm", "attention", "norm", "allreduce", "other" };
        for (int k = 0; k < 5; k++)
                json_object_set_new(bd, names[k], jsonw_real(b[k]));
        json_object_set_new(o, "breakdown_ps", bd);
        /* Energy: a step of the batch, per token (decode: each user's next
         * token; prefill: each prompt token) and tokens per joule. */
        json_object_set_new(o, "layer_j", jsonw_real(c->layer_j));
        json_object_set_new(o, "lm_head_j", jsonw_real(c->head_j));
        json_object_set_new(o, "step_j", jsonw_real(c->step_j));
        json_object_set_new(o, "j_per_token", jsonw_real(c->j_per_token));
        json_object_set_new(o, "tokens_per_j",
                            jsonw_real(c->step_j > 0 ? 1.0 / c->j_per_token : 0.0));
        if (c->q_len == 1) {
                json_object_set_new(o, "hbm_roofline_ps", jsonw_real(c->roofline_ps));
                json_object_set_new(o, "of_roofline", jsonw_real(c->roofline_ps / c->token_ps));
        }
        return o;
}

/* Case (m, batch, past, q_len) from panel into cs[*n] and arr, if its
 * points are all there and good. */
static void add_case(struct step_case *cs, size_t *n, json_t *arr, const struct llm_model *m,
                     int64_t batch, int64_t past, int64_t q_len, json_t *panel, json_t *head,
                     double hbm_bw)
{
        if (*n == MAX_CASES)
                return;
        struct step_case *c = &cs[*n];
        *c = (struct step_case){ .m = m, .batch = batch, .past = past, .q_len = q_len };
        bool k = past % 1024 == 0;
        if (q_len > 1)
                snprintf(c->label, sizeof c->label, "%s prefill %lldK", m->name,
                         (long long)(q_len / 1024));
        else
                snprintf(c->label, sizeof c->label, "%s b%lld %lld%s", m->name, (long long)batch,
                         (long long)(k ? past / 1024 : past), k ? "K" : "");
        if (fill_case(c, panel, head, m->name, hbm_bw)) {
                json_array_append_new(arr, case_json(c));
                (*n)++;
        }
}

/* ---- energy per token on the smallest machine that holds each preset -------------- */
/* A self-contained part (docs/energy.md): for each preset of energy_models
 * (default: models), the machine file of energy_machines (a directory,
 * default topologies/) with the least DRAM (sips x cubes x
 * cube.hbm.size_bytes; fewer PEs, then the name, break ties) that holds
 * its bf16 weights (the layers, the LM head and the embedding table) and
 * the KV cache of one user at the first context,
 * tensor parallel over its SIPs. Two panels a preset run on that file
 * (a decode layer, batch 1, and the LM head); the report gets a table of
 * J/token, tokens/J and average power, and figures/llm_energy.*. */

#define MAX_MACHINES 32              /* machine files considered */

/* One machine file. */
struct en_machine {
        char path[PATH_MAX];         /* absolute */
        char name[64];               /* its file name */
        double dram_bytes;           /* sips x cubes x HBM size */
        int64_t sips, pes;           /* SIPs (the TP ranks), PEs in all */
};

/* The choice for one preset. */
struct en_pick {
        const struct llm_model *m;   /* the preset */
        double need_bytes;           /* bf16 weights + one user's KV at the context */
        int machine;                 /* index in en_plan.mach, -1: none holds it */
};

/* What the energy panels run. */
struct en_plan {
        struct en_machine mach[MAX_MACHINES]; /* the machine files read */
        int n_mach;                  /* entries */
        struct en_pick pick[16];     /* per preset */
        int n_pick;                  /* entries */
        int64_t past;                /* the context (the first of contexts) */
        char dir[PATH_MAX];          /* the directory read */
};

/* The machine files of dir (*.yaml, in name order) that load; the rest
 * are left out. The count. */
static int en_scan(const char *dir, struct en_machine *out, int max)
{
        struct dirent **ents;
        int n = scandir(dir, &ents, NULL, alphasort), k = 0;
        for (int i = 0; i < n; i++) {
                const char *nm = ents[i]->d_name;
                size_t len = strlen(nm);
                struct en_machine *m = &out[k];
                char rel[PATH_MAX + 64];
                snprintf(rel, sizeof rel, "%s/%s", dir, nm);
                struct topo t;
                struct diag d;
                diag_init(&d);
                if (k < max && len > 5 && len < sizeof m->name && strcmp(nm + len - 5, ".yaml") == 0 &&
                    realpath(rel, m->path) && topo_load_file(m->path, &t, &d) == 0) {
                        snprintf(m->name, sizeof m->name, "%.63s", nm);
                        m->sips = t.system.sips;
                        double cubes = (double)t.system.sips * t.sip.cubes;
                        m->dram_bytes = cubes * (double)t.cube.hbm.size_bytes;
                        m->pes = (int64_t)cubes * t.cube.noc.rows * t.cube.noc.cols;
                        topo_fini(&t);
                        k++;
                }
                diag_fini(&d);
                free(ents[i]);
        }
        if (n >= 0)
                free(ents);
        return k;
}

/* Whether m's heads split over tp ranks (llm_layer's Megatron split). */
static bool en_splits(const struct llm_model *m, int64_t tp)
{
        return m->q_heads % tp == 0 && m->kv_heads % tp == 0 && m->ffn % tp == 0;
}

/* The plan: the machines of dir (or of the source tree's topologies/
 * when dir is the default and absent) and each preset's pick. false,
 * with a message, when no machine file loads. */
static bool en_plan_make(struct en_plan *pl, const char *dir, bool dir_given, const char *models,
                         int64_t past, struct diag *d)
{
        snprintf(pl->dir, sizeof pl->dir, "%s", dir);
        pl->past = past;
        pl->n_pick = 0;
        pl->n_mach = en_scan(pl->dir, pl->mach, MAX_MACHINES);
        if (pl->n_mach == 0 && !dir_given) {
                snprintf(pl->dir, sizeof pl->dir, "%s/topologies", CUBESIM_SOURCE_DIR);
                pl->n_mach = en_scan(pl->dir, pl->mach, MAX_MACHINES);
        }
        if (pl->n_mach == 0) {
                diag_error(d, "--set energy_machines=%s: no machine file (*.yaml) loads there",
                           dir);
                return false;
        }
        for (const char *p = models; p && *p && pl->n_pick < 16;) {
                size_t len = strcspn(p, ",");
                char name[64];
                snprintf(name, sizeof name, "%.*s", (int)(len < 63 ? len : 63), p);
                p += len + (p[len] == ',');
                struct en_pick *k = &pl->pick[pl->n_pick++];
                k->m = llm_model_find(name);
                /* the embedding table too: weight_bytes counts the LM head's */
                k->need_bytes = weight_bytes(k->m) + 2.0 * (double)k->m->hidden *
                                (double)k->m->vocab + kv_bytes(k->m, 1, past + 1);
                k->machine = -1;
                for (int i = 0; i < pl->n_mach; i++) {
                        const struct en_machine *a = &pl->mach[i];
                        if (a->dram_bytes < k->need_bytes || !en_splits(k->m, a->sips))
                                continue;
                        const struct en_machine *b = k->machine < 0 ? NULL : &pl->mach[k->machine];
                        if (!b || a->dram_bytes < b->dram_bytes ||
                            (a->dram_bytes == b->dram_bytes && a->pes < b->pes))
                                k->machine = i;
                }
        }
        return true;
}

/* The plan's panels in the spec: energy-MODEL (a decode layer) and
 * energy-head-MODEL (the LM head), each on its machine file. */
static void en_panels(FILE *f, const struct en_plan *pl)
{
        for (int i = 0; pl && i < pl->n_pick; i++) {
                const struct en_pick *k = &pl->pick[i];
                if (k->machine < 0)
                        continue;
                const struct en_machine *m = &pl->mach[k->machine];
                fprintf(f, "  - name: energy-%s\n    kernel: llm_layer\n    topology: \"%s\"\n"
                        "    params: {q_len: 1, batch: 1}\n"
                        "    grid: {model: [%s], past_len: [%lld], tp: [%lld]}\n", k->m->name,
                        m->path, k->m->name, (long long)pl->past, (long long)m->sips);
                fprintf(f, "  - name: energy-head-%s\n    kernel: llm_lm_head\n    topology: \"%s\"\n"
                        "    params: {batch: 1}\n    grid: {model: [%s]}\n", k->m->name, m->path,
                        k->m->name);
        }
}

/* One preset's figures from the sweep: false if a point is missing or failed. */
static bool en_point(json_t *sw, const struct en_pick *k, double *layer_ps, double *layer_j,
                     double *head_ps, double *head_j)
{
        char name[96];
        snprintf(name, sizeof name, "energy-%s", k->m->name);
        json_t *lp = find_panel(sw, name);
        snprintf(name, sizeof name, "energy-head-%s", k->m->name);
        json_t *hp = find_panel(sw, name);
        if (!lp || !hp)
                return false;
        *layer_ps = point_ps(lp, NULL, NULL, 0);
        *layer_j = point_num(lp, "energy_j", NULL, NULL, 0);
        *head_ps = point_ps(hp, NULL, NULL, 0);
        *head_j = point_num(hp, "energy_j", NULL, NULL, 0);
        return *layer_ps > 0 && *layer_j >= 0 && *head_ps > 0 && *head_j >= 0;
}

/* DIR/figures/llm_energy.{dat,gp} (and .png, .svg with gnuplot): J/token
 * per preset on its machine, dat the data's text. */
static bool en_figure(const char *out_dir, const char *dat, size_t len, bool draw)
{
        return save_figure(out_dir, "llm_energy", dat, len,
              "# llm-step: joules per output token of each preset, batch 1, on the smallest\n"
              "# machine file that holds it (benches/llm_step.c, docs/energy.md)\n"
              "set style data histograms\nset style fill solid 0.8 border -1\n"
              "set boxwidth 0.6\nset logscale y\nset grid ytics\nunset key\n"
              "set ylabel \"J per output token (batch 1)\"\n"
              "set xtics rotate by -30 font \",9\" noenhanced\n"
              "set title \"llm-step: energy per token on the smallest machine that holds "
              "each model\" noenhanced\n"
              "set terminal pngcairo size 1200,650\nset output 'llm_energy.png'\n"
              "plot 'llm_energy.dat' using 2:xtic(sprintf(\"%s\\n%s\", "
              "stringcolumn(1), stringcolumn(3)))\n"
              "set terminal svg size 1200,650\nset output 'llm_energy.svg'\nreplot\n", draw);
}

/* The report's section, llm_step.json's "energy_per_token" and the
 * figure; one line per preset on out unless quiet. */
static void en_results(const char *out_dir, json_t *sw, const struct en_plan *pl, bool figures,
                       FILE *md, json_t *all, FILE *out, bool quiet)
{
        if (!pl || pl->n_pick == 0)
                return;
        fprintf(md, "\n### Energy per token on the smallest machine that holds each model\n\n"
                "Each model on the machine file of `%s` with the least DRAM (SIPs x cubes x "
                "HBM size) that holds its bf16 weights (with the embedding table) and one user's KV "
                "cache at %lld tokens, "
                "tensor parallel over its SIPs: a decode layer (batch 1) x layers + the LM "
                "head. Average power: the step's energy over its time (docs/energy.md).\n\n"
                "| model | machine | DRAM (GB) | weights + KV (GB) | tp | TPOT (ms) | J/token "
                "| tok/J | average power (W) |\n|---|---|---|---|---|---|---|---|---|\n",
                pl->dir, (long long)pl->past);
        json_t *arr = json_array();
        char *dat = NULL;
        size_t dlen = 0;
        FILE *df = open_memstream(&dat, &dlen);
        if (df)
                fputs("# model j_per_token machine\n", df);
        int drawn_rows = 0;
        for (int i = 0; i < pl->n_pick; i++) {
                const struct en_pick *k = &pl->pick[i];
                json_t *o = json_pack("{s:s, s:o}", "model", k->m->name, "need_bytes",
                                      jsonw_real(k->need_bytes));
                json_array_append_new(arr, o);
                if (k->machine < 0) {
                        json_object_set_new(o, "machine", json_null());
                        fprintf(md, "| %s | none holds it | - | %.1f | - | - | - | - | - |\n",
                                k->m->name, k->need_bytes / 1e9);
                        continue;
                }
                const struct en_machine *m = &pl->mach[k->machine];
                json_object_set_new(o, "machine", jsonw_string(m->name));
                json_object_set_new(o, "dram_bytes", jsonw_real(m->dram_bytes));
                json_object_set_new(o, "tp", json_integer(m->sips));
                double lps, lj, hps, hj;
                if (!en_point(sw, k, &lps, &lj, &hps, &hj)) {
                        json_object_set_new(o, "status", jsonw_string("failed"));
                        fprintf(md, "| %s | %s | %.1f | %.1f | %lld | failed (sweep.json) | - | "
                                "- | - |\n", k->m->name, m->name, m->dram_bytes / 1e9,
                                k->need_bytes / 1e9, (long long)m->sips);
                        continue;
                }
                double layers = (double)k->m->layers;
                double tok_ps = layers * lps + hps, step_j = layers * lj + hj;
                double w = step_j / (tok_ps * 1e-12);
                json_object_set_new(o, "status", jsonw_string("ok"));
                json_object_set_new(o, "token_ps", jsonw_real(tok_ps));
                json_object_set_new(o, "step_j", jsonw_real(step_j));
                json_object_set_new(o, "tokens_per_j", jsonw_real(step_j > 0 ? 1 / step_j : 0));
                json_object_set_new(o, "avg_power_w", jsonw_real(w));
                fprintf(md, "| %s | %s | %.1f | %.1f | %lld | %.3f | %.4g | %.4g | %.1f |\n",
                        k->m->name, m->name, m->dram_bytes / 1e9, k->need_bytes / 1e9,
                        (long long)m->sips, tok_ps / 1e9, step_j, step_j > 0 ? 1 / step_j : 0,
                        w);
                if (df)
                        fprintf(df, "\"%s\" %.6g \"%s\"\n", k->m->name, step_j, m->name);
                drawn_rows++;
                if (!quiet)
                        fprintf(out, "energy: %-14s on %-24s tp %-2lld %.4g J/token  %.4g tok/J  "
                                "%.1f W\n", k->m->name, m->name, (long long)m->sips, step_j,
                                step_j > 0 ? 1 / step_j : 0, w);
        }
        json_object_set_new(all, "energy_per_token", arr);
        bool drawn = false;
        if (df && fclose(df) == 0 && drawn_rows)
                drawn = en_figure(out_dir, dat, dlen, figures);
        free(dat);
        if (drawn_rows)
                fprintf(md, "\n%s`figures/llm_energy.gp` draws J/token per model%s.\n",
                        drawn ? "![J/token per model](figures/llm_energy.png)\n\n" : "",
                        drawn ? "" : " (not drawn: no gnuplot, or figures=0)");
}

static int write_results(const char *out_dir, json_t *sw, const struct step_opts *so,
                         bool figures, FILE *out, bool quiet)
{
        json_t *dec = find_panel(sw, "decode"), *pre = find_panel(sw, "prefill");
        /* The points' own machine (after the machine --sets), else the sweep's. */
        json_t *bw = json_object_get(json_array_get(json_object_get(dec, "points"), 0),
                                     "hbm_bw_bytes_per_s");
        if (!json_is_integer(bw))
                bw = json_object_get(json_object_get(sw, "machine"), "hbm_bw_bytes_per_s");
        double hbm_bw = (double)json_integer_value(bw);
        json_t *head = find_panel(sw, "lm-head"), *tp = find_panel(sw, "tp");
        struct step_case cs[MAX_CASES];
        size_t n = 0;
        json_t *all = json_object(), *arr = json_array();
        /* Decode cases, then prefill, in the presets' order. */
        for (const struct llm_model *m = llm_models; m->name; m++)
                for (int b = 0; dec && b < so->n_batch; b++)
                        for (int p = 0; p < so->n_ctx; p++)
                                add_case(cs, &n, arr, m, so->batch[b], so->ctx[p], 1, dec, head,
                                         hbm_bw);
        for (const struct llm_model *m = llm_models; pre && m->name; m++)
                add_case(cs, &n, arr, m, 1, 0, 2048, pre, head, hbm_bw);
        json_object_set_new(all, "cases", arr);

        char path[4200];
        snprintf(path, sizeof path, "%s/report.md", out_dir);
        FILE *f = fopen(path, "a");
        if (!f)
                return -errno;
        fputs("\n## llm-step: time per token\n\n"
              "One decoder layer (`llm_layer`, bf16) simulated, times the model's layers, plus "
              "the LM head GEMM (`llm_lm_head`). Decode: time per output token (TPOT), tokens/s "
              "per user (1 / TPOT) and in all (batch / TPOT); the HBM roofline is (weight bytes "
              "+ KV bytes) / the machine's HBM bandwidth. Prefill (2048 tokens, no cache, batch "
              "1): time to first token (TTFT); its \"of roofline\" is the share of the "
              "machine's peak GEMM FLOP/s the layer reaches. Times in ms. Energy (docs/adr/0024): a step's "
              "joules (layers x layer + LM head) per token (decode: per user's token; "
              "prefill: per prompt token) and tokens per joule.\n\n"
              "| case | layer | LM head | TPOT or TTFT | tok/s/user | tok/s | roofline "
              "| of roofline "
              "| GEMM | attention | norm | all-reduce | other | J/token | tok/J |\n"
              "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n", f);
        for (size_t i = 0; i < n; i++) {
                const struct step_case *c = &cs[i];
                double b[5];
                breakdown(c, b);
                fprintf(f, "| %s |", c->label);
                md_ms(f, c->layer_ps);
                md_ms(f, c->head_ps);
                md_ms(f, c->token_ps);
                if (c->q_len == 1)
                        fprintf(f, " %.1f | %.1f |", 1e12 / c->token_ps,
                                (double)c->batch * 1e12 / c->token_ps);
                else
                        fputs(" - | - |", f);   /* a first token: no rate */
                if (c->q_len == 1) {
                        md_ms(f, c->roofline_ps);
                        fprintf(f, " %.0f%% |", 100 * c->roofline_ps / c->token_ps);
                } else {
                        fprintf(f, " - | %.0f%% |", 100 * c->of_peak);
                }
                for (int k = 0; k < 5; k++)
                        md_ms(f, b[k]);
                fprintf(f, " %.4g | %.4g |", c->j_per_token,
                        c->j_per_token > 0 ? 1.0 / c->j_per_token : 0.0);
                fputc('\n', f);
                if (!quiet && c->q_len == 1)
                        fprintf(out, "%-28s TPOT %9.3f ms  %8.1f tok/s/user  %9.1f tok/s  "
                                "%3.0f%% of HBM roofline  %.4g J/token  %.4g tok/J\n", c->label,
                                c->token_ps / 1e9, 1e12 / c->token_ps,
                                (double)c->batch * 1e12 / c->token_ps,
                                100 * c->roofline_ps / c->token_ps, c->j_per_token,
                                c->j_per_token > 0 ? 1.0 / c->j_per_token : 0.0);
                else if (!quiet)
                        fprintf(out, "%-28s TTFT %9.3f ms  %3.0f%% of peak GEMM FLOP/s  "
                                "%.4g J/prompt token\n", c->label, c->token_ps / 1e9,
                                100 * c->of_peak, c->j_per_token);
        }
        bool drawn = n && breakdown_figure(out_dir, cs, n, figures);
        fprintf(f, "\n%s`figures/llm_breakdown.gp` draws the time per token by op class%s.\n",
                drawn ? "![time per token by op class](figures/llm_breakdown.png)\n\n" : "",
                drawn ? "" : " (not drawn: no gnuplot, or figures=0)");
        if (tp) {
                const struct llm_model *m = llm_model_find(TP_MODEL);
                fprintf(f, "\n### Tensor parallelism: %s decode, batch 1, 4K context\n\n"
                        "tp SIPs (`topologies/8sip.yaml`: %d GB/s inter-SIP ring links), one "
                        "rank per SIP; roofline: the layer's (weight + KV) bytes over the TP "
                        "group's HBM bandwidth.\n\n| SIPs | layer (us) | speed-up | "
                        "all-reduce alone (us) | all-reduce share | of roofline |\n"
                        "|---|---|---|---|---|---|\n", TP_MODEL, TP_INTER_SIP_GBPS);
                json_t *tarr = json_array();
                double base = -1;
                for (const char *p = so->tp; *p;) {
                        char w[16];
                        size_t len = strcspn(p, ",");
                        snprintf(w, sizeof w, "%.*s", (int)len, p);
                        p += len + (p[len] == ',');
                        double lay = point_ps(tp, (const char *[]){ "tp", "part" },
                                              (const char *[]){ w, "all" }, 2);
                        double ar = point_ps(tp, (const char *[]){ "tp", "part" },
                                             (const char *[]){ w, "allreduce" }, 2);
                        if (lay < 0 || ar < 0)
                                continue;
                        if (base < 0)
                                base = lay;
                        int ways = atoi(w);
                        double head_w = 2.0 * (double)m->hidden * (double)m->vocab;
                        double bytes = (weight_bytes(m) - head_w + kv_bytes(m, 1, 4096)) /
                                       (double)m->layers;
                        double roof = bytes / (hbm_bw * ways) * 1e12;
                        fprintf(f, "| %d | %.1f | %.2f | %.1f | %.0f%% | %.0f%% |\n", ways,
                                lay / 1e6, base / lay, ar / 1e6, 100 * ar / lay, 100 * roof / lay);
                        if (!quiet)
                                fprintf(out, "tp %d SIPs: layer %8.1f us  speed-up %.2f  "
                                        "all-reduce %.0f%%  %3.0f%% of TP roofline\n", ways,
                                        lay / 1e6, base / lay, 100 * ar / lay, 100 * roof / lay);
                        json_array_append_new(tarr, json_pack(
                                "{s:i, s:o, s:o, s:o, s:o}", "sips", ways, "layer_ps",
                                jsonw_real(lay), "allreduce_ps", jsonw_real(ar), "speedup",
                                jsonw_real(base / lay), "of_roofline", jsonw_real(roof / lay)));
                }
                json_object_set_new(all, "tp", tarr);
        }
        en_results(out_dir, sw, so->energy, figures, f, all, out, quiet);
        int rc = fclose(f) == 0 ? 0 : -EIO;
        snprintf(path, sizeof path, "%s/llm_step.json", out_dir);
        if (jsonw_save(path, all, 1) < 0)
                rc = -EIO;
        json_decref(all);
        return rc;
}

/* ---- Tenstorrent machines (benches/llm_step_tt.c) ------------------------------------ */

/* On a machine of Tensix cores llm-step predicts one model as
 * tt-transformers deploys it (llm_step_tt); on any other its keys are an
 * error. -1 when the sweep below is to run, else the exit status. */
static int tt_dispatch(const struct bench_ctx *c)
{
        char buf[4096];
        const char *topo;
        struct topo t;
        if (bench_machine_load(c, NULL, buf, sizeof buf, &topo, &t) < 0)
                return 2;
        int rc = -1;
        if (tt_machine_is_tensix(&t)) {
                rc = llm_step_tt(c, topo, &t);
        } else {
                for (size_t i = 0; i < c->params->n; i++) {
                        const struct param *p = &c->params->items[i];
                        char key[64];
                        snprintf(key, sizeof key, "%.*s", (int)p->key_len, p->key);
                        if (!llm_step_tt_key(key))
                                continue;
                        diag_error(c->diag, "--set %s=%s: a parameter of llm-step on a Tenstorrent "
                                   "machine file (--topo topologies/tt_*.yaml); this machine runs "
                                   "the llm_layer sweep (models=, batches=, contexts=)", key,
                                   p->value);
                        rc = 2;
                }
        }
        topo_fini(&t);
        return rc;
}

static int run(const struct bench_ctx *c)
{
        int tt = tt_dispatch(c);
        if (tt >= 0)
                return tt;
        struct step_opts so;
        uint64_t figures;
        params_str(c->params, "models", default_models, &so.models);
        params_str(c->params, "batches", default_batches, &so.batches);
        params_str(c->params, "contexts", default_contexts, &so.contexts);
        params_str(c->params, "prefill_models", default_prefill, &so.prefill);
        params_str(c->params, "tp_sips", default_tp, &so.tp);
        params_u64(c->params, "figures", 1, 0, 1, &figures, c->diag);
        const char *en_models, *en_dir;
        params_str(c->params, "energy_models", so.models, &en_models);
        params_str(c->params, "energy_machines", "topologies", &en_dir);
        bool en_dir_given = strcmp(en_dir, "topologies") != 0;
        char topo_buf[4096];
        const char *topo;
        bench_machine(c, NULL, topo_buf, sizeof topo_buf, &topo);
        params_check_unused(c->params, step_params, "llm-step", c->diag);
        check_models("models", so.models, c->diag);
        check_models("prefill_models", so.prefill, c->diag);
        check_models("energy_models", en_models, c->diag);
        so.n_batch = parse_list("batches", so.batches, so.batch, c->diag);
        so.n_ctx = parse_list("contexts", so.contexts, so.ctx, c->diag);
        struct en_plan *plan = NULL;
        so.energy = NULL;
        if (!c->diag->n_errors && *en_models) {
                plan = calloc(1, sizeof *plan);
                if (plan && !en_plan_make(plan, en_dir, en_dir_given, en_models, so.ctx[0],
                                          c->diag)) {
                        free(plan);
                        plan = NULL;
                }
                so.energy = plan;
        }
        if (c->diag->n_errors) {
                free(plan);
                return 2;
        }
        size_t len;
        char *text = make_spec(c, &so, topo, &len);
        if (!text) {
                diag_error(c->diag, "llm-step: out of memory");
                free(plan);
                return 1;
        }
        struct sweep_spec spec;
        int rc = 2;
        const char *out_dir = c->out_dir ? c->out_dir : "out/llm_step";
        double t0 = util_now_s();
        const char *label = "llm-step (generated spec)";
        if (sweep_spec_load_text(label, text, len, NULL, &spec, c->diag) == 0) {
                struct sweep_opts sw_opts = { .out_dir = out_dir, .jobs = c->jobs ? c->jobs : 1,
                                              .no_figures = !figures, .progress = -1,
                                              .out = c->json ? NULL : c->out };
                struct sweep_outcome o;
                rc = sweep_run(&spec, &sw_opts, &o, c->diag);
                if (o.root && rc != 2) {
                        char path[4200];
                        snprintf(path, sizeof path, "%s/sweep.json", out_dir);
                        json_error_t je;
                        json_t *sw = json_load_file(path, 0, &je);
                        if (!sw || write_results(out_dir, sw, &so, figures, c->out, c->json) < 0) {
                                diag_error(c->diag, "llm-step: cannot write the results in %s",
                                           out_dir);
                                rc = 1;
                        }
                        json_decref(sw);
                        if (c->json) {
                                int prc = bench_print_json(c, json_pack(
                                        "{s:s, s:o, s:I, s:I, s:o}", "bench", "llm-step",
                                        "out", jsonw_string(out_dir),
                                        "points", (json_int_t)o.n_points,
                                        "failed", (json_int_t)o.n_failed,
                                        "wall_s", jsonw_fixed(util_now_s() - t0, 3)));
                                if (rc == 0)
                                        rc = prc;
                        } else
                                fprintf(c->out, "llm-step: %zu points in %.1f s; %s/report.md\n",
                                        o.n_points, util_now_s() - t0, out_dir);
                }
        }
        sweep_spec_fini(&spec);
        free(text);
        free(plan);
        return rc;
}

BENCH_DEFINE(bench_llm_step, "llm-step", step_params,
             "whole-model time per token: one decoder layer x layers + LM head, decode and "
             "prefill per model preset, op-class breakdown, TP scaling",
             "Runs llm_layer and llm_lm_head as a sweep (bf16, op_log mode, the default\n"
             "machine): decode at batch 1 and 32 with 4K and 32K of context, prefill of\n"
             "2048 tokens, the LM head, and llama3-70b decode with tp = 1, 2, 4, 8 SIPs\n"
             "(the machine of topologies/8sip.yaml). Each layer point also runs each op\n"
             "class alone (part=gemm, attention, norm, allreduce) for the breakdown.\n"
             "Writes DIR/sweep.json, DIR/report.md with an llm-step section (time per\n"
             "output token, tokens/s per user and in all, time to first token, the\n"
             "decode HBM roofline, joules per token and tokens per joule, TP scaling\n"
             "with the all-reduce's share),\n"
             "DIR/llm_step.json and DIR/figures/llm_breakdown.* (stacked bars). DIR is\n"
             "--out, default out/llm_step; --jobs N runs N points at once.\n"
             "\n"
             "Parameters (--set):\n"
             "  models=a,b          decode and LM head presets (default: all five)\n"
             "  batches=1,32        decode batches\n"
             "  contexts=4096,32768 decode past lengths (tokens)\n"
             "  prefill_models=a,b  prefill presets (default: llama3-8b,mistral-7b; the\n"
             "                      largest, llama31-405b, takes about 9 s and 1.2 GB\n"
             "                      of memory a layer run)\n"
             "  tp_sips=1,2,4,8     SIP counts of the TP panel (empty: none)\n"
             "  energy_models=a,b   presets whose J/token, tokens/J and average power\n"
             "                      are reported on the smallest machine that holds\n"
             "                      them (default: models; empty: none): the machine\n"
             "                      file with the least DRAM for the bf16 weights and\n"
             "                      one user's KV cache at the first context, tp = its\n"
             "                      SIPs; DIR/figures/llm_energy.*\n"
             "  energy_machines=DIR the machine files to choose from (default\n"
             "                      topologies/, else the source tree's)\n"
             "  figures=0           skip gnuplot\n"
             "  KEY=VALUE           a dotted machine parameter (pe.dma.bw_gbps=512)\n"
             "The machine is --topo FILE (default: the built-in one); run the bench once\n"
             "per machine and 'cubesim compare DIR_A DIR_B' to put them side by side.\n"
             "\n"
             "On a Tenstorrent machine file (--topo topologies/tt_*.yaml: Tensix cores,\n"
             "pe.gemm.operand_tile 32) it predicts one model as tt-transformers deploys\n"
             "it, with validate-tt-llm's code (src/llm/tt_llm_model.c): the DRAM check,\n"
             "then the device programs of a decode iteration and of a prefill. Its\n"
             "parameters there: model=PRESET (llama3.1-8b), precision=performance|\n"
             "accuracy|ff13_bfp4|bf16, batch=B (1, users in all, up to 32),\n"
             "prompt_len=N (128), gen_tokens=N (128), tp=N (chips a replica splits the\n"
             "model over; default chips / dp), dp=N (replicas, 1), samples=N (SDPA\n"
             "contexts, 5), decode_program_ns, prefill_program_ns (the fitted costs),\n"
             "prefill_trace=auto|0|1 (the prefill replayed from a trace, its programs\n"
             "at the decode's cost; auto: as the deployment does, docs/adr/0053)\n"
             "and the machine KEY=VALUE keys. It prints t/s/u (1 / the mean decode\n"
             "iteration over the generated tokens), TTFT (one user's prefill; the mean\n"
             "per-user prefill for batch > 1), tokens/s in all and per chip; --json:\n"
             "{\"bench\", \"machine\", \"topo\", \"model\", \"precision\", \"batch\",\n"
             "\"prompt_len\", \"gen_tokens\", \"chips\", \"tp\", \"dp\", \"tps_u\",\n"
             "\"decode_iteration_ms\", \"ttft_ms\", \"tokens_per_s\",\n"
             "\"tokens_per_s_per_chip\", \"weights_per_chip_gb\", \"kv_per_chip_gb\",\n"
             "\"dram_per_chip_gb\", \"prefill_scaled\", \"prefill_traced\",\n"
             "\"decode_step_j\", \"decode_power_w\", \"j_per_token\", \"tdp_w\"} (a decode\n"
             "iteration's energy on every chip used, its average power, J/token and the\n"
             "machine's system.tdp_w, null for none; docs/energy.md). These keys on another\n"
             "machine are an error (exit 2).\n");
