#!/bin/bash
# The real check of `rankings aggregate --format firestore`: Google's own Firestore types
# (google.cloud.firestore_v1.types.Document.from_json, from PyPI's google-cloud-firestore)
# must parse every body the tool writes, and the parsed values must equal the JSON document's.
#
#   Tests/firestore/run.sh [RANKINGS]     default: .build/debug/rankings (built by `swift test`)
#
# The package goes into a virtual environment of its own, never the system Python, made by
# Tests/firestore/venv.sh (which says where) and reused while it imports the pinned version.
# Prints `N passed, M failed` and exits non-zero when anything failed.
set -euo pipefail
cd "$(dirname "$0")/../.."

rankings=${1:-.build/debug/rankings}
if [[ ! -x $rankings ]]; then
    echo "Tests/firestore/run.sh: no rankings executable at $rankings (run swift build first)" >&2
    exit 2
fi

# shellcheck source=Tests/firestore/venv.sh
source Tests/firestore/venv.sh

exec "$venv/bin/python" Tests/firestore/check_bodies.py "$rankings"
