#!/usr/bin/env bash
# The run summary: bounds against closed forms (tests/lib/bounds_check.py)
# on the default machine and with --set overrides that move them, the
# binding resource and how close the run came, and the per-line profile
# in text and JSON.
set -euo pipefail
. "${CUBESIM_SOURCE_DIR:?CUBESIM_SOURCE_DIR must name the source tree}/tests/lib/script.sh"
check="python3 $src/tests/lib/bounds_check.py"

run_check() {  # NAME FLOPS ARGS...: run, then check against the machine and the op_log
        local name=$1 flops=$2; shift 2
        "$bin" run "$@" --json --profile --oplog "$tmp/$name.jsonl" >"$tmp/$name.json"
        "$bin" topo show --format json >"$tmp/$name.topo.json"
        $check "$tmp/$name.json" "$tmp/$name.topo.json" "$tmp/$name.jsonl" $flops
}

# C = A.B, 256^3: 2 m n k FLOPs.
run_check gemm $((2 * 256 * 256 * 256)) gemm
run_check gemm_mk $((2 * 128 * 320 * 192)) gemm --set m=128 --set n=320 --set k=192
run_check softmax "" softmax
run_check decode "" gqa_decode
run_check decode2 "" gqa_decode_opt2
run_check prefill "" gqa_prefill --set seq_len=512

# Writing no records changes nothing in the summary: the composites'
# stages are then summed per feed, not accounted one by one, and the
# work, the bounds and the profile come out the same.
"$bin" run gqa_prefill --set seq_len=512 --json --profile >"$tmp/prefill.norec.json"
cmp -s "$tmp/prefill.json" "$tmp/prefill.norec.json" ||
        { echo "summary differs without --oplog:"; diff "$tmp/prefill.json" "$tmp/prefill.norec.json" | head; exit 1; }

# --set moves the bounds: twice the HBM bandwidth halves the HBM bound,
# half the GEMM MACs doubles the GEMM bound.
"$bin" run gemm --json --set cube.hbm.channel_bw_gbps=102.4 --set pe.gemm.macs_per_cycle=2048 >"$tmp/set.json"
python3 - "$tmp/gemm.json" "$tmp/set.json" <<'PY'
import json, sys
a, b = (json.load(open(p))["bounds"] for p in sys.argv[1:3])
assert abs(b["HBM"] - a["HBM"] / 2) < 0.002, (a["HBM"], b["HBM"])
assert abs(b["PE_GEMM"] - a["PE_GEMM"] * 2) < 0.002, (a["PE_GEMM"], b["PE_GEMM"])
PY

# Text: utilisation, bounds, the binding one, achieved rates, top five lines.
"$bin" run gqa_decode >"$tmp/text"
for want in "busy time and utilisation" "hbm_channel" "<- binding" "binding: HBM" \
            "TFLOP/s GEMM" "GB/s HBM" "top 5 kernel source lines" "kernels/gqa_common.c:"; do
        grep -qF -- "$want" "$tmp/text" || { echo "summary lacks '$want':"; cat "$tmp/text"; exit 1; }
done
[ "$(grep -c 'kernels/gqa_common.c:' "$tmp/text")" -eq 5 ]
# A run that leaves units idle says so; one that uses them all does not.
"$bin" run gqa_decode_short --set kv_per_cube=8 >"$tmp/idle"
grep -q "warning: 3 of 4 cubes and 48 of 64 PEs did no DMA, GEMM or MATH work" "$tmp/idle" ||
        { echo "no idle warning:"; cat "$tmp/idle"; exit 1; }
if grep -q "did no DMA" "$tmp/text"; then echo "idle warning for a run without idle units"; exit 1; fi
# --profile: every line, more than five.
"$bin" run gqa_decode --profile >"$tmp/prof"
[ "$(grep -c 'kernels/gqa_common.c:' "$tmp/prof")" -gt 5 ]
grep -q "time per kernel source line" "$tmp/prof"
echo "run summary: bounds, binding resource and profile agree with closed forms"
