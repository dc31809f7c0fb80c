#!/usr/bin/env bash
# tests/compare.sh: cubesim compare. Two runs: every figure a row with the
# ratio B/A, rows ordered by |log ratio| (a changed binding resource
# first), critical-path shares when the runs have them, Markdown and JSON
# agree. Two sweeps: points matched by panel, parameters and machine; the
# points only one side has are listed.
# Environment: CUBESIM_BIN, CUBESIM_SOURCE_DIR (ctest sets them).
set -u
. "${CUBESIM_SOURCE_DIR:?CUBESIM_SOURCE_DIR must name the source tree}/tests/lib/script.sh"
fail=0
d=$src/tests/data/compare
"$bin" compare "$d/run_a.json" "$d/run_b.json" --format json >"$tmp/runs.json" ||
        { echo "FAIL: compare of two runs exits $?"; fail=1; }
"$bin" compare "$d/run_a.json" "$d/run_b.json" >"$tmp/runs.md" ||
        { echo "FAIL: compare --format md exits $?"; fail=1; }
python3 - "$tmp/runs.json" "$tmp/runs.md" "$d/run_a.json" "$d/run_b.json" <<'EOF' || fail=1
import json, math, sys
out = json.load(open(sys.argv[1])); md = open(sys.argv[2]).read()
a = json.load(open(sys.argv[3])); b = json.load(open(sys.argv[4]))
rows = out["rows"]; ok = True
def want(c, what):
    global ok
    if not c: print("FAIL:", what); ok = False
by = {r["name"]: r for r in rows}
want(out["kind"] == "run", "kind")
want(rows[0]["name"] == "bound_by" and rows[0]["changed"], "a changed bound comes first: %s" % rows[0])
k = by["kernel_ps"]
want(k["a"] == a["kernel_ps"] and k["b"] == b["kernel_ps"], "kernel_ps values")
want(abs(k["ratio"] - b["kernel_ps"] / a["kernel_ps"]) < 1e-9, "kernel_ps ratio")
for key in ("energy_j", "avg_power_w", "utilisation.pe_dma", "link_bytes.noc", "hbm_read_bytes"):
    want(key in by, "no row " + key)
def change(r):
    if "ratio" not in r: return math.inf if r["changed"] else 0
    if r["a"] == r["b"]: return 0
    if r["ratio"] is None or r["ratio"] == 0: return math.inf
    return abs(math.log(r["ratio"]))
ch = [change(r) for r in rows]
want(all(ch[i] >= ch[i + 1] - 1e-12 for i in range(len(ch) - 1)), "rows not largest change first")
want("| kernel_ps | 3097666 | 2325171 | 0.7506 |" in md, "the Markdown row of kernel_ps")
sys.exit(0 if ok else 1)
EOF
# Critical-path shares: by_class over the kernel time, on each side.
python3 - "$d/run_a.json" "$d/run_b.json" "$tmp" <<'EOF'
import json, sys
for i, p in enumerate(sys.argv[1:3]):
    r = json.load(open(p))
    r["critical_path"] = {"by_class": {"pe_dma": r["kernel_ps"] // 2, "hbm": r["kernel_ps"] // (4 - 2 * i)}}
    json.dump(r, open("%s/cp%d.json" % (sys.argv[3], i), "w"))
EOF
"$bin" compare "$tmp/cp0.json" "$tmp/cp1.json" >"$tmp/cp.md"
grep -q '^| critical_path share.hbm | 0.25 | 0.5 | 2 |$' "$tmp/cp.md" ||
        { echo "FAIL: critical-path shares"; grep critical "$tmp/cp.md"; fail=1; }
# Two sweeps: one point more on B's side; the matched ones by time ratio.
gemm_spec "$tmp/s.yaml" s "{n: 64, k: 64}" "{m: [64, 128]}"
"$bin" sweep "$tmp/s.yaml" --out "$tmp/sa" --no-figures --no-progress >/dev/null 2>&1
sed -i 's/m: \[64, 128\]/m: [64, 128, 256]/; s/k: 64}/k: 64, pe.dma.bw_gbps: 32}/' "$tmp/s.yaml"
"$bin" sweep "$tmp/s.yaml" --out "$tmp/sb" --no-figures --no-progress >/dev/null 2>&1
"$bin" compare "$tmp/sa" "$tmp/sb/sweep.json" >"$tmp/sw.md" ||
        { echo "FAIL: compare of two sweeps exits $?"; fail=1; }
grep -q '^- s: m=256$' "$tmp/sw.md" || { echo "FAIL: B's extra point is not listed"; fail=1; }
[ "$(grep -c '^| s: m=' "$tmp/sw.md")" = 2 ] || { echo "FAIL: two matched points"; cat "$tmp/sw.md"; fail=1; }
[ $fail -eq 0 ] && echo "compare: ok"
exit $fail
