#!/usr/bin/env bash
# `cubesim run`: repeatable op_log, outputs written, exit codes and messages
# for kernel errors (1) and bad input (2).
set -uo pipefail
bin=${CUBESIM_BIN:?}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
check() {  # check WANT_STATUS NEEDLE -- ARGS...
        local want=$1 needle=$2; shift 3
        local out; out=$("$bin" "$@" 2>&1); local rc=$?
        if [ "$rc" -ne "$want" ]; then
                echo "FAIL: cubesim $*: exit $rc, want $want"; echo "$out" | head -5; fail=1
        elif ! grep -qF -- "$needle" <<<"$out"; then
                echo "FAIL: cubesim $*: output lacks '$needle':"; echo "$out" | head -5; fail=1
        fi
}

# The same run twice gives the same op_log, byte for byte.
"$bin" run gemm --set m=200 --set n=130 --set k=96 --oplog "$tmp/a.jsonl" --trace "$tmp/a.json" >/dev/null || fail=1
"$bin" run gemm --set m=200 --set n=130 --set k=96 --oplog "$tmp/b.jsonl" >/dev/null || fail=1
cmp -s "$tmp/a.jsonl" "$tmp/b.jsonl" || { echo "FAIL: op_log differs between two runs"; fail=1; }
[ "$(wc -l <"$tmp/a.jsonl")" -gt 100 ] || { echo "FAIL: op_log too short"; fail=1; }
head -c 1 "$tmp/a.json" | grep -q '{' || { echo "FAIL: no trace written"; fail=1; }
tail -c 3 "$tmp/a.json" | grep -q '}' || { echo "FAIL: trace not closed"; fail=1; }

# Data mode writes the outputs; they can come back as inputs.
"$bin" run gemm --mode data --set m=32 --set n=48 --set k=16 --outputs "$tmp/out" >/dev/null || fail=1
[ -s "$tmp/out/c.npy" ] || { echo "FAIL: c.npy not written"; fail=1; }
mkdir -p "$tmp/in" && cp "$tmp/out/c.npy" "$tmp/in/a.npy"
# a.npy is [32, 48]: m and k come from it when unset ...
check 0 "kernel gemm" -- run gemm --mode data --inputs "$tmp/in" --set dtype=fp32
# ... and a disagreeing --set is bad input naming both shapes.
check 2 "shape [32, 48] does not match the kernel's [40, 48] for 'a'" -- run gemm --mode data --inputs "$tmp/in" --set m=40

# Kernel errors: exit 1, the kernel's line, the PE, the op.
check 1 "PE sip0.cube0.pe0: tl_alloc: TCM:" -- run gemm --set tile_m=4096 --set tile_k=4096
check 1 "kernels/gemm.c:" -- run gemm --set tile_m=4096 --set tile_k=4096

# Bad input: exit 2 with a located, helpful message.
check 2 "kernel gemm has no parameter 'tile_q'; did you mean 'tile_m'?" -- run gemm --set tile_q=3
check 2 "--set dtype=fp8: expected one of fp32, bf16, fp16" -- run gemm --set dtype=fp8
check 2 "--set m=0: expected an integer in [1, 1048576]" -- run gemm --set m=0
check 2 "no kernel 'gemn'; did you mean 'gemm'?" -- run gemn
check 2 "--mode fast: expected oplog or data" -- run gemm --mode fast
check 2 "--outputs needs --mode data" -- run gemm --outputs "$tmp/x"
check 2 "unknown option '--tarce'; did you mean '--trace'?" -- run gemm --tarce x
check 0 "issue" -- run program_ids --set issue_cost.program_id_ns=7 --json
out=$("$bin" run program_ids --set issue_cost.program_id_ns=7 --json)
grep -q '"kernel_ps": 42000' <<<"$out" || { echo "FAIL: issue cost override not applied"; fail=1; }
[ $fail -eq 0 ] && echo "run cli: all cases pass"
exit $fail
