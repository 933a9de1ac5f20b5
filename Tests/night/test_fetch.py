"""The night's fetch (fetch.py) against a Firestore in memory (fake_firestore.py): full reads on
parallel streams, incremental nights, windows, each proven by COUNT at one readTime; the faults
Firestore and the machine can throw at them, each with its exit status, its words, and DIR as it
was; and what a night costs in COUNTs and reads. No HTTP, no emulator."""
import contextlib
import hashlib
import io
import json
import os
import shutil
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)
import harness  # noqa: E402
import layered  # noqa: E402
from fake_firestore import Fault, FakeFirestore  # noqa: E402
from rankings_night import fetch, settings  # noqa: E402
from rankings_night.snapshot import format_time, parse_time  # noqa: E402
from rankings_night.statuses import FINAL, Failure, status_of  # noqa: E402
from rankings_night.transport import FirestoreError  # noqa: E402

OLD = parse_time("2026-01-01T00:00:00Z")
BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"


def counter_id(i):
    """An id as the simulator's votes have them: the index in 5 base-62 digits (a long common
    prefix, 00), then a seeded tail."""
    digits = ""
    for _ in range(5):
        i, d = divmod(i, 62)
        digits = BASE62[d] + digits
    return digits + hashlib.sha256(digits.encode()).hexdigest()[:15]


def seeded(n, ids=counter_id, **options):
    fake = FakeFirestore(**options)
    for i in range(n):
        fake.put(ids(i), timestamp=OLD + i * 10**9, rating=1 + i % 5, joke_id=f"joke-{i % 7}")
    return fake


class Night:
    """One fetch's outcome: status (0, or the Failure's), whether final, its message, stderr."""

    def __init__(self, status, final, message, said):
        self.status, self.final, self.message, self.said = status, final, message, said


class FetchCase(harness.Case):
    def setUp(self):
        self.work = tempfile.mkdtemp(prefix="rankings-test-fetch.")
        self.dir = os.path.join(self.work, "firestore")
        self.addCleanup(shutil.rmtree, self.work, True)

    def night(self, fake, **environ):
        values = {"RANKINGS_FIRESTORE_PROJECT": "demo-fake", "RANKINGS_FIRESTORE_STREAMS": "1"}
        values.update({k: str(v) for k, v in environ.items()})
        said = io.StringIO()
        with contextlib.redirect_stderr(said):
            try:
                fetch.run(self.dir, settings.from_environment(values), firestore=fake)
                status, final, message = 0, False, ""
            except Failure as failure:
                status, final, message = failure.status, failure.final, str(failure)
            except FirestoreError as error:     # what the night's one mapping makes of the client's errors
                status, final, message = status_of(error), status_of(error) in FINAL, str(error)
            except Exception as error:  # noqa: BLE001 (what main() calls a bug: 70)
                status, final, message = 70, True, f"{type(error).__name__}: {error}"
        return Night(status, final, message, said.getvalue())

    def expect_night(self, done, status, words=None):
        if done.status != status:
            self.fail(f"status {done.status}, expected {status}: {done.message}\n{done.said[-3000:]}")
        if words is not None and words not in done.message + done.said:
            self.fail(f"{words!r} not said: {done.message}\n{done.said[-3000:]}")

    def record(self):
        with open(os.path.join(self.dir, "current", ".night.json")) as text:
            return json.load(text)

    def snapshot(self):
        return layered.documents(os.path.join(self.dir, "current"))

    def expect_whole(self, fake):
        """current holds the collection as the fake holds it at the night's readTime, in order."""
        _, documents = fake.at(parse_time(self.record()["read_time"]))
        self.expect("the snapshot", self.snapshot(), documents)


