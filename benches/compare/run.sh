#!/usr/bin/env bash
# benches/compare/run.sh -- compare cubesim's engine-hold bench with SystemC
# 2.3 and SimPy 2.3 on the same "hold" model.  Run from the repository root:
#
#     benches/compare/run.sh
#
# Environment:
#   CUBESIM_BIN   cubesim binary                     (default build/cubesim)
#   SKIP_CUBESIM  1 = leave cubesim out (partial run) (default 0)
#   CONFIGS       space-separated N:K list            (default below)
#   SIMPY_CONFIGS N:K list SimPy is run on            (default: all CONFIGS)
#   RUNS          timed runs for cubesim/SystemC      (default 5, warmup 1)
#   SIMPY_RUNS    timed runs for SimPy                (default 3, no warmup)
#   SC_STACK      SystemC thread stack bytes          (default 65536)
#   OUT_DIR       where hold_systemc + JSON go        (default: fresh mktemp -d)
#   RESULTS       Markdown output file                (default benches/compare/RESULTS.md)
#   NO_HYPERFINE  1 = time with /usr/bin/time even if hyperfine exists
#
# Exits non-zero if a program fails, an event count is not N*K, or the
# simulators disagree on sim_end_ns (also checked against the closed form).
set -euo pipefail

die() { echo "run.sh: error: $*" >&2; exit 1; }

[ -f benches/compare/hold_systemc.cpp ] || die "run from the repository root"

CUBESIM_BIN=${CUBESIM_BIN:-build/cubesim}
SKIP_CUBESIM=${SKIP_CUBESIM:-0}
CONFIGS=${CONFIGS:-"100:200000 10000:200 100:20000 1000:200"}
SIMPY_CONFIGS=${SIMPY_CONFIGS:-$CONFIGS}
RUNS=${RUNS:-5}
SIMPY_RUNS=${SIMPY_RUNS:-3}
SC_STACK=${SC_STACK:-65536}
RESULTS=${RESULTS:-benches/compare/RESULTS.md}
PY=/usr/bin/python3            # Debian's python: has SimPy 2 (python3-simpy)
CXX=${CXX:-g++}
export SYSTEMC_DISABLE_COPYRIGHT_MESSAGE=1

OUT_DIR=${OUT_DIR:-$(mktemp -d /tmp/cubesim-compare.XXXXXX)}
mkdir -p "$OUT_DIR"

LOAD_START=$(cut -d' ' -f1-3 /proc/loadavg)

# ---- prerequisites ------------------------------------------------------
[ -x "$PY" ] || die "$PY not found"
"$PY" -c 'import SimPy.Simulation' 2>/dev/null \
    || die "SimPy 2 not importable by $PY (apt-get install python3-simpy)"
if [ "$SKIP_CUBESIM" != 1 ]; then
    [ -x "$CUBESIM_BIN" ] || die "cubesim binary '$CUBESIM_BIN' not found (build it, set CUBESIM_BIN, or SKIP_CUBESIM=1)"
fi
HAVE_HYPERFINE=0
[ "${NO_HYPERFINE:-0}" = 1 ] || ! command -v hyperfine >/dev/null 2>&1 || HAVE_HYPERFINE=1
[ "$HAVE_HYPERFINE" = 1 ] || [ -x /usr/bin/time ] || die "need hyperfine or /usr/bin/time"

# Run a private copy of cubesim so a concurrent rebuild of build/cubesim
# cannot change or break the binary mid-benchmark.
CUBESIM_RUN=$CUBESIM_BIN
if [ "$SKIP_CUBESIM" != 1 ]; then
    CUBESIM_RUN=$OUT_DIR/cubesim
    cp "$CUBESIM_BIN" "$CUBESIM_RUN" || die "cannot copy $CUBESIM_BIN"
    chmod +x "$CUBESIM_RUN"
    echo "+ cp $CUBESIM_BIN $CUBESIM_RUN   # snapshot, sha256 $(sha256sum "$CUBESIM_RUN" | cut -c1-16)"
