# shellcheck shell=bash
# Sourced by the scripts that talk to Firestore's own Python client: sets `venv` to a virtual
# environment holding google-cloud-firestore $firestore_client_version, made when missing.
# $RANKINGS_FIRESTORE_VENV, else /var/cache/rankings-tests/firestore-venv when that is writable
# (root, as in CI), else .build-firestore/venv in the checkout (git-ignored). An existing one is
# reused when it imports the pinned version; otherwise it is made afresh.

readonly firestore_client_version=2.34.1

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

firestore_venv_valid() {
    [[ -x $venv/bin/python ]] && "$venv/bin/python" - "$firestore_client_version" <<'PY' 2>/dev/null
import sys
from importlib.metadata import version
from google.cloud.firestore_v1.types import Document  # noqa: F401
sys.exit(version("google-cloud-firestore") != sys.argv[1])
PY
}

if ! firestore_venv_valid; then
    echo "installing google-cloud-firestore==$firestore_client_version into $venv"
    rm -rf -- "$venv"
    mkdir -p -- "$(dirname -- "$venv")"
    python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet --disable-pip-version-check --no-input "google-cloud-firestore==$firestore_client_version"
    firestore_venv_valid || { echo "$venv does not import google-cloud-firestore $firestore_client_version" >&2; exit 2; }
fi
