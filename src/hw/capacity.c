/* hw/capacity.c: can this host simulate a machine? An estimate of the host
 * memory a run of the machine takes, checked against the memory the host
 * has available, before anything big is allocated: a topology too large
 * for the host is an error (bad input, exit 2), never an out-of-memory
 * kill half-way through.
 *
 * The estimate, in bytes (op_log mode):
 *   - the component graph: topo_graph_size's figure;
 *   - hw_sim's arrays: a struct hw_link per graph edge, a struct hw_pe per
 *     PE, a struct hw_cube and its HBM channel resources per cube, a
 *     struct hw_sip per SIP (exact sizes);
 *   - the kernel runtime, per PE: HW_RUNTIME_RSS_PER_PE resident bytes,
 *     measured (below), and HW_RUNTIME_VM_PER_PE of address space;
 *   - HW_BASE_BYTES for the program itself.
 * The resident estimate is checked against the smallest of MemAvailable
 * (/proc/meminfo; sysinfo without /proc) and the room left under the
 * process's memory cgroup limit (v2 or v1, reclaimable page cache not
 * counted as used); the address-space estimate against RLIMIT_AS minus
 * what the process has mapped already.
 *
 * HW_RUNTIME_RSS_PER_PE, measured with GNU time's maximum RSS of `cubesim
 * run` on the default machine with sip.cubes, system.sips and the mesh
 * scaled up (RelWithDebInfo, x86-64), minus the graph and hw_sim arrays:
 * the kernel's struct tl_ctx (~1.5 KiB), its coroutine's touched stack
 * pages (the stack is mapped MAP_NORESERVE, so only touched pages count),
 * the touched pages of its tensor arena, its messages and the routes the
 * launch and its transfers cache. Whole run's RSS per PE:
 *     kernel        4096 PEs   16384 PEs   65536 PEs
 *     noop           18 KiB      17 KiB      15 KiB
 *     gemm           18 KiB      17 KiB      15 KiB
 *     softmax        18 KiB      17 KiB       -
 *     gqa_prefill    23 KiB      27 KiB       -
 *     gqa_decode     50 KiB      38 KiB       -
 * The constant takes the largest with room to spare. Data mode adds each
 * PE's TCM and scratch contents (up to pe.tcm.size_bytes) and the HBM
 * tensors, which the kernel's setup knows and this check does not.
 *
 * The address space per PE is the coroutine's stack slot (256 KiB and a
 * 64 KiB guard, engine/coro.c) and the first 1 MiB chunk of the tensor arena
 * (ARENA_CHUNK, tl/tensor.c); only RLIMIT_AS makes it matter.
 *
 * Memory mappings: the kernel caps a process's mappings at
 * vm.max_map_count (65530 by default). The coroutine stacks take one per
 * 64 PEs, or two per PE on a kernel without guard regions (coro_mappings);
 * the rest of the run (arena chunks, message buffers, the graph) measured
 * 99 mappings in all for 6,400 PEs of gqa_decode, so HW_BASE_MAPPINGS
 * covers the program, its libraries and a sanitizer's with room. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/sysinfo.h>
#include <unistd.h>

#include "base/ckd.h"
#include "engine/coro.h"
#include "hw/hw.h"

#define HW_RUNTIME_RSS_PER_PE (64u << 10)   /* resident, bytes; see above */
#define HW_RUNTIME_VM_PER_PE ((256u << 10) + (64u << 10) + (1u << 20)) /* address space, bytes */
#define HW_BASE_BYTES (64ull << 20)          /* the program, libraries, heap slack */
#define HW_BASE_MAPPINGS 2048u              /* mappings besides the stacks */
#define UNLIMITED (UINT64_MAX / 4)          /* a "limit" at or above this is none */

void hw_sim_host_bytes(const struct topo *t, uint64_t *rss_bytes, uint64_t *vm_bytes)
{
        uint64_t nodes, edges, graph;
        topo_graph_size(t, &nodes, &edges, &graph);
        /* Saturating: a machine past any host's memory stays past it. */
        uint64_t sips = t->system.sips, cubes = sat_mul_u64(sips, t->sip.cubes);
        uint64_t pes = sat_mul_u64(sat_mul_u64(cubes, t->cube.noc.rows), t->cube.noc.cols);
        uint64_t per_cube = sat_add_u64(sizeof(struct hw_cube),
                                        sat_mul_u64(t->cube.hbm.channels,
                                                    sizeof(struct ev_resource)));
        uint64_t hw = sat_add_u64(sat_add_u64(sat_mul_u64(edges, sizeof(struct hw_link)),
                                              sat_mul_u64(pes, sizeof(struct hw_pe))),
                                  sat_add_u64(sat_mul_u64(cubes, per_cube),
                                              sat_mul_u64(sips, sizeof(struct hw_sip))));
        uint64_t fixed = sat_add_u64(sat_add_u64(HW_BASE_BYTES, graph), hw);
        *rss_bytes = sat_add_u64(fixed, sat_mul_u64(pes, HW_RUNTIME_RSS_PER_PE));
        *vm_bytes = sat_add_u64(fixed, sat_mul_u64(pes, HW_RUNTIME_VM_PER_PE));
}