class FullReads(FetchCase):
    def test_a_full_read_on_one_stream_and_on_eight(self):
        for streams in (1, 8):
            with self.subTest(streams=streams):
                fake = seeded(3000, ids=lambda i: f"{i * 7919 % 3001:05d}x")
                self.setUp()
                self.expect_night(self.night(fake, RANKINGS_FIRESTORE_STREAMS=streams), 0,
                                  f"3000 documents at readTime")
                self.expect_whole(fake)
                self.expect("streams", self.record()["streams"], streams)

    def test_each_document_is_served_once_at_eight_streams(self):
        # Defect 15: at 8 streams, 20,001 documents served for 20,000 (the readTime's query served
        # one, read again by its range).
        fake = seeded(20000)
        self.expect_night(self.night(fake, RANKINGS_FIRESTORE_STREAMS=8), 0)
        served = fake.served()
        self.expect("documents served more than once", {i: n for i, n in served.items() if n > 1}, {})
        self.expect("documents served", sum(served.values()), 20000)
        self.expect("documents_read", self.record()["documents_read"], 20000)
        self.expect_whole(fake)

    def test_planning_takes_a_few_rounds_of_counts_side_by_side(self):
        # Defect 15: cutting ranges for ids with a long common prefix took 456 COUNTs, eight at
        # a time, before any stream read (past a readTime kept 8 s).
        fake = seeded(20000, count_hold=0.02)
        self.expect_night(self.night(fake, RANKINGS_FIRESTORE_STREAMS=8), 0, "read in 8 ranges")
        journal = fake.journal()
        first_read = next(n for n, e in enumerate(journal) if e["call"] == "runQuery" and e["low"] is not None)
        counts = [e for e in journal[:first_read] if e["call"] == "count"]
        self.assertLessEqual(len(counts), 200, f"{len(counts)} COUNTs before the first range is read")
        self.assertGreater(fake.most_counts_in_flight, 8, "COUNTs asked side by side, more than the streams")
        self.assertLessEqual(max(self.ranges(fake)), 2500 * 1.3, "balanced ranges")
        self.expect_whole(fake)

    def ranges(self, fake):
        """The documents each range served."""
        held = {}
        for entry in fake.journal():
            if entry["call"] == "runQuery" and (entry["low"] is not None or entry["high"] is not None):
                held[entry["pid"]] = held.get(entry["pid"], 0) + len(entry.get("served", ()))
        return sorted(held.values())

    def test_an_empty_collection_is_65_for_a_full_read_and_a_window(self):
        # Defect 3: a window that counts 0 votes was proven, and a misspelt project published an
        # empty board; a full read refused the same with 65.
        for environ in ({}, {"RANKINGS_FIRESTORE_SINCE": "-30d"}):
            with self.subTest(environ=environ):
                self.setUp()
                done = self.night(FakeFirestore(), **environ)
                self.expect_night(done, 65, "holds no documents at readTime")
                self.expect("DIR", sorted(harness.tree(self.dir)), [".rankings-fetch.lock"])

    def test_a_window_of_no_votes_in_a_collection_of_some_is_proven(self):
        fake = seeded(50)
        self.expect_night(self.night(fake, RANKINGS_FIRESTORE_SINCE="2026-06-01T00:00:00Z"), 0,
                          "0 documents at readTime")
        self.expect("window", (self.record()["mode"], self.snapshot()), ("window", []))

    def test_a_slow_night_does_not_refuse_the_full_reads_after_it(self):
        # Defect 4: one night at 49 documents a second (a 429 storm) and every later full read
        # was refused with 78, the rate never measured again.
        fake = seeded(2000)
        self.expect_night(self.night(fake), 0)
        path = os.path.join(self.dir, "current", ".night.json")
        slow = dict(self.record(), full_rate=0.01)
        os.chmod(path, 0o644)
        with open(path, "w") as out:
            json.dump(slow, out)
        done = self.night(fake, RANKINGS_FIRESTORE_INCREMENTAL="no")
        self.expect_night(done, 0, "warning: rest: a full read of 2000 documents at 0 documents a second")
        self.expect_in("said", "reading anyway", done.said)
        self.assertGreater(self.record()["full_rate"], 0.01, "measured again")


class Faults(FetchCase):
    def test_each_fault_fails_the_night_with_its_status_and_leaves_dir_as_it_was(self):
        rows = [  # (fault rows, streams, status, final, words)
            ([Fault("short", after=1)], 1, 69, False, "the night is not whole: 999 documents fetched"),
            ([Fault("short", ranged=True)], 4, 69, False, "the night is not whole"),
            ([Fault("lie", method="count", after=0)], 1, 69, False, "but Firestore counts 1001"),
            ([Fault("status", value=429, after=1)], 1, 69, False, "HTTP 429: RESOURCE_EXHAUSTED (gave up after"),
            ([Fault("status", method="count", value=503)], 4, 69, False, "HTTP 503"),
            ([Fault("refuse", reason="PERMISSION_DENIED")], 1, 69, False, "refused by the fault table"),
            # Defect 6: a stream killed, as the OOM killer kills, was "a bug": 70, never tried again.
            ([Fault("kill", ranged=True)], 4, 69, False, "ended without its answer (killed by signal 9"),
            # A readTime refused before anything was read is no setting's fault: 69, tried again.
            ([Fault("too_old", ranged=True, times=None)], 4, 69, False, "before any document was read"),
            ([Fault("too_old", method="count")], 1, 69, False, "before any document was read"),
            # After documents were read: the read outlived its readTime, which settings fix.
            ([Fault("too_old", after=2)], 1, 78, True, "the read outlived its readTime"),
        ]
        for faults, streams, status, final, words in rows:
            with self.subTest(fault=faults[0], streams=streams):
                self.setUp()
                fake = seeded(1000 if streams == 1 else 2000)
                self.expect_night(self.night(fake), 0)
                before = harness.tree(self.dir)
                fake.faults = faults
                done = self.night(fake, RANKINGS_FIRESTORE_STREAMS=streams, RANKINGS_FIRESTORE_INCREMENTAL="no")
                self.expect_night(done, status, words)
                self.expect("final", done.final, final)
                self.expect("DIR", harness.tree(self.dir), before)

    def test_a_count_past_firestores_deadline_is_cut_and_proven(self):
        fake = seeded(3000, count_max=400)
        done = self.night(fake, RANKINGS_FIRESTORE_STREAMS=4)
        self.expect_night(done, 0, "did not finish within Firestore's deadline")
        self.expect_whole(fake)


