#!/usr/bin/env bash
# bench sim-speed on a small case: engine-hold's event count is its
# closed form (procs x iters plus one start per process), and the kernel's
# events and requests served at arrival are those `run` reports for the
# same job; the rates are events / seconds. Bad parameters exit 2. (It
# prints speeds; nothing here passes or fails on one. wall_s is printed
# to the microsecond, so a rate is checked to 0.1%.)
set -euo pipefail
bin=${CUBESIM_BIN:?}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$bin" bench run sim-speed --set seq_len=512 --set procs=4 --set iters=1000 --json >"$tmp/b"
"$bin" run gqa_prefill --set model=llama3-70b --set dtype=bf16 --set causal=1 \
        --set seq_len=512 --set q_len=512 --json >"$tmp/r"
python3 - "$tmp/b" "$tmp/r" <<'PY'
import json, sys
b = json.load(open(sys.argv[1])); r = json.load(open(sys.argv[2]))
bad = []
if b["hold_events"] != 4 * 1000 + 4: bad.append("hold_events %d" % b["hold_events"])
for k in ("events", "bookings", "sim_ps"):
    if b[k] != r[k] or b[k] <= 0: bad.append("%s: bench %d, run %d" % (k, b[k], r[k]))
for rate, n, s in (("hold_events_per_s", b["hold_events"], b["hold_wall_s"]),
                   ("events_per_s", b["events"], b["wall_s"]),
                   ("events_and_bookings_per_s", b["events"] + b["bookings"], b["wall_s"])):
    if abs(b[rate] - n / s) > 1e-3 * b[rate]: bad.append("%s %g, want %g" % (rate, b[rate], n / s))
if abs(b["events_of_hold"] - b["events_per_s"] / b["hold_events_per_s"]) > 1e-3:
    bad.append("events_of_hold")
if bad: print("sim-speed:", "; ".join(bad)); sys.exit(1)
PY
"$bin" bench run sim-speed --set seq_len=512 --set procs=4 --set iters=1000 >"$tmp/t"
grep -q 'requests served at arrival' "$tmp/t"
grep -q '% of engine-hold)' "$tmp/t"
rc=0
"$bin" bench run sim-speed --set seq_len=1 2>"$tmp/e" || rc=$?
[ "$rc" = 2 ] || { echo "seq_len=1: exit $rc, want 2"; cat "$tmp/e"; exit 1; }
grep -q 'seq_len' "$tmp/e"
echo "sim-speed: counts agree with run, rates are counts over seconds"
