/* topo/topo.h: the machine. A YAML topology file -> a validated set of
 * parameters (struct topo) -> a graph of component nodes and directed edges
 * (struct topo_graph) with routes and path latencies.
 *
 * Units: every parameter is stored resolved to integers in the simulator's
 * units: time in picoseconds (sim_ps), bandwidth in bytes per second, sizes
 * in bytes, clocks in hertz. The YAML file states them in the units named by
 * its keys (latency_ns, bw_gbps = 10^9 bytes/s, size_kib, size_gib,
 * clock_mhz); the loader converts (ns and GB/s are rounded to the nearest
 * picosecond and byte/s).
 *
 * Files: the built-in default machine (topologies/default.yaml, compiled
 * into the binary) is the base; a file states only what differs from it
 * (or says `base: none` and states everything). Every problem in a file is
 * reported at once, located FILE:LINE:COL (docs/adr/0002).
 *
 * The graph's node and edge numbering is deterministic (see topo_graph);
 * routes are dimension-ordered inside a cube's NoC (a mesh, a torus, or two
 * unidirectional tori running in opposite directions; see topo_route) and
 * shortest-latency elsewhere, computed on demand and cached. */
#ifndef CUBESIM_TOPO_TOPO_H
#define CUBESIM_TOPO_TOPO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <cubesim/tl.h>

#include "base/diag.h"

#ifndef CUBESIM_SIM_PS_DEFINED
#define CUBESIM_SIM_PS_DEFINED
typedef uint64_t sim_ps;        /* simulated time or duration, picoseconds */
#endif

/* ---- limits (bad input beyond them is an error, never an OOM or hang) ---- */

#define TOPO_MAX_FILE_BYTES (16u << 20)      /* a topology file */
#define TOPO_MAX_DEPTH 32                    /* YAML nesting */
#define TOPO_MAX_YAML_NODES 100000           /* scalars + maps + lists in one file */
#define TOPO_MAX_PES (1u << 20)              /* PEs in the whole machine */
#define TOPO_MAX_GRAPH_BYTES (1ull << 30)    /* estimated memory of a topo_graph */
#define TOPO_NAME_MAX 64                     /* machine name, with the NUL */
#define TOPO_MAX_ATTACH 64                   /* entries of cube.hbm.attach */

/* ---- op types of the issue-cost and cycles-per-element tables ---- */

/* Rows X(ID, name, KEY, form), as in TL_OPS (include/cubesim/tl.h): ID
 * makes TOPO_OP_ID and name is the table key.
 * Control ops of the kernel language: each costs PE_CPU issue time. */
#define TOPO_CTRL_OPS(X)                                                        \
        X(COMPOSITE, composite, COMPOSITE, CTRL) X(LOAD, load, LOAD, CTRL)     \
        X(STORE, store, STORE, CTRL) X(DOT, dot, DOT, CTRL)                    \
        X(SEND, send, SEND, CTRL) X(RECV, recv, RECV, CTRL)                    \
        X(COPY_TO, copy_to, COPY_TO, CTRL) X(WAIT, wait, WAIT, CTRL)           \
        X(SCRATCH_SCOPE, scratch_scope, SCRATCH_SCOPE, CTRL)                   \
        X(PROGRAM_ID, program_id, PROGRAM_ID, CTRL)

/* PE_MATH ops: issue cost on PE_CPU and cycles per element on PE_MATH.
 * They are the kernel language's ops priced by their own entries (the OP
 * rows of TL_OPS); its ALIAS rows are priced by another op's. */
#define TOPO__NO_KEY(id, name, key, form)
#define TOPO_MATH_OPS(X) TL_OPS(X, TOPO__NO_KEY)

#define TOPO__OP_ENUM(id, name, key, form) TOPO_OP_##id,
enum topo_op {
        TOPO_CTRL_OPS(TOPO__OP_ENUM)
        TOPO_MATH_OPS(TOPO__OP_ENUM)
        TOPO_OP_COUNT
};
#undef TOPO__OP_ENUM
#define TOPO_OP_MATH_FIRST TOPO_OP_EXP

