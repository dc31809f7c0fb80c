/* tl/msg.c: messages between PEs: tl_send, tl_mcast and tl_recv, and the
 * inbox (IPCQ) where landed messages wait for their tl_recv. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/ckd.h"
#include "base/util.h"
#include "tl/ops.h"
#include "tl/tl_int.h"

/* ---- send / recv ------------------------------------------------------------------ */

static struct tl_msg *msg_new(struct tl_run *r)
{
        struct tl_msg *m = r->free_msgs;
        if (m) {
                r->free_msgs = m->next;
                struct tl_msg *all = m->all_next;
                memset(m, 0, sizeof *m);
                m->all_next = all;
                return m;
        }
        m = calloc(1, sizeof *m);
        if (m) {
                m->all_next = r->all_msgs;
                r->all_msgs = m;
        }
        return m;
}

void tl__msg_drop_payload(struct tl_msg *m)
{
        if (m->payload && --m->payload->refs == 0)
                free(m->payload);
        m->payload = NULL;
}

static void msg_free(struct tl_run *r, struct tl_msg *m)
{
        tl__msg_drop_payload(m);
        m->next = r->free_msgs;
        r->free_msgs = m;
}

/* ---- the inbox index (struct tl_inbox) ---- */

static size_t inbox_hash(uint32_t dst, uint32_t src, int tag)
{
        /* splitmix64's finaliser over the packed key: every bit of each
         * field reaches the low bits the table uses. */
        uint64_t h = ((uint64_t)dst << 32 | src) ^ (uint64_t)(uint32_t)tag *
                                                          UINT64_C(0x9e3779b97f4a7c15);
        h = (h ^ h >> 30) * UINT64_C(0xbf58476d1ce4e5b9);
        h = (h ^ h >> 27) * UINT64_C(0x94d049bb133111eb);
        return (size_t)(h ^ h >> 31);
}

/* The slot of (dst, src, tag): its queue, or the free slot where it goes. */
static struct tl_inbox_q *inbox_slot(const struct tl_inbox *in, uint32_t dst, uint32_t src,
                                     int tag)
{
        size_t mask = in->cap - 1;
        for (size_t i = inbox_hash(dst, src, tag) & mask;; i = (i + 1) & mask) {
                struct tl_inbox_q *q = &in->slots[i];
                if (!q->used || (q->dst == dst && q->src == src && q->tag == tag))
                        return q;
        }
}

/* Room for one more message sent and not yet received. 0 or -ENOMEM. */
static int inbox_reserve(struct tl_inbox *in)
{
        if (2 * (in->n_out + 1) <= in->cap) {
                in->n_out++;
                return 0;
        }
        size_t cap = in->cap ? 2 * in->cap : 64;
        struct tl_inbox_q *slots = calloc(cap, sizeof *slots), *old = in->slots;
        if (!slots)
                return -ENOMEM;
        size_t old_cap = in->cap;
        in->slots = slots;
        in->cap = cap;
        for (size_t i = 0; i < old_cap; i++)
                if (old[i].used)
                        *inbox_slot(in, old[i].dst, old[i].src, old[i].tag) = old[i];
        free(old);
        in->n_out++;
        return 0;
}

static void inbox_push(struct tl_inbox *in, uint32_t dst, struct tl_msg *m)
{
        struct tl_inbox_q *q = inbox_slot(in, dst, m->src_rank, m->tag);
        m->next = NULL;
        if (q->used) {
                q->tail->next = m;
        } else {
                *q = (struct tl_inbox_q){ .dst = dst, .src = m->src_rank, .tag = m->tag,
                                          .used = true, .head = m };
        }
        q->tail = m;
}

/* The oldest landed message of (dst, src, tag), taken out; NULL if none. */
static struct tl_msg *inbox_take(struct tl_inbox *in, uint32_t dst, uint32_t src, int tag)
{
        if (!in->cap)
                return NULL;
        struct tl_inbox_q *q = inbox_slot(in, dst, src, tag);
        if (!q->used)
                return NULL;
        struct tl_msg *m = q->head;
        q->head = m->next;
        if (q->head)
                return m;
        /* The queue is empty: delete its slot, shifting back the entries
         * of its probe run that could sit in it (linear probing). */
        size_t mask = in->cap - 1, hole = (size_t)(q - in->slots);
        q->used = false;
        for (size_t i = (hole + 1) & mask; in->slots[i].used; i = (i + 1) & mask) {
                struct tl_inbox_q *e = &in->slots[i];
                size_t home = inbox_hash(e->dst, e->src, e->tag) & mask;
                /* e may move to hole unless its home lies in (hole, i]. */
                if (((i - home) & mask) >= ((i - hole) & mask)) {
                        in->slots[hole] = *e;
                        e->used = false;
                        hole = i;
                }
        }
        return m;
}

