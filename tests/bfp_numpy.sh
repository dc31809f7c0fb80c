#!/usr/bin/env bash
# tests/bfp_numpy.sh: the block-float dtypes in data mode against a NumPy
# model of the format (tests/lib/bfp_model.py). For bfp8_b and bfp4_b,
# `cubesim run gemm --mode data` with A . I must give the model's rounding
# of A bit for bit, and A . B the model's result within one step of each
# group. Needs python3 with numpy (scripts/deps.sh installs python3-numpy).
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
done
echo "ok"
