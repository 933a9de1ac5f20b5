#!/usr/bin/env python3
"""Check that another tool's top lists agree with the expected document.

Tools break ties differently (node keeps first-seen order, others sort by
id), so agreement means: the same totals, the same sequence of counts in
each list, and the same jokes at every count above the last one. At the last
count a tie may be cut at a different joke, which is no disagreement.

Usage: agree.py EXPECTED OTHER  (both JSON with hilarious/horrible lists of
{joke_id, count} and the two totals; rank and other keys are ignored)
Exit status 0 when they agree, 1 with the differences on stderr otherwise.
"""

import json
import sys


def differences(expected, other):
    found = []
    for key in ("total_hilarious_ratings", "total_horrible_ratings"):
        if expected.get(key) != other.get(key):
            found.append(f"{key}: expected {expected.get(key)}, "
                         f"got {other.get(key)}")
    for key in ("hilarious", "horrible"):
        want = [(e["joke_id"], e["count"]) for e in expected.get(key, [])]
        got = [(e["joke_id"], e["count"]) for e in other.get(key, [])]
        if [c for _, c in want] != [c for _, c in got]:
            found.append(f"{key}: counts differ: expected "
                         f"{[c for _, c in want]}, got {[c for _, c in got]}")
            continue
        if not want:
            continue
        cut = want[-1][1]
        above = lambda pairs: {p for p in pairs if p[1] > cut}
        if above(want) != above(got):
            found.append(f"{key}: jokes differ: expected {sorted(above(want))}"
                         f", got {sorted(above(got))}")
    return found


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    with open(sys.argv[1], "rb") as f:
        expected = json.load(f)
    with open(sys.argv[2], "rb") as f:
        other = json.load(f)
    found = differences(expected, other)
    for line in found:
        print(f"agree.py: {sys.argv[2]}: {line}", file=sys.stderr)
    sys.exit(1 if found else 0)


if __name__ == "__main__":
    main()
