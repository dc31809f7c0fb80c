#!/usr/bin/env bash
# tests/tt_matmul.sh: the tt_matmul kernel (2D-multicast blocked matmul).
# Its senders' semaphore handshake and rotating A sender (docs/adr/0031)
# are each checked against their absence.
# Data mode matches NumPy within the dtype's rounding (tests/lib/
# tt_matmul_check.py) for every operand placement, uneven shapes and grids,
# output parts and all three dtypes, on both Tenstorrent machines. In
# op_log mode, the multicasts are counted against their closed form, the
# Tenstorrent mechanisms each make a difference, and a bad grid is a
# located parameter error (exit 2).
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
                --set dtype="$dt" --set fp32_acc=1 "$@" >/dev/null
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

# Without fp32_acc the out block accumulates in bf16 (tt-metal's
# packer_l1_acc with fp32_dest_acc_en off): each of the K blocks rounds
# the running sum to bf16, so C is within one bf16 step per K block of
# the reference, and further than the fp32 tolerance.
"$py" "$src/tests/lib/tt_matmul_check.py" write "$tmp" 256 1024 256 5
for acc in 1 0; do
        rm -rf "$tmp/out"
        "$bin" run tt_matmul --topo "$wh" --mode data --inputs "$tmp" --outputs "$tmp/out" \
                --set in0_block_w=2 --set fp32_acc=$acc >/dev/null
        rc=0
        "$py" "$src/tests/lib/tt_matmul_check.py" check "$tmp" bf16 >"$tmp/chk" 2>&1 || rc=$?
        [ "$rc" -eq $((1 - acc)) ] || { cat "$tmp/chk" >&2; echo "FAIL: fp32_acc=$acc check exit $rc" >&2; exit 1; }
        "$py" "$src/tests/lib/tt_matmul_check.py" check "$tmp" bf16 16 \
                || { echo "FAIL: fp32_acc=$acc: beyond 16 K blocks of bf16 steps" >&2; exit 1; }
done
"$py" "$src/tests/lib/tt_matmul_check.py" write "$tmp" 416 320 448 3

# --expect with the block floats' default tolerance: the reference passes,
# the reference scaled by 1.5 does not (exit 1).
for dt in bfp8_b bfp4_b; do
        "$py" "$src/tests/lib/tt_matmul_check.py" expect "$tmp" $dt 1
        "$bin" run tt_matmul --topo "$wh" --mode data --inputs "$tmp" --expect "$tmp/expect" \
                --set m=416 --set k=320 --set n=448 --set dtype=$dt --set fp32_acc=1 >/dev/null 2>"$tmp/err" \
                || { cat "$tmp/err" >&2; exit 1; }
        "$py" "$src/tests/lib/tt_matmul_check.py" expect "$tmp" $dt 1.5
        rc=0
        "$bin" run tt_matmul --topo "$wh" --mode data --inputs "$tmp" --expect "$tmp/expect" \
                --set m=416 --set k=320 --set n=448 --set dtype=$dt --set fp32_acc=1 >/dev/null 2>&1 || rc=$?
        [ "$rc" -eq 1 ] || { echo "FAIL: $dt --expect of a wrong reference: exit $rc" >&2; exit 1; }
done

# Multicasts, op_log mode, 8 x 8 grid, 1024^3, in0_block_w 4: per K block
# (8 of them) each of the 8 row senders and 8 column senders multicasts
# once: 128 records.
"$bin" run tt_matmul --topo "$wh" --set m=1024 --set k=1024 --set n=1024 --set in0_block_w=4 \
        --oplog "$tmp/ops.jsonl" >/dev/null
n=$(grep -c '"op": *"mcast"' "$tmp/ops.jsonl" || true)
[ "$n" -eq 128 ] || { echo "FAIL: $n mcast records, expected 128" >&2; exit 1; }

