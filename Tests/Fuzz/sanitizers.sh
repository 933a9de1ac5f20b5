#!/usr/bin/env bash
# The whole test suite under AddressSanitizer, then under ThreadSanitizer, each in its own
# scratch directory so the ordinary .build is left alone. The binaries the end-to-end tests
# spawn are built with the same sanitizer, so their reports fail those tests too.
# usage: Tests/Fuzz/sanitizers.sh [address|thread]...   (default: both)
set -euo pipefail
cd "$(dirname "$0")/../.."
(($#)) || set -- address thread
for sanitizer in "$@"; do
    case $sanitizer in
    address) scratch=.build-asan ;;
    thread) scratch=.build-tsan ;;
    *) echo "usage: $0 [address|thread]..." >&2; exit 64 ;;
    esac
    echo "swift test --sanitize=$sanitizer"
    # RANKINGS_TEST_SANITIZER tells the tests that measure memory that the allocator is the
    # sanitizer's (shadow memory, quarantine, per-thread caches), not the product's.
    RANKINGS_TEST_SANITIZER=$sanitizer LSAN_OPTIONS=suppressions=$PWD/Tests/Fuzz/lsan-toolchain.supp \
        nice swift test --sanitize="$sanitizer" --scratch-path "$scratch"
done