class Incremental(FetchCase):
    def test_changed_and_new_votes_are_merged_and_a_deletion_is_drift(self):
        fake = seeded(500)
        self.expect_night(self.night(fake), 0)
        fake.put(counter_id(3), timestamp=fake.now(), rating=5, joke_id="joke-x")
        fake.put("zz-new", timestamp=fake.now(), rating=4, joke_id="joke-y")
        done = self.night(fake)
        self.expect_night(done, 0, "merged into the previous night")
        self.expect("mode", (self.record()["mode"], self.record()["documents_read"]), ("incremental", 2))
        self.expect_whole(fake)
        fake.delete(counter_id(4))
        done = self.night(fake)
        self.expect_night(done, 0, "warning: rest: the incremental night is not proven, so a full read")
        self.expect_in("drift", "warning: rest: drift: the previous night held 1 votes wrong", done.said)
        self.expect("record", (self.record()["mode"], self.record()["fallback"]), ("full", True))
        self.expect_whole(fake)

    def test_the_collections_count_is_cut_on_an_incremental_night_too(self):
        # Defect 10: its COUNT of the collection was never cut: DEADLINE_EXCEEDED made every
        # night a full read, blamed on "Firestore refused the incremental query".
        fake = seeded(3000)
        self.expect_night(self.night(fake), 0)
        fake.count_max = 1000
        fake.put("zz-new", timestamp=fake.now(), rating=4, joke_id="joke-y")
        done = self.night(fake)
        self.expect_night(done, 0, "did not finish within Firestore's deadline")
        self.assertNotIn("refused the incremental query", done.said)
        self.expect("mode", (self.record()["mode"], self.record()["fallback"]), ("incremental", False))
        self.expect_whole(fake)

    def test_a_clock_minutes_behind_firestores_keeps_incremental_nights(self):
        # Defect 11: a clock 5 minutes slow made every record "in the future": a full read every
        # night, none counted as a fallback.
        fake = seeded(300, skew=600)
        self.expect_night(self.night(fake), 0)
        fake.put("zz-new", timestamp=fake.now(), rating=4, joke_id="joke-y")
        done = self.night(fake)
        self.expect_night(done, 0, "merged into the previous night")
        self.expect("mode", self.record()["mode"], "incremental")

    def test_a_record_from_a_clock_far_off_is_a_fallback_said_as_a_warning(self):
        fake = seeded(300, skew=2 * 86400)
        self.expect_night(self.night(fake), 0)
        done = self.night(fake)
        self.expect_night(done, 0, "warning: rest: the previous night cannot be built on, so a full read")
        self.expect_in("why", "is in the future", done.said)
        self.expect("record", (self.record()["mode"], self.record()["fallback"]), ("full", True))


class Fake(harness.Case):
    """The fake answers as Firestore does where the night depends on it."""

    def test_a_read_at_a_readtime_sees_the_versions_of_then(self):
        fake = FakeFirestore()
        fake.put("a", timestamp=OLD, rating=1)
        then = fake.now()
        fake.put("a", timestamp=OLD, rating=5)
        fake.put("b", timestamp=OLD, rating=2)
        body = {"structuredQuery": {"from": [{"collectionId": "rating_events"}]}, "readTime": format_time(then)}
        answer = fake.call("POST", "/documents:runQuery", body)
        self.expect("then", [(i["document"]["name"][-1], i["document"]["fields"]["rating"]) for i in answer],
                    [("a", {"integerValue": "1"})])
        self.expect("done on the last", [i.get("done", False) for i in answer], [True])
        now = fake.call("POST", "/documents:runQuery", {"structuredQuery": body["structuredQuery"]})
        self.expect("now", len(now), 2)
        with self.assertRaises(Exception) as raised:
            fake.call("POST", "/documents:runQuery", dict(body, readTime=format_time(fake.now() + 10**12)))
        self.expect_in("future", "cannot be in the future", str(raised.exception))
        old = FakeFirestore(read_time_life=0)
        old.put("a", timestamp=OLD)
        with self.assertRaises(Exception) as raised:
            old.call("POST", "/documents:runQuery", dict(body, readTime=format_time(old.now() - 10**9)))
        self.expect("too old", (raised.exception.code, raised.exception.reason), (400, "FAILED_PRECONDITION"))

    def test_what_it_does_not_serve_is_refused(self):
        fake = FakeFirestore()
        with self.assertRaises(Exception) as raised:
            fake.call("POST", "/documents:runQuery", {"structuredQuery": {
                "from": [{"collectionId": "rating_events"}], "where": {"fieldFilter": {
                    "field": {"fieldPath": "rating"}, "op": "EQUAL", "value": {"integerValue": "1"}}}}})
        self.expect("refused", (raised.exception.code, raised.exception.reason), (400, "INVALID_ARGUMENT"))


if __name__ == "__main__":
    harness.main()
