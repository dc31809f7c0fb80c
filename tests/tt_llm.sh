#!/usr/bin/env bash
# tests/tt_llm.sh: the bench validate-tt-llm and the kernel tt_llm_op.
# The bench's --json has exactly the keys of its help, its errors and
# MAPEs follow from its numbers and the figure's data and script are
# written (a small model, short runs); a row whose model does not fit the
# machine's DRAM, on a machine without a file, with an unknown preset or
# precision is an error located at the row (exit 2, no JSON); a device
# program pays pe.cpu.program_ns once, and a DRAM-sharded matmul never
# beats its weights' bytes over the machine's DRAM bandwidth; in data mode the
# matmul and both SDPA programs compute what NumPy does.
# Energy: a Llama-3.1-8B decode step on the n150 averages more than the
# machine's idle power and no more than the card's board power
# (system.tdp_w, 160 W); its energy per token is the step's over the batch
# and its power the step's energy over its time (1 / t/s/u); a chip's
# programs count once per chip (the 8B model's step on the n300's two
# chips costs more than half the n150's).
set -euo pipefail
. "${CUBESIM_SOURCE_DIR:?CUBESIM_SOURCE_DIR must name the source tree}/tests/lib/script.sh"
. "$src/tests/lib/tt_llm_rows.sh"

printf '%s\n%s\n%s\n' "$head" "llama3.2-1b,n150,performance,1,64,8,90,20" \
        "llama3.2-1b,n150,ff13_bfp4,4,96,3,40,30" >"$tmp/rows.csv"
"$bin" bench run validate-tt-llm --set csv="$tmp/rows.csv" --set figures=0 --out "$tmp/out" \
        --json >"$tmp/out.json"
test -s "$tmp/out/figures/pred_vs_meas.dat"
test -s "$tmp/out/figures/pred_vs_meas.gp"
"$py" - "$tmp/out.json" <<'PY'
import json, sys
out = json.load(open(sys.argv[1]))
assert set(out) == {"rows", "mape_tps_pct", "mape_ttft_pct"}, out.keys()
keys = {"model", "machine", "precision", "batch", "prompt_len", "measured_tps_u",
        "predicted_tps_u", "error_tps_pct", "measured_ttft_ms", "predicted_ttft_ms",
        "error_ttft_pct", "chips", "tp", "weights_per_chip_gb", "tokens_per_s",
        "tokens_per_s_per_chip", "decode_step_j", "decode_power_w", "j_per_token", "tdp_w"}
rows = out["rows"]
assert len(rows) == 2
for r in rows:
    assert set(r) == keys, r.keys()
    assert r["predicted_tps_u"] > 0 and r["predicted_ttft_ms"] > 0, r
    for m, p, e in (("measured_tps_u", "predicted_tps_u", "error_tps_pct"),
                    ("measured_ttft_ms", "predicted_ttft_ms", "error_ttft_pct")):
        want = (r[p] - r[m]) / r[m] * 100
        assert abs(r[e] - want) < 0.1, (r, e, want)
assert rows[0]["model"] == "llama3.2-1b" and rows[1]["precision"] == "ff13_bfp4"
assert rows[1]["batch"] == 4 and rows[1]["prompt_len"] == 96
# four users decode together: each user's rate is below one user's
assert rows[1]["predicted_tps_u"] < rows[0]["predicted_tps_u"], rows
for k, e in (("mape_tps_pct", "error_tps_pct"), ("mape_ttft_pct", "error_ttft_pct")):
    want = sum(abs(r[e]) for r in rows) / len(rows)
    assert abs(out[k] - want) < 0.02, (k, out[k], want)
PY

# Tensor parallelism over the chips of an n300, a T3000 and a Galaxy: each
# chip holds its share of the weights (fewer bytes a chip on more chips),
# the collectives run over the links, and the 8B model decodes faster on
# the n300's two chips than on the n150's one. tokens/s = t/s/u x batch,
# per chip / chips. dp replicas split the chips: tp = chips / dp.
printf '%s\n%s\n%s\n%s\n%s\n' "$head" "llama3.1-8b,n150,performance,1,128,64,28,100" \
        "llama3.1-8b,n300,performance,1,128,64,28,100" \
        "llama3.1-70b,t3k,performance,1,128,64,10,200" \
        "llama3.1-8b,galaxy,performance,2,128,64,20,90" >"$tmp/tp.csv"
