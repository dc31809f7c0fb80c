"""tests/lib/tt_matmul_check.py: tt_matmul's data mode against NumPy.

Usage: tt_matmul_check.py write DIR M K N SEED   write DIR/a.npy, DIR/b.npy
       tt_matmul_check.py check DIR DTYPE [STEPS] compare DIR/out/c.npy (within
                                                  one rounding step of C's dtype, or
                                                  with STEPS that many steps of the
                                                  largest |C| more: an accumulation
                                                  rounded once per K block)
       tt_matmul_check.py expect DIR DTYPE SCALE  write the reference x SCALE to
                                                  DIR/expect/c.npy (for --expect)

The reference rounds A and B to the dtype (bf16 by truncating the fp32
mantissa to 8 bits with round-half-to-even; the block floats with
bfp_model.py), multiplies in float64 and rounds C to the dtype. cubesim
accumulates in fp32 in another order, so C may differ by one rounding step
of C's dtype, plus fp32 accumulation error."""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
from bfp_model import bfp_round, block_step  # noqa: E402


def bf16(x):
    u = np.asarray(x, dtype=np.float32).view(np.uint32).astype(np.uint64)
    u = (u + 0x7FFF + ((u >> 16) & 1)) & 0xFFFF0000
    return u.astype(np.uint32).view(np.float32)


def round_to(x, dtype):
    return bf16(x) if dtype == "bf16" else bfp_round(x, dtype)


def step_of(c, dtype):
    if dtype != "bf16":
        return block_step(c, dtype)
    _, e = np.frexp(np.abs(c.astype(np.float64)))
    return np.ldexp(1.0, e - 8)


def main():
    if sys.argv[1] == "write":
        d, m, k, n, seed = sys.argv[2], *map(int, sys.argv[3:7])
        rng = np.random.default_rng(seed)
        np.save(f"{d}/a.npy", rng.standard_normal((m, k)).astype(np.float32))
        np.save(f"{d}/b.npy", rng.standard_normal((k, n)).astype(np.float32))
        return
    d, dtype = sys.argv[2], sys.argv[3]
    a, b = np.load(f"{d}/a.npy"), np.load(f"{d}/b.npy")
    exact = round_to(a, dtype).astype(np.float64) @ round_to(b, dtype).astype(np.float64)
    ref = round_to(exact.astype(np.float32), dtype)
    if sys.argv[1] == "expect":
        os.makedirs(f"{d}/expect", exist_ok=True)
        np.save(f"{d}/expect/c.npy", (ref * float(sys.argv[4])).astype(np.float32))
        return
    c = np.load(f"{d}/out/c.npy")
    k = a.shape[1]
    tol = step_of(ref, dtype) * 1.0001 + 4 * k * 2.0 ** -24 * np.abs(exact).max()
    if len(sys.argv) > 4:
        tol = tol + float(sys.argv[4]) * step_of(np.abs(exact).max(), dtype)
    err = np.abs(c.astype(np.float64) - ref)
    if c.shape != ref.shape or np.any(err > tol):
        i = np.unravel_index(np.argmax(err - tol), err.shape)
        raise SystemExit(f"FAIL {dtype}: c{list(i)} = {c[i]}, NumPy {ref[i]} (tolerance {tol[i]})")
    print(f"ok {dtype} {a.shape[0]}x{k}x{b.shape[1]}: max error {err.max():.3g}")


main()
