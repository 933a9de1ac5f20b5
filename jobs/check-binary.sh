#!/bin/bash
# Checks that a built `rankings` can go to a server without Swift: at most
# 8 MB, no library from the toolchain (or none missing), no runpath, and no
# glibc symbol version newer than 2.35 (Ubuntu 22.04; Debian 12 has 2.36).
# ISA-L must be optional (loaded with dlopen, never linked), and used: where
# libisal.so.2 is installed, the binary must say it inflates with it, or it
# was built without ISA-L's header (libisal-dev) and would use zlib everywhere.
# Prints what it found; exits 1 if a target is missed.
#
#   jobs/check-binary.sh PATH       (PATH from jobs/build-binary.sh)
set -euo pipefail

bin=${1:?usage: jobs/check-binary.sh PATH}
max_size=8000000
max_glibc=2.35
failed=0
fail() { echo "check-binary: $*" >&2; failed=1; }

size=$(stat -c %s -- "$bin")
echo "size: $size bytes"
[ "$size" -le $max_size ] || fail "$size bytes, more than $max_size"

libs=$(ldd -- "$bin")
echo "ldd:"
printf '%s\n' "$libs" | sed 's/ (0x[0-9a-f]*)$//; s/^[[:space:]]*/  /'
swift=$(command -v swift || true)
if [ -n "$swift" ]; then
  toolchain=$(dirname -- "$(dirname -- "$(readlink -f -- "$swift")")")
  if printf '%s\n' "$libs" | grep -qF -- "$toolchain/"; then fail "links a library from the toolchain ($toolchain)"; fi
fi
if printf '%s\n' "$libs" | grep -qiE 'not found|swift|foundation|icu'; then fail "needs a Swift runtime library"; fi
if readelf -d -- "$bin" | grep -qE 'RUNPATH|RPATH'; then fail "has a runpath"; fi

glibc=$(objdump -T -- "$bin" | grep -o 'GLIBC_[0-9][0-9.]*' | sed 's/^GLIBC_//' | sort -uV | tail -n 1)
echo "newest glibc symbol version: $glibc"
if [ "$(printf '%s\n%s\n' "$glibc" "$max_glibc" | sort -V | tail -n 1)" != "$max_glibc" ]; then
  fail "needs glibc $glibc, newer than $max_glibc"
fi

# It runs with nothing of the toolchain in its environment.
version=$(env -i "$bin" --version) || fail "does not run"
printf '%s\n' "$version" | sed -n 's/^/--version: /p'

if printf '%s\n' "$libs" | grep -q 'libisal'; then fail "links libisal: it must be loaded at run time, so the binary runs without it"; fi
if ldconfig -p | grep -q 'libisal\.so\.2 '; then
  printf '%s\n' "$version" | grep -q '^gzip: ISA-L' || fail "libisal.so.2 is installed but the binary inflates with zlib (built without libisal-dev?)"
fi
# And without ISA-L it falls back to zlib rather than failing.
env -i RANKINGS_INFLATE=zlib "$bin" --version | grep -q '^gzip: zlib' || fail "no zlib fallback"
exit $failed
