/* fuzz/fuzz_sweep.c: libFuzzer harness for the sweep-spec loader
 * (sweep/sweep.h).
 *
 * Feeds arbitrary bytes to sweep_spec_load_text with the spec's directory
 * set to the source tree's sweeps/, so `topology: ../topologies/small.yaml`
 * reads a real machine file (and a fuzzed path reads whatever it names:
 * run with stdin from /dev/null, as scripts/fuzz.sh does). On a spec it
 * accepts, every point's every parameter is looked up and checked against
 * the spec's own tables. A crash, a sanitizer report, a leak, an error code
 * without a message (or the reverse) or an inconsistent spec aborts. Build
 * and run: fuzz/README.md or scripts/fuzz.sh. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/diag.h"
#include "sweep/sweep.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#ifndef CUBESIM_SOURCE_DIR
#error "build with -DCUBESIM_SOURCE_DIR='\"/path/to/the/tree\"' (scripts/fuzz.sh does)"
#endif

static void check_kv(const struct sweep_kv *kv)
{
        if (!kv->key || !kv->value || !*kv->key)
                abort();
}

static void check_spec(const struct sweep_spec *s, const char *text, size_t len)
{
        if (!s->name || !s->text || s->text_len != len || memcmp(s->text, text, len) != 0)
                abort();     /* the spec keeps its text verbatim, for DIR/spec.yaml */
        if (s->n_points == 0 || s->n_points > SWEEP_MAX_POINTS || s->n_panels == 0)
                abort();
        size_t next = 0;
        for (size_t i = 0; i < s->n_panels; i++) {
                const struct sweep_panel *pn = &s->panels[i];
                if (!pn->name || !pn->kernel || pn->first_point != next || pn->n_points == 0)
                        abort();     /* panels own consecutive, non-empty runs of points */
                next += pn->n_points;
                for (size_t j = 0; j < pn->n_params; j++)
                        check_kv(&pn->params[j]);
        }
        if (next != s->n_points)
                abort();
        /* Every point's lookups, bounded so a 100000-point grid stays quick. */
        size_t step = s->n_points > 256 ? s->n_points / 256 : 1;
        for (size_t i = 0; i < s->n_points; i += step) {
                const struct sweep_point *pt = &s->points[i];
                if (pt->panel >= s->n_panels)
                        abort();
                const struct sweep_panel *pn = &s->panels[pt->panel];
                if (i < pn->first_point || i >= pn->first_point + pn->n_points)
                        abort();
                for (size_t c = 0; c < pt->n_coords; c++) {
                        check_kv(&pt->coords[c]);
                        if (sweep_point_param(s, i, pt->coords[c].key) != &pt->coords[c])
                                abort();     /* a coordinate wins over the panel's params */
                }
                for (size_t j = 0; j < pn->n_params; j++)
                        if (!sweep_point_param(s, i, pn->params[j].key))
                                abort();
        }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        struct sweep_spec s;
        struct diag d;
        diag_init(&d);
        int rc = sweep_spec_load_text("fuzz.yaml", (const char *)data, size,
                                      CUBESIM_SOURCE_DIR "/sweeps", &s, &d);
        if ((rc == 0) != (d.n_errors == 0))
                abort();
        if (rc == 0)
                check_spec(&s, (const char *)data, size);
        sweep_spec_fini(&s);
        diag_fini(&d);
        return 0;
}
