"""The simulator's own promises, which Google's emulator cannot check: production's limits fire
as configured (a readTime's life, with and without point-in-time recovery; COUNT's deadline; a
stream's pace; 429 and 503 under load), what it served is counted, exportDocuments writes a
managed export of the votes at its snapshotTime, ten million votes cost nothing to hold, the
generator's votes come out as NDJSON that `rankings aggregate` reads, and the standalone command
serves and stops. The waits here are lower bounds that a slow machine cannot break, never upper
ones."""
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

import harness  # noqa: E402
from simulator import agreement as a, times  # noqa: E402
from simulator.firestore_sim import FirestoreSimulator  # noqa: E402
from simulator.rest import Client  # noqa: E402

PROJECT = "limits"
RANKINGS = os.environ.get("SIMULATOR_RANKINGS") or os.path.join(harness.ROOT, ".build", "debug", "rankings")
MINUTE = 60 * times.SECOND


def simulator(**settings):
    settings.setdefault("documents", 300)
    return FirestoreSimulator(project=PROJECT, **settings).start()


def ago(client, seconds):
    return times.format(times.parse(client.now()) - round(seconds * times.SECOND))


def minute_before(client, seconds):
    """The whole minute at least `seconds` before the server's now."""
    micros = times.parse(client.now()) - round(seconds * times.SECOND)
    return times.format(micros - micros % MINUTE)


