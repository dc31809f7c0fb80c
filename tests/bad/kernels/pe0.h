/* tests/bad/kernels/pe0.h: a case whose fault only PE 0 (sip0.cube0.pe0)
 * makes, so the run reports it once: the case defines fault(), which body
 * calls on PE 0; every other PE does nothing. Include it after
 * <cubesim/tl.h> (and after hbm_x.h where the case uses it). */
#include "case.h"

static void fault(tl_ctx *tl, const void *argp);

static void body(tl_ctx *tl, const void *argp)
{
        if (tl_rank(tl, -1, -1, -1) == 0)
                fault(tl, argp);
}