int tl__inbox_check_empty(struct tl_run *r, struct diag *d)
{
        const struct tl_inbox *in = &r->inbox;
        if (in->n_out == 0)
                return 0;
        const struct tl_msg *first = NULL;
        for (size_t i = 0; i < in->cap; i++)
                for (const struct tl_msg *m = in->slots[i].used ? in->slots[i].head : NULL; m;
                     m = m->next)
                        if (!first || m->seq < first->seq)
                                first = m;
        if (!first) {                /* not landed: cannot happen once the run is done */
                diag_error(d, "%zu messages sent and never received", in->n_out);
                return -1;
        }
        diag_error_at(d, first->file, (unsigned)first->line, 0,
                      "PE %s: %s: %zu message%s sent and never received by the kernel's end "
                      "(the first sent: to PE %s, tag %d); every message needs its tl_recv",
                      r->sim->pes[first->src_rank].name, first->op, in->n_out,
                      in->n_out == 1 ? "" : "s", first->dst->pe->name, first->tag);
        return -1;
}

void tl__inbox_fini(struct tl_inbox *in)
{
        free(in->slots);
        memset(in, 0, sizeof *in);
}

static void msg_land(struct ev_loop *ev, struct ev_event *e)
{
        struct tl_msg *m = container_of(e, struct tl_msg, land);
        tl_ctx *dst = m->dst;
        /* The PE's inbox is its threads': the first that waits for it. */
        for (struct tl_thread *th = dst->threads;; th = th->next) {
                tl_ctx *c = th ? &th->ctx : dst;
                if (c->recv_src >= 0 && (int)m->src_rank == c->recv_src &&
                    m->tag == c->recv_tag) {
                        c->recv_src = -1;
                        c->recv_got = m;
                        ev_future_complete(ev, &c->recv_ready, 0);
                        return;
                }
                if (!th)
                        break;
        }
        inbox_push(&dst->run->inbox, dst->rank, m);
}

static void check_rank(tl_ctx *tl, int rank, const char *file, int line, const char *op)
{
        if (rank < 0 || (uint32_t)rank >= tl->sim->n_pes)
                tl__fail(tl, file, line, op, "rank %d: expected 0..%u", rank, tl->sim->n_pes - 1);
}

/* Data mode: a payload holding a contiguous copy of t, no message yet
 * holding it (refs 0); NULL in op_log mode. */
static struct tl_payload *payload_of(tl_ctx *tl, tl_tensor *t, const char *file, int line,
                                     const char *op)
{
        if (tl->run->opts->mode != TL_MODE_DATA)
                return NULL;
        struct tl_payload *p = malloc(sizeof *p + (size_t)tl__elems(t) * sizeof(float) + 1);
        if (!p)
                tl__fail(tl, file, line, op, "host out of memory");
        p->refs = 0;
        /* A contiguous image of t over the payload. */
        tl_tensor tmp = *t;
        tmp.base = p->data;
        tmp.offset = 0;
        int64_t st = 1;
        for (int i = t->ndim - 1; i >= 0; i--) {
                tmp.stride[i] = st;
                st *= t->shape[i];
        }
        tl__compute_copy(t, &tmp, tl__is_bfp(t->dtype) ? TL_FP32 : t->dtype);
        return p;
}

/* A message of t to dst holding payload p (data mode; NULL otherwise). */
static struct tl_msg *msg_of(tl_ctx *tl, tl_tensor *t, struct tl_payload *p, tl_ctx *dst, int tag,
                             const char *file, int line, const char *op)
{
        struct tl_msg *m = msg_new(tl->run);
        if (!m || inbox_reserve(&tl->run->inbox) < 0) {
                if (p && p->refs == 0)
                        free(p);
                tl__fail(tl, file, line, op, "host out of memory");
        }
        m->dst = dst;
        m->src_rank = tl->rank;
        m->tag = tag;
        m->dtype = t->dtype;
        m->ndim = t->ndim;
        memcpy(m->shape, t->shape, sizeof m->shape);
        m->file = file;
        m->line = line;
        m->op = op;
        m->seq = ++tl->run->n_msgs_sent;
        m->payload = p;
        if (p)
                p->refs++;
        return m;
}

/* The sender's DMA reads bytes out of its TCM from its descriptor's start
 * (after the setup): when the read-out is done, no earlier than sent. */
