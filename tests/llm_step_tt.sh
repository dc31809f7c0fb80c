#!/usr/bin/env bash
# tests/llm_step_tt.sh: bench llm-step on Tenstorrent machine files runs
# the model validate-tt-llm runs (src/llm/tt_llm_model.c, tt_predict), so
# for the same row its t/s/u, TTFT, tokens/s and a decode iteration's
# energy, average power, J/token and TDP are validate-tt-llm's figures
# (n150: one chip; t3k: tp 8, and tp 4 x dp 2); the text output prints
# the energy line; its --json has
# exactly its keys and tokens/s = t/s/u x batch, per chip / chips; a
# machine --set key reaches the programs; its keys on the default machine,
# a model that does not fit and tp x dp beyond the chips are errors (exit
# 2). Its breakdown by program label (decode_programs, prefill_programs;
# the text's table): the rows sum to the decode iteration and to TTFT,
# each label's program_ms its count x the per-program cost, the
# collectives' labels on t3k (tp 8) and none on the n150; the table's
# rows in the text sum to the iteration too. A 70B decode on the Galaxy
# runs the llama3_70b_galaxy demo's 16 programs a layer at its documented
# 728 ns each (ADR 0046), unless --set decode_program_ns. Its prefill is
# replayed from a trace up to 8192 tokens, as the demo's generator does
# (ADR 0053): each program at the decode's cost (728 ns, or what --set
# decode_program_ns gives); from 8193 tokens, with --set prefill_trace=0
# and on the n150 (tt-transformers, the calibration rows) each at the
# fitted untraced 65554 ns; the device time the same either way; --set
# prefill_trace=1 traces the n150's at its decode's 22195 ns. Then
# validate-tt-llm on rows of the shapes a held-out table may hold
# (every machine, batch 32, a 64K prompt, bf16 weights on a p150 and an
# n300, whose decode matmuls once overflowed a core's L1): each runs in
# under 60 s with finite, positive figures.
set -euo pipefail
. "${CUBESIM_SOURCE_DIR:?CUBESIM_SOURCE_DIR must name the source tree}/tests/lib/script.sh"
. "$src/tests/lib/tt_llm_rows.sh"

step() {  # out, sets...
        local out=$1
        shift
        "$bin" bench run llm-step "$@" --json >"$tmp/$out.json"
}
step n150 --topo topologies/tt_wormhole_n150.yaml --set model=llama3.2-1b --set batch=4 \
        --set prompt_len=96 --set gen_tokens=16 --set precision=ff13_bfp4
step t3k --topo topologies/tt_t3k.yaml --set model=llama3.1-70b --set batch=8 \
        --set prompt_len=128 --set gen_tokens=16
step dp --topo topologies/tt_t3k.yaml --set model=llama3.1-70b --set batch=8 \
        --set prompt_len=128 --set gen_tokens=16 --set tp=4 --set dp=2
step galaxy --topo topologies/tt_galaxy.yaml --set model=llama3.3-70b --set batch=32 \
        --set tp=32 --set gen_tokens=16
step galaxyfit --topo topologies/tt_galaxy.yaml --set model=llama3.3-70b --set batch=32 \
        --set tp=32 --set gen_tokens=16 --set decode_program_ns=18944
step galaxyeager --topo topologies/tt_galaxy.yaml --set model=llama3.3-70b --set batch=32 \
        --set tp=32 --set gen_tokens=16 --set prefill_trace=0
for n in 8192 8193; do
        step "galaxy$n" --topo topologies/tt_galaxy.yaml --set model=llama3.3-70b --set tp=32 \
                --set prompt_len=$n --set gen_tokens=2 --set samples=1
done
step n150trace --topo topologies/tt_wormhole_n150.yaml --set model=llama3.2-1b --set batch=4 \
        --set prompt_len=96 --set gen_tokens=16 --set precision=ff13_bfp4 --set prefill_trace=1
step slow --topo topologies/tt_wormhole_n150.yaml --set model=llama3.2-1b --set batch=4 \
        --set prompt_len=96 --set gen_tokens=16 --set precision=ff13_bfp4 \
        --set cube.hbm.channel_bw_gbps=8
