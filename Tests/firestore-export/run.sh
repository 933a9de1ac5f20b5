#!/bin/bash
# Our reader of managed exports against the real thing: starts Google's Firestore emulator,
# seeds it the way the app writes votes (plus everything that is not a vote, and enough votes
# for several output files), exports it, reads the export with RankingsKit, and holds that to
# leveldb-export (PyPI, an independent reader) record for record and to Google's client's own
# view of the collection (compare.py); then damages copies of the export (an output file
# emptied, cut or replaced, a file listed twice or outside the export, empty metadata, a FIFO in
# each of three places) and holds `rankings aggregate` to each outcome (damage.py). (The log's
# damage catalogue runs in swift test, on the committed emulator-made fixture: LogDamageTests.)
#
#   Tests/firestore-export/run.sh
#
# Needs gcloud with the Firestore emulator and Java (the machine's google-cloud-cli packages):
# fails, never skips, without them. RANKINGS_TEST_EMULATOR=HOST:PORT names an emulator already
# running to seed and export instead of starting one (Tests/firestore-loop/emulator.py). Two virtual environments under /var/cache/rankings-tests
# (or .build-firestore): google-cloud-firestore, and leveldb-export (which pins protobuf 3).
# Prints `N passed, M failed`; about a minute (most of it the emulator and seeding).
set -euo pipefail
cd "$(dirname "$0")/../.."
source Tests/firestore-export/emulator.sh

readonly votes=12000
work=$(mktemp -d)
trap 'emulator_stop; rm -rf -- "$work"' EXIT
client=$(firestore_venv)
oracle=$(leveldb_export_venv)
if [[ -n ${RANKINGS_TEST_EMULATOR:-} ]]; then
    # An emulator already running (.ci/run's, shared: the export names this suite's project only).
    EMULATOR_HOST=$RANKINGS_TEST_EMULATOR
else
    emulator_start "$work"
fi
"$client" Tests/firestore-export/seed.py "$EMULATOR_HOST" rankings-export-test "$work/made" "$votes" >/dev/null
emulator_stop
root=$(echo "$work"/made/all/firestore_export_*)

swift build --product rankings >"$work/swift-build.log" 2>&1 || { cat "$work/swift-build.log" >&2; exit 1; }
rankings=$(swift build --show-bin-path)/rankings
RANKINGS_EXPORT_DUMP_IN=$root RANKINGS_EXPORT_DUMP_OUT=$work/ours.ndjson \
    swift test --filter ExportDumpForScript >"$work/swift-test.log" 2>&1 || { cat "$work/swift-test.log" >&2; exit 1; }
if [[ ! -s $work/ours.ndjson ]]; then
    echo "Tests/firestore-export/run.sh: the dump test wrote nothing (RANKINGS_EXPORT_DUMP_* not seen?)" >&2
    exit 1
fi
exec "$oracle" Tests/firestore-export/compare.py "$work/ours.ndjson" "$root" "$work/made/expected.ndjson" \
    "$work/made/expected-left-out" "$rankings"
