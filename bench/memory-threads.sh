#!/bin/bash
# Data: python3 bench/generate-keys.py jokes 1000000 > $BENCH_DIR/jokes1M.ndjson; python3 bench/generate-keys.py device 1000000 > $BENCH_DIR/device1M.ndjson
# usage: bench/memory-threads.sh BINARY LABEL  -> prints "label mode threads maxrss_kib seconds user_s sys_s"
# (GNU time: maximum resident set, wall, user and system CPU seconds; compare CPU, not wall, on a
# shared machine)
bin=$1; label=$2; d=${BENCH_DIR:-bench/data}
for mode in plain device stats; do
  for t in 1 2 4 8 16; do
    case $mode in
      plain) args=(-o $d/out-$label.json $d/jokes1M.ndjson);;
      device) args=(--dedupe device -o $d/out-$label.json $d/device1M.ndjson);;
      stats) args=(--stats $d/stats-$label.ndjson -o $d/out-$label.json $d/jokes1M.ndjson);;
    esac
    /usr/bin/time -f "%M %e %U %S" -o $d/time-$label.txt $bin aggregate -q --threads $t --computed-at 2026-01-01T00:00:00Z "${args[@]}" || echo "FAILED $?"
    echo "$label $mode $t $(cat $d/time-$label.txt)"
  done
done
