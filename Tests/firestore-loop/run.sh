#!/bin/bash
# The shipped Firestore hooks against Google's own Firestore emulator, outside any container:
# rankings-fetch-firestore by both methods, then rankings-publish-firestore, the documents read
# back with Google's Python client; every rest night as many documents as Google's client counts
# at its read time; Firestore's answers broken every way faults.py knows (about 6 s of it), a
# token of two lines, and Firestore unreachable: each fails with its status and DIR/current stays
# as it was. Then, on the same emulator, eight incremental nights on 20,000 votes (nights.py).
# The fetch's rankings-fetch.prom after a rest night, each of the eight nights and a failed (69)
# fetch must pass the real `promtool check metrics`. See loop.py and nights.py for the checks.
#
#   Tests/firestore-loop/run.sh [RANKINGS]     default: .build/debug/rankings (built by `swift test`)
#
# Needs `gcloud` with the Firestore emulator component (google-cloud-cli-firestore-emulator) and
# Java; fails when they are missing. Installs promtool (Debian's prometheus) when missing;
# google-cloud-firestore comes from PyPI into the virtual environment Tests/firestore/venv.sh
# makes. About 2 minutes on an idle 2-core machine (over 4 under a heavy load), most of it the
# emulator: its start, seeding, and paging (about 1.5 s a page of 1,000 under load).
# Prints `N passed, M failed` and exits non-zero when anything failed.
set -euo pipefail
cd "$(dirname "$0")/../.."

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
install_missing promtool=prometheus
# shellcheck source=Tests/firestore/venv.sh
source Tests/firestore/venv.sh

exec "$venv/bin/python" Tests/firestore-loop/loop.py "$(realpath -- "$rankings")"
