/* benches/machine.c: the machine of the benches that run kernels
 * (llm-step, the headline): `--topo FILE` and the --set keys that are
 * topology parameters (dotted paths such as pe.dma.bw_gbps), checked on
 * that machine before the bench's sweep is generated, so a typo is named
 * in the user's words rather than at a line of the generated spec. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "topo/topo.h"

/* Whether --set key is a machine parameter. */
static bool machine_key(const struct param *p)
{
        return memchr(p->key, '.', p->key_len) != NULL;
}

int bench_machine_load(const struct bench_ctx *c, const char *fallback, char *buf, size_t len,
                       const char **topo, struct topo *t)
{
        const char *name = c->topo ? c->topo : fallback;
        unsigned before = c->diag->n_errors;
        *topo = NULL;
        for (size_t i = 0; i < c->params->n; i++)
                if (machine_key(&c->params->items[i]))
                        c->params->items[i].used = true;
        struct diag tmp;
        diag_init(&tmp);
        int rc;
        if (name) {
                char real[PATH_MAX];
                if (!realpath(name, real) || strlen(real) >= len) {
                        diag_error(c->diag, "%s%s: %s", c->topo ? "--topo " : "--set topo=",
                                   name, errno == ENOENT ? "no such file" : strerror(errno));
                        diag_fini(&tmp);
                        return -EINVAL;
                }
                memcpy(buf, real, strlen(real) + 1);
                *topo = buf;
                rc = topo_load_file(buf, t, &tmp);
        } else {
                rc = topo_load_default(t, &tmp);
        }
        diag_move(c->diag, &tmp);
        if (rc < 0) {
                diag_fini(&tmp);
                return -EINVAL;
        }
        for (size_t i = 0; i < c->params->n; i++) {
                struct param *p = &c->params->items[i];
                if (!machine_key(p))
                        continue;
                char key[256];
                snprintf(key, sizeof key, "%.*s", (int)p->key_len, p->key);
                topo_set(t, key, p->value, &tmp);
                diag_move(c->diag, &tmp);
        }
        diag_fini(&tmp);
        if (c->diag->n_errors > before) {
                topo_fini(t);
                return -EINVAL;
        }
        return 0;
}

int bench_machine(const struct bench_ctx *c, const char *fallback, char *buf, size_t len,
                  const char **topo)
{
        struct topo t;
        int rc = bench_machine_load(c, fallback, buf, len, topo, &t);
        if (rc == 0)
                topo_fini(&t);
        return rc;
}

void bench_machine_params(const struct bench_ctx *c, FILE *f, const char *indent)
{
        for (size_t i = 0; i < c->params->n; i++) {
                const struct param *p = &c->params->items[i];
                if (machine_key(p))
                        fprintf(f, "%s%.*s: %s\n", indent, (int)p->key_len, p->key, p->value);
        }
}
