/* hw/hw.h: the simulated machine's hardware: links, HBM channels, PE
 * engines, and the launch path IO_CPU -> M_CPU -> PE_CPU.
 *
 * Every component that serialises work is an ev_resource served at
 * arrival time (docs/adr/0010: interval reservations with gap filling;
 * analytic: a request placed at time t learns its finish time at once), so
 * moving bytes or running an engine costs no events of its own; the
 * requester schedules one completion. Costs, all rounded up to whole ps:
 *   - a transfer of N bytes over a route: for each link in order, the head
 *     takes the link's idle time from its arrival on (links are divisible:
 *     packets of different transfers interleave) for N' / link bw, where
 *     on NoC links (mesh, PE ports) N' adds a header of cube.noc.header_bytes
 *     per packet of at most cube.noc.packet_bytes; the head reaches the
 *     next node after the link latency plus that node's overhead; the last
 *     byte leaves a link no earlier than it reached it (cut-through), and
 *     arrives one link latency after it left the last link;
 *   - HBM: a request is cut into pieces (NoC packets; at most 4 per
 *     channel) interleaved over the cube's channels, issued at the
 *     requesting DMA's rate; each piece is served by its channel at
 *     channel bw (divisible), then carried over the NoC from the channel's
 *     router (writes: carried, then served). Which cubes' HBM it uses is
 *     the tensor's home (struct hw_hbm_span): a read of another cube's
 *     memory pays the route from that cube's channels, over the
 *     inter-cube links;
 *   - GEMM (sim.c): M, K and N rounded up to whole operand tiles, then to
 *     the array's per-cycle block [array_m, array_k] x [array_k, array_n];
 *     the array is busy ceil(passes * Mq * Nq * Kq / macs_per_cycle)
 *     cycles, and the result leaves fill + drain cycles after that work
 *     began (a lone op: fill + work + drain);
 *   - MATH (sim.c): busy ceil(elements / lanes) * cycles_per_element[op]
 *     cycles, plus ceil(log2(lanes)) * cycles_per_element[op] for the
 *     cross-lane tree of a reduction along the last axis (rowmax, rowsum,
 *     sum / amax / mean of rows, rmsnorm); the result leaves
 *     latency_cycles[op] later;
 *   - TCM (sim.c): every engine's operand reads and result writes stream
 *     through the PE's TCM, one access after another; an access of B
 *     bytes is striped line by line over the banks, so it moves at
 *     min(banks, ceil(B / line)) x bw / banks. An engine op lasts at least
 *     as long as its TCM traffic;
 *   - DMA: a descriptor issued by the PE_CPU (load, store, copy, send) takes
 *     one of pe.dma.channels descriptor slots for its setup plus its data
 *     at the engine's full rate; its data moves through the engine's data
 *     path (bw, shared by every descriptor in flight and divisible) once
 *     its setup is done, so one descriptor's setup overlaps the others'
 *     data. A receive drain takes no slot and pays no setup (the engine's
 *     receive side writes what the NoC delivers), only the data path.
 *
 * A launch: the IO_CPU of every SIP gets the kernel at the same time and
 * stamps target_start = now + the largest path latency from an IO_CPU to
 * any PE_CPU; messages go IO_CPU -> M_CPU -> PE_CPU; each PE_CPU waits
 * until target_start, records its exec start and runs the kernel body as a
 * process. Completions go back PE_CPU -> M_CPU -> IO_CPU. */
#ifndef CUBESIM_HW_HW_H
#define CUBESIM_HW_HW_H

#include <stdbool.h>
#include <stdint.h>

#include "base/diag.h"
#include "base/muldiv.h"
#include "engine/ev.h"
#include "topo/topo.h"
#include "hw/power.h"

struct hw_sim;
struct hw_pe;
struct hw_mcast_scratch;

/* A kernel body run as a PE's process, after the launch has reached it. */
typedef void (*hw_pe_body)(struct hw_pe *pe, void *arg);

/* Where the bytes of an HBM access live: the tensor's home (tl/setup.c)
 * seen through the accessed region. */