"$bin" bench run validate-tt-llm --set csv="$tmp/tp.csv" --set figures=0 --out "$tmp/out" \
        --json >"$tmp/tp.json"
"$bin" bench run validate-tt-llm --set csv="$tmp/tp.csv" --set figures=0 --set dp=2 \
        --out "$tmp/out" --json >"$tmp/dp.json" 2>"$tmp/dp.err" && { echo "dp=2 on an n150"; exit 1; }
grep -qF "$tmp/tp.csv:2:13: error: machine 'n150': 1 chips of 1 cubes and batch 1 do not split into dp 2 replicas (a chip is a SIP of one cube; dp must divide both)" "$tmp/dp.err"
printf '%s\n%s\n%s\n' "$head" "llama3.1-8b,n300,performance,2,128,64,28,100" \
        "llama3.1-70b,t3k,performance,2,128,64,10,200" >"$tmp/dp.csv"
"$bin" bench run validate-tt-llm --set csv="$tmp/dp.csv" --set figures=0 --set dp=2 \
        --out "$tmp/out" --json >"$tmp/dp.json"
"$py" - "$tmp/tp.json" "$tmp/dp.json" <<'PY'
import json, sys
rows = json.load(open(sys.argv[1]))["rows"]
dp = json.load(open(sys.argv[2]))["rows"]
n150, n300, t3k, galaxy = rows
assert [r["chips"] for r in rows] == [1, 2, 8, 32], rows
assert [r["tp"] for r in rows] == [1, 2, 8, 32], rows
for r in rows + dp:
    assert abs(r["tokens_per_s"] - r["predicted_tps_u"] * r["batch"]) < 0.05, r
    assert abs(r["tokens_per_s_per_chip"] - r["tokens_per_s"] / r["chips"]) < 0.05, r
# the 8B model's weights split over 2 and 32 chips: about 1/2 and 1/32 a chip
w = n150["weights_per_chip_gb"]
assert abs(n300["weights_per_chip_gb"] - w / 2) < 0.01 * w, (w, n300)
assert abs(galaxy["weights_per_chip_gb"] - w / 32) < 0.01 * w, (w, galaxy)
assert galaxy["weights_per_chip_gb"] < n300["weights_per_chip_gb"] < w
# 70B over 8 chips fits a 12 GiB chip
assert t3k["weights_per_chip_gb"] < 12.88, t3k
# half the bytes a chip, two collectives a layer: faster, but below 2x
assert n150["predicted_tps_u"] < n300["predicted_tps_u"] < 2 * n150["predicted_tps_u"], rows
assert n300["predicted_ttft_ms"] < n150["predicted_ttft_ms"], rows
# dp=2: the n300 as two n150-like replicas of one chip, the T3000 as two of 4
assert [r["tp"] for r in dp] == [1, 4], dp
assert abs(dp[0]["weights_per_chip_gb"] - w) < 1e-3, dp
assert abs(dp[0]["predicted_tps_u"] - n150["predicted_tps_u"]) < 0.1 * n150["predicted_tps_u"], dp
PY
"$bin" topo show topologies/tt_wormhole_n150.yaml --format json >"$tmp/n150.json"
"$py" - "$tmp/tp.json" "$tmp/n150.json" <<'PY'
import json, sys
n150, n300 = json.load(open(sys.argv[1]))["rows"][:2]
t = json.load(open(sys.argv[2]))["machine"]
# every PE and cube idle: the least a step can average
pes = t["cube"]["noc"]["rows"] * t["cube"]["noc"]["cols"]
idle_w = (pes * sum(t["pe"][c]["energy"].get("idle_mw", 0) for c in ("cpu", "dma", "gemm", "math", "tcm"))
          + t["cube"]["hbm"]["energy"]["idle_mw"] + t["cube"]["noc"]["energy"]["idle_mw"]) / 1e3