class Limits(harness.Case):
    def setUp(self):
        self.sims = []

    def tearDown(self):
        for sim in self.sims:
            sim.stop()

    def start(self, **settings):
        sim = simulator(**settings)
        self.sims.append(sim)
        return sim, Client(sim.address, PROJECT)

    def refused(self, what, answer, code, status, message):
        self.expect(what, answer[::2], (code, {"error": {"code": code, "message": message, "status": status}}))

    def test_a_read_time_lives_read_time_life_seconds(self):
        sim, client = self.start(read_time_life=60)
        self.expect("a page at 30 s ago", client.query(a.query(limit=3), ago(client, 30))[0], 200)
        self.expect("a COUNT at 59 s ago", client.count(a.query(), ago(client, 59))[2][0]["result"],
                    {"aggregateFields": {"documents": {"integerValue": "300"}}})
        for label, answer in (("a page", client.query(a.query(limit=3), ago(client, 61))),
                              ("a COUNT", client.count(a.query(), ago(client, 61)))):
            self.refused(f"{label} at 61 s ago", answer, 400, "FAILED_PRECONDITION",
                         "The requested 'read_time' is too old.")
        self.refused("a readTime ahead of the server", client.query(a.query(), ago(client, -5)),
                     400, "INVALID_ARGUMENT", "The requested 'read_time' cannot be in the future.")
        self.refused("a readTime in nanoseconds", client.query(a.query(), "2026-01-01T00:00:00.000000001Z"),
                     400, "INVALID_ARGUMENT", "timestamp cannot have more than microseconds precision")

    def test_a_read_outlives_its_read_time(self):
        sim, client = self.start(read_time_life=1)
        status, _, page = client.query(a.query(by=("__name__",), limit=100))
        read_time = page[0]["readTime"]
        time.sleep(1.2)
        cursor = {"values": [{"referenceValue": page[-1]["document"]["name"]}], "before": False}
        self.refused("the second page, 1.2 s later", client.query(
            a.query(by=("__name__",), limit=100, startAt=cursor), read_time),
            400, "FAILED_PRECONDITION", "The requested 'read_time' is too old.")

    def test_point_in_time_recovery_serves_whole_minutes(self):
        sim, client = self.start(read_time_life=60, pitr=True, pitr_life=600)
        minute = minute_before(client, 120)
        self.expect("a COUNT at a whole minute 2 minutes back", client.count(a.query(), minute)[::2],
                    (200, [{"result": {"aggregateFields": {"documents": {"integerValue": "300"}}},
                            "readTime": minute, "done": True}]))
        self.refused("a readTime 2 minutes back that is not a whole minute",
                     client.query(a.query(limit=1), times.format(times.parse(minute) + 1)),
                     400, "FAILED_PRECONDITION", "The requested 'read_time' is too old.")
        self.refused("a whole minute past pitr_life", client.query(a.query(limit=1), minute_before(client, 660)),
                     400, "FAILED_PRECONDITION", "The requested 'read_time' is too old.")
        sim.vote("new-vote", "joke", 5)
        self.expect("the minute before a write does not see it",
                    client.count(a.query(), minute)[2][0]["result"]["aggregateFields"]["documents"],
                    {"integerValue": "300"})
        self.expect("now sees it", client.count(a.query())[2][0]["result"]["aggregateFields"]["documents"],
                    {"integerValue": "301"})
        self.expect("without PITR the whole minute is too old", self.start(read_time_life=60)[1].count(
            a.query(), minute)[0], 400)

    def test_a_count_past_its_limit_exceeds_the_deadline(self):
        sim, client = self.start(count_max=100, count_deadline=0)
        low, high = (f"{client.root}/rating_events/{sim.votes.id(i)}" for i in (0, 100))
        in_range = a.query(a.both(a.name("GREATER_THAN_OR_EQUAL", low), a.name("LESS_THAN", high)))
        self.expect("a COUNT of 100", client.count(in_range)[2][0]["result"]["aggregateFields"]["documents"],
                    {"integerValue": "100"})
        timed_out = (504, "DEADLINE_EXCEEDED",
                     "The datastore operation timed out, or the data was temporarily unavailable.")
        self.refused("a COUNT of 300", client.count(a.query()), *timed_out)
        since = a.since(times.format(sim.votes.timestamp(150)))
        self.refused("a COUNT of timestamp >= vote 150's (150)", client.count(a.query(since)), *timed_out)
        self.expect("pages are not counted", client.query(a.query(limit=300))[0], 200)
        self.expect("served counts", sim.served()["counts"], [100, None, None])

        sim, client = self.start(count_rate=1000, count_deadline=0.1)
        self.refused("a COUNT of 300 at 1,000 a second within 0.1 s", client.count(a.query()), *timed_out)
        started = time.monotonic()
        self.expect("a COUNT of 100 at 1,000 a second", client.count(in_range)[0], 200)
        self.assertGreaterEqual(time.monotonic() - started, 0.1, "a COUNT of 100 at 1,000 a second takes 0.1 s")

    def test_the_proofs_counts_by_kind_are_the_scans(self):
        """A COUNT on joke_id and rating alone (the board's proof's) is answered from the votes'
        index of kinds less the overlay's replacements: the same number as counting each vote,
        for jokes with votes re-rated away, re-rated to, deleted and added, ratings as a double
        and as a string, in and out of a window and a name range, before, between and after."""
        from rankings_night.proof import KINDS, kind_filter
        from simulator.query import Query
        sim, _ = self.start(documents=2000, seed=5)
        votes, db = sim.votes, sim.db
        kinds = sorted({votes.kind(i) for i in range(votes.n)})
        jokes = sorted({j for j, _ in kinds})[::12] + ["re-rated-to", "new-joke", "no-such-joke"]
        at = {"before": db.now()}
        time.sleep(0.002)
        writes = [(f"rating_events/{votes.id(i)}", a.vote("re-rated-to", 1 + i % 5, "d", "w", "2026-11-01T00:00:00Z"))
                  for i in range(0, 2000, 37)]
        writes += [(f"rating_events/{votes.id(i)}", None) for i in range(5, 2000, 41)]
        writes += [(f"rating_events/00000-new-{i}", a.vote(jokes[i % len(jokes)], 1 + i % 5, "d", "w",
                                                           "2026-11-01T00:00:00Z")) for i in range(40)]
        writes += [("rating_events/00000-double", dict(a.vote(jokes[0], 4, "d", "w", "2026-11-01T00:00:00Z"),
                                                        rating={"doubleValue": 4.5})),
                   ("rating_events/00000-string", dict(a.vote(jokes[0], 5, "d", "w", "2026-11-01T00:00:00Z"),
                                                        rating={"stringValue": "5"}))]
        sim.commit(writes)
        at["between"] = db.now()
        time.sleep(0.002)
        sim.commit([(f"rating_events/{votes.id(i)}", a.vote(jokes[1], 5, "d", "w", "2026-11-02T00:00:00Z"))
                    for i in range(0, 2000, 37)[::2]] + [("rating_events/00000-new-3", None)])
        at["after"] = db.now()
        root = f"{db.root}/rating_events"
        windows = [None, a.since(times.format(votes.timestamp(700))),
                   a.both(a.name("GREATER_THAN_OR_EQUAL", f"{root}/{votes.id(300)}"),
                          a.name("LESS_THAN", f"{root}/{votes.id(1500)}"))]
        compared = 0
        for label, read_time in at.items():
            for where in windows:
                for joke in [None] + jokes:
                    for kind, _, _ in KINDS:
                        query = Query(a.query(kind_filter(kind, joke, where)), db.root)
                        indexed, scanned = query.count(db, read_time), query.count(db, read_time, scan=True)
                        self.expect(f"{joke}'s {kind} in {where} at {label}", indexed, scanned)
                        compared += scanned
        self.expect("the answers count votes", compared > 10_000, True)
        self.expect("the index of kinds was made", votes._kinds is not None, True)

    def test_a_stream_pages_at_its_rate(self):
        sim, client = self.start(stream_rate=100)
        started = time.monotonic()
        status, _, page = client.query(a.query(by=("__name__",), limit=50))
        self.assertGreaterEqual(time.monotonic() - started, 0.5, "50 documents at 100 a second take 0.5 s")
        sim.reset_served()
        # Each answer 3.3 s long, so that two started together overlap on a loaded machine too.
        sim.settings.stream_rate = 30
        ready = threading.Barrier(2)

        def read(low):
            ready.wait()
            client.query(a.query(a.name("GREATER_THAN_OR_EQUAL", f"{client.root}/rating_events/{sim.votes.id(low)}"),
                                 ("__name__",), 100))

        readers = [threading.Thread(target=read, args=(low,)) for low in (0, 150)]
        for reader in readers:
            reader.start()
        for reader in readers:
            reader.join()
        served = sim.served()
        self.expect("two streams at once (each 3.3 s long, started together)", served["most_streams"], 2)
        self.expect("their pages", sorted(served["pages"]), [100, 100])

    def test_load_is_answered_429_or_503(self):
        sim, client = self.start(fault_every=3, retry_after=2)
        answers = [client.query(a.query(limit=1)) for _ in range(6)]
        self.expect("statuses", [status for status, _, _ in answers], [200, 200, 429, 200, 200, 429])
        status, headers, body = answers[2]
        self.expect("the 429's body", body, {"error": {"code": 429, "message": "Quota exceeded.",
                                                       "status": "RESOURCE_EXHAUSTED"}})
        self.expect("the 429's Retry-After", headers.get("Retry-After"), "2")
        self.expect("served", {k: sim.served()[k] for k in ("faults", "statuses")},
                    {"faults": 2, "statuses": {"200": 4, "429": 2}})
        sim.settings.update({"fault_every": None, "fault_window": (0, 10**9), "fault_status": 503})
        status, headers, body = client.count(a.query())
        self.expect("a 503 in the window", (status, body, "Retry-After" in headers),
                    (503, {"error": {"code": 503, "message": "The service is currently unavailable.",
                                     "status": "UNAVAILABLE"}}, False))
        sim.settings.fault_window = None
        self.expect("after the window", client.count(a.query())[0], 200)

    def test_the_nights_reader_gets_through_bursts(self):
        """The night's own reader (its retries honour Retry-After) reads every vote whole while
        every third request is refused."""
        from rankings_night import settings as night_settings
        from rankings_night.firestore import Firestore, Query

        sim, client = self.start(fault_every=3, retry_after=0.01)
        settings = night_settings.from_environment({
            "FIRESTORE_EMULATOR_HOST": sim.address, "RANKINGS_FIRESTORE_PROJECT": PROJECT,
            "RANKINGS_FIRESTORE_BACKOFF_SECONDS": "0.01", "RANKINGS_FIRESTORE_ATTEMPTS": "3"})
        query = Query(Firestore(settings, lambda message: None), "rating_events", page_size=40)
        names = [d["name"] for page in query.pages() for d in page]
        self.expect("votes read", names, [d["name"] for d in sim.documents(query.read_time)])
        self.expect("faults served", sim.served()["faults"] > 0, True)

    def test_served_counts_what_was_asked(self):
        sim, client = self.start()
        a.chain(client, None, ("__name__",), 120)
        client.count(a.query())
        self.expect("served", sim.served(), {
            "requests": {"runQuery": 3, "runAggregationQuery": 1},
            "statuses": {"200": 4}, "documents": 300, "pages": [120, 120, 60], "counts": [300],
            "faults": 0, "most_streams": 1})
        status, _, over_http = client.call("GET", "/simulator/served")
        self.expect("served over HTTP", over_http, sim.served())

    def test_votes_are_seen_by_read_time(self):
        sim, client = self.start()
        votes = sim.votes
        before = client.now()
        first = sim.vote("00002-new", "joke-a", 5, timestamp=times.format(votes.end))
        sim.vote(votes.id(5), "joke-b", 1)
        sim.delete(votes.id(6))
        second = sim.vote("00002-new", "joke-a", 1)

        def ratings(read_time):
            return {d["name"].rsplit("/", 1)[1]: d["fields"]["rating"]["integerValue"]
                    for d in sim.documents(read_time) if d["name"].rsplit("/", 1)[1] in
                    ("00002-new", votes.id(5), votes.id(6))}

        self.expect("before the writes", ratings(before),
                    {votes.id(5): str(votes.vote(5)[2]), votes.id(6): str(votes.vote(6)[2])})
        self.expect("at the first commit", ratings(first), {"00002-new": "5", votes.id(5): str(votes.vote(5)[2]),
                                                            votes.id(6): str(votes.vote(6)[2])})
        self.expect("at the last commit", ratings(second), {"00002-new": "1", votes.id(5): "1"})
        self.expect("a microsecond before the first commit", ratings(times.format(times.parse(first) - 1)),
                    ratings(before))
        self.expect("COUNT now", client.count(a.query())[2][0]["result"]["aggregateFields"]["documents"],
                    {"integerValue": "300"})

    def test_export_documents_at_its_snapshot_time(self):
        sim, client = self.start(export_seconds=0.2)
        with tempfile.TemporaryDirectory() as folder:
            snapshot = minute_before(client, 0)
            sim.vote("zz-after-the-snapshot", "joke", 5)
            prefix = os.path.join(folder, "bucket", "night-1")
            status, _, operation = client.call("POST", ":exportDocuments", {
                "collectionIds": ["rating_events"], "outputUriPrefix": prefix, "snapshotTime": snapshot})
            self.expect("the answer", (status, operation["metadata"]["operationState"], "done" in operation),
                        (200, "PROCESSING", False))
            deadline = time.monotonic() + 60
            while not operation.get("done") and time.monotonic() < deadline:
                time.sleep(0.1)
                status, _, operation = client.call("GET", f"/v1/{operation['name']}")
            self.expect("the operation at its end", (operation.get("done"), operation["metadata"]["operationState"],
                                                     operation["metadata"]["progressDocuments"], operation["response"]),
                        (True, "SUCCESSFUL", {"completedWork": "300", "estimatedWork": "300"},
                         {"@type": "type.googleapis.com/google.firestore.admin.v1.ExportDocumentsResponse",
                          "outputUriPrefix": prefix}))
            ndjson = os.path.join(folder, "votes.ndjson")
            self.expect("votes at the snapshot", sim.write_ndjson(ndjson, snapshot), 300)
            self.expect("the export's board", self.aggregate(prefix), self.aggregate(ndjson))
            refusals = {"not a whole minute": times.format(times.parse(snapshot) + 1000),
                        "older than read_time_life": minute_before(client, 3660)}
            for label, when in refusals.items():
                status, _, answer = client.call("POST", ":exportDocuments", {
                    "collectionIds": ["rating_events"], "outputUriPrefix": prefix + "-x", "snapshotTime": when})
                self.expect(f"a snapshotTime {label}", status, 400)

    def test_export_to_a_bucket_and_an_export_that_fails(self):
        with tempfile.TemporaryDirectory() as folder:
            sim, client = self.start(export_root=folder)
            finished = self.export(client, "gs://night-bucket/2026-11-27")
            self.expect("a gs:// export", (finished["metadata"]["operationState"],
                                           sorted(os.listdir(os.path.join(folder, "night-bucket", "2026-11-27")))),
                        ("SUCCESSFUL", ["2026-11-27.overall_export_metadata", "all_namespaces"]))
            sim.commit([("rating_events/odd", {"rating": {"stringValue": "five"}})])
            finished = self.export(client, os.path.join(folder, "odd"))
            self.expect("an export of a document that is not a vote",
                        (finished["metadata"]["operationState"], finished["error"]["code"], "response" in finished),
                        ("FAILED", 13, False))

    def export(self, client, prefix):
        status, _, operation = client.call("POST", ":exportDocuments", {"collectionIds": ["rating_events"],
                                                                        "outputUriPrefix": prefix})
        self.expect(f"exportDocuments to {prefix}", status, 200)
        deadline = time.monotonic() + 60
        while not operation.get("done") and time.monotonic() < deadline:
            time.sleep(0.1)
            operation = client.call("GET", f"/v1/{operation['name']}")[2]
        return operation

    def test_errors_in_array_as_production_streams_them(self):
        sim, client = self.start(errors_in_array=True, count_max=0, count_deadline=0)
        self.expect("a COUNT past its deadline", client.count(a.query())[::2], (504, [{"error": {
            "code": 504, "message": "The datastore operation timed out, or the data was temporarily unavailable.",
            "status": "DEADLINE_EXCEEDED"}}]))
        self.expect("a page at a readTime too old", client.query(a.query(), ago(client, 7200))[::2], (400, [{"error": {
            "code": 400, "message": "The requested 'read_time' is too old.", "status": "FAILED_PRECONDITION"}}]))

    def aggregate(self, source):
        done = harness.run([RANKINGS, "aggregate", "--quiet", "--top", "1000", "--computed-at",
                            "2026-11-27T00:00:00Z", source])
        self.expect_exit(done, 0)
        return json.loads(done.stdout)

    def test_ten_million_votes(self):
        sim, client = self.start(documents=10_000_000)
        votes = sim.votes
        self.expect("COUNT", client.count(a.query())[2][0]["result"]["aggregateFields"]["documents"],
                    {"integerValue": "10000000"})
        tail = a.name("GREATER_THAN_OR_EQUAL", f"{client.root}/rating_events/{votes.id(9_999_990)}")
        status, _, page = client.query(a.query(tail, ("__name__",), 100))
        self.expect("the last page", [i["document"]["name"].rsplit("/", 1)[1] for i in page],
                    [votes.id(i) for i in range(9_999_990, 10_000_000)])
        since = a.since(times.format(votes.timestamp(9_000_000)))
        self.expect("COUNT since vote 9,000,000's timestamp",
                    client.count(a.query(since))[2][0]["result"]["aggregateFields"]["documents"],
                    {"integerValue": str(10_000_000 - votes.index_of_time(votes.timestamp(9_000_000)))})
        first = votes.index_of_time(votes.timestamp(9_000_000))
        status, _, page = client.query(a.query(since, ("timestamp", "__name__"), 2))
        self.expect("the first page since then", [i["document"]["name"].rsplit("/", 1)[1] for i in page],
                    [votes.id(first), votes.id(first + 1)])

    def test_the_generators_votes(self):
        sim, _ = self.start(documents=2000, seed=3)
        with tempfile.TemporaryDirectory() as folder:
            path = os.path.join(folder, "votes.ndjson")
            self.expect("votes written", sim.write_ndjson(path, generated=True), 2000)
            with open(path, encoding="utf-8") as lines:
                documents = [json.loads(line) for line in lines]
            names = [d["name"] for d in documents]
            stamps = [times.parse(d["fields"]["timestamp"]["timestampValue"]) for d in documents]
            self.expect("names strictly increasing", all(x < y for x, y in zip(names, names[1:])), True)
            self.expect("timestamps never decreasing", all(x <= y for x, y in zip(stamps, stamps[1:])), True)
            self.expect("ratings", sorted({d["fields"]["rating"]["integerValue"] for d in documents}),
                        ["1", "2", "3", "4", "5"])
            board = self.aggregate(path)
            self.expect("the board counts every vote but the neutral 3s",
                        board["total_hilarious_ratings"] + board["total_horrible_ratings"],
                        sum(d["fields"]["rating"]["integerValue"] != "3" for d in documents))
            again = os.path.join(folder, "again.ndjson")
            done = harness.run([sys.executable, os.path.join(HERE, "firestore_sim.py"), "--project", PROJECT,
                                "--documents", "2000", "--seed", "3", "--end", times.format(sim.votes.end),
                                "--genesis", times.format(sim.genesis), "--write-ndjson", again])
            self.expect_exit(done, 0)
            with open(path, "rb") as one, open(again, "rb") as other:
                self.expect("the command's NDJSON is the same bytes", one.read() == other.read(), True)

    def test_the_command_serves_until_stopped(self):
        server = subprocess.Popen([sys.executable, os.path.join(HERE, "firestore_sim.py"), "--project", PROJECT,
                                   "--documents", "1000", "--count-max", "10", "--count-deadline", "0"],
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            address = server.stdout.readline().strip()
            client = Client(address, PROJECT)
            self.expect("a page", len(client.query(a.query(limit=7))[2]), 7)
            self.expect("a COUNT over --count-max", client.count(a.query())[0], 504)
            status, _, answer = client.call("POST", "/simulator/votes", {"votes": [
                {"id": "zz-vote", "joke_id": "j", "rating": 5}, {"id": "zz-vote", "delete": True}]})
            self.expect("votes by the control endpoint", (status, len(answer["commitTimes"])), (200, 2))
            status, _, settings = client.call("POST", "/simulator/settings", {"count_max": None})
            self.expect("settings changed", (status, settings["count_max"]), (200, None))
            self.expect("the COUNT now", client.count(a.query())[2][0]["result"]["aggregateFields"]["documents"],
                        {"integerValue": "1000"})
            self.expect("served", client.call("GET", "/simulator/served")[2]["requests"],
                        {"runQuery": 1, "runAggregationQuery": 2})
        finally:
            server.send_signal(signal.SIGTERM)
            said = server.communicate(timeout=30)[1]
        self.expect("exit status on SIGTERM", server.returncode, 0)
        self.expect_in("its line", "1000 votes in projects/limits/databases/(default)/documents/rating_events", said)


if __name__ == "__main__":
    harness.main()
