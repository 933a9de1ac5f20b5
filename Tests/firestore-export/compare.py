"""Holds our reading of an emulator export (the dump ExportDumpForScript writes) to two others,
and prints one line per check and `N passed, M failed`:

- leveldb-export (PyPI), an independent reader of the same files, record for record: the same
  verdict (event, bad with the same reason, left out) and the same event fields;
- Google's client's own view of the collection (expected.ndjson from seed.py): the same events,
  the same bad reasons, the same number of other entities.

    compare.py OURS.ndjson EXPORT_ROOT EXPECTED.ndjson EXPECTED_LEFT_OUT RANKINGS   (leveldb-export's venv)

then damages copies of the export and runs RANKINGS on each (damage.py).
"""
import datetime
import glob
import json
import os
import sys

from leveldb_export import parse_leveldb_documents

import damage

MISSING = object()


def verdict(doc):
    """The rating_events rules applied to leveldb-export's typed values."""
    path = doc["_key"]["path"].split("/")
    if len(path) != 2 or path[0] != "rating_events":
        return {"verdict": "left out"}
    joke = doc.get("joke_id", MISSING)
    rating = doc.get("rating", MISSING)
    bad = None
    if joke is MISSING:
        bad = "no joke_id"
    elif not isinstance(joke, str):
        bad = "joke_id is not a string"
    elif joke == "":
        bad = "joke_id is empty"
    elif rating is MISSING:
        bad = "no rating"
    elif isinstance(rating, bool) or not isinstance(rating, (int, float)):
        bad = "rating is not a number"
    elif not (1 <= rating <= 5):
        bad = "rating is not between 1 and 5"
    if bad:
        return {"verdict": "bad", "reason": "invalid record: " + bad}
    key = doc["_key"]
    line = {"verdict": "event", "id": key["name"] if key["name"] is not None else str(key["id"]),
            "joke_id": joke, "rating": float(rating)}
    stamp = doc.get("timestamp", MISSING)
    if isinstance(stamp, datetime.datetime):
        delta = stamp.replace(tzinfo=None) - datetime.datetime(1970, 1, 1)
        line["timestamp_us"] = (delta.days * 86400 + delta.seconds) * 1_000_000 + delta.microseconds
    elif stamp is not MISSING:
        line["timestamp_unreadable"] = True
    for name in ("device_id", "week_id"):
        if isinstance(doc.get(name), str):
            line[name] = doc[name]
    return line


def comparable(line):
    out = {k: v for k, v in line.items() if k not in ("file", "record")}
    if "rating" in out:
        out["rating"] = float(out["rating"])
    return out


def main():
    ours_path, root, expected_path, left_out_path, rankings = sys.argv[1:6]
    passed = failed = 0

    def check(name, problem):
        nonlocal passed, failed
        if problem:
            failed += 1
            print(f"FAIL {name}: {problem}")
        else:
            passed += 1
            print(f"ok   {name}")

    ours = [json.loads(line) for line in open(ours_path, encoding="utf-8")]
    our_files = list(dict.fromkeys(line["file"] for line in ours))
    found = sorted(glob.glob(os.path.join(root, "all_namespaces", "*", "output-*")),
                   key=lambda p: int(p.rsplit("-", 1)[1]))
    check(f"the output files we read are those on disk ({len(found)})",
          None if [os.path.realpath(f) for f in our_files] == [os.path.realpath(f) for f in found]
          else f"ours {our_files}, on disk {found}")

    for path in found:
        theirs = [verdict(doc) for doc in parse_leveldb_documents(path)]
        mine = [comparable(line) for line in ours if os.path.realpath(line["file"]) == os.path.realpath(path)]
        problem = None
        if len(mine) != len(theirs):
            problem = f"{len(mine)} records, leveldb-export reads {len(theirs)}"
        else:
            for number, (a, b) in enumerate(zip(mine, theirs), 1):
                if a != b:
                    problem = f"record {number}: ours {a}, leveldb-export {b}"
                    break
        check(f"{os.path.relpath(path, root)}: {len(theirs)} records agree with leveldb-export", problem)

    expected = [json.loads(line) for line in open(expected_path, encoding="utf-8")]
    want_events = sorted((json.dumps({**{k: v for k, v in e.items()}, "verdict": "event"}, sort_keys=True)
                          for e in expected if "bad" not in e))
    got_events = sorted(json.dumps(comparable(line), sort_keys=True) for line in ours if line["verdict"] == "event")
    check(f"the {len(want_events)} events are those the client sees in rating_events",
          None if got_events == want_events else
          f"only ours: {sorted(set(got_events) - set(want_events))[:3]}, only the client's: {sorted(set(want_events) - set(got_events))[:3]}")
    want_bad = sorted("invalid record: " + e["bad"] for e in expected if "bad" in e)
    got_bad = sorted(line["reason"] for line in ours if line["verdict"] == "bad")
    check(f"the {len(want_bad)} bad records have the client's view's reasons",
          None if got_bad == want_bad else f"ours {got_bad}, expected {want_bad}")
    want_left = int(open(left_out_path).read())
    got_left = sum(1 for line in ours if line["verdict"] == "left out")
    check(f"{want_left} entities of other collections are left out",
          None if got_left == want_left else f"ours {got_left}")

    damage.run(check, root, rankings, len(ours))

    print(f"{passed} passed, {failed} failed")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
