#!/usr/bin/env bash
# cubesim serve on Tenstorrent machine files (docs/serving.md): each
# iteration is tt-transformers' programs as llm-step runs them
# (src/llm/tt_llm_model.c), so
# - at very low load the mean TTFT is llm-step's TTFT and the mean TPOT its
#   decode iteration, each within 5%, and an idle server's first TTFT is
#   llm-step's to the microsecond (n150 with llama3.1-8b; the Galaxy's 2D
#   split with llama3.3-70b, --tp 32);
# - tt-metal's Galaxy vLLM setting (32 requests of 128 + 128 tokens at
#   once, --max-batch 32): the batch-32 TPOT is llm-step's batch-32 decode
#   iteration within 5% (docs/validation.md reports it against PERF.md);
# - the grid of shapes stays within 3% of exact simulation (sarathi, mixed
#   iterations);
# - a model the machine cannot hold is exit 2 naming the sizes, as
#   llm-step's check; serve --help names --trace FILE.
set -euo pipefail
. "${CUBESIM_SOURCE_DIR:?CUBESIM_SOURCE_DIR must name the source tree}/tests/lib/script.sh"
cd "$src"
n150=topologies/tt_wormhole_n150.yaml
galaxy=topologies/tt_galaxy.yaml
step() {  # NAME TOPO MODEL BATCH: llm-step's figures, prompt 128, 128 generated
        "$bin" bench run llm-step --topo "$2" --set model="$3" --set batch="$4" \
                --set prompt_len=128 --set gen_tokens=128 --json >"$tmp/$1.step.json"
}
serve() {  # NAME TOPO MODEL ARGS...: serve's summary and requests.csv
        local name=$1 topo=$2 model=$3
        shift 3
        "$bin" serve --topo "$topo" --model "$model" --prompt-len 128 --output-len 128 \
                --out "$tmp/$name" --no-figures --json "$@" >"$tmp/$name.json"
}
agree() {  # NAME TPOT-KEY: serve NAME against llm-step NAME
        python3 - "$tmp" "$1" "$2" <<'PY'
import csv, json, sys
d, name, tpot_key = sys.argv[1:4]
s = json.load(open(f"{d}/{name}.json"))
p = json.load(open(f"{d}/{name}.step.json"))
first = next(csv.DictReader(open(f"{d}/{name}/requests.csv")))
ttft, dec = p["ttft_ms"], p["decode_iteration_ms"]
tpot = s["tpot_ms"][tpot_key]
print(f"{name}: TTFT mean {s['ttft_ms']['mean']:.3f} first {float(first['ttft_ms']):.3f} "
      f"llm-step {ttft:.3f} ms; TPOT {tpot_key} {tpot:.3f}, decode iteration {dec:.3f} ms")
assert s["completed"] == s["requests"], s
# an idle server's first request: one prefill, llm-step's TTFT itself
assert abs(float(first["ttft_ms"]) - ttft) <= 0.001, (first, ttft)
if tpot_key == "mean":        # low load: every request alone, or nearly
    assert abs(s["ttft_ms"]["mean"] / ttft - 1) <= 0.05, (s["ttft_ms"], ttft)
assert abs(tpot / dec - 1) <= 0.05, (tpot, dec)
PY
}
# very low load: n150, one chip
step n150 "$n150" llama3.1-8b 1
serve n150 "$n150" llama3.1-8b --qps 0.05 --requests 20
check "n150: TTFT and TPOT at low load are llm-step's" agree n150 mean
# the Galaxy, 2D over 32 chips; slower requests, so a lower rate
step galaxy "$galaxy" llama3.3-70b 1
serve galaxy "$galaxy" llama3.3-70b --tp 32 --qps 0.01 --requests 20
check "galaxy: TTFT and TPOT at low load are llm-step's" agree galaxy mean
# tt-metal's vLLM server setting: 32 concurrent requests, batch 32
{ echo arrival_s,prompt_tokens,output_tokens; for i in $(seq 32); do echo 0,128,128; done; } \
        >"$tmp/burst.csv"
step burst "$galaxy" llama3.3-70b 32
serve burst "$galaxy" llama3.3-70b --tp 32 --trace "$tmp/burst.csv" --max-batch 32
check "galaxy batch 32: TPOT is llm-step's batch-32 decode iteration" agree burst p50
# the grid on mixed iterations (sarathi: chunks beside decodes)
"$bin" serve --topo "$n150" --model llama3.2-1b --qps 20 --requests 16 \
        --prompt-len uniform:40:200 --output-len uniform:8:32 --policy sarathi \
        --chunk-tokens 64 --check-steps 6 >"$tmp/grid.txt"
check "the grid within 3% of exact simulation" python3 - "$tmp/grid.txt" <<'PY'
import re, sys
m = re.search(r"step check: (\d+) off-grid iterations, grid vs exact simulation: "
              r"max ([0-9.]+)%", open(sys.argv[1]).read())
assert m and int(m.group(1)) > 0 and float(m.group(2)) <= 3, m and m.groups()
PY
check "the grid's run is on tt-transformers' programs" \
        grep -q "step model: tt-transformers' programs at performance precision on tt_wormhole_n150" \
        "$tmp/grid.txt"
# a model the machine cannot hold: llm-step's check and sizes
fails2 "cubesim serve: error: llama3.1-70b in performance precision does not fit tt_wormhole_n150: weights 47.76 GB + KV cache" \
        "$bin" serve --topo "$n150" --model llama3.1-70b --qps 1
"$bin" bench run llm-step --topo "$n150" --set model=llama3.1-70b 2>"$tmp/step.err" && exit 1
check "llm-step names the same weights" grep -q "weights 47.76 GB" "$tmp/step.err"
check "serve --help names --trace FILE" grep -q -- "--qps X | --trace FILE" \
        <("$bin" serve --help)
exit $fail
