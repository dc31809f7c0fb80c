#!/usr/bin/env bash
# tests/sweep_energy.sh: energy in sweeps (issue 27). A panel's
# op_log_summary sums its points' energy_j, static_j and energy_by_class_j
# and gives avg_power_w over the summed kernel time; the report's table
# has energy and power columns; figures/energy.dat stacks each row's
# energy by component class (in the unit its header names), and the
# report shows the figure.
# Environment: CUBESIM_BIN, CUBESIM_SOURCE_DIR (ctest sets them).
set -u
. "${CUBESIM_SOURCE_DIR:?CUBESIM_SOURCE_DIR must name the source tree}/tests/lib/script.sh"
fail=0
gemm_spec "$tmp/s.yaml" e "{n: 128, k: 128}" "{m: [128, 512]}"
"$bin" sweep "$tmp/s.yaml" --out "$tmp/o" --no-progress >"$tmp/log" 2>&1 ||
        { echo "FAIL: the sweep exits $?"; cat "$tmp/log"; exit 1; }
python3 - "$tmp/o" <<'EOF' || fail=1
import json, sys, re
d = sys.argv[1]
sw = json.load(open(d + "/sweep.json"))
pn = sw["panels"][0]; pts = pn["points"]; s = pn["op_log_summary"]
ok = True
def want(c, what):
    global ok
    if not c: print("FAIL:", what); ok = False
def close(a, b): return abs(a - b) <= 1e-9 * max(abs(a), abs(b), 1e-30)
want(close(s["energy_j"], sum(p["energy_j"] for p in pts)), "summary energy_j is not the points' sum")
want(close(s["static_j"], sum(p["static_j"] for p in pts)), "summary static_j")
want(close(sum(s["energy_by_class_j"].values()), s["energy_j"]), "summary energy by class does not sum to energy_j")
want(close(s["avg_power_w"], s["energy_j"] / (s["kernel_ps_total"] * 1e-12)), "summary avg_power_w")
rep = open(d + "/report.md").read()
want("| energy (J) | avg power (W) |" in rep, "the report has no energy columns")
want("| %.4g | %.4g |" % (pts[0]["energy_j"], pts[0]["avg_power_w"]) in rep, "point 0's energy in the report")
want("](figures/energy.png)" in rep, "the report shows no energy figure")
dat = open(d + "/figures/energy.dat").read().splitlines()
unit = re.match(r"# in (\S+)$", dat[1]).group(1)
scale = {"J": 1, "mJ": 1e-3, "µJ": 1e-6, "nJ": 1e-9}[unit]
want(dat[2].split()[0] == "row" and dat[2].split()[1:] == list(pts[0]["energy_by_class_j"].keys()),
     "energy.dat's columns are not the classes: %s" % dat[2])
rows = dat[3:]
want(len(rows) == 2, "energy.dat has %d rows, not a row per point" % len(rows))
for r, p in zip(rows, pts):
    vals = [float(v) * scale for v in r.split()[1:]]
    want(abs(sum(vals) - p["energy_j"]) <= 1e-4 * p["energy_j"], "a stacked bar is not the point's energy")
sys.exit(0 if ok else 1)
EOF
if command -v "${CUBESIM_GNUPLOT:-gnuplot}" >/dev/null; then
        [ -s "$tmp/o/figures/energy.png" ] || { echo "FAIL: energy.png not drawn"; fail=1; }
fi
[ $fail -eq 0 ] && echo "sweep_energy: ok"
exit $fail
