#!/usr/bin/env bash
# The prefill blocking of llm_layer (kernels/llm.h, docs/adr/0032): the
# GEMMs of a llama3-8b layer at 1K tokens, no cache, on the default
# machine reach at least 25% of its peak GEMM FLOP/s (2.5x what 256 x 128
# blocks with their own A tiles reached: 11.1%), and the whole layer at 2K
# at least 30% (the old blocking: 10.1%). Simulated figures, not timed.
set -euo pipefail
bin=${CUBESIM_BIN:?}
share() {
        "$bin" run llm_layer --set model=llama3-8b "$@" --json |
                python3 -c 'import json, sys; d = json.load(sys.stdin); print(d["tflops"] / d["peak_tflops"])'
}
check() {   # name, floor, share
        awk -v n="$1" -v f="$2" -v s="$3" 'BEGIN {
                if (s < f) { printf "%s: %.1f%% of peak GEMM FLOP/s, want >= %.0f%%\n", n, 100 * s, 100 * f; exit 1 }
                printf "%s: %.1f%% of peak GEMM FLOP/s\n", n, 100 * s }'
}
check "GEMMs at 1K" 0.25 "$(share --set q_len=1024 --set part=gemm)"
check "layer at 2K" 0.30 "$(share --set q_len=2048)"
