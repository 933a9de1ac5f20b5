#!/bin/bash
# The night's loop against Google's own Firestore emulator, outside any container (each suite
# starts an emulator of its own):
#   test_nights.py     eight nights on 5,000 votes fetched into one DIR, each incremental one's
#                      document against the collection as written, the drift a full night finds
#                      (a full read due by days since the last one), the 30-day window at the
#                      source, a vote at its very start; rankings-fetch.prom through promtool
#   test_night_run.py  `rankings-night run --config` with the 30-day board on, Firestore behind
#                      faults.py's proxy as behind Google's API: one fetch a night (counted at the
#                      proxy), both boards from its one snapshot, published and read back with
#                      Google's client; rankings-night.prom and rankings-fetch.prom through promtool
#   test_proof.py      the board's proof (proof.py): the real job's --stats of a fetched snapshot
#                      against the emulator's COUNTs at its readTime; an altered vote named
# The hooks one at a time (broken answers, proofs, tokens, night folders): Tests/firestore-hooks.
#
#   Tests/firestore-loop/run.sh [RANKINGS]     default: .build/debug/rankings (built by `swift test`)
#
# Needs `gcloud` with the Firestore emulator component (google-cloud-cli-firestore-emulator) and
# Java; fails when they are missing. Installs promtool (Debian's prometheus) when missing;
# google-cloud-firestore comes from PyPI into the virtual environment Tests/firestore/venv.sh
# makes. About 2 minutes on an idle 2-core machine, most of it the emulator paging.
# Prints one line a test and `N passed, M failed` per suite; exits non-zero when anything failed.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 2

rankings=${1:-.build/debug/rankings}
if [[ ! -x $rankings ]]; then
    echo "Tests/firestore-loop/run.sh: no rankings executable at $rankings (run swift build first)" >&2
    exit 2
fi
for tool in gcloud java; do
    if ! command -v "$tool" >/dev/null; then
        echo "Tests/firestore-loop/run.sh: $tool is missing (Google's Firestore emulator needs gcloud and Java)" >&2
        exit 2
    fi
done

# shellcheck source=Tests/packages.sh
source Tests/packages.sh
install_missing promtool=prometheus || exit 2
# shellcheck source=Tests/firestore/venv.sh
source Tests/firestore/venv.sh

export TEST_RANKINGS
TEST_RANKINGS=$(realpath -- "$rankings")
status=0
for suite in test_nights.py test_night_run.py test_baseline.py test_proof.py test_board_proof.py; do
    echo "# $suite"
    "$venv/bin/python" -B "Tests/firestore-loop/$suite" || status=1
done
exit "$status"
