#!/usr/bin/env python3
"""scripts/fit_tt_dm.py: fit the [FREE] data-movement keys of the Tenstorrent
machine files to tt-metal's documented data-movement rates.

Reads benches/data/tt_dm_ideal.csv (bytes per cycle per pattern, from
tt-metal's tests/tt_metal/tt_metal/data_movement/documentation/
ideal_performance.md) and the machine files, and prints, per machine, the
values it fits:

  pe.dma.request_ns           per NoC packet, at each end of a transfer.
                              In the model a stream of packet-sized
                              transfers from one core moves P / (P / L + r)
                              bytes per cycle (P: cube.noc.packet_bytes, L:
                              one NoC's bytes per cycle, r: the request in
                              cycles). r minimises the squared relative error
                              over one_to_one, one_from_one, one_to_all and
                              one_from_all, which the model predicts alike.
  pe.dma.mcast_dest_ns        per packet and destination at a multicast's
                              sender: P / (P / L + r + N d) = the documented
                              one_to_all_mcast rate, N the destinations (the
                              compute grid but the sender); one row, one
                              value, so the row is met exactly.
  pe.dma.mcast_linked_dest_ns the same for one_to_all_mcast_linked.

Every other data-movement value of the files is documented (the files and
docs/tt-sources.md cite them); the DRAM rows are not fitted here.
Usage: scripts/fit_tt_dm.py [--csv FILE] (run from the repository root).
"""
import argparse
import csv
import re
import sys

MACHINES = {
    "wormhole_n150": "topologies/tt_wormhole_n150.yaml",
    "blackhole_p150": "topologies/tt_blackhole_p150.yaml",
}
UNICAST = ("one_to_one", "one_from_one", "one_to_all", "one_from_all")


def block_value(text, block, key):
    """The number of `key:` inside the top-level-or-nested map `block:`."""
    m = re.search(r"^(\s*)" + re.escape(block) + r":\s*(#.*)?$", text, re.M)
    if not m:
        sys.exit(f"fit_tt_dm: no '{block}:' map")
    indent = len(m.group(1))
    for line in text[m.end():].splitlines()[1:]:
        if line.strip() and not line.strip().startswith("#"):
            if len(line) - len(line.lstrip()) <= indent:
                break
            k = re.match(r"\s*" + re.escape(key) + r":\s*([0-9.]+)", line)
            if k:
                return float(k.group(1))
    sys.exit(f"fit_tt_dm: no {block}.{key}")


def machine(path):
    text = open(path).read()
    clock_hz = block_value(text, "cpu", "clock_mhz") * 1e6
    nocs = block_value(text, "dma", "channels")
    bw = block_value(text, "dma", "bw_gbps") * 1e9
    return {
        "clock_hz": clock_hz,
        "packet": block_value(text, "noc", "packet_bytes"),
        # one core issues on one NoC (pe.dma.thread_nocs: 1)
        "link": bw / nocs / clock_hz,
        "dests": block_value(text, "cube", "compute_cols") *
                 block_value(text, "cube", "compute_rows") - 1,
    }


def rate(m, r_cycles, extra=0.0):
    return m["packet"] / (m["packet"] / m["link"] + r_cycles + extra)


def fit_request(m, docs):
    """r >= 0 minimising sum ((rate - doc) / doc)^2: golden-section search."""
    def cost(r):
        return sum(((rate(m, r) - d) / d) ** 2 for d in docs)
    lo, hi = 0.0, m["packet"] / m["link"]
    g = (5 ** 0.5 - 1) / 2
    for _ in range(200):
        a, b = hi - g * (hi - lo), lo + g * (hi - lo)
        if cost(a) < cost(b):
            hi = b
        else:
            lo = a
    return (lo + hi) / 2


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--csv", default="benches/data/tt_dm_ideal.csv")
    args = ap.parse_args()
    rows = {}
    with open(args.csv) as f:
        for row in csv.DictReader(f):
            rows[(row["machine"], row["pattern"])] = float(row["documented"])
    for name, path in MACHINES.items():
        m = machine(path)
        docs = [rows[(name, p)] for p in UNICAST if (name, p) in rows]
        r = fit_request(m, docs)
        ns = 1e9 / m["clock_hz"]
        print(f"{name} ({path}): one NoC {m['link']:.1f} B/cycle, packet "
              f"{m['packet']:.0f} B, {m['dests']:.0f} multicast destinations")
        print(f"  pe.dma.request_ns: {r * ns:.3f}   ({r:.2f} cycles; unicast rows "
              + ", ".join(f"{p} {rows[(name, p)]:g}" for p in UNICAST if (name, p) in rows)
              + f" -> {rate(m, r):.2f} B/cycle)")
        for key, pattern in (("mcast_dest_ns", "one_to_all_mcast"),
                             ("mcast_linked_dest_ns", "one_to_all_mcast_linked")):
            doc = rows.get((name, pattern))
            if doc is None:
                continue
            d = (m["packet"] / doc - m["packet"] / m["link"] - r) / m["dests"]
            print(f"  pe.dma.{key}: {max(d, 0) * ns:.3f}   ({d:.3f} cycles per destination; "
                  f"{pattern} {doc:g} B/cycle)")


if __name__ == "__main__":
    main()
