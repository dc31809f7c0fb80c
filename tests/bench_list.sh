#!/usr/bin/env bash
# The README's bench list and `cubesim bench list` name the same benches
# with the same one-line summaries.
set -euo pipefail
bin=${CUBESIM_BIN:?}
src=${CUBESIM_SOURCE_DIR:?}
readme=$(sed -n '/<!-- bench-list/,/<!-- \/bench-list -->/p' "$src/README.md" |
        sed -n 's/^- `\([^`]*\)`: \(.*\)$/\1 \2/p')
listed=$("$bin" bench list | sed 's/  */ /')
if [ "$readme" != "$listed" ]; then
        echo "README bench list and 'cubesim bench list' differ:"
        diff <(echo "$readme") <(echo "$listed") || true
        exit 1
fi
echo "bench list: $(echo "$listed" | wc -l) benches agree"
