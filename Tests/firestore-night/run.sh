#!/bin/bash
# The 0.5 night's acceptance (issues 48 and 49) against Google's Firestore emulator: the real
# `rankings-night run` with the real job, every call through Tests/firestore-loop/faults.py's
# proxy, each test in a Firestore project and a state directory of its own:
#   test_refused.py     0.4 modes 0.5 removed (78 naming what to write), a FIFO where the night
#                       writes (73 at once), a relative state directory (78), --config twice (64):
#                       nothing asked of Firestore, weekly_rankings/all_time untouched
#   test_compat.py      0.4 configurations whose meaning is unchanged: one WARNING naming the lines,
#                       and the board published; `run -- --max-drop 100` accepts a drop once
#   test_app_document.py  what the app's document holds decides nothing: a snapshot_read_time in
#                       2099, an empty document, totals stored as doubles
#   test_clock.py       the machine's clock two days off in the night's process only: Firestore's
#                       readTime names the boards, and a WARNING says so
#   test_votes.py       malformed votes left out, named, counted and proven; past 1 %: 65
#   test_index.py       an index missing: a full read, published unproven, status and metric say so;
#                       `plan` names every index
#   test_stop.py        SIGTERM while the proof's COUNTs are held: nothing published, 143, said so
#   test_read_time.py   20,000 votes read within a readTime that lives 8 s of Firestore's time at the proxy
#
#   Tests/firestore-night/run.sh [RANKINGS]     default: .build/debug/rankings
#
# Takes the emulator .ci/run shares (RANKINGS_TEST_EMULATOR=HOST:PORT), else starts one for the
# whole run. Needs gcloud's Firestore emulator and Java; google-cloud-firestore comes from PyPI
# into the virtual environment Tests/firestore/venv.sh makes. Prints one line a test and
# `N passed, M failed` per file; exits non-zero when anything failed. About 1.5 minutes on the
# shared emulator (40 s of them the 20,000 votes), 2.5 with the machine's 2 cores fully loaded.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 2

# shellcheck source=Tests/firestore/suite.sh
source Tests/firestore/suite.sh
firestore_suite firestore-night "${1:-.build/debug/rankings}"
if [[ -z ${RANKINGS_TEST_EMULATOR:-} ]]; then
    # shellcheck source=Tests/firestore-export/emulator.sh
    source Tests/firestore-export/emulator.sh
    logs=$(mktemp -d)
    trap 'emulator_stop; rm -rf "$logs"' EXIT
    emulator_start "$logs" || exit 2
    export RANKINGS_TEST_EMULATOR=$EMULATOR_HOST
fi
status=0
for suite in test_refused.py test_compat.py test_app_document.py test_clock.py test_votes.py test_index.py \
    test_stop.py test_read_time.py; do
    echo "# $suite"
    "$venv/bin/python" -B "Tests/firestore-night/$suite" || status=1
done
exit "$status"
