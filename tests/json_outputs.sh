#!/usr/bin/env bash
# tests/json_outputs.sh: every JSON the command line can write parses, as
# strict JSON (no NaN or Infinity), whatever the paths and names in it:
# run --json (with --profile), each bench's --json at a small size, a
# sweep's sweep.json and point files, the trace (plain and gzip), each
# op_log line, topo show --format json. The output folder's name holds a
# quote, a backslash and a newline, and must come back as it was.
set -uo pipefail
. "${CUBESIM_SOURCE_DIR:?CUBESIM_SOURCE_DIR must name the source tree}/tests/lib/script.sh"
cd "$src"
fail=0
odd="$tmp/o\"ut\\di"$'\n'"r"
mkdir -p "$odd"

# strict FILE...: each file is one JSON document (FILE.jsonl: one a line).
strict() {
        python3 - "$@" <<'PY'
import gzip, json, sys
def bad(c):
    raise ValueError("not JSON: " + c)
for path in sys.argv[1:]:
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as f:
        text = f.read()
    docs = text.splitlines() if ".jsonl" in path else [text]
    if not docs or not text.strip():
        sys.exit(f"{path}: empty")
    for i, d in enumerate(docs):
        try:
            json.loads(d, parse_constant=bad)
        except ValueError as e:
            sys.exit(f"{path}:{i + 1}: {e}: {d[:200]!r}")
PY
}
# json NAME CMD...: CMD must exit 0 and print one strict JSON document.
json() {
        local name=$1
        shift
        if ! "$bin" "$@" >"$tmp/$name.json" 2>"$tmp/$name.err"; then
                echo "FAIL: $name: exit status $? ($*)"; sed 's/^/    /' "$tmp/$name.err" | head -5
                fail=1
        elif ! strict "$tmp/$name.json"; then
                echo "FAIL: $name: invalid JSON"; fail=1
        fi
}

json run run gemm --set m=128 --set n=128 --set k=128 --json --profile \
        --oplog "$odd/o.jsonl" --trace "$odd/t.json"
json run_gz run gemm --set m=128 --set n=128 --set k=128 --json --trace "$odd/t.json.gz" \
        --oplog "$odd/o.jsonl.gz"
strict "$odd/o.jsonl" "$odd/t.json" "$odd/t.json.gz" "$odd/o.jsonl.gz" ||
        { echo "FAIL: the trace or the op_log"; fail=1; }
# The trace or the op_log on standard output: the summary goes to stderr.
"$bin" run gemm --set m=64 --set n=64 --set k=64 --trace - >"$tmp/stdout_trace.json" 2>/dev/null &&
        "$bin" run gemm --set m=64 --set n=64 --set k=64 --oplog - >"$tmp/stdout.jsonl" 2>/dev/null &&
        strict "$tmp/stdout_trace.json" "$tmp/stdout.jsonl" ||
        { echo "FAIL: the trace or the op_log on standard output"; fail=1; }
json topo topo show --format json

json engine_hold bench run engine-hold --set procs=4 --set iters=100 --json
json engine_phold bench run engine-phold --set lps=8 --set events=1000 --json
json gqa_dispatch bench run gqa-decode-dispatch --set seq_len=512 --json
json sim_speed bench run sim-speed --set seq_len=256 --set procs=4 --set iters=100 --json
head -3 benches/data/tt_n150_matmul_bf16.csv >"$tmp/rows.csv"
json validate bench run validate-tt-gemm --set figures=0 --set csv="$tmp/rows.csv" \
        --out "$odd/validate" --json
json headline bench run milestone-gqa-headline --out "$odd/head" --set panels=decode-long \
        --set models=llama3-8b --set decode_contexts=4096 --set figures=0 --json
json llm_step bench run llm-step --set models=llama3-8b --set batches=1 --set contexts=4096 \
        --set prefill_models= --set tp_sips= --set figures=0 --out "$odd/llm" --json
strict "$odd/head/sweep.json" "$odd"/head/points/*.json "$odd/llm/sweep.json" \
        "$odd/llm/llm_step.json" || { echo "FAIL: a bench's files"; fail=1; }

# The folder's name comes back as it was, in every bench that prints it.
python3 - "$odd" "$tmp"/validate.json "$tmp"/headline.json "$tmp"/llm_step.json <<'PY' ||
import json, sys
odd = sys.argv[1]
for p in sys.argv[2:]:
    out = json.load(open(p))["out"]
    assert out.startswith(odd), (p, out, odd)
PY
        { echo "FAIL: the --out path in --json"; fail=1; }

# A sweep's own files.
cat >"$tmp/spec.yaml" <<'YAML'
version: 1
name: small
kernel: gemm
topology: default
grid:
  m: [128, 256]
YAML
"$bin" sweep "$tmp/spec.yaml" --out "$odd/sweep" --no-figures >/dev/null 2>"$tmp/sweep.err" ||
        { echo "FAIL: sweep"; cat "$tmp/sweep.err"; fail=1; }
strict "$odd/sweep/sweep.json" "$odd"/sweep/points/*.json || { echo "FAIL: sweep files"; fail=1; }

[ $fail -eq 0 ] && echo "json outputs: all parse"
exit $fail
