#!/usr/bin/env bash
# tests/sweep_run.sh: running sweeps. The merged sweep.json is the same
# serially, with --jobs 2 and under mpirun -np 2 (when built with MPI) once
# the wall-clock keys are stripped; points stay in spec order; a failing
# point is recorded with its error and exit status while the others
# complete (exit 1); a spec on stdin ("-") runs as from its file; --resume keeps the points done and reruns the rest;
# files are written atomically (no temporary left, complete files after a
# kill -9); figures need gnuplot, and without it the sweep still succeeds
# with a warning; the headline bench names its kernels.
# Environment: CUBESIM_BIN, CUBESIM_SOURCE_DIR (ctest sets them).
set -u
. "${CUBESIM_SOURCE_DIR:?CUBESIM_SOURCE_DIR must name the source tree}/tests/lib/script.sh"
fail=0
n=0
check() {  # check DESCRIPTION COMMAND...: the command must succeed
        local what=$1
        shift
        n=$((n + 1))
        if ! "$@"; then
                echo "FAIL: $what"
                fail=1
        fi
}
# The document without the wall-clock keys (one per line in the file).
strip() { grep -v -E '"(wall_s|events_per_s|peak_rss_kib)":' "$1"; }
same() { cmp -s <(strip "$1") <(strip "$2") || { diff <(strip "$1") <(strip "$2") | head -10; false; }; }
no_temps() { [ -z "$(find "$1" -name '*.tmp.*')" ]; }

# Three panels; the first point is the slowest, so with two workers the
# points finish out of spec order. Point 2 (panel faulty's point 0) fails
# at run time: its out-of-bounds view (tests/bad/kernels/faulty.c; the
# built-in kernels reject at setup what they cannot run, exit 2).
${CC:-cc} -std=c11 -O1 -shared -fPIC -I "$CUBESIM_SOURCE_DIR/include" \
        "$CUBESIM_SOURCE_DIR/tests/bad/kernels/faulty.c" -o "$tmp/libfaulty.so" ||
        { echo "FAIL: tests/bad/kernels/faulty.c does not compile"; exit 1; }
cat >"$tmp/spec.yaml" <<'EOF'
version: 1
name: t
params:
  pe.dma.bw_gbps: 256
panels:
  - name: gemm
    kernel: gemm
    params: {tile_n: 32}
    points:
      - {m: 512, n: 512, k: 512}
      - {m: 64, n: 64, k: 64}
  - name: faulty
    kernel: faulty
    points:
      - {fault: view}
      - {fault: none}
  - name: softmax
    kernel: softmax
    grid:
      rows: [64, 128]
      cols: [64, 256]
EOF

"$bin" sweep "$tmp/spec.yaml" --kernels "$tmp/libfaulty.so" --out "$tmp/serial" --no-figures >"$tmp/out" 2>"$tmp/err"
rc=$?
check "serial sweep exits 1 (one point failed), got $rc" test "$rc" -eq 1
check "summary line" grep -q "sweep t: 8 points, 1 failed" "$tmp/out"
check "the failure is reported on stderr" grep -q "point 0 of panel faulty (fault=view) failed (exit status 1)" "$tmp/err"
check "no progress when stderr is not a terminal" bash -c "! grep -q ETA '$tmp/err'"
j=$tmp/serial/sweep.json
check "sweep.json written" test -s "$j"
check "the failed point's record" grep -q '"status": "failed"' "$j"
check "its exit status" grep -q '"exit_status": 1,' "$j"
check "its error names the kernel line" grep -q '"error": "[^"]*tests/bad/kernels/faulty.c:[0-9]*: error: PE sip0.cube0.pe0' "$j"
check "the seven others ran" test "$(grep -c '"status": "ok"' "$j")" -eq 7
check "op_log_summary per panel" test "$(grep -c '"op_log_summary"' "$j")" -eq 3
check "machine totals" grep -q '"hbm_bw_bytes_per_s": ' "$j"
check "version" grep -q '"cubesim_version": ' "$j"
check "events/s end to end" grep -q '^  "events_per_s": ' "$j"
check "summary line counts the requests served at arrival" grep -q "simulated events/s ([0-9.e+]* with the requests served at arrival)" "$tmp/out"
check "top-level bookings are the points' sum" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
pts = [p for pn in d["panels"] for p in pn["points"]]
assert d["bookings"] == sum(p.get("bookings", 0) for p in pts) > 0
assert d["events"] == sum(p.get("events", 0) for p in pts) > 0' "$j"
order=$(grep -o '"rows": [0-9]*' "$j" | tr -d ' \n')
check "points in spec order (got $order)" test "$order" = '"rows":64"rows":64"rows":128"rows":128'
check "per-point files" test "$(ls "$tmp/serial/points" | wc -l)" -eq 8
check "the spec is kept" cmp -s "$tmp/spec.yaml" "$tmp/serial/spec.yaml"
check "no temporary files (serial)" no_temps "$tmp/serial"

