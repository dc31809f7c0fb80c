#!/usr/bin/env bash
# Install what cubesim needs to build, test and draw figures, from Debian's
# packages. Idempotent: does nothing when everything is present.
set -euo pipefail

pkgs=(
        gcc g++ make cmake pkg-config       # toolchain
        libyaml-dev                         # topology files
        libjansson-dev                      # JSON output
        zlib1g-dev                          # gzip-compressed traces (--trace FILE.gz)
        libcriterion-dev                    # unit tests
        gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-user  # aarch64 coroutine switch test
        gnuplot-nox                         # sweep figures
        python3 python3-numpy               # test checkers (tests/lib/*.py); NumPy model of the block-float dtypes (tests/bfp_numpy.sh)
        python3-pytest                      # the Python package's tests (python/tests, tests/python.sh)
        libopenmpi-dev openmpi-bin          # sweeps over MPI ranks
        valgrind                            # memcheck step of scripts/test.sh
        clang libclang-rt-14-dev            # libFuzzer harnesses (scripts/fuzz.sh)
)

missing=()
for p in "${pkgs[@]}"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
        echo "deps: all ${#pkgs[@]} packages present"
        exit 0
fi
echo "deps: installing ${missing[*]}"
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO=sudo
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -q
$SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
