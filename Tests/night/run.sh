#!/bin/bash
# The night's own logic without Firestore, a container or the emulator (Python's standard library;
# a few seconds): settings, plan, records, snapshots and streams, statuses and files, HTTP against a
# local server, and the night's policy with stand-in steps. Prints one line a test and
# `N passed, M failed` per file; exits non-zero when anything failed.
set -uo pipefail
cd "$(dirname "$0")"
# The suites run at once (most of their time is waiting on processes and sockets); each one's
# lines are printed together when it ends, in order.
out=$(mktemp -d)
trap 'rm -rf -- "$out"' EXIT
# A suite that hangs (a forked stream stuck on a lock) fails at 5 minutes, named, instead of
# holding CI to its end; the slowest takes about 30 s on a loaded machine.
for suite in test_*.py; do
    { timeout --kill-after=10 300 python3 -B "$suite"; code=$?
      ((code != 124)) || echo "$suite: stopped, still running after 300 s (a hang)"; exit $code; } >"$out/$suite.log" 2>&1 &
done
status=0
for suite in test_*.py; do
    wait -n || status=1
done
for suite in test_*.py; do
    echo "# $suite"
    cat -- "$out/$suite.log"
done
exit "$status"