assert n150["model"] == "llama3.1-8b" and n150["machine"] == "n150", n150
assert n150["tdp_w"] == 160, n150
assert idle_w < n150["decode_power_w"] <= n150["tdp_w"], (idle_w, n150)
for r in (n150, n300):
    assert r["decode_step_j"] > 0 and r["j_per_token"] > 0, r
    assert abs(r["j_per_token"] * r["batch"] - r["decode_step_j"]) <= 1e-9 * r["decode_step_j"], r
    want_w = r["decode_step_j"] * r["predicted_tps_u"]
    assert abs(r["decode_power_w"] - want_w) <= 0.01 * want_w, (r, want_w)
assert n300["tdp_w"] is None, n300
assert n300["decode_step_j"] > 0.5 * n150["decode_step_j"], (n150, n300)
PY

# Errors at the row, exit 2, nothing on stdout.
bad() {  # row, expected message
        printf '%s\n%s\n' "$head" "$1" >"$tmp/bad.csv"
        fails2 "$2" "$bin" bench run validate-tt-llm --set csv="$tmp/bad.csv" --set figures=0 \
                --out "$tmp/o2" --json
}
bad "llama3.1-8b,n150,bf16,1,128,200,28.3,104" \
    "$tmp/bad.csv:2:1: error: llama3.1-8b in bf16 precision does not fit n150: weights 16.06 GB + KV cache 0.04 GB (batch 1 x 328 positions) + activations 0.02 GB = 16.12 GB, more than its 12.88 GB (12.0 GiB) of DRAM"
bad "llama3.1-70b,n300,bf16,1,128,200,28.3,104" \
    "$tmp/bad.csv:2:1: error: llama3.1-70b in bf16 precision does not fit n300 (a chip's share, tensor parallel over 2 chips): weights 70.56 GB + KV cache 0.05 GB (batch 1 x 328 positions) + activations 0.02 GB = 70.63 GB, more than its 12.88 GB (12.0 GiB) of DRAM"
bad "qwen2.5-7b,t3k,performance,1,128,200,28.3,104" \
    "$tmp/bad.csv:2:1: error: qwen2.5-7b's 28 query heads, 4 KV heads and hidden size 3584 do not split over 8 chips (machine 't3k', dp 1)"
bad "llama3.2-1b,x9,performance,1,128,200,28.3,104" \
    "$tmp/bad.csv:2:13: error: machine 'x9': no machine file topologies/tt_x9.yaml (n150, n300, t3k, galaxy and p150 have one)"
bad "llama3.2-1c,n150,performance,1,128,200,28.3,104" \
    "$tmp/bad.csv:2:1: error: model: unknown preset 'llama3.2-1c' (did you mean 'llama3.2-1b'?)"
bad "llama3.2-1b,n150,fast,1,128,200,28.3,104" \
    "$tmp/bad.csv:2:18: error: precision: expected one of performance, accuracy, ff13_bfp4, bf16 (got 'fast')"
bad "llama3.2-1b,n150,performance,33,128,200,28.3,104" \
    "$tmp/bad.csv:2:30: error: batch: expected an integer in [1, 32] (got '33')"

# The program cost is paid once per launch.
n150=topologies/tt_wormhole_n150.yaml
t0=$("$bin" run tt_llm_op --topo $n150 --set pe.cpu.program_ns=0 --set op=norm --set rows=32 --set cols=2048 --json |
     "$py" -c 'import json,sys; print(json.load(sys.stdin)["kernel_ps"])')
t1=$("$bin" run tt_llm_op --topo $n150 --set op=norm --set rows=32 --set cols=2048 \
     --set pe.cpu.program_ns=5000 --json | "$py" -c 'import json,sys; print(json.load(sys.stdin)["kernel_ps"])')
[ $((t1 - t0)) = 5000000 ] || { echo "program cost: $t0 -> $t1"; exit 1; }

