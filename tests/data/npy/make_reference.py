#!/usr/bin/env python3
"""tests/data/npy/make_reference.py: regenerate the reference .npy files that
tests/unit/test_npy.c reads. Needs NumPy (Debian: python3-numpy); the tests
themselves do not. Run from anywhere: /usr/bin/python3 make_reference.py

ramp(shape) is the data of the plain float32 files: element i (C order) is
(i - 7) * 0.375, exact in float32, float16 and bfloat16. The test computes
the same formula."""
import os
import struct
import warnings

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))


def path(name):
    return os.path.join(HERE, name)


def ramp(shape):
    n = int(np.prod(shape, dtype=np.int64))
    return ((np.arange(n, dtype=np.float64) - 7) * 0.375).astype(np.float32).reshape(shape)


def raw(name, header, payload, version=1, align=64):
    """A file with a hand-written header dict (for what NumPy no longer writes)."""
    pre = 10 if version == 1 else 12
    h = header.encode("ascii")
    pad = (align - (pre + len(h) + 1) % align) % align
    h = h + b" " * pad + b"\n"
    size = struct.pack("<H" if version == 1 else "<I", len(h))
    with open(path(name), "wb") as f:
        f.write(b"\x93NUMPY" + bytes([version, 0]) + size + h + payload)


def main():
    # float32 in every rank 0..4, and an empty array.
    for name, shape in [("f4_scalar", ()), ("f4_5", (5,)), ("f4_2x3", (2, 3)),
                        ("f4_2x3x4", (2, 3, 4)), ("f4_2x1x3x2", (2, 1, 3, 2)),
                        ("f4_0x3", (0, 3))]:
        np.save(path(name + ".npy"), ramp(shape))

    # Header versions 2.0 and 3.0 (NumPy writes them only when it must).
    for v in (2, 3):
        with open(path("f4_2x3_v%d.npy" % v), "wb") as f:
            np.lib.format.write_array(f, ramp((2, 3)), version=(v, 0))

    # Headers NumPy reads but does not write today: other key order, double
    # quotes, no trailing comma, 16-byte alignment; Python 2's long ints.
    payload = ramp((2, 3)).tobytes()
    raw("f4_2x3_reordered.npy",
        '{"shape": (2,3), "fortran_order": False, "descr": "<f4"}', payload, align=16)
    raw("f4_2x3_py2.npy",
        "{'descr': '<f4', 'fortran_order': False, 'shape': (2L, 3L), }", payload, align=16)

    # float16: values that round, and the same values widened by NumPy.
    x = (np.sin(np.arange(35) * 1.7) * 1000).astype(np.float32).reshape(5, 7)
    np.save(path("f2_5x7.npy"), x.astype(np.float16))
    np.save(path("f2_5x7_as_f4.npy"), x.astype(np.float16).astype(np.float32))

    # bfloat16 as '<u2' raw bits (ramp values are exact in bfloat16), and
    # under the ml_dtypes name.
    bits = (ramp((4, 4)).view(np.uint32) >> 16).astype(np.uint16)
    np.save(path("u2_bf16_4x4.npy"), bits)
    raw("bf16_named_2x2.npy",
        "{'descr': 'bfloat16', 'fortran_order': False, 'shape': (2, 2), }",
        bits.reshape(-1)[:4].tobytes())

    # float64 read as float32: NumPy's cast is the reference (ties to even,
    # overflow to infinity, underflow to zero).
    f8 = np.array([0.1, -2.5, 1e-50, 1e300, -1e300, np.nan, np.inf, -np.inf,
                   3.4028234663852886e38,            # FLT_MAX
                   3.4028235677973362e38,            # just under FLT_MAX + ulp/2
                   3.4028235677973366e38,            # FLT_MAX + ulp/2: tie, to inf
                   1.401298464324817e-45,            # least float32 subnormal
                   7.006492321624085e-46,            # half of it: tie, to 0
                   1.0 + 2.0 ** -24,                 # tie, to 1.0
                   1.0 + 3 * 2.0 ** -24,             # tie, to 1 + 2^-22
                   -0.0], dtype=np.float64)
    np.save(path("f8_mixed.npy"), f8)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        np.save(path("f8_mixed_as_f4.npy"), f8.astype(np.float32))

    # float32 -> float16 rounding by NumPy: for a spread of halves, the exact
    # midpoint to the next half and one float32 ulp either side, both signs;
    # plus specials.
    halves = np.arange(0, 0x7C00, 29, dtype=np.uint16).view(np.float16).astype(np.float32)
    nexts = (np.arange(0, 0x7C00, 29, dtype=np.uint16) + 1).view(np.float16).astype(np.float32)
    mid = ((halves.astype(np.float64) + nexts.astype(np.float64)) / 2).astype(np.float32)
    below = np.nextafter(mid, np.float32(0))
    above = np.nextafter(mid, np.float32(np.inf))
    special = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 65504, 65519.996, 65520,
                        1e-8, 2.0 ** -24, 2.0 ** -25, 3 * 2.0 ** -25, 0.1, 1 / 3,
                        3.4028235e38, 1e-45], dtype=np.float32)
    xs = np.concatenate([special, mid, below, above, -mid, -below, -above]).astype(np.float32)
    np.save(path("f2_rounding_in.npy"), xs)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        np.save(path("f2_rounding_out.npy"), xs.astype(np.float16))


if __name__ == "__main__":
    main()
