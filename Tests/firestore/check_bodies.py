#!/usr/bin/env python3
"""Parses every Firestore body `rankings aggregate --format firestore` writes with Google's own
types, and compares the parsed values with the JSON document of the same run.

Run by Tests/firestore/run.sh inside its virtual environment: check_bodies.py RANKINGS
"""

import datetime
import json
import os
import subprocess
import sys
import tempfile

from google.cloud.firestore_v1.types import Document

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
SAMPLE = os.path.join(ROOT, "sample-data", "rating_events.ndjson")
ODD_IDS = os.path.join(ROOT, "sample-data", "firestore", "odd-ids.ndjson")
COMPUTED_AT = "2026-02-18T05:00:00Z"

# The Firestore type each field of the rankings document must have.
TIMESTAMPS = {"computed_at", "week_start", "week_end"}
INTEGERS = {"total_hilarious_ratings", "total_horrible_ratings", "count", "rank"}

# (name, aggregate arguments, input)
RUNS = [
    ("all_time", [], SAMPLE),
    ("weekly 2025-W42", ["--week", "2025-W42"], SAMPLE),
    ("weekly 2025-W42 in Berlin", ["--week", "2025-W42", "--time-zone", "Europe/Berlin"], SAMPLE),
    ("since -30d", ["--since", "-30d"], SAMPLE),
    ("since -30d as the week's document", ["--since", "-30d", "--week-document"], SAMPLE),
    ("empty (--allow-empty)", ["--since", "2030-01-01T00:00:00Z", "--allow-empty"], SAMPLE),
    ("--top 1", ["--top", "1"], SAMPLE),
    ("--top 1000", ["--top", "1000"], SAMPLE),
    ("--dedupe device --as-of", ["--dedupe", "device", "--as-of", "2025-06-01T00:00:00Z"], SAMPLE),
    ("computed_at with milliseconds", ["--computed-at", "2026-02-18T05:00:00.25-05:00"], SAMPLE),
    ("odd joke ids --top 1000", ["--top", "1000"], ODD_IDS),
]

# (firestore golden, JSON golden), under sample-data/
GOLDENS = [
    ("firestore/all_time.json", "expected/all_time.json"),
    ("firestore/week-2025-W42.json", "backfill/week-2025-W42.json"),
    ("firestore/since-30d.json", "backfill/since-30d.json"),
    ("firestore/since-30d.week-document.json", "backfill/since-30d.week-document.json"),
]

# Bodies the parser must refuse, so a pass above means something.
REFUSED = [
    ("unknown field", '{"fields": {"a": {"stringValue": "x", "note": 1}}}'),
    ("integer with a fraction", '{"fields": {"a": {"integerValue": "3.5"}}}'),
    ("timestamp without a zone", '{"fields": {"a": {"timestampValue": "2026-02-18T05:00:00"}}}'),
]


def parsed_value(value):
    """A google.firestore.v1.Value (protobuf) as (type, Python value)."""
    kind = value.WhichOneof("value_type")
    if kind == "string_value":
        return ("stringValue", value.string_value)
    if kind == "integer_value":
        return ("integerValue", value.integer_value)
    if kind == "timestamp_value":
        return ("timestampValue", (value.timestamp_value.seconds, value.timestamp_value.nanos))
    if kind == "array_value":
        return ("arrayValue", [parsed_value(v) for v in value.array_value.values])
    if kind == "map_value":
        return ("mapValue", {k: parsed_value(v) for k, v in value.map_value.fields.items()})
    return (kind, None)


def instant(text):
    moment = datetime.datetime.fromisoformat(text.replace("Z", "+00:00"))
    whole = moment.replace(microsecond=0)
    return (int(whole.timestamp()), moment.microsecond * 1000)


def expected_value(key, value):
    """What the JSON document's `key: value` must parse to in Firestore's types."""
    if key in TIMESTAMPS:
        return ("timestampValue", instant(value))
    if key in INTEGERS:
        return ("integerValue", value)
    if isinstance(value, str):
        return ("stringValue", value)
    if isinstance(value, list):
        return ("arrayValue", [("mapValue", {k: expected_value(k, v) for k, v in e.items()}) for e in value])
    raise ValueError(f"unexpected {key}: {value!r}")


