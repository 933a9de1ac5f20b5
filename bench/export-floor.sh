#!/bin/bash
# One thread's CPU seconds to read NDJSON and a managed export before any record is decoded
# (bench/export-floor.c, over the product's own header scan and CRC-32C kernels), as table
# rows. Inputs should be in the page cache; the script reads each once first.
#
#   bench/export-floor.sh 9 bench/data/events-4M.ndjson bench/data/export-4M/firestore_export_bench
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=$1 ndjson=$2 export=$3
out=.build-bench
mkdir -p "$out"
swiftc=$(command -v swiftc || echo /opt/swift/usr/bin/swiftc)
clang=$(dirname "$swiftc")/clang
"$clang" -O2 -I Sources/CKernels/include bench/export-floor.c Sources/CKernels/crc32c.c \
    Sources/CKernels/log_headers.c -lpthread -o "$out/export-floor"
mapfile -t files < <(find "$export" -name 'output-*' | LC_ALL=C sort)
cat "$ndjson" "${files[@]}" >/dev/null
echo "| step | CPU s (median of $rounds) |"
echo "|---|---:|"
"$out/export-floor" "$rounds" "$ndjson" "${files[@]}"
