#!/usr/bin/env python3
"""Independent reference for `rankings aggregate`: prints the all_time document.

Written plainly on top of the json module, sharing nothing with the Swift
code, so that a byte-for-byte match between the two is evidence that both
follow the rules rather than the same mistake:

- a line counts only if it is valid UTF-8 holding one JSON object whose
  joke_id is a non-empty string and whose rating is a JSON number with
  1 <= rating <= 5; every other line is a bad line and is skipped;
- rating >= 4 is Hilarious, rating <= 2 is Horrible, anything between neutral;
- each list holds the jokes with at least one event of its kind, by count
  descending, ties by joke_id in ascending UTF-8 byte order, first --top.

Inputs may be plain or gzip-compressed (by the .gz suffix) files, or
directories, whose regular files are read in name order.
"""

import argparse
import datetime
import gzip
import json
import os
import re
import sys

COMPUTED_AT = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z")


def reject_constant(name):
    # The json module accepts NaN and Infinity; JSON does not.
    raise ValueError(f"not JSON: {name}")


def rating_of(line):
    """(joke_id, rating) for a valid line, None for a bad one."""
    try:
        # Decoding first keeps the check strict: json.loads(bytes) would
        # quietly accept a byte-order mark or UTF-16.
        record = json.loads(line.decode("utf-8"),
                            parse_constant=reject_constant)
    except ValueError:  # includes UnicodeDecodeError and JSONDecodeError
        return None
    if not isinstance(record, dict):
        return None
    joke_id, rating = record.get("joke_id"), record.get("rating")
    if not isinstance(joke_id, str) or not joke_id:
        return None
    try:
        joke_id.encode("utf-8")  # a lone \ud800 escape is no text
    except UnicodeEncodeError:
        return None
    # bool is an int in Python but true/false are not JSON numbers.
    if isinstance(rating, bool) or not isinstance(rating, (int, float)):
        return None
    if not 1 <= rating <= 5:
        return None
    return joke_id, rating


def input_files(paths):
    for path in paths:
        if os.path.isdir(path):
            for name in sorted(os.listdir(path)):
                full = os.path.join(path, name)
                if os.path.isfile(full):
                    yield full
        else:
            yield path


def open_input(path):
    if path == "-":
        return sys.stdin.buffer
    if path.endswith(".gz"):
        return gzip.open(path, "rb")
    return open(path, "rb")


def tally(paths):
    hilarious, horrible = {}, {}
    stats = {"lines": 0, "bad_lines": 0}
    for path in input_files(paths):
        with open_input(path) as stream:
            for line in stream:
                if line.endswith(b"\n"):
                    line = line[:-1]
                stats["lines"] += 1
                event = rating_of(line)
                if event is None:
                    stats["bad_lines"] += 1
                    continue
                joke_id, rating = event
                if rating >= 4:
                    hilarious[joke_id] = hilarious.get(joke_id, 0) + 1
                elif rating <= 2:
                    horrible[joke_id] = horrible.get(joke_id, 0) + 1
    return hilarious, horrible, stats


def ranked(counts, top):
    order = sorted(counts.items(),
                   key=lambda item: (-item[1], item[0].encode("utf-8")))
    return [(joke_id, count, rank)
            for rank, (joke_id, count) in enumerate(order[:top], start=1)]


ESCAPES = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\f": "\\f", "\n": "\\n",
           "\r": "\\r", "\t": "\\t", "\u2028": "\\u2028",
           "\u2029": "\\u2029"}


def quoted(text):
    """A JSON string literal; non-ASCII stays as UTF-8 text."""
    out = []
    for ch in text:
        if ch in ESCAPES:
            out.append(ESCAPES[ch])
        elif ch < " ":
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def entry(joke_id, count, rank, sep):
    return (f'{{"joke_id":{sep}{quoted(joke_id)},{sep}"count":{sep}{count},'
            f'{sep}"rank":{sep}{rank}}}')


def document(hilarious, horrible, total_h, total_b, computed_at, pretty):
    fields = [("week_id", quoted("all_time")),
              ("hilarious", hilarious), ("horrible", horrible),
              ("total_hilarious_ratings", str(total_h)),
              ("total_horrible_ratings", str(total_b)),
              ("computed_at", quoted(computed_at))]
    if not pretty:
        parts = []
        for key, value in fields:
            if isinstance(value, list):
                value = "[" + ",".join(entry(*e, "") for e in value) + "]"
            parts.append(f'"{key}":{value}')
        return "{" + ",".join(parts) + "}\n"
    parts = []
    for key, value in fields:
        if isinstance(value, list):
            if value:
                rows = ",\n".join("    " + entry(*e, " ") for e in value)
                value = "[\n" + rows + "\n  ]"
            else:
                value = "[]"
        parts.append(f'  "{key}": {value}')
    return "{\n" + ",\n".join(parts) + "\n}\n"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("inputs", nargs="+", metavar="INPUT")
    parser.add_argument("--top", type=int, default=10)
    parser.add_argument("--computed-at",
                        help="timestamp to print, YYYY-MM-DDTHH:MM:SSZ "
                             "(default: now)")
    parser.add_argument("--pretty", action="store_true",
                        help="two-space indented form, one entry per line")
    parser.add_argument("--stats", action="store_true",
                        help="print line and bad-line counts to stderr")
    parser.add_argument("-o", "--output", default="-")
    args = parser.parse_args(argv)

    if args.top < 0:
        parser.error("--top must be >= 0")
    computed_at = args.computed_at or datetime.datetime.now(
        datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    if not COMPUTED_AT.fullmatch(computed_at):
        parser.error("--computed-at must look like 2026-02-18T05:00:00Z")

    hilarious, horrible, stats = tally(args.inputs)
    text = document(ranked(hilarious, args.top), ranked(horrible, args.top),
                    sum(hilarious.values()), sum(horrible.values()),
                    computed_at, args.pretty)
    if args.output == "-":
        sys.stdout.buffer.write(text.encode("utf-8"))
    else:
        with open(args.output, "wb") as out:
            out.write(text.encode("utf-8"))
    if args.stats:
        print(f"reference.py: {stats['lines']} lines, "
              f"{stats['bad_lines']} bad lines", file=sys.stderr)


if __name__ == "__main__":
    main()