"$bin" sweep "$tmp/spec.yaml" --kernels "$tmp/libfaulty.so" --out "$tmp/jobs" --jobs 2 --no-figures --progress >"$tmp/out" 2>"$tmp/err"
rc=$?
check "--jobs 2 exits 1, got $rc" test "$rc" -eq 1
check "--progress draws progress" grep -q "ETA" "$tmp/err"
check "--progress into a file: plain lines, no carriage return or escape" \
        bash -c "! LC_ALL=C grep -q \$'[\\r\\x1b]' '$tmp/err'"
check "--jobs 2 gives the serial sweep.json" same "$j" "$tmp/jobs/sweep.json"
check "no temporary files (--jobs 2)" no_temps "$tmp/jobs"

# "-": the spec on standard input (its machine paths from the current
# directory), the same sweep.json as from the file.
"$bin" sweep - --kernels "$tmp/libfaulty.so" --out "$tmp/stdin" --no-figures \
        <"$tmp/spec.yaml" >"$tmp/out" 2>"$tmp/err"
rc=$?
check "a spec on stdin exits 1, got $rc" test "$rc" -eq 1
check "a spec on stdin: summary line" grep -q "sweep t: 8 points, 1 failed" "$tmp/out"
check "a spec on stdin gives the file's sweep.json" same "$j" "$tmp/stdin/sweep.json"
# A rank other than 0 (as mpirun announces it) says nothing: not the list,
# not the bad input every rank finds; rank 0 says both.
OMPI_COMM_WORLD_RANK=1 "$bin" sweep --list "$tmp/spec.yaml" --kernels "$tmp/libfaulty.so" \
        >"$tmp/out" 2>"$tmp/err"
rc=$?
check "rank 1: --list exits 0, got $rc" test "$rc" -eq 0
check "rank 1 lists nothing" test ! -s "$tmp/out"
OMPI_COMM_WORLD_RANK=1 "$bin" sweep --jobs 0 "$tmp/spec.yaml" >"$tmp/out" 2>"$tmp/err"
rc=$?
check "rank 1: bad input exits 2, got $rc" test "$rc" -eq 2
check "rank 1 says nothing of it" test ! -s "$tmp/err"
OMPI_COMM_WORLD_RANK=0 "$bin" sweep --list "$tmp/spec.yaml" --kernels "$tmp/libfaulty.so" \
        >"$tmp/out" 2>"$tmp/err"
check "rank 0 lists the points" grep -q "^sweep t: 8 points in 3 panels" "$tmp/out"
printf 'version: 1\nkernel: gemm\ngrid: {m: [64]}\n' | "$bin" sweep --list - >"$tmp/out" 2>"$tmp/err"
rc=$?
check "a spec on stdin with no name exits 2, got $rc" test "$rc" -eq 2
check "a spec on stdin needs a name" grep -qF "<stdin>:1:1: error: the spec has no 'name:', and a spec that is no file has no file name to stand for it: give the sweep a name" "$tmp/err"

if ldd "$bin" 2>/dev/null | grep libmpi >/dev/null; then
        # Open MPI leaks by design: no leak report from its ranks.
        ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 \
        OMPI_MCA_btl=self,vader OMPI_MCA_plm_rsh_agent=false \
                timeout 60 mpirun --allow-run-as-root --oversubscribe -np 2 \
                "$bin" sweep "$tmp/spec.yaml" --kernels "$tmp/libfaulty.so" --out "$tmp/mpi" --no-figures >"$tmp/out" 2>"$tmp/err"
        rc=$?
        check "mpirun -np 2 exits 1, got $rc" test "$rc" -eq 1
        check "mpirun: rank 0 reports once" test "$(grep -c 'sweep t: 8 points' "$tmp/out")" -eq 1
        check "mpirun -np 2 gives the serial sweep.json" same "$j" "$tmp/mpi/sweep.json"
        check "mpirun: on 2 ranks" grep -q "on 2 MPI ranks" "$tmp/out"
else
        echo "note: $bin is built without MPI: mpirun case skipped"
fi

