#!/bin/bash
# The third-party exporter check (docs/third-party-exports.md): seeds Google's Firestore emulator
# with google-cloud-firestore, exports it with `firestore-backup` from PyPI, runs the documented
# jq command on that output exactly as the documentation spells it, and checks that `rankings
# aggregate` on the result gives the document the client's own reads of rating_events imply.
#
#   Tests/firestore-backup/run.sh [RANKINGS]     default: .build/debug/rankings
#
# Installs jq (apt) when missing, and firestore-backup (which brings google-cloud-firestore) in
# a virtual environment of its own: $RANKINGS_FIRESTORE_BACKUP_VENV, else
# /var/cache/rankings-tests/firestore-backup-venv when writable, else
# .build-firestore/backup-venv. Starts the emulator itself on a free port in 20000-40000 and
# stops its whole process group on exit. Fails (never skips) when gcloud or Java is missing.
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

packages=()
command -v jq >/dev/null || packages+=(jq)
command -v python3 >/dev/null && python3 -c 'import ensurepip, venv' 2>/dev/null || packages+=(python3 python3-venv)
if ((${#packages[@]})); then
    apt-get update
    DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${packages[@]}"
fi

if [[ -n ${RANKINGS_FIRESTORE_BACKUP_VENV:-} ]]; then
    venv=$RANKINGS_FIRESTORE_BACKUP_VENV
elif mkdir -p /var/cache/rankings-tests 2>/dev/null && [[ -w /var/cache/rankings-tests ]]; then
    venv=/var/cache/rankings-tests/firestore-backup-venv
else
    venv=.build-firestore/backup-venv
fi
valid() {
    [[ -x $venv/bin/firestore-backup ]] && "$venv/bin/python" - "$tool_version" <<'PY' 2>/dev/null
import sys
from importlib.metadata import version
from google.cloud import firestore  # noqa: F401
sys.exit(version("firestore-backup") != sys.argv[1])
PY
}
if ! valid; then
    echo "Tests/firestore-backup/run.sh: installing firestore-backup==$tool_version into $venv"
    rm -rf -- "$venv"
    mkdir -p -- "$(dirname -- "$venv")"
    python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet --disable-pip-version-check --no-input "firestore-backup==$tool_version"
    valid || { echo "Tests/firestore-backup/run.sh: $venv has no working firestore-backup $tool_version" >&2; exit 2; }
fi

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

mkdir "$work/run"
"$venv/bin/python" Tests/firestore-backup/check.py "$rankings" "127.0.0.1:$port" "$work/run"
