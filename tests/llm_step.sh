#!/usr/bin/env bash
# bench llm-step on one small case (llama3-8b, batch 2, 100 tokens of
# context, no prefill, no TP panel): its sweep runs every part of the layer
# and the LM head, and the figures it derives follow from the points: time
# per token = 32 layers x one layer + the LM head, tokens/s = batch / that,
# the breakdown adds up to the token, joules per token = the step's
# energy / batch and tokens per joule its inverse, and the report has its
# section. Energy per token on the smallest machine that holds the model:
# llama3-8b's bf16 weights (16 GB) pass the n150's 12 GiB of GDDR6 and fit
# the n300's 24 GiB, so it runs there, tensor parallel over its 2 chips;
# its J/token is 32 x its layer's energy_j + its LM head's, its power that
# over the token's time; with only the n150 to choose from, none holds it;
# energy_models= drops the section; an unknown preset is refused.
set -euo pipefail
bin=${CUBESIM_BIN:?}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
"$bin" bench run llm-step --set models=llama3-8b --set batches=2 --set contexts=100 \
        --set prefill_models= --set tp_sips= --set figures=0 --out "$out/r" --json >"$out/log"
grep -q '"points": 9, "failed": 0' "$out/log" || { cat "$out/log"; exit 1; }
j="$out/r/llm_step.json"
get() { sed -n "s/^ *\"$1\": \([-0-9.e+]*\),\{0,1\}$/\1/p" "$j" | head -1; }
awk -v l="$(get layer_ps)" -v h="$(get lm_head_ps)" -v t="$(get token_ps)" \
    -v r="$(get tokens_per_s)" -v g="$(get gemm)" -v a="$(get attention)" -v n="$(get norm)" \
    -v ar="$(get allreduce)" -v o="$(get other)" -v sj="$(get step_j)" \
    -v jt="$(get j_per_token)" -v tj="$(get tokens_per_j)" -v lj="$(get layer_j)" \
    -v hj="$(get lm_head_j)" 'BEGIN {
        bad = 0
        if (l <= 0 || h <= 0) { print "no layer or LM head time"; bad = 1 }
        if (t != 32 * l + h) { print "token_ps " t " is not 32 x " l " + " h; bad = 1 }
        d = r - 2e12 / t; if (d * d > 1e-6) { print "tokens_per_s " r ", want " 2e12 / t; bad = 1 }
        s = g + a + n + ar + o; d = (s - t) / t
        if (o > 0 && d * d > 1e-12) { print "breakdown sums to " s ", token " t; bad = 1 }
        if (lj <= 0 || hj <= 0) { print "no layer or LM head energy"; bad = 1 }
        d = (sj - (32 * lj + hj)) / sj
        if (d * d > 1e-12) { print "step_j " sj " is not 32 x " lj " + " hj; bad = 1 }
        d = (jt - sj / 2) / jt; if (d * d > 1e-12) { print "j_per_token " jt ", want " sj / 2; bad = 1 }
        d = (tj * jt - 1); if (d * d > 1e-12) { print "tokens_per_j " tj " is not 1 / " jt; bad = 1 }
        exit bad }'
grep -q '^## llm-step: time per token' "$out/r/report.md"
grep -q '^| llama3-8b b2 100 |' "$out/r/report.md"
python3 - "$out/r" <<'PY'
import json, sys
d = sys.argv[1]
e = json.load(open(f"{d}/llm_step.json"))["energy_per_token"]
sw = {p["name"]: p["points"][0] for p in json.load(open(f"{d}/sweep.json"))["panels"]
      if p["name"].startswith("energy")}
assert len(e) == 1 and e[0]["model"] == "llama3-8b", e
r = e[0]
assert r["machine"] == "tt_wormhole_n300.yaml" and r["tp"] == 2 and r["status"] == "ok", r
assert 12.88e9 < r["need_bytes"] <= r["dram_bytes"], r
layer, head = sw["energy-llama3-8b"], sw["energy-head-llama3-8b"]
assert layer["params"]["tp"] == 2 and layer["params"]["past_len"] == 100, layer["params"]
step = 32 * layer["energy_j"] + head["energy_j"]
tok = 32 * layer["kernel_ps"] + head["kernel_ps"]
assert abs(r["step_j"] - step) <= 1e-9 * step, (r, step)
assert abs(r["token_ps"] - tok) <= 1e-9 * tok, (r, tok)
assert abs(r["avg_power_w"] - step / (tok * 1e-12)) <= 1e-6 * r["avg_power_w"], r
assert abs(r["tokens_per_j"] * step - 1) < 1e-9, r
PY
grep -q '^### Energy per token on the smallest machine that holds each model' "$out/r/report.md"
grep -q '^| llama3-8b | tt_wormhole_n300.yaml | 25.8 |' "$out/r/report.md"
test -s "$out/r/figures/llm_energy.dat" && test -s "$out/r/figures/llm_energy.gp"
# Only the n150 to choose from: none holds it, nothing runs for it.
mkdir "$out/m"
cp "${CUBESIM_SOURCE_DIR:?}/topologies/tt_wormhole_n150.yaml" "$out/m/"
"$bin" bench run llm-step --set models=llama3-8b --set batches=2 --set contexts=100 \
        --set prefill_models= --set tp_sips= --set figures=0 --set energy_machines="$out/m" \
        --out "$out/r2" --json >"$out/log"
grep -q '"points": 7, "failed": 0' "$out/log" || { cat "$out/log"; exit 1; }
grep -q '^| llama3-8b | none holds it | - | 16.1 |' "$out/r2/report.md" ||
        { sed -n '/### Energy/,$p' "$out/r2/report.md"; exit 1; }
"$bin" bench run llm-step --set models=llama3-8b --set batches=2 --set contexts=100 \
        --set prefill_models= --set tp_sips= --set figures=0 --set energy_models= \
        --out "$out/r3" --json >"$out/log"
grep -q '"points": 7, "failed": 0' "$out/log" || { cat "$out/log"; exit 1; }
! grep -q 'Energy per token on the smallest' "$out/r3/report.md"
if "$bin" bench run llm-step --set energy_models=llama9 --out "$out/r4" 2>"$out/err"; then
        echo "energy_models=llama9 accepted"; exit 1
fi
grep -qF "error: --set energy_models=llama9: no model preset 'llama9'" "$out/err" ||
        { cat "$out/err"; exit 1; }
echo "llm-step: token time, rate and breakdown agree with the points"
