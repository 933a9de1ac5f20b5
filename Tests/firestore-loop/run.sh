#!/bin/bash
# The night's loop against Google's own Firestore emulator, outside any container (each suite
# starts an emulator of its own, or all share RANKINGS_TEST_EMULATOR's):
#   test_nights.py       eight nights on 5,000 votes fetched (fetch.run) into one DIR, each
#                        incremental one's document against the collection as written, the blind
#                        spot COUNT cannot see and the full read due by days that heals it; a
#                        full read at 8 streams byte for byte one stream's
#   test_night_run.py    `rankings-night run --environment` with the 30-day board on, Firestore
#                        behind faults.py's proxy: one fetch a night (counted at the proxy), both
#                        boards from its one snapshot at its readTime, proven, published and read
#                        back with Google's client; the one metrics file through promtool
#   test_baseline.py     nights without a volume guard the board by Firestore's; overlapping
#                        nights leave the newer board, whichever publishes last
#   test_board_proof.py  nights in a row proving their boards: a deletion and a late vote the
#                        incremental night cannot see, a snapshot changed behind its back, read
#                        whole; an index missing: read whole and published unproven
# The steps one at a time (broken answers, proofs, night folders): Tests/firestore-steps.
#
#   Tests/firestore-loop/run.sh [RANKINGS]     default: .build/debug/rankings (built by `swift test`)
#
# Needs `gcloud` with the Firestore emulator component (google-cloud-cli-firestore-emulator) and
# Java; fails when they are missing. Installs promtool (Debian's prometheus) when missing;
# google-cloud-firestore comes from PyPI into the virtual environment Tests/firestore/venv.sh
# makes. Most of its time is the emulator paging and counting.
# Prints one line a test and `N passed, M failed` per suite; exits non-zero when anything failed.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 2

# shellcheck source=Tests/firestore/suite.sh
source Tests/firestore/suite.sh
firestore_suite firestore-loop "${1:-.build/debug/rankings}"
# shellcheck source=Tests/packages.sh
source Tests/packages.sh
install_missing promtool=prometheus || exit 2
status=0
for suite in test_nights.py test_night_run.py test_baseline.py test_board_proof.py; do
    echo "# $suite"
    "$venv/bin/python" -B "Tests/firestore-loop/$suite" || status=1
done
exit "$status"
