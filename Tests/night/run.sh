#!/bin/bash
# The night's own logic without Firestore, a container or the emulator (Python's standard library;
# a few seconds): settings, plan, records, snapshots and streams, statuses and files, HTTP against a
# local server, and the night's policy with stand-in steps. Prints one line a test and
# `N passed, M failed` per file; exits non-zero when anything failed.
set -uo pipefail
cd "$(dirname "$0")"
status=0
for suite in test_*.py; do
    echo "# $suite"
    python3 -B "$suite" || status=1
done
exit "$status"