# --resume: points with a good record are kept (a sentinel wall_s survives),
# a missing one, a torn one and the failed one run again.
cp -r "$tmp/serial" "$tmp/res"
sed -i 's/"wall_s": [0-9.e-]*/"wall_s": 12345.5/' "$tmp/res/points/0000.json"
rm "$tmp/res/points/0001.json"
head -c 40 "$tmp/serial/points/0004.json" >"$tmp/res/points/0004.json"
"$bin" sweep "$tmp/spec.yaml" --kernels "$tmp/libfaulty.so" --out "$tmp/res" --resume --no-figures >"$tmp/out" 2>&1
rc=$?
check "--resume exits 1 (the failed point fails again), got $rc" test "$rc" -eq 1
check "--resume keeps 5 points" grep -q "8 points, 1 failed, 5 resumed" "$tmp/out"
check "a kept point is not rerun" grep -q '"wall_s": 12345.5' "$tmp/res/sweep.json"
check "--resume gives the serial sweep.json" same "$j" "$tmp/res/sweep.json"
# A changed spec invalidates the points it changes.
sed 's/tile_n: 32/tile_n: 16/' "$tmp/spec.yaml" >"$tmp/spec2.yaml"
"$bin" sweep "$tmp/spec2.yaml" --kernels "$tmp/libfaulty.so" --out "$tmp/res" --resume --no-figures >"$tmp/out" 2>&1
check "changed parameters rerun their panel" grep -q "8 points, 1 failed, 5 resumed" "$tmp/out"

# Atomic writes: kill -9 the sweep once a point is done; every file left
# is whole, and --resume finishes the job. CUBESIM_TEST_HOLD_AFTER=1 makes
# the sweep wait after its first point, so the kill lands mid-sweep on a
# machine of any speed; the wait for the point file is bounded only to
# fail rather than hang if it never comes.
cat >"$tmp/slow.yaml" <<'EOF'
version: 1
name: slow
kernel: gemm
grid:
  m: [64, 1024, 1024, 1024]
  n: [512]
  k: [512]
EOF
CUBESIM_TEST_HOLD_AFTER=1 "$bin" sweep "$tmp/slow.yaml" --out "$tmp/kill" --no-figures \
        >/dev/null 2>"$tmp/kill.err" &
pid=$!
for _ in $(seq 1200); do
        grep -q 'holding until a signal' "$tmp/kill.err" 2>/dev/null && break
        sleep 0.05
done
check "the sweep held after its first point" grep -q 'holding until a signal' "$tmp/kill.err"
kill -9 "$pid" 2>/dev/null
wait "$pid" 2>/dev/null
check "killed before the end" test ! -e "$tmp/kill/sweep.json"
for f in "$tmp"/kill/points/[0-9]*.json; do
        check "$(basename "$f") is whole" test "$(tail -n 1 "$f")" = "}"
done
"$bin" sweep "$tmp/slow.yaml" --out "$tmp/kill" --resume --no-figures >"$tmp/out" 2>&1
check "--resume after a kill succeeds" grep -q "sweep slow: 4 points, 0 failed" "$tmp/out"
"$bin" sweep "$tmp/slow.yaml" --out "$tmp/slow" --no-figures >/dev/null 2>&1
check "and matches a clean run" same "$tmp/slow/sweep.json" "$tmp/kill/sweep.json"

# Figures: gnuplot draws PNG and SVG next to their scripts and data;
# without gnuplot the sweep still succeeds, with a warning.
cat >"$tmp/fig.yaml" <<'EOF'
version: 1
name: fig
kernel: softmax
grid:
  block: [8, 16]
  rows: [64, 512]
figure: {x: rows, roofline_bytes_per_x: 1024}
EOF
if command -v gnuplot >/dev/null; then
        "$bin" sweep "$tmp/fig.yaml" --out "$tmp/fig" >"$tmp/out" 2>"$tmp/err"
        check "sweep with figures exits 0" test $? -eq 0
        for f in time_fig utilisation dispatch; do
                check "$f.png is a PNG" test "$(head -c 4 "$tmp/fig/figures/$f.png" | tail -c 3)" = PNG
                check "$f.svg is an SVG" grep -q '<svg' "$tmp/fig/figures/$f.svg"
                check "$f.gp kept" test -s "$tmp/fig/figures/$f.gp"
                check "$f.dat kept" test -s "$tmp/fig/figures/$f.dat"
        done
        check "the roofline is drawn" grep -q "HBM roofline" "$tmp/fig/figures/time_fig.gp"
        check "report shows the figures" grep -q '(figures/time_fig.png)' "$tmp/fig/report.md"
        check "no gnuplot complaints" test ! -s "$tmp/fig/figures/gnuplot.log"
else
        echo "note: gnuplot is not installed: figure case skipped"
fi
# Names reach gnuplot scripts and DOT only as quoted strings: a topology
# name and an x label built to run commands run none, and the figures are
# drawn with the names as written.
mkdir -p "$tmp/evil"
sed "s/^name: small\$/name: 'x\"; system \"touch pwned_name\"; print \"'/" \
        "$src/topologies/small.yaml" >"$tmp/evil/machine.yaml"
check "the evil name is in the machine file" grep -q 'pwned_name' "$tmp/evil/machine.yaml"
cat >"$tmp/evil/spec.yaml" <<'EOF'
version: 1
name: evil
kernel: softmax
topology: machine.yaml
grid:
  rows: [64, 128]
