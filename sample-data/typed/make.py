#!/usr/bin/env python3
"""Writes sample-data/typed/rating_events.typed.ndjson.gz: the events of
sample-data/rating_events.ndjson as Firestore typed JSON lines (one REST `Document` per line),
the form the REST API and Google's client libraries give, so that `rankings aggregate` on it
must write exactly sample-data/expected/all_time.json.

Every 50th event stays a flat line (a file may mix both forms); documents of other
collections, and of a `rating_events` subcollection, are added and must be left out.
Deterministic: run it again and the bytes are the same.

    python3 sample-data/typed/make.py
"""
import gzip, json, os, datetime

here = os.path.dirname(os.path.abspath(__file__))
root = os.path.dirname(os.path.dirname(here))
prefix = "projects/jokes-app/databases/(default)/documents/"


def rfc3339(seconds, nanos):
    t = datetime.datetime.fromtimestamp(seconds, tz=datetime.timezone.utc)
    return t.strftime("%Y-%m-%dT%H:%M:%S") + ("." + ("%09d" % nanos).rstrip("0") if nanos else "") + "Z"


def typed(event):
    fields = {
        "joke_id": {"stringValue": event["joke_id"]},
        "device_id": {"stringValue": event["device_id"]},
        "week_id": {"stringValue": event["week_id"]},
        "timestamp": {"timestampValue": rfc3339(event["timestamp"]["_seconds"], event["timestamp"]["_nanoseconds"])},
    }
    rating = event["rating"]
    # proto3 JSON writes int64 as a decimal string; doubles as numbers.
    fields["rating"] = {"integerValue": str(rating)} if isinstance(rating, int) else {"doubleValue": rating}
    return {"name": prefix + "rating_events/" + event["id"], "fields": fields,
            "createTime": "2026-02-15T00:00:00.000000Z", "updateTime": "2026-02-15T00:00:00.000000Z"}


lines = []
with open(os.path.join(root, "sample-data", "rating_events.ndjson"), encoding="utf-8") as f:
    for n, line in enumerate(f):
        event = json.loads(line)
        if n % 50 == 0:
            lines.append(line.rstrip("\n"))
            continue
        lines.append(json.dumps(typed(event), separators=(",", ":"), ensure_ascii=False))
        if n % 500 == 1:
            other = typed(event)
            other["name"] = prefix + "jokes/" + event["joke_id"]
            lines.append(json.dumps(other, separators=(",", ":")))
            sub = typed(event)
            sub["name"] = prefix + "jokes/" + event["joke_id"] + "/rating_events/" + event["id"]
            lines.append(json.dumps(sub, separators=(",", ":")))

out = os.path.join(here, "rating_events.typed.ndjson.gz")
with open(out, "wb") as raw:
    with gzip.GzipFile(fileobj=raw, mode="wb", mtime=0, filename="") as z:
        z.write(("\n".join(lines) + "\n").encode("utf-8"))
print(out, len(lines), "lines")
