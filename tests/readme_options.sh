#!/usr/bin/env bash
# The README's command synopsis lists every option each command's --help
# documents.
set -euo pipefail
bin=${CUBESIM_BIN:?}
src=${CUBESIM_SOURCE_DIR:?}
synopsis=$(awk '/^## Command line/{on=1} on && /^```$/{n++; if (n==2) exit; next} on && n==1' \
        "$src/README.md")
[ -n "$synopsis" ] || { echo "FAIL: no synopsis block under '## Command line'"; exit 1; }
fail=0
for cmd in run kernels sweep "bench" topo compare serve; do
        # shellcheck disable=SC2086
        for opt in $("$bin" $cmd --help 2>&1 | grep -o -- '--[a-z][a-z-]*' | sort -u); do
                [ "$opt" = --help ] && continue
                grep -qF -- "$opt" <<<"$synopsis" ||
                        { echo "FAIL: cubesim $cmd $opt is not in the README synopsis"; fail=1; }
        done
done
[ $fail -eq 0 ] && echo "readme_options: the synopsis lists every documented option"
exit $fail