static sim_ps tcm_read_out(tl_ctx *tl, sim_ps start, uint64_t bytes, sim_ps sent)
{
        sim_ps read = hw_tcm_reserve(tl->pe, start + tl->sim->topo->pe.dma.setup_ps, bytes);
        return read > sent ? read : sent;
}

/* The sender's DMA has read m out by sent; its last byte reaches the
 * receiver's DMA at arrive: the receiving DMA drains it into the inbox,
 * and it lands there no earlier than sent. Logs the drain (and the flow
 * from the sender's record) and schedules the landing. */
static void msg_deliver(tl_ctx *tl, struct tl_msg *m, uint64_t bytes, sim_ps sent, sim_ps arrive)
{
        struct tl_run *r = tl->run;
        struct hw_sim *s = tl->sim;
        tl_ctx *dst = m->dst;
        sim_ps drain = hw_bytes_ps(bytes, hw_dma_bw(s->topo));
        /* The first bytes reach the receiver one drain before the last;
         * a message shorter than its drain starts at once (0: the
         * resource takes it from now). */
        sim_ps head = arrive > drain ? arrive - drain : 0;
        sim_ps drain_start, landed = hw_dma_reserve(dst->pe, tl->noc, head, bytes, false, 0,
                                                          &drain_start);
        /* The receiver's DMA writes the tensor into its TCM. */
        sim_ps written = hw_tcm_reserve(dst->pe, drain_start, bytes);
        if (landed < written)
                landed = written;
        if (landed < sent)
                landed = sent;
        struct rep_param q[2] = { { .name = "src", .kind = REP_INT, .i = tl->rank },
                                  { .name = "tag", .kind = REP_INT, .i = m->tag } };
        struct rep_op rec = { .pe = dst->pe->name, .pe_index = dst->rank, .component = "pe_dma",
                              .op = "recv_drain", .start_ps = drain_start, .end_ps = landed,
                              .bytes = bytes, .params = q, .n_params = 2 };
        struct rep_trace_ref to = tl__log(tl, &rec);
        if (r->have_trace)
                rep_trace_flow(&r->trace, ++r->next_flow, "ipcq", &m->send_at, &to);
        m->drain_at = to;
        m->land.fn = msg_land;
        ev_schedule_at(&s->ev, &m->land, landed);
}

void tl_impl_send(tl_ctx *tl, int dst_rank, tl_tensor *t, int tag, const char *file, int line)
{
        tl__issue(tl, TOPO_OP_SEND, file, line);
        check_rank(tl, dst_rank, file, line, "tl_send");
        tl__need_local(tl, t, file, line, "tl_send", "t");
        tl__wait_ready(tl, t, file, line, "tl_send");
        struct hw_sim *s = tl->sim;
        tl_ctx *dst = &tl->run->ctx[dst_rank];
        struct tl_msg *m = msg_of(tl, t, payload_of(tl, t, file, line, "tl_send"), dst, tag,
                                  file, line, "tl_send");
        uint64_t bytes = tl__tensor_bytes(t);
        /* over the fabric, a message of several packets waits until the
         * last such one's packets have all taken their slots
         * (system.inter_sip.slots); one of a packet (a token, a semaphore
         * increment) goes at once */
        uint32_t payload = tl->fabric_payload ? tl->fabric_payload
                                              : s->topo->system.inter_sip_packet_bytes;
        bool packets = dst->pe->sip != tl->pe->sip && payload && bytes > payload;
        if (packets && tl->fabric_hold > ev_now(&s->ev)) {
                sim_ps since = ev_now(&s->ev);
                ev_sleep_until(tl->proc, tl->fabric_hold);
                tl__waited(tl, since, "tl_send", file, line);
        }
        /* Sender's DMA: setup and read-out; then the route; then the
         * receiving DMA drains the bytes into its inbox. */
        sim_ps now = ev_now(&s->ev), start;
        sim_ps sent = hw_dma_reserve(tl->pe, tl->noc, now, bytes, true, 0, &start);
        s->fabric_payload = tl->fabric_payload;
        s->fabric_admit = 0;
        sim_ps arrive = hw_xfer(s, tl->pe->node_dma, dst->pe->node_dma, bytes,
                                start + s->topo->pe.dma.setup_ps);
        s->fabric_payload = 0;
        sim_ps admit = s->fabric_admit;
        if (arrive == TOPO_PS_NONE)
                tl__fail(tl, file, line, "tl_send", "host out of memory routing to PE %d",
                         dst_rank);
        sent = tcm_read_out(tl, start, bytes, sent);
        struct rep_param p[2] = { { .name = "dst", .kind = REP_INT, .i = dst_rank },
                                  { .name = "tag", .kind = REP_INT, .i = tag } };
        m->send_at = tl__log_engine(tl, "pe_dma", "send", start, sent, bytes, 0, 0, p, 2);
        msg_deliver(tl, m, bytes, sent, arrive);
        tl__finish_at(tl, NULL, sent);
        if (packets && admit)
                tl->fabric_hold = admit;
}

