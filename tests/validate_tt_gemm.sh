#!/usr/bin/env bash
# tests/validate_tt_gemm.sh: the validate-tt-gemm bench on a small table.
# Each row's predicted_ns is what `cubesim run tt_matmul` gives for it,
# error_pct and mape_pct follow from the numbers, the table and the
# figure's script are written, and a table without a needed column, a bad
# cell (located FILE:LINE:COL), a row the kernel refuses (FILE:LINE) or no
# rows at all is an error (exit 2) that prints no JSON.
set -euo pipefail
. "${CUBESIM_SOURCE_DIR:?CUBESIM_SOURCE_DIR must name the source tree}/tests/lib/script.sh"
cd "$src"
. "$src/tests/lib/numpy.sh"
py=$(numpy_python)

cat >"$tmp/rows.csv" <<'CSV'
m,k,n,dtype,fidelity,in0,in1,out,grid_x,grid_y,device_util_pct,ideal_cycles,device_ns
256,256,256,bf16,lofi,l1,dram,l1,8,8,50,128,5000.0
512,256,384,bf16,lofi,dram,dram,dram,4,2,50,384,20000.0
CSV
"$bin" bench run validate-tt-gemm --set csv="$tmp/rows.csv" --set figures=0 --out "$tmp/out" \
        --json >"$tmp/out.json"
"$bin" run tt_matmul --topo topologies/tt_wormhole_n150.yaml --set m=256 --set k=256 --set n=256 \
        --set in0=l1 --set in1=dram --set out=l1 --set grid_x=8 --set grid_y=8 --set fidelity=lofi \
        --json >"$tmp/r0.json"
"$bin" run tt_matmul --topo topologies/tt_wormhole_n150.yaml --set m=512 --set k=256 --set n=384 \
        --set in0=dram --set in1=dram --set out=dram --set grid_x=4 --set grid_y=2 --set fidelity=lofi \
        --json >"$tmp/r1.json"
"$py" - "$tmp" <<'PY'
import json, sys
d = sys.argv[1]
out = json.load(open(f"{d}/out.json"))
rows = out["rows"]
assert len(rows) == 2, rows
for i, r in enumerate(rows):
    run = json.load(open(f"{d}/r{i}.json"))
    assert abs(r["predicted_ns"] - run["kernel_ps"] / 1000) < 0.06, (r, run["kernel_ps"])
    want = (r["predicted_ns"] - r["measured_ns"]) / r["measured_ns"] * 100
    assert abs(r["error_pct"] - want) < 0.01, (r, want)
assert rows[0]["measured_ns"] == 5000.0 and rows[1]["in0"] == "dram"
mape = sum(abs(r["error_pct"]) for r in rows) / 2
assert abs(out["mape_pct"] - mape) < 0.01, (out["mape_pct"], mape)
print("ok rows", [round(r["error_pct"], 1) for r in rows], "mape", out["mape_pct"])
PY
grep -q "| 512 | 256 | 384 | bf16 | lofi | dram | dram | dram | 4x2 |" "$tmp/out/table.md" \
        || { echo "FAIL: table.md" >&2; exit 1; }
[ -s "$tmp/out/figures/pred_vs_meas.gp" ] && [ -s "$tmp/out/figures/pred_vs_meas.dat" ] \
        || { echo "FAIL: figure script or data missing" >&2; exit 1; }

# A table without device_ns.
printf 'm,k,n,dtype,fidelity,in0,in1,out,grid_x,grid_y\n64,64,64,bf16,lofi,l1,l1,l1,1,1\n' \
        >"$tmp/bad.csv"
rc=0
"$bin" bench run validate-tt-gemm --set csv="$tmp/bad.csv" --out "$tmp/bad" >/dev/null \
        2>"$tmp/err" || rc=$?
[ "$rc" -eq 2 ] || { echo "FAIL: bad table: exit $rc, want 2" >&2; exit 1; }
grep -q "bad.csv:1:1: error: missing column 'device_ns'" "$tmp/err" \
        || { cat "$tmp/err" >&2; echo "FAIL: message" >&2; exit 1; }
# Bad cells, each located at its line and column; a header alone.
hdr="m,k,n,dtype,fidelity,in0,in1,out,grid_x,grid_y,device_util_pct,ideal_cycles,device_ns"
bad_table() {  # bad_table NAME ROW MESSAGE (ROW empty: the header alone)
        { echo "$hdr"; [ -z "$2" ] || echo "$2"; } >"$tmp/$1.csv"
        rc=0
        "$bin" bench run validate-tt-gemm --set csv="$tmp/$1.csv" --set figures=0 --json \
                --out "$tmp/bad" >"$tmp/$1.out" 2>"$tmp/$1.err" || rc=$?
        [ "$rc" -eq 2 ] || { echo "FAIL: $1: exit $rc, want 2" >&2; exit 1; }
        [ ! -s "$tmp/$1.out" ] || { echo "FAIL: $1: printed figures" >&2; exit 1; }
        grep -qF "$1.csv:$3" "$tmp/$1.err" || { cat "$tmp/$1.err" >&2; echo "FAIL: $1: message" >&2; exit 1; }
}
bad_table inf "256,256,256,bf16,lofi,l1,dram,l1,8,8,50,128,inf" \
        "2:45: error: device_ns: expected a finite time in ns > 0 (got 'inf')"
bad_table huge "256,256,256,bf16,lofi,l1,dram,l1,8,8,50,128,1e400" \
        "2:45: error: device_ns: expected a finite time in ns > 0 (got '1e400')"
bad_table text_m "2x6,256,256,bf16,lofi,l1,dram,l1,8,8,50,128,100" \
        "2:1: error: m: expected an integer in [1, 1048576] (got '2x6')"
bad_table dtype "256,256,256,bf17,lofi,l1,dram,l1,8,8,50,128,100" \
        "2:13: error: dtype: expected one of bf16, bfp8_b, bfp4_b (got 'bf17')"
bad_table grid "256,256,256,bf16,lofi,l1,dram,l1,100,8,50,128,100" \
        "2:1: error: the row is refused: kernel tt_matmul: grid_x 100 x grid_y 8 does not fit"
bad_table header_only "" "2:1: error: no rows: the table has only its header"
# A leading zero is a number, printed as one: the output stays JSON.
{ echo "$hdr"; echo "0256,256,256,bf16,lofi,l1,dram,l1,8,8,50,128,5000.0"; } >"$tmp/zero.csv"
"$bin" bench run validate-tt-gemm --set csv="$tmp/zero.csv" --set figures=0 --json \
        --out "$tmp/zero" >"$tmp/zero.json"
"$py" -c 'import json,sys; r=json.load(open(sys.argv[1]))["rows"][0]; assert r["m"] == 256, r' \
        "$tmp/zero.json" || { echo "FAIL: a leading zero" >&2; exit 1; }
echo "ok"
