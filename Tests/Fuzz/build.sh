#!/usr/bin/env bash
# Builds one fuzz target: every library source (found afresh, so new files join in), the
# reference implementations and the target's file, as one module with libFuzzer and ASan.
# usage: Tests/Fuzz/build.sh NAME   (NAME is a file in Tests/Fuzz/Targets without .swift)
set -euo pipefail
cd "$(dirname "$0")/../.."
name=$1
out=.build-fuzz
mkdir -p "$out"
swiftc=${SWIFTC:-swiftc}
command -v "$swiftc" >/dev/null || swiftc=/opt/swift/usr/bin/swiftc
mapfile -t library < <(find Sources/RankingsKit -name '*.swift' | LC_ALL=C sort)
# Our C target (the SIMD kernels, ISA-L's loader), compiled with the same sanitizers.
mapfile -t csources < <(find Sources/CKernels -name '*.c' | LC_ALL=C sort)
mapfile -t cheaders < <(find Sources/CKernels -name "*.h" -o -name "*.modulemap" | LC_ALL=C sort)
inputs=("${library[@]}" "${csources[@]}" "${cheaders[@]}" Tests/Fuzz/Reference/*.swift "Tests/Fuzz/Targets/$name.swift" "$0")
# Up to date: built after every input changed, and from the same list of files.
list="$out/$name.inputs"
if [ -x "$out/$name" ] && [ -z "$(find "${inputs[@]}" -newer "$out/$name" | head -1)" ] \
    && printf '%s\n' "${inputs[@]}" | cmp -s - "$list"; then
    exit 0
fi
clang=$(dirname "$(command -v "$swiftc")")/clang
objects=()
for c in "${csources[@]}"; do
    object="$out/$name.$(basename "$c" .c).o"
    nice "$clang" -c -O2 -g -fsanitize=address,fuzzer-no-link -Werror -I Sources/CKernels/include "$c" -o "$object"
    objects+=("$object")
done
nice "$swiftc" -sanitize=fuzzer,address -parse-as-library -O -swift-version 6 -warnings-as-errors \
    -module-name "Fuzz_$name" -use-ld=lld -I Sources/CZlib -I Sources/CLinux -lz -I Sources/CKernels/include "${objects[@]}" \
    "${library[@]}" Tests/Fuzz/Reference/*.swift "Tests/Fuzz/Targets/$name.swift" \
    -o "$out/$name"
printf '%s\n' "${inputs[@]}" >"$list"
