/* topo/topo_int.h: shared inside src/topo only: the schema table that
 * drives loading, --set, and the JSON/text output. Not part of the
 * module's interface. */
#ifndef CUBESIM_TOPO_TOPO_INT_H
#define CUBESIM_TOPO_TOPO_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/diag.h"
#include "base/yaml.h"
#include "topo/topo.h"

/* ---- schema ---- */

enum topo__ftype {
        FT_MAP,                      /* a group of keys */
        FT_INT,                      /* plain integer */
        FT_NUM,                      /* plain integer or decimal */
        FT_STR,                      /* any scalar */
        FT_ENUM,                     /* one of a fixed list of words */
        FT_COST,                     /* a number, or null (entry absent) */
        FT_PJ_DT,                    /* a number of pJ, or null (derived: TOPO_FJ_DERIVED) */
        FT_COORDS,                   /* a list of [row, col] pairs */
};

enum topo__fstore {
        FS_NONE,                     /* not stored (loader directives) */
        FS_U32,                      /* uint32_t, as is */
        FS_NS,                       /* sim_ps from ns */
        FS_GBPS,                     /* uint64_t bytes/s from GB/s (10^9) */
        FS_KIB,                      /* uint64_t bytes from KiB */
        FS_GIB,                      /* uint64_t bytes from GiB */
        FS_MHZ,                      /* uint64_t Hz from MHz */
        FS_NAME,                     /* char[TOPO_NAME_MAX] */
        FS_NET,                      /* enum topo_net */
        FS_BASE,                     /* the `base:` directive */
        FS_COST,                     /* sim_ps from ns, or TOPO_COST_NONE */
        FS_SHAPE,                    /* enum topo_noc_shape */
        FS_COORDS,                   /* struct topo_coords */
        FS_PJ,                       /* uint64_t femtojoules from picojoules */
        FS_W,                        /* uint64_t milliwatts from watts */
};

struct topo__field {
        const char *path;            /* dotted YAML path */
        uint8_t type;                /* enum topo__ftype */
        uint8_t store;               /* enum topo__fstore */
        bool lo_open;                /* the lower bound is exclusive */
        double lo;                   /* smallest valid value, in the file's unit */
        double hi;                   /* largest valid value, in the file's unit */
        size_t offset;               /* of the stored value in struct topo */
        const char *const *words;    /* FT_ENUM: NULL-terminated valid words */
        bool optional;               /* may be absent even with `base: none` */
};

extern const struct topo__field topo__fields[];
extern const size_t topo__n_fields;

/* The JSON name of a field's last path component: the unit suffix
 * converted to the stored unit (latency_ns -> latency_ps, bw_gbps ->
 * bw_bytes_per_s, size_kib -> size_bytes, clock_mhz -> clock_hz). */
void topo__stored_name(const char *yaml_name, char *buf, size_t len);

/* Free a graph's route cache (topo_route.c). */
void topo__route_cache_free(struct topo_route_cache *c);

/* Enum words of enum topo_net and enum topo_noc_shape. */
extern const char *const topo__net_words[];
extern const char *const topo__shape_words[];

#endif
