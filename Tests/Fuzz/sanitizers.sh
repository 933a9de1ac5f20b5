#!/usr/bin/env bash
# The test suite under AddressSanitizer, then under ThreadSanitizer, each built in its own
# scratch directory so the ordinary .build is left alone. The binaries the end-to-end tests
# spawn are built with the same sanitizer, so their reports fail those tests too. Prints the
# seconds of each build and each run (`sanitizers: thread test 95 s`).
# usage: Tests/Fuzz/sanitizers.sh [--build-only] [address|thread]...   (default: both)
set -euo pipefail
cd "$(dirname "$0")/../.."
build_only=0
if [[ ${1:-} == --build-only ]]; then build_only=1; shift; fi
(($#)) || set -- address thread

# ThreadSanitizer runs every suite but these, which never leave the calling thread (the C
# kernels held to the scalar scanner, time zones against Foundation) and took over a fifth of
# its time: a race needs a second thread, and AddressSanitizer still runs them. Every other
# suite runs, so a new test is in by default. A listed suite's file that comes to use anything
# that can start one of our threads (the aggregator's workers and shared tally, the read-ahead
# of gzip and pipes, the progress line, the `rankings` binary, a process or a task) fails the
# check below: it then belongs under ThreadSanitizer again.
single_threaded=(LineKernelAgreementTests LineLayoutTests ScanKernelAgreementTests ZoneDifferentialTests)
thread_starters='threads|Aggregat|SharedTally|WorkerTally|Prefetch|ProgressLine|--progress|NativeThread|Workers|readLines|Job\b|RankingsBinary|RunningRankings|Process\(|gzip|\.gz\b|stdin|Task|async|Dispatch'
check_single_threaded() {
    local suite file found=0
    for suite in "${single_threaded[@]}"; do
        file=$(grep -rlE "^(@Suite.*)?(final )?(struct|class) $suite\b" Tests/RankingsKitTests || true)
        if [[ -z $file ]]; then
            echo "sanitizers.sh: no suite $suite any more: ThreadSanitizer skips nothing for it (update single_threaded)" >&2
            continue
        fi
        if grep -nE -- "$thread_starters" $file >&2; then
            echo "sanitizers.sh: $file (suite $suite) uses what can start a thread (the lines above): take $suite out of single_threaded" >&2
            found=1
        fi
    done
    return $found
}

for sanitizer in "$@"; do
    case $sanitizer in
    address) scratch=.build-asan skip=() ;;
    thread)
        check_single_threaded
        scratch=.build-tsan skip=(--skip "\.($(IFS='|'; echo "${single_threaded[*]}"))(/|$)") ;;
    *) echo "usage: $0 [address|thread]..." >&2; exit 64 ;;
    esac
    started=$SECONDS
    nice swift build --build-tests --sanitize="$sanitizer" --scratch-path "$scratch"
    echo "sanitizers: $sanitizer build $((SECONDS - started)) s" >&2
    ((build_only == 0)) || continue
    started=$SECONDS
    echo "swift test --sanitize=$sanitizer ${skip[*]}"
    # RANKINGS_TEST_SANITIZER tells the tests that measure memory that the allocator is the
    # sanitizer's (shadow memory, quarantine, per-thread caches), not the product's, and the
    # longest corpus tests to read their smaller corpora (Tests/RankingsKitTests/Support/Sanitizer.swift).
    RANKINGS_TEST_SANITIZER=$sanitizer LSAN_OPTIONS=suppressions=$PWD/Tests/Fuzz/lsan-toolchain.supp \
        nice swift test --skip-build --sanitize="$sanitizer" --scratch-path "$scratch" "${skip[@]}"
    echo "sanitizers: $sanitizer test $((SECONDS - started)) s" >&2
done
