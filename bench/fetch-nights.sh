#!/bin/bash
# What a night costs against Google's Firestore emulator: a full night and an incremental night
# after 1 % new or changed votes, each a whole `rankings-night run` (fetch, job, proof, publish),
# with documents read (see fetch-nights.py). Needs gcloud's Firestore emulator and Java, like
# Tests/firestore-loop.
#
#   bench/fetch-nights.sh [--votes 100000] [--rounds 3]
set -euo pipefail
cd "$(dirname "$0")/.."
swift build -c release --product rankings >&2
# shellcheck source=Tests/firestore/venv.sh
source Tests/firestore/venv.sh
exec "$venv/bin/python" bench/fetch-nights.py "$(realpath .build/release/rankings)" "$@"
