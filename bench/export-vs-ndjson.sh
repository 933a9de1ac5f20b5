#!/bin/bash
# The same events as NDJSON and as a managed export, through `rankings aggregate` (the shipped
# binary, or several to compare), at 1 and 2 threads, in alternated rounds: CPU seconds (user
# + sys, GNU time), wall seconds and peak RSS per run, then per binary, input and thread count
# the median CPU and wall seconds, events per CPU second and the highest peak RSS. Every run's
# document must be the first run's, byte for byte.
#
#   bench/generate.py --events 4000000 -o bench/data/events-4M.ndjson
#   bench/generate-export.py bench/data/export-4M < bench/data/events-4M.ndjson
#   bench/export-vs-ndjson.sh --events 4000000 --rounds 5 bench/data/events-4M.ndjson \
#       bench/data/export-4M/firestore_export_bench after=$(jobs/build-binary.sh) before=/tmp/rankings-main
set -euo pipefail
events=0 rounds=5
while [ $# -gt 0 ]; do
    case $1 in
    --events) events=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    *) break ;;
    esac
done
ndjson=$1 export=$2
shift 2
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
times=$out/times
for round in $(seq 1 "$rounds"); do
    for threads in 1 2; do
        for spec in "$@"; do
            label=${spec%%=*} binary=${spec#*=}
            for input in ndjson export; do
                path=$ndjson
                [ "$input" = export ] && path=$export
                /usr/bin/time -f "$label $input $threads %e %U %S %M" -a -o "$times" "$binary" aggregate -q \
                    --threads "$threads" --computed-at 2026-01-01T00:00:00Z -o "$out/doc.json" "$path"
                if [ -f "$out/first.json" ]; then
                    cmp -s "$out/first.json" "$out/doc.json" || { echo "$label $input: another document" >&2; exit 1; }
                else
                    cp "$out/doc.json" "$out/first.json"
                fi
            done
        done
    done
done
python3 - "$times" "$events" <<'PY'
import collections, statistics, sys
runs = collections.defaultdict(list)
for line in open(sys.argv[1]):
    label, input, threads, wall, user, system, rss = line.split()
    runs[(label, input, int(threads))].append((float(user) + float(system), float(wall), int(rss)))
events = int(sys.argv[2])
print("| binary | input | threads | runs | CPU s (median) | events per CPU second | wall s (median) | peak RSS |")
print("|---|---|---:|---:|---:|---:|---:|---:|")
for (label, input, threads), v in sorted(runs.items(), key=lambda kv: (kv[0][2], kv[0][0], kv[0][1])):
    cpu = statistics.median(x[0] for x in v)
    wall = statistics.median(x[1] for x in v)
    rate = f"{events / cpu / 1e6:.2f} M" if events else "-"
    print(f"| {label} | {input} | {threads} | {len(v)} | {cpu:.2f} | {rate} | {wall:.2f} | {max(x[2] for x in v) / 1024:.1f} MiB |")
PY
