#!/bin/bash
# The real check of `rankings aggregate --format firestore`: Google's own Firestore types
# (google.cloud.firestore_v1.types.Document.from_json, from PyPI's google-cloud-firestore)
# must parse every body the tool writes, and the parsed values must equal the JSON document's.
#
#   Tests/firestore/run.sh [RANKINGS]     default: .build/debug/rankings (built by `swift test`)
#
# The package goes into a virtual environment of its own, never the system Python:
# $RANKINGS_FIRESTORE_VENV, else /var/cache/rankings-tests/firestore-venv when that is
# writable (root, as in CI), else .build-firestore/venv in the checkout (git-ignored). An
# existing one is reused when it imports the pinned version; otherwise it is made afresh.
# Prints `N passed, M failed` and exits non-zero when anything failed.
set -euo pipefail
cd "$(dirname "$0")/../.."

readonly version=2.34.1
rankings=${1:-.build/debug/rankings}
if [[ ! -x $rankings ]]; then
    echo "Tests/firestore/run.sh: no rankings executable at $rankings (run swift build first)" >&2
    exit 2
fi

# Debian splits venv (with ensurepip) out of python3.
if ! command -v python3 >/dev/null || ! python3 -c 'import ensurepip, venv' 2>/dev/null; then
    apt-get update
    DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends python3 python3-venv
fi

if [[ -n ${RANKINGS_FIRESTORE_VENV:-} ]]; then
    venv=$RANKINGS_FIRESTORE_VENV
elif mkdir -p /var/cache/rankings-tests 2>/dev/null && [[ -w /var/cache/rankings-tests ]]; then
    venv=/var/cache/rankings-tests/firestore-venv
else
    venv=.build-firestore/venv
fi

valid() {
    [[ -x $venv/bin/python ]] && "$venv/bin/python" - "$version" <<'PY' 2>/dev/null
import sys
from importlib.metadata import version
from google.cloud.firestore_v1.types import Document  # noqa: F401
sys.exit(version("google-cloud-firestore") != sys.argv[1])
PY
}

if ! valid; then
    echo "Tests/firestore/run.sh: installing google-cloud-firestore==$version into $venv"
    rm -rf -- "$venv"
    mkdir -p -- "$(dirname -- "$venv")"
    python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet --disable-pip-version-check --no-input "google-cloud-firestore==$version"
    valid || { echo "Tests/firestore/run.sh: $venv does not import google-cloud-firestore $version" >&2; exit 2; }
fi

exec "$venv/bin/python" Tests/firestore/check_bodies.py "$rankings"