/* The number after key in a "key value" file (/proc/meminfo, memory.stat),
 * times mult; UINT64_MAX if absent. */
static uint64_t read_keyed(const char *path, const char *key, uint64_t mult)
{
        FILE *f = fopen(path, "re");
        if (!f)
                return UINT64_MAX;
        char line[256];
        size_t klen = strlen(key);
        uint64_t v = UINT64_MAX;
        while (fgets(line, sizeof line, f)) {
                if (strncmp(line, key, klen) == 0 && (line[klen] == ' ' || line[klen] == ':')) {
                        const char *p = line + klen + (line[klen] == ':');
                        char *end;
                        unsigned long long x = strtoull(p, &end, 10);
                        if (end != p)
                                v = x > UINT64_MAX / mult ? UINT64_MAX : x * mult;
                        break;
                }
        }
        fclose(f);
        return v;
}

/* The single number in a file (memory.max: a number or "max"); UINT64_MAX
 * if absent or unlimited. */
static uint64_t read_number(const char *path)
{
        FILE *f = fopen(path, "re");
        if (!f)
                return UINT64_MAX;
        unsigned long long x;
        uint64_t v = fscanf(f, "%llu", &x) == 1 ? x : UINT64_MAX;
        fclose(f);
        return v;
}

/* Room left under a cgroup's limit: limit - (usage - inactive file cache). */
static uint64_t cgroup_room(const char *limit_path, const char *usage_path,
                            const char *stat_path, const char *inactive_key)
{
        uint64_t limit = read_number(limit_path), usage = read_number(usage_path);
        if (limit >= UNLIMITED || usage == UINT64_MAX)
                return UINT64_MAX;
        uint64_t inactive = read_keyed(stat_path, inactive_key, 1);
        if (inactive != UINT64_MAX && inactive <= usage)
                usage -= inactive;
        return limit > usage ? limit - usage : 0;
}

/* The memory cgroup's room: the process's own cgroup (from /proc/self/cgroup)
 * where it is visible, else the root of the mounted hierarchy (a container
 * sees its own cgroup there). */
static uint64_t cgroup_avail(void)
{
        char v2[512] = "", v1[512] = "";
        FILE *f = fopen("/proc/self/cgroup", "re");
        if (f) {
                char line[512];
                while (fgets(line, sizeof line, f)) {
                        line[strcspn(line, "\n")] = '\0';
                        if (strncmp(line, "0::", 3) == 0)
                                snprintf(v2, sizeof v2, "%s", line + 3);
                        const char *m = strstr(line, ":memory:");
                        if (m)
                                snprintf(v1, sizeof v1, "%s", m + 8);
                }
                fclose(f);
        }
        /* cgroup v2 first, then v1: own group, then the root */
        static const struct {
                const char *fmt_limit;  /* path of the limit, %s = group */
                const char *fmt_usage;  /* path of the usage, %s = group */
                const char *fmt_stat;   /* path of memory.stat, %s = group */
                const char *inactive;   /* memory.stat key of reclaimable page cache */
        } ver[] = {
                { "/sys/fs/cgroup%s/memory.max", "/sys/fs/cgroup%s/memory.current",
                  "/sys/fs/cgroup%s/memory.stat", "inactive_file" },
                { "/sys/fs/cgroup/memory%s/memory.limit_in_bytes",
                  "/sys/fs/cgroup/memory%s/memory.usage_in_bytes",
                  "/sys/fs/cgroup/memory%s/memory.stat", "total_inactive_file" },
        };
        const char *groups[2][2] = { { v2, "" }, { v1, "" } };
        char a[700], b[700], c[700];
        uint64_t room = UINT64_MAX;
        for (int k = 0; k < 2; k++) {
                for (int i = 0; i < 2; i++) {
                        snprintf(a, sizeof a, ver[k].fmt_limit, groups[k][i]);
                        snprintf(b, sizeof b, ver[k].fmt_usage, groups[k][i]);
                        snprintf(c, sizeof c, ver[k].fmt_stat, groups[k][i]);
                        if (access(a, R_OK) == 0) {
                                uint64_t r = cgroup_room(a, b, c, ver[k].inactive);
                                room = r < room ? r : room;
                                break;
                        }
                }
        }
        return room;
}

