#!/usr/bin/env bash
# tests/output_checks.sh: output is never lost with exit 0. Every command
# whose standard output cannot be written (here /dev/full: "No space left
# on device") exits 1 with a message; --oplog and --trace naming one file,
# however spelled (an existing file through another path, a symbolic link,
# "-" and /dev/stdout), are refused with exit 2 before either is opened,
# so the file is left as it was.
set -uo pipefail
bin=${CUBESIM_BIN:?CUBESIM_BIN must name the cubesim binary}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0

full_msg="cubesim: error: cannot write the output (standard output): No space left on device"
if [ -w /dev/full ]; then
        for cmd in "run noop" "run noop --json" "kernels" "kernels --brief" "bench list" \
                "topo show" "topo show --format json" "--help" "--version"; do
                # shellcheck disable=SC2086
                "$bin" $cmd >/dev/full 2>"$tmp/err"
                rc=$?
                if [ "$rc" -ne 1 ]; then
                        echo "FAIL: cubesim $cmd >/dev/full: exit $rc, want 1"
                        fail=1
                elif ! grep -qF "$full_msg" "$tmp/err"; then
                        echo "FAIL: cubesim $cmd >/dev/full: no message; stderr:"
                        sed 's/^/    /' "$tmp/err" | head -5
                        fail=1
                elif [ "$(grep -c 'error: ' "$tmp/err")" -ne 1 ]; then
                        echo "FAIL: cubesim $cmd >/dev/full: more than one error line:"
                        sed 's/^/    /' "$tmp/err" | head -5
                        fail=1
                fi
        done
else
        echo "SKIP: /dev/full is not writable here"
fi

# same OPLOG TRACE [STDOUT]: refused with exit 2, the op_log untouched.
same() {
        local out=${3:-/dev/null}
        printf 'keep me\n' >"$tmp/kept"
        "$bin" run noop --oplog "$1" --trace "$2" >"$out" 2>"$tmp/err"
        local rc=$?
        if [ "$rc" -ne 2 ] ||
                ! grep -qF "name the same file: the trace would overwrite the op_log" "$tmp/err"; then
                echo "FAIL: --oplog $1 --trace $2: exit $rc, want 2 with the message; stderr:"
                sed 's/^/    /' "$tmp/err" | head -5
                fail=1
        fi
        if [ "$(cat "$tmp/kept")" != "keep me" ]; then
                echo "FAIL: --oplog $1 --trace $2: the existing file was written"
                fail=1
        fi
}
mkdir -p "$tmp/d"
ln -s ../kept "$tmp/d/link"
ln -s "$tmp/new" "$tmp/dangling"
same "$tmp/kept" "$tmp/kept"
same "$tmp/kept" "$tmp/d/../kept"
same "$tmp/d/link" "$tmp/kept"
same "$tmp/new" "$tmp/d/../new"
same "$tmp/dangling" "$tmp/new"
same - /dev/stdout "$tmp/stdout"
[ ! -e "$tmp/new" ] || { echo "FAIL: a refused run created its output"; fail=1; }

# Two files, or /dev/null for both, are fine.
"$bin" run noop --oplog "$tmp/a" --trace "$tmp/b" >/dev/null || { echo "FAIL: two files refused"; fail=1; }
"$bin" run noop --oplog /dev/null --trace /dev/null >/dev/null ||
        { echo "FAIL: /dev/null for both refused"; fail=1; }

# A rejected run (exit 2) leaves every file it names as it was, and no
# temporary file beside them; a run that succeeds replaces them.
mkdir -p "$tmp/keep/in"
keep() { for f in t.json o.jsonl t.json.gz in/a.npy; do echo "old $f" >"$tmp/keep/$f"; done; }
kept() {  # kept WHAT: every file still holds its old text, nothing else there
        for f in t.json o.jsonl t.json.gz in/a.npy; do
                [ "$(cat "$tmp/keep/$f")" = "old $f" ] || { echo "FAIL: $1 changed $f"; fail=1; }
        done
        [ -z "$(find "$tmp/keep" -name '.*tmp*')" ] || { echo "FAIL: $1 left a temporary file"; fail=1; }
}
for bad in "--trace-pes 64" "--trace-pes 5-2" "--trace-pes x" "--set m=0" \
        "--expect $tmp/keep/none" "--outputs $tmp/keep/t.json"; do
        keep
        # shellcheck disable=SC2086
        "$bin" run gemm --mode data --set m=128 --set n=128 --set k=128 --save-inputs "$tmp/keep/in" --oplog "$tmp/keep/o.jsonl" \
                --trace "$tmp/keep/t.json" $bad >/dev/null 2>&1; rc=$?
        [ $rc -eq 2 ] || { echo "FAIL: run ... $bad: exit $rc, want 2"; fail=1; }
        kept "run ... $bad"
        keep
        # shellcheck disable=SC2086
        "$bin" run noop --trace "$tmp/keep/t.json.gz" $bad >/dev/null 2>&1
        kept "run noop --trace FILE.gz $bad"
done
keep
"$bin" run noop --oplog "$tmp/keep/o.jsonl" --trace "$tmp/keep/t.json" >/dev/null ||
        { echo "FAIL: run noop with existing outputs"; fail=1; }
python3 -m json.tool "$tmp/keep/t.json" >/dev/null 2>&1 || { echo "FAIL: the trace was not replaced"; fail=1; }
[ ! -s "$tmp/keep/o.jsonl" ] || { echo "FAIL: the op_log was not replaced"; fail=1; }

[ $fail -eq 0 ] && echo "output checks: all cases pass"
exit $fail
