# shellcheck shell=bash
# Sourced by the shell test scripts that count their own checks (Tests/docs, Tests/metrics):
#   check NAME COMMAND...   runs COMMAND; counts it passed, or failed with "FAIL: NAME" on stderr
#   finish                  prints `N passed, M failed`; its status is non-zero if any failed
# The scripts run with `set -u` and without `set -e`, so a failing check does not stop the rest.
passed=0 failed=0
check() {
    local name=$1
    shift
    if "$@"; then
        passed=$((passed + 1))
    else
        failed=$((failed + 1))
        echo "FAIL: $name" >&2
    fi
}
finish() {
    echo "$passed passed, $failed failed"
    ((failed == 0))
}
