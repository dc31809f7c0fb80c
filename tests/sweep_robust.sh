#!/usr/bin/env bash
# tests/sweep_robust.sh: a sweep that cannot hang, cannot outlive itself,
# cannot mix its files with another's and cannot lose results silently:
# - --timeout-s: a point whose kernel spins without calling tl_* is killed
#   by the parent and recorded as timed_out with its message; the other
#   points (a few ms each, far under the limit) complete and the sweep
#   exits 1 (no timing is checked, only the message and the record);
# - a worker dies with its sweep (PR_SET_PDEATHSIG) when the sweep is
#   killed with SIGKILL;
# - a second sweep into a --out in use exits 2 naming the other;
# - results that cannot be written (report.md, figures/) are not listed in
#   the summary and the sweep exits 2 (a full disk, played by a directory
#   where report.md goes and a file where figures/ goes);
# - --resume reads points/ like any input (regular files, size capped,
#   values in range) and reruns a point whose file is bad, saying why.
# Waits for a process to appear or go are bounded only so that the test
# fails rather than hangs; they check no duration.
# Environment: CUBESIM_BIN, CUBESIM_SOURCE_DIR; CC (default cc).
set -u

bin=${CUBESIM_BIN:?CUBESIM_BIN must name the cubesim binary}
src=${CUBESIM_SOURCE_DIR:?CUBESIM_SOURCE_DIR must name the source tree}
cd "$src" || exit 1
tmp=$(mktemp -d)
pids=()
cleanup() {
        for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null; done
        rm -rf "$tmp"
}
trap cleanup EXIT
fail=0
check() {  # check WHAT CMD...
        local what=$1
        shift
        if ! "$@"; then
                echo "FAIL: $what"
                fail=1
        fi
}
has() { grep -qF -- "$2" "$1"; }

# A kernel that spins without tl_* calls when spin=1.
cat >"$tmp/spin.c" <<'EOF'
#include <stddef.h>
#include <cubesim/tl.h>

struct args { int spin; };
static const struct tl_param params[] = {
        { "spin", TL_PARAM_INT, 0, 0, 1, NULL, "1: spin without tl_* calls" },
        { NULL, 0, 0, 0, 0, NULL, NULL },
};
static void setup(tl_setup *s, void *argp)
{
        ((struct args *)argp)->spin = (int)tl_setup_int(s, "spin");
}
static void body(tl_ctx *tl, const void *argp)
{
        volatile unsigned long n = (unsigned long)tl_program_id(tl, 0);
        while (((const struct args *)argp)->spin)
                n = n + 1;
}
static const struct tl_kernel kernel = {
        .name = "spin", .fn = body, .params = params, .args_size = sizeof(struct args),
        .setup = setup,
};
const struct tl_kernel *const cubesim_kernels[] = { &kernel, NULL };
EOF
${CC:-cc} -std=c11 -O1 -Wall -Wextra -Werror -shared -fPIC -I include "$tmp/spin.c" \
        -o "$tmp/libspin.so" || { echo "FAIL: the spin kernel does not compile"; exit 1; }
cat >"$tmp/spin.yaml" <<EOF
version: 1
name: spin
kernel: spin
topology: $src/topologies/small.yaml
grid:
  spin: [0, 1, 0]
EOF

# --timeout-s: the spinning point is stopped and recorded; the others run.
timeout 120 "$bin" sweep "$tmp/spin.yaml" --kernels "$tmp/libspin.so" --out "$tmp/t" \
        --jobs 2 --timeout-s 3 --no-figures --no-progress >"$tmp/out" 2>"$tmp/err" </dev/null
rc=$?
statuses=$(grep -o '"status": "[a-z_]*"' "$tmp/t/sweep.json" 2>/dev/null | cut -d'"' -f4 |
        tr '\n' ' ')
check "--timeout-s: exit $rc (want 1), statuses '$statuses' (want 'ok timed_out ok ')" \
        test "$rc" -eq 1 -a "$statuses" = "ok timed_out ok "
check "--timeout-s: the record says why" has "$tmp/t/sweep.json" \
        'the point ran past --timeout-s 3 (seconds of wall time) and was stopped'
check "--timeout-s: stderr names the point" has "$tmp/err" \
        'point 1 of panel spin (spin=1) timed_out (exit status 124)'
check "--timeout-s: the report lists it" has "$tmp/t/report.md" '**timed_out**'
"$bin" sweep "$tmp/spin.yaml" --timeout-s 0 --list >/dev/null 2>"$tmp/err"
check "--timeout-s 0 is bad input" test $? -eq 2
check "--timeout-s 0: the message" has "$tmp/err" \
        '--timeout-s 0: expected a number of seconds in (0, 1e7]'

# wait_for WHAT CMD...: until CMD succeeds (bounded: fail, not hang).
wait_for() {
        local what=$1
        shift
        for _ in $(seq 1200); do
                "$@" && return 0
                sleep 0.05
        done
        echo "FAIL: $what never happened"
        fail=1
        return 1
}
worker_of() { pgrep -P "$1" >"$tmp/worker" 2>/dev/null; }

# A worker dies with its sweep.
sed 's/spin: \[0, 1, 0\]/spin: [1]/' "$tmp/spin.yaml" >"$tmp/spin1.yaml"
"$bin" sweep "$tmp/spin1.yaml" --kernels "$tmp/libspin.so" --out "$tmp/k" --no-figures \
        --no-progress >/dev/null 2>&1 </dev/null &
