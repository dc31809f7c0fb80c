# tests/lib/bad_corpus.sh: the shared runner of the bad-input corpora
# (tests/bad/README.md). Source it, then define
#   corpus_run ARGS... TARGET   run the command under test (stdout and
#                               stderr are redirected by the caller)
#   corpus_stdout_bad FILE      true if this stdout shows the input was
#                               taken as good
# and call run_corpus DIR. Each case NAME.yaml states its expectations in
# comment lines, or NAME.expect does when the YAML cannot carry them:
#   # expect: TEXT         stderr contains TEXT (fixed string, any line)
#   # expect-count: N      stderr has exactly N lines containing ": error: "
#   # args: ARGS...        extra arguments before the file
# Counts go to n_cases and n_failed; temporary files to $tmp. cli_case
# checks one command line of the command under test ($bin).

n_cases=0
n_failed=0

fail() {
        echo "FAIL $1: $2"
        n_failed=$((n_failed + 1))
}

# run_case NAME TARGET SPEC: run TARGET and check the expectations in SPEC.
run_case() {
        local name=$1 target=$2 spec=$3
        n_cases=$((n_cases + 1))
        local args=() line want count n_expect=0
        line=$(grep -m1 '^# args: ' "$spec" | sed 's/^# args: //')
        if [ -n "$line" ]; then
                read -r -a args <<<"$line"
        fi
        corpus_run "${args[@]}" "$target" >"$tmp/out" 2>"$tmp/err"
        local rc=$?
        if [ "$rc" -ne 2 ]; then
                fail "$name" "exit status $rc, expected 2"
                sed 's/^/    /' "$tmp/err" | head -20
                return
        fi
        if corpus_stdout_bad "$tmp/out"; then
                fail "$name" "stdout says the input was good"
        fi
        while IFS= read -r want; do
                n_expect=$((n_expect + 1))
                if ! grep -qF -- "$want" "$tmp/err"; then
                        fail "$name" "stderr lacks: $want"
                        sed 's/^/    got: /' "$tmp/err" | head -20
                fi
        done < <(grep '^# expect: ' "$spec" | sed 's/^# expect: //')
        if [ "$n_expect" -eq 0 ]; then
                fail "$name" "states no '# expect:' line"
        fi
        count=$(grep -m1 '^# expect-count: ' "$spec" | sed 's/^# expect-count: //')
        if [ -n "$count" ]; then
                local got
                got=$(grep -c ': error: ' "$tmp/err")
                if [ "$got" -ne "$count" ]; then
                        fail "$name" "$got error lines, expected $count"
                        sed 's/^/    got: /' "$tmp/err" | head -20
                fi
        fi
}

# run_corpus DIR: every DIR/NAME.yaml (with DIR/NAME.expect when there is
# one), then every DIR/NAME.expect without a NAME.yaml (a missing file).
run_corpus() {
        local dir=$1 f e name spec
        for f in "$dir"/*.yaml; do
                name=$(basename "$f" .yaml)
                spec=$f
                [ -f "$dir/$name.expect" ] && spec=$dir/$name.expect
                run_case "$name" "$f" "$spec"
        done
        for e in "$dir"/*.expect; do
                name=$(basename "$e" .expect)
                [ -f "$dir/$name.yaml" ] || run_case "$name" "$dir/$name.yaml" "$e"
        done
}

# cli_case STATUS NEEDLE ARGS...: `$bin ARGS...` exits STATUS and its
# stdout or stderr contains NEEDLE (a fixed string).
cli_case() {  # cli_case STATUS NEEDLE ARGS...
        local want=$1 needle=$2
        shift 2
        n_cases=$((n_cases + 1))
        "$bin" "$@" >"$tmp/out" 2>"$tmp/err"
        local rc=$?
        if [ "$rc" -ne "$want" ]; then
                fail "cubesim $*" "exit status $rc, expected $want"
        elif ! grep -qF -- "$needle" "$tmp/out" "$tmp/err"; then
                fail "cubesim $*" "output lacks: $needle"
        fi
}
