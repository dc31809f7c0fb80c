/* tl/ops.h: the operand wait every op makes, inline beside its slow path
 * (ops.c). */
#ifndef CUBESIM_TL_OPS_H
#define CUBESIM_TL_OPS_H

#include "tl/tl_int.h"

/* tl__wait_ready when t is busy or a trace is written (marks t's producer). */
void tl__wait_busy(tl_ctx *tl, tl_tensor *t, const char *file, int line, const char *op);
/* Block until t is ready (notes the wait for deadlock reports). Inline:
 * every operand of every op comes here, and most are ready. */
static inline void tl__wait_ready(tl_ctx *tl, tl_tensor *t, const char *file, int line,
                                  const char *op)
{
        if (t->owner->sharded)
                tl__sharded_touch(tl, t, file, line, op);
        if (t->owner->busy || tl->run->have_trace)
                tl__wait_busy(tl, t, file, line, op);
}

#endif
