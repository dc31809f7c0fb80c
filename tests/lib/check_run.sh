# tests/lib/check_run.sh: what tests/cli_bad.sh and tests/kernel_faults.sh
# share: reading a case's directives (parse_case), checking one command run
# against them (check_run), and counting the case's verdict (verdict).

# parse_case FILE MARK STATUS: the directives of a case, lines beginning
# with MARK and a space (`#` or `//`), into args_line, expects[], count,
# status (STATUS unless stated), why (xfail), copies[], envs[], limit
# (ulimit-v), cflags_line, and at: the line of the first `/* FAULT */`
# marker (? if none). Bash only: a fork costs more than a run.
parse_case() {
        local line m="$2 " n=0
        args_line= count= status=$3 limit= why= cflags_line= at=? case_mark=$2
        expects=() copies=() envs=()
        while IFS= read -r line || [ -n "$line" ]; do
                n=$((n + 1))
                case $line in
                "${m}args: "*) args_line=${line#"${m}args: "} ;;
                "${m}expect: "*) expects+=("${line#"${m}expect: "}") ;;
                "${m}expect-count: "*) count=${line#"${m}expect-count: "} ;;
                "${m}status: "*) status=${line#"${m}status: "} ;;
                "${m}copy: "*) copies+=("${line#"${m}copy: "}") ;;
                "${m}env: "*) envs+=("${line#"${m}env: "}") ;;
                "${m}ulimit-v: "*) limit=${line#"${m}ulimit-v: "} ;;
                "${m}cflags: "*) cflags_line=${line#"${m}cflags: "} ;;
                "${m}xfail: "*) why=${line#"${m}xfail: "} ;;
                *"/* FAULT */"*) [ "$at" = "?" ] && at=$n ;;
                esac
        done <"$1"
}

# check_run DIR RC TOKEN VALUE: DIR/out and DIR/err of a run that exited
# RC, against the case parse_case read; TOKEN in an expected text stands
# for VALUE. The problems found, one per line, go into problems (empty if
# none).
check_run() {
        local dir=$1 rc=$2 token=$3 value=$4 mark=$case_mark out err want n=0 line
        problems=
        out=$(<"$dir/out")
        err=$(<"$dir/err")
        [ "$rc" -eq "$status" ] || problems+="exit status $rc, expected $status"$'\n'
        case $err in
        *AddressSanitizer* | *LeakSanitizer* | *"runtime error:"*)
                problems+="a sanitizer report"$'\n' ;;
        esac
        for want in "${expects[@]}"; do
                want=${want//"$token"/$value}
                [[ $out == *"$want"* || $err == *"$want"* ]] || problems+="output lacks: $want"$'\n'
        done
        [ ${#expects[@]} -gt 0 ] || problems+="states no '$mark expect:' line"$'\n'
        if [ -n "$count" ]; then
                while IFS= read -r line; do
                        [[ $line == *"error: "* ]] && n=$((n + 1))
                done <<<"$err"
                [ "$n" -eq "$count" ] || problems+="$n error lines, expected $count"$'\n'
        fi
}

# verdict NAME WHAT DIR: count the case NAME after check_run, in n_failed
# or n_xfail: a failure prints its problems, WHAT (the command line) and
# the start of DIR/out and DIR/err; an xfail case must still fail.
verdict() {
        local name=$1 what=$2 dir=$3
        if [ -n "$why" ]; then
                if [ -n "$problems" ]; then
                        echo "XFAIL $name: $why"
                        n_xfail=$((n_xfail + 1))
                else
                        echo "FAIL $name: passes now; remove its '$case_mark xfail:' line"
                        n_failed=$((n_failed + 1))
                fi
        elif [ -n "$problems" ]; then
                echo "FAIL $name ($what):"
                printf '%s' "$problems" | sed 's/^/    /'
                sed 's/^/    got: /' "$dir/out" "$dir/err" | head -12
                n_failed=$((n_failed + 1))
        fi
}
