#!/bin/bash
# The OCI image of the night (jobs/image.sh) as Cloud Run Jobs and Kubernetes CronJobs run it,
# with podman: built offline from a local Debian base (no registry is reachable from here: a
# bookworm minbase root made with debootstrap, slimmed as debian:bookworm-slim is, and imported
# with `podman import`; see base.sh), then test_image.py runs it against Google's Firestore
# emulator on the host, and test_manifests.py checks the Kubernetes manifest and the Cloud Run
# commands an operator copies (jobs/container/).
#
#   sudo Tests/image/run.sh
#
# Needs root (podman's storage, the state volume's owner), the Debian archive (debootstrap once,
# then the image's apt-get, whose layer podman caches), gcloud with the Firestore emulator and
# Java; installs podman, runc, debootstrap and python3-yaml when missing. Environment:
#   RANKINGS_PREBUILT=     the release binary to put in (default: jobs/build-binary.sh builds it)
#   RANKINGS_IMAGE_BUILD_FLAGS   for `podman build` (default --isolation chroot: this host's
#                          runtime cannot run a build's RUN steps in a container of their own)
#   RANKINGS_PODMAN_RUN_FLAGS    for `podman run` (default --runtime runc and explicit ulimits:
#                          crun cannot use this host's hybrid cgroups, and root here has no
#                          CAP_SYS_RESOURCE to raise podman's default limits)
#   RANKINGS_IMAGE_CACHE   where the base's tar is kept (default /var/cache/rankings-image)
# About 1.5 minutes with the base and the build's layers cached. Prints one line a test and
# `N passed, M failed` per suite; exits non-zero when anything failed.
set -euo pipefail
cd "$(dirname "$0")/../.."

if ((EUID != 0)); then
    echo "Tests/image/run.sh must run as root (podman's storage, the volume's owner)" >&2
    exit 77
fi
# shellcheck source=Tests/firestore/suite.sh
source Tests/firestore/suite.sh
emulator_suite image
# test_image.py freezes its emulator mid-night (a stop while the fetch waits): never one that
# other suites share (Tests/firestore-loop/emulator.py).
unset RANKINGS_TEST_EMULATOR
# shellcheck source=Tests/packages.sh
source Tests/packages.sh
install_missing podman=podman runc=runc debootstrap=debootstrap /usr/lib/python3/dist-packages/yaml=python3-yaml
# shellcheck source=Tests/firestore/venv.sh
source Tests/firestore/venv.sh
# shellcheck source=Tests/image/base.sh
source Tests/image/base.sh

base=$(image_base)
binary=${RANKINGS_PREBUILT:-$(jobs/build-binary.sh)}
read -r -a build_flags <<<"${RANKINGS_IMAGE_BUILD_FLAGS:---isolation chroot}"
build_log=$(mktemp)
trap 'rm -f -- "$build_log"' EXIT
if ! image=$(BASE=$base RANKINGS_PREBUILT=$binary jobs/image.sh "${build_flags[@]}" 2>"$build_log"); then
    tail -n 40 -- "$build_log" >&2
    echo "Tests/image/run.sh: jobs/image.sh failed" >&2
    exit 1
fi
echo "# $(tail -n 1 -- "$build_log")"

status=0
echo "# test_manifests.py"
python3 -B Tests/image/test_manifests.py || status=1
echo "# test_image.py ($image on $base)"
IMAGE=$image BASE=$base BINARY=$binary "$venv/bin/python" -B Tests/image/test_image.py || status=1
exit "$status"
