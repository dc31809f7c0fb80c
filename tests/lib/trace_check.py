#!/usr/bin/env python3
"""Check a cubesim Chrome trace: it parses (gzip too); every used track is
named; slices on one track nest or are disjoint (never overlap partially);
every flow id has one start and one end, each inside a slice of its track;
counter samples are in strictly increasing time per counter.

Options: --pes LIST (only these PE pids, and cubes' processes above the
PEs, may hold events), --window T0:T1 (ns: every slice meets it), --expect
KIND ... (kinds that must occur: blocked, dep, ipcq, counter, hbm, link,
dma_lanes). Exit 0 if all holds, else 1 with the first problems."""
import gzip, json, sys
from decimal import Decimal
from collections import defaultdict

def ps(x):
    return int(Decimal(str(x)) * 1000000)

def main(argv):
    path, pes, window, expect = argv[1], None, None, []
    i = 2
    while i < len(argv):
        if argv[i] == "--pes":
            pes = set()
            for part in argv[i + 1].split(","):
                a, _, b = part.partition("-")
                pes.update(range(int(a), int(b or a) + 1))
            i += 2
        elif argv[i] == "--window":
            a, _, b = argv[i + 1].partition(":")
            window = (int(a) * 1000, int(b) * 1000 if b else None)
            i += 2
        elif argv[i] == "--expect":
            expect = argv[i + 1].split(",")
            i += 2
        else:
            raise SystemExit("trace_check: unknown option " + argv[i])
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        doc = json.load(f, parse_float=Decimal)
    evs = doc["traceEvents"]
    bad = []
    named_thread, named_proc = set(), set()
    slices = defaultdict(list)
    flows = defaultdict(lambda: {"s": [], "f": []})
    counters = defaultdict(list)
    n_pes_max = -1
    seen = set()
    for e in evs:
        ph = e["ph"]
        if ph == "M":
            if e["name"] == "thread_name":
                named_thread.add((e["pid"], e["tid"]))
            elif e["name"] == "process_name":
                named_proc.add(e["pid"])
                if e["args"]["name"].count(".") == 2 and ".pe" in e["args"]["name"]:
                    n_pes_max = max(n_pes_max, e["pid"])
        elif ph == "X":
            s = ps(e["ts"])
            slices[(e["pid"], e["tid"])].append((s, s + ps(e["dur"]), e["name"]))
            if e["name"].startswith("blocked on "):
                seen.add("blocked")
            if e["name"] == "hbm":
                seen.add("hbm")
            if e["name"] == "xfer":
                seen.add("link")
            if e["tid"] % 8 == 1 and e["tid"] >= 8 and e["tid"] < 4096:
                seen.add("dma_lanes")
        elif ph in ("s", "f"):
            flows[(e["cat"], e["id"])][ph].append((e["pid"], e["tid"], ps(e["ts"])))
            seen.add(e["cat"])
            if ph == "f" and e.get("bp") != "e":
                bad.append("flow end without bp=e: %s" % e)
        elif ph == "C":
            counters[(e["pid"], e["name"])].append(ps(e["ts"]))
            seen.add("counter")
        else:
            bad.append("unexpected phase %s" % ph)
    for key, v in slices.items():
        if key not in named_thread:
            bad.append("track %s has slices but no name" % (key,))
        if key[0] not in named_proc:
            bad.append("process %s has slices but no name" % key[0])
        if pes is not None and key[0] <= n_pes_max and key[0] not in pes:
            bad.append("PE %s is not selected but has slices" % key[0])
        v.sort(key=lambda x: (x[0], -x[1]))
        stack = []
        for s, e, name in v:
            while stack and stack[-1][1] <= s:
                stack.pop()
            if stack and e > stack[-1][1]:
                bad.append("track %s: %s [%d, %d] overlaps %s [%d, %d] partially"
                           % (key, name, s, e, stack[-1][2], stack[-1][0], stack[-1][1]))
                break
            stack.append((s, e, name))
            if window and (e < window[0] or (window[1] is not None and s > window[1])):
                bad.append("track %s: %s [%d, %d] is outside the window" % (key, name, s, e))
    def inside(pid, tid, t):
        v = slices.get((pid, tid), [])
        return any(s <= t <= e for s, e, _ in v)
    for key, ends in flows.items():
        if len(ends["s"]) != 1 or len(ends["f"]) != 1:
            bad.append("flow %s: %d starts, %d ends" % (key, len(ends["s"]), len(ends["f"])))
            continue
        for ph in "sf":
            pid, tid, t = ends[ph][0]
            if not inside(pid, tid, t):
                bad.append("flow %s: its %s end at %d is in no slice of track %s"
                           % (key, ph, t, (pid, tid)))
    for key, ts in counters.items():
        for a, b in zip(ts, ts[1:]):
            if b <= a:
                bad.append("counter %s: time goes from %d to %d" % (key, a, b))
                break
    for k in expect:
        if k not in seen:
            bad.append("no %s events" % k)
    if bad:
        print("\n".join(bad[:20]))
        print("trace_check: %s: %d problems" % (path, len(bad)))
        return 1
    print("trace_check: %s: %d events, %d tracks, %d flows, %d counters: ok"
          % (path, len(evs), len(slices), len(flows), len(counters)))
    return 0

if __name__ == "__main__":
    sys.exit(main(sys.argv))
