#!/bin/bash
# Checks bench/generate-export.py against Google's own reader of managed exports: 2,000 of the
# benchmark's events are written as an export (three output files), Google's Firestore emulator
# imports it, and the documents Google's client then reads back must be the events, field for
# field; our reader (the dump test of Tests/firestore-export) must read the same events.
# Prints `N passed, M failed`.
#
#   bench/check-export-format.sh
set -euo pipefail
cd "$(dirname "$0")/.."
source Tests/firestore-export/emulator.sh

work=$(mktemp -d)
trap 'emulator_stop; rm -rf -- "$work"' EXIT
client=$(firestore_venv)
python3 bench/generate.py --events 2000 --seed 5 >"$work/events.ndjson" 2>/dev/null
python3 bench/generate-export.py "$work/export" --per-file 700 <"$work/events.ndjson"
root=$work/export/firestore_export_bench
emulator_start "$work"
# The emulator's import takes the overall metadata file itself as its "export_directory".
curl -sf -X POST "http://$EMULATOR_HOST/emulator/v1/projects/bench:import" -H 'Content-Type: application/json' \
    -d "{\"database\": \"projects/bench/databases/(default)\", \"export_directory\": \"$root/firestore_export_bench.overall_export_metadata\"}" >/dev/null
RANKINGS_EXPORT_DUMP_IN=$root RANKINGS_EXPORT_DUMP_OUT=$work/ours.ndjson \
    swift test --filter ExportDumpForScript >"$work/swift-test.log" 2>&1 || { cat "$work/swift-test.log" >&2; exit 1; }

FIRESTORE_EMULATOR_HOST=$EMULATOR_HOST "$client" - "$work/events.ndjson" "$work/ours.ndjson" <<'PY'
import datetime, json, sys
from google.auth.credentials import AnonymousCredentials
from google.cloud import firestore

EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)

def micros(seconds, nanos):
    return seconds * 1_000_000 + nanos // 1000

events = {}
for line in open(sys.argv[1]):
    e = json.loads(line)
    events[e["id"]] = {"joke_id": e["joke_id"], "rating": float(e["rating"]), "device_id": e["device_id"],
                       "week_id": e["week_id"], "timestamp_us": micros(e["timestamp"]["_seconds"], e["timestamp"]["_nanoseconds"])}
db = firestore.Client(project="bench", credentials=AnonymousCredentials())
google = {}
for snapshot in db.collection("rating_events").stream():
    d = snapshot.to_dict()
    t = d["timestamp"]
    google[snapshot.id] = {"joke_id": d["joke_id"], "rating": float(d["rating"]), "device_id": d["device_id"],
                           "week_id": d["week_id"], "timestamp_us": (t - EPOCH) // datetime.timedelta(microseconds=1)}
ours = {}
for line in open(sys.argv[2]):
    r = json.loads(line)
    ours[r["id"]] = {k: (float(r[k]) if k == "rating" else r[k]) for k in ("joke_id", "rating", "device_id", "week_id", "timestamp_us")}
passed = failed = 0
for name, got in (("Google's emulator imports the generated export and its client reads", google), ("our reader reads", ours)):
    if got == events:
        passed += 1
        print(f"ok   {name} the {len(events)} events")
    else:
        failed += 1
        diff = [k for k in events if events[k] != got.get(k)][:3]
        print(f"FAIL {name}: {len(got)} documents, {len(events)} events; first differences {[(k, events[k], got.get(k)) for k in diff]}")
print(f"{passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
PY
