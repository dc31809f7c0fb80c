#!/usr/bin/env bash
# The critical path (cubesim run --critical-path, docs/adr/0028):
#   - its by_class and by_line each sum to the kernel time exactly, and its
#     segments tile the kernel time, in time order, on several kernels;
#   - a kernel whose last PE waited on another PE's send names that chain,
#     in the JSON and in the text ("PE 0 waited on PE 4's send at ...");
#   - on the panel of tests/timing_props.sh, every what-if estimate (2x
#     DMA, HBM, NoC, GEMM, MATH) is within 10% of a real rerun with that
#     part 2x faster (its --set keys), and on every kernel the class the
#     what-if moves most is the one the real reruns move most (issue 29's
#     goal; docs/critical-path.md has the table);
#   - recording changes nothing: the op_log, and the summary up to the
#     critical path's section, are byte-identical with and without the
#     flag; without it the JSON has no critical_path and the text no section;
#   - the trace gets a "critical path" track;
#   - the critical_path object of these runs (and of 4K prefill) has the
#     SHA-256 checked in under tests/golden/critpath.sha256: how the log is
#     kept (docs/adr/0051: a look-up of each PE's last 32 ops, ops written
#     only when referred to) must not move the path, its splits or the
#     what-ifs; if a change is meant to, regenerate with
#     CUBESIM_UPDATE_GOLDEN=1 and say why in the commit;
#   - the log is the same built beside the run, on a thread of its own
#     (the default with two processors), or on the run's (CUBESIM_CP_INLINE=1);
#   - kernel threads on circular buffers (tt_matmul): a wait on a push is
#     linked to that push, so the path has next to no unexplained "wait"
#     and its chain names the thread and the push ("thread t0 of PE 9
#     waited on thread t2's tl_cb_push_back at tt_matmul.c:417").
set -euo pipefail
. "${CUBESIM_SOURCE_DIR:?CUBESIM_SOURCE_DIR must name the source tree}/tests/lib/script.sh"

decode=(gqa_decode --set seq_len=4096)
opt2=(gqa_decode_opt2 --set seq_len=4096)
epi=(gemm_epilogue --set m=256 --set n=512 --set k=512)
tt=(tt_matmul --topo "$src/topologies/tt_wormhole_n150.yaml" --set m=512 --set k=1024
    --set n=1024)
small=(gqa_prefill --topo "$src/topologies/small.yaml" --set q_heads=8 --set kv_heads=2
       --set head_dim=32 --set seq_len=160 --set kv_tile=32)

"$bin" run "${decode[@]}" --critical-path --json >"$tmp/decode.json"
"$bin" run "${decode[@]}" --critical-path >"$tmp/decode.txt"
"$bin" run "${opt2[@]}" --critical-path --json >"$tmp/opt2.json"
"$bin" run "${epi[@]}" --critical-path --json >"$tmp/epi.json"
# The what-if panel: timing_props.sh's kernels, each with the flag and
# then 2x faster in each part (whatif_K.json, whatif_K_PART.json).
panel=("${decode[*]}" "gqa_decode_short --set seq_len=4096 --set kv_per_cube=2"
       "gqa_prefill --set seq_len=512" "gqa_prefill_short --set seq_len=512" "${opt2[*]}"
       "${epi[*]}")
parts=("pe_dma|pe.dma.bw_gbps=128" "hbm_channel|cube.hbm.channel_bw_gbps=102.4"
       "noc|cube.noc.link_bw_gbps=256 pe.links.dma_noc.bw_gbps=256"
       "pe_gemm|pe.gemm.macs_per_cycle=8192" "pe_math|pe.math.lanes=256")
for k in "${!panel[@]}"; do
        read -r -a run_args <<<"${panel[$k]}"
        "$bin" run "${run_args[@]}" --critical-path --json >"$tmp/whatif_$k.json"
        for f in "${parts[@]}"; do
                sets=()
                for kv in ${f#*|}; do sets+=(--set "$kv"); done
                "$bin" run "${run_args[@]}" "${sets[@]}" --json >"$tmp/whatif_${k}_${f%%|*}.json"
        done
done
"$bin" run "${small[@]}" --critical-path --json >"$tmp/small.json"
"$bin" run gqa_prefill --set model=llama3-70b --set seq_len=4096 --set causal=1 --set dtype=bf16 \
        --critical-path --json >"$tmp/prefill4k.json"
"$bin" run "${tt[@]}" --critical-path --json >"$tmp/tt.json"
# The log built on the run's own thread (CUBESIM_CP_INLINE=1) is the
# one built beside it, byte for byte (docs/adr/0051, amendment 3).
for name in prefill4k tt; do
        case $name in
        prefill4k) args=(gqa_prefill --set model=llama3-70b --set seq_len=4096 --set causal=1
                         --set dtype=bf16) ;;
        tt) args=("${tt[@]}") ;;
        esac
        CUBESIM_CP_INLINE=1 "$bin" run "${args[@]}" --critical-path --json >"$tmp/$name.inline.json"
        cmp -s "$tmp/$name.json" "$tmp/$name.inline.json" || {
                echo "FAIL: $name: the log built inline is not the one built beside the run"
                exit 1
        }
done
"$bin" run "${tt[@]}" --critical-path >"$tmp/tt.txt"
grep -q "thread t[0-9] of PE [0-9]* waited on thread t[0-9]'s tl_cb_push_back at tt_matmul.c:[0-9]*" \
        "$tmp/tt.txt" || { echo "FAIL: the text names no wait on a CB push"; cat "$tmp/tt.txt"; exit 1; }