enum hw_home_kind {
        HW_HOME_LOCAL,               /* the accessing PE's cube (a replicated tensor) */
        HW_HOME_CUBES,               /* the cubes of part[], each with its share */
        HW_HOME_ALL,                 /* spread evenly over every cube */
};

#define HW_SPAN_MAX_PARTS 16

struct hw_hbm_span {
        uint8_t kind;                /* enum hw_home_kind */
        uint8_t n_parts;             /* HW_HOME_CUBES: entries of cube and share */
        uint32_t cube[HW_SPAN_MAX_PARTS]; /* global cube index (hw_sim.cubes) */
        uint64_t share[HW_SPAN_MAX_PARTS]; /* its part of the region, bytes */
        uint64_t total;              /* sum of share */
        uint32_t channel_plus1;      /* 0: interleaved over each cube's channels; else the
                                      * one channel + 1 that holds the bytes */
};

/* A DMA copy whose HBM side is placed at the end of its instant
 * (hw_dma_copy_later). */
struct hw_dma_req {
        struct hw_pe *pe;            /* the PE whose engine runs it */
        bool from_hbm;               /* reads its cube's HBM */
        bool to_hbm;                 /* writes its cube's HBM */
        const struct hw_hbm_span *from_home; /* from_hbm: where the bytes read are (the
                                      * requester's, kept until placed) */
        const struct hw_hbm_span *to_home; /* to_hbm: where the bytes written go (same) */
        uint64_t bytes;              /* size */
        unsigned noc;                /* the NoC it moves on (< hw_dma_nocs) */
        sim_ps at;                   /* issued at (now) */
        void (*done)(struct hw_dma_req *, sim_ps start, sim_ps end); /* placed */
        struct hw_dma_req *next;     /* in its cube's batch */
};

/* The passes of an inter-SIP edge that its reverse weighs at the link's
 * Ethernet cores (system.inter_sip.core_ns): enough to cover the horizon
 * with every worker's message queued. */
#define HW_ETH_RECENT 64
/* system.inter_sip.core_horizon_ns when the machine gives none, ps: about
 * two 64 KiB messages on a 12.5 GB/s link. */
#define HW_ETH_HORIZON_PS 10000000
struct hw_link {
        struct ev_resource res;      /* serialises transfers over this edge */
        struct muldiv_by drain;      /* its wire bytes to ps at its bandwidth */
        uint64_t last_bytes;         /* the bytes of its last pass (0: none) */
        sim_ps last_drain;           /* and their drain, ps (pieces repeat) */
        sim_ps hop_ps;               /* its latency plus its far node's overhead */
        sim_ps msg_ps;               /* each pass's fixed cost on it (inter-SIP: the
                                      * machine's message_ns), on top of its bytes */
        bool overlap;                /* msg_ps is its Ethernet core's (core), which takes a
                                      * pass while the wire carries the one before; else it
                                      * holds the wire (message_overlap) */
        struct ev_resource core;     /* overlap: the Ethernet core's handling of each pass */
        struct hw_eth_pass {
                sim_ps begin, end;   /* a pass's time on the wire */
                sim_ps work;         /* its packets' handling at the Ethernet cores */
                sim_ps drain;        /* and its wire time at the wire's pace */
        } *recent;                   /* an inter-SIP edge with a reverse on a machine with
                                      * system.inter_sip.core_ns: its last HW_ETH_RECENT
                                      * passes, a ring; else NULL */
        uint32_t recent_at;          /* the next of them to replace */
        uint32_t rev;                /* the reverse edge (recent set) */
        uint64_t last_packets;       /* the last pass's fabric packets (recent set) */
        uint32_t last_payload;       /* the fabric payload the last pass was cut at */
        enum topo_edge_class cls;    /* its edge's class */
        enum hw_pw_class pw;         /* its class in the power windows, or HW_PW_COUNT */
        uint32_t cube;               /* its cube there (hw_edge_cube) */
        uint64_t n_bytes;            /* stat: bytes carried */
};

