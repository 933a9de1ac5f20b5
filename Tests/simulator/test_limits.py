"""The simulator's own promises, which Google's emulator cannot check: production's limits fire as
configured (a readTime's life, COUNT's deadline, a stream's pace, 429 bursts), what it served is
counted, its COUNTs by kind are the scans', partitionQuery cuts the collection where its votes
are, ten million votes cost nothing to hold, and the command serves and writes the generator's
votes. The waits are lower bounds a slow machine cannot break, never upper ones."""
import json
import os
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

import harness  # noqa: E402
from simulator import times  # noqa: E402
from simulator.firestore_sim import FirestoreSimulator  # noqa: E402
from simulator.rest import Client, both, name, query, since  # noqa: E402
from simulator.store import Query  # noqa: E402

PROJECT = "limits"
RANKINGS = os.environ.get("SIMULATOR_RANKINGS") or os.path.join(harness.ROOT, ".build", "debug", "rankings")
COMMAND = [sys.executable, os.path.join(HERE, "firestore_sim.py"), "--project", PROJECT]
TOO_OLD = {"error": {"code": 400, "message": "The requested 'read_time' is too old.", "status": "FAILED_PRECONDITION"}}
TIMED_OUT = {"error": {"code": 504, "status": "DEADLINE_EXCEEDED",
                       "message": "The datastore operation timed out, or the data was temporarily unavailable."}}


def ago(client, seconds):
    return times.format(times.parse(client.now()) - round(seconds * times.SECOND))


def vote(joke, rating, stamp="2026-11-01T00:00:00Z"):
    return {"joke_id": {"stringValue": joke}, "rating": {"integerValue": str(rating)},
            "device_id": {"stringValue": "d"}, "week_id": {"stringValue": "w"}, "timestamp": {"timestampValue": stamp}}