/* The op's table key ("copy_to", "rowmax"); NULL if out of range. */
const char *topo_op_name(enum topo_op);
/* The op named name, or -1. */
int topo_op_from_name(const char *name);
static inline bool topo_op_is_math(enum topo_op op)
{
        return op >= TOPO_OP_MATH_FIRST && op < TOPO_OP_COUNT;
}

/* An issue-cost entry that is absent from the table (`load: ~` in YAML):
 * the op falls back to dispatch_cycles at the CPU clock. */
#define TOPO_COST_NONE UINT64_MAX

/* A GEMM's operand class for its energy per MAC (docs/adr/0024): the
 * wider of its two operands' dtypes. 0 is bf16, the class of
 * pe.gemm.energy.pj_per_mac, so a record that states none is priced as
 * before the classes. */
enum topo_mac_dt {
        TOPO_MAC_BF16,               /* bf16 or fp16: pj_per_mac */
        TOPO_MAC_FP32,               /* fp32: pj_per_mac_fp32 */
        TOPO_MAC_BFP8,               /* bfp8_b: pj_per_mac_bfp8 */
        TOPO_MAC_BFP4,               /* bfp4_b: pj_per_mac_bfp4 */
        TOPO_MAC_COUNT
};

/* A per-class MAC energy the file does not state (absent or `~`): derived
 * from pj_per_mac by the class's ratio (topo_gemm_mac_fj). */
#define TOPO_FJ_DERIVED UINT64_MAX

/* ---- resolved parameters ---- */

/* A link (one direction of it when instantiated both ways). */
struct topo_link {
        sim_ps latency_ps;           /* time of flight, picoseconds */
        uint64_t bw_bytes_per_s;     /* bandwidth, bytes per second */
};

/* A component's energy (docs/adr/0024): its dynamic energy per unit of
 * work (the unit is in the key's name: per MAC, per element-cycle, per
 * byte, per byte-hop, per issued op) and its static power, idle and while
 * busy. All 0 (the optional keys absent): the component costs nothing. */
struct topo_energy {
        uint64_t dyn_fj;             /* dynamic energy per unit of work, femtojoules */
        uint64_t idle_mw;            /* static power while idle, per unit, milliwatts */
        uint64_t active_mw;          /* static power while busy, per unit, milliwatts */
};

/* How a set of peers (SIPs of the system, cubes of a SIP) is linked. */
enum topo_net {
        TOPO_NET_RING,               /* i <-> i+1 mod n (one pair when n == 2) */
        TOPO_NET_FULL,               /* every pair */
        TOPO_NET_LINE,               /* i <-> i+1 (no wrap-around) */
        TOPO_NET_MESH,               /* a 2D grid, rows of system.inter_sip.mesh_cols peers
                                      * (the last may be short); each joined to its east
                                      * and south neighbours (SIPs only) */
};

struct topo_pe_cpu {
        uint64_t clock_hz;           /* PE_CPU clock, hertz */
        uint32_t dispatch_cycles;    /* issue cost of an op missing from the table, cycles */
        sim_ps node_overhead_ps;     /* per message handled, picoseconds */
        sim_ps program_ps;           /* a device program's fixed launch and end on each PE,
                                      * counted in kernel time, picoseconds */
        uint32_t cores;              /* issuing cores per PE, each with its own issue time for
                                      * the kernel threads it runs (0: 1) */
        sim_ps issue_cost_ps[TOPO_OP_COUNT]; /* per op type, ps; TOPO_COST_NONE = absent */
        struct topo_energy energy;   /* per issued op; static per PE */
};

