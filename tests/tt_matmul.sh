#!/usr/bin/env bash
# tests/tt_matmul.sh: the tt_matmul kernel (2D-multicast blocked matmul).
# Data mode matches NumPy within the dtype's rounding (tests/lib/
# tt_matmul_check.py) for every operand placement, uneven shapes and grids,
# output parts and all three dtypes, on both Tenstorrent machines. In
# op_log mode, the multicasts are counted against their closed form, and a
# bad grid is a located parameter error (exit 2).
set -euo pipefail
. "${CUBESIM_SOURCE_DIR:?CUBESIM_SOURCE_DIR must name the source tree}/tests/lib/script.sh"
wh=$src/topologies/tt_wormhole_n150.yaml
bh=$src/topologies/tt_blackhole_p150.yaml

. "$src/tests/lib/numpy.sh"
py=$(numpy_python)

check() {  # check TOPO M K N DTYPE ARGS...
        local topo=$1 m=$2 k=$3 n=$4 dt=$5
        shift 5
        rm -rf "$tmp/out"
        "$py" "$src/tests/lib/tt_matmul_check.py" write "$tmp" "$m" "$k" "$n" 3
        "$bin" run tt_matmul --topo "$topo" --mode data --inputs "$tmp" --outputs "$tmp/out" \
                --set dtype="$dt" "$@" >/dev/null
        "$py" "$src/tests/lib/tt_matmul_check.py" check "$tmp" "$dt"
}

check "$wh" 256 256 256 bf16
check "$wh" 256 256 256 bf16 --set in0=dram --set in1=l1 --set out=dram
check "$wh" 96 160 200 bf16 --set grid_x=3 --set grid_y=2 --set in0=dram --set in1=dram
check "$wh" 512 96 512 bf16 --set grid_x=2 --set grid_y=2 --set out_block_h=2 --set out_block_w=3
check "$wh" 256 512 128 bfp8_b
check "$wh" 256 512 128 bfp4_b --set in0=dram
check "$bh" 416 320 448 bf16
check "$bh" 416 320 448 bfp8_b --set in1=l1 --set out=dram

# --expect with the block floats' default tolerance: the reference passes,
# the reference scaled by 1.5 does not (exit 1).
for dt in bfp8_b bfp4_b; do
        "$py" "$src/tests/lib/tt_matmul_check.py" expect "$tmp" $dt 1
        "$bin" run tt_matmul --topo "$wh" --mode data --inputs "$tmp" --expect "$tmp/expect" \
                --set m=416 --set k=320 --set n=448 --set dtype=$dt >/dev/null 2>"$tmp/err" \
                || { cat "$tmp/err" >&2; exit 1; }
        "$py" "$src/tests/lib/tt_matmul_check.py" expect "$tmp" $dt 1.5
        rc=0
        "$bin" run tt_matmul --topo "$wh" --mode data --inputs "$tmp" --expect "$tmp/expect" \
                --set m=416 --set k=320 --set n=448 --set dtype=$dt >/dev/null 2>&1 || rc=$?
        [ "$rc" -eq 1 ] || { echo "FAIL: $dt --expect of a wrong reference: exit $rc" >&2; exit 1; }
done

# Multicasts, op_log mode, 8 x 8 grid, 1024^3, in0_block_w 4: per K block
# (8 of them) each of the 8 row senders and 8 column senders multicasts
# once: 128 records.
"$bin" run tt_matmul --topo "$wh" --set m=1024 --set k=1024 --set n=1024 --set in0_block_w=4 \
        --oplog "$tmp/ops.jsonl" >/dev/null
n=$(grep -c '"op": *"mcast"' "$tmp/ops.jsonl" || true)
[ "$n" -eq 128 ] || { echo "FAIL: $n mcast records, expected 128" >&2; exit 1; }

# A grid larger than the NoC is bad input.
if "$bin" run tt_matmul --topo "$wh" --set grid_x=9 >/dev/null 2>"$tmp/err"; then
        echo "FAIL: grid_x=9 on an 8-column NoC accepted" >&2
        exit 1
fi
grep -q "grid_x 9 x grid_y 8 does not fit in the 8 x 10 NoC" "$tmp/err" \
        || { cat "$tmp/err" >&2; echo "FAIL: message" >&2; exit 1; }
echo "ok"
