#!/usr/bin/env bash
# tests/sweep_machines.sh: machines in sweeps (docs/sweeps.md, ADR 0029).
# A grid over machine files and over named variants (`machines:`), a panel
# with its own `topology:`; each point records its machine, runs on it
# (different machines give different times, the same machine the same
# time whichever way it is named), figures and the report label points by
# machine, and --resume reruns the points whose machine file changed.
# llm-step takes --topo and machine --set keys.
# Environment: CUBESIM_BIN, CUBESIM_SOURCE_DIR (ctest sets them).
set -u
. "${CUBESIM_SOURCE_DIR:?CUBESIM_SOURCE_DIR must name the source tree}/tests/lib/script.sh"
fail=0
cp "$src/topologies/small.yaml" "$tmp/small.yaml"
cat >"$tmp/spec.yaml" <<'EOF'
version: 1
name: m
kernel: gemm
params: {n: 128, k: 128}
machines:
  fastdma: {pe.dma.bw_gbps: 512}
panels:
  - name: files
    grid:
      topology: [small.yaml, default]
      m: [128, 256]
  - name: variants
    grid:
      machine: [fastdma]
      m: [128, 256]
  - name: own
    topology: small.yaml
    points: [{m: 128}, {m: 256}]
EOF
out=$tmp/out
"$bin" sweep "$tmp/spec.yaml" --out "$out" --no-progress >"$tmp/log" 2>&1
check "the sweep over machines succeeds" test $? -eq 0
python3 - "$out/sweep.json" <<'EOF' || fail=1
import json, sys
sw = json.load(open(sys.argv[1]))
p = {pn["name"]: pn["points"] for pn in sw["panels"]}
def t(panel, i): return p[panel][i]["kernel_ps"]
ok = True
def want(cond, what):
    global ok
    if not cond:
        print("FAIL:", what); ok = False
want([q["machine"] for q in p["files"]] == ["small", "small", "default", "default"],
     "files: machines %s" % [q.get("machine") for q in p["files"]])
want([q["machine"] for q in p["variants"]] == ["default/fastdma"] * 2, "variant labels")
want([q["machine"] for q in p["own"]] == ["small"] * 2, "panel topology label")
want(t("files", 0) != t("files", 2), "small and default give the same time")
want(t("files", 2) != t("variants", 0), "the variant's DMA bandwidth changed nothing")
want(t("files", 0) == t("own", 0) and t("files", 1) == t("own", 1),
     "a panel's topology and a grid's give different times on one machine")
sys.exit(0 if ok else 1)
EOF
check "the time figure's series are the machines" grep -q '^# series 0: small$' "$out/figures/time_files.dat"
check "the report names the machine column by its stem" grep -q '^| 0 | small | 128 | ok |' "$out/report.md"
check "the report names a panel's machine" grep -q '^Machine: `small`' "$out/report.md"
check "an idle warning counts the point's own machine" grep -qF \
        '(topology=small, m=128) leaves 1 cubes and 4 PEs of its machine idle' "$out/report.md"
# --resume: every point kept; then the machine file changes and only its points rerun.
"$bin" sweep "$tmp/spec.yaml" --out "$out" --resume --no-figures >"$tmp/log" 2>&1
check "--resume keeps all 8 points" grep -q '8 resumed' "$tmp/log"
sed -i 's/channels: 4 /channels: 2 /' "$tmp/small.yaml"
"$bin" sweep "$tmp/spec.yaml" --out "$out" --resume --no-figures >"$tmp/log" 2>&1
check "--resume reruns the 4 points of the changed machine file" grep -q '4 resumed' "$tmp/log"

# llm-step on two machines: --topo and a machine --set change its figures.
step() {
        "$bin" bench run llm-step --set models=llama3-8b --set batches=1 --set contexts=4096 \
                --set prefill_models= --set tp_sips= --set figures=0 --out "$tmp/$1" "${@:2}" \
                >"$tmp/$1.log" 2>&1
}
step a --topo "$src/topologies/small.yaml"
check "llm-step --topo runs" test $? -eq 0
step b --set pe.dma.bw_gbps=512
check "llm-step with a machine --set runs" test $? -eq 0
check "llm-step ran on the machine file" grep -q "topology: $src/topologies/small.yaml" "$tmp/a/spec.yaml"
check "llm-step's spec holds the machine --set" grep -q "pe.dma.bw_gbps: 512" "$tmp/b/spec.yaml"
a=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["cases"][0]["token_ps"])' "$tmp/a/llm_step.json")
b=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["cases"][0]["token_ps"])' "$tmp/b/llm_step.json")
check "the two machines give different times per token ($a, $b)" test "$a" != "$b"
"$bin" bench run llm-step --topo "$tmp/nope.yaml" --set pe.dma.bw_gbps=-1 >"$tmp/bad.log" 2>&1
check "a bad --topo exits 2" test $? -eq 2
check "a bad --topo is named" grep -qF "cubesim bench run: error: --topo $tmp/nope.yaml: no such file" "$tmp/bad.log"
"$bin" bench run llm-step --set pe.dma.bw_gbps=-1 >"$tmp/bad.log" 2>&1
check "a bad machine --set is named" grep -qF "cubesim bench run: error: --set pe.dma.bw_gbps=-1: pe.dma.bw_gbps must be > 0 (got -1)" "$tmp/bad.log"
[ $fail -eq 0 ] && echo "sweep_machines: ok"
exit $fail