printf '%s\n%s\n%s\n' "$head" "llama3.2-1b,n150,ff13_bfp4,4,96,16,40,30" \
        "llama3.1-70b,t3k,performance,8,128,16,10,200" >"$tmp/rows.csv"
"$bin" bench run validate-tt-llm --set csv="$tmp/rows.csv" --set figures=0 --out "$tmp/v" \
        --json >"$tmp/v.json"
printf '%s\n%s\n' "$head" "llama3.1-70b,t3k,performance,8,128,16,10,200" >"$tmp/dp.csv"
"$bin" bench run validate-tt-llm --set csv="$tmp/dp.csv" --set figures=0 --set dp=2 \
        --out "$tmp/v" --json >"$tmp/vdp.json"
"$py" - "$tmp" <<'PY'
import json, sys
d = sys.argv[1]
ld = lambda n: json.load(open(f"{d}/{n}.json"))
keys = {"bench", "machine", "topo", "model", "precision", "batch", "prompt_len", "gen_tokens",
        "chips", "tp", "dp", "tps_u", "decode_iteration_ms", "ttft_ms", "tokens_per_s",
        "tokens_per_s_per_chip", "weights_per_chip_gb", "kv_per_chip_gb", "dram_per_chip_gb",
        "prefill_scaled", "prefill_traced", "decode_step_j", "decode_power_w", "j_per_token", "tdp_w",
        "decode_programs", "prefill_programs"}
n150, t3k, dp, slow = ld("n150"), ld("t3k"), ld("dp"), ld("slow")
rows = ld("v")["rows"] + ld("vdp")["rows"]
for s, v in ((n150, rows[0]), (t3k, rows[1]), (dp, rows[2])):
    assert set(s) == keys, s.keys()
    assert s["bench"] == "llm-step" and s["model"] == v["model"], (s, v)
    # the same row, the same code: validate-tt-llm's figures
    assert abs(s["tps_u"] - v["predicted_tps_u"]) <= 0.01, (s, v)
    assert abs(s["ttft_ms"] - v["predicted_ttft_ms"]) <= 0.01, (s, v)
    assert abs(s["tokens_per_s"] - v["tokens_per_s"]) <= 0.05, (s, v)
    assert s["chips"] == v["chips"] and s["tp"] == v["tp"], (s, v)
    for k in ("decode_step_j", "j_per_token"):
        assert s[k] > 0 and abs(s[k] - v[k]) <= 1e-9 * v[k], (k, s, v)
    assert abs(s["decode_power_w"] - v["decode_power_w"]) <= 0.01, (s, v)
    assert s["tdp_w"] == v["tdp_w"], (s, v)
    assert abs(s["j_per_token"] * s["batch"] - s["decode_step_j"]) <= 1e-9 * s["decode_step_j"], s
    assert abs(s["decode_power_w"] - s["decode_step_j"] / (s["decode_iteration_ms"] * 1e-3)) \
        <= 0.01 * s["decode_power_w"], s
    assert abs(s["tokens_per_s"] - s["tps_u"] * s["batch"]) < 0.01, s
    assert abs(s["tokens_per_s_per_chip"] - s["tokens_per_s"] / s["chips"]) < 0.01, s
    assert abs(s["tps_u"] - 1e3 / s["decode_iteration_ms"]) < 0.01, s
