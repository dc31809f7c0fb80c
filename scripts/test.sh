#!/usr/bin/env bash
# Build cubesim with warnings as errors and run the whole test suite; then
# build again with AddressSanitizer + UndefinedBehaviorSanitizer and run the
# suite once more; then a few representative command lines under valgrind
# memcheck; with CI=true, each fuzz harness for a minute (scripts/fuzz.sh).
# Exits non-zero if anything fails.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc 2>/dev/null || echo 2)

echo "== build (warnings as errors) =="
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCUBESIM_WERROR=ON >/dev/null
cmake --build build -j "$jobs"
echo "== tests =="
ctest --test-dir build --output-on-failure -j "$jobs"

echo "== build (ASan + UBSan) =="
cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DCUBESIM_WERROR=ON -DCUBESIM_SANITIZE=ON >/dev/null
cmake --build build-asan -j "$jobs"
echo "== tests under ASan + UBSan =="
ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
        ctest --test-dir build-asan --output-on-failure -j "$jobs"

# Memcheck on a build with the ucontext coroutine switch: valgrind follows
# swapcontext, but not the hand-written switch onto stacks it was not told
# about (engine/coro.c does not register them with VALGRIND_STACK_REGISTER).
echo "== valgrind memcheck =="
cmake -S . -B build-valgrind -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCUBESIM_WERROR=ON \
        -DCUBESIM_TESTS=OFF -DCUBESIM_CORO_UCONTEXT=ON >/dev/null
cmake --build build-valgrind -j "$jobs" --target cubesim api_repeat >/dev/null
vg_tmp=$(mktemp -d)
trap 'rm -rf "$vg_tmp"' EXIT
cp tests/bad/npy/truncated.npy "$vg_tmp/a.npy"
for k in tag_mismatch stale_replica unreceived; do
        cc -std=c11 -O1 -Wno-unused-parameter -shared -fPIC -I include "tests/bad/kernels/$k.c" \
                -o "$vg_tmp/lib$k.so"
done
vg_failed=0
memcheck() {  # memcheck STATUS ARGS...: cubesim ARGS exits STATUS, memcheck finds nothing
        local want=$1 rc=0
        shift
        # 99: a memcheck error or leak, told apart from cubesim's own 1 and 2.
        valgrind -q --error-exitcode=99 --leak-check=full --show-leak-kinds=definite,indirect,possible \
                --errors-for-leak-kinds=definite,indirect,possible \
                build-valgrind/cubesim "$@" >"$vg_tmp/out" 2>"$vg_tmp/err" || rc=$?
        if [ "$rc" -ne "$want" ]; then
                echo "FAIL memcheck: cubesim $*: exit $rc, want $want"
                grep -v '^==[0-9]*== *$' "$vg_tmp/err" | head -40
                vg_failed=1
        fi
}
memcheck 0 topo check topologies/*.yaml
memcheck 0 topo show --format json topologies/small.yaml
memcheck 2 topo check tests/bad/topo/negative.yaml tests/bad/topo/alias_bomb.yaml
memcheck 0 run gemm --mode data --topo topologies/small.yaml --set m=64 --set n=48 --set k=32
memcheck 0 run gqa_decode --topo topologies/small.yaml --set seq_len=256
memcheck 0 run llm_layer --mode data --topo topologies/small.yaml --set past_len=20 --set q_len=2 --set tp=2
memcheck 0 run tt_matmul --mode data --topo topologies/tt_wormhole_n150.yaml --set m=128 --set k=96 \
        --set n=160 --set dtype=bfp8_b --set in0=dram
memcheck 0 run gqa_decode --topo topologies/small.yaml --set seq_len=256 --profile --json \
        --trace "$vg_tmp/t.json.gz" --trace-pes 0-3 --trace-window 100:
memcheck 2 run gemm --mode data --inputs "$vg_tmp"
memcheck 2 run gemm --set tile_m=4096 --set tile_k=4096
memcheck 1 run gemm --max-events 50
memcheck 1 run tag_mismatch --kernels "$vg_tmp/libtag_mismatch.so" --topo topologies/small.yaml
memcheck 1 run stale_replica --kernels "$vg_tmp/libstale_replica.so" --topo topologies/small.yaml --mode data
memcheck 1 run unreceived --kernels "$vg_tmp/libunreceived.so" --topo topologies/small.yaml --mode data
memcheck 0 sweep --list sweeps/gemm_sizes.yaml
memcheck 2 sweep --list tests/bad/sweep/unknown_key.yaml
memcheck 0 serve --model llama3.2-1b --topo topologies/small.yaml --qps 200 --requests 4 \
        --prompt-len uniform:5:40 --output-len uniform:2:5 --check-steps 2
memcheck 2 serve --model llama3-8b --qps 0 --tp 0 --policy x
# The run API as a library: several kernels again and again in one process
# (tests/api/api_repeat.c), nothing leaked between runs.
rc=0
CUBESIM_SOURCE_DIR=$PWD valgrind -q --error-exitcode=99 --leak-check=full \
        --show-leak-kinds=definite,indirect,possible --errors-for-leak-kinds=definite,indirect,possible \
        build-valgrind/api_repeat >"$vg_tmp/out" 2>"$vg_tmp/err" || rc=$?
if [ "$rc" -ne 0 ]; then
        echo "FAIL memcheck: api_repeat: exit $rc, want 0"
        grep -v '^==[0-9]*== *$' "$vg_tmp/err" | head -40
        vg_failed=1
fi
[ "$vg_failed" -eq 0 ] || exit 1
echo "memcheck: clean"

if [ "${CI:-}" = true ]; then
        echo "== fuzz (CI: ${FUZZ_SECONDS:-60} s per harness) =="
        bash scripts/fuzz.sh --time "${FUZZ_SECONDS:-60}"
fi