# K blocks accumulate onto the out block in place (tl_composite's
# accumulate): no vector-unit record at all; packer_l1_acc=0 adds each
# block by a bias pass on PE_MATH, and takes longer.
ns() { "$py" -c 'import json,sys; print(json.load(open(sys.argv[1]))["kernel_ps"])' "$1"; }
for acc in 1 0; do
        "$bin" run tt_matmul --topo "$wh" --set m=1024 --set k=1024 --set n=1024 \
                --set packer_l1_acc=$acc --oplog "$tmp/acc$acc.jsonl" --json >"$tmp/acc$acc.json"
done
n1=$(grep -c '"component": *"pe_math"' "$tmp/acc1.jsonl" || true)
n0=$(grep -c '"component": *"pe_math"' "$tmp/acc0.jsonl" || true)
[ "$n1" -eq 0 ] && [ "$n0" -gt 0 ] \
        || { echo "FAIL: pe_math records: $n1 accumulating, $n0 with bias passes" >&2; exit 1; }
[ "$(ns "$tmp/acc1.json")" -lt "$(ns "$tmp/acc0.json")" ] \
        || { echo "FAIL: accumulating is not faster than the bias passes" >&2; exit 1; }

# pe.cpu.program_ns, the program's fixed launch and end, adds to the
# kernel time exactly (every PE starts its body that much later).
"$bin" run tt_matmul --topo "$wh" --set m=512 --set k=512 --set n=512 \
        --set pe.cpu.program_ns=0 --json >"$tmp/p0.json"
"$bin" run tt_matmul --topo "$wh" --set m=512 --set k=512 --set n=512 \
        --set pe.cpu.program_ns=1234 --json >"$tmp/p1.json"
[ $(( $(ns "$tmp/p1.json") - $(ns "$tmp/p0.json") )) -eq 1234000 ] \
        || { echo "FAIL: program_ns=1234 adds $(( $(ns "$tmp/p1.json") - $(ns "$tmp/p0.json") )) ps" >&2; exit 1; }

# The GEMM bound counts the fidelity passes: 4160^3 in bf16 at HiFi2 is
# bound by PE_GEMM (twice its LoFi bound), not by HBM.
for fid in lofi hifi2; do
        "$bin" run tt_matmul --topo "$wh" --set m=4160 --set k=4160 --set n=4160 --set in0=dram \
                --set out=dram --set fidelity=$fid --json >"$tmp/b$fid.json"
done
"$py" - "$tmp" <<'PY'
import json, sys
lo, h2 = (json.load(open(f"{sys.argv[1]}/b{f}.json")) for f in ("lofi", "hifi2"))
assert h2["bound_by"] == "PE_GEMM", h2["bound_by"]
assert abs(h2["bounds"]["PE_GEMM"] - 2 * lo["bounds"]["PE_GEMM"]) < 1e-3, (h2["bounds"], lo["bounds"])
assert h2["bounds"]["PE_GEMM"] > h2["bounds"]["HBM"], h2["bounds"]
PY

# The Tenstorrent mechanisms of ADR 0025, each against its absence:
# - the unpackers' L1 read rate (pe.gemm.operand_bytes_per_cycle) bounds
#   the FPU at HiFi2 on a sharded output's one-row subblocks;
# - a NoC interface's own inbound path (pe.dma.duplex) lets B's reader
#   take DRAM reads in while its multicasts go out;
# - double-buffered operand pages (buffers=2) let a reader fetch the next
#   K block during the compute.
kt() { "$bin" run tt_matmul --topo "$wh" --json "$@" \
        | "$py" -c 'import json,sys; print(json.load(sys.stdin)["kernel_ps"])'; }
sq=(--set m=1024 --set k=1024 --set n=1024 --set fidelity=hifi2)
big=(--set m=2048 --set k=2048 --set n=2048 --set fidelity=hifi2)
small=(--set m=512 --set k=1024 --set n=1024)
[ "$(kt "${big[@]}")" -gt "$(kt "${big[@]}" --set pe.gemm.operand_bytes_per_cycle=0)" ] \
        || { echo "FAIL: the unpackers' rate does not slow HiFi2 1x4 subblocks" >&2; exit 1; }
