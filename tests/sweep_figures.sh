#!/usr/bin/env bash
# tests/sweep_figures.sh: figures of awkward sweeps. A sweep with one good
# point draws its time figure (a range around the one x value); gnuplot
# runs once per figure, so a figure it cannot draw costs only itself, and
# an empty picture it leaves is removed; a time figure whose key has long
# names or many lines puts the key below the plot and grows the picture.
# Environment: CUBESIM_BIN, CUBESIM_SOURCE_DIR (ctest sets them).
set -u
. "${CUBESIM_SOURCE_DIR:?CUBESIM_SOURCE_DIR must name the source tree}/tests/lib/script.sh"
fail=0
# Point 1 is refused at setup (its tiles do not fit in TCM): one good point.
cat >"$tmp/one.yaml" <<'EOF'
version: 1
name: one
kernel: gemm
points:
  - {m: 64, tile_k: 64}
  - {m: 128, tile_k: 4096}
EOF
"$bin" sweep "$tmp/one.yaml" --out "$tmp/one" --no-progress >"$tmp/one.log" 2>&1
check "the sweep with a failed point exits 1" test $? -eq 1
check "one point's x range is a range" grep -q '^set xrange \[32:96\]$' "$tmp/one/figures/time_one.gp"
if command -v "${CUBESIM_GNUPLOT:-gnuplot}" >/dev/null; then
        for f in time_one utilisation dispatch energy; do
                check "$f.png of a sweep with one good point" test -s "$tmp/one/figures/$f.png"
        done
        check "no gnuplot warning" bash -c "! grep -q 'gnuplot failed' '$tmp/one.log'"
fi
# A gnuplot that leaves an empty picture and fails on the time figure only.
cat >"$tmp/gnuplot" <<'EOF'
#!/bin/sh
s=${1%.gp}
case $s in
time_*) : >"$s.png"; echo "cannot draw $s" >&2; exit 1 ;;
*) echo x >"$s.png"; echo x >"$s.svg" ;;
esac
EOF
chmod +x "$tmp/gnuplot"
CUBESIM_GNUPLOT=$tmp/gnuplot "$bin" sweep "$tmp/one.yaml" --out "$tmp/fake" --no-progress >"$tmp/fake.log" 2>&1
check "no empty picture is left" test ! -e "$tmp/fake/figures/time_one.png"
check "the figures after the failed one are drawn" test -s "$tmp/fake/figures/energy.png"
check "gnuplot's message of each figure is in the log" grep -q "cannot draw time_one" "$tmp/fake/figures/gnuplot.log"
check "the failure is warned about" grep -q "warning: gnuplot failed" "$tmp/fake.log"
# Long series names: the key goes below the plot, the picture grows.
cat >"$tmp/long.yaml" <<'EOF'
version: 1
name: long
kernel: gemm
grid:
  m: [64, 128]
  pe.dma.bw_gbps: [64, 128]
  pe.cpu.issue_cost_ns.dot: [5, 10]
EOF
"$bin" sweep "$tmp/long.yaml" --out "$tmp/long" --no-progress --no-figures >/dev/null 2>&1
gp=$tmp/long/figures/time_long.gp
check "a long key goes below the plot" grep -q '^set key below left Left reverse maxcols 1 box opaque$' "$gp"
check "the picture grows for it" grep -q '^set terminal pngcairo size 960,748 ' "$gp"
"$bin" sweep "$tmp/one.yaml" --out "$tmp/short" --no-progress --no-figures >/dev/null 2>&1
check "a short key stays inside" grep -q '^set key top left box opaque$' "$tmp/short/figures/time_one.gp"
[ $fail -eq 0 ] && echo "sweep_figures: ok"
exit $fail
