#!/usr/bin/env bash
# tests/validate_tt_ccl.sh: the validate-tt-ccl bench on a cut of its table
# (the rows up to 128 KiB of every configuration, simulated, and one large row per
# configuration extrapolated with max_bytes: the coarse grain): its JSON
# has every row with the fields the issue asks for, predicted and error
# consistent, a MAPE that is their mean, and a figure's data and script
# per op; a table row with an unknown op, or a row above max_bytes without
# two simulated sizes to extrapolate from, is an error (exit 2) naming
# FILE:LINE or the row.
set -euo pipefail
. "${CUBESIM_SOURCE_DIR:?CUBESIM_SOURCE_DIR must name the source tree}/tests/lib/script.sh"
cd "$src"
fail() { echo "FAIL $*" >&2; exit 1; }

{
        grep '^#' benches/data/tt_ccl.csv
        echo "op,topology,devices,bytes,measured_us"
        grep -v '^#' benches/data/tt_ccl.csv | awk -F, 'NR > 1 && ($4 <= 131072 || $4 == 268435456)'
} >"$tmp/cut.csv"
"$bin" bench run validate-tt-ccl --set csv="$tmp/cut.csv" --set max_bytes=131072 --set figures=0 \
        --out "$tmp/o" --json >"$tmp/out.json"
python3 - "$tmp/out.json" "$tmp/cut.csv" <<'PY' || fail "validate-tt-ccl json"
import csv, json, sys
d = json.load(open(sys.argv[1]))
table = list(csv.DictReader(l for l in open(sys.argv[2]) if not l.startswith("#")))
rows = d["rows"]
assert len(rows) == len(table) and len(rows) > 20, (len(rows), len(table))
for r, t in zip(rows, table):
    assert set(r) == {"op", "topology", "devices", "bytes", "measured_us", "predicted_us",
                      "error_pct"}, r
    assert (r["op"], r["topology"], r["devices"], r["bytes"]) == \
        (t["op"], t["topology"], int(t["devices"]), int(t["bytes"])), r
    assert r["predicted_us"] > 0, r
    err = (r["predicted_us"] - r["measured_us"]) / r["measured_us"] * 100
    assert abs(err - r["error_pct"]) < 0.1, r
mape = sum(abs(r["error_pct"]) for r in rows) / len(rows)
assert abs(mape - d["mape_pct"]) < 0.01, (mape, d["mape_pct"])
PY
for op in all_gather reduce_scatter all_reduce; do
        [ -s "$tmp/o/figures/$op.dat" ] && [ -s "$tmp/o/figures/$op.gp" ] || fail "no figure for $op"
done
grep -q "extrapolated\|| no |" "$tmp/o/table.md" || fail "no extrapolated row in table.md"

# A table of one op, its configurations interleaved and out of size order:
# a figure for that op only (none with no row, which gnuplot could not draw),
# one data block a configuration, its rows by size.
printf '%s\n' op,topology,devices,bytes,measured_us reduce_scatter,line,2,16384,8.79 \
        reduce_scatter,line,4,8192,14.53 reduce_scatter,line,2,4096,6.90 \
        reduce_scatter,line,4,16384,16.47 >"$tmp/rs.csv"
"$bin" bench run validate-tt-ccl --set csv="$tmp/rs.csv" --out "$tmp/rs" >"$tmp/rs.out" 2>"$tmp/rs.err"
if command -v gnuplot >/dev/null; then
        [ ! -s "$tmp/rs.err" ] || fail "one-op table: $(cat "$tmp/rs.err")"
else
        ! grep -q "all_gather\|all_reduce" "$tmp/rs.err" || fail "one-op table: $(cat "$tmp/rs.err")"
fi
[ -s "$tmp/rs/figures/reduce_scatter.gp" ] || fail "one-op table: no reduce_scatter figure"
for op in all_gather all_reduce; do
        [ ! -e "$tmp/rs/figures/$op.gp" ] || fail "one-op table: a figure for $op"
        ! grep -q "figures/$op.png" "$tmp/rs/table.md" || fail "one-op table: table.md links $op"
done
python3 - "$tmp/rs/figures/reduce_scatter.dat" <<'PY' || fail "one-op table: data blocks"
import sys
blocks = [[int(l.split()[0]) for l in b.strip().splitlines()]
          for b in open(sys.argv[1]).read().split("\n\n\n")]
assert blocks == [[4096, 16384], [8192, 16384]], blocks
PY
if command -v gnuplot >/dev/null; then
        [ -s "$tmp/rs/figures/reduce_scatter.png" ] || fail "one-op table: figure not drawn"
fi

# Bad tables.
printf 'op,topology,devices,bytes,measured_us\nall_scatter,ring,8,16384,19.6\n' >"$tmp/bad.csv"
set +e
"$bin" bench run validate-tt-ccl --set csv="$tmp/bad.csv" --set figures=0 --out "$tmp/b" \
        >"$tmp/err" 2>&1
rc=$?
set -e
[ $rc -eq 2 ] || fail "bad op: exit $rc"
grep -q "bad.csv:2:1: error: expected op (all_gather, reduce_scatter, all_reduce)" "$tmp/err" \
        || fail "bad op message: $(cat "$tmp/err")"
printf 'op,topology,devices,bytes,measured_us\nall_gather,line,2,8192,7.65\nall_gather,line,2,1048576,89.16\n' \
        >"$tmp/one.csv"
set +e
"$bin" bench run validate-tt-ccl --set csv="$tmp/one.csv" --set max_bytes=65536 --set figures=0 \
        --out "$tmp/b" >"$tmp/err" 2>&1
rc=$?
set -e
[ $rc -eq 2 ] || fail "one simulated size: exit $rc"
grep -q "all_gather line 2 devices, 1048576 bytes: above max_bytes (65536) with fewer than two" \
        "$tmp/err" || fail "extrapolation message: $(cat "$tmp/err")"
# A bad override of the machine files stops the bench before any run.
for kv in core_ns=-5 slots=2.5 message_ns=abc; do
        set +e
        "$bin" bench run validate-tt-ccl --set csv="$tmp/one.csv" --set "$kv" --set figures=0 \
                --out "$tmp/b" >"$tmp/err" 2>&1
        rc=$?
        set -e
        [ $rc -eq 2 ] || fail "$kv: exit $rc"
        grep -q -- "--set $kv: expected an\? \(integer\|number\) in \[0, " "$tmp/err" ||
                fail "$kv message: $(cat "$tmp/err")"
done
echo "ok"