struct topo_pe_dma {
        uint32_t channels;           /* transfers in flight at once, sharing bw */
        uint64_t bw_bytes_per_s;     /* engine total, bytes per second */
        sim_ps setup_ps;             /* fixed cost per descriptor, picoseconds */
        sim_ps node_overhead_ps;     /* per message handled, picoseconds */
        uint32_t thread_nocs;        /* of the channels, those one issuing core's transfers
                                      * use: they move at bw x thread_nocs / channels
                                      * (0: all, at bw) */
        uint32_t duplex;             /* 1: a data path per direction (bytes in, bytes out);
                                      * 0: one carries both */
        sim_ps request_ps;           /* per NoC packet a transfer issues: the data path's
                                      * time for the request beside its bytes */
        sim_ps mcast_dest_ps;        /* a multicast's sender, per packet and destination */
        sim_ps mcast_linked_dest_ps; /* the same for a linked multicast */
        struct topo_energy energy;   /* static per PE (its bytes are paid by TCM and NoC) */
};

/* The matrix engine. Each cycle it multiplies an [array_m, array_k] block
 * of A by an [array_k, array_n] block of B (normally macs_per_cycle =
 * array_m * array_k * array_n); an op's M, K and N are first rounded up to
 * whole operand tiles (if any), then to whole blocks. */
struct topo_pe_gemm {
        uint32_t macs_per_cycle;     /* multiply-accumulates per cycle */
        uint64_t clock_hz;           /* engine clock, hertz */
        sim_ps node_overhead_ps;     /* per message handled, picoseconds */
        uint32_t array_m;            /* rows of A per cycle, elements */
        uint32_t array_k;            /* the reduction depth per cycle, elements */
        uint32_t array_n;            /* columns of B per cycle, elements */
        uint32_t operand_tile;       /* operands come in square tiles of this edge, elements; 0: none */
        uint32_t fill_cycles;        /* pipeline fill before the first result, cycles per op */
        uint32_t drain_cycles;       /* pipeline drain after the last block, cycles per op */
        uint32_t fidelity_passes;    /* passes per op: LoFi 1, HiFi2 2, HiFi3 3, HiFi4 4 */
        uint32_t operand_bytes_per_cycle; /* the rate its operands come from TCM into the engine
                                      * (Tensix's unpackers), bytes per engine cycle; 0: not
                                      * limited beyond the TCM's bandwidth */
        uint32_t unpack_setup_cycles; /* with operand_tile: cycles each operand tile's unpack
                                      * spends on its address before its bytes flow (Tensix's
                                      * UNPACR); 0: none */
        uint32_t unpack_shared_bytes_per_cycle; /* with operand_tile: each of the two unpackers'
                                      * rate while both unpack at once, bytes per cycle; > 0: a
                                      * subblock of at least 2 x 2 tiles holds both banks of one
                                      * source for its K step (Tensix's matmul), and the FPU
                                      * waits for a tile refilled at this rate at each K step;
                                      * 0: no such wait */
        uint32_t math_issue_cycles;  /* with operand_tile: cycles each instruction the math
                                      * thread issues between tile products takes from the
                                      * FPU (Tensix: the Dst address, the fidelity reset and
                                      * the source bank moves of tt-metal's matmul, one cycle
                                      * each); 0: none */
        uint32_t src_handover_cycles; /* with operand_tile and operand_bytes_per_cycle: cycles
                                      * from a source bank's release by the engine until its
                                      * refill's last datum is the engine's again, beyond the
                                      * refill's address and byte cycles (Tensix: an UNPACR
                                      * waits at its Wait Gate until the FPU gives its SrcA or
                                      * SrcB bank back, and hands it over at its end); 0: none */
        struct topo_energy energy;   /* per MAC per fidelity pass (bf16 and fp16 operands);
                                      * static per PE */
        uint64_t mac_fj[TOPO_MAC_COUNT]; /* per MAC per fidelity pass of each operand class,
                                      * femtojoules, or TOPO_FJ_DERIVED; [TOPO_MAC_BF16]
                                      * unused (energy.dyn_fj) */
};

struct topo_pe_math {
        uint32_t lanes;              /* elements per cycle at 1 cycle/element */
        uint64_t clock_hz;           /* engine clock, hertz */
        sim_ps node_overhead_ps;     /* per message handled, picoseconds */
        uint32_t cycles_per_element[TOPO_OP_COUNT]; /* per lane, cycles; math ops only (others 0) */
        uint32_t latency_cycles[TOPO_OP_COUNT]; /* pipeline latency per op, cycles; math ops only */
        struct topo_energy energy;   /* per element-cycle (elements x cycles_per_element);
                                      * static per PE */
};

