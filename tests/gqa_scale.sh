#!/bin/bash
# tests/gqa_scale.sh: the GQA kernels at long context in op_log mode stay
# within the 1 MiB scratch ceiling and the TCM beside it (tiles sized from
# the machine, the running state merged in place in TCM): decode at 128K
# context and prefill at 8K on the default machine run to completion with
# exit status 0. (Prefill at 32K also fits; it takes ~10 s, so it is left
# to the headline bench.)
set -euo pipefail
bin=${CUBESIM_BIN:?set by ctest}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

run() {
        local name=$1
        shift
        if ! "$bin" run "$@" --json > "$out/$name.json" 2> "$out/$name.err"; then
                echo "FAIL: cubesim run $* exited non-zero:" >&2
                cat "$out/$name.err" >&2
                exit 1
        fi
        grep -q '"kernel": "gqa_' "$out/$name.json" || { echo "FAIL: $name: no summary" >&2; exit 1; }
}

run decode128k gqa_decode --set model=llama3-70b --set seq_len=131072
run decode128k_fp32 gqa_decode --set model=llama31-405b --set seq_len=131072 --set dtype=fp32
run opt3_128k gqa_decode_opt3 --set model=llama3-70b --set seq_len=131072 --set tile_frac=0.25
run short128k gqa_decode_short --set model=llama3-8b --set seq_len=131072 --set kv_per_cube=2
run prefill8k gqa_prefill --set model=llama3-70b --set seq_len=8192
run prefill_short8k gqa_prefill_short --set model=mistral-7b --set seq_len=8192 --set kv_per_cube=2 \
        --set batch=1
echo "ok"
