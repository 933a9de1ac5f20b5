# shellcheck shell=bash
# Sourced by the scripts that talk to Firestore's own Python client: sets `venv` to a virtual
# environment holding google-cloud-firestore $firestore_client_version, made when missing or when
# it does not import that version (Tests/packages.sh): $RANKINGS_FIRESTORE_VENV, else
# firestore-venv in the tests' cache (/var/cache/rankings-tests as root, as in CI; else
# .build-firestore in the checkout). Exits 2 when it cannot be made.

# shellcheck source=Tests/packages.sh
source "$(dirname -- "${BASH_SOURCE[0]}")/../packages.sh"
firestore_client_version=2.34.1
venv=$(python_venv "${RANKINGS_FIRESTORE_VENV:-$(test_cache)/firestore-venv}" \
    "from importlib.metadata import version
from google.cloud import firestore
from google.cloud.firestore_v1.types import Document
assert version('google-cloud-firestore') == '$firestore_client_version'" \
    "google-cloud-firestore==$firestore_client_version") || exit 2
venv=${venv%/bin/python}