struct topo_tcm {
        uint64_t size_bytes;         /* capacity, bytes */
        uint64_t scratch_ceiling_bytes; /* scratch arena ceiling inside it, bytes */
        uint64_t bw_bytes_per_s;     /* all banks together, bytes per second */
        sim_ps node_overhead_ps;     /* per message handled, picoseconds */
        uint32_t banks;              /* independent banks, each bw / banks */
        uint32_t line_bytes;         /* interleave: consecutive lines go to consecutive banks */
        struct topo_energy energy;   /* per byte read or written; static per PE */
};

/* The intra-PE links and the PE's NoC port. A link named a_b is the edge
 * a -> b; cpu_dma, dma_tcm and dma_noc are instantiated both ways. */
struct topo_pe_links {
        struct topo_link cpu_dma;    /* PE_CPU <-> PE_DMA: commands, completions */
        struct topo_link cpu_gemm;   /* PE_CPU -> PE_GEMM: commands */
        struct topo_link cpu_math;   /* PE_CPU -> PE_MATH: commands */
        struct topo_link dma_tcm;    /* PE_DMA <-> TCM: data */
        struct topo_link dma_gemm;   /* PE_DMA -> PE_GEMM: tile tokens */
        struct topo_link gemm_math;  /* PE_GEMM -> PE_MATH: accumulator tiles */
        struct topo_link math_math;  /* PE_MATH -> PE_MATH: chained stages, local loop */
        struct topo_link math_dma;   /* PE_MATH -> PE_DMA: results to store */
        struct topo_link dma_noc;    /* PE_DMA <-> its mesh router: the NoC port */
};

struct topo_pe {
        struct topo_pe_cpu cpu;      /* control CPU, runs the kernel */
        struct topo_pe_dma dma;      /* HBM<->TCM moves, IPCQ send/recv */
        struct topo_pe_gemm gemm;    /* matrix engine */
        struct topo_pe_math math;    /* vector engine */
        struct topo_tcm tcm;         /* local SRAM */
        struct topo_pe_links links;  /* intra-PE edges and the NoC port */
};

/* A router position in a cube's NoC. */
struct topo_coord {
        uint16_t row;                /* Y, 0 = north edge */
        uint16_t col;                /* X, 0 = west edge */
};

/* A list of router positions. */
struct topo_coords {
        uint32_t n;                  /* entries used */
        struct topo_coord at[TOPO_MAX_ATTACH]; /* the positions */
};

struct topo_hbm {
        uint32_t channels;           /* independent channels, each a graph node */
        uint64_t channel_bw_bytes_per_s; /* per channel, bytes per second */
        sim_ps latency_ps;           /* access latency, on the channel's attach edges */
        uint64_t size_bytes;         /* capacity of the cube's HBM, bytes */
        sim_ps node_overhead_ps;     /* per request at a channel, picoseconds */
        uint64_t page_bytes;         /* interleaved tensors: pages go round the cubes, bytes */
        struct topo_coords attach;   /* channel ch sits at attach.at[ch % attach.n]; none:
                                      * the west/east edge placement */
        uint32_t near_efficiency_pct; /* a channel serves the PE at its attach point at this
                                      * % of channel bw (0: 100) */
        uint32_t far_efficiency_pct; /* and every other requester at this % (0: 100) */
        struct topo_energy energy;   /* per byte read or written; idle power per cube */
};

/* The shape of a cube's NoC. Every shape has one router per PE. */
enum topo_noc_shape {
        TOPO_NOC_MESH,               /* links between neighbours; XY routes */
        TOPO_NOC_TORUS,              /* plus wrap-around links; each axis the shorter way */
        TOPO_NOC_DUAL_TORUS,         /* two unidirectional tori: NoC 0 east+south (X then
                                      * Y), NoC 1 west+north (Y then X); the shorter wins */
};