assert (n150["chips"], n150["tp"], n150["dp"]) == (1, 1, 1), n150
assert n150["tdp_w"] == 160 and t3k["tdp_w"] is None, (n150, t3k)
assert (t3k["chips"], t3k["tp"], dp["tp"], dp["dp"]) == (8, 8, 4, 2), (t3k, dp)
assert n150["machine"] == "tt_wormhole_n150" and n150["precision"] == "ff13_bfp4", n150
# half the chips a replica: twice the weights a chip, slower a user
assert abs(dp["weights_per_chip_gb"] - 2 * t3k["weights_per_chip_gb"]) < 0.01, (dp, t3k)
assert dp["tps_u"] < t3k["tps_u"], (dp, t3k)
# a third of the DRAM bandwidth: decode, bound by reading the weights, is slower
assert slow["tps_u"] < 0.8 * n150["tps_u"], (slow, n150)
# where the time goes: the labels' rows sum to the decode iteration and to
# TTFT; program_ms = count x the fitted per-program cost (22195 ns decode,
# 65554 ns prefill, the defaults); the longest first
for s in (n150, t3k, dp, slow):
    for key, total, pns in (("decode_programs", s["decode_iteration_ms"], 22195),
                            ("prefill_programs", s["ttft_ms"], 65554)):
        rows = s[key]
        assert rows and len({r["label"] for r in rows}) == len(rows), rows
        got = sum(r["device_ms"] + r["program_ms"] for r in rows)
        assert abs(got - total) <= 0.002 + 1e-6 * total, (key, got, total, rows)
        for r in rows:
            assert set(r) == {"label", "count", "device_ms", "program_ms"}, r
            assert r["count"] > 0 and r["device_ms"] >= 0, r
            assert abs(r["program_ms"] - r["count"] * pns / 1e6) <= 1e-3, (r, pns)
        t = [r["device_ms"] + r["program_ms"] for r in rows]
        assert t == sorted(t, reverse=True), rows
    labels = {r["label"] for r in s["decode_programs"]}
    assert {"qkv", "wo", "ff1", "ff2", "ff3", "sdpa", "lm_head", "norm"} <= labels, labels
    # a decode iteration: every program of a layer once a layer, SDPA included
    sdpa = [r for r in s["decode_programs"] if r["label"] == "sdpa"][0]
    assert sdpa["count"] == 80 if s["model"] == "llama3.1-70b" else sdpa["count"] == 16, sdpa
# the Galaxy's 70B decode: the demo's ops, 16 a layer and the head's 3, each
# at 728 ns or at the cost --set gives; the device time the same either way
galaxy, galaxyfit = ld("galaxy"), ld("galaxyfit")
for s, pns in ((galaxy, 728), (galaxyfit, 18944)):
    rows = s["decode_programs"]
    assert sum(r["count"] for r in rows) == 80 * 16 + 3, rows
    for r in rows:
        assert abs(r["program_ms"] - r["count"] * pns / 1e6) <= 1e-3, (r, pns)
    got = {r["label"]: r["count"] for r in rows}
    assert got["rms_allgather"] == 160 and got["ff1_ff3_rs"] == 80, got
    assert got["all_reduce"] == 160 and got["rs_create_heads"] == 80, got
    total = sum(r["device_ms"] + r["program_ms"] for r in rows)
    assert abs(total - s["decode_iteration_ms"]) <= 0.002 + 1e-6 * total, (total, s)
dev = lambda s: sum(r["device_ms"] for r in s["decode_programs"])
assert abs(dev(galaxy) - dev(galaxyfit)) <= 0.01, (dev(galaxy), dev(galaxyfit))
# the prefill: traced on the Galaxy up to 8192 tokens (the demo), each
# program at the decode's cost; untraced past it, with prefill_trace=0 and
# on the n150, each at the fitted 65554 ns; prefill_trace=1 on the n150 at
# its decode's 22195 ns; the programs and their device time do not change
prog = lambda s: sum(r["count"] for r in s["prefill_programs"])
pdev = lambda s: sum(r["device_ms"] for r in s["prefill_programs"])
eager, n150trace = ld("galaxyeager"), ld("n150trace")
g8192, g8193 = ld("galaxy8192"), ld("galaxy8193")
for s, traced, pns in ((galaxy, True, 728), (galaxyfit, True, 18944), (eager, False, 65554),
                       (g8192, True, 728), (g8193, False, 65554), (n150, False, 65554),
                       (n150trace, True, 22195)):
    assert s["prefill_traced"] is traced, (traced, s)
    for r in s["prefill_programs"]:
        assert abs(r["program_ms"] - r["count"] * pns / 1e6) <= 1e-3, (r, pns)
