#!/usr/bin/env bash
# tests/bfp_numpy.sh: the block-float dtypes in data mode against a NumPy
# model of the format (tests/lib/bfp_model.py). For bfp8_b and bfp4_b,
# `cubesim run gemm --mode data` with A . I must give the model's rounding
# of A bit for bit, and A . B the model's result within one step of each
# group. Needs python3 with numpy (scripts/deps.sh installs python3-numpy).
set -euo pipefail
bin=${CUBESIM_BIN:?set by ctest}
src=${CUBESIM_SOURCE_DIR:?set by ctest}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

. "$src/tests/lib/numpy.sh"
py=$(numpy_python)

"$py" "$src/tests/lib/bfp_model.py" write "$dir" 7
mkdir -p "$dir/in_eye" "$dir/in_rand"
cp "$dir/a.npy" "$dir/in_eye/a.npy"
cp "$dir/eye.npy" "$dir/in_eye/b.npy"
cp "$dir/a.npy" "$dir/in_rand/a.npy"
cp "$dir/b.npy" "$dir/in_rand/b.npy"
for dt in bfp8_b bfp4_b; do
        for case in eye rand; do
                "$bin" run gemm --mode data --set dtype=$dt --inputs "$dir/in_$case" \
                        --outputs "$dir/out_$case" >/dev/null
        done
        "$py" "$src/tests/lib/bfp_model.py" check "$dir" $dt
        rm -rf "$dir/out_eye" "$dir/out_rand"
done
echo "ok"
