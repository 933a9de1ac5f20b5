#!/bin/bash
# The Firestore hooks' own parts, without the emulator or the network (Python's unittest, the
# standard library only; a few seconds): answers judged whole or broken, value order, the token's
# form and redaction, one log line per message, a command killed with its process group, a call
# cut off at its whole-time limit by a local server, a full disk (/dev/full) while writing.
# Prints unittest's summary and `N passed, M failed`; exits non-zero when anything failed.
set -uo pipefail
cd "$(dirname "$0")"

output=$(python3 -B -m unittest -v test_hooks test_snapshot 2>&1)
status=$?
printf '%s\n' "$output" | grep -v ' \.\.\. ok$'
passed=$(printf '%s\n' "$output" | grep -c ' \.\.\. ok$')
failed=$(printf '%s\n' "$output" | grep -cE ' \.\.\. (FAIL|ERROR)$')
echo "$passed passed, $failed failed"
exit "$status"
