#!/usr/bin/env python3
"""Sweep a machine key over a kernel from Python: the time of a GQA decode
as the HBM bandwidth per channel grows.

    PYTHONPATH=python python3 examples/python/machine_sweep.py [--out FILE.png]

Prints the table, and plots it with matplotlib when that is installed (to
FILE.png, default out/machine_sweep.png).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "python"))
import cubesim  # noqa: E402

KEY = "cube.hbm.channel_bw_gbps"
VALUES = [12.8, 25.6, 51.2, 102.4, 204.8]
KERNEL, PARAMS = "gqa_decode", {"seq_len": 16384}


def main() -> int:
    ap = argparse.ArgumentParser(description="sweep a machine key over a kernel")
    ap.add_argument("--out", default="out/machine_sweep.png", help="the figure (PNG)")
    ap.add_argument("--key", default=KEY, help="the machine key to sweep (dotted YAML path)")
    args = ap.parse_args()

    base = cubesim.Machine()
    rows = []
    for v in VALUES:
        r = cubesim.run(KERNEL, topo=base.copy().set(**{args.key: v}), **PARAMS)
        rows.append((v, r.kernel_ps / 1e6, r.bound_by, r.of_bound))
    print(f"{KERNEL} {PARAMS} on the default machine, {args.key} swept")
    print(f"{args.key:>26} {'kernel_us':>10} {'bound_by':>10} {'of_bound':>9}")
    for v, us, by, of in rows:
        print(f"{v:>26} {us:>10.3f} {by:>10} {of:>9.3f}")
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("(matplotlib is not installed: the table only)")
        return 0
    fig, ax = plt.subplots(figsize=(6, 4))
    ax.plot([r[0] for r in rows], [r[1] for r in rows], marker="o")
    ax.set_xscale("log", base=2)
    ax.set_xlabel(args.key)
    ax.set_ylabel("kernel time (us)")
    ax.set_title(f"{KERNEL}, seq_len {PARAMS['seq_len']}")
    ax.grid(True, alpha=0.3)
    os.makedirs(os.path.dirname(args.out) or ".", exist_ok=True)
    fig.savefig(args.out, dpi=120, bbox_inches="tight")
    print(f"figure: {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