/* tl_mcast and tl_mcast_linked (op: the call's name): linked, the sender
 * pays pe.dma.mcast_linked_dest_ns per packet and destination, else
 * pe.dma.mcast_dest_ns. */
static void mcast(tl_ctx *tl, int row0, int col0, int n_rows, int n_cols, tl_tensor *t, int tag,
                  bool linked, const char *file, int line, const char *op)
{
        tl__issue(tl, TOPO_OP_SEND, file, line);
        tl__need_local(tl, t, file, line, op, "t");
        struct hw_sim *s = tl->sim;
        int rows = (int)s->topo->cube.noc.rows, cols = (int)s->topo->cube.noc.cols;
        if (n_rows < 1 || n_cols < 1 || row0 < 0 || col0 < 0 || row0 > rows - n_rows ||
            col0 > cols - n_cols)
                tl__fail(tl, file, line, op,
                         "rows [%d, +%d) x cols [%d, +%d) is not a rectangle of the %d x %d NoC",
                         row0, n_rows, col0, n_cols, rows, cols);
        tl__wait_ready(tl, t, file, line, op);
        uint32_t first = tl->rank - tl->pe->pe, n = 0;
        uint32_t *dsts = tl__arena_alloc(tl, (size_t)n_rows * (size_t)n_cols * 2 * sizeof *dsts);
        if (!dsts)
                tl__fail(tl, file, line, op, "host out of memory");
        sim_ps *arrive = tl__arena_alloc(tl, (size_t)n_rows * (size_t)n_cols * sizeof *arrive);
        if (!arrive)
                tl__fail(tl, file, line, op, "host out of memory");
        uint32_t *ranks = dsts + (size_t)n_rows * (size_t)n_cols;
        for (int r = row0; r < row0 + n_rows; r++) {
                for (int c = col0; c < col0 + n_cols; c++) {
                        uint32_t rank = first + (uint32_t)(r * cols + c);
                        if (rank == tl->rank)
                                continue;       /* no loopback: the sender has the data */
                        ranks[n] = rank;
                        dsts[n++] = tl->run->ctx[rank].pe->node_dma;
                }
        }
        uint64_t bytes = tl__tensor_bytes(t);
        sim_ps now = ev_now(&s->ev), start;
        /* The sender's NoC interface, per packet, serves each destination
         * (its acknowledgement) beside the bytes. */
        const struct topo_pe_dma *dma = &s->topo->pe.dma;
        sim_ps per_dest = linked ? dma->mcast_linked_dest_ps : dma->mcast_dest_ps;
        sim_ps extra = sat_mul_u64(sat_mul_u64(hw_noc_packets(s->topo, bytes), n), per_dest);
        sim_ps sent = hw_dma_reserve(tl->pe, tl->noc, now, bytes, true, extra, &start);
        s->fabric_payload = tl->fabric_payload;
        sim_ps routed = n ? hw_xfer_mcast(s, tl->pe->node_dma, dsts, n, bytes,
                                          start + s->topo->pe.dma.setup_ps, arrive)
                          : 0;
        s->fabric_payload = 0;
        if (routed == TOPO_PS_NONE)
                tl__fail(tl, file, line, op, "host out of memory routing the multicast");
        sent = tcm_read_out(tl, start, bytes, sent);
        struct rep_param p[5] = { { .name = "row0", .kind = REP_INT, .i = row0 },
                                  { .name = "col0", .kind = REP_INT, .i = col0 },
                                  { .name = "rows", .kind = REP_INT, .i = n_rows },
                                  { .name = "cols", .kind = REP_INT, .i = n_cols },
                                  { .name = "tag", .kind = REP_INT, .i = tag } };
        struct rep_trace_ref from = tl__log_engine(tl, "pe_dma", linked ? "mcast_linked" : "mcast",
                                               start, sent, bytes, 0, 0, p, 5);
        /* One copy of the values, whatever the receivers (data mode). */
        struct tl_payload *pl = n ? payload_of(tl, t, file, line, op) : NULL;
        for (uint32_t i = 0; i < n; i++) {
                struct tl_msg *m = msg_of(tl, t, pl, &tl->run->ctx[ranks[i]], tag, file, line,
                                          op);
                m->send_at = from;
                msg_deliver(tl, m, bytes, sent, arrive[i]);
        }
        tl__finish_at(tl, NULL, sent);
}