struct hw_pe {
        struct hw_sim *sim;          /* the machine it belongs to */
        uint32_t sip;                /* SIP index */
        uint32_t cube;               /* cube within the SIP */
        uint32_t pe;                 /* PE within the cube (row-major in the mesh) */
        uint32_t global;             /* index in hw_sim.pes */
        uint32_t global_cube;        /* index of its cube in hw_sim.cubes */
        uint32_t node_cpu;           /* graph nodes of its components */
        uint32_t node_dma;
        uint32_t node_gemm;
        uint32_t node_math;
        uint32_t node_tcm;
        char name[48];               /* "sip0.cube1.pe5" */
        struct ev_resource dma;      /* DMA engine's data path (divisible, bw); NoC 0's where
                                      * each core issues on one of two NoCs (hw_dma_nocs) */
        struct ev_resource dma1;     /* NoC 1's data path then; unused otherwise */
        struct ev_resource dma_rx;   /* pe.dma.duplex: NoC 0's inbound data path (reads from HBM,
                                      * receive drains), dma carrying the outbound; unused else */
        struct ev_resource dma1_rx;  /* the same for NoC 1 */
        struct ev_resource dma_slots; /* its descriptor slots, one server per channel */
        struct ev_resource gemm;     /* matrix engine */
        struct ev_resource math;     /* vector engine */
        struct ev_resource tcm;      /* TCM: its banks' ports, serving one access at a time */
        uint64_t tcm_bytes;          /* stat: bytes read and written in TCM by its engines */
        struct ev_proc proc;         /* the kernel, once launched */
        struct ev_event launch_ev;   /* the launch message reaches the PE_CPU */
        sim_ps launch_lat_ps;        /* path latency M_CPU -> its PE_CPU */
        sim_ps done_lat_ps;          /* path latency PE_CPU -> its M_CPU */
        sim_ps exec_start_ps;        /* when the kernel started (target_start) */
        sim_ps exec_end_ps;          /* when the kernel returned */
        bool started;                /* the kernel has started */
        bool finished;               /* the kernel has returned */
        struct ev_event done_ev;     /* the body returned; then its notice reaches the M_CPU */
        void *user;                  /* the kernel layer's per-PE state */
        uint8_t dep_pace;            /* critical path: the class that paced its last HBM
                                      * transfer (hw_dep_class; 0: none yet) */
        uint64_t dep_pace_rate;      /* and that rate, bytes/s */
        uint64_t dep_pace_alt;       /* and the other class's */
};

/* A route of the graph (its edges live in the graph's route cache). */
struct hw_route {
        const uint32_t *edges;       /* edge indices, in order */
        uint32_t n;                  /* entries */
        bool known;                  /* looked up */
};

struct hw_cube {
        struct hw_sim *sim;          /* the machine */
        uint32_t sip;                /* SIP index */
        uint32_t cube;               /* cube within the SIP */
        uint32_t node_m_cpu;         /* graph node of its M_CPU */
        uint32_t first_channel_node; /* graph node of HBM channel 0 */
        struct ev_resource *channels; /* per HBM channel */
        struct ev_event launch_ev;   /* the launch reaches the M_CPU */
        sim_ps launch_lat_ps;        /* path latency IO_CPU -> M_CPU */
        sim_ps done_lat_ps;          /* path latency M_CPU -> IO_CPU */
        struct ev_event done_ev;     /* its completion notice reaches the IO_CPU */
        uint32_t n_done;             /* its PEs finished so far */
        uint32_t next_channel;       /* the HBM channel the next request starts on (rotates) */
        struct hw_route *routes;     /* [PE of the cube][channel][from, to the channel]: the
                                      * routes of its PEs' DMA nodes, allocated at first use */
        struct hw_dma_req *batch;    /* HBM copies issued at this instant, in order */
        struct hw_dma_req *batch_tail; /* last of them */
        struct ev_event batch_ev;    /* places the batch at the end of the instant */
        uint64_t hbm_read_bytes;     /* stat */
        uint64_t hbm_write_bytes;    /* stat */
};

struct hw_sip {
        struct hw_sim *sim;          /* the machine */
        uint32_t sip;                /* index */
        uint32_t node_io_cpu;        /* graph node of its IO_CPU */
        struct ev_event launch_ev;   /* the host hands it the kernel */
        uint32_t n_done;             /* its cubes finished so far */
};

