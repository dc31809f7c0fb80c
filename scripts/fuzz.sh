#!/usr/bin/env bash
# scripts/fuzz.sh: build every libFuzzer harness of fuzz/ with clang
# (-fsanitize=fuzzer,address,undefined) and run each for a bounded time.
#
#   bash scripts/fuzz.sh [--time SECONDS] [--merge] [HARNESS...]
#
# HARNESS is npy, topo, sweep or kernel (default: all of fuzz/fuzz_*.c); --time is
# each harness's budget (default 60 s, or $FUZZ_SECONDS). The core is built
# once into build-fuzz/ (or $FUZZ_OUT; an object is rebuilt when its source
# or any header is newer). Each harness starts from its seed corpus
# fuzz/corpus/NAME/ (read only) and writes what it finds to
# build-fuzz/found/NAME/; --merge then adds the inputs that reach new code
# to the seed corpus (review before committing).
#
# A crash, sanitizer report, leak, timeout (10 s on one input) or memory
# blow-up (2 GiB) fails the script. Each such input is also copied into the
# bad-input corpus as a regression test, tests/bad/KIND/fuzz-HASH.EXT with a
# sidecar stating a placeholder message that fails its test on purpose:
# fix the bug, then write the message the input must produce into the
# sidecar (tests/bad/README.md). KIND is topo, sweep, npy, or kernels for
# the kernel harness (a program: fuzz-HASH.bin with fuzz-HASH.expect).
# Exit status: 0 no finding; 1 a finding; 2 bad usage or a build failure.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
root=$PWD

seconds=${FUZZ_SECONDS:-60}
merge=0
harnesses=()
while [ $# -gt 0 ]; do
        case $1 in
        --time) seconds=${2:?--time needs SECONDS}; shift 2 ;;
        --merge) merge=1; shift ;;
        -h | --help) sed -n '2,21p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        -*) echo "fuzz.sh: unknown option '$1'" >&2; exit 2 ;;
        *) harnesses+=("$1"); shift ;;
        esac
done
if [ ${#harnesses[@]} -eq 0 ]; then
        for f in fuzz/fuzz_*.c; do
                h=$(basename "$f" .c)
                harnesses+=("${h#fuzz_}")
        done
fi
case $seconds in '' | *[!0-9]*) echo "fuzz.sh: --time $seconds: expected seconds" >&2; exit 2 ;; esac
for h in "${harnesses[@]}"; do
        [ -f "fuzz/fuzz_$h.c" ] || { echo "fuzz.sh: no harness fuzz/fuzz_$h.c" >&2; exit 2; }
done

CC=${FUZZ_CC:-clang}
command -v "$CC" >/dev/null || { echo "fuzz.sh: $CC not found (scripts/deps.sh installs clang)" >&2; exit 2; }
jobs=$(nproc 2>/dev/null || echo 2)
out=${FUZZ_OUT:-build-fuzz}
mkdir -p "$out/obj" "$out/found" "$out/crashes" || exit 2

# ---- build: the core (instrumented, no fuzzer main), then each harness ----
san=(-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer)
cflags=(-std=c11 -g -O1 -D_GNU_SOURCE -DCUBESIM_ASSERTS=1 -DCUBESIM_SANITIZED=1
        -DCUBESIM_VERSION='"fuzz"' -DCUBESIM_SOURCE_DIR="\"$root\""
        -fmacro-prefix-map="$root/=" -Wall -Wextra -Wshadow -Wstrict-prototypes
        -Wmissing-prototypes -Wno-unused-parameter -Werror
        -Isrc -I. -Iinclude $(pkg-config --cflags yaml-0.1 jansson zlib))
libs=($(pkg-config --libs yaml-0.1 jansson zlib) -lm -ldl)
export CC
export FUZZ_OBJ=$out/obj
export CFLAGS_STR="${cflags[*]} ${san[*]} -fsanitize=fuzzer-no-link"
srcs=$(find src kernels benches -name '*.c' ! -path 'src/cli/main.c' ! -path 'benches/compare/*' | sort)
echo "== fuzz: building the core with $CC ($(echo "$srcs" | wc -l) files) =="
# shellcheck disable=SC2016
if ! echo "$srcs" | xargs -P "$jobs" -I{} sh -c '
        o=$FUZZ_OBJ/$(echo "{}" | tr / _).o
        if [ ! -f "$o" ] || [ "{}" -nt "$o" ] || [ -n "$(find src include -name "*.h" -newer "$o" | head -1)" ]; then
                $CC $CFLAGS_STR -c "{}" -o "$o" || exit 255
        fi'; then
        echo "fuzz.sh: building the core failed" >&2
        exit 2
fi
rm -f "$out/libcore.a"
# Only the objects of today's sources: one left by a file since moved or
# removed would define its symbols twice.
objs=()
for f in $srcs; do
        objs+=("$out/obj/$(echo "$f" | tr / _).o")
done
ar rcs "$out/libcore.a" "${objs[@]}" || exit 2
for h in "${harnesses[@]}"; do
        # Whole archive: the kernel registry refers to every kernel.
        if ! $CC "${cflags[@]}" "${san[@]}" -fsanitize=fuzzer "fuzz/fuzz_$h.c" \
                -Wl,--whole-archive "$out/libcore.a" -Wl,--no-whole-archive "${libs[@]}" \
                -o "$out/fuzz_$h"; then
                echo "fuzz.sh: building fuzz_$h failed" >&2
                exit 2
        fi
done

# ---- run ----
max_len() {
        case $1 in
        npy) echo 12000 ;;          # reaches the 10000-byte header limit
        *) echo 8192 ;;
        esac
}
ext_of() {
        case $1 in
        npy) echo npy ;;
        kernel) echo bin ;;
        *) echo yaml ;;
        esac
}
kind_of() {    # the bad-input directory of a harness's findings
        case $1 in
        kernel) echo kernels ;;   # replayed by tests/unit/test_fuzz_replay.c
        *) echo "$1" ;;
        esac
}

