/* tests/bad/kernels/choice_default.c: a choice parameter whose default is
 * no index into its words is refused when the library is loaded.
// args: --topo topologies/small.yaml
// expect: error: kernel choice_default: parameter 'mode': default 2 is not an index into its 2 choices (0..1)
// expect-count: 1
// status: 2
 */
#include <cubesim/tl.h>

#include "case.h"

static const char *const modes[] = { "fast", "slow", NULL };

static const struct tl_param params[] = {
        { "mode", TL_PARAM_CHOICE, 2, 0, 0, modes, "which mode" },
        { NULL, 0, 0, 0, 0, NULL, NULL },
};

static void body(tl_ctx *tl, const void *argp)
{
}

CASE_TABLE(.name = "choice_default", .params = params);
