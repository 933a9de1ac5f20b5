#!/usr/bin/env bash
# The test suites where each can find something under AddressSanitizer, then under
# ThreadSanitizer (the lists below), each built in its own
# scratch directory so the ordinary .build is left alone. The binaries the end-to-end tests
# spawn are built with the same sanitizer, so their reports fail those tests too. Prints the
# seconds of each build and each run (`sanitizers: thread test 95 s`).
# usage: Tests/Fuzz/sanitizers.sh [--build-only] [address|thread]...   (default: both)
set -euo pipefail
cd "$(dirname "$0")/../.."
build_only=0
if [[ ${1:-} == --build-only ]]; then build_only=1; shift; fi
(($#)) || set -- address thread

# Each sanitizer runs the suites where it can find something, named here (a new suite that
# belongs under one joins its list):
# - AddressSanitizer: the C kernels (scanning, line layouts, CRC-32C, the entity walker and
#   templates) held to their references, and the Swift over unsafe buffers that feeds them: the
#   scanner and decoder, typed lines, long lines in small reads, the tallies, gzip's inflaters,
#   managed exports and their damaged logs, migrate's batches, the strict JSON parser, random and
#   fuzz-found input through the binary (built with the sanitizer too, so its reports fail the
#   test that ran it), and the second reading of refused lines and entities for --report. The
#   parallel reader's pieces cut at every size run here through the parallel fuzz target (under
#   AddressSanitizer, its corpus replayed in every CI run); ParallelEquivalenceTests runs under
#   ThreadSanitizer (below), where its threads are the point: under both it was 120 CPU-s.
# - ThreadSanitizer: the suites that start our threads (the aggregator's workers and shared
#   tally, the read-ahead of gzip and pipes) in the test process or in the binary at several
#   thread counts. A race needs a second thread; the rest never leave the calling one, or start
#   the same threads the same way as these.
# What neither runs (time zones, scheduling, configuration, the checker's rules on parsed
# documents, the command line's statuses) is plain Swift over arrays and strings, where the
# language's own checks already stop an overrun; the plain suite runs it.
address_suites=(ScanKernelAgreementTests LineKernelAgreementTests LineLayoutTests LineSchemaTests CRC32CTests
    EntityPickTests EntityTemplateTests ExportSchemaTests ScannerTests TypedSpansTests LongLineTests
    TallyTests SharedTallyTests DeferredChecksumTests InflaterAgreementTests ManagedExportTests
    LogDamageTests ExportMetadataTests ManagedExportCommandTests MigrationBatchingTests MigrateInputTests
    CheckJSONParserTests DifferentialTests JSONRuleTests FuzzFindingTests TypedLineTests RefusedReportTests
    ExportEventRulesTests)
thread_suites=(ParallelEquivalenceTests SharedTallyTests RecordFileReaderTests InputDirectoryTests
    DedupeTests StatsTests BackfillGoldenTests PeakMemoryTests TypedLineTests DeferredChecksumTests
    InflaterAgreementTests InputSourceTests FailedRunOutputsTests)
# Suites compiled beside a sanitizer's, not run, for what its own suites take from them: RefusedReportTests
# builds on LayeredFolderTests' nights, LongLineTests reads through ParallelEquivalenceTests' MemorySource,
# InflaterAgreementTests reads FuzzFindingTests' findings.
address_also=(LayeredFolderTests ParallelEquivalenceTests) thread_also=(FuzzFindingTests)
# The files a sanitizer's build leaves out (Package.swift's RANKINGS_TEST_EXCLUDE): those that
# hold tests, but none of its suites. It keeps its suites' files and every one without a test
# (the support they share): compiling all 108 files under a sanitizer took twice the CPU. A suite
# that needs another's file fails to build, naming what it misses. A renamed suite would drop out
# of its filter silently: refused.
tests_left_out() {
    local suite file kept=()
    for suite in "$@"; do
        file=$(grep -rlE "^(@Suite.*)?(final )?(struct|class) $suite\b" Tests/RankingsKitTests | head -1)
        [[ -n $file ]] || { echo "sanitizers.sh: no suite $suite in Tests/RankingsKitTests (update its list)" >&2; return 1; }
        kept+=("$file")
    done
    for file in $(grep -rl '@Test' Tests/RankingsKitTests --include='*.swift' | LC_ALL=C sort); do
        [[ " ${kept[*]} " == *" $file "* ]] || echo "${file#Tests/RankingsKitTests/}"
    done | paste -sd' '
}
# Line tables are all a sanitizer's report reads (function, file, line); full debug information
# cost these builds 7 % more CPU. The build and the run name the same flags.
line_tables=(-Xswiftc -gline-tables-only)
filter() { echo "\.($(IFS='|'; echo "$*"))(/|\$)"; }

for sanitizer in "$@"; do
    case $sanitizer in
    address) scratch=.build-asan suites=("${address_suites[@]}") also=("${address_also[@]}") ;;
    thread) scratch=.build-tsan suites=("${thread_suites[@]}") also=("${thread_also[@]}") ;;
    *) echo "usage: $0 [address|thread]..." >&2; exit 64 ;;
    esac
    started=$SECONDS
    RANKINGS_TEST_EXCLUDE=$(tests_left_out "${suites[@]}" "${also[@]}")
    export RANKINGS_TEST_EXCLUDE
    nice swift build --build-tests --sanitize="$sanitizer" --scratch-path "$scratch" "${line_tables[@]}"
    echo "sanitizers: $sanitizer build $((SECONDS - started)) s" >&2
    ((build_only == 0)) || continue
    started=$SECONDS
    echo "swift test --sanitize=$sanitizer --filter $(filter "${suites[@]}")"
    # RANKINGS_TEST_SANITIZER tells the tests that measure memory that the allocator is the
    # sanitizer's (shadow memory, quarantine, per-thread caches), not the product's, and the
    # longest corpus tests to read their smaller corpora (Tests/RankingsKitTests/Support/Sanitizer.swift).
    RANKINGS_TEST_SANITIZER=$sanitizer LSAN_OPTIONS=suppressions=$PWD/Tests/Fuzz/lsan-toolchain.supp \
        nice swift test --skip-build --sanitize="$sanitizer" --scratch-path "$scratch" "${line_tables[@]}" --filter "$(filter "${suites[@]}")"
    echo "sanitizers: $sanitizer test $((SECONDS - started)) s" >&2
done
