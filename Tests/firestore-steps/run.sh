#!/bin/bash
# The night's fetch, proof and publish one at a time against Google's Firestore emulator, in the
# test's own process (fetch.run, publish.publish on the night's Firestore client) or as the whole
# night (`rankings-night run`) where the lock, root or a signal is what is tested:
#   test_folders.py            the fetch's night folders and the night's one lock: root refused, a
#                              second night refused, current checked first, a stopped or killed
#                              night's partial folder, the try's deadline, clean-up that leaves
#                              alone what it did not make, unique names, a full disk (as root)
#   test_fetch_and_publish.py  the sample's goldens from a night and from the emulator's own
#                              export, publish read back with Google's client, Firestore's answers
#                              broken every way faults.py knows, votes written while paging,
#                              Firestore gone
#   test_proofs.py             what each must prove: an incremental answer cut or refused, a
#                              snapshot changed on disk, a damaged record -> a full read with the
#                              reason; a wrong project -> 65; a publish answered with anything but
#                              the document sent, or redirected -> 69
#   test_prove.py              the boards' proof: the real job's --stats and --report (its refused
#                              documents) against the emulator's COUNTs at the snapshot's readTime,
#                              proven, a vote altered named, the 30-day window to the microsecond;
#                              the probe naming each index Firestore refuses for
#   test_client.py             the night's Firestore client alone: a commit with an exists or
#                              updateTime precondition, met and not, and get_document of none
# The logic alone is Tests/night; nights in a chain and whole nights are Tests/firestore-loop.
#
#   Tests/firestore-steps/run.sh [RANKINGS]     default: .build/debug/rankings
#
# Needs gcloud's Firestore emulator and Java like Tests/firestore-loop/run.sh, and installs what
# it installs. Prints one line a test and `N passed, M failed` per suite; exits non-zero when
# anything failed.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 2

# shellcheck source=Tests/firestore/suite.sh
source Tests/firestore/suite.sh
firestore_suite firestore-steps "${1:-.build/debug/rankings}"
# shellcheck source=Tests/packages.sh
source Tests/packages.sh
install_missing promtool=prometheus || exit 2
status=0
for suite in test_folders.py test_fetch_and_publish.py test_proofs.py test_prove.py test_client.py; do
    echo "# $suite"
    "$venv/bin/python" -B "Tests/firestore-steps/$suite" || status=1
done
exit "$status"