status=0
summary=()
for h in "${harnesses[@]}"; do
        mkdir -p "$out/found/$h" "$out/crashes/$h"
        rm -f "$out/crashes/$h"/*
        dict=()
        [ -f "fuzz/$h.dict" ] && dict=(-dict="fuzz/$h.dict")
        log=$out/fuzz_$h.log
        echo "== fuzz: $h for ${seconds}s (log: $log) =="
        # stdin from /dev/null: a fuzzed path that names it must not block.
        ASAN_OPTIONS=detect_leaks=1 \
                "$out/fuzz_$h" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
                -max_len="$(max_len "$h")" -print_final_stats=1 "${dict[@]}" \
                -artifact_prefix="$out/crashes/$h/" "$out/found/$h" "fuzz/corpus/$h" \
                </dev/null >"$log" 2>&1
        rc=$?
        execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
        found=("$out/crashes/$h"/*)
        if [ "$rc" -ne 0 ] || [ -e "${found[0]}" ]; then
                status=1
                summary+=("$h: FINDING after ${execs:-?} execs (exit $rc)")
                grep -m5 -E 'ERROR|SUMMARY|internal error|deadly signal' "$log" | sed 's/^/    /'
                kind=$(kind_of "$h")
                for f in "${found[@]}"; do
                        [ -e "$f" ] || continue
                        base=$(basename "$f")
                        hash=${base#*-}
                        ext=$(ext_of "$h")
                        dst=tests/bad/$kind/fuzz-${hash:0:12}.$ext
                        cp "$f" "$dst"
                        # The sidecar of each kind's convention (tests/bad/README.md).
                        if [ "$kind" = npy ]; then
                                sidecar=$dst.expect
                                prefix=
                        else
                                sidecar=tests/bad/$kind/fuzz-${hash:0:12}.expect
                                prefix='# expect: '
                        fi
                        printf '%sFIXME: %s made fuzz_%s fail (%s); fix it, then state the message this input must produce\n' \
                                "$prefix" "$base" "$h" "$log" >"$sidecar"
                        echo "    regression case: $dst (+ $sidecar)"
                done
        else
                summary+=("$h: ok, ${execs:-?} execs in ${seconds}s")
        fi
        if [ "$merge" -eq 1 ]; then
                "$out/fuzz_$h" -merge=1 -max_len="$(max_len "$h")" "fuzz/corpus/$h" "$out/found/$h" \
                        </dev/null >>"$log" 2>&1 || status=1
        fi
done
echo "== fuzz summary =="
printf '  %s\n' "${summary[@]}"
exit $status
