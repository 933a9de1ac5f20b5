"""Seeds a running Firestore emulator the way the jokes app writes votes, plus everything an
export may hold that is not a vote, then asks the emulator for managed exports of it.

    seed.py HOST:PORT PROJECT OUT_DIR [VOTES]

VOTES more plain votes (default 0) make the export big enough for several output files: the
emulator starts a new output-N every 5,000 entities or so.

Writes, under OUT_DIR:
  all/            the emulator's export of every collection (all_namespaces/all_kinds/); the
                  emulator's export takes no collection filter (its request has only database,
                  export_directory and export_name), so it never writes kind_rating_events/
  expected.ndjson what the client's own view of the top-level rating_events collection implies,
                  one line per document, sorted by document id (see expected_line)
  expected-left-out  how many other entities the export holds (other collections, and the
                  rating_events subcollection under a joke), which the reader leaves out
"""
import datetime
import json
import os
import sys
import urllib.request

from google.api_core.client_options import ClientOptions  # noqa: F401
from google.auth.credentials import AnonymousCredentials
from google.cloud import firestore
from google.cloud.firestore_v1 import GeoPoint

UTC = datetime.timezone.utc


def when(seconds, micros=0):
    return datetime.datetime.fromtimestamp(seconds, UTC) + datetime.timedelta(microseconds=micros)


def vote(joke, rating, second, device="device-1", week="2026-W47", **extra):
    doc = {"joke_id": joke, "rating": rating, "timestamp": when(1763900000 + second, 123456),
           "device_id": device, "week_id": week}
    doc.update(extra)
    return doc


def seed(db):
    events = db.collection("rating_events")
    plain = {
        "e01": vote("j1", 5, 1),
        "e02": vote("j1", 4, 2, device="device-2"),
        "e03": vote("j2", 1, 3),
        "e04": vote("j2", 4.5, 4),                     # a double
        "e05": vote("j3", 1.0, 5),                     # a double with an integral value
        "e06": vote("j3", 2, 6, week="2026-W48"),
        "événement-ü-😀": vote("jöke-ü", 5, 7),       # unicode id and joke id
        'quote"back\\slash\ttab': vote("j1", 3, 8),   # an id JSON would escape
        "big": vote("j4", 3, 9, note="x" * 100_000),  # spans four 32 KiB blocks
        "no-extras": {"joke_id": "j4", "rating": 2},   # no timestamp, device or week
        "overwritten": vote("j2", 1, 10),
        "deleted": vote("j2", 5, 11),
        # Not votes: each is a bad record with the NDJSON rules' reason.
        "bad-bool": vote("j1", True, 20),
        "bad-null": vote("j1", None, 21),
        "bad-map": vote("j1", {"value": 5}, 22),
        "bad-array": vote("j1", [5], 23),
        "bad-bytes": vote("j1", b"5", 24),
        "bad-reference": vote("j1", db.document("jokes/j1"), 25),
        "bad-geo": vote("j1", GeoPoint(51.5, -0.12), 26),
        "bad-string": vote("j1", "5", 27),
        "bad-timestamp": vote("j1", when(5), 28),
        "bad-zero": vote("j1", 0, 29),
        "bad-six": vote("j1", 6.0, 30),
        "bad-nan": vote("j1", float("nan"), 31),
        "bad-no-rating": {"joke_id": "j1"},
        "bad-no-joke": {"rating": 5},
        "bad-empty-joke": vote("", 5, 32),
        "bad-bytes-joke": vote(b"j1", 5, 33),
        "bad-int-joke": vote(7, 5, 34),
        "bad-null-joke": vote(None, 5, 35),
    }
    for doc_id, doc in plain.items():
        events.document(doc_id).set(doc)
    events.document("overwritten").set(vote("j2", 5, 12))
    events.document("deleted").delete()
    # Not in the top-level collection: left out, never bad.
    db.collection("jokes").document("j1").set({"text": "a joke", "rating": 5, "joke_id": "j1"})
    db.collection("jokes").document("j1").collection("rating_events").document("sub1").set(vote("j1", 5, 40))
    db.collection("users").document("u1").set({"name": "someone", "tags": ["a", "b"], "n": 3})


def seed_many(db, count):
    events = db.collection("rating_events")
    for start in range(0, count, 500):
        batch = db.batch()
        for i in range(start, min(count, start + 500)):
            batch.set(events.document(f"v{i:06d}"), vote(f"joke-{i % 97}", i % 5 + 1, 100 + i, device=f"device-{i % 13}"))
        batch.commit()


def reason(doc):
    joke = doc.get("joke_id", KeyError)
    if joke is KeyError:
        return "no joke_id"
    if not isinstance(joke, str):
        return "joke_id is not a string"
    if joke == "":
        return "joke_id is empty"
    rating = doc.get("rating", KeyError)
    if rating is KeyError:
        return "no rating"
    if isinstance(rating, bool) or not isinstance(rating, (int, float)):
        return "rating is not a number"
    if not (1 <= rating <= 5):
        return "rating is not between 1 and 5"
    return None


def micros(value):
    if not isinstance(value, datetime.datetime):
        return None
    delta = value - datetime.datetime(1970, 1, 1, tzinfo=UTC)
    return (delta.days * 86400 + delta.seconds) * 1_000_000 + delta.microseconds


def expected_line(snapshot):
    """One document as the export reader must see it: an event, or a bad record's reason."""
    doc = snapshot.to_dict()
    line = {"id": snapshot.id}
    why = reason(doc)
    if why:
        line["bad"] = why
        return line
    line["joke_id"] = doc["joke_id"]
    line["rating"] = float(doc["rating"])
    for key in ("device_id", "week_id"):
        if isinstance(doc.get(key), str):
            line[key] = doc[key]
    if micros(doc.get("timestamp")) is not None:
        line["timestamp_us"] = micros(doc["timestamp"])
    return line


def export(host, project, directory):
    os.makedirs(directory, exist_ok=True)
    body = {"database": f"projects/{project}/databases/(default)", "export_directory": directory}
    request = urllib.request.Request(f"http://{host}/emulator/v1/projects/{project}:export",
                                     data=json.dumps(body).encode(), method="POST",
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request) as response:
        return json.loads(response.read() or b"{}")


def main():
    host, project, out = sys.argv[1], sys.argv[2], os.path.abspath(sys.argv[3])
    os.environ["FIRESTORE_EMULATOR_HOST"] = host
    db = firestore.Client(project=project, credentials=AnonymousCredentials())
    seed(db)
    seed_many(db, int(sys.argv[4]) if len(sys.argv) > 4 else 0)
    lines = [expected_line(s) for s in db.collection("rating_events").stream()]
    lines.sort(key=lambda line: line["id"].encode())
    left_out = sum(1 for _ in db.collection("jokes").stream()) + sum(1 for _ in db.collection("users").stream()) \
        + sum(1 for _ in db.collection_group("rating_events").stream()) - len(lines)
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "expected.ndjson"), "w", encoding="utf-8") as f:
        for line in lines:
            f.write(json.dumps(line, ensure_ascii=False, sort_keys=True) + "\n")
    print(json.dumps(export(host, project, os.path.join(out, "all"))))
    with open(os.path.join(out, "expected-left-out"), "w", encoding="utf-8") as f:
        f.write(f"{left_out}\n")


if __name__ == "__main__":
    main()
