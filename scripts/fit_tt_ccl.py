#!/usr/bin/env python3
"""scripts/fit_tt_ccl.py: fit the Ethernet link's per-message cost and the
collectives' worker count and message size to tt-metal's measured Wormhole
collectives (benches/data/tt_ccl.csv), by grid search over the bench
validate-tt-ccl.

Free values (every other link number is documented, docs/tt-sources.md; the
workers per direction follow tt-metal's all-gather rule, 1, 2 or 4 by the
bytes a link carries, a ring reduce-scatter of at most 512 KiB a device is
tt-metal's direct op, a reduce-scatter syncs with its neighbour every 4
packets on a ring, 20 on a line, each direction's workers open and close
their fabric connections through a mux, as tt-metal's do, and a line's
gathers, and a ring's below 64 pages a device, multicast from one worker a
link through router stages, ADR 0048 and 0055):

  system.inter_sip.message_ns  each message's handling by the link's
                               Ethernet core (tt-metal documents none): on
                               a line fabric a stage beside the wire, which
                               carries the bytes and the fabric's
                               documented framing at 12.5 GB/s; on the
                               ring fabric it holds the wire (ADR 0054)
  chunk_bytes                  bytes per message
  pipeline                     at least this many messages a piece
  launch_skew_ns               system.launch_skew_ns: how long after the
                               first device the host's launch reaches the
                               last (the benchmark's time is each device's
                               own kernel time, the longest of them, so a
                               device that waits at a barrier for a later
                               one counts the wait; tt-metal names the
                               skew, documents no figure; ADR 0055)
  direct_fixed_ns              the direct reduce-scatter's fixed cost a
                               call, beyond the steps the model runs
                               (its factory names "the per-core fixed
                               cost (kernel launch + fabric connection
                               open/close)", documents no figure; ADR
                               0057)
  core_ns                      system.inter_sip.core_ns: each fabric
                               packet's handling by the link's Ethernet
                               cores, shared by its two directions
                               (tt-metal documents no figure; ADR 0060)

For each point of the grid it runs `cubesim bench run validate-tt-ccl
--json` (rows above max_bytes, default 1 GiB as in the bench itself,
extrapolated at their configuration's steady rate; a smaller --max-bytes
is faster but fits a different objective) and takes the MAPE over all
rows. It prints the best point and, as a check that the fit does
not only memorise the rows, a leave-one-op-out cross-validation: for each
op, the point best on the other two ops and that point's MAPE on the op
left out. Usage (from the repository root, after building):

    scripts/fit_tt_ccl.py [--bin build/cubesim] [--max-bytes N] [--jobs N] [--set K=V ...]

--set holds a bench parameter at a value at every point, out of the grid
if it is one of its keys: the machine files' message_ns is held at 500 ns
(`--set message_ns=500`, ADR 0055).
"""
import argparse
import concurrent.futures
import itertools
import json
import subprocess
import sys

OPS = ("all_gather", "reduce_scatter", "all_reduce")
GRID = {
    "message_ns": (400, 500, 600),
    "chunk_bytes": (32768, 65536),
    "pipeline": (2,),
    # the wider grids of ADR 0055 and 0057 (skew 0-2500, fixed cost 0-5000)
    # chose 1000 and 3500 ns; their neighbours are kept
    "launch_skew_ns": (750, 1000, 1250),
    "direct_fixed_ns": (3000, 3500, 4000),
    "core_ns": (0, 170, 180, 190, 200, 210, 220),
}
# The ablation at the best point: each mechanism replaced by what the model
# did without it (2 workers everywhere; no one-shot reduce-scatter; no
# reduce-scatter syncs; no fabric connections through a mux; no multicast
# line gathers; the one-shot path for tt-metal's direct reduce-scatter; no
# multicast gathers on a ring; every device launched at once; a
# reduce-scatter's workers by the all-gather's rule; no fixed cost of the
# direct op beyond its steps; no Ethernet cores shared by a link's two
# directions; senders that never wait for the fabric's slots).
ABLATION = {
    "workers 2 (no rule)": {"workers": 2},
    "the all-gather's worker rule for reduce-scatters": {"rs_rule": 0},
    "no one-shot": {"oneshot_bytes": 0},
    "no syncs": {"syncs": 0},
    "no mux connections": {"mux": 0},
    "no multicast line gather": {"mcast": 0},
    "no direct reduce-scatter (the one-shot path)": {"direct": 0},
    "no ring multicast gather": {"mcast_pages": 0},
    "no launch skew": {"launch_skew_ns": 0},
    "no direct op fixed cost": {"direct_fixed_ns": 0},
    "no shared Ethernet cores": {"core_ns": 0},
    "no slots": {"slots": 0},
    "none of them": {"workers": 2, "oneshot_bytes": 0, "syncs": 0, "mux": 0, "mcast": 0,
                     "launch_skew_ns": 0, "direct_fixed_ns": 0, "core_ns": 0, "slots": 0},
}


