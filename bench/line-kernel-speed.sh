#!/bin/bash
# The line kernel's time per pass over FILE (line-kernel-speed.c) for each revision's
# Sources/CKernels, in alternated rounds pinned to CPU 1; prints every round, then each
# revision's best. WORKTREE stands for the uncommitted tree.
#
#   bench/line-kernel-speed.sh bench/data/events-1000000-seed1.ndjson 55ddc6e HEAD WORKTREE
set -euo pipefail
cd "$(dirname "$0")/.."
file=$1
shift
[ -r "$file" ] || { echo "line-kernel-speed.sh: cannot read $file" >&2; exit 66; }
rounds=${ROUNDS:-5}
clang=$(dirname "$(command -v swiftc || echo /opt/swift/usr/bin/swiftc)")/clang
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
for revision in "$@"; do
    source=$out/$revision
    mkdir -p "$source"
    if [ "$revision" = WORKTREE ]; then
        cp -r Sources/CKernels "$source/"
    else
        git archive "$revision" Sources/CKernels | tar -x -C "$source" --strip-components=1
    fi
    kernels=$source/CKernels
    "$clang" -O3 -DNDEBUG -I "$kernels/include" -I "$kernels" bench/line-kernel-speed.c \
        $(ls "$kernels"/*.c | grep -v isal_inflate) -o "$out/$revision.bin"
done
for round in $(seq 1 "$rounds"); do
    for revision in "$@"; do
        echo "$revision $(taskset -c 1 "$out/$revision.bin" "$file" 7 2>/dev/null)"
    done
done | tee "$out/times"
echo "best of $rounds rounds (each the best of 7 passes), seconds:"
sort -k2,2n "$out/times" | awk '!seen[$1]++ { print "  " $1, $2 }'
