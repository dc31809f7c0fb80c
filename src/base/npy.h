/* base/npy.h: NumPy .npy files (format versions 1.0, 2.0 and 3.0), C order
 * only, dtypes little-endian float32 ('<f4'), float16 ('<f2'), bfloat16
 * stored as '<u2' raw bits or the ml_dtypes name 'bfloat16' (read only), and
 * float64 ('<f8', read only, converted). Every malformed header, dtype,
 * shape or truncated payload is a located error in the diag, never a crash:
 * the reader trusts nothing in the file. */
#ifndef CUBESIM_BASE_NPY_H
#define CUBESIM_BASE_NPY_H

#include <stddef.h>
#include <stdint.h>

#include "base/diag.h"

#define NPY_MAX_DIMS 4
#define NPY_MAX_BYTES (4ull << 30)   /* refuse payloads above 4 GiB */
#define NPY_MAX_HEADER_BYTES 10000   /* refuse longer headers (NumPy's max_header_size) */

enum npy_dtype {
        NPY_F32,                     /* '<f4' */
        NPY_F16,                     /* '<f2' */
        NPY_BF16,                    /* raw bfloat16 bits ('<u2' or 'bfloat16') */
        NPY_F64,                     /* '<f8' (read only) */
};

struct npy_array {
        enum npy_dtype dtype;        /* element type in the file */
        int ndim;                    /* 0..NPY_MAX_DIMS */
        int64_t shape[NPY_MAX_DIMS]; /* extents, C order */
        uint64_t count;              /* product of shape */
        float *data;                 /* count elements converted to float32, malloc'd */
};

/* Read path; every problem to d as "PATH: error: ..." (with "header column
 * N: " where it applies, N counting bytes of the header dict from 1). The
 * file must hold exactly the payload the header implies. On failure out is
 * zeroed (nothing to free). 0 or -EINVAL / -ENOMEM / -errno. */
int npy_read(const char *path, struct npy_array *out, struct diag *d);
/* Parse a file already in memory (for the fuzzer and tests). */
int npy_parse(const char *name, const uint8_t *buf, size_t len, struct npy_array *out,
              struct diag *d);
/* Read only the header: dtype, ndim, shape (data NULL); the file's size is
 * still checked against it. */
int npy_read_header(const char *path, struct npy_array *out, struct diag *d);
/* Write count = prod(shape) floats as dtype (F32, F16 or BF16 as '<u2'),
 * rounding to nearest even, with a version 1.0 header laid out byte for
 * byte as NumPy 1.24 does; written atomically (base/fsutil.h), so readers
 * see the old file or the whole new one. */
int npy_write(const char *path, enum npy_dtype dtype, int ndim, const int64_t *shape,
              const float *data, struct diag *d);
void npy_free(struct npy_array *);

/* Bytes per element in the file, and a name for messages ("bfloat16"). */
size_t npy_dtype_size(enum npy_dtype);
const char *npy_dtype_name(enum npy_dtype);

#endif