def compare(body_text, json_text):
    """None when the body parses and carries the JSON document's content; else why not."""
    document = Document.pb(Document.from_json(body_text))
    parsed = {k: parsed_value(v) for k, v in document.fields.items()}
    plain = json.loads(json_text)
    expected = {k: expected_value(k, v) for k, v in plain.items()}
    if parsed != expected:
        for key in expected:
            got, want = parsed.get(key), expected[key]
            if got != want:
                if got and got[0] == want[0] == "arrayValue" and len(got[1]) == len(want[1]):
                    index = next(i for i, (a, b) in enumerate(zip(got[1], want[1])) if a != b)
                    key, got, want = f"{key}[{index}]", got[1][index], want[1][index]
                return f"{key}: parsed {got!r}, expected {want!r}"
        return f"parsed keys {sorted(parsed)}, expected {sorted(expected)}"
    # The map is unordered once parsed; the body's own text keeps the document's order.
    order = list(json.loads(body_text)["fields"])
    if order != list(plain):
        return f"field order {order}, expected {list(plain)}"
    return None


def summary(body_text):
    fields = Document.pb(Document.from_json(body_text)).fields
    parts = []
    for key, value in fields.items():
        kind, content = parsed_value(value)
        if kind == "arrayValue":
            first = content[0][1] if content else None
            shown = {k: v[1] for k, v in first.items()} if first else "none"
            parts.append(f"{key}: {kind} of {len(content)}, first {shown}")
        elif kind == "timestampValue":
            when = datetime.datetime.fromtimestamp(content[0], datetime.timezone.utc)
            parts.append(f"{key}: {kind} {when.isoformat()} (+{content[1]} ns)")
        else:
            parts.append(f"{key}: {kind} {content!r}")
    return "\n".join("    " + p for p in sorted(parts))


def main():
    rankings = os.path.abspath(sys.argv[1])
    passed = failed = 0

    def outcome(name, problem, detail=None):
        nonlocal passed, failed
        if problem is None:
            passed += 1
            print(f"ok   {name}")
            if detail:
                print(detail)
        else:
            failed += 1
            print(f"FAIL {name}: {problem}")

    with tempfile.TemporaryDirectory() as scratch:
        for name, arguments, source in RUNS:
            texts = {}
            for fmt in ("json", "firestore"):
                path = os.path.join(scratch, fmt)
                run = subprocess.run([rankings, "aggregate", "-q", "--computed-at", COMPUTED_AT, *arguments,
                                      "--format", fmt, "-o", path, source], capture_output=True, text=True)
                if run.returncode != 0:
                    texts = None
                    outcome(name, f"aggregate --format {fmt} exited {run.returncode}: {run.stderr.strip()}")
                    break
                with open(path, encoding="utf-8") as f:
                    texts[fmt] = f.read()
            if texts is None:
                continue
            try:
                problem = compare(texts["firestore"], texts["json"])
            except Exception as error:  # the parser's refusal is the finding
                problem = f"{type(error).__name__}: {error}"
            outcome(name, problem, summary(texts["firestore"]) if name == "all_time" and problem is None else None)

        for body, plain in GOLDENS:
            with open(os.path.join(ROOT, "sample-data", body), encoding="utf-8") as f:
                body_text = f.read()
            with open(os.path.join(ROOT, "sample-data", plain), encoding="utf-8") as f:
                json_text = f.read()
            try:
                problem = compare(body_text, json_text)
            except Exception as error:
                problem = f"{type(error).__name__}: {error}"
            outcome(f"golden {body} = {plain}", problem)

        for name, body in REFUSED:
            try:
                Document.from_json(body)
                problem = "accepted"
            except Exception:
                problem = None
            outcome(f"refused: {name}", problem)

    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