for a, b in ((galaxy, galaxyfit), (galaxy, eager), (n150, n150trace)):
    assert prog(a) == prog(b) and abs(pdev(a) - pdev(b)) <= 1e-6 * pdev(a), (a, b)
assert galaxy["ttft_ms"] < galaxyfit["ttft_ms"] < eager["ttft_ms"], (galaxy, galaxyfit, eager)
assert n150trace["ttft_ms"] < n150["ttft_ms"], (n150, n150trace)
assert n150trace["decode_iteration_ms"] == n150["decode_iteration_ms"], (n150, n150trace)
coll = {"all_gather", "reduce_scatter"}
assert coll <= {r["label"] for r in t3k["decode_programs"]}, t3k["decode_programs"]
assert not coll & {r["label"] for r in n150["decode_programs"]}, n150["decode_programs"]
PY

"$bin" bench run llm-step --topo topologies/tt_wormhole_n150.yaml --set model=llama3.2-1b \
        --set batch=4 --set prompt_len=96 --set gen_tokens=16 --set precision=ff13_bfp4 \
        >"$tmp/n150.txt"
energy_line='^decode iteration energy [0-9.]+ J on 1 chip: average power [0-9.]+ W '
energy_line+='\(system.tdp_w 160\), [0-9.]+ J/token$'
grep -Eq "$energy_line" "$tmp/n150.txt" || { cat "$tmp/n150.txt"; exit 1; }
# the Galaxy's 70B decode says it runs as the demo does, and its prefill
# from a trace; the n150's does neither
"$bin" bench run llm-step --topo topologies/tt_galaxy.yaml --set model=llama3.3-70b \
        --set batch=32 --set tp=32 --set gen_tokens=16 >"$tmp/galaxy.txt"
demo_line="; the decode as tt-metal's llama3_70b_galaxy demo runs it, its weight prefetcher "
demo_line+="and collectives included, docs/adr/0046 and 0049; the prefill replayed from a "
demo_line+="trace, each program at the decode's cost, docs/adr/0053)$"
grep -q "$demo_line" "$tmp/galaxy.txt" || { cat "$tmp/galaxy.txt"; exit 1; }
if grep -q "llama3_70b_galaxy" "$tmp/n150.txt"; then cat "$tmp/n150.txt"; exit 1; fi
eager_line="; the prefill's ops dispatched from the host, each program at prefill_program_ns)$"
grep -q "$eager_line" "$tmp/n150.txt" || { cat "$tmp/n150.txt"; exit 1; }
# the breakdown's table: a header, then label, count, ms, device_ms,
# program_ms and share a line; the ms sum to the decode iteration
"$py" - "$tmp/n150.txt" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
it = float(re.search(r"decode iteration ([0-9.]+) ms", text).group(1))
table = text.split("decode iteration by program label")[1].splitlines()[2:]
rows = [l.split() for l in table if l.strip()]
assert rows and all(len(r) == 6 and r[5].endswith("%") for r in rows), table
ms = sum(float(r[2]) for r in rows)
assert abs(ms - it) <= 0.001 * len(rows) + 0.001, (ms, it, rows)
assert all(abs(float(r[2]) - float(r[3]) - float(r[4])) <= 0.002 for r in rows), rows
assert abs(sum(float(r[5][:-1]) for r in rows) - 100) <= 0.1 * len(rows), rows
PY

# Errors (exit 2, nothing on stdout).
bad() {  # expected message, args...
        local want=$1
        shift
        fails2 "$want" "$bin" bench run llm-step "$@" --json
}
bad "error: --set batch=2: a parameter of llm-step on a Tenstorrent machine file (--topo topologies/tt_*.yaml); this machine runs the llm_layer sweep (models=, batches=, contexts=)" \
    --set batch=2
bad "error: llm-step: llama3.1-8b in bf16 precision does not fit tt_wormhole_n150: weights 16.06 GB + KV cache 0.03 GB (batch 1 x 256 positions) + activations 0.02 GB = 16.11 GB, more than its 12.88 GB (12.0 GiB) of DRAM" \
    --topo topologies/tt_wormhole_n150.yaml --set precision=bf16