struct topo_noc {
        uint32_t rows;               /* mesh rows (Y); PE p sits at row p / cols */
        uint32_t cols;               /* mesh columns (X); PE p sits at col p % cols */
        enum topo_noc_shape shape;   /* mesh, torus or dual torus */
        sim_ps hop_latency_ps;       /* router-to-router link, picoseconds */
        uint64_t link_bw_bytes_per_s; /* each direction of a mesh link, bytes/s */
        sim_ps router_node_overhead_ps; /* per flit/message at a router, picoseconds */
        uint32_t packet_bytes;       /* largest packet payload, bytes */
        uint32_t header_bytes;       /* header each packet adds on a link, bytes */
        uint32_t atomic_vc;          /* 1: a NoC atomic (tl_sem_inc, one flit) passes each link
                                      * on a virtual channel of its own, at the link's latency
                                      * and one flit, not behind the transfers booked on it;
                                      * 0: it is booked as a transfer of its bytes */
        struct topo_energy energy;   /* per byte-hop (a byte over one NoC link); idle
                                      * power per cube */
};

struct topo_cube {
        sim_ps m_cpu_node_overhead_ps; /* cube manager CPU, per message, ps */
        uint32_t compute_cols;       /* columns of the kernels' default compute grid; 0: all */
        uint32_t compute_rows;       /* rows of it (from row 0, col 0); 0: all */
        struct topo_hbm hbm;         /* the cube's memory */
        struct topo_noc noc;         /* the cube's mesh */
};

struct topo_sip {
        uint32_t cubes;              /* cubes per SIP */
        sim_ps io_cpu_node_overhead_ps; /* host interface CPU, per message, ps */
        struct topo_link host_link;  /* IO_CPU <-> each M_CPU of the SIP */
        enum topo_net cube_net;      /* how the cubes of a SIP are linked */
        struct topo_link inter_cube; /* between gateway routers of two cubes */
        struct topo_energy inter_cube_energy; /* per byte over an inter-cube link */
        uint64_t tdp_mw;             /* power limit of one SIP (chip), milliwatts; 0: none */
};

struct topo_system {
        uint32_t sips;               /* SIPs in the system */
        enum topo_net sip_net;       /* how the SIPs are linked */
        struct topo_link inter_sip;  /* one link, each direction: latency per hop and
                                      * bandwidth per link and direction */
        struct topo_energy inter_sip_energy; /* per byte over an inter-SIP link */
        uint32_t mesh_cols;          /* sip_net mesh: SIPs per mesh row (0: unused) */
        uint32_t inter_sip_links;    /* parallel links per neighbouring pair (0: 1) */
        sim_ps launch_skew_ps;       /* the host's launch reaches SIP s this much x s /
                                      * (sips - 1) after SIP 0 (it launches the chips in
                                      * turn); 0 (no key): every SIP at once */
        sim_ps inter_sip_message_ps; /* each message's cost on an inter-SIP link (the
                                      * Ethernet core's handling), on top of its bytes */
        uint32_t inter_sip_message_overlap; /* 1: the link's Ethernet core handles a message
                                      * while the wire carries the one before (a line
                                      * fabric's router, slots in flight); 0: the handling
                                      * holds the wire (a ring fabric's per-packet flow
                                      * control), as on a machine without the key */
        sim_ps inter_sip_core_ps;    /* each fabric packet's handling by the link's Ethernet
                                      * cores, each of which serves both directions of its
                                      * link (0, no key: no such limit) */
        sim_ps inter_sip_core_horizon_ps; /* the span over which a direction's load at them
                                      * is averaged (0, no key: 10 us) */
        uint32_t inter_sip_slots;    /* the packets a sender may have ahead of the wire (the
                                      * router's buffer slots): a message of several packets
                                      * over the link waits for the sender's last one's
                                      * packets to be within them (0, no key: never) */
        uint32_t inter_sip_packet_bytes; /* the fabric's payload a packet (0: no framing):
                                      * a message is cut into packets of at most this */
        uint32_t inter_sip_header_bytes; /* the fabric's header a packet */
        uint32_t inter_sip_frame_bytes; /* the largest Ethernet frame: a packet and its
                                      * header are cut into frames of at most this
                                      * (0: one frame a packet) */
        uint32_t inter_sip_frame_overhead_bytes; /* each frame's headers, FEC and CRC */
        struct topo_coords inter_sip_ports; /* the routers of cube 0 where the links attach
                                      * (Ethernet cores): a SIP's k-th link uses
                                      * ports[k % n]; none: every link at the gateway,
                                      * the pair's links one edge of links x bw */
        uint64_t tdp_mw;             /* power limit of the whole system, milliwatts; 0: none */
};

