#!/usr/bin/env python3
"""scripts/fit_tt_ccl.py: fit the Ethernet link's per-message cost and the
collectives' worker count and message size to tt-metal's measured Wormhole
collectives (benches/data/tt_ccl.csv), by grid search over the bench
validate-tt-ccl.

Free values (every other link number is documented, docs/tt-sources.md):

  system.inter_sip.message_ns  each message's cost on a link, on top of its
                               bytes at 12.5 GB/s (the Ethernet core's
                               handling and the fabric's framing and
                               credits; tt-metal documents neither)
  workers                      PEs per direction and device (tt-metal's
                               worker cores per link are chosen by
                               size-thresholded heuristics it does not list)
  chunk_bytes                  bytes per message
  pipeline                     at least this many messages a piece

For each point of the grid it runs `cubesim bench run validate-tt-ccl
--json` (rows above max_bytes, default 16 MiB here, extrapolated at their
configuration's steady rate: the fit's coarser grain) and takes the MAPE
over all rows. It prints the best point and, as a check that the fit does
not only memorise the rows, a leave-one-op-out cross-validation: for each
op, the point best on the other two ops and that point's MAPE on the op
left out. Usage (from the repository root, after building):

    scripts/fit_tt_ccl.py [--bin build/cubesim] [--max-bytes N]
"""
import argparse
import itertools
import json
import subprocess
import sys

OPS = ("all_gather", "reduce_scatter", "all_reduce")
GRID = {
    "message_ns": (250, 400, 500, 600, 750),
    "workers": (1, 2, 3),
    "chunk_bytes": (32768, 65536),
    "pipeline": (1, 2, 4),
}


def run(binary, max_bytes, point):
    cmd = [binary, "bench", "run", "validate-tt-ccl", "--json", "--set", "figures=0",
           "--set", f"max_bytes={max_bytes}", "--out", "/tmp/fit_tt_ccl"]
    for k, v in point.items():
        cmd += ["--set", f"{k}={v}"]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return json.loads(out)["rows"]


def mape(rows, ops=OPS):
    errs = [abs(r["error_pct"]) for r in rows if r["op"] in ops]
    return sum(errs) / len(errs)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default="build/cubesim")
    ap.add_argument("--max-bytes", type=int, default=16 << 20)
    args = ap.parse_args()
    results = []
    for values in itertools.product(*GRID.values()):
        point = dict(zip(GRID.keys(), values))
        rows = run(args.bin, args.max_bytes, point)
        results.append((point, rows))
        print(f"{point}: MAPE {mape(rows):.1f}%", file=sys.stderr)
    best, rows = min(results, key=lambda pr: mape(pr[1]))
    print(f"best: {best}: MAPE {mape(rows):.1f}% over {len(rows)} rows")
    for op in OPS:
        print(f"  {op}: MAPE {mape(rows, (op,)):.1f}%")
    print("leave one op out:")
    for op in OPS:
        rest = tuple(o for o in OPS if o != op)
        p, r = min(results, key=lambda pr: mape(pr[1], rest))
        print(f"  fitted on {'+'.join(rest)}: {p}: MAPE {mape(r, rest):.1f}% there, "
              f"{mape(r, (op,)):.1f}% on {op}")


if __name__ == "__main__":
    main()
