/* fuzz/fuzz_npy.c: libFuzzer harness for the .npy reader (base/npy.h).
 *
 * Feeds arbitrary bytes to npy_parse. Any crash, sanitizer report, leak or
 * an inconsistent result is a bug: the reader must turn every input into
 * either an array whose fields agree with each other or at least one error
 * in the diag. Build and run: see fuzz/README.md. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "base/diag.h"
#include "base/npy.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        struct diag d;
        struct npy_array a;
        diag_init(&d);
        int rc = npy_parse("fuzz.npy", data, size, &a, &d);
        if ((rc == 0) != (d.n_errors == 0))
                abort();
        if (rc == 0) {
                uint64_t count = 1;
                if (a.ndim < 0 || a.ndim > NPY_MAX_DIMS || !a.data)
                        abort();
                for (int i = 0; i < a.ndim; i++) {
                        if (a.shape[i] < 0)
                                abort();
                        count *= (uint64_t)a.shape[i];
                }
                if (count != a.count || count * npy_dtype_size(a.dtype) > size)
                        abort();
                /* Touch every element: ASan catches a short allocation. */
                volatile float sink = 0;
                for (uint64_t i = 0; i < count; i++)
                        sink += a.data[i];
                (void)sink;
        } else if (a.data || a.ndim || a.count) {
                abort();     /* a failed parse must leave nothing behind */
        }
        npy_free(&a);
        diag_fini(&d);
        return 0;
}
