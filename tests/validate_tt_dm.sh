#!/usr/bin/env bash
# tests/validate_tt_dm.sh: the validate-tt-dm bench. Its JSON has every row
# of the documented table with the fields the issue asks for and a MAPE that
# is their mean; with the machine files as they are, every DRAM efficiency
# row is within 3 points and every other row within 10% (issue 23's goals);
# each data-movement mechanism matters: without pe.dma.thread_nocs one core
# takes from all at both NoCs' rate, without the multicast cost per destination
# a multicast runs at link rate, without far_efficiency_pct a lone reader
# away from its bank gets the whole bank; a table row with a bad unit or an
# unknown machine is an error (exit 2) naming FILE:LINE.
set -euo pipefail
. "${CUBESIM_SOURCE_DIR:?CUBESIM_SOURCE_DIR must name the source tree}/tests/lib/script.sh"
cd "$src"
fail() { echo "FAIL $*" >&2; exit 1; }

"$bin" bench run validate-tt-dm --json >"$tmp/out.json"
python3 - "$tmp/out.json" benches/data/tt_dm_ideal.csv <<'PY' || fail "validate-tt-dm goals"
import csv, json, sys
d = json.load(open(sys.argv[1]))
table = list(csv.DictReader(open(sys.argv[2])))
rows = d["rows"]
assert len(rows) == len(table), (len(rows), len(table))
for r, t in zip(rows, table):
    assert set(r) == {"machine", "pattern", "documented", "predicted", "unit", "error_pct"}, r
    assert (r["machine"], r["pattern"], r["unit"]) == (t["machine"], t["pattern"], t["unit"]), r
    assert abs(r["documented"] - float(t["documented"])) < 1e-9, r
    err = (r["predicted"] - r["documented"]) / r["documented"] * 100
    assert abs(err - r["error_pct"]) < 0.1, r  # predicted is rounded to 0.01
    if r["unit"] == "% of peak":
        assert abs(r["predicted"] - r["documented"]) <= 3, r
    else:
        assert abs(r["error_pct"]) <= 10, r
mape = sum(abs(r["error_pct"]) for r in rows) / len(rows)
assert abs(mape - d["mape_pct"]) < 0.01, (mape, d["mape_pct"])
PY

# A row's prediction with the machine files' key removed.
without() { # KEY PATTERN MACHINE(wh|bh): prints the predicted rate
        local key=$1 pattern=$2 m=$3 file=topologies/tt_wormhole_n150.yaml name=wormhole_n150
        if [ "$m" = bh ]; then
                file=topologies/tt_blackhole_p150.yaml
                name=blackhole_p150
        fi
        grep -v "^ *$key:" "$file" >"$tmp/$m.yaml"
        "$bin" bench run validate-tt-dm --set "$m=$tmp/$m.yaml" --json |
                python3 -c "import json,sys; print([r['predicted'] for r in json.load(sys.stdin)['rows']
                            if r['pattern'] == '$pattern' and r['machine'] == '$name'][0])"
}
gt() { python3 -c "import sys; sys.exit(0 if $1 > $2 else 1)"; }
v=$(without thread_nocs one_from_all wh); gt "$v" 40 || fail "one_from_all without thread_nocs: $v"
v=$(without mcast_dest_ns one_to_all_mcast wh); gt "$v" 25 || fail "mcast without its cost: $v"
v=$(without far_efficiency_pct dram_read bh); gt "$v" 40 || fail "bh dram_read, no far efficiency: $v"

printf 'machine,pattern,documented,unit\nwormhole_n150,dram_read,22,B/s\n' >"$tmp/unit.csv"
if "$bin" bench run validate-tt-dm --set csv="$tmp/unit.csv" >"$tmp/o" 2>"$tmp/e"; then
        fail "a bad unit was accepted"
else
        [ $? -eq 2 ] || fail "bad unit: exit status"
fi
grep -qF "$tmp/unit.csv:2:28: error: unit 'B/s': expected 'B/cycle' or '% of peak'" "$tmp/e" ||
        fail "bad unit message: $(cat "$tmp/e")"
printf 'machine,pattern,documented,unit\ngrayskull,dram_read,22,B/cycle\n' >"$tmp/m.csv"
if "$bin" bench run validate-tt-dm --set csv="$tmp/m.csv" >"$tmp/o" 2>"$tmp/e"; then
        fail "an unknown machine was accepted"
else
        [ $? -eq 2 ] || fail "unknown machine: exit status"
fi
grep -qF "$tmp/m.csv:2:1: error: machine 'grayskull': expected wormhole_n150 or blackhole_p150" \
        "$tmp/e" || fail "unknown machine message: $(cat "$tmp/e")"
# A blank line before a row: the row is still located at its own line.
printf 'machine,pattern,documented,unit\n\ngrayskull,dram_read,22,B/cycle\n' >"$tmp/b.csv"
if "$bin" bench run validate-tt-dm --set csv="$tmp/b.csv" >"$tmp/o" 2>"$tmp/e"; then
        fail "an unknown machine after a blank line was accepted"
fi
grep -qF "$tmp/b.csv:3:1: error: machine 'grayskull'" "$tmp/e" ||
        fail "unknown machine after a blank line: $(cat "$tmp/e")"
printf 'machine,pattern,unit\nwormhole_n150,dram_read,B/cycle\n' >"$tmp/h.csv"
if "$bin" bench run validate-tt-dm --set csv="$tmp/h.csv" >"$tmp/o" 2>"$tmp/e"; then
        fail "a table without its documented column was accepted"
fi
grep -qF "$tmp/h.csv:1:1: error: missing column 'documented'" "$tmp/e" ||
        fail "missing column message: $(cat "$tmp/e")"
printf 'machine,pattern,documented,unit\nwormhole_n150,dram_read,-3,B/cycle\n' >"$tmp/d.csv"
if "$bin" bench run validate-tt-dm --set csv="$tmp/d.csv" >"$tmp/o" 2>"$tmp/e"; then
        fail "a documented figure <= 0 was accepted"
fi
grep -qF "$tmp/d.csv:2:25: error: documented '-3': expected a figure > 0" "$tmp/e" ||
        fail "documented figure message: $(cat "$tmp/e")"
echo "validate_tt_dm: ok"
