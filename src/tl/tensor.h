/* tl/tensor.h: the operand check every op makes, inline beside the error
 * it raises (tensor.c). */
#ifndef CUBESIM_TL_TENSOR_H
#define CUBESIM_TL_TENSOR_H

#include "tl/tl_int.h"

/* The kernel error of a tensor that fails tl__check_tensor: what is wrong
 * with it (does not return). */
_Noreturn void tl__bad_tensor(tl_ctx *tl, const tl_tensor *t, const char *file, int line,
                              const char *op, const char *which);
/* A kernel error unless t is a live tensor of this PE: not NULL, a tensor,
 * made on this PE, and its scratch scope (if any) not ended. which names
 * the operand in the message. Inline: every operand of every op is
 * checked, and passes. */
static inline void tl__check_tensor(tl_ctx *tl, const tl_tensor *t, const char *file, int line,
                                    const char *op, const char *which)
{
        if (!t || t->magic != TL_TENSOR_MAGIC ||
            (t->ctx && t->ctx != tl && (t->ctx->first != tl->first || t->scope_depth)) ||
            tl__struct_dead(tl, t))
                tl__bad_tensor(tl, t, file, line, op, which);
}

#endif