# A DRAM-sharded matmul reads every weight once, each worker its own bank:
# never faster than the DRAM, and near it for a large matrix.
"$bin" run tt_llm_op --topo $n150 --set op=mm_dram --set k=4096 --set n=14336 --set wdtype=bfp4_b \
        --set fidelity=lofi --json >"$tmp/mm.json"
"$py" - "$tmp/mm.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
k, n = 4096, 14592                # 14336 padded to a multiple of 32 x 12 channels
weight = k * n // 1024 * 576      # bfp4_b: 576 bytes per 1024 elements
floor_ps = weight / (12 * 24e9 * 0.92) * 1e12
assert r["kernel_ps"] >= floor_ps, (r["kernel_ps"], floor_ps)
assert r["kernel_ps"] <= 1.5 * floor_ps, (r["kernel_ps"], floor_ps)
PY
# FF2 of Llama-3.1-8B (N 4096: 11 tiles a bank): tt-metal pads a worker's
# compute to 1 x 6 subblocks (12 tiles), each product refilling only the
# streamed bfp4_b weight tile (576 B); as 1 x 1 subblocks, both sources
# refilled at every product, it took 1.7x the DRAM floor.
"$bin" run tt_llm_op --topo $n150 --set pe.cpu.program_ns=0 --set op=mm_dram --set k=14336 \
        --set n=4096 --set wdtype=bfp4_b --set fidelity=lofi --json >"$tmp/ff2.json"
"$py" - "$tmp/ff2.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
weight = 14336 * 4224 // 1024 * 576   # 4096 padded to 32 x 12 channels, bfp4_b
floor_ps = weight / (12 * 24e9 * 0.92) * 1e12
assert floor_ps <= r["kernel_ps"] <= 1.4 * floor_ps, (r["kernel_ps"], floor_ps)
PY
# Data mode: each worker's columns are in0 . its bank's weights; SDPA is
# softmax(q k^T / sqrt(D)) v over the keys a row sees (causal in prefill).
data() {  # name, sets...
        local name=$1
        shift
        mkdir -p "$tmp/$name/in" "$tmp/$name/out"
        "$bin" run tt_llm_op --topo $n150 --mode data --save-inputs "$tmp/$name/in" \
                --outputs "$tmp/$name/out" "$@" >/dev/null 2>"$tmp/$name/err" ||
                { cat "$tmp/$name/err"; exit 1; }
}
# (11 tiles a worker: its compute padded to 1 x 6 subblocks, 12 tiles)
data mm --set op=mm_dram --set m=1 --set k=256 --set n=4224 --set wdtype=bfp8_b
data dec --set op=sdpa_decode --set q_heads=8 --set kv_heads=2 --set head_dim=64 --set keys=300 \
        --set kvdtype=bf16
data pre --set op=sdpa_prefill --set q_heads=4 --set kv_heads=2 --set head_dim=64 --set keys=100 \
        --set kvdtype=bf16
"$py" - "$tmp" <<'PY'
import sys
import numpy as np
d = sys.argv[1]
ld = lambda n, f: np.load(f"{d}/{n}/{f}.npy").astype(np.float64)
a, out = ld("mm", "in/a"), ld("mm", "out/out")
assert out.shape == (12, 32, 352), out.shape
for c in range(12):
    ref = a @ ld("mm", f"in/w{c}")
    assert np.abs(out[c] - ref).max() <= 0.01 * np.abs(ref).max() + 1e-3, c

def attn(q, k, v, causal):
    s = q @ k.T / np.sqrt(q.shape[1])
    if causal:
        s = np.where(np.tri(*s.shape, dtype=bool), s, -np.inf)
    p = np.exp(s - s.max(axis=1, keepdims=True))
    return (p / p.sum(axis=1, keepdims=True)) @ v

for name, causal, group in (("dec", False, 1), ("pre", True, 2)):
    q, k, v, o = (ld(name, f) for f in ("in/q", "in/k", "in/v", "out/o"))
    for h in range(q.shape[1]):
        ref = attn(q[0, h], k[0, h // group], v[0, h // group], causal)
        err = np.abs(o[0, h] - ref).max()
        assert err < 0.03, (name, h, err)
PY
echo ok