void hw_host_avail_bytes(uint64_t *rss_bytes, uint64_t *vm_bytes)
{
        uint64_t mem = read_keyed("/proc/meminfo", "MemAvailable", 1024);
        if (mem == UINT64_MAX) {
                struct sysinfo si;
                if (sysinfo(&si) == 0)
                        mem = ((uint64_t)si.freeram + si.bufferram) * si.mem_unit;
        }
        uint64_t cg = cgroup_avail();
        *rss_bytes = cg < mem ? cg : mem;
        *vm_bytes = UINT64_MAX;
        struct rlimit rl;
        if (getrlimit(RLIMIT_AS, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY) {
                uint64_t used = read_keyed("/proc/self/status", "VmSize", 1024);
                if (used == UINT64_MAX)
                        used = 0;
                *vm_bytes = rl.rlim_cur > used ? rl.rlim_cur - used : 0;
        }
}

/* "1.5 GiB" */
static const char *human(uint64_t bytes, char *buf, size_t len)
{
        static const char *const units[] = { "bytes", "KiB", "MiB", "GiB", "TiB", "PiB" };
        double v = (double)bytes;
        int u = 0;
        while (v >= 1024 && u < 5) {
                v /= 1024;
                u++;
        }
        if (u == 0)
                snprintf(buf, len, "%" PRIu64 " bytes", bytes);
        else
                snprintf(buf, len, "%.1f %s", v, units[u]);
        return buf;
}

uint64_t hw_host_max_mappings(void)
{
        /* A test hook: the default limit, whatever this host's is. */
        const char *t = getenv("CUBESIM_TEST_MAX_MAP_COUNT");
        if (t && *t)
                return strtoull(t, NULL, 10);
        uint64_t v = read_number("/proc/sys/vm/max_map_count");
        return v == 0 ? UINT64_MAX : v;
}

int hw_host_check_mappings(uint64_t n_procs, const char *what, const char *fewer,
                           struct diag *d)
{
        uint64_t need = coro_mappings((size_t)n_procs) + HW_BASE_MAPPINGS;
        uint64_t have = hw_host_max_mappings();
        if (need <= have)
                return 0;
        bool regions = coro_guard_regions();
        diag_error(d, "%s need about %" PRIu64 " memory mappings (%s, and the program's own) "
                   "and this host allows a process %" PRIu64 " (vm.max_map_count); raise it "
                   "with 'sysctl -w vm.max_map_count=%" PRIu64 "' (as root), or %s", what, need,
                   regions ? "one per 64 coroutine stacks"
                           : "two per coroutine stack: this Linux has no guard regions, "
                             "MADV_GUARD_INSTALL of Linux 6.13",
                   have, (need + 65535) / 65536 * 65536, fewer);
        return -E2BIG;
}

int hw_sim_check_capacity(const struct topo *t, struct diag *d)
{
        uint64_t need_rss, need_vm, have_rss, have_vm;
        hw_sim_host_bytes(t, &need_rss, &need_vm);
        hw_host_avail_bytes(&have_rss, &have_vm);
        bool rss = need_rss > have_rss, vm = need_vm > have_vm;
        uint64_t pes = sat_mul_u64(sat_mul_u64(t->system.sips, t->sip.cubes),
                                   sat_mul_u64(t->cube.noc.rows, t->cube.noc.cols));
        char what[512];
        snprintf(what, sizeof what, "machine '%s' is too large for this host: its %" PRIu64
                 " PEs (system.sips %u x sip.cubes %u x cube.noc.rows %u x cube.noc.cols %u)",
                 t->name, pes, t->system.sips, t->sip.cubes, t->cube.noc.rows, t->cube.noc.cols);
        if (!rss && !vm)
                return hw_host_check_mappings(pes, what, "simulate fewer PEs", d);
        char n[32], h[32];
        diag_error(d, "%s need about %s of %s, and %s %s; simulate fewer PEs, or on a larger "
                   "host", what, human(rss ? need_rss : need_vm, n, sizeof n),
                   rss ? "host memory" : "address space",
                   human(rss ? have_rss : have_vm, h, sizeof h),
                   rss ? "is available" : "is left under ulimit -v");
        return -E2BIG;
}