def run(binary, max_bytes, point, fixed=()):
    point = {**dict(kv.split("=", 1) for kv in fixed), **point}
    out_dir = "/tmp/fit_tt_ccl/" + "_".join(f"{k}{v}" for k, v in point.items())
    cmd = [binary, "bench", "run", "validate-tt-ccl", "--json", "--set", "figures=0",
           "--set", f"max_bytes={max_bytes}", "--out", out_dir]
    for k, v in point.items():
        cmd += ["--set", f"{k}={v}"]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return json.loads(out)["rows"]


def mape(rows, ops=OPS):
    errs = [abs(r["error_pct"]) for r in rows if r["op"] in ops]
    return sum(errs) / len(errs)


def small_within(rows, limit=20.0, small=65536):
    """(rows of at most `small` bytes within limit %, rows of at most `small` bytes)"""
    sm = [r for r in rows if r["bytes"] <= small]
    return sum(abs(r["error_pct"]) <= limit for r in sm), len(sm)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default="build/cubesim")
    ap.add_argument("--max-bytes", type=int, default=1 << 30)
    ap.add_argument("--jobs", type=int, default=1, help="bench runs at once")
    ap.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                    help="a bench parameter held at VALUE at every point (e.g. direct=0)")
    args = ap.parse_args()
    held = {kv.split("=", 1)[0] for kv in args.set}
    grid = {k: v for k, v in GRID.items() if k not in held}
    points = [dict(zip(grid.keys(), v)) for v in itertools.product(*grid.values())]
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        results = list(zip(points, pool.map(lambda p: run(args.bin, args.max_bytes, p, args.set), points)))
        for point, rows in results:
            print(f"{point}: MAPE {mape(rows):.1f}%", file=sys.stderr)
        best, rows = min(results, key=lambda pr: mape(pr[1]))
        print(f"best: {best}: MAPE {mape(rows):.1f}% over {len(rows)} rows")
        for op in OPS:
            print(f"  {op}: MAPE {mape(rows, (op,)):.1f}%")
        print("  rows of at most 64 KiB within 20%%: %d of %d" % small_within(rows))
        print("ablation (at the best point):")
        changes = list(ABLATION.items())
        ablated = pool.map(lambda c: run(args.bin, args.max_bytes, {**best, **c[1]}, args.set),
                           changes)
        for (name, _), r in zip(changes, ablated):
            per_op = ", ".join(f"{op} {mape(r, (op,)):.1f}%" for op in OPS)
            print(f"  {name}: MAPE {mape(r):.1f}% ({per_op})")
    print("leave one op out:")
    for op in OPS:
        rest = tuple(o for o in OPS if o != op)
        p, r = min(results, key=lambda pr: mape(pr[1], rest))
        print(f"  fitted on {'+'.join(rest)}: {p}: MAPE {mape(r, rest):.1f}% there, "
              f"{mape(r, (op,)):.1f}% on {op}")


if __name__ == "__main__":
    main()