figure: {x: rows, x_label: 'rows `touch pwned_label` @x ''q'' \\'}
EOF
cat >"$tmp/evil/want" <<'EOF'
set xlabel 'rows `touch pwned_label` @x ''q'' \\'
digraph "x\"; system \"touch pwned_name\"; print \"" {
EOF
(cd "$tmp/evil" && "$bin" sweep spec.yaml --out out >"$tmp/out" 2>"$tmp/err")
check "sweep with evil names exits 0" test $? -eq 0
check "no command ran" test -z "$(find "$tmp" -name 'pwned*')"
gp=$tmp/evil/out/figures/time_evil.gp
check "x label single-quoted, as written" grep -qxF "$(sed -n 1p "$tmp/evil/want")" "$gp"
check "topology name single-quoted, as written" \
        grep -qF "set title 'evil: softmax on x\"; system \"touch pwned_name\"; print \" (" "$gp"
if command -v gnuplot >/dev/null; then
        check "evil names: figures drawn" test -s "$tmp/evil/out/figures/time_evil.png"
        check "evil names: no gnuplot complaints" test ! -s "$tmp/evil/out/figures/gnuplot.log"
fi
"$bin" topo show "$tmp/evil/machine.yaml" --format dot >"$tmp/evil/dot" 2>&1
check "dot: the name escaped" grep -qxF "$(sed -n 2p "$tmp/evil/want")" "$tmp/evil/dot"
if command -v dot >/dev/null; then
        check "dot: graphviz reads it" dot -Tsvg "$tmp/evil/dot" -o /dev/null
fi

CUBESIM_GNUPLOT=/nonexistent/gnuplot "$bin" sweep "$tmp/fig.yaml" --out "$tmp/nofig" >"$tmp/out" 2>"$tmp/err"
check "no gnuplot: still exit 0" test $? -eq 0
check "no gnuplot: a warning" grep -q "warning: gnuplot not found" "$tmp/err"
check "no gnuplot: sweep.json written" test -s "$tmp/nofig/sweep.json"
check "no gnuplot: the scripts are there" test -s "$tmp/nofig/figures/time_fig.gp"
check "no gnuplot: the report says so" grep -q "Figures not drawn" "$tmp/nofig/report.md"

# A grid over kernels compares them in one panel and one figure: a series
# per kernel, each point run with its own kernel.
cat >"$tmp/kx.yaml" <<'EOF'
version: 1
name: kx
grid:
  kernel: [gemm, gemm_epilogue]
  m: [64, 128]
params: {n: 64, k: 64}
EOF
"$bin" sweep "$tmp/kx.yaml" --out "$tmp/kx" >"$tmp/out" 2>&1
check "kernel axis: exit 0" test $? -eq 0
check "kernel axis: one panel naming both" grep -q '"kernel": "gemm vs gemm_epilogue"' "$tmp/kx/sweep.json"
check "kernel axis: one figure" test "$(ls "$tmp/kx/figures/"time_*.dat | wc -l)" -eq 1
check "kernel axis: a series per kernel" grep -q "^# series 1: gemm_epilogue" "$tmp/kx/figures/time_kx.dat"
check "kernel axis: each point its kernel" test "$(grep -c '"kernel": "gemm_epilogue"' "$tmp/kx/sweep.json")" -eq 2
check "kernel axis: different times" test "$(sed -n '/series 0/{n;p}' "$tmp/kx/figures/time_kx.dat" | cut -d' ' -f2)" != "$(sed -n '/series 1/{n;p}' "$tmp/kx/figures/time_kx.dat" | cut -d' ' -f2)"

# The headline bench: its kernels, or a clear error naming them.
"$bin" bench run milestone-gqa-headline --set panels=nope >"$tmp/out" 2>&1
check "headline: a bad panel is bad input" grep -q "no panel 'nope'" "$tmp/out"
if "$bin" kernels --brief | grep '^gqa_decode ' >/dev/null; then
        "$bin" bench run milestone-gqa-headline --out "$tmp/head" --set panels=decode-long \
                --set models=mistral-7b --set decode_contexts=4096 --set figures=0 --json \
                >"$tmp/out" 2>&1
        check "headline subset runs" grep -q '"points": 1, "failed": 0' "$tmp/out"
        check "headline writes its spec" grep -q "kernel: gqa_decode" "$tmp/head/spec.yaml"
        check "headline roofline" grep -q '"of_roofline": ' "$tmp/head/sweep.json"
else
        "$bin" bench run milestone-gqa-headline --out "$tmp/head" >"$tmp/out" 2>&1
        check "headline without its kernels: exit 2" test $? -eq 2
        check "headline names the missing kernel" grep -q "panel decode-long needs kernel 'gqa_decode'" "$tmp/out"
fi

[ $fail -eq 0 ] && echo "sweep_run: $n checks pass"
exit $fail