/* The resource classes an op's time is split into for the critical path
 * (report/critpath.h, docs/adr/0028): the engines and the HBM channels
 * (busy_ps's classes), NoC link bandwidth, TCM banks, and fixed latencies
 * (link hops, HBM latency, DMA setup, engine fill and drain) that no
 * bandwidth change moves. */
enum hw_dep_class {
        HW_DEP_CPU,                  /* PE_CPU issue */
        HW_DEP_DMA,                  /* a PE's DMA engine and data path */
        HW_DEP_GEMM,                 /* the GEMM array's work */
        HW_DEP_MATH,                 /* the MATH lanes' work */
        HW_DEP_HBM,                  /* HBM channels: service, queue, fair-share pacing */
        HW_DEP_NOC,                  /* links: bytes at link bandwidth and their queues */
        HW_DEP_TCM,                  /* TCM banks beyond the engine's own time */
        HW_DEP_LATENCY,              /* fixed latencies */
        HW_DEP_COUNT
};

/* The split of the last DMA copy's or engine op's time, [start, end), by
 * class (parts sum to end - start); filled only while hw_sim.dep_on. */
struct hw_dep {
        sim_ps start;                /* the op's first busy ps (the descriptor's, an engine's) */
        sim_ps end;                  /* when its result is ready */
        sim_ps part[HW_DEP_COUNT];   /* ps per class */
        /* Of part[pace_cls], time set by the slower of two rates: an HBM
         * transfer paced at the DMA's rate or its fair share of the HBM
         * (with, at the share, its wait at a channel behind the cube's
         * other streams; and a TCM copy's wait behind the PE's HBM
         * transfers, paced as they were); an engine busy for its work or
         * its TCM traffic. pace_alt: the same at the other rate, class
         * alt_cls. */
        sim_ps pace;                 /* ps at the slower rate */
        sim_ps pace_alt;             /* ps at the other */
        uint8_t pace_cls;            /* the slower's class (0: none) */
        uint8_t alt_cls;             /* the other's */
};

/* Of an HBM access, the piece that ends last so far (hw_sim.dep_on): its
 * figures, split into hw_sim.dep_access once the access is placed. */
struct hw_dep_piece {
        struct ev_resource *pace_path; /* the data path that paces it, or NULL */
        uint64_t rate, alt_rate;     /* its pacing's rate and the other class's */
        sim_ps start;                /* the access's start */
        sim_ps at;                   /* paced until then */
        sim_ps served;               /* a read: served by its channel until then; a write:
                                      * carried until then */
        sim_ps t;                    /* its end */
        sim_ps queue;                /* its wait at its channel behind other requests */
        sim_ps hops, hbm;            /* its route's hop latencies, its HBM edges' last
                                      * bursts, when it was placed */
        uint8_t pace;                /* its pacing's class (enum hw_dep_class) */
        bool write;                  /* a write */
        bool set;                    /* there is one */
};

/* What a shared resource was busy with, for an observer (the trace). */
enum hw_busy_kind {
        HW_BUSY_LINK,                /* index: graph edge */
        HW_BUSY_HBM,                 /* index: HBM channel of cube (global cube index) */
};

typedef void (*hw_busy_fn)(void *ctx, enum hw_busy_kind kind, uint32_t cube, uint32_t index,
                           sim_ps start, sim_ps end, uint64_t bytes);

