#!/bin/bash
# Builds the self-contained release `rankings` that install.sh and package.sh
# ship, and prints its path. The Swift runtime is linked in statically
# (--static-swift-stdlib), so the result needs only the C libraries of the
# machine it runs on, not the toolchain. It lives in its own build folder so
# it never fights `swift build`/`swift test` over .build/. No $ORIGIN runpath:
# installed in /usr/bin, it must not load libraries from the directory it sits in.
#
#   jobs/build-binary.sh        build, print the stripped binary's path on stdout
#
# The binary that ships inflates gzip with ISA-L where libisal2 is installed, which it can only
# do when ISA-L's header (libisal-dev) was there at build time. A build without the header would
# say "built without ISA-L" in --version on every server, libisal2 or not, so it is refused
# (status 69, nothing printed) unless RANKINGS_WITHOUT_ISAL=1 asks for a zlib-only binary.
set -euo pipefail

root=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/.." && pwd)
scratch=$root/.build-release
flags=(-c release --static-swift-stdlib --disable-local-rpath --package-path "$root" --scratch-path "$scratch")

swift build "${flags[@]}" >&2
built=$(swift build "${flags[@]}" --show-bin-path)/rankings
out=$scratch/self-contained/rankings
mkdir -p -- "$(dirname -- "$out")"
# The binary's own word on whether it was built with ISA-L, rather than a guess at include paths.
if [[ ${RANKINGS_WITHOUT_ISAL:-} != 1 ]] && "$built" --version | grep -q 'built without ISA-L'; then
    echo "jobs/build-binary.sh: this binary was built without ISA-L's header, so it would inflate gzip" \
        "with zlib even where libisal2 is installed: install libisal-dev (apt-get install libisal-dev)," \
        "then run 'swift package clean --scratch-path $scratch' and build again; or set" \
        "RANKINGS_WITHOUT_ISAL=1 to ship a zlib-only binary" >&2
    exit 69
fi
strip --strip-all -o "$out.tmp" "$built"
mv -f -- "$out.tmp" "$out"
printf '%s\n' "$out"