fi

# ---- build SystemC program ---------------------------------------------
SC_BIN=$OUT_DIR/hold_systemc
BUILD_CMD="$CXX -O2 -std=c++17 benches/compare/hold_systemc.cpp -lsystemc -o $SC_BIN"
echo "+ $BUILD_CMD"
$BUILD_CMD || die "building hold_systemc failed (is libsystemc-dev installed?)"

# ---- helpers ------------------------------------------------------------
# cmd_for SIM N K -> command line (no shell quoting needed)
cmd_for() {
    case $1 in
        cubesim) echo "${CUBESIM_SHOW:-$CUBESIM_RUN} bench run engine-hold --set procs=$2 --set iters=$3" ;;
        systemc) echo "${SC_SHOW:-$SC_BIN} $2 $3 $SC_STACK" ;;
        simpy)   echo "$PY benches/compare/hold_simpy.py $2 $3" ;;
    esac
}

# field FILE KEY -> value of "KEY: value"
field() { awk -v k="$2:" '$1 == k { print $2; found=1 } END { if (!found) exit 1 }' "$1"; }

# closed-form simulated end time: max over p of sum_i 1 + (7i+p)%5
expected_end() {
    "$PY" - "$1" "$2" <<'PYEOF'
import sys
n, k = int(sys.argv[1]), int(sys.argv[2])
q, r = divmod(k, 5)          # every 5 iterations cover residues 0..4: 15 ns
print(15 * q + max(sum(1 + (7 * i + p) % 5 for i in range(r))
                   for p in range(min(n, 5))))
PYEOF
}

# median_wall JSON|TIMES-FILE -> median whole-process wall seconds
median_hyperfine() {
    "$PY" -c 'import json,sys; r=json.load(open(sys.argv[1]))["results"][0]; print("%.6f" % r["median"])' "$1"
}
median_list() {
    "$PY" -c 'import statistics,sys; print("%.6f" % statistics.median(float(l) for l in open(sys.argv[1]) if l.strip()))' "$1"
}

# time_cmd TAG WARMUP RUNS CMD... -> "WHOLE INPROC": median whole-process
# wall seconds, and median of the wall_s the program itself printed in the
# timed runs (every run's sim_end_ns is checked too).
time_cmd() {
    local tag=$1 warm=$2 runs=$3; shift 3
    local log=$OUT_DIR/$tag.runs.log whole
    if [ "$HAVE_HYPERFINE" = 1 ]; then
        local json=$OUT_DIR/$tag.json
        hyperfine -N --style basic --output=inherit --warmup "$warm" --runs "$runs" \
            --export-json "$json" "$*" >"$log" 2>&1 \
            || { cat "$log" >&2; die "hyperfine failed for: $*"; }
        whole=$(median_hyperfine "$json")
    else
        local times=$OUT_DIR/$tag.times i
        : >"$times"; : >"$log"
        for ((i = 0; i < warm; i++)); do "$@" >>"$log" || die "failed: $*"; done
        for ((i = 0; i < runs; i++)); do
            /usr/bin/time -f %e -a -o "$times" "$@" >>"$log" || die "failed: $*"
        done
        whole=$(median_list "$times")
    fi
    local inproc
    inproc=$("$PY" - "$log" "$runs" "$end_exp" <<'PYEOF'
import statistics, sys
lines = open(sys.argv[1]).read().split("\n")
runs, end_exp = int(sys.argv[2]), sys.argv[3]
ends = [l.split()[1] for l in lines if l.startswith("sim_end_ns:")]
walls = [float(l.split()[1]) for l in lines if l.startswith("wall_s:")]
if any(e != end_exp for e in ends):
    sys.exit("MISMATCH in a timed run: sim_end_ns %s != %s" % (ends, end_exp))
if len(walls) < runs:
    sys.exit("expected >= %d wall_s lines, got %d" % (runs, len(walls)))
print("%.6f" % statistics.median(walls[-runs:]))
PYEOF
) || die "checking timed runs of: $*"
    echo "$whole $inproc"
}

