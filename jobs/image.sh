#!/bin/bash
# Builds the OCI image of the rankings night for Cloud Run Jobs and Kubernetes CronJobs, tagged
# NAME:VERSION (VERSION: the binary's `rankings --version`), and prints that name. Inside: the
# release binary (jobs/build-binary.sh) and the night's programs laid out by jobs/install.sh with
# the Debian package's paths, on a Debian base with python3 from Debian; no /etc/rankings.conf,
# units or cron entry (the settings come from the environment, and the image sets none of them).
# docs/containers.md runs it.
#
#   jobs/image.sh [BUILD-OPTION...]    BUILD-OPTIONs go to `podman build` / `docker build`
#                                      (--isolation chroot where the host needs it)
#
# Environment:
#   BASE=docker.io/library/debian:bookworm-slim
#                               the Debian image to build on (bookworm, as the package)
#   NAME=rankings               the image's name, e.g. REGION-docker.pkg.dev/PROJECT/REPO/rankings
#   ENGINE=                     podman or docker; default: docker when its daemon answers, else podman
#   RANKINGS_PREBUILT=          put this binary in instead of building one
#   RANKINGS_WITHOUT_ISAL=1     accept a binary built without ISA-L's header (zlib only); without
#                               it such a binary is refused (69), as jobs/package.sh refuses it
#
# Why install.sh's layout rather than the .deb: the image needs the package's program at the
# package's paths, not its units, cron entry, /etc/rankings.conf, maintainer scripts or man
# pages, and building the .deb would need dpkg-dev and the documentation tools for files the
# image would then delete. The files that run are the same ones, from the same table.
set -euo pipefail

root=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/.." && pwd)
base=${BASE:-docker.io/library/debian:bookworm-slim}
name=${NAME:-rankings}

if [[ -n ${ENGINE:-} ]]; then
    engine=$ENGINE
elif command -v docker >/dev/null && docker info >/dev/null 2>&1; then
    engine=docker
elif command -v podman >/dev/null; then
    engine=podman
else
    echo "jobs/image.sh: neither podman nor a working docker: apt-get install podman" >&2
    exit 69
fi

binary=${RANKINGS_PREBUILT:-$("$root/jobs/build-binary.sh")}
version=$("$binary" --version | awk 'NR == 1 { print $2 }')
if [[ -z $version ]]; then
    echo "jobs/image.sh: $binary --version printed no version" >&2
    exit 65
fi
# The image carries libisal2, as the package recommends it; a binary that cannot use it would
# inflate with zlib while --version in the image said otherwise.
if [[ ${RANKINGS_WITHOUT_ISAL:-} != 1 ]] && "$binary" --version | grep -q 'built without ISA-L'; then
    echo "jobs/image.sh: $binary was built without ISA-L's header (its --version says so): install" \
        "libisal-dev and build again, or set RANKINGS_WITHOUT_ISAL=1 for a zlib-only image" >&2
    exit 69
fi

context=$(mktemp -d)
trap 'rm -rf -- "$context"' EXIT
umask 022
DESTDIR=$context/tree PREFIX=/usr SYSCONFDIR=/etc CRON_ACTIVE=no \
    RANKINGS_PREBUILT=$binary "$root/jobs/install.sh" >/dev/null
# Units, the cron entry, sysusers and tmpfiles, and the configuration: a container uses none.
rm -rf -- "$context/tree/etc"
cp -- "$root/jobs/Containerfile" "$context/Containerfile"
cp -R -- "$root/jobs/container" "$context/container"
# Every file stamped alike, so an unchanged tree is an unchanged layer for the build's cache.
find "$context" -exec touch -h -d @0 {} +

"$engine" build --file "$context/Containerfile" --build-arg "BASE=$base" --build-arg "VERSION=$version" \
    --tag "$name:$version" "$@" "$context" >&2

bytes() { "$engine" image inspect --format '{{.Size}}' "$1" 2>/dev/null; }
size=$(bytes "$name:$version")
if base_size=$(bytes "$base") && [[ -n $base_size ]]; then
    echo "$name:$version: $((size / 1000000)) MB, $(((size - base_size) / 1000000)) MB over $base" \
        "($((base_size / 1000000)) MB)" >&2
else
    echo "$name:$version: $((size / 1000000)) MB" >&2
fi
printf '%s\n' "$name:$version"