struct hw_sim {
        struct ev_loop ev;           /* the event loop */
        struct topo_graph graph;     /* the machine's graph, owned */
        const struct topo *topo;     /* = &graph.topo */
        struct hw_link *links;       /* one per graph edge */
        sim_ps fabric_admit;         /* the transfer being routed: when its last packet is
                                      * within system.inter_sip.slots of the first inter-SIP
                                      * link's wire (0: none yet) */
        uint32_t fabric_payload;     /* the fabric's payload a packet for the transfer being
                                      * routed (tl_set_fabric_payload), or 0: the machine's
                                      * system.inter_sip.packet_bytes */
        struct muldiv_by channel_ps; /* bytes to ps at an HBM channel's bandwidth */
        struct muldiv_by channel_near_ps; /* at the channel's rate for the PE at its attach
                                      * point (cube.hbm.near_efficiency_pct) */
        struct muldiv_by channel_far_ps; /* and for any other requester (far_efficiency_pct) */
        uint32_t *channel_attach_pe; /* per channel: the PE (in its cube) at its attach point,
                                      * or UINT32_MAX */
        uint32_t *sip_link_first;    /* per SIP + 1: its inter-SIP links' first in sip_links */
        struct hw_sip_link {
                uint32_t peer;       /* the SIP it leads to */
                uint32_t pe;         /* the PE (in cube 0) at its router, or UINT32_MAX */
        } *sip_links;                /* each SIP's links out, in the graph's order */
        struct muldiv_by dma_ps;     /* bytes to ps at a DMA engine's bandwidth */
        struct muldiv_by gemm_cycle_ps; /* GEMM array cycles to ps */
        struct muldiv_by math_cycle_ps; /* MATH lane cycles to ps */
        struct muldiv_by tcm_bank_ps; /* bytes to ps at a TCM bank's bandwidth */
        struct hw_sip *sips;         /* n_sips */
        struct hw_cube *cubes;       /* n_cubes, sip-major */
        struct hw_pe *pes;           /* n_pes, cube-major */
        /* Per PE (global index), side by side: a request reads its cube's. */
        bool *pe_in_batch;           /* has an HBM copy in its cube's batch being placed */
        sim_ps *pe_hbm_until;        /* its HBM copies hold its data path until then */
        uint32_t *dma_node_pe;       /* per graph node: the global index + 1 of the PE whose
                                      * DMA node it is, else 0 */
        uint32_t n_sips, n_cubes, n_pes; /* counts */
        uint32_t pes_per_cube;       /* rows * cols */
        hw_pe_body body;             /* the launched kernel body */
        void *body_arg;              /* its argument */
        sim_ps launch_ps;            /* when the host launched */
        sim_ps target_start_ps;      /* common exec start of every PE */
        sim_ps done_ps;              /* when the last IO_CPU saw completion */
        uint32_t n_sips_done;        /* SIPs whose PEs all finished */
        struct hw_pe *no_stack;      /* a PE whose process could not start (run stopped), or NULL */
        int no_stack_errno;          /* why: coro_create's errno */
        uint64_t class_bytes[TOPO_EDGE_CLASS_COUNT]; /* stat: bytes per link class */
        uint64_t hbm_remote_bytes;   /* stat: HBM bytes a PE read or wrote in another cube */
        struct hw_mcast_scratch *mcast; /* per-edge state of multicasts (mcast.c); owned */
        struct hw_power power;       /* busy time per window of the kernel (power.h) */
        hw_busy_fn on_busy;          /* told of each link and HBM channel occupancy, or NULL */
        void *on_busy_ctx;           /* its context */
        bool dep_on;                 /* split each op's time by class into dep (critical path) */
        struct hw_dep dep;           /* the last DMA copy's or engine op's split */
        struct hw_dep dep_access;    /* the last HBM access's split (hbm_access), from its start */
        struct hw_dep_piece dep_piece; /* of the HBM access being placed, its last piece */
        const uint32_t *dep_route;   /* the route walked last (dep_on), its edges */
        uint32_t dep_route_n;        /* and their count */
};

/* Requests placed on the machine's shared resources so far (links, HBM
 * channels, each PE's engines, DMA slots and TCM): the work the engine
 * does beside its events (a request is served at its arrival, with no
 * event of its own; docs/adr/0010). */
uint64_t hw_sim_bookings(const struct hw_sim *);

/* Build the machine of t (copied). 0, or -EINVAL/-ENOMEM with d filled. */
int hw_sim_init(struct hw_sim *, const struct topo *t, const struct ev_config *cfg, struct diag *d);
void hw_sim_fini(struct hw_sim *);

/* Whether this host can simulate t (capacity.c): the host memory a run
 * takes, estimated from the machine's size and measured per-PE costs,
 * against what the host has available now. Call before hw_sim_init: 0, or
 * -E2BIG with a message naming the PEs, the estimate and what is
 * available (bad input: exit 2). */