class Limits(harness.Case):
    def setUp(self):
        self.sims = []

    def tearDown(self):
        for sim in self.sims:
            sim.stop()

    def start(self, documents=300, **settings):
        self.sims.append(FirestoreSimulator(documents, project=PROJECT, **settings).start())
        return self.sims[-1], Client(self.sims[-1].address, PROJECT)

    def test_a_read_time_lives_read_time_life_seconds(self):
        sim, client = self.start(read_time_life=60)
        self.expect("a page at 30 s ago", client.query(query(limit=3), ago(client, 30))[0], 200)
        self.expect("a COUNT at 59 s ago", client.counted(query(), ago(client, 59)), 300)
        self.expect("a page and a COUNT at 61 s ago", [client.query(query(limit=3), ago(client, 61))[::2],
                                                       client.count(query(), ago(client, 61))[::2]],
                    [(400, TOO_OLD)] * 2)

    def test_a_count_past_its_limit_exceeds_the_deadline_and_what_was_served(self):
        sim, client = self.start(count_max=100, count_deadline=0.2)
        low, high = (f"{client.root}/rating_events/{sim.votes.id(i)}" for i in (0, 100))
        self.expect("a COUNT of 100", client.counted(query(both(name("GREATER_THAN_OR_EQUAL", low),
                                                                 name("LESS_THAN", high)))), 100)
        started = time.monotonic()
        self.expect("a COUNT of 300", client.count(query())[::2], (504, TIMED_OUT))
        self.assertGreaterEqual(time.monotonic() - started, 0.2, "it fails at the deadline")
        self.expect("a COUNT of timestamp >= vote 150's (150)",
                    client.count(query(since(times.format(sim.votes.timestamp(150)))))[::2], (504, TIMED_OUT))
        self.expect("pages are not counted", [len(client.query(query(limit=l))[2]) for l in (300, 120)], [300, 120])
        self.expect("served", sim.served(), {"pages": [300, 120], "counts": [100, None, None], "faults": 0})

    def test_the_proofs_counts_by_kind_are_the_scans(self):
        """A COUNT on joke_id and rating alone (the board's proof's) is answered from the votes'
        index of kinds less the writes over them: the same number as counting each vote, for jokes
        with votes re-rated away, re-rated to, deleted and added, ratings as a double and a string,
        in and out of a window and a name range, before, between and after."""
        from rankings_night.proof import KINDS, kind_filter
        sim, _ = self.start(documents=2000, seed=5)
        votes, db = sim.votes, sim.db
        jokes = sorted({votes.kind(i)[0] for i in range(votes.n)})[::12] + ["re-rated-to", "new-joke", "no-such-joke"]
        at = {"before": db.now()}
        time.sleep(0.002)
        sim.commit([(f"rating_events/{votes.id(i)}", vote("re-rated-to", 1 + i % 5)) for i in range(0, 2000, 37)]
                   + [(f"rating_events/{votes.id(i)}", None) for i in range(5, 2000, 41)]
                   + [(f"rating_events/00000-new-{i}", vote(jokes[i % len(jokes)], 1 + i % 5)) for i in range(40)]
                   + [("rating_events/00000-double", dict(vote(jokes[0], 4), rating={"doubleValue": 4.5})),
                      ("rating_events/00000-string", dict(vote(jokes[0], 5), rating={"stringValue": "5"}))])
        at["between"] = db.now()
        time.sleep(0.002)
        sim.commit([(f"rating_events/{votes.id(i)}", vote(jokes[1], 5, "2026-11-02T00:00:00Z"))
                    for i in range(0, 2000, 74)] + [("rating_events/00000-new-3", None)])
        at["after"] = db.now()
        root = f"{db.root}/rating_events"
        windows = [None, since(times.format(votes.timestamp(700))), both(
            name("GREATER_THAN_OR_EQUAL", f"{root}/{votes.id(300)}"), name("LESS_THAN", f"{root}/{votes.id(1500)}"))]
        compared = 0
        for label, read_time in at.items():
            for where in windows:
                for joke in [None] + jokes:
                    for kind, _, _ in KINDS:
                        counting = Query(query(kind_filter(kind, joke, where)), db)
                        scanned = counting.count(read_time, scan=True)
                        self.expect(f"{joke}'s {kind} in {where} at {label}", counting.count(read_time), scanned)
                        compared += scanned
        self.expect("the answers count votes, the index of kinds made", (compared > 10_000, votes._kinds is not None),
                    (True, True))

    def test_a_stream_pages_at_its_rate(self):
        sim, client = self.start(stream_rate=100)
        started = time.monotonic()
        self.expect("a page", len(client.query(query(by=("__name__",), limit=50))[2]), 50)
        self.assertGreaterEqual(time.monotonic() - started, 0.5, "50 documents at 100 a second take 0.5 s")

    def test_load_is_answered_429(self):
        sim, client = self.start(fault_every=3, retry_after=2)
        answers = [client.query(query(limit=1)) for _ in range(6)]
        self.expect("statuses", [status for status, _, _ in answers], [200, 200, 429, 200, 200, 429])
        self.expect("the 429", (answers[2][2], answers[2][1].get("Retry-After")), (
            {"error": {"code": 429, "message": "Quota exceeded.", "status": "RESOURCE_EXHAUSTED"}}, "2"))
        self.expect("served", sim.served(), {"pages": [1] * 4, "counts": [], "faults": 2})

    def test_partition_query_cuts_the_collection_where_its_votes_are(self):
        sim, client = self.start(documents=7000, read_time_life=60)
        body = {"structuredQuery": {"from": [{"collectionId": "rating_events", "allDescendants": True}],
                                    "orderBy": [{"field": {"fieldPath": "__name__"}, "direction": "ASCENDING"}]},
                "partitionCount": "6", "readTime": client.now()}
        status, _, answer = client.call("POST", "/documents:partitionQuery", body)
        self.expect("cursors", (status, [c["values"][0]["referenceValue"] for c in answer["partitions"]]),
                    (200, [f"{client.root}/rating_events/{sim.votes.id(1000 * k)}" for k in range(1, 7)]))
        self.expect("at a readTime older than its life", client.call(
            "POST", "/documents:partitionQuery", dict(body, readTime=ago(client, 61)))[::2], (400, TOO_OLD))

    def aggregate(self, source):
        done = harness.run([RANKINGS, "aggregate", "--quiet", "--top", "1000", "--computed-at",
                            "2026-11-27T00:00:00Z", source])
        self.expect_exit(done, 0)
        return json.loads(done.stdout)

    def test_ten_million_votes(self):
        sim, client = self.start(documents=10_000_000)
        votes = sim.votes
        self.expect("COUNT", client.counted(query()), 10_000_000)
        tail = name("GREATER_THAN_OR_EQUAL", f"{client.root}/rating_events/{votes.id(9_999_990)}")
        self.expect("the last page", [i["document"]["name"].rsplit("/", 1)[1] for i in client.query(
            query(tail, ("__name__",), 100))[2]], [votes.id(i) for i in range(9_999_990, 10_000_000)])
        after = since(times.format(votes.timestamp(9_000_000)))
        first = min(i for i in range(8_999_000, 9_000_001) if votes.timestamp(i) == votes.timestamp(9_000_000))
        self.expect("COUNT since vote 9,000,000's timestamp", client.counted(query(after)), 10_000_000 - first)
        self.expect("the first page since then", [i["document"]["name"].rsplit("/", 1)[1] for i in client.query(
            query(after, ("timestamp", "__name__"), 2))[2]], [votes.id(first), votes.id(first + 1)])

    def test_the_command_serves_and_writes_the_generators_votes(self):
        sim, _ = self.start(documents=2000, seed=3)
        with tempfile.TemporaryDirectory() as folder:
            path, again = os.path.join(folder, "votes.ndjson"), os.path.join(folder, "again.ndjson")
            self.expect("votes written", sim.write_ndjson(path, generated=True), 2000)
            with open(path, encoding="utf-8") as lines:
                documents = [json.loads(line) for line in lines]
            stamps = [times.parse(d["fields"]["timestamp"]["timestampValue"]) for d in documents]
            self.expect("names strictly increasing, timestamps never decreasing, ratings", (
                all(x["name"] < y["name"] for x, y in zip(documents, documents[1:])),
                all(x <= y for x, y in zip(stamps, stamps[1:])),
                sorted({d["fields"]["rating"]["integerValue"] for d in documents})),
                (True, True, ["1", "2", "3", "4", "5"]))
            board = self.aggregate(path)
            self.expect("the board counts every vote but the neutral 3s",
                        board["total_hilarious_ratings"] + board["total_horrible_ratings"],
                        sum(d["fields"]["rating"]["integerValue"] != "3" for d in documents))
            self.expect_exit(harness.run(COMMAND + ["--documents", "2000", "--seed", "3", "--end", times.format(
                sim.votes.end), "--genesis", times.format(sim.genesis), "--write-ndjson", again]), 0)
            with open(path, "rb") as one, open(again, "rb") as other:
                self.expect("the command's NDJSON is the same bytes", one.read() == other.read(), True)
        server = subprocess.Popen(COMMAND + ["--documents", "1000", "--count-max", "10", "--count-deadline", "0"],
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            client = Client(server.stdout.readline().strip(), PROJECT)
            self.expect("a page", len(client.query(query(limit=7))[2]), 7)
            self.expect("a COUNT over --count-max", client.count(query())[0], 504)
            status, _, answer = client.call("POST", "/simulator/votes", {"votes": [
                {"id": "zz-vote", "joke_id": "j", "rating": 5}, {"id": "zz-vote", "joke_id": "j", "rating": 1}]})
            self.expect("votes by the control endpoint", (status, len(answer["commitTimes"])), (200, 2))
            self.expect("the vote", client.query(query(name("EQUAL", f"{client.root}/rating_events/zz-vote")))[2][0][
                "document"]["fields"]["rating"], {"integerValue": "1"})
        finally:
            server.send_signal(signal.SIGTERM)
            said = server.communicate(timeout=30)[1]
        self.expect("exit status on SIGTERM", server.returncode, 0)
        self.expect_in("its line", "1000 votes in projects/limits/databases/(default)/documents/rating_events", said)


if __name__ == "__main__":
    harness.main()
