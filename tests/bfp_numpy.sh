#!/usr/bin/env bash
# tests/bfp_numpy.sh: the block-float dtypes in data mode against a NumPy
# model of the format (tests/lib/bfp_model.py). For bfp8_b and bfp4_b,
# `cubesim run gemm --mode data` with A . I must give the model's rounding
# of A bit for bit, and A . B the model's result within one step of each
# group. A result does not depend on the tiling (docs/adr/0019): C of
# [64, 40] . [40, 48] in output tiles 16 wide and 48 wide is the same, and
# representable (K = 40 ends the TCM buffers' rows inside a block); tiles 20
# wide are refused (or give the same C). Needs
# python3 with numpy (scripts/deps.sh installs python3-numpy).
set -euo pipefail
. "${CUBESIM_SOURCE_DIR:?CUBESIM_SOURCE_DIR must name the source tree}/tests/lib/script.sh"

. "$src/tests/lib/numpy.sh"
py=$(numpy_python)

"$py" "$src/tests/lib/bfp_model.py" write "$tmp" 7
mkdir -p "$tmp/in_eye" "$tmp/in_rand"
cp "$tmp/a.npy" "$tmp/in_eye/a.npy"
cp "$tmp/eye.npy" "$tmp/in_eye/b.npy"
cp "$tmp/a.npy" "$tmp/in_rand/a.npy"
cp "$tmp/b.npy" "$tmp/in_rand/b.npy"
for dt in bfp8_b bfp4_b; do
        for case in eye rand; do
                "$bin" run gemm --mode data --set dtype=$dt --inputs "$tmp/in_$case" \
                        --outputs "$tmp/out_$case" >/dev/null
        done
        "$py" "$src/tests/lib/bfp_model.py" check "$tmp" $dt
        rm -rf "$tmp/out_eye" "$tmp/out_rand"
        for tn in 16 48; do
                "$bin" run gemm --mode data --set dtype=$dt --set m=64 --set k=40 --set n=48 \
                        --set tile_n=$tn --outputs "$tmp/tile_$tn" >/dev/null 2>&1
        done
        "$py" "$src/tests/lib/bfp_model.py" same $dt "$tmp/tile_16/c.npy" "$tmp/tile_48/c.npy"
        # Tiles 20 wide would start inside blocks: refused, or the same C.
        rc=0
        "$bin" run gemm --mode data --set dtype=$dt --set m=64 --set k=40 --set n=48 \
                --set tile_n=20 --outputs "$tmp/tile_20" >/dev/null 2>"$tmp/err" || rc=$?
        if [ $rc -eq 0 ]; then
                "$py" "$src/tests/lib/bfp_model.py" same $dt "$tmp/tile_16/c.npy" "$tmp/tile_20/c.npy"
        elif [ $rc -ne 2 ] || ! grep -qF "tile_n = 20: a $dt output is stored in whole blocks of 16" "$tmp/err"; then
                echo "FAIL $dt: tile_n=20 exited $rc without refusing the tiling:"
                sed 's/^/    /' "$tmp/err" | head -5
                exit 1
        fi
        rm -rf "$tmp/tile_16" "$tmp/tile_48" "$tmp/tile_20"
done
echo "ok"