int hw_sim_check_capacity(const struct topo *t, struct diag *d);
/* Whether this host lets one process map the coroutine stacks of n_procs
 * processes (vm.max_map_count): 0, or -E2BIG with "WHAT need about N
 * memory mappings ...", the sysctl that raises the limit and "or FEWER". */
int hw_host_check_mappings(uint64_t n_procs, const char *what, const char *fewer,
                           struct diag *d);
/* vm.max_map_count; UINT64_MAX if unknown (CUBESIM_TEST_MAX_MAP_COUNT=N in
 * the environment stands for it, for tests). */
uint64_t hw_host_max_mappings(void);
/* The estimate: resident bytes and address space of a run of t. */
void hw_sim_host_bytes(const struct topo *t, uint64_t *rss_bytes, uint64_t *vm_bytes);
/* What this process can still use: resident bytes (MemAvailable, the
 * memory cgroup's room) and address space (RLIMIT_AS); UINT64_MAX: no limit. */
void hw_host_avail_bytes(uint64_t *rss_bytes, uint64_t *vm_bytes);

/* N bytes at bandwidth bw, rounded up to whole ps (bw > 0). */
sim_ps hw_bytes_ps(uint64_t bytes, uint64_t bw_bytes_per_s);

/* The bytes an edge of class cls carries for a payload of bytes: on NoC
 * links (mesh, PE ports), a header per packet. The HBM channel's own edge
 * carries DRAM bursts at the channel's rate; packets start at its router. */
uint64_t hw_wire_bytes(const struct topo *, enum topo_edge_class cls, uint64_t bytes);
/* The same over an inter-SIP link cut at payload bytes a packet (0: the machine's). */
uint64_t hw_wire_bytes_at(const struct topo *, enum topo_edge_class cls, uint64_t bytes,
                          uint32_t payload);

/* Move bytes from graph node src to dst, the head leaving at start (>= now):
 * reserves every link of the route and returns when the last byte arrives.
 * TOPO_PS_NONE ("never") if the route cannot be had (out of memory caching
 * it): the loop's sticky out-of-memory flag is then set, so the run stops
 * with EV_NOMEM; callers check for it and never use it as a time. */
sim_ps hw_xfer(struct hw_sim *, uint32_t src, uint32_t dst, uint64_t bytes, sim_ps start);

/* A one-flit packet of bytes from src to dst from start on a virtual
 * channel of its own (cube.noc.atomic_vc): each link of the route takes
 * its latency and the packet's wire bytes as on an idle link, and is not
 * reserved (the flit passes between the packets booked there). Its
 * arrival, or TOPO_PS_NONE as hw_xfer. */
sim_ps hw_xfer_flit(struct hw_sim *, uint32_t src, uint32_t dst, uint64_t bytes, sim_ps start);

/* The pieces an HBM request of bytes is cut into: NoC packets, or larger
 * for a request of more than 4 packets per channel. */
uint64_t hw_hbm_piece_bytes(const struct topo *, uint64_t bytes);

/* Move bytes between the HBM of span and graph node `node` of a PE of
 * global cube `local`, starting at start (paced by pace, as
 * hw_hbm_read): each cube of the span takes its share of bytes (bytes *
 * share / total, the remainder to the last), interleaved over its
 * channels and routed between its channels and node. Returns when the
 * last byte has arrived (read) or been written. */
sim_ps hw_hbm_span_access(struct hw_sim *, const struct hw_hbm_span *span, uint32_t local,
                          uint32_t node, uint64_t bytes, bool write, sim_ps start,
                          struct ev_resource *pace);

/* Where a transfer's bytes are as they cross a route, link by link. */
struct hw_front {
        sim_ps head;                 /* the first byte reaches the next link's source node */
        sim_ps tail;                 /* the last byte has reached it */
};
/* The bytes of f cross graph edge (cut-through, its packets' headers on NoC
 * links): the link is reserved and f advanced. */
void hw__link_pass(struct hw_sim *, uint32_t edge, uint64_t bytes, struct hw_front *f);
/* When the last byte of f has arrived at the node its head reached. */
sim_ps hw__front_arrival(const struct hw_front *f);

