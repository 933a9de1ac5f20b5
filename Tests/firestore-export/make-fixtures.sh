#!/bin/bash
# Remakes the committed emulator-made managed export, Tests/fixtures/firestore-export/emulator/:
# starts Google's Firestore emulator, seeds it with seed.py (votes the way the app writes them,
# and everything an export holds that is not a vote), asks it for an export, and copies the
# export with what the client's own view implies (expected.ndjson) into the fixtures.
#
#   Tests/firestore-export/make-fixtures.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
source Tests/firestore-export/emulator.sh

work=$(mktemp -d)
trap 'emulator_stop; rm -rf -- "$work"' EXIT
python=$(firestore_venv)
emulator_start "$work"
"$python" Tests/firestore-export/seed.py "$EMULATOR_HOST" rankings-fixture "$work/made" >/dev/null

target=Tests/fixtures/firestore-export/emulator
rm -rf -- "$target"
mkdir -p -- "$target"
cp -r -- "$work"/made/all/firestore_export_* "$target/"
cp -- "$work/made/expected.ndjson" "$work/made/expected-left-out" "$target/"
find "$target" -type f | sort | xargs ls -l
