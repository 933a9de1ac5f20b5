#!/usr/bin/env python3
"""Alternated rounds of `rankings aggregate --threads 1` over one input, for two or more
binaries: each round runs every binary once (the order rotates a step each round, so no binary
always runs first after another), pinned to CPU 1, and takes its CPU seconds (user + sys) from
the kernel's accounting of the child. The first binary is the base. Printed per binary: the
median, the minimum and the mean of the lowest quarter, each against the base's.

On a shared virtual machine one run varies by several percent; the minimum and the lowest
quarter are the statistics least moved by what else ran. Put a copy of the base binary in the
list as a control: its difference is the noise.

    bench/ab.py --rounds 61 bench/data/events-4000000-seed1.ndjson OLD NEW OLD-COPY
"""
import argparse
import resource
import statistics
import subprocess
import sys


def cpu_seconds(command):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=41)
    parser.add_argument("input")
    parser.add_argument("binaries", nargs="+")
    options = parser.parse_args()
    arguments = ["aggregate", "-q", "--threads", "1", "--computed-at", "2026-01-01T00:00:00Z", options.input]
    documents = {subprocess.run([b] + arguments, capture_output=True, check=True).stdout for b in options.binaries}
    if len(documents) != 1:
        sys.exit("ab.py: the binaries print different documents")
    times = {b: [] for b in options.binaries}
    for round in range(options.rounds):
        step = round % len(options.binaries)
        for binary in options.binaries[step:] + options.binaries[:step]:
            times[binary].append(cpu_seconds(["taskset", "-c", "1", binary] + arguments))

    def statistic(binary):
        values = sorted(times[binary])
        quarter = values[:max(1, len(values) // 4)]
        return statistics.median(values), values[0], statistics.mean(quarter)

    base = statistic(options.binaries[0])
    print(f"{options.rounds} rounds, CPU s at one thread: median, minimum, lowest-quarter mean")
    for binary in options.binaries:
        row = statistic(binary)
        print("  ".join(f"{v:.4f} ({v / b - 1:+.1%})" for v, b in zip(row, base)), binary)


if __name__ == "__main__":
    main()