/* Move bytes from src to each of dsts[0..n) as one multicast (mcast.c):
 * the union of the routes, each link reserved once, copies made where the
 * routes part. arrive[i] is when the last byte reaches dsts[i]; returns the
 * latest, or TOPO_PS_NONE (and the run is marked out of memory, as by
 * hw_xfer) if a route or the per-link state could not be allocated. */
sim_ps hw_xfer_mcast(struct hw_sim *, uint32_t src, const uint32_t *dsts, uint32_t n,
                     uint64_t bytes, sim_ps start, sim_ps *arrive);
void hw__mcast_free(struct hw_mcast_scratch *);

/* Read (or write) bytes of the cube's HBM from (to) graph node pe_node,
 * starting at start: interleaved over the channels. Returns completion. */
sim_ps hw_hbm_read(struct hw_sim *, struct hw_cube *, uint32_t dst_node, uint64_t bytes,
                   sim_ps start);
sim_ps hw_hbm_write(struct hw_sim *, struct hw_cube *, uint32_t src_node, uint64_t bytes,
                    sim_ps start);

/* A DMA copy on pe's engine from at: reads the HBM of `from` first if
 * not NULL, writes the HBM of `to` after if not NULL (TCM otherwise, whose
 * banks carry the bytes). Returns the end; *start the engine start. On
 * NoC 0; hw_dma_copy_on moves it on NoC noc's data path. */
sim_ps hw_dma_copy(struct hw_pe *pe, const struct hw_hbm_span *from, const struct hw_hbm_span *to,
                   uint64_t bytes, sim_ps at, sim_ps *start);
sim_ps hw_dma_copy_on(struct hw_pe *pe, unsigned noc, const struct hw_hbm_span *from,
                      const struct hw_hbm_span *to, uint64_t bytes, sim_ps at, sim_ps *start);

/* hw_dma_copy, but a copy with an HBM side is placed at the end of the
 * current instant, with every HBM copy the cube's PEs issue at this
 * instant: each sees the others streaming, so they share the HBM fairly
 * whatever order they were issued in. req->at must be now. req->done is
 * called once placed (at once, from here, if the copy has no HBM side). */
void hw_dma_copy_later(struct hw_dma_req *req);

/* A lone op on an idle engine, start to result (no reservation). */
sim_ps hw_gemm_ps(const struct topo *, uint64_t m, uint64_t n, uint64_t k);
sim_ps hw_math_ps(const struct topo *, enum topo_op op, uint64_t elements, bool across_lanes);
/* A lone access of bytes on an idle TCM: the bytes go line by line round
 * the banks, each bank moving its part at bw / banks. */
sim_ps hw_tcm_ps(const struct topo *, uint64_t bytes);
/* Run an op on pe's GEMM (MATH; across_lanes: a reduction along the last
 * axis, which pays the tree) engine from at, with tcm_bytes of operand
 * and result traffic on its TCM: the engine is busy for its work (or the
 * TCM time alone, if longer), the TCM serves the traffic from the
 * engine's start, and the result is ready the op's latency after the later
 * of the two. Returns that; *start (may be NULL) the engine's start. */
sim_ps hw_gemm_run(struct hw_pe *pe, uint64_t m, uint64_t n, uint64_t k, uint64_t tcm_bytes,
                   sim_ps at, sim_ps *start);
/* hw_gemm_run with a_bytes and b_bytes of its operands read into the engine
 * (operand_bytes below: their sum; the bank hand-over of docs/adr/0047 takes
 * the streamed operand's tiles at their own bytes):
 * at pe.gemm.operand_bytes_per_cycle (when set), plus
 * pe.gemm.unpack_setup_cycles a tile, the engine is busy at least their
 * time, however few passes its work takes; with
 * pe.gemm.unpack_shared_bytes_per_cycle an op of at least 2 x 2 tiles also
 * waits at each K tile for a refill of its held source (docs/adr/0039). */
sim_ps hw_gemm_run_fed(struct hw_pe *pe, uint64_t m, uint64_t n, uint64_t k, uint64_t tcm_bytes,
                       uint64_t a_bytes, uint64_t b_bytes, sim_ps at, sim_ps *start);
sim_ps hw_math_run(struct hw_pe *pe, enum topo_op op, uint64_t elements, bool across_lanes,
                   uint64_t tcm_bytes, sim_ps at, sim_ps *start);
