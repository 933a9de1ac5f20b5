#!/usr/bin/env python3
"""Turn bench/run.sh's timing records into the Markdown results table.

Input: TSV lines `group, tool, bytes, seconds, peak RSS KiB, note`, one per
run. Medians resist the odd slow run on a shared machine better than means.
Within a group the first tool listed is the baseline for the ratio column,
which run.sh arranges to be `rankings aggregate` on that input. MB/s is
uncompressed input bytes (10^6) per second, also for gzip inputs, so rows
on the same data compare directly. A seconds value of `-` marks a skipped
tool; its note says why.

Usage: table.py RESULTS.tsv
"""

import statistics
import sys


def main():
    rows = {}  # (group, tool) -> dict; dicts keep insertion order
    with open(sys.argv[1]) as f:
        for line in f:
            group, tool, size, seconds, rss, note = line.rstrip("\n").split("\t")
            row = rows.setdefault((group, tool), {
                "size": int(size), "seconds": [], "rss": [], "note": note})
            if seconds != "-":
                row["seconds"].append(float(seconds))
                row["rss"].append(int(rss))

    baseline = {}
    print("| input | tool | runs | median s | MB/s | × ours | peak RSS MiB | note |")
    print("|---|---|---:|---:|---:|---:|---:|---|")
    for (group, tool), row in rows.items():
        if not row["seconds"]:
            print(f"| {group} | {tool} | 0 | – | – | – | – | {row['note']} |")
            continue
        median = statistics.median(row["seconds"])
        baseline.setdefault(group, median)
        rate = row["size"] / 1e6 / median if median > 0 else float("inf")
        ratio = median / baseline[group] if baseline[group] > 0 else float("nan")
        rss = max(row["rss"]) / 1024
        print(f"| {group} | {tool} | {len(row['seconds'])} | {median:.2f} | "
              f"{rate:.0f} | {ratio:.2f} | {rss:.0f} | {row['note']} |")


if __name__ == "__main__":
    main()
