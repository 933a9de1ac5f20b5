#!/bin/bash
# Decode speed of managed exports, one thread: RankingsKit's export reader (CRC-32C of every
# fragment, every entity decoded and judged) over an export, as events/s and MB/s. The export
# is read from the page cache: run it twice and take the second.
#
#   bench/generate.py --events 1000000 | bench/generate-export.py /tmp/x
#   bench/export-speed.sh /tmp/x/firestore_export_bench
set -euo pipefail
cd "$(dirname "$0")/.."
out=.build-bench
mkdir -p "$out"
swiftc=${SWIFTC:-swiftc}
command -v "$swiftc" >/dev/null || swiftc=/opt/swift/usr/bin/swiftc
clang=$(dirname "$(command -v "$swiftc")")/clang
mapfile -t library < <(find Sources/RankingsKit -name '*.swift' | LC_ALL=C sort)
objects=()
for c in Sources/CKernels/*.c; do
    "$clang" -c -O2 -I Sources/CKernels/include "$c" -o "$out/$(basename "$c" .c).o"
    objects+=("$out/$(basename "$c" .c).o")
done
"$swiftc" -O -parse-as-library -swift-version 6 -module-name ExportSpeed -I Sources/CZlib -I Sources/CLinux -lz \
    -I Sources/CKernels/include "${objects[@]}" "${library[@]}" bench/export-speed.swift -o "$out/export-speed"
"$out/export-speed" "$1"