/* A whole machine. Plain data: copy it freely; topo_fini is for symmetry. */
struct topo {
        char name[TOPO_NAME_MAX];    /* the file's `name:` */
        struct topo_system system;   /* system-level counts and links */
        struct topo_sip sip;         /* every SIP is alike */
        struct topo_cube cube;       /* every cube is alike */
        struct topo_pe pe;           /* every PE is alike */
};

/* Whole-machine figures. */
struct topo_totals {
        uint64_t sips;               /* SIPs */
        uint64_t cubes;              /* cubes, all SIPs */
        uint64_t pes;                /* PEs, all cubes */
        uint64_t peak_gemm_flops_per_s; /* 2 * macs_per_cycle * gemm clock * pes */
        uint64_t hbm_bw_bytes_per_s; /* channels * channel bw, summed over all HBMs */
        uint64_t tcm_bytes;          /* TCM capacity summed over all PEs */
};

/* Load the built-in default machine. */
int topo_load_default(struct topo *out, struct diag *d);
/* Load a topology file: the default, overridden by what the file states
 * (or only the file, if it says `base: none`). Every problem goes to d,
 * located FILE:LINE:COL; returns 0, or -EINVAL if any (then *out is
 * unspecified but safe to fini). */
int topo_load_file(const char *path, struct topo *out, struct diag *d);
/* Same, from text in memory; name labels the messages. */
int topo_load_text(const char *name, const char *text, size_t len, struct topo *out,
                   struct diag *d);
/* Override one parameter: key is the YAML path joined by dots
 * ("pe.dma.bw_gbps"), value a YAML scalar in the key's unit ("128";
 * "~" removes an issue-cost entry). Checks the key, the value and the
 * machine-wide limits; on error t is unchanged and -EINVAL returned. */
int topo_set(struct topo *t, const char *key, const char *value, struct diag *d);
/* Same for "key=value". */
int topo_set_kv(struct topo *t, const char *kv, struct diag *d);
void topo_fini(struct topo *t);

/* Figures of a valid machine. */
void topo_totals(const struct topo *t, struct topo_totals *out);
/* Issue cost of op on this PE_CPU: its table entry, or dispatch_cycles at
 * the CPU clock when the entry is absent (rounded up to whole ps). */
sim_ps topo_issue_cost_ps(const struct topo_pe_cpu *cpu, enum topo_op op);
/* Duration of n cycles at clock_hz, rounded up to whole ps (saturates). */
sim_ps topo_cycles_to_ps(uint64_t cycles, uint64_t clock_hz);

/* The operand class of a GEMM of a by b: the wider dtype's. */
enum topo_mac_dt topo_mac_dt_of(tl_dtype a, tl_dtype b);
/* Its name: "bf16" (with fp16), "fp32", "bfp8_b", "bfp4_b". */
const char *topo_mac_dt_name(enum topo_mac_dt c);
/* Energy per MAC per fidelity pass of class c, femtojoules: the file's
 * value, or energy.dyn_fj scaled by the class's multiplier against bf16's
 * (Horowitz's 45 nm figures, docs/energy-sources.md) when it states none. */
double topo_gemm_mac_fj(const struct topo_pe_gemm *g, enum topo_mac_dt c);

/* The built-in default topology, the text of topologies/default.yaml. */
const char *topo_default_yaml(size_t *len);

/* ---- the component graph ---- */