bad "error: llm-step: machine 'tt_t3k': tp 8 x dp 2 chips, more than its 8" \
    --topo topologies/tt_t3k.yaml --set model=llama3.1-70b --set tp=8 --set dp=2 --set batch=2
bad "error: --set model=llama9: no model preset 'llama9'" \
    --topo topologies/tt_wormhole_n150.yaml --set model=llama9

# The DRAM check counts the Galaxy demo's W2 in bfp8, as it decodes it
# (layer_progs_demo): performance (W2 bfp4 elsewhere) holds the same
# bytes a chip as ff13_bfp4 there (it counted the precision's bfp4: 1.493
# against 1.787 GB), and less on the T3000.
step gperf --topo topologies/tt_galaxy.yaml --set model=llama3.3-70b --set tp=32 --set batch=1 \
        --set gen_tokens=4
step gff13 --topo topologies/tt_galaxy.yaml --set model=llama3.3-70b --set tp=32 --set batch=1 \
        --set gen_tokens=4 --set precision=ff13_bfp4
step tff13 --topo topologies/tt_t3k.yaml --set model=llama3.1-70b --set batch=8 \
        --set prompt_len=128 --set gen_tokens=16 --set precision=ff13_bfp4
python3 - "$tmp" <<'PY'
import json, sys
w = {n: json.load(open(f"{sys.argv[1]}/{n}.json"))["weights_per_chip_gb"]
     for n in ("gperf", "gff13", "t3k", "tff13")}
assert w["gperf"] == w["gff13"], w
assert w["t3k"] < w["tff13"], w
PY
echo "the Galaxy demo's W2 counted in bfp8"

# Rows of a held-out table's shapes: each in under 60 s, figures sane.
# The 60 s bound is an optimised build's; a Debug (sanitizer) build runs
# 10-20 times slower and is held to 600 s.
limit=60
if grep -qs '^CMAKE_BUILD_TYPE:STRING=Debug$' "${CUBESIM_BUILD_DIR:-/nonexistent}/CMakeCache.txt"; then
        limit=600
fi
printf '%s\n' "$head" >"$tmp/hidden.csv"
for row in "llama3.2-1b,n150,performance,1,65536,32,50,5000" \
           "llama3.1-8b,n150,performance,32,128,64,20,500" \
           "llama3.1-8b,n300,accuracy,32,2048,64,20,900" \
           "llama3.1-70b,t3k,performance,32,128,64,10,200" \
           "qwen2.5-7b,p150,performance,32,128,64,20,100" \
           "llama3.3-70b,galaxy,performance,32,128,64,50,200" \
           "mistral-7b,p150,bf16,1,64,32,20,50" \
           "mistral-7b,n300,bf16,32,128,32,20,50"; do
        printf '%s\n%s\n' "$head" "$row" >"$tmp/one.csv"
        t0=$(date +%s)
        "$bin" bench run validate-tt-llm --set csv="$tmp/one.csv" --set figures=0 --out "$tmp/h" \
                --json >>"$tmp/hidden.json" || { echo "failed: $row"; exit 1; }
        t=$(($(date +%s) - t0))
        [ "$t" -le "$limit" ] || { echo "$row took $t s (limit $limit s)"; exit 1; }
done
"$py" - "$tmp/hidden.json" <<'PY'
import json, math, sys
rows = [json.loads(l)["rows"][0] for l in open(sys.argv[1])]
assert len(rows) == 8, len(rows)
for r in rows:
    for k in ("predicted_tps_u", "predicted_ttft_ms", "tokens_per_s", "decode_step_j",
              "decode_power_w", "j_per_token"):
        assert math.isfinite(r[k]) and r[k] > 0, r
# a 64K prompt's prefill takes seconds; 32 users decode slower each than 1
assert rows[0]["predicted_ttft_ms"] > 1000, rows[0]
assert rows[1]["predicted_tps_u"] < 28.3 * 1.2, rows[1]
PY
echo ok