sweep_pid=$!
pids+=("$sweep_pid")
if wait_for "a worker of the sweep" worker_of "$sweep_pid"; then
        worker=$(head -n 1 "$tmp/worker")
        pids+=("$worker")
        kill -9 "$sweep_pid"
        wait "$sweep_pid" 2>/dev/null
        gone() { ! kill -0 "$worker" 2>/dev/null; }
        wait_for "the worker's death after its sweep was killed" gone
fi

# Two sweeps into one --out: the second is refused while the first holds
# (CUBESIM_TEST_HOLD_AFTER=1 makes it wait after its first point).
cat >"$tmp/hold.yaml" <<EOF
version: 1
name: hold
kernel: noop
topology: $src/topologies/small.yaml
points: [{}, {}]
EOF
CUBESIM_TEST_HOLD_AFTER=1 "$bin" sweep "$tmp/hold.yaml" --out "$tmp/shared" --no-figures \
        --no-progress >/dev/null 2>"$tmp/hold.err" </dev/null &
hold_pid=$!
pids+=("$hold_pid")
held() { grep -q 'holding until a signal' "$tmp/hold.err" 2>/dev/null; }
if wait_for "the first sweep holding" held; then
        "$bin" sweep "$tmp/hold.yaml" --out "$tmp/shared" --no-figures --no-progress \
                >"$tmp/out" 2>"$tmp/err" </dev/null
        rc=$?
        check "a second sweep into a --out in use: exit $rc, want 2" test "$rc" -eq 2
        check "a second sweep into a --out in use: the message" has "$tmp/err" \
                "error: another sweep (process $hold_pid) is writing into this directory"
        kill -9 "$hold_pid"
        wait "$hold_pid" 2>/dev/null
        "$bin" sweep "$tmp/hold.yaml" --out "$tmp/shared" --no-figures --no-progress \
                >"$tmp/out" 2>"$tmp/err" </dev/null
        check "the lock goes with its sweep" test $? -eq 0
fi

# Results that cannot be written are not listed, and the sweep fails.
mkdir -p "$tmp/full/report.md"
touch "$tmp/full/report.md/keep" "$tmp/full/figures"
"$bin" sweep "$tmp/hold.yaml" --out "$tmp/full" --no-progress >"$tmp/out" 2>"$tmp/err" \
        </dev/null
rc=$?
check "unwritable results: exit $rc, want 2" test "$rc" -eq 2
check "unwritable results: sweep.json is listed" has "$tmp/out" "results: $tmp/full/sweep.json"
check "unwritable results: report.md is not listed" test -z "$(grep 'report:' "$tmp/out")"
check "unwritable results: figures are not listed" test -z "$(grep 'figures:' "$tmp/out")"
check "unwritable results: the message" has "$tmp/err" \
        "result files could not be written (see the warnings above; a full disk?): the results are incomplete"
check "unwritable results: the warning names report.md" has "$tmp/err" \
        "warning: cannot write $tmp/full/report.md:"

# --resume reads points/ like any input: a point file that is not a
# regular file, too large, not JSON, or whose figures are out of range is
# named with what is wrong and its point runs again.
cat >"$tmp/g.yaml" <<EOF
version: 1
name: g
kernel: gemm
topology: $src/topologies/small.yaml
grid:
  m: [64, 128, 192, 256, 320]
EOF
"$bin" sweep "$tmp/g.yaml" --out "$tmp/clean" --no-figures --no-progress >/dev/null 2>&1
"$bin" sweep "$tmp/g.yaml" --out "$tmp/r" --no-figures --no-progress >/dev/null 2>&1
p=$tmp/r/points
sed -i 's/"sim_ps": [0-9]*/"sim_ps": -5/' "$p/0000.json"
sed -i 's/"events": [0-9]*/"events": 9223372036854775807/' "$p/0001.json"
rm "$p/0002.json" && mkfifo "$p/0002.json"
head -c 2000000 /dev/zero | tr '\0' ' ' >"$p/0003.json"
printf '{"key": \n' >"$p/0004.json"
timeout 60 "$bin" sweep "$tmp/g.yaml" --out "$tmp/r" --resume --no-figures --no-progress \
        >"$tmp/out" 2>"$tmp/err" </dev/null
rc=$?
check "--resume over bad point files: exit $rc, want 0" test "$rc" -eq 0
check "--resume: every point ran again" has "$tmp/out" "sweep g: 5 points, 0 failed;"
check "--resume: a negative sim_ps is named" has "$tmp/err" \
        "$p/0000.json: warning: point.sim_ps: expected an integer in [0, 2^53], got -5; the point runs again"
check "--resume: an INT64_MAX is named" has "$tmp/err" \
        "$p/0001.json: warning: point.events: expected an integer in [0, 2^53], got 9223372036854775807"
check "--resume: a FIFO is not read" has "$tmp/err" \
        "$p/0002.json: warning: not a regular file (a FIFO or a socket may never end); expected a file; the point runs again"
check "--resume: a huge file is not loaded" has "$tmp/err" \
        "$p/0003.json: warning: larger than a point file is (at most 1048576 bytes); the point runs again"
check "--resume: broken JSON is located" has "$tmp/err" \
        "$p/0004.json:2:0: warning: not a point file:"
strip() { grep -vE '"(wall_s|events_per_s|peak_rss_kib)"' "$1"; }
check "--resume: the result is a clean run's" cmp -s <(strip "$tmp/clean/sweep.json") \
        <(strip "$tmp/r/sweep.json")

[ $fail -eq 0 ] && echo "sweep_robust: all cases pass"
exit $fail