/* Whether a composite stage of op reduces each row across the lanes. */
static inline bool hw_math_row_reduction(enum topo_op op)
{
        return op == TOPO_OP_ROWMAX || op == TOPO_OP_ROWSUM || op == TOPO_OP_RMSNORM;
}
/* Reserve pe's TCM for an access of bytes from at (hw_tcm_ps when the
 * TCM is idle). Counts them as intra-PE traffic. Returns the end. */
sim_ps hw_tcm_reserve(struct hw_pe *pe, sim_ps at, uint64_t bytes);
/* The rate one issuing core's transfers move at through its PE's data
 * path: pe.dma.bw_gbps, or its share on the pe.dma.thread_nocs NoCs the
 * core issues on. */
uint64_t hw_dma_bw(const struct topo *);
/* The NoCs a PE's cores choose from, each with its own data path at
 * hw_dma_bw: 2 where a core issues on one NoC of two (pe.dma.thread_nocs
 * half of pe.dma.channels), else 1 (one data path for every transfer). */
unsigned hw_dma_nocs(const struct topo *);
/* The names of the data paths beside dma, by which hw_path_pe tells them. */
extern const char hw_dma1_name[], hw_dma_rx_name[], hw_dma1_rx_name[];
/* The PE whose data path (dma, dma1, dma_rx or dma1_rx) path is. */
struct hw_pe *hw_path_pe(struct ev_resource *path);
/* NoC noc's data path of pe (noc < hw_dma_nocs) for bytes coming in (in)
 * or going out: with pe.dma.duplex each direction has its own (a NoC
 * interface injects and ejects a flit per cycle each), else one carries
 * both. */
static inline struct ev_resource *hw_dma_path(struct hw_pe *pe, unsigned noc, bool in)
{
        if (in && pe->sim->topo->pe.dma.duplex)
                return noc ? &pe->dma1_rx : &pe->dma_rx;
        return noc ? &pe->dma1 : &pe->dma;
}
/* The NoC packets a transfer of bytes takes (at least one). */
uint64_t hw_noc_packets(const struct topo *, uint64_t bytes);
/* The data path's time for the requests of a transfer of bytes: one per
 * NoC packet, pe.dma.request_ns each. */
sim_ps hw_dma_request_ps(const struct topo *, uint64_t bytes);
/* A lone transfer on an idle DMA engine: setup, requests and bytes at
 * hw_dma_bw. */
sim_ps hw_dma_ps(const struct topo *, uint64_t bytes);
/* Reserve pe's DMA engine for bytes arriving at at: with setup (a
 * descriptor the PE_CPU issued), a descriptor slot from its earliest free
 * time, then NoC noc's data path from the end of the setup for the bytes, their
 * requests (hw_dma_request_ps) and extra_ps; without (a receive drain),
 * the data path from at for the bytes and their requests. Returns the
 * end; *start (may be NULL) the descriptor's start. */
sim_ps hw_dma_reserve(struct hw_pe *pe, unsigned noc, sim_ps at, uint64_t bytes, bool setup,
                      sim_ps extra_ps, sim_ps *start);

/* The global index of the cube an edge belongs to: its source's, or its
 * destination's when the source is in no cube (an IO_CPU); or TOPO_NONE. */
uint32_t hw_edge_cube(const struct hw_sim *, uint32_t edge);

/* The cube a PE belongs to. */
static inline struct hw_cube *hw_pe_cube(struct hw_pe *pe)
{
        return &pe->sim->cubes[pe->global / pe->sim->pes_per_cube];
}

/* Schedule the launch of body(pe, arg) on every PE from the current time
 * and set target_start; the caller then runs the loop (ev_run). Every
 * route the launch and the completions take is computed here: 0, or
 * -ENOMEM if the route cache or the launch's own arrays could not grow. */
int hw_launch(struct hw_sim *, hw_pe_body body, void *arg);
/* How much after target_start the launch reaches SIP sip's PEs:
 * system.launch_skew_ns x sip / (sips - 1), 0 without the key. */
sim_ps hw_launch_skew(const struct hw_sim *, uint32_t sip);

#endif
