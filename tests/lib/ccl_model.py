"""tests/lib/ccl_model.py: NumPy references of the collectives of kernels/ccl.c.

    ccl_model.py write DIR N ROWS COLS SEED     x.npy [N, ROWS, COLS] of small integers
    ccl_model.py check DIR OP N DIM ORDER       y.npy of the run in DIR/out against it

ORDER is the member order over the devices (comma list, ring_order of
kernels/ccl.c). Small integers sum exactly in fp32 and in bf16 (|sum| <= 256),
so every form must match exactly.
"""
import sys

import numpy as np


def write(d, n, rows, cols, seed):
    rs = np.random.RandomState(seed)
    np.save(f"{d}/x.npy", rs.randint(-16, 16, size=(n, rows, cols)).astype(np.float32))


def pieces(ext, n):
    return [(ext * j // n, ext * (j + 1) // n) for j in range(n)]


def check(d, op, n, dim, order):
    x = np.load(f"{d}/x.npy").astype(np.float64)
    y = np.load(f"{d}/out/y.npy").astype(np.float64)
    bad = 0
    if op == "all_gather":
        full = np.concatenate([x[s] for s in order], axis=dim)
        for s in range(n):
            bad += not np.array_equal(y[s], full)
    elif op == "all_reduce":
        total = x.sum(axis=0)
        for s in range(n):
            bad += not np.array_equal(y[s], total)
    else:
        total = x.sum(axis=0)
        ext = total.shape[dim]
        for i, s in enumerate(order):
            lo, hi = pieces(ext, n)[i]
            want = total[lo:hi] if dim == 0 else total[:, lo:hi]
            got = y[s][: hi - lo] if dim == 0 else y[s][:, : hi - lo]
            bad += not np.array_equal(got, want)
    if bad:
        print(f"FAIL {op}: {bad} of {n} devices differ from the NumPy result")
        sys.exit(1)


if __name__ == "__main__":
    if sys.argv[1] == "write":
        write(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]),
              int(sys.argv[6]))
    else:
        check(sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5]),
              [int(v) for v in sys.argv[6].split(",")])
