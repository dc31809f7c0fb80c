#!/usr/bin/env bash
# bench llm-step on one small case (llama3-8b, batch 2, 100 tokens of
# context, no prefill, no TP panel): its sweep runs every part of the layer
# and the LM head, and the figures it derives follow from the points: time
# per token = 32 layers x one layer + the LM head, tokens/s = batch / that,
# the breakdown adds up to the token, joules per token = the step's
# energy / batch and tokens per joule its inverse, and the report has its
# section.
set -euo pipefail
bin=${CUBESIM_BIN:?}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
"$bin" bench run llm-step --set models=llama3-8b --set batches=2 --set contexts=100 \
        --set prefill_models= --set tp_sips= --set figures=0 --out "$out/r" --json >"$out/log"
grep -q '"points": 7, "failed": 0' "$out/log" || { cat "$out/log"; exit 1; }
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
echo "llm-step: token time, rate and breakdown agree with the points"
