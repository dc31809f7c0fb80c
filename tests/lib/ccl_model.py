"""tests/lib/ccl_model.py: NumPy references of the collectives of kernels/ccl.c.

    ccl_model.py write DIR N ROWS COLS SEED [float]   x.npy [N, ROWS, COLS] of small
                                                      integers (float: normal values)
    ccl_model.py check DIR OP N DIM ORDER [TOL]       y.npy of the run in DIR/out against it

ORDER is the member order over the devices (comma list, ring_order of
kernels/ccl.c). Small integers sum exactly in fp32 and in bf16 (|sum| <= 256),
so every form must match exactly. With TOL (float data) each element may be
off by TOL times the sum of the magnitudes it adds (the inputs' and the
result's rounding, the order of the additions).
"""
import sys

import numpy as np


def write(d, n, rows, cols, seed, real=False):
    rs = np.random.RandomState(seed)
    if real:
        x = rs.standard_normal(size=(n, rows, cols))
    else:
        x = rs.randint(-16, 16, size=(n, rows, cols))
    np.save(f"{d}/x.npy", x.astype(np.float32))


def pieces(ext, n):
    return [(ext * j // n, ext * (j + 1) // n) for j in range(n)]


def check(d, op, n, dim, order, tol=0.0):
    x = np.load(f"{d}/x.npy").astype(np.float64)
    y = np.load(f"{d}/out/y.npy").astype(np.float64)
    mag = np.abs(x).sum(axis=0)
    bad = 0

    def differ(got, want, m):
        if tol == 0.0:
            return not np.array_equal(got, want)
        return not np.all(np.abs(got - want) <= tol * m)

    if op == "all_gather":
        full = np.concatenate([x[s] for s in order], axis=dim)
        for s in range(n):
            bad += not np.array_equal(y[s], full)
    elif op == "all_reduce":
        total = x.sum(axis=0)
        for s in range(n):
            bad += differ(y[s], total, mag)
    else:
        total = x.sum(axis=0)
        ext = total.shape[dim]
        for i, s in enumerate(order):
            lo, hi = pieces(ext, n)[i]
            want = total[lo:hi] if dim == 0 else total[:, lo:hi]
            m = mag[lo:hi] if dim == 0 else mag[:, lo:hi]
            got = y[s][: hi - lo] if dim == 0 else y[s][:, : hi - lo]
            bad += differ(got, want, m)
    if bad:
        print(f"FAIL {op}: {bad} of {n} devices differ from the NumPy result")
        sys.exit(1)


if __name__ == "__main__":
    if sys.argv[1] == "write":
        write(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]),
              int(sys.argv[6]), len(sys.argv) > 7 and sys.argv[7] == "float")
    else:
        check(sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5]),
              [int(v) for v in sys.argv[6].split(",")],
              float(sys.argv[7]) if len(sys.argv) > 7 else 0.0)