[ "$(kt "${small[@]}")" -lt "$(kt "${small[@]}" --set pe.dma.duplex=0)" ] \
        || { echo "FAIL: duplex NoC interfaces are not faster" >&2; exit 1; }
[ "$(kt "${sq[@]}")" -lt "$(kt "${sq[@]}" --set buffers=1)" ] \
        || { echo "FAIL: double buffering is not faster than one page" >&2; exit 1; }

# The senders' handshake (tt-metal's in0/in1 sender and receiver
# semaphores; docs/adr/0031): with one page per buffer, row 1's A sender
# (PE 8) multicasts K block i+1 only after its receiver PE 9 has finished
# multiplying block i (popped its page and reserved it again, then
# incremented the sender's semaphore); with handshake=0 it goes earlier.
# (a_rotate=0: column 0 sends every K block of A.)
hs() {
        "$bin" run tt_matmul --topo "$wh" --set m=1024 --set k=1024 --set n=1024 --set in0_block_w=4 \
                --set a_rotate=0 --set buffers=1 --set handshake=$1 --oplog "$tmp/hs$1.jsonl" >/dev/null
        "$py" - "$tmp/hs$1.jsonl" <<'PY'
import json, sys
mc, gm = [], []
for l in open(sys.argv[1]):
    r = json.loads(l)
    if r["pe"] == "sip0.cube0.pe8" and r["op"] == "mcast" and r["params"]["tag"] == 1:
        mc.append(r)
    elif r["pe"] == "sip0.cube0.pe9" and r["component"] == "pe_gemm":
        gm.append(r)
per = len(gm) // len(mc)
assert len(mc) == 8 and per * len(mc) == len(gm), (len(mc), len(gm))
ends = [max(g["end_ps"] for g in gm[i * per:(i + 1) * per]) for i in range(len(mc))]
print("after" if all(mc[i + 1]["start_ps"] >= ends[i] for i in range(len(mc) - 1)) else "before")
PY
}
[ "$(hs 1)" = after ] || { echo "FAIL: a multicast went before its receiver's page was free" >&2; exit 1; }
[ "$(hs 0)" = before ] || { echo "FAIL: without the handshake the sender never ran ahead" >&2; exit 1; }

# The rotating A sender (docs/adr/0031): A block-sharded in L1, K block b
# is multicast by the column whose shard holds it, so at 1024^3 with
# in0_block_w 4 (8 blocks, one per column's shard) every one of the 64
# PEs sends A once; with a_rotate=0 only column 0's 8 PEs send.
senders() {
        "$bin" run tt_matmul --topo "$wh" --set m=1024 --set k=1024 --set n=1024 --set in0_block_w=4 \
                --set a_rotate=$1 --oplog "$tmp/rot$1.jsonl" >/dev/null
        "$py" -c 'import json,sys
print(len({r["pe"] for r in map(json.loads, open(sys.argv[1]))
           if r["op"] == "mcast" and r["params"]["tag"] == 1}))' "$tmp/rot$1.jsonl"
}
[ "$(senders 1)" -eq 64 ] || { echo "FAIL: rotating A senders: $(senders 1) PEs send, expected 64" >&2; exit 1; }
[ "$(senders 0)" -eq 8 ] || { echo "FAIL: a_rotate=0: $(senders 0) PEs send A, expected 8" >&2; exit 1; }

# A grid larger than the NoC is bad input.
if "$bin" run tt_matmul --topo "$wh" --set grid_x=9 >/dev/null 2>"$tmp/err"; then
        echo "FAIL: grid_x=9 on an 8-column NoC accepted" >&2
        exit 1
fi
grep -q "grid_x 9 x grid_y 8 does not fit in the 8 x 10 NoC" "$tmp/err" \
        || { cat "$tmp/err" >&2; echo "FAIL: message" >&2; exit 1; }
echo "ok"
