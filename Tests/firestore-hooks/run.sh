#!/bin/bash
# The night's two Firestore hooks one at a time, as processes:
#   nights.py                  the fetch's night folders without Firestore: the lock, root
#                              refused, current checked first, a stopped or killed run's partial
#                              folder, the deadline, clean-up that leaves alone what it did not
#                              make, unique names, a full disk (all of it as root; a few seconds)
#   test_fetch_and_publish.py  against Google's Firestore emulator: the rest and export methods,
#                              the sample's goldens from both, publish read back with Google's
#                              client, Firestore's answers broken every way faults.py knows, votes
#                              written while paging, a token through RANKINGS_FIRESTORE_ENDPOINT,
#                              a token of two lines, missing or unknown settings, Firestore gone
#   test_proofs.py             what each must prove: an incremental answer cut or refused, a
#                              snapshot changed on disk, a damaged record -> a full read with the
#                              reason; a wrong project -> 65; a publish answered with anything but
#                              the document sent, or redirected -> 69
#   test_client.py             the night's Firestore client alone: a commit with an exists or
#                              updateTime precondition, met and not, and get_document of none
# The logic alone is Tests/night; nights in a chain and the whole night are Tests/firestore-loop.
#
#   Tests/firestore-hooks/run.sh [RANKINGS]     default: .build/debug/rankings
#
# Needs gcloud's Firestore emulator and Java like Tests/firestore-loop/run.sh, and installs what
# it installs. About 2.5 minutes on an idle 2-core machine. Prints one line a test and
# `N passed, M failed` per suite; exits non-zero when anything failed.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 2

rankings=${1:-.build/debug/rankings}
if [[ ! -x $rankings ]]; then
    echo "Tests/firestore-hooks/run.sh: no rankings executable at $rankings (run swift build first)" >&2
    exit 2
fi
for tool in gcloud java; do
    if ! command -v "$tool" >/dev/null; then
        echo "Tests/firestore-hooks/run.sh: $tool is missing (Google's Firestore emulator needs gcloud and Java)" >&2
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
for suite in nights.py test_fetch_and_publish.py test_proofs.py test_client.py; do
    echo "# $suite"
    "$venv/bin/python" -B "Tests/firestore-hooks/$suite" || status=1
done
exit "$status"
