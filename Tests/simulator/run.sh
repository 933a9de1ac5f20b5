#!/bin/bash
# The Firestore simulator's suites: test_limits.py (the simulator alone: production's limits as
# configured, what it served, partitionQuery, ten million votes, the command; a few seconds),
# test_agreement.py (the simulator against Google's Firestore emulator, which the test starts,
# seeds over its REST API and stops, or RANKINGS_TEST_EMULATOR's; most of it the emulator's
# start), and test_fetch.py (the night's fetch, fetch.run in the test's process, under the
# limits, scaled: readTime's life, COUNT's deadline, 429 bursts, ranges where partitionQuery
# cuts, an incremental night at scale). Python's standard library only; they read boards
# with `rankings aggregate`.
#
#   Tests/simulator/run.sh [RANKINGS]     default: .build/debug/rankings
#
# Needs `gcloud` with the Firestore emulator component and Java; fails when they are missing.
# Prints one line a test and `N passed, M failed` per file; exits non-zero when anything failed.
set -uo pipefail
cd "$(dirname "$0")/../.."

rankings=${1:-.build/debug/rankings}
# shellcheck source=Tests/firestore/suite.sh
source Tests/firestore/suite.sh
emulator_suite simulator "$rankings"
export SIMULATOR_RANKINGS RANKINGS
SIMULATOR_RANKINGS=$(realpath -- "$rankings")
RANKINGS=$SIMULATOR_RANKINGS

status=0
for suite in test_limits.py test_agreement.py test_fetch.py; do
    echo "# $suite"
    python3 -B "Tests/simulator/$suite" || status=1
done
exit "$status"
