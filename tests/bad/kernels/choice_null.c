/* tests/bad/kernels/choice_null.c: a choice parameter without its list of
 * words is refused when the library is loaded (it crashed `cubesim
 * kernels` and `run`).
// args: --topo topologies/small.yaml
// expect: error: kernel choice_null: parameter 'mode': a choice parameter needs choices, a NULL-terminated list of words (got NULL)
// expect-count: 1
// status: 2
 */
#include <cubesim/tl.h>

#include "case.h"

static const struct tl_param params[] = {
        { "mode", TL_PARAM_CHOICE, 0, 0, 0, NULL, "which mode" },
        { NULL, 0, 0, 0, 0, NULL, NULL },
};

static void body(tl_ctx *tl, const void *argp)
{
}

CASE_TABLE(.name = "choice_null", .params = params);
