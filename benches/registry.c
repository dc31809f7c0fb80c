/* benches/registry.c: the list of benches. Keep README.md's bench list in
 * step: a test compares the two. */
#include <string.h>

#include "bench.h"

extern const struct bench bench_engine_hold;
extern const struct bench bench_engine_phold;
extern const struct bench bench_gqa_decode_dispatch;
extern const struct bench bench_headline;
extern const struct bench bench_llm_step;
extern const struct bench bench_serving;
extern const struct bench bench_sim_speed;
extern const struct bench bench_validate_tt_dm;
extern const struct bench bench_validate_tt_gemm;
extern const struct bench bench_validate_tt_llm;
extern const struct bench bench_validate_tt_ccl;

const struct bench *const bench_registry[] = {
        &bench_engine_hold,
        &bench_engine_phold,
        &bench_gqa_decode_dispatch,
        &bench_headline,
        &bench_llm_step,
        &bench_serving,
        &bench_validate_tt_gemm,
        &bench_validate_tt_dm,
        &bench_validate_tt_llm,
        &bench_validate_tt_ccl,
        &bench_sim_speed,
        NULL,
};

const struct bench *bench_find(const char *name)
{
        for (const struct bench *const *b = bench_registry; *b; b++)
                if (strcmp((*b)->name, name) == 0)
                        return *b;
        return NULL;
}

int bench_print_json(const struct bench_ctx *c, json_t *v)
{
        if (jsonw_print(c->out, v, 0) == 0)
                return 0;
        diag_error(c->diag, "cannot print the figures as JSON (out of memory or a write error)");
        return 1;
}

void bench_flow_list(FILE *f, const char *list)
{
        fputc('[', f);
        for (const char *p = list; *p; p++) {
                if (*p == ',')
                        fputs(", ", f);
                else if (*p != ' ')
                        fputc(*p, f);
        }
        fputc(']', f);
}
