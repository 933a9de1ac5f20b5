"""Seeds Google's Firestore emulator the way the app writes rating events, exports it with the
third-party tool `firestore-backup` (PyPI), converts the export with the one jq command of
docs/third-party-exports.md, runs `rankings aggregate` on the result, and compares its document
with the one the client's own reads of `rating_events` imply.

usage: python check.py RANKINGS EMULATOR_HOST:PORT WORKDIR   (run by run.sh, in its venv)
"""
import datetime
import json
import os
import re
import subprocess
import sys

from google.cloud import firestore
from google.cloud.firestore_v1 import DELETE_FIELD  # noqa: F401  (the client's own API, imported to fail early)

rankings, host, work = sys.argv[1:4]
root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
os.environ["FIRESTORE_EMULATOR_HOST"] = host
project = "rankings-backup-test"
db = firestore.Client(project=project)
passed = failed = 0


def check(name, ok, detail=""):
    global passed, failed
    if ok:
        passed += 1
        print(f"ok   {name}")
    else:
        failed += 1
        print(f"FAIL {name}{': ' + detail if detail else ''}")


# --- Seed, the way the app writes events (and a few things that are not events) -----------
utc = datetime.timezone.utc
base = datetime.datetime(2025, 9, 22, 8, 30, 15, 123456, tzinfo=utc)
jokes = ["LBcw2Dam9tSSPaIh0tG4", "ZX1Xw1a8FSgqz0Ki3qdg", "blague-é-😀", 'quote"back\\slash', "日本語のジョーク",
         "tab\tand\u2028sep", "z-last"]
events = db.collection("rating_events")
batch = db.batch()  # one commit, not a round trip per event: the test stays quick
n = 0
for k, joke in enumerate(jokes):
    for r in range(1, 6):
        for _ in range((k * 7 + r * 3) % 5 + 1):
            n += 1
            device = f"device-{n % 9}"
            when = base + datetime.timedelta(hours=n, microseconds=n)
            batch.set(events.document(f"{device}_{n}"), {
                "joke_id": joke, "rating": r, "device_id": device,
                "week_id": "2025-W39", "timestamp": when,
            })
batch.commit()
# Doubles, as older app versions wrote them, and ids that need escaping.
events.document("double-4.5").set({"joke_id": "z-last", "rating": 4.5, "timestamp": base})
events.document("double-2.0").set({"joke_id": "z-last", "rating": 2.0, "timestamp": base})
events.document("double-3.5").set({"joke_id": "blague-é-😀", "rating": 3.5})
events.document("double-near-5").set({"joke_id": "日本語のジョーク", "rating": 4.999999999999999})
events.document("id with spaces é").set({"joke_id": "z-last", "rating": 5})
# Overwritten and deleted events: only the client's current view counts.
events.document("overwritten").set({"joke_id": "z-last", "rating": 1})
events.document("overwritten").set({"joke_id": "LBcw2Dam9tSSPaIh0tG4", "rating": 5})
events.document("deleted").set({"joke_id": "z-last", "rating": 5})
events.document("deleted").delete()
# Typed values that are not events: each is a bad line for rankings.
not_events = {
    "rating-null": {"joke_id": "z-last", "rating": None},
    "rating-string": {"joke_id": "z-last", "rating": "5"},
    "rating-bool": {"joke_id": "z-last", "rating": True},
    "rating-timestamp": {"joke_id": "z-last", "rating": base},
    "rating-nan": {"joke_id": "z-last", "rating": float("nan")},
    "rating-7": {"joke_id": "z-last", "rating": 7},
    "joke-bytes": {"joke_id": b"z-last", "rating": 5},
    "joke-timestamp": {"joke_id": base, "rating": 5},
    "joke-empty": {"joke_id": "", "rating": 5},
    "joke-missing": {"rating": 5},
}
for doc, data in not_events.items():
    events.document(doc).set(data)
# Other collections and a rating_events subcollection: never counted.
db.collection("jokes").document("z-last").set({"joke_id": "z-last", "rating": 5, "text": "…"})
db.collection("jokes").document("z-last").collection("rating_events").document("sub").set(
    {"joke_id": "z-last", "rating": 5})
db.collection("rating_events_archive").document("a").set({"joke_id": "z-last", "rating": 5})

# --- The client's own view: what the document must say ------------------------------------
hilarious, horrible, bad = {}, {}, 0
docs = list(events.stream())
for snap in docs:
    d = snap.to_dict()
    joke, rating = d.get("joke_id"), d.get("rating")
    if (not isinstance(joke, str) or joke == "" or isinstance(rating, bool)
            or not isinstance(rating, (int, float)) or not 1 <= rating <= 5):
        bad += 1
        continue
    if rating >= 4:
        hilarious[joke] = hilarious.get(joke, 0) + 1
    elif rating <= 2:
        horrible[joke] = horrible.get(joke, 0) + 1


def top(counts):
    order = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0].encode()))[:10]
    return [{"joke_id": j, "count": c, "rank": i + 1} for i, (j, c) in enumerate(order)]


computed_at = "2026-02-18T00:00:00Z"
expected = {
    "week_id": "all_time",
    "hilarious": top(hilarious),
    "horrible": top(horrible),
    "total_hilarious_ratings": sum(hilarious.values()),
    "total_horrible_ratings": sum(horrible.values()),
    "computed_at": computed_at,
}
check("the client sees the seeded events", len(docs) == n + 5 + 1 + len(not_events), f"{len(docs)} documents")

