# tests/lib/check_run.sh: the checks of one command run against a case's
# expectations, shared by tests/cli_bad.sh and tests/kernel_faults.sh.
# The caller has parsed the case into: status (expected exit status),
# expects (array of texts the output must contain), count (expected number
# of "error: " lines, or empty).

# check_run DIR RC TOKEN VALUE MARK: DIR/out and DIR/err of a run that
# exited RC; TOKEN in an expected text stands for VALUE; MARK is the case
# files' comment leader (for the message). The problems found, one per
# line, go into problems (empty if none).
check_run() {
        local dir=$1 rc=$2 token=$3 value=$4 mark=$5 out err want n=0 line
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
