/* tests/bad/kernels/tensor_names.c: tensor names are file stems (NAME.npy
 * under --outputs and the other directories): one that would leave the
 * directory, split into a subdirectory or hold a newline, and one given
 * twice (the later file would silently win), are each rejected at setup
 * (exit 2) at their tl_setup_tensor call, before anything is written.
// args: --topo topologies/small.yaml --mode data
// expect: tensor_names.c:@LINE@: error: kernel tensor_names: tensor name '../escaped' starts with '.'; a name is 1 to 64 letters, digits, '_', '-' or '.', not starting with '.' or '-'
// expect: tensor_names.c:23: error: kernel tensor_names: tensor name 'a/b' has '/' at byte 2;
// expect: tensor_names.c:24: error: kernel tensor_names: tensor name 'line\x0abreak' has byte 0x0a at byte 5;
// expect: tensor_names.c:26: error: kernel tensor_names: tensor 'y' declared twice (first at tests/bad/kernels/tensor_names.c:25): both would be y.npy
// expect-count: 4
// status: 2
 */
#include <cubesim/tl.h>

#include "case.h"

static void setup(tl_setup *s, void *argp)
{
        int64_t shape[1] = { 4 };
        (void)argp;
        tl_setup_tensor(s, "../escaped", TL_OUTPUT, TL_FP32, 1, shape); /* FAULT */
        tl_setup_tensor(s, "a/b", TL_OUTPUT, TL_FP32, 1, shape);
        tl_setup_tensor(s, "line\nbreak", TL_OUTPUT, TL_FP32, 1, shape);
        tl_setup_tensor(s, "y", TL_OUTPUT, TL_FP32, 1, shape);
        tl_setup_tensor(s, "y", TL_OUTPUT, TL_FP32, 1, (int64_t[]){ 2, 2 });
}

static void body(tl_ctx *tl, const void *argp)
{
        (void)tl;
        (void)argp;
}

CASE_TABLE(.name = "tensor_names", .setup = setup);
