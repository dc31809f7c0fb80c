#!/usr/bin/env bash
# What a sweep's report and sweep.json tell: each point's bounds, bound_by
# and of_bound; rooflines from each point's own HBM bandwidth (never above
# 100% when a point doubles it); TFLOP/s, of-peak and of-bound columns;
# a warning for a point that leaves cubes or PEs idle; the terms; the
# dispatch figure's "other" slice broken down; the headline's model presets.
set -euo pipefail
bin=${CUBESIM_BIN:?}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
check() {
        local what=$1; shift
        if ! "$@"; then echo "FAIL: $what"; fail=1; fi
}

cat >"$tmp/roof.yaml" <<'YAML'
version: 1
name: roof
kernel: gqa_decode
grid:
  cube.hbm.channel_bw_gbps: [51.2, 204.8]
  seq_len: [2048, 4096]
figure: {x: seq_len, roofline_bytes_per_x: 4096}
YAML
"$bin" sweep "$tmp/roof.yaml" --out "$tmp/roof" --no-figures >/dev/null
python3 - "$tmp/roof/sweep.json" <<'PY'
import json, sys
sw = json.load(open(sys.argv[1]))
pts = sw["panels"][0]["points"]
for p in pts:
    for k in ("bounds", "bound_by", "of_bound", "tflops", "hbm_bw_bytes_per_s"):
        assert k in p, "point lacks " + k
    assert 0 <= p["of_bound"] <= 1, p["of_bound"]
    assert p["of_roofline"] <= 1, ("roofline above 100%", p["params"], p["of_roofline"])
    want = -(-p["params"]["seq_len"] * 4096 * 10**12 // p["hbm_bw_bytes_per_s"])
    assert abs(p["hbm_roofline_ps"] - want) <= 1, (p["hbm_roofline_ps"], want)
fast = [p for p in pts if p["params"]["cube.hbm.channel_bw_gbps"] == 204.8]
assert fast and all(p["hbm_bw_bytes_per_s"] == 4 * 16 * 204800000000 for p in fast)
PY
grep -q "own HBM bandwidth per point" "$tmp/roof/figures/time_roof.gp" ||
        { echo "FAIL: the figure's rooflines are not the points' own"; fail=1; }

cat >"$tmp/idle.yaml" <<'YAML'
version: 1
name: idle
kernel: gqa_decode_short
grid:
  kv_per_cube: [1, 8]
YAML
"$bin" sweep "$tmp/idle.yaml" --out "$tmp/idle" --no-figures >/dev/null
r="$tmp/idle/report.md"
check "idle warning for kv_per_cube=8" grep -q "Warning:\*\* point 1 (kv_per_cube=8) leaves 3 of 4 cubes and 48 of 64 PEs idle" "$r"
check "no idle warning for kv_per_cube=1" test "$(grep -c 'Warning:\*\*' "$r")" -eq 1
check "columns" grep -q "| TFLOP/s | of peak | bound by | of bound |" "$r"
check "terms: sim time" grep -q "\*sim time\* is launch to completion" "$r"
check "terms: time-weighted" grep -q "kernel-time-weighted mean" "$r"
check "other broken down" grep -q "The dispatch figure's \*other\* slice holds" "$r"

"$bin" bench run milestone-gqa-headline --out "$tmp/head" --set panels=decode-long \
        --set models=llama3-8b,llama3-70b,qwen2-72b --set decode_contexts=4096 --set figures=0 \
        >/dev/null 2>&1
r="$tmp/head/report.md"
check "model presets table" grep -q "| llama3-70b | 64 | 8 | 128 | 8 |" "$r"
check "shared shape noted" grep -q "Note: llama3-70b and qwen2-72b share one attention shape" "$r"
check "no note for a lone shape" test "$(grep -c '^Note:' "$r")" -eq 1
[ $fail -eq 0 ] && echo "sweep_report: bounds, own rooflines, idle warnings, terms and presets"
exit $fail