CUBESIM_EVENTS_NOTE=
SIMS="systemc simpy"
[ "$SKIP_CUBESIM" = 1 ] || SIMS="cubesim $SIMS"

ROWS=$OUT_DIR/rows.tsv           # cfg sim events end wall ev_whole ev_inproc
: >"$ROWS"

for cfg in $CONFIGS; do
    n=${cfg%%:*}; k=${cfg##*:}
    events_exp=$((n * k))
    end_exp=$(expected_end "$n" "$k")
    echo "== procs=$n iters=$k: events=$events_exp, expected sim_end_ns=$end_exp"
    for sim in $SIMS; do
        if [ "$sim" = simpy ] && [[ " $SIMPY_CONFIGS " != *" $cfg "* ]]; then
            continue
        fi
        cmd=$(cmd_for "$sim" "$n" "$k")
        tag=${sim}_${n}_${k}
        out=$OUT_DIR/$tag.out
        echo "+ $cmd"
        # One checked run (also serves as an extra warm-up).
        $cmd >"$out" 2>"$OUT_DIR/$tag.err" || { cat "$OUT_DIR/$tag.err" >&2; die "$sim failed: $cmd"; }
        ev=$(field "$out" events)       || die "$sim: no 'events:' line in output"
        end=$(field "$out" sim_end_ns)  || die "$sim: no 'sim_end_ns:' line in output"
        field "$out" wall_s >/dev/null  || die "$sim: no 'wall_s:' line in output"
        field "$out" events_per_s >/dev/null || die "$sim: no 'events_per_s:' line in output"
        if [ "$ev" != "$events_exp" ]; then
            # cubesim's engine bench also counts each process's initial
            # activation (N*(K+1)); accept that, but rate everything on N*K.
            if [ "$sim" = cubesim ] && [ "$ev" = $((n * (k + 1))) ]; then
                echo "   note: cubesim reports events=$ev = N*(K+1) (counts the N initial activations); using N*K=$events_exp for rates" >&2
                CUBESIM_EVENTS_NOTE=$ev
            else
                die "$sim procs=$n iters=$k: events $ev != N*K = $events_exp"
            fi
        fi
        ev=$events_exp
        [ "$end" = "$end_exp" ] || die "MISMATCH: $sim procs=$n iters=$k: sim_end_ns $end != expected $end_exp"
        if [ "$sim" = simpy ]; then warm=0; runs=$SIMPY_RUNS; else warm=1; runs=$RUNS; fi
        # shellcheck disable=SC2086
        read -r wall inwall < <(time_cmd "$tag" "$warm" "$runs" $cmd) \
            && [ -n "$inwall" ] || die "timing failed for: $cmd"
        inproc=$("$PY" -c "w=$inwall; print('%.0f' % ($ev / w) if w > 0 else 0)")
        evw=$("$PY" -c "print('%.0f' % ($ev / $wall))")
        printf '   %s: sim_end_ns=%s wall(median)=%ss events/s(whole)=%s events/s(in-process)=%s\n' \
            "$sim" "$end" "$wall" "$evw" "$inproc"
        printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$n:$k" "$sim" "$ev" "$end" "$wall" "$evw" "$inproc" >>"$ROWS"
    done
done

# ---- table -------------------------------------------------------------
TABLE=$("$PY" - "$ROWS" <<'PYEOF'
import sys
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1]) if l.strip()]
by = {}
for cfg, sim, ev, end, wall, evw, evi in rows:
    by.setdefault(cfg, {})[sim] = (int(ev), int(end), float(wall), float(evw), float(evi))