enum topo_node_kind {
        TOPO_NODE_IO_CPU,            /* one per SIP */
        TOPO_NODE_M_CPU,             /* one per cube */
        TOPO_NODE_HBM_CHANNEL,       /* cube.hbm.channels per cube */
        TOPO_NODE_ROUTER,            /* rows * cols per cube, one per PE */
        TOPO_NODE_PE_CPU,            /* the five components of a PE */
        TOPO_NODE_PE_DMA,
        TOPO_NODE_PE_GEMM,
        TOPO_NODE_PE_MATH,
        TOPO_NODE_TCM,
        TOPO_NODE_KIND_COUNT
};

enum topo_edge_class {
        TOPO_EDGE_INTRA_PE,          /* between components of one PE */
        TOPO_EDGE_NOC,               /* router-router, PE port, M_CPU-router */
        TOPO_EDGE_HBM,               /* HBM channel <-> its router */
        TOPO_EDGE_INTER_CUBE,        /* between cubes of one SIP */
        TOPO_EDGE_INTER_SIP,         /* between SIPs */
        TOPO_EDGE_HOST,              /* IO_CPU <-> M_CPU */
        TOPO_EDGE_CLASS_COUNT
};

#define TOPO_NONE UINT32_MAX         /* no node / no edge / not applicable */
#define TOPO_PS_NONE UINT64_MAX      /* no latency (bad node, no route) */

struct topo_node {
        uint8_t kind;                /* enum topo_node_kind */
        uint32_t sip;                /* SIP index */
        uint32_t cube;               /* cube within the SIP; TOPO_NONE for io_cpu */
        uint32_t index;              /* PE / router (row-major) / channel index; else TOPO_NONE */
        sim_ps node_overhead_ps;     /* paid by a message arriving here, picoseconds */
};

struct topo_edge {
        uint32_t src;                /* node index */
        uint32_t dst;                /* node index */
        uint8_t cls;                 /* enum topo_edge_class */
        sim_ps latency_ps;           /* time of flight, picoseconds */
        uint64_t bw_bytes_per_s;     /* bandwidth, bytes per second */
};

struct topo_route_cache;

/* Node numbering (deterministic): for each SIP s: its io_cpu; then for
 * each cube c: m_cpu, hbm channels 0..H-1, routers 0..R-1, then per PE p
 * (R = rows*cols PEs, row-major) cpu, dma, gemm, math, tcm. Edges are
 * numbered in build order (docs/adr/0002); out-edges of a node are listed
 * in CSR form. Not thread-safe: routing fills a cache (one graph per
 * simulation). */
struct topo_graph {
        struct topo topo;            /* copy of the machine it was built from */
        struct topo_totals totals;   /* whole-machine figures */
        uint32_t n_nodes;            /* entries of nodes */
        uint32_t n_edges;            /* entries of edges */
        struct topo_node *nodes;     /* all nodes, numbered as above */
        struct topo_edge *edges;     /* all edges, in build order */
        uint32_t *out_first;         /* n_nodes + 1: out-edges of i are out_edge[out_first[i]..out_first[i+1]) */
        uint32_t *out_edge;          /* n_edges: edge indices grouped by src, ascending */
        uint32_t *mesh_out;          /* 4 per router (E, W, S, N): edge index or TOPO_NONE */
        uint32_t *portal_first;      /* per cube (sip-major) + 1: its portal routers in portals[] */
        uint32_t *portals;           /* routers with links leaving the mesh (M_CPU, inter-cube, inter-SIP) */
        uint32_t nodes_per_sip;      /* layout: 1 + cubes * nodes_per_cube */
        uint32_t nodes_per_cube;     /* layout: 1 + channels + 6 * rows * cols */
        struct topo_route_cache *cache; /* routes computed so far; owned */
};

/* Nodes and edges the graph of t would have, and its estimated bytes. */
void topo_graph_size(const struct topo *t, uint64_t *n_nodes, uint64_t *n_edges,
                     uint64_t *bytes);
