#!/bin/bash
# The third-party exporter check (docs/third-party-exports.md): seeds Google's Firestore emulator
# with google-cloud-firestore, exports it with `firestore-backup` from PyPI, runs the documented
# jq command on that output exactly as the documentation spells it, and checks that `rankings
# aggregate` on the result gives the document the client's own reads of rating_events imply.
#
#   Tests/firestore-backup/run.sh [RANKINGS]     default: .build/debug/rankings
#
# Installs jq (apt) when missing, and firestore-backup (which brings google-cloud-firestore) in
# a virtual environment of its own (Tests/packages.sh): $RANKINGS_FIRESTORE_BACKUP_VENV, else
# firestore-backup-venv in the tests' cache (/var/cache/rankings-tests as root, as in CI; else
# .build-firestore). Starts the emulator itself on a free port in 20000-40000 and
# stops its whole process group on exit, unless RANKINGS_TEST_EMULATOR=HOST:PORT names one
# already running (Tests/firestore-loop/emulator.py). Fails (never skips) when gcloud or Java is missing.
# Prints `N passed, M failed` and exits non-zero when anything failed.
set -euo pipefail
cd "$(dirname "$0")/../.."

readonly tool_version=1.0.0
rankings=$(realpath -- "${1:-.build/debug/rankings}")
if [[ ! -x $rankings ]]; then
    echo "Tests/firestore-backup/run.sh: no rankings executable at $rankings (run swift build first)" >&2
    exit 2
fi
command -v gcloud >/dev/null || { echo "Tests/firestore-backup/run.sh: gcloud (google-cloud-cli, with the Firestore emulator) is not installed" >&2; exit 2; }
command -v java >/dev/null || { echo "Tests/firestore-backup/run.sh: java (17 or later, for the Firestore emulator) is not installed" >&2; exit 2; }

# shellcheck source=Tests/packages.sh
source Tests/packages.sh
install_missing jq=jq
venv=$(python_venv "${RANKINGS_FIRESTORE_BACKUP_VENV:-$(test_cache)/firestore-backup-venv}" \
    "import os, sys
from importlib.metadata import version
from google.cloud import firestore
assert os.access(os.path.join(os.path.dirname(sys.executable), 'firestore-backup'), os.X_OK)
assert version('firestore-backup') == '$tool_version'" \
    "firestore-backup==$tool_version")
venv=${venv%/bin/python}

work=$(mktemp -d)
emulator=
stop() {
    if [[ -n $emulator ]]; then
        kill -- "-$emulator" 2>/dev/null || true
        wait "$emulator" 2>/dev/null || true
    fi
    rm -rf -- "$work"
}
trap stop EXIT

if [[ -n ${RANKINGS_TEST_EMULATOR:-} ]]; then
    # An emulator already running (.ci/run's, shared: this suite keeps to its own project).
    port=${RANKINGS_TEST_EMULATOR##*:}
else
    # A port nobody listens on, in the range the helpers of this machine share.
    for _ in $(seq 50); do
        port=$((20000 + RANDOM % 20000))
        ss -ltn "sport = :$port" 2>/dev/null | grep -q LISTEN || break
    done
    setsid gcloud emulators firestore start --host-port="127.0.0.1:$port" >"$work/emulator.log" 2>&1 &
    emulator=$!
    for _ in $(seq 120); do
        grep -q "Dev App Server is now running" "$work/emulator.log" && break
        kill -0 "$emulator" 2>/dev/null || break
        sleep 0.5
    done
    if ! grep -q "Dev App Server is now running" "$work/emulator.log"; then
        echo "Tests/firestore-backup/run.sh: the Firestore emulator did not start on port $port:" >&2
        cat "$work/emulator.log" >&2
        exit 2
    fi
fi

mkdir "$work/run"
"$venv/bin/python" Tests/firestore-backup/check.py "$rankings" "${RANKINGS_TEST_EMULATOR:-127.0.0.1:$port}" "$work/run"