def si(x):
    return "%.2fM" % (x / 1e6) if x >= 1e6 else "%.0fk" % (x / 1e3)
print("| config (procs x iters) | simulator | events | sim_end_ns | wall s (whole process, median) "
      "| events/s (whole process) | events/s (in-process) | cubesim speed-up (whole) | cubesim speed-up (in-process) |")
print("|---|---|---:|---:|---:|---:|---:|---:|---:|")
for cfg, sims in by.items():
    n, k = cfg.split(":")
    c = sims.get("cubesim")
    for sim in ("cubesim", "systemc", "simpy"):
        if sim not in sims:
            continue
        ev, end, wall, evw, evi = sims[sim]
        if c is None:
            sw = si_ = "n/a"
        elif sim == "cubesim":
            sw = si_ = "1.00x"
        else:
            sw = "%.2fx" % (wall / c[2])
            si_ = "%.2fx" % (c[4] / evi) if evi > 0 else "n/a"
        name = {"cubesim": "cubesim", "systemc": "SystemC 2.3.4", "simpy": "SimPy 2.3.1"}[sim]
        print("| %s x %s | %s | %d | %d | %.3f | %s | %s | %s | %s |"
              % (n, k, name, ev, end, wall, si(evw), si(evi), sw, si_))
PYEOF
)

CPU=$(awk -F': *' '/^model name/ { print $2; exit }' /proc/cpuinfo)
TIMER="hyperfine $(hyperfine --version 2>/dev/null | awk '{print $2}') (-N --warmup 1 --runs $RUNS; SimPy --warmup 0 --runs $SIMPY_RUNS)"
[ "$HAVE_HYPERFINE" = 1 ] || TIMER="/usr/bin/time -f %e, median of $RUNS runs (SimPy $SIMPY_RUNS) after 1 warm-up"

{
    echo "# cubesim vs SystemC vs SimPy: \"hold\" benchmark results"
    echo
    echo "- date: $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
    echo "- machine: $(nproc) CPUs, $CPU; $(uname -sr); load average at start $LOAD_START, at end $(cut -d' ' -f1-3 /proc/loadavg)"
    echo "- compiler: $($CXX --version | head -n1); SystemC thread stack $SC_STACK bytes, resolution 1 ps"
    echo "- Python: $($PY --version 2>&1) with SimPy $($PY -c 'import SimPy; print(SimPy.__version__)' 2>/dev/null || echo '?')"
    echo "- timing: $TIMER"
    [ "$SKIP_CUBESIM" = 1 ] && echo "- cubesim: **not run** (SKIP_CUBESIM=1)"
    echo
    echo "Whole-process wall time includes start-up (process creation, SystemC"
    echo "elaboration/thread creation, Python import). In-process events/s is N*K divided by"
    echo "the median wall_s each program reports for the simulation proper (start-up excluded)."
    echo "Speed-up = other simulator's time / cubesim's time (>1: cubesim faster)."
    [ -n "$CUBESIM_EVENTS_NOTE" ] && echo "cubesim's own 'events:' line reports N*(K+1) (it counts the N initial activations); rates here use N*K for every simulator."
    echo "sim_end_ns agreed between all simulators and with the closed form."
    echo
    echo "$TABLE"
    echo
    echo "Commands (N = procs, K = iters):"
    echo
    echo '```'
    # Paths a reader can reproduce: the repository's build, not this
    # run's temporary snapshot.
    echo "cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo && cmake --build build -j2"
    echo "${BUILD_CMD% -o *} -o hold_systemc"
    for sim in $SIMS; do
            CUBESIM_SHOW=build/cubesim SC_SHOW=./hold_systemc cmd_for "$sim" N K
    done
    echo '```'
    echo
    echo "Reproduce: \`benches/compare/run.sh\` from the repository root."
} >"$RESULTS"

echo
echo "$TABLE"
echo
echo "Wrote $RESULTS (raw data in $OUT_DIR)"