# --- The third-party export, the documented jq command, rankings ---------------------------
os.chdir(work)
tool = os.path.join(os.path.dirname(sys.executable), "firestore-backup")
export = subprocess.run([tool, "export", "--emulator", host, "--project", project, "--format", "ndjson",
                         "-o", "firestore-dump.ndjson"], capture_output=True, text=True, stdin=subprocess.DEVNULL)
check("firestore-backup exports the emulator", export.returncode == 0, export.stderr[-2000:])
with open("firestore-dump.ndjson", encoding="utf-8") as f:
    dump = [json.loads(line) for line in f]
metas = [i for i, r in enumerate(dump) if r.get("type") == "meta"]
check("the dump is records between two meta lines", metas == [0, len(dump) - 1], f"meta lines at {metas}")
records = [r for r in dump if r.get("type") != "meta"]
top_level = {r["id"]: r for r in records if r.get("collection") == "rating_events"}
check("the dump holds every rating_events document the client reads",
      sorted(top_level) == sorted(s.id for s in docs), f"{len(top_level)} vs {len(docs)}")
check("and the subcollection's, and other collections', beside them",
      {r["collection"] for r in records} >= {"jokes", "jokes/z-last/rating_events", "rating_events_archive"})
# What the tool writes for each type (the jq command relies on these).
sample = top_level[f"device-1_1"]["data"]
check("integers are JSON integers", sample["rating"] == 1 and re.search(rb'"rating": 1[,}]', open(
    "firestore-dump.ndjson", "rb").read()) is not None)
check("doubles are JSON numbers with a fraction", top_level["double-2.0"]["data"]["rating"] == 2.0
      and '"rating": 2.0' in open("firestore-dump.ndjson", encoding="utf-8").read())
ts = top_level["double-4.5"]["data"]["timestamp"]
check("timestamps are {__fs_type__: timestamp, value: RFC 3339}",
      ts == {"__fs_type__": "timestamp", "value": "2025-09-22T08:30:15.123456Z"}, json.dumps(ts))
check("NaN is {__fs_type__: double, value: NaN}",
      top_level["rating-nan"]["data"]["rating"] == {"__fs_type__": "double", "value": "NaN"})
check("bytes are {__fs_type__: bytes, value: base64}",
      top_level["joke-bytes"]["data"]["joke_id"] == {"__fs_type__": "bytes", "value": "ei1sYXN0"})
check("unicode is written raw (UTF-8), not \\u-escaped",
      "blague-é-😀" in open("firestore-dump.ndjson", encoding="utf-8").read())

# Exactly the command the documentation shows, run by the shell.
doc = open(os.path.join(root, "docs", "third-party-exports.md"), encoding="utf-8").read()
commands = re.findall(r"^jq .*$", doc, re.M)
check("the documentation shows one jq command", len(commands) == 1, f"{len(commands)} found")
convert = subprocess.run(["bash", "-euo", "pipefail", "-c", commands[0]], capture_output=True, text=True)
check("the jq command succeeds", convert.returncode == 0, convert.stderr)
with open("rating_events.ndjson", encoding="utf-8") as f:
    lines = [json.loads(line) for line in f]
check("one line per top-level rating_events document", len(lines) == len(docs), f"{len(lines)}")
check("each line's id is its document's id", sorted(l["id"] for l in lines) == sorted(s.id for s in docs))
check("timestamps became RFC 3339 strings", next(l for l in lines if l["id"] == "double-4.5")["timestamp"]
      == "2025-09-22T08:30:15.123456Z")
check("a document without a timestamp has none", "timestamp" not in next(l for l in lines if l["id"] == "double-3.5"))

# The documents that are not events are bad lines, which fail a run unless allowed.
allow = ["--max-invalid", str(bad)]
run = subprocess.run([rankings, "aggregate", "--computed-at", computed_at, *allow, "-o", "all_time.json", "rating_events.ndjson"],
                     capture_output=True, text=True)
check("rankings aggregate exits 0", run.returncode == 0, f"{run.returncode}: {run.stderr[-2000:]}")
got = json.load(open("all_time.json", encoding="utf-8")) if os.path.exists("all_time.json") else None
check("the document is the one the client's view implies", got == expected,
      f"\n  got:      {json.dumps(got, ensure_ascii=False)}\n  expected: {json.dumps(expected, ensure_ascii=False)}")
bad_lines = re.search(r"(\d+) bad", run.stderr)
check(f"the {bad} documents that are not events are the bad lines", bad_lines is not None and int(bad_lines.group(1)) == bad,
      run.stderr[-2000:])
line_of = {l["id"]: k + 1 for k, l in enumerate(lines)}
reasons = {
    "rating-null": "rating is not a number", "rating-string": "rating is not a number",
    "rating-bool": "rating is not a number", "rating-timestamp": "rating is not a number",
    "rating-nan": "rating is not a number", "rating-7": "rating is not between 1 and 5",
    "joke-bytes": "joke_id is not a string", "joke-timestamp": "joke_id is not a string",
    "joke-empty": "joke_id is empty", "joke-missing": "no joke_id",
}
for doc, reason in reasons.items():
    shown = f"rating_events.ndjson:{line_of[doc]}: invalid record: {reason}"
    check(f"{doc} is a bad line: {reason}", shown in run.stderr.splitlines(), run.stderr[-2000:])
# --dedupe id reads the document id the jq command put in `id`: nothing is removed (ids are unique).
dedupe = subprocess.run([rankings, "aggregate", "--computed-at", computed_at, "--dedupe", "id", *allow, "rating_events.ndjson"],
                        capture_output=True, text=True)
check("--dedupe id gives the same document", dedupe.returncode == 0 and got is not None
      and json.loads(dedupe.stdout) == expected, dedupe.stderr[-2000:])

print(f"{passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
