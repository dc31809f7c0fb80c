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
check 0 "kernel gemm" -- run gemm --mode data --inputs "$tmp/in" --allow-random --set dtype=fp32
# ... and a disagreeing --set is bad input naming both shapes.
check 2 "shape [32, 48] does not match the kernel's [40, 48] for 'a'" -- run gemm --mode data --inputs "$tmp/in" --allow-random --set m=40

# npy_f4 FILE "SHAPE" HEX...: a float32 .npy file of shape (SHAPE) holding
# the values given as little-endian hex words (0000803f is 1.0, 0000c07f
# NaN, 0000807f +inf); no values writes the header alone.
npy_f4() {
        local file=$1 shape=$2; shift 2
        local dict="{'descr': '<f4', 'fortran_order': False, 'shape': ($shape), }"
        local pad=$(( (64 - (10 + ${#dict} + 1) % 64) % 64 )) hex w
        dict+=$(printf '%*s' "$pad" '')
        local hlen=$(( ${#dict} + 1 ))
        printf '\x93NUMPY\x01\x00' >"$file"
        printf "\\x$(printf %02x $((hlen % 256)))\\x$(printf %02x $((hlen / 256)))" >>"$file"
        printf '%s\n' "$dict" >>"$file"
        for w in "$@"; do
                hex=$(sed 's/../\\x&/g' <<<"$w")
                printf "$hex" >>"$file"
        done
}

# Every data-mode run says where each input came from, and from which seed.
check 0 "note: input a [32, 16]: generated, uniform in [-1, 1) from seed 7" -- run gemm --mode data --set m=32 --set n=48 --set k=16 --seed 7
# With --inputs, a missing file is bad input naming the expected files and
# shapes, and a .npy file that is not an input (a misspelt name) ...
mkdir -p "$tmp/typo" && cp "$tmp/out/c.npy" "$tmp/typo/bb.npy"
check 2 "typo: error: no a.npy, b.npy for kernel gemm (it reads a.npy [256, 256], b.npy [256, 256]); give the files, or --allow-random" -- run gemm --mode data --inputs "$tmp/typo"
check 2 "typo: note: bb.npy is not an input of kernel gemm" -- run gemm --mode data --inputs "$tmp/typo"
check 2 "no a.npy, b.npy for kernel gemm" -- run gemm --inputs "$tmp/typo"
# ... unless --allow-random generates them, and says so.
check 0 "note: input a [32, 48]: read from $tmp/in/a.npy" -- run gemm --mode data --inputs "$tmp/in" --allow-random
check 0 "note: input b [48, 256]: generated (no file; --allow-random), uniform in [-1, 1) from seed 1" -- run gemm --mode data --inputs "$tmp/in" --allow-random

# --save-inputs writes the generated inputs; read back they give the same outputs.
small=(--set m=24 --set n=40 --set k=72 --set dtype=fp32)
check 0 "saved to $tmp/saved/b.npy" -- run gemm --mode data "${small[@]}" --seed 5 --save-inputs "$tmp/saved" --outputs "$tmp/o1"
check 0 "read from $tmp/saved/b.npy" -- run gemm --mode data "${small[@]}" --inputs "$tmp/saved" --outputs "$tmp/o2"
cmp -s "$tmp/o1/c.npy" "$tmp/o2/c.npy" || { echo "FAIL: saved inputs do not reproduce the outputs"; fail=1; }
check 2 "--save-inputs needs --mode data" -- run gemm --save-inputs "$tmp/s"

# --expect: the same run matches; another seed does not, naming the worst element.
check 0 "o1/c.npy: note: output c [24, 40] matches within rtol 1.3e-06, atol 1e-05" -- run gemm --mode data "${small[@]}" --seed 5 --expect "$tmp/o1"
check 1 "o1/c.npy: error: output c [24, 40]: " -- run gemm --mode data "${small[@]}" --seed 6 --expect "$tmp/o1"
out=$("$bin" run gemm --mode data "${small[@]}" --seed 6 --expect "$tmp/o1" 2>&1)
grep -qE "output c \[24, 40\]: [0-9]+ of 960 elements out of tolerance \(rtol 1.3e-06, atol 1e-05\); worst at \[[0-9]+, [0-9]+\]: got -?[0-9.e+-]+, want -?[0-9.e+-]+" <<<"$out" ||
        { echo "FAIL: --expect mismatch message: $out"; fail=1; }
# A tolerance wide enough accepts it.
check 0 "matches within rtol 0, atol 1000" -- run gemm --mode data "${small[@]}" --seed 6 --expect "$tmp/o1" --rtol 0 --atol 1000
check 2 "--expect needs output c [24, 40] of kernel gemm as c.npy" -- run gemm --mode data "${small[@]}" --expect "$tmp/saved"
check 2 "--rtol -1: expected a number >= 0" -- run gemm --mode data --expect "$tmp/o1" --rtol -1
check 2 "--rtol and --atol are the tolerances of --expect DIR" -- run gemm --mode data --atol 1

# Non-finite inputs and outputs are reported with their count and first
# index; --fail-on-nonfinite makes them fail the run.
mkdir -p "$tmp/nan"
npy_f4 "$tmp/nan/a.npy" "2, 2" 0000803f 0000c07f 0000803f 0000803f
npy_f4 "$tmp/nan/b.npy" "2, 2" 0000803f 0000803f 0000807f 0000803f
nan=(--mode data --inputs "$tmp/nan" --set dtype=fp32)
check 0 "warning: input a [2, 2]: 1 non-finite value of 4 (first at [0, 1]: nan)" -- run gemm "${nan[@]}"
check 0 "warning: output c [2, 2]: 3 non-finite values of 4 (first at [0, 0]: nan)" -- run gemm "${nan[@]}"
check 1 "error: input b [2, 2]: 1 non-finite value of 4 (first at [1, 0]: inf) (--fail-on-nonfinite)" -- run gemm "${nan[@]}" --fail-on-nonfinite

# A FIFO as an input is refused, not waited on.
mkdir -p "$tmp/fifo" && mkfifo "$tmp/fifo/a.npy"
out=$(timeout 20 "$bin" run gemm --mode data --inputs "$tmp/fifo" --allow-random 2>&1); rc=$?
[ $rc -eq 2 ] && grep -qF "fifo/a.npy: error: not a regular file (input 'a' must be a .npy file)" <<<"$out" ||
        { echo "FAIL: a FIFO input: exit $rc: $out"; fail=1; }
# Dimensions taken from a file obey the parameter's range.
mkdir -p "$tmp/big"
npy_f4 "$tmp/big/q.npy" "1, 8, 1, 8192" && head -c $((8 * 8192 * 4)) /dev/zero >>"$tmp/big/q.npy"
check 2 "q.npy: extent 8192 of axis 3 gives head_dim = 8192, outside its range" -- run gqa_decode --inputs "$tmp/big" --allow-random
# A path longer than any fixed buffer is used whole.
long=$tmp/$(printf 'd%.0s' {1..200})/$(printf 'e%.0s' {1..200})/$(printf 'f%.0s' {1..200})/$(printf 'g%.0s' {1..200})/$(printf 'h%.0s' {1..200})
mkdir -p "$long" && cp "$tmp/saved/a.npy" "$tmp/saved/b.npy" "$long/"
check 0 "read from $long/b.npy" -- run gemm --mode data "${small[@]}" --inputs "$long" --outputs "$long/o"
cmp -s "$tmp/o1/c.npy" "$long/o/c.npy" || { echo "FAIL: a long --outputs path lost the output"; fail=1; }

# Tiles a PE cannot hold are bad input found at setup (exit 2), not a
# failed run. (Kernel errors, exit 1 with the kernel's line, the PE and the
# op, are tests/kernel_faults.sh's.)
check 2 "error: kernel gemm: tile_m 4096 x tile_n 64 x tile_k 4096: a PE needs" -- run gemm --set tile_m=4096 --set tile_k=4096

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
# Progress: drawn on stderr with --progress (every N events under
# CUBESIM_TEST_PROGRESS_EVERY), its simulated time and counts never going
# back; on a terminal one line redrawn in place and cleared at the end, on
# a file plain lines with no carriage return or escape sequence; stdout
# the same as without it; none when stderr is not a terminal, or with
# --no-progress.
# on_pty OUT ERR CMD...: run CMD with stderr on a terminal (raw: no \r
# added), stdout to OUT, what it wrote on the terminal to ERR.
on_pty() {
        python3 - "$@" <<'PY'
import os, pty, subprocess, sys, tty
out, err, *cmd = sys.argv[1:]
m, s = pty.openpty()
tty.setraw(s)
with open(out, "wb") as fo:
    p = subprocess.Popen(cmd, stdout=fo, stderr=s, stdin=subprocess.DEVNULL)
os.close(s)
buf = b""
while True:
    try:
        d = os.read(m, 65536)
    except OSError:
        break
    if not d:
        break
    buf += d
rc = p.wait()
open(err, "wb").write(buf)
sys.exit(rc)
PY
}
pargs=(run gqa_prefill --set model=llama3-8b --set seq_len=1024 --set q_len=1024 --json)
"$bin" "${pargs[@]}" >"$tmp/plain.json" 2>"$tmp/plain.err" || fail=1
CUBESIM_TEST_PROGRESS_EVERY=2000 on_pty "$tmp/prog.json" "$tmp/prog.err" "$bin" "${pargs[@]}" --progress || fail=1
CUBESIM_TEST_PROGRESS_EVERY=2000 "$bin" "${pargs[@]}" --progress >"$tmp/progf.json" 2>"$tmp/progf.err" || fail=1
cmp -s "$tmp/plain.json" "$tmp/progf.json" || { echo "FAIL: --progress to a file changed stdout"; fail=1; }
python3 - "$tmp/progf.err" <<'PY' || { echo "FAIL: progress on a file is not plain lines"; fail=1; }
import re, sys
text = open(sys.argv[1], encoding="utf-8", newline="").read()
assert "\r" not in text and "\x1b" not in text, repr(text[:200])
lines = text.splitlines()
assert len(lines) >= 5 and text.endswith("\n"), repr(text[:200])
for l in lines:
    assert re.fullmatch(r"gqa_prefill: [0-9.]+ (us|ms) simulated, .* events, .* requests, [0-9.]+ s",
                        l), l
PY
CUBESIM_TEST_PROGRESS_EVERY=2000 "$bin" "${pargs[@]}" --progress --no-progress >/dev/null 2>"$tmp/noprog.err" || fail=1
cmp -s "$tmp/plain.json" "$tmp/prog.json" || { echo "FAIL: --progress changed stdout"; fail=1; }
[ ! -s "$tmp/plain.err" ] || { echo "FAIL: progress drawn on a file without --progress"; fail=1; }
[ ! -s "$tmp/noprog.err" ] || { echo "FAIL: progress drawn with --no-progress"; fail=1; }
python3 - "$tmp/prog.err" <<'PY' || { echo "FAIL: progress lines"; fail=1; }
import re, sys
text = open(sys.argv[1], encoding="utf-8", newline="").read()
assert text.endswith("\r\x1b[K"), "the line is not cleared at the end"
lines = [l for l in text.split("\r\x1b[K") if l]
assert len(lines) >= 5, lines
def count(s):
    n, _, unit = s.partition(" ")
    return float(n) * {"": 1, "M": 1e6, "G": 1e9}[unit]
last = (0, 0, 0)
for l in lines:
    m = re.fullmatch(r"gqa_prefill: ([0-9.]+) (us|ms) simulated, ([0-9.]+(?: [MG])?) events, "
                     r"([0-9.]+(?: [MG])?) requests, [0-9.]+ s", l)
    assert m, l
    now = (float(m[1]) * (1000 if m[2] == "ms" else 1), count(m[3]), count(m[4]))
    assert now[0] >= last[0] and now[1] > last[1] and now[2] >= last[2], (last, l)
    last = now
PY

# The wall-clock limit's message clears a progress line first. The kernel
# makes events (a progress line every 4 under CUBESIM_TEST_PROGRESS_EVERY)
# and then spins without tl_* calls until the limit: whatever the
# machine's speed, the line is drawn before the limit is reached.
cat >"$tmp/busy_spin.c" <<'EOF'
#include <cubesim/tl.h>

static void body(tl_ctx *tl, const void *argp)
{
        (void)argp;
        tl_tensor *x = tl_alloc(tl, TL_TCM, TL_FP32, 1, ((int64_t[]){ 256 }));
        for (int i = 0; i < 64; i++)
                tl_wait_tensor(tl, tl_exp(tl, x));
        volatile unsigned long n = (unsigned long)tl_program_id(tl, 0);
        for (;;)
                n = n + 1;
}
static const struct tl_kernel kernel = { .name = "busy_spin", .fn = body };
const struct tl_kernel *const cubesim_kernels[] = { &kernel, NULL };
EOF
if ${CC:-cc} -std=c11 -O1 -Wall -Wextra -Werror -shared -fPIC -I "${CUBESIM_SOURCE_DIR:?}/include" \
        "$tmp/busy_spin.c" -o "$tmp/libbusy_spin.so"; then
        CUBESIM_TEST_PROGRESS_EVERY=4 on_pty /dev/null "$tmp/limit.err" "$bin" run busy_spin \
                --kernels "$tmp/libbusy_spin.so" \
                --topo "$CUBESIM_SOURCE_DIR/topologies/small.yaml" --timeout-s 1 --progress; rc=$?
        [ $rc -eq 1 ] || { echo "FAIL: --timeout-s with --progress: exit $rc, want 1"; fail=1; }
        python3 - "$tmp/limit.err" "$tmp/busy_spin.c" <<'PY' || { echo "FAIL: the limit's message after a progress line"; fail=1; }
import sys
text = open(sys.argv[1], encoding="utf-8", newline="").read()
head, _, last = text.rpartition("\r\x1b[K")
assert head.startswith("\r\x1b[Kbusy_spin: "), text[:200]
# The README's kernel-error form, at the spinning PE's last tl_* call.
src = sys.argv[2]
line = next(i for i, l in enumerate(open(src, encoding="utf-8"), 1) if "tl_program_id" in l)
want = f"{src}:{line}: error: PE sip0.cube0.pe0: wall-clock limit reached (--timeout-s 1) after "
assert last.startswith(want), (want, last[:300])
assert "a run that is only long needs a larger --timeout-s" in last, last[:300]
PY
else
        echo "FAIL: the busy_spin kernel does not compile"; fail=1
fi

[ $fail -eq 0 ] && echo "run cli: all cases pass"
exit $fail