int topo_build_graph(const struct topo *t, struct topo_graph *out, struct diag *d);
void topo_graph_fini(struct topo_graph *g);

/* The node of kind at (sip, cube, idx): idx is the PE index for PE kinds,
 * the router index for routers, the channel for HBM channels, ignored for
 * io_cpu and m_cpu (cube ignored for io_cpu). TOPO_NONE if out of range. */
uint32_t topo_node_index(const struct topo_graph *g, enum topo_node_kind kind, uint32_t sip,
                         uint32_t cube, uint32_t idx);
/* The router a PE's components, an HBM channel or a router attach to;
 * TOPO_NONE for io_cpu and m_cpu. */
uint32_t topo_node_router(const struct topo_graph *g, uint32_t node);
/* The mesh router at (row, col) of a cube; TOPO_NONE if out of range. */
uint32_t topo_router_at(const struct topo_graph *g, uint32_t sip, uint32_t cube, uint32_t row,
                        uint32_t col);
/* The gateway router of a cube: where its M_CPU and its inter-cube and
 * inter-SIP links attach (router 0, row 0 col 0). */
uint32_t topo_cube_gateway(const struct topo_graph *g, uint32_t sip, uint32_t cube);
/* The router HBM channel ch of any cube attaches to, as a router index:
 * cube.hbm.attach[ch % count] when the file lists positions; else even
 * channels on the west edge (col 0), odd on the east edge (col cols-1),
 * row (ch / 2) % rows. */
uint32_t topo_hbm_channel_router_index(const struct topo *t, uint32_t ch);
/* The edge src -> dst, or TOPO_NONE. */
uint32_t topo_edge_between(const struct topo_graph *g, uint32_t src, uint32_t dst);
/* "sip0.cube1.pe5.dma", "sip0.cube1.router5", "sip0.cube1.hbm.ch3",
 * "sip0.cube1.m_cpu", "sip0.io_cpu". Returns snprintf's result. */
int topo_node_name(const struct topo_graph *g, uint32_t node, char *buf, size_t len);
/* The node with that name, or TOPO_NONE. */
uint32_t topo_node_by_name(const struct topo_graph *g, const char *name);
const char *topo_node_kind_name(enum topo_node_kind);
const char *topo_edge_class_name(enum topo_edge_class);

/* The route src -> dst as edge indices in order (empty if src == dst):
 * dimension-ordered inside a cube's NoC (see enum topo_noc_shape), shortest total latency
 * elsewhere; ties go to fewer hops, then to lower edge indices. *edges
 * stays valid until topo_graph_fini. Returns 0, -EINVAL for a bad node,
 * -ENOENT if dst is unreachable, -ENOMEM. */
int topo_route(struct topo_graph *g, uint32_t src, uint32_t dst, const uint32_t **edges,
               uint32_t *n_edges);
/* Sum of the latencies of the route's edges plus the node overhead of
 * every node the route enters (its intermediate nodes and dst, not src);
 * 0 if src == dst; TOPO_PS_NONE on error. */
sim_ps topo_path_latency(struct topo_graph *g, uint32_t src, uint32_t dst);

/* Path latencies from src to each of dsts[0..n) in one search (the launch
 * barrier: the largest latency from an IO_CPU to its PEs), equal to
 * topo_path_latency for each; out[i] = TOPO_PS_NONE if unreachable. Does
 * not fill the route cache. Returns 0, -EINVAL for a bad node, -ENOMEM. */
int topo_path_latencies(struct topo_graph *g, uint32_t src, const uint32_t *dsts, size_t n,
                        sim_ps *out);

/* ---- output ---- */

/* The machine, nodes, edges and totals as one JSON document (stable key
 * order, integers; one node or edge per line). */
int topo_graph_write_json(const struct topo_graph *g, FILE *out);
/* The graph for graphviz: one cluster per cube and per PE. */
int topo_graph_write_dot(const struct topo_graph *g, FILE *out);
/* The parameters in the file's units, the graph's counts and the totals. */
int topo_graph_write_text(const struct topo_graph *g, FILE *out);

#endif
