"""tests/lib/bfp_model.py: a NumPy model of the block-float dtypes bfp8_b and
bfp4_b, and the checks tests/bfp_numpy.sh runs against cubesim's data mode.

The format (include/cubesim/tl.h): along the last axis, every group of 16
consecutive elements shares an exponent; each element keeps a sign and
`bits` magnitude bits (7 for bfp8_b, 3 for bfp4_b). With the group's
largest magnitude big = f * 2^e (f in [0.5, 1)), an element becomes a
multiple of 2^(e - bits): round half to even, at most 2^bits - 1 steps.

Usage: bfp_model.py write DIR SEED     write a.npy, b.npy, eye.npy into DIR
       bfp_model.py check DIR DTYPE    compare DIR/out_eye/c.npy, DIR/out_rand/c.npy
       bfp_model.py same DTYPE C1 C2   C1.npy and C2.npy (two tilings of one
                                       problem) are equal and representable
"""
import sys

import numpy as np

BITS = {"bfp8_b": 7, "bfp4_b": 3}


def bfp_round(x, dtype):
    """x (float32, any shape) rounded to dtype, groups of 16 along the last axis."""
    bits = BITS[dtype]
    x = np.asarray(x, dtype=np.float32)
    rows = x.reshape(-1, x.shape[-1]).astype(np.float64)
    out = np.empty_like(rows)
    n = rows.shape[1]
    for g in range(0, n, 16):
        blk = rows[:, g:g + 16]
        big = np.max(np.abs(blk), axis=1, keepdims=True)
        _, e = np.frexp(big)
        q = np.rint(np.ldexp(np.abs(blk), bits - e))
        q = np.minimum(q, 2 ** bits - 1)
        q = np.where(big > 0, q, 0.0)
        out[:, g:g + 16] = np.sign(blk) * np.ldexp(q, e - bits)
    return out.astype(np.float32).reshape(x.shape)


def block_step(x, dtype):
    """Per element: the rounding step 2^(e - bits) of its group in x."""
    bits = BITS[dtype]
    rows = np.abs(np.asarray(x, dtype=np.float64)).reshape(-1, x.shape[-1])
    step = np.empty_like(rows)
    for g in range(0, rows.shape[1], 16):
        big = np.max(rows[:, g:g + 16], axis=1, keepdims=True)
        _, e = np.frexp(big)
        step[:, g:g + 16] = np.ldexp(1.0, e - bits)
    return step.reshape(x.shape)


def write(d, seed):
    rng = np.random.default_rng(seed)
    m, k, n = 64, 96, 96
    # Rows at very different scales, a zero group, and exact ties.
    a = rng.standard_normal((m, k)) * np.exp2(rng.integers(-20, 20, size=(m, 1)))
    a[3, 16:32] = 0.0
    # Ties: with 1.0 the largest, 0.625 is 2.5 steps of bfp4_b, 5 * 2^-7 is
    # 2.5 steps of bfp8_b; half to even rounds both down.
    a[5, 0:16] = [1.0, 0.625] + [5 * 2 ** -7] * 14
    b = rng.standard_normal((k, n))
    np.save(f"{d}/a.npy", a.astype(np.float32))
    np.save(f"{d}/b.npy", b.astype(np.float32))
    np.save(f"{d}/eye.npy", np.eye(k, n, dtype=np.float32))


def check(d, dtype):
    a = np.load(f"{d}/a.npy")
    b = np.load(f"{d}/b.npy")
    ra, rb = bfp_round(a, dtype), bfp_round(b, dtype)
    # The model rounds: a changes, and rounding again changes nothing.
    assert np.any(ra != a), "the model left the input unchanged"
    assert np.array_equal(bfp_round(ra, dtype), ra), "the model is not idempotent"
    # A . I in fp32 is exact, so cubesim's C must equal the model's A bit for bit.
    c = np.load(f"{d}/out_eye/c.npy")
    if not np.array_equal(c, ra):
        bad = np.argwhere(c != ra)[:5]
        raise SystemExit(f"FAIL {dtype}: A . I differs from the model at {bad.tolist()}: "
                         f"cubesim {[c[tuple(i)] for i in bad]} model {[ra[tuple(i)] for i in bad]}")
    # A . B: fp32 accumulation order may move a value across a rounding
    # boundary, so allow one step of its group; the values must be on the grid.
    c = np.load(f"{d}/out_rand/c.npy")
    ref = bfp_round((ra.astype(np.float64) @ rb.astype(np.float64)).astype(np.float32), dtype)
    step = block_step(ref, dtype)
    err = np.abs(c.astype(np.float64) - ref)
    if np.any(err > step * 1.0001):
        i = np.unravel_index(np.argmax(err / step), err.shape)
        raise SystemExit(f"FAIL {dtype}: A . B at {i}: cubesim {c[i]} model {ref[i]} "
                         f"(step {step[i]})")
    if not np.array_equal(bfp_round(c, dtype), c):
        raise SystemExit(f"FAIL {dtype}: cubesim's C is not representable in {dtype}")
    print(f"ok {dtype}: A . I exact, A . B within one step (max {np.max(err / step):.3f})")


def same(dtype, p1, p2):
    c1, c2 = np.load(p1), np.load(p2)
    if c1.shape != c2.shape or not np.array_equal(c1, c2):
        n = int(np.sum(c1 != c2)) if c1.shape == c2.shape else -1
        raise SystemExit(f"FAIL {dtype}: the tilings differ ({n} elements): {p1} {p2}")
    for c, p in ((c1, p1), (c2, p2)):
        bad = int(np.sum(bfp_round(c, dtype) != c))
        if bad:
            raise SystemExit(f"FAIL {dtype}: {bad} values of {p} are not representable")
    print(f"ok {dtype}: two tilings, equal and representable")


if __name__ == "__main__":
    if sys.argv[1] == "write":
        write(sys.argv[2], int(sys.argv[3]))
    elif sys.argv[1] == "same":
        same(sys.argv[2], sys.argv[3], sys.argv[4])
    else:
        check(sys.argv[2], sys.argv[3])
