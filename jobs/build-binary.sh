#!/bin/bash
# Builds the self-contained release `rankings` that install.sh and package.sh
# ship, and prints its path. The Swift runtime is linked in statically
# (--static-swift-stdlib), so the result needs only the C libraries of the
# machine it runs on, not the toolchain. It lives in its own build folder so
# it never fights `swift build`/`swift test` over .build/. No $ORIGIN runpath:
# installed in /usr/bin, it must not load libraries from the directory it sits in.
#
#   jobs/build-binary.sh        build, print the stripped binary's path on stdout
set -euo pipefail

root=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/.." && pwd)
scratch=$root/.build-release
flags=(-c release --static-swift-stdlib --disable-local-rpath --package-path "$root" --scratch-path "$scratch")

swift build "${flags[@]}" >&2
built=$(swift build "${flags[@]}" --show-bin-path)/rankings
out=$scratch/self-contained/rankings
mkdir -p -- "$(dirname -- "$out")"
strip --strip-all -o "$out.tmp" "$built"
mv -f -- "$out.tmp" "$out"
printf '%s\n' "$out"
