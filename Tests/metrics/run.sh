#!/usr/bin/env bash
# Metrics against the real components: the files written by real runs of the built `rankings`
# (`--metrics`: a success, a failure that carries the last success over, a success again) and
# by the night around it (RANKINGS_METRICS, its one file: a night from exports, a failed night
# carrying the last success over) must pass `promtool check metrics` (Debian package
# `prometheus`), and a real `prometheus-node-exporter`, started here on a loopback port with only
# its textfile collector, must serve them over HTTP with the same values. Run by .ci/run after
# the debug build; RANKINGS_BIN overrides the binary. Prints "N passed, M failed".
#
# With SHOW=1 it also prints the metrics files and the scraped rankings_* lines.
set -uo pipefail
cd "$(dirname "$0")/../.."

# shellcheck source=Tests/packages.sh
source Tests/packages.sh
install_missing promtool=prometheus prometheus-node-exporter=prometheus-node-exporter curl=curl || exit

bin=${RANKINGS_BIN:-$(swift build --show-bin-path)/rankings}
sample=$PWD/sample-data/rating_events.ndjson
work=$(mktemp -d)
exporter=
cleanup() {
    [[ -n $exporter ]] && kill "$exporter" 2>/dev/null && wait "$exporter" 2>/dev/null
    rm -rf -- "$work"
}
trap cleanup EXIT
textfile=$work/textfile
metrics=$textfile/rankings.prom
mkdir -p "$textfile" "$work/out"

# shellcheck source=Tests/check.sh
source Tests/check.sh
value() { awk -v key="$1" '$1 == key { print $2 }' "${2:-$metrics}"; }
promtool_accepts() {
    local out
    out=$(promtool check metrics <"$1" 2>&1)
    local status=$?
    [[ -n $out ]] && echo "promtool: $out" >&2
    ((status == 0)) && [[ -z $out ]]
}
show() { [[ ${SHOW:-} ]] && { echo "== $1"; cat "$2"; }; true; }

# Night 1: a success.
"$bin" aggregate -q --metrics "$metrics" -o "$work/out/all_time.json" "$sample"
check "first run succeeds" test $? -eq 0
check "promtool accepts a success's metrics" promtool_accepts "$metrics"
success=$(value rankings_last_success_timestamp_seconds)
check "a success records its time" test -n "$success"
check "a success records status 0" test "$(value rankings_last_run_exit_status)" = 0

# Night 2: the export is gone; the last success is carried over.
"$bin" aggregate -q --metrics "$metrics" -o "$work/out/all_time.json" "$work/missing.ndjson" 2>/dev/null
check "a missing export fails with 66" test $? -eq 66
cp "$metrics" "$work/failed.prom"
show "metrics after the failed run" "$metrics"
check "promtool accepts a failure's metrics" promtool_accepts "$metrics"
check "a failure records its status" test "$(value rankings_last_run_exit_status)" = 66
check "a failure keeps the last success" test "$(value rankings_last_success_timestamp_seconds)" = "$success"

# Night 3: a success again.
"$bin" aggregate -q --metrics "$metrics" -o "$work/out/all_time.json" "$sample"
check "the next run succeeds" test $? -eq 0
show "metrics after the next successful run" "$metrics"
check "promtool accepts it" promtool_accepts "$metrics"

# A run that never succeeded has no last success at all.
"$bin" aggregate -q --metrics "$work/never.prom" "$work/missing.ndjson" 2>/dev/null
check "no last success before the first one" test -z "$(value rankings_last_success_timestamp_seconds "$work/never.prom")"
check "promtool accepts a file without a last success" promtool_accepts "$work/never.prom"

# The night's one file (jobs/night from the checkout runs the `rankings` on PATH: this binary).
night=$textfile/night.prom
mkdir -p "$work/path"
ln -s "$(realpath "$bin")" "$work/path/rankings"
night_run() { env -i PATH="$work/path:/usr/bin:/bin" RANKINGS_STATE_DIRECTORY="$work/state" RANKINGS_METRICS="$night" \
    RANKINGS_RETRIES=0 "$@" jobs/night/rankings-night run --environment 2>"$work/night.err"; }
night_run env RANKINGS_EXPORTS="$sample"
check "a night succeeds" test $? -eq 0
check "promtool accepts a night's metrics" promtool_accepts "$night"
night_success=$(value rankings_night_last_success_timestamp_seconds "$night")
check "the night records its success" test -n "$night_success"
check "the night's board counts the sample" test "$(value 'rankings_night_refused_votes{board="all_time"}' "$night")" = 0
night_run env RANKINGS_EXPORTS="$work/missing.ndjson"
check "a night without its export fails with 66" test $? -eq 66
show "the night's metrics after its failure" "$night"
check "promtool accepts a failed night's metrics" promtool_accepts "$night"
check "a failed night records its status" test "$(value rankings_night_last_run_exit_status "$night")" = 66
check "a failed night keeps the last success" test "$(value rankings_night_last_success_timestamp_seconds "$night")" = "$night_success"
check "a failed night's step" test "$(value 'rankings_night_step_exit_status{step="aggregate"}' "$night")" = 66

# node_exporter serves the files: on a free loopback port, with every other collector off.
port=
for _ in 1 2 3 4 5; do
    candidate=$((20000 + RANDOM % 40000))
    prometheus-node-exporter --web.listen-address="127.0.0.1:$candidate" --collector.disable-defaults \
        --collector.textfile --collector.textfile.directory="$textfile" >"$work/exporter.log" 2>&1 &
    exporter=$!
    for _ in $(seq 100); do
        if curl -fsS "http://127.0.0.1:$candidate/metrics" -o "$work/scrape" 2>/dev/null; then
            port=$candidate
            break 2
        fi
        kill -0 "$exporter" 2>/dev/null || break
        sleep 0.1
    done
    kill "$exporter" 2>/dev/null
    wait "$exporter" 2>/dev/null
    exporter=
done
check "node_exporter starts and answers" test -n "$port"
if [[ -n $port ]]; then
    grep '^rankings_' "$work/scrape" >"$work/scraped"
    show "node_exporter's rankings_* lines" "$work/scraped"
    check "node_exporter read the file without error" grep -qx 'node_textfile_scrape_error 0' "$work/scrape"
    # Every sample in a file is served with the same value (node_exporter may spell a number
    # differently, 1.7e+09 for 1700000000, so they are compared as numbers).
    same_values() {
        awk 'NR == FNR { if ($0 !~ /^#/ && NF == 2) want[$1] = $2; next }
             { got[$1] = $2 }
             END { for (k in want) if (!(k in got) || got[k] + 0 != want[k] + 0) { print "differs: " k > "/dev/stderr"; bad = 1 }
                   exit bad + (length(want) < 10) }' "$1" "$work/scraped"
    }
    check "node_exporter serves every sample of the job's file with its value" same_values "$metrics"
    check "node_exporter serves every sample of the night's file with its value" same_values "$night"
    check "node_exporter serves the sample's hilarious count" \
        grep -qx 'rankings_last_run_events{kind="hilarious"} 2712' "$work/scraped"
    check "node_exporter serves the exit status" grep -qx 'rankings_last_run_exit_status 0' "$work/scraped"
fi

finish
