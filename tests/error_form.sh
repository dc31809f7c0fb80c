#!/usr/bin/env bash
# Every error message has one form: "cubesim COMMAND: error: ..." when it
# names no file, "FILE[:LINE[:COL]]: error: ..." when it does; never a
# bare "error: ...", nor one located at an option ("--set k=v: error: ...").
set -euo pipefail
bin=${CUBESIM_BIN:?}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
printf 'version: 1\nname: s\nkernel: gqa_decode\ngrid: {bogus: [1]}\n' >"$tmp/s.yaml"
printf 'name: x\ncube: {hbm: {channels: -1}}\n' >"$tmp/t.yaml"
fail=0
while IFS= read -r cmd; do
        set +e
        err=$(eval "$bin $cmd" 2>&1 >/dev/null)
        set -e
        while IFS= read -r line; do
                case $line in
                *error:*|*warning:*) ;;
                *) continue ;;
                esac
                # An option is not a file: "--set k=v: error:" is neither form.
                if [[ ! $line =~ ^(cubesim\ [a-z\ ]+|[^-\ ][^\ ]*):\ (error|warning): ]]; then
                        echo "FAIL: cubesim $cmd: '$line'"
                        fail=1
                fi
        done <<<"$err"
        grep -q "error:" <<<"$err" || { echo "FAIL: cubesim $cmd: no error message"; fail=1; }
done <<EOF2
run gqa_decode --set bogus=1
run gqa_decode --set seq_len=x
run gqa_decode --mode nope
run gqa_decode --topo $tmp/t.yaml
run nope
run gqa_decode --trace $tmp/x.json --trace-pes 99999
bench run milestone-gqa-headline --set panels=nope
bench run nope
sweep $tmp/s.yaml --out $tmp/o
sweep /nonexistent.yaml
topo check $tmp/t.yaml
kernels --kernels /nonexistent.so
run gemm --set pe.dma.bw_gbps=-1
run gemm --set system.tdp_w=-1
topo check --set pe.dma.bw_gbps=x $tmp/t.yaml
topo show --set pe.dmx=1
bench run llm-step --set pe.dma.bw_gbps=-1
compare /nonexistent.json $tmp/s.yaml
compare $tmp/s.yaml $tmp/s.yaml
EOF2
[ $fail -eq 0 ] && echo "error_form: every message in one form"
exit $fail
