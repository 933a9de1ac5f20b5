#!/usr/bin/env bash
# Builds the fuzz targets (Tests/Fuzz/build.sh: one program for all) and runs each for SECONDS
# under libFuzzer, as many at once as there are cores, from the committed seed corpus plus what
# earlier runs on this machine added, and prints one line per target, in order:
#   NAME: N runs, F findings (cov: C, ft: T)
# F counts crashes, sanitizer reports, mismatches against the reference, timeouts and
# out-of-memory inputs; each finding is saved as a reproducer under .build-fuzz/findings/NAME/
# and its path printed. Exits 1 when any target has a finding.
# usage: Tests/Fuzz/run.sh SECONDS [TARGET...]   (extra libFuzzer flags in FUZZ_FLAGS; FUZZ_JOBS
# targets at once, default the number of cores)
set -euo pipefail
cd "$(dirname "$0")/../.."
seconds=${1:?usage: Tests/Fuzz/run.sh SECONDS [TARGET...]}
shift
if (($#)); then targets=("$@"); else
    mapfile -t targets < <(cd Tests/Fuzz/Targets && ls *.swift | sed 's/\.swift$//')
fi
out=.build-fuzz
Tests/Fuzz/build.sh "${targets[@]}"
mkdir -p "$out/logs"

# Runs one target and leaves its line (and a finding's paths) in $out/logs/NAME.summary.
run_target() {
    local name=$1 corpus=$out/corpus/$1 findings=$out/findings/$1 log=$out/logs/$1.log
    local before runs cov ft found dict=()
    mkdir -p "$corpus" "$findings"
    cp -n Tests/Fuzz/corpus/"$name"/* "$corpus"/ 2>/dev/null || true
    [ -f "Tests/Fuzz/dict/$name.dict" ] && dict=(-dict="Tests/Fuzz/dict/$name.dict")
    before=$(ls "$findings" | wc -l)
    # Swift's runtime keeps caches for the life of the process, which LeakSanitizer would
    # call leaks; every other AddressSanitizer check stays on. Swift's own backtracer would
    # only race ASan's report of the same crash.
    SWIFT_BACKTRACE=enable=no ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0} nice -n 10 "$out/$name" -max_total_time="$seconds" -timeout=10 \
        -rss_limit_mb=2048 -max_len=8192 -print_final_stats=1 -artifact_prefix="$findings/" \
        "${dict[@]}" ${FUZZ_FLAGS:-} "$corpus" >"$log" 2>&1 || true
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1 || true)
    cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1 | cut -d' ' -f2 || true)
    ft=$(grep -o 'ft: [0-9]*' "$log" | tail -1 | cut -d' ' -f2 || true)
    found=$(($(ls "$findings" | wc -l) - before))
    # A finding libFuzzer could not save (it died too hard) still shows in the log.
    if ((found == 0)) && grep -qE 'ERROR: (libFuzzer|AddressSanitizer)|MISMATCH|Fatal error' "$log"; then found=1; fi
    {
        echo "$name: ${runs:-0} runs, $found findings (cov: ${cov:-?}, ft: ${ft:-?})"
        if ((found > 0)); then
            ls -t "$findings" | head -n "$found" | sed "s|^|  reproducer: $findings/|"
            echo "  log: $log"
        fi
    } >"$out/logs/$name.summary"
}

at_once=${FUZZ_JOBS:-$(nproc)}
for name in "${targets[@]}"; do
    rm -f "$out/logs/$name.summary"
    while (($(jobs -rp | wc -l) >= at_once)); do wait -n || true; done
    run_target "$name" &
done
wait
status=0
for name in "${targets[@]}"; do
    cat "$out/logs/$name.summary" 2>/dev/null || echo "$name: no result (the run died)"
    grep -q ', 0 findings' "$out/logs/$name.summary" 2>/dev/null || status=1
done
exit $status
