#!/usr/bin/env bash
# Command-line usage: help exits 0, bad usage exits 2 with a clear message.
set -uo pipefail
bin=${CUBESIM_BIN:?}
fail=0
expect() {  # expect STATUS NEEDLE -- ARGS...
        local want=$1 needle=$2; shift 3
        local out; out=$("$bin" "$@" 2>&1); local rc=$?
        if [ "$rc" -ne "$want" ]; then
                echo "FAIL: cubesim $*: exit $rc, want $want"; fail=1
        elif ! grep -qF -- "$needle" <<<"$out"; then
                echo "FAIL: cubesim $*: output lacks '$needle':"; echo "$out" | head -5; fail=1
        fi
}
expect 0 "usage: cubesim COMMAND" -- --help
expect 2 "usage: cubesim COMMAND" --
expect 2 "unknown command 'bnech'; did you mean 'bench'?" -- bnech
expect 0 "usage: cubesim bench list" -- bench --help
expect 2 "no bench 'engine-hodl'; did you mean 'engine-hold'?" -- bench run engine-hodl
expect 2 "unknown option '--sett'; did you mean '--set'?" -- bench run engine-hold --sett procs=1
expect 2 "--set procs=abc: expected an integer in [1, 10000000]" -- bench run engine-hold --set procs=abc
expect 2 "engine-hold has no parameter 'proc'; did you mean 'procs'?" -- bench run engine-hold --set proc=3
expect 2 "--set x: expected key=value" -- bench run engine-hold --set x
expect 2 "--jobs 0: expected an integer in [1, 1024]" -- bench run engine-hold --jobs 0
expect 0 "sim_end_ns: 600" -- bench run engine-hold --set procs=10 --set iters=200
expect 0 "procs=N" -- bench help engine-hold
expect 0 "--max-events N    stop with an error after N events (default 4e9" -- run --help
expect 0 "(default 1e10: ten simulated seconds" -- run --help
expect 0 "usage: cubesim serve [--model M]" -- serve --help
expect 0 "serve --model M --qps X" -- --help
[ $fail -eq 0 ] && echo "cli usage: all cases pass"
exit $fail
