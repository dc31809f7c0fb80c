/* tl/base.c: the floor of src/tl, which every other file of it may call:
 * kernel errors (tl__fail), the PE running on this thread (tl__current)
 * and the text of a shape. It calls no other file of src/tl. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "base/util.h"
#include "tl/tl_int.h"

/* The run whose event loop this thread is in (one run per thread at a
 * time): lets the context-free entry points (tl_numel, tl_set_pinned, ...)
 * report errors against the running PE. */
static _Thread_local struct tl_run *running;

_Noreturn void tl__fail(tl_ctx *tl, const char *file, int line, const char *op, const char *fmt,
                        ...)
{
        char msg[512];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(msg, sizeof msg, fmt, ap);
        va_end(ap);
        struct tl_run *r = tl->run;
        diag_report(r->diag, DIAG_ERROR, file, (unsigned)line, 0, "PE %s: %s: %s", tl->pe->name,
                    op, msg);
        r->failed = true;
        ev_stop(&tl->sim->ev);
        ev_proc_note(tl->proc, "stopped by its kernel error");
        ev_wait(tl->proc, &r->never);
        abort(); /* never resumed */
}

struct tl_run *tl__enter_run(struct tl_run *r)
{
        struct tl_run *outer = running;
        running = r;
        return outer;
}

tl_ctx *tl__current(void)
{
        struct tl_run *r = running;
        if (!r || !r->sim->ev.current)
                return NULL;
        /* Every process of a machine is a PE's kernel (hw/launch.c) or one
         * of its threads (thread.c). */
        struct ev_proc *p = r->sim->ev.current;
        uintptr_t pes = (uintptr_t)r->sim->pes, at = (uintptr_t)p;
        if (at < pes || at >= pes + r->sim->n_pes * sizeof *r->sim->pes)
                return &container_of(p, struct tl_thread, proc)->ctx;
        struct hw_pe *pe = container_of(p, struct hw_pe, proc);
        return &r->ctx[pe->global];
}

bool tl__same_shape(int na, const int64_t *a, int nb, const int64_t *b)
{
        bool same = na == nb;
        for (int i = 0; same && i < na; i++)
                same = a[i] == b[i];
        return same;
}

void tl__shape_text(char *buf, size_t len, int ndim, const int64_t *shape)
{
        size_t n = (size_t)snprintf(buf, len, "[");
        for (int i = 0; i < ndim && n < len; i++)
                n += (size_t)snprintf(buf + n, len - n, "%s%lld", i ? ", " : "", (long long)shape[i]);
        if (n < len)
                snprintf(buf + n, len - n, "]");
}