# Recording changes nothing.
"$bin" run "${small[@]}" --oplog "$tmp/plain.oplog" >"$tmp/plain.txt"
"$bin" run "${small[@]}" --critical-path --oplog "$tmp/cp.oplog" >"$tmp/cp.txt"
cmp -s "$tmp/plain.oplog" "$tmp/cp.oplog" || { echo "FAIL: the op_log differs with --critical-path"; exit 1; }
n=$(wc -l <"$tmp/plain.txt")
head -n "$n" "$tmp/cp.txt" | cmp -s - "$tmp/plain.txt" ||
        { echo "FAIL: the summary before the critical path's section differs"; exit 1; }
grep -q "critical path" "$tmp/plain.txt" && { echo "FAIL: a critical path without the flag"; exit 1; }
grep -q "^  critical path" "$tmp/cp.txt" || { echo "FAIL: no critical path section"; exit 1; }
"$bin" run "${small[@]}" --json >"$tmp/plain.json"
"$bin" run "${small[@]}" --critical-path --trace "$tmp/t.json" >/dev/null
grep -q '"critical path"' "$tmp/t.json" || { echo "FAIL: no critical path track in the trace"; exit 1; }
grep -q "waited on PE [0-9]*'s send at gqa_common.c:[0-9]*" "$tmp/decode.txt" ||
        { echo "FAIL: the text names no chain across PEs"; cat "$tmp/decode.txt"; exit 1; }

# The critical_path objects, digested (json.dumps, keys sorted).
python3 - "$tmp" >"$tmp/digests" <<'PY'
import hashlib, json, sys
tmp = sys.argv[1]
names = ["decode", "opt2", "epi", "small", "tt", "prefill4k"] + [f"whatif_{k}" for k in range(6)]
for name in names:
    with open(f"{tmp}/{name}.json") as f:
        cp = json.load(f)["critical_path"]
    print(hashlib.sha256(json.dumps(cp, sort_keys=True).encode()).hexdigest() + "  " + name)
PY
golden="$src/tests/golden/critpath.sha256"
if [ "${CUBESIM_UPDATE_GOLDEN:-0}" = 1 ]; then
        cp "$tmp/digests" "$golden"
        echo "critical path digests written to $golden"
elif ! diff -u "$golden" "$tmp/digests"; then
        echo "FAIL: the critical_path objects changed (CUBESIM_UPDATE_GOLDEN=1 to accept)"
        exit 1
fi

python3 - "$tmp" <<'PY'
import json, os, sys
tmp = sys.argv[1]
def load(name):
    with open(f"{tmp}/{name}.json") as f:
        return json.load(f)
fails = 0
def check(ok, what):
    global fails
    print(("ok   " if ok else "FAIL ") + what)
    fails += not ok

if "critical_path" in load("plain"):
    check(False, "no critical_path in the JSON without the flag")
for name in ("decode", "opt2", "epi", "small", "tt", "prefill4k"):
    r = load(name)
    cp = r["critical_path"]
    T = r["kernel_ps"]
    bc = sum(cp["by_class"].values())
    check(bc == T, f"{name}: by_class sums to {bc} ps, the kernel time {T} ps")
    bl = sum(l["ps"] for l in cp["by_line"])
    check(bl == T, f"{name}: by_line sums to {bl} ps")
    segs = cp["segments"]
    tiled = (segs[0]["start_ps"] == r["target_start_ps"] and
             segs[-1]["end_ps"] == r["target_start_ps"] + T and
             all(a["end_ps"] == b["start_ps"] for a, b in zip(segs, segs[1:])))
    check(tiled, f"{name}: {len(segs)} segments tile the kernel time in order")
    check(set(cp["by_class"]) >= {"pe_cpu", "pe_dma", "pe_gemm", "pe_math", "hbm_channel",
                                  "launch"}, f"{name}: by_class has busy_ps's classes and launch")

chain = load("decode")["critical_path"]["chain"]
check(any(h["op"] == "send" and h["pe"] != h["waited_on_pe"] and h["file"].endswith("gqa_common.c")
          for h in chain), f"decode: the chain names a PE waiting on another's send: {chain[:2]}")

tt = load("tt")
wait = tt["critical_path"]["by_class"].get("wait", 0)
check(wait <= tt["kernel_ps"] // 100, f"tt_matmul: {wait} ps of unexplained wait in "
      f"{tt['kernel_ps']} ps (at most 1%)")
check(any(h["op"] == "tl_cb_push_back" and h.get("thread", -1) != h.get("waited_on_thread", -1)
          and h["file"].endswith("tt_matmul.c") for h in tt["critical_path"]["chain"]),
      "tt_matmul: the chain names a thread waiting on another's tl_cb_push_back")

def err(est, real):
    return abs(est - real) / real
classes = ("pe_dma", "hbm_channel", "noc", "pe_gemm", "pe_math")
k = 0
while os.path.exists(f"{tmp}/whatif_{k}.json"):
    r = load(f"whatif_{k}")
    wi = r["critical_path"]["what_if_2x_kernel_ps"]
    real = {c: load(f"whatif_{k}_{c}")["kernel_ps"] for c in classes}
    for c in classes:
        check(err(wi[c], real[c]) <= 0.10, f"{r['kernel']} #{k}: 2x {c} estimated {wi[c]} ps, "
              f"real {real[c]} ps ({100 * (wi[c] - real[c]) / real[c]:+.1f}%)")
    top_est = min(classes, key=lambda c: wi[c])
    top_real = min(classes, key=lambda c: real[c])
    check(top_est == top_real, f"{r['kernel']} #{k}: the what-if moves {top_est} most, "
          f"the reruns {top_real}")
    k += 1
check(k == 6, f"{k} kernels of the what-if panel (6)")
sys.exit(1 if fails else 0)
PY
