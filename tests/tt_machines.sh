#!/usr/bin/env bash
# tests/tt_machines.sh: the Tenstorrent machine files. Each is accepted by
# `cubesim topo check`, has the documented whole-chip figures (Tensix
# count, peak matrix-engine FLOP/s at LoFi, DRAM bandwidth, L1; sources in
# docs/tt-sources.md), and runs a small GEMM in op_log mode and in data
# mode (bf16 and bfp8_b) to completion.
set -euo pipefail
. "${CUBESIM_SOURCE_DIR:?CUBESIM_SOURCE_DIR must name the source tree}/tests/lib/script.sh"
cd "$src"

fail() {
        echo "FAIL: $*" >&2
        exit 1
}

# machine  PEs  peak FLOP/s (2 x 2048 MACs x clock x PEs)  DRAM bytes/s  L1 bytes per PE
check_totals() {
        local f=$1 pes=$2 flops=$3 dram=$4 l1=$5
        "$bin" topo check "$f" >/dev/null || fail "topo check $f"
        "$bin" topo show "$f" --format json >"$tmp/t.json"
        grep -q "\"pes\": $pes," "$tmp/t.json" || fail "$f: expected $pes PEs"
        grep -q "\"peak_gemm_flops_per_s\": $flops," "$tmp/t.json" || fail "$f: peak $flops"
        grep -q "\"hbm_bw_bytes_per_s\": $dram," "$tmp/t.json" || fail "$f: DRAM $dram B/s"
        grep -q "\"tcm_bytes\": $((pes * l1))" "$tmp/t.json" || fail "$f: L1 $l1 B per PE"
        grep -q '"shape": "dual_torus"' "$tmp/t.json" || fail "$f: not a dual torus"
}

check_totals topologies/tt_wormhole_n150.yaml 80 327680000000000 288000000000 $((1464 * 1024))
check_totals topologies/tt_blackhole_p150.yaml 140 774144000000000 512000000000 $((1536 * 1024))

for f in topologies/tt_wormhole_n150.yaml topologies/tt_blackhole_p150.yaml; do
        name=$(basename "$f" .yaml)
        "$bin" run gemm --topo "$f" --set m=256 --set n=256 --set k=256 --json >"$tmp/run.json" \
                || fail "gemm on $f"
        grep -q "\"machine\": \"$name\"" "$tmp/run.json" || fail "$f: no summary"
        for dt in bf16 bfp8_b; do
                "$bin" run gemm --topo "$f" --mode data --set m=64 --set n=96 --set k=64 \
                        --set dtype=$dt --outputs "$tmp/o_$dt" >/dev/null || fail "$dt gemm on $f"
                [ -s "$tmp/o_$dt/c.npy" ] || fail "$f: no c.npy for $dt"
        done
done
echo "ok"