void tl_impl_mcast(tl_ctx *tl, int row0, int col0, int n_rows, int n_cols, tl_tensor *t, int tag,
               const char *file, int line)
{
        mcast(tl, row0, col0, n_rows, n_cols, t, tag, false, file, line, "tl_mcast");
}

void tl_impl_mcast_linked(tl_ctx *tl, int row0, int col0, int n_rows, int n_cols, tl_tensor *t,
                      int tag, const char *file, int line)
{
        mcast(tl, row0, col0, n_rows, n_cols, t, tag, true, file, line, "tl_mcast_linked");
}

/* Take the next message from src_rank with tag for op, waiting for it to
 * land; the inbox no longer counts it. */
static struct tl_msg *take(tl_ctx *tl, int src_rank, int tag, const char *file, int line,
                           const char *op)
{
        tl__issue(tl, TOPO_OP_RECV, file, line);
        check_rank(tl, src_rank, file, line, op);
        struct tl_msg *m = inbox_take(&tl->run->inbox, tl->rank, (uint32_t)src_rank, tag);
        if (!m) {
                tl->recv_src = src_rank;
                tl->recv_tag = tag;
                tl->recv_got = NULL;
                ev_future_init(&tl->recv_ready, "tl_recv");
                tl__note_wait(tl, TL_NOTE_RECV, file, line, op, tl->sim->pes[src_rank].name, tag);
                sim_ps since = ev_now(&tl->sim->ev);
                ev_wait(tl->proc, &tl->recv_ready);
                tl__waited(tl, since, "tl_recv", file, line);
                m = tl->recv_got;
        }
        tl->run->inbox.n_out--;
        return m;
}

tl_tensor *tl_impl_recv(tl_ctx *tl, int src_rank, int tag, const char *file, int line)
{
        struct tl_msg *m = take(tl, src_rank, tag, file, line, "tl_recv");
        tl_tensor *t = tl__new_tensor(tl, file, line, "tl_recv", TL_SCRATCH, m->dtype, m->ndim,
                                      m->shape);
        if (tl->run->opts->mode == TL_MODE_DATA && m->payload)
                memcpy(t->base, m->payload->data, (size_t)tl__elems(t) * sizeof(float));
        t->made_at = m->drain_at;   /* its consumers' arrows start at the drain */
        msg_free(tl->run, m);
        return t;
}

void tl_impl_recv_into(tl_ctx *tl, tl_tensor *dst, int src_rank, int tag, const char *file, int line)
{
        tl__need_local(tl, dst, file, line, "tl_recv_into", "dst");
        tl__check_block_start(tl, file, line, "tl_recv_into", dst, "dst");
        struct tl_msg *m = take(tl, src_rank, tag, file, line, "tl_recv_into");
        if (m->dtype != dst->dtype || !tl__same_shape(m->ndim, m->shape, dst->ndim, dst->shape)) {
                char sm[96], sd[96];
                tl__shape_text(sm, sizeof sm, m->ndim, m->shape);
                tl__shape_text(sd, sizeof sd, dst->ndim, dst->shape);
                tl__fail(tl, file, line, "tl_recv_into", "the message from %s tag %d is %s%s, "
                         "dst %s", tl->sim->pes[src_rank].name, tag, sm,
                         m->dtype != dst->dtype ? " of another dtype" : "", sd);
        }
        tl__wait_ready(tl, dst, file, line, "tl_recv_into");
        if (tl->run->opts->mode == TL_MODE_DATA && m->payload) {
                /* The values, row-major, under dst's shape (rounded at the send). */
                tl_tensor in = *dst, out;
                in.base = m->payload->data;
                in.offset = 0;
                int64_t st = 1;
                for (int i = dst->ndim - 1; i >= 0; i--) {
                        in.stride[i] = st;
                        st *= dst->shape[i];
                }
                tl__compute_copy(&in, tl__data_write(tl, dst, &out, file, line, "tl_recv_into"),
                                 tl__is_bfp(dst->dtype) ? TL_FP32 : dst->dtype);
        }
        if (tl->run->have_trace)
                dst->owner->made_at = m->drain_at;
        msg_free(tl->run, m);
}
