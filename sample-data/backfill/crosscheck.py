#!/usr/bin/env python3
"""Checks the backfill golden files against an independent reading of the rules.

Plain Python on the json and zoneinfo modules, sharing nothing with the Swift
code. It compares meaning, not layout: each golden is parsed and its lists,
totals, week bounds and per-joke statistics are compared with what the rules
of issue 5 give for sample-data/rating_events.ndjson. The byte layout is
checked by the Swift tests; this script keeps the numbers honest.

    python3 sample-data/backfill/crosscheck.py
"""

import datetime
import fractions
import json
import os
import sys
import zoneinfo

HERE = os.path.dirname(os.path.abspath(__file__))
EVENTS = os.path.join(HERE, "..", "rating_events.ndjson")
TOP = 10


def instant(ts):
    """(seconds, nanoseconds) of an event's timestamp, or None."""
    if isinstance(ts, str):
        text = ts.replace("t", "T").replace("z", "Z").replace(" ", "T", 1)
        whole, _, rest = text.partition(".")
        try:
            if rest:
                digits = "".join(c for c in rest if c.isdigit())
                zone = rest[len(digits):]
                moment = datetime.datetime.fromisoformat(whole + zone.replace("Z", "+00:00"))
                nanos = int((digits + "000000000")[:9])
            else:
                moment = datetime.datetime.fromisoformat(whole.replace("Z", "+00:00"))
                nanos = 0
        except ValueError:
            return None
        return int(moment.timestamp()), nanos
    if isinstance(ts, dict):
        if "_seconds" in ts:
            s, n = ts["_seconds"], ts.get("_nanoseconds", 0)
        else:
            s, n = ts.get("seconds"), ts.get("nanoseconds", 0)
        if type(s) is int and type(n) is int and 0 <= n <= 999_999_999:
            return s, n
    return None


def events():
    with open(EVENTS, "rb") as f:
        for order, line in enumerate(f):
            yield order, json.loads(line)


def kind(rating):
    return "hilarious" if rating >= 4 else "horrible" if rating <= 2 else "neutral"


def select(as_of=None, week=None, dedupe=None, since=None):
    chosen = []
    for order, e in events():
        if as_of is not None and instant(e["timestamp"]) > as_of:
            continue
        if since is not None and instant(e["timestamp"]) < since:
            continue
        if week is not None and e.get("week_id") != week:
            continue
        chosen.append((order, e))
    if dedupe == "device":
        latest = {}
        for order, e in chosen:
            key = (e["device_id"], e["joke_id"])
            rank = (instant(e["timestamp"]), order)
            if key not in latest or rank >= latest[key][0]:
                latest[key] = (rank, e)
        chosen = [(rank[1], e) for rank, e in latest.values()]
    return [e for _, e in chosen]


def per_joke(chosen):
    jokes = {}
    for e in chosen:
        j = jokes.setdefault(e["joke_id"], {"hilarious": 0, "horrible": 0, "neutral": 0, "ratings": []})
        j[kind(e["rating"])] += 1
        j["ratings"].append(e["rating"])
    return jokes


def expected_document(chosen, week_id="all_time"):
    jokes = per_joke(chosen)
    def ranked(which):
        rows = sorted(((-j[which], k.encode()), k, j[which]) for k, j in jokes.items() if j[which] > 0)
        return [{"joke_id": k, "count": c, "rank": r} for r, (_, k, c) in enumerate(rows[:TOP], start=1)]
    return {
        "week_id": week_id,
        "hilarious": ranked("hilarious"),
        "horrible": ranked("horrible"),
        "total_hilarious_ratings": sum(j["hilarious"] for j in jokes.values()),
        "total_horrible_ratings": sum(j["horrible"] for j in jokes.values()),
        "computed_at": "2026-02-18T05:00:00Z",
    }


def week_bounds(week_id, zone):
    year, week = int(week_id[:4]), int(week_id[6:])
    monday = datetime.date.fromisocalendar(year, week, 1)
    tz = zoneinfo.ZoneInfo(zone)
    start = datetime.datetime.combine(monday, datetime.time(), tz)
    end = datetime.datetime.combine(monday + datetime.timedelta(days=7), datetime.time(), tz)
    end -= datetime.timedelta(milliseconds=1)
    fmt = lambda t: t.astimezone(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"
    return fmt(start), fmt(end)


def load(name):
    with open(os.path.join(HERE, name), "rb") as f:
        return json.loads(f.read())


def check(name, actual, expected):
    if actual != expected:
        if isinstance(actual, list) and len(actual) == len(expected):
            for a, e in zip(actual, expected):
                if a != e:
                    print(f"MISMATCH {name}:\n  expected {e}\n  actual   {a}")
        else:
            print(f"MISMATCH {name}: expected {len(expected)} entries, got {len(actual)}")
        return False
    print(f"ok {name}")
    return True


def main():
    good = True
    as_of = instant("2025-06-01T00:00:00Z")
    good &= check("as-of-2025-06-01.json", load("as-of-2025-06-01.json"), expected_document(select(as_of=as_of)))

    # --since -30d with --computed-at 2026-02-18T05:00:00Z: 30 x 24 h earlier.
    since = instant("2026-01-19T05:00:00Z")
    good &= check("since-30d.json", load("since-30d.json"), expected_document(select(since=since)))

    # The same window as the document of the week holding computed_at: 2026-02-18 00:00 in
    # New York is a Wednesday of ISO week 2026-W08.
    computed_at = datetime.datetime.fromisoformat("2026-02-18T05:00:00+00:00")
    here = computed_at.astimezone(zoneinfo.ZoneInfo("America/New_York")).isocalendar()
    week_id = f"{here.year:04d}-W{here.week:02d}"
    window = expected_document(select(since=since), week_id)
    window["week_start"], window["week_end"] = week_bounds(week_id, "America/New_York")
    good &= check("since-30d.week-document.json", load("since-30d.week-document.json"), window)

    week = expected_document(select(week="2025-W42"), "2025-W42")
    week["week_start"], week["week_end"] = week_bounds("2025-W42", "America/New_York")
    good &= check("week-2025-W42.json", load("week-2025-W42.json"), week)

    good &= check("dedupe-device.json", load("dedupe-device.json"), expected_document(select(dedupe="device")))

    week = expected_document(select(week="2025-W42", dedupe="device"), "2025-W42")
    week["week_start"], week["week_end"] = week_bounds("2025-W42", "America/New_York")
    good &= check("week-2025-W42.dedupe-device.json", load("week-2025-W42.dedupe-device.json"), week)

    for name, chosen in [("stats.ndjson", select()),
                         ("week-2025-W42.dedupe-device.stats.ndjson", select(week="2025-W42", dedupe="device"))]:
        with open(os.path.join(HERE, name), "rb") as f:
            lines = [json.loads(line) for line in f]
        expected = []
        jokes = per_joke(chosen)
        for k in sorted(jokes, key=lambda k: k.encode()):
            j = jokes[k]
            mean = fractions.Fraction(sum(j["ratings"]), len(j["ratings"]))
            expected.append({"joke_id": k, "hilarious": j["hilarious"], "horrible": j["horrible"],
                             "neutral": j["neutral"], "ratings": len(j["ratings"]), "mean_rating": float(mean)})
        good &= check(name, lines, expected)
    return 0 if good else 1


if __name__ == "__main__":
    sys.exit(main())
