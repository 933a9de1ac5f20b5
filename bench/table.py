#!/usr/bin/env python3
"""Turn bench/run.sh's timing records into the Markdown results table.

Input: TSV lines `group, tool, bytes, seconds, peak RSS KiB, note, CPU seconds`
(user + sys), one per run. Medians resist the odd slow run on a shared machine better than means.
Within a group the first tool listed is the baseline for the ratio column,
which run.sh arranges to be `rankings aggregate` on that input. MB/s is
uncompressed input bytes (10^6) per second, also for gzip inputs, so rows
on the same data compare directly; MB per CPU s the same per CPU second. A seconds value of `-` marks a skipped
tool; its note says why.

With --levels (run.sh --levels), each input's rows at each CPU level
(`rankings aggregate, RANKINGS_CPU=LEVEL`) follow as ratios of median wall time
to the first level's, the floor's (`wc -l`) and DuckDB's, and the one-thread
rows' median CPU seconds as a ratio of the baseline's one-thread row.

Usage: table.py [--levels] RESULTS.tsv
"""

import re
import statistics
import sys


def main():
    levels = sys.argv[1] == "--levels"
    rows = {}  # (group, tool) -> dict; dicts keep insertion order
    with open(sys.argv[-1]) as f:
        for line in f:
            fields = line.rstrip("\n").split("\t")
            group, tool, size, seconds, rss, note = fields[:6]
            cpu = fields[6] if len(fields) > 6 else "-"
            row = rows.setdefault((group, tool), {
                "size": int(size), "seconds": [], "rss": [], "cpu": [], "note": note})
            if seconds != "-":
                row["seconds"].append(float(seconds))
                row["rss"].append(int(rss))
            if cpu != "-":
                row["cpu"].append(float(cpu))

    baseline = {}
    print("| input | tool | runs | median s | MB/s | × ours | CPU s | CPU × ours | MB per CPU s | peak RSS MiB | note |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|")
    cpu_baseline = {}
    for (group, tool), row in rows.items():
        if not row["seconds"]:
            print(f"| {group} | {tool} | 0 | – | – | – | – | – | – | – | {row['note']} |")
            continue
        median = statistics.median(row["seconds"])
        baseline.setdefault(group, median)
        rate = row["size"] / 1e6 / median if median > 0 else float("inf")
        ratio = median / baseline[group] if baseline[group] > 0 else float("nan")
        rss = max(row["rss"]) / 1024
        cpu, cpu_ratio, cpu_rate = "–", "–", "–"
        if row["cpu"]:
            c = statistics.median(row["cpu"])
            cpu_baseline.setdefault(group, c)
            cpu = f"{c:.2f}"
            if c > 0:
                cpu_rate = f"{row['size'] / 1e6 / c:.0f}"
            if cpu_baseline[group] > 0:
                cpu_ratio = f"{c / cpu_baseline[group]:.2f}"
        print(f"| {group} | {tool} | {len(row['seconds'])} | {median:.2f} | "
              f"{rate:.0f} | {ratio:.2f} | {cpu} | {cpu_ratio} | {cpu_rate} | {rss:.0f} | {row['note']} |")
    if levels:
        print_levels(rows)


def print_levels(rows):
    """Each level's median against the first level's, the floor's and DuckDB's; one thread's CPU against the baseline's."""
    wall = lambda row: statistics.median(row["seconds"])
    cpu = lambda row: statistics.median(row["cpu"])
    print()
    for group in dict.fromkeys(g for g, _ in rows):
        mine = [(tool, row) for (g, tool), row in rows.items() if g == group and row["seconds"]]
        named = lambda prefix: next((row for tool, row in mine if tool.startswith(prefix)), None)
        floor, duck, base = named("wc -l"), named("DuckDB"), named("baseline rankings aggregate --threads 1")
        first = None
        for tool, row in mine:
            m = re.fullmatch(r"rankings aggregate( --threads 1)?, RANKINGS_CPU=(\w+)", tool)
            if not m:
                continue
            one, level = m.groups()
            if one:
                if base and base["cpu"] and row["cpu"]:
                    print(f"- {group}, one thread, {level}: {cpu(row):.3f} CPU s, "
                          f"{cpu(row) / cpu(base):.2f} × the baseline's {cpu(base):.3f}")
                continue
            first = first or (level, row)
            parts = [f"{wall(row) / wall(first[1]):.2f} × {first[0]}"]
            parts += [f"{wall(row) / wall(floor):.2f} × wc -l"] if floor else []
            parts += [f"{wall(row) / wall(duck):.2f} × DuckDB"] if duck else []
            print(f"- {group}, {level}: {wall(row):.3f} s, " + ", ".join(parts))


if __name__ == "__main__":
    main()
