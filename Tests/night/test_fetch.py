"""The night's fetch (fetch.py) against a Firestore in memory (fake_firestore.py): full reads whose
streams start at once (ranges where partitionQuery cuts, or at the id alphabet) proven by the collection's
COUNT asked beside them, incremental nights, each at one readTime, which is the plan's
clock; the faults Firestore, the machine and a stop can throw at them, each with its exit status,
its words, the failed try's figures, and DIR as it was. No HTTP, no emulator."""
import hashlib
import json
import os
import shutil
import signal
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)
import harness  # noqa: E402
import layered  # noqa: E402
from fake_firestore import Fault, FakeFirestore  # noqa: E402
from rankings_night import fetch, folders, ranges  # noqa: E402
from rankings_night.snapshot import format_time, parse_time  # noqa: E402
from rankings_night.statuses import FINAL, Failure, status_of  # noqa: E402
from rankings_night.stop import STOP, Stopped  # noqa: E402
from rankings_night.transport import FirestoreError  # noqa: E402

OLD = parse_time("2026-01-01T00:00:00Z")
BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
DAY = 86400


def counter_id(i):
    """An id as the simulator's votes have them: the index in 5 base-62 digits (a long common
    prefix, 00), then a seeded tail."""
    digits = ""
    for _ in range(5):
        i, d = divmod(i, 62)
        digits = BASE62[d] + digits
    return digits + hashlib.sha256(digits.encode()).hexdigest()[:15]


def auto_id(i):
    """An id as Firestore's auto-ids are: 20 characters uniform over the 62."""
    digest = hashlib.sha256(str(i).encode()).digest()
    return "".join(BASE62[b % 62] for b in digest[:20])


def seeded(n, ids=counter_id, **options):
    fake = FakeFirestore(**options)
    for i in range(n):
        fake.put(ids(i), timestamp=OLD + i * 10**9, rating=1 + i % 5, joke_id=f"joke-{i % 7}")
    return fake


class Night:
    """One fetch's outcome: status (0, or the Failure's), whether final, its message, what it
    said (a line each, `warning: ` before a WARNING's, as the night's log writes them), the
    exception and the record (returned, or the exception's)."""

    def __init__(self, status, final, message, said, error=None, record=None):
        self.status, self.final, self.message, self.said = status, final, message, said
        self.error, self.record = error, record


class FetchCase(harness.Case):
    def setUp(self):
        self.work = tempfile.mkdtemp(prefix="rankings-test-fetch.")
        self.dir = os.path.join(self.work, "firestore")
        self.addCleanup(shutil.rmtree, self.work, True)
        STOP.reset()
        self.addCleanup(STOP.reset)

    def night(self, fake, full_because=None, compressed=False):
        lines = []

        def say(message, severity="INFO"):
            lines.append(("warning: " if severity == "WARNING" else "") + message)
        error = record = None
        try:
            record = fetch.run(self.dir, fake, say, full_because, compressed)
            status, final, message = 0, False, ""
        except Failure as failure:
            error, status, final, message = failure, failure.status, failure.final, str(failure)
        except FirestoreError as failure:     # what the night's one mapping makes of the client's errors
            error, status, final, message = failure, status_of(failure), status_of(failure) in FINAL, str(failure)
        except Exception as failure:  # noqa: BLE001 (what the night calls a bug: 70)
            error, status, final, message = failure, 70, True, f"{type(failure).__name__}: {failure}"
        return Night(status, final, message, "\n".join(lines) + "\n", error,
                     record if error is None else getattr(error, "record", None))

    def expect_night(self, done, status, words=None):
        if done.status != status:
            self.fail(f"status {done.status}, expected {status}: {done.message}\n{done.said[-3000:]}")
        if words is not None and words not in done.message + done.said:
            self.fail(f"{words!r} not said: {done.message}\n{done.said[-3000:]}")

    def record(self):
        with open(os.path.join(self.dir, "current", ".night.json")) as text:
            return json.load(text)

    def rewrite(self, **changes):
        """current's record with `changes` (the files as they are)."""
        path = os.path.join(self.dir, "current", ".night.json")
        changed = dict(self.record(), **changes)
        os.unlink(path)
        with open(path, "w") as out:
            json.dump({k: v for k, v in changed.items() if v is not None}, out)

    def snapshot(self):
        return layered.documents(os.path.join(self.dir, "current"))

    def expect_whole(self, fake):
        """current holds the collection as the fake holds it at the night's readTime, in order."""
        _, documents = fake.at(parse_time(self.record()["read_time"]))
        self.expect("the snapshot", self.snapshot(), documents)

    def ranges(self, fake, since=0):
        """The ranges the streams read (from the journal's entry `since` on), (low, high) in order."""
        return sorted({(e["low"], e["high"]) for e in fake.journal()[since:] if e["call"] == "runQuery"
                       and (e["low"], e["high"]) != (None, None)}, key=lambda r: r[0] or "")


class FullReads(FetchCase):
    def test_a_full_read_in_eight_streams_each_document_served_once(self):
        # Defect 15: at 8 streams, 20,001 documents served for 20,000.
        fake = seeded(20000, ids=auto_id)
        done = self.night(fake)
        self.expect_night(done, 0, "20000 documents at readTime")
        served = fake.served()
        self.expect("documents served more than once", {i: n for i, n in served.items() if n > 1}, {})
        self.expect("documents served", sum(served.values()), 20000)
        self.expect("figures", (done.record["documents_read"], done.record["streams"], done.record["prune_errors"]),
                    (20000, 8, 0))
        self.expect("record", {k: self.record()[k] for k in ("mode", "documents_read", "streams", "snapshot_documents")},
                    {"mode": "full", "documents_read": 20000, "streams": 8, "snapshot_documents": 20000})
        self.expect_whole(fake)

    def test_every_streams_first_page_is_asked_before_the_one_count_answers(self):
        # Issue 49: a round of COUNTs planned the ranges before any stream read, and behind a proxy
        # that gives a readTime 8 s of life, 8 streams failed before any document was read.
        fake = seeded(20000, count_hold=1.0)
        self.expect_night(self.night(fake), 0, "as many as Firestore counts in rating_events")
        journal = fake.journal()
        counts = [n for n, e in enumerate(journal) if e["call"] == "count"]
        self.expect("COUNTs", len(counts), 1)
        firsts = {}
        for n, entry in enumerate(journal):
            if entry["call"] == "runQuery" and (entry["low"], entry["high"]) != (None, None):
                firsts.setdefault(entry["pid"], n)
        self.expect("streams", len(firsts), 8)
        self.expect("first pages after the COUNT", [n for n in firsts.values() if n > counts[0]], [])
        self.expect_whole(fake)

    def test_a_readtime_of_8_seconds_is_enough_for_20000_votes(self):
        fake = seeded(20000, ids=auto_id, read_time_life=8, count_hold=0.5)
        fake.faults = [Fault("hold", value=1.0, ranged=True, times=None)]     # 1,000 documents a second a stream
        self.expect_night(self.night(fake), 0, "20000 documents at readTime")
        self.expect_whole(fake)

    def test_partition_query_cuts_the_ranges_where_firestore_offers_it(self):
        fake = seeded(3000, ids=auto_id, partition_query=True)
        root = f"{fake.root}/rating_events/"
        fake.extra_cursors = [root + "0000/rating_events/x", f"{fake.root}/other/0000", root + "M000/votes/y"]
        done = self.night(fake)
        self.expect_night(done, 0, "read in 8 ranges cut where Firestore's partitionQuery cuts")
        asked = [e for e in fake.journal() if e["call"] == "partitionQuery"]
        self.expect("asked", [(e["partitionCount"], e["page"]) for e in asked], [(7, 0), (7, 1)])
        ids, _ = fake.at(parse_time(self.record()["read_time"]))
        self.expect("the ranges: Firestore's cursors in rating_events, the two pages merged",
                    self.ranges(fake), ranges.between([ids[3000 * k // 8] for k in range(1, 8)]))
        self.expect_whole(fake)

    def test_the_first_full_read_is_cut_evenly_at_the_id_alphabet_where_partition_query_is_not(self):
        fake = seeded(3000, ids=auto_id)    # Google's emulator answers partitionQuery 501 UNIMPLEMENTED
        done = self.night(fake)
        self.expect_night(done, 0, "read in 8 ranges cut evenly at the id alphabet")
        self.expect_in("why", "no partitionQuery (POST ", done.said)
        self.expect("the ranges", self.ranges(fake), ranges.even(8))
        self.expect("one COUNT", len([e for e in fake.journal() if e["call"] == "count"]), 1)
        self.expect_whole(fake)

    def test_streams_are_derived_from_the_last_full_reads_rate(self):
        # Defect 4: one slow night (a 429 storm) refused every later full read; now the rate
        # chooses the streams, and past 64 the read goes on with a warning and measures it again.
        rows = [  # (documents a second a stream, streams, words)
            (None, 8, "read in 8 ranges"),
            (0.03, 21, "rest: 21 streams: at the last full read's rate, 8 would not read 2000 documents"),
            (0.001, 64, "warning: rest: a full read of 2000 documents at 0 documents a second per stream (the last "
                        "full read's) over 64 streams takes about 521 min, over 90 % of Firestore's life of a readTime (60 min); "
                        "reading anyway"),
        ]
        for rate, streams, words in rows:
            with self.subTest(rate=rate):
                self.setUp()
                fake = seeded(2000, ids=auto_id)
                self.expect_night(self.night(fake), 0)
                self.rewrite(full_rate=rate)
                done = self.night(fake, full_because="asked")
                self.expect_night(done, 0, words)
                self.expect("streams", self.record()["streams"], streams)
                self.assertGreater(self.record()["full_rate"], 0.03, "measured again")
                self.expect_whole(fake)

    def test_an_empty_collection_is_65(self):
        # Defect 3: a misspelt project would publish an empty board.
        done = self.night(FakeFirestore())
        self.expect_night(done, 65, "holds no documents at readTime")
        self.expect("DIR", harness.tree(self.dir), {})

    def test_a_previous_night_of_a_removed_mode_is_never_built_on(self):
        rows = [  # (the record's changes, why)
            # 0.4's window and export nights.
            ({"mode": "window", "since": "2026-01-01T00:00:00Z"}, "made by the rest method, mode 'window': never built "
                                                                  "on"),
            ({"method": "export"}, "made by the export method, mode 'full': never built on"),
            ({"project": "another"}, "the previous night is of projects/another/databases/(default)/rating_events, "
                                     "not projects/demo-fake/databases/(default)/rating_events"),
        ]
        for changes, why in rows:
            with self.subTest(why=why):
                self.setUp()
                fake = seeded(300)
                self.expect_night(self.night(fake), 0)
                self.rewrite(**changes)
                fake.put("zz-new", timestamp=fake.now(), rating=4, joke_id="joke-y")
                done = self.night(fake)
                self.expect_night(done, 0, "warning: rest: the previous night cannot be built on, so a full read: ")
                self.expect_in("why", why, self.record()["full_reason"])
                self.expect("record", (self.record()["mode"], self.record()["fallback"]), ("full", True))
                self.expect_whole(fake)


class Faults(FetchCase):
    def test_each_fault_fails_the_night_with_its_status_and_leaves_dir_as_it_was(self):
        rows = [  # (fault rows, status, final, words, documents the failed try read)
            ([Fault("short", ranged=True)], 69, False, "the night is not whole: 1999 documents fetched", 1999),
            ([Fault("lie", method="count")], 69, False, "but Firestore counts 2001", 2000),
            ([Fault("status", value=429, ranged=True, after=3)], 69, False, "HTTP 429: RESOURCE_EXHAUSTED (gave up after",
             None),
            ([Fault("status", method="count", value=503)], 69, False, "HTTP 503", None),
            ([Fault("refuse", reason="PERMISSION_DENIED", ranged=True)], 69, False, "refused by the fault table", 0),
            # Defect 6: a stream killed, as the OOM killer kills, was "a bug": 70, never tried again.
            ([Fault("kill", ranged=True)], 69, False, "ended without its answer (killed by signal 9", None),
            # A readTime refused before anything was read is no one's fault: 69, tried again.
            ([Fault("too_old", ranged=True, times=None)], 69, False, "before any document was read", 0),
            ([Fault("too_old", method="count")], 69, False, "before any document was read", None),
            # After documents were read: the read outlived its readTime; not tried again tonight.
            ([Fault("too_old", ranged=True, cursor=True)], 69, True, "the read outlived its readTime", 1000),
        ]
        fakes = {n: seeded(n, ids=auto_id) for n in (2000, 10000)}
        for n, fake in fakes.items():   # one first night a size, copied for each row
            self.expect_night(self.night(fake), 0)
            shutil.copytree(self.dir, os.path.join(self.work, str(n)), symlinks=True)
            shutil.rmtree(self.dir)
        for faults, status, final, words, read in rows:
            with self.subTest(fault=faults[0]):
                n = 10000 if faults[0].cursor else 2000
                fake = fakes[n]
                shutil.rmtree(self.dir, ignore_errors=True)
                shutil.copytree(os.path.join(self.work, str(n)), self.dir, symlinks=True)
                before = harness.tree(self.dir)
                # A COUNT's fault comes while the streams read, not after them.
                fake.faults = faults if faults[0].method != "count" else \
                    faults + [Fault("hold", value=0.2, ranged=True, times=None)]
                done = self.night(fake, full_because="asked")
                self.expect_night(done, status, words)
                self.expect("final", done.final, final)
                self.expect("DIR", harness.tree(self.dir), before)
                self.expect("the failed try's figures", (done.record or {}).get("mode"), "full")
                if read is not None:
                    self.expect("documents the failed try read", done.record["documents_read"], read)

    def test_a_count_past_firestores_deadline_is_cut_and_proven(self):
        fake = seeded(3000, count_max=400)
        done = self.night(fake)
        self.expect_night(done, 0, "did not finish within Firestore's deadline")
        self.expect_whole(fake)

    def test_a_stop_mid_read_leaves_no_partial_folder_and_current_as_it_was(self):
        fake = seeded(20000, ids=auto_id)
        self.expect_night(self.night(fake), 0)
        before = harness.tree(self.dir)
        fake.faults = [Fault("hold", value=0.3, ranged=True, times=None)]
        timer = threading.Timer(0.6, STOP.set, (signal.SIGTERM,))
        timer.start()
        self.addCleanup(timer.cancel)
        done = self.night(fake, full_because="asked")
        self.expect_night(done, 128 + signal.SIGTERM, "stopped by SIGTERM")
        self.expect("a stop", type(done.error), Stopped)
        self.expect("DIR", harness.tree(self.dir), before)
        self.expect("no stream left", STOP.children, set())
        self.expect("the failed try's figures", done.record["mode"], "full")

    def test_a_failed_try_carries_its_own_figures_never_the_last_nights(self):
        # Issue 49: after a failed fetch, `status` showed the previous night's read as tonight's.
        fake = seeded(2000, ids=auto_id)
        self.expect_night(self.night(fake), 0)
        fake.faults = [Fault("short", ranged=True, value=5)]
        done = self.night(fake, full_because="asked")
        self.expect_night(done, 69, "the night is not whole: 1995 documents fetched")
        self.expect("tonight's figures", {k: done.record.get(k) for k in ("mode", "documents_read", "full_reason")},
                    {"mode": "full", "documents_read": 1995, "full_reason": "asked"})
        self.assertNotEqual(done.record.get("read_time"), self.record()["read_time"], "tonight's readTime")
        fake.faults = [Fault("status", method="runQuery", value=503)]   # the readTime itself
        done = self.night(fake)
        self.expect("before anything is read", (done.status, done.record["documents_read"], done.record["mode"]),
                    (69, 0, None))


class Incremental(FetchCase):
    def test_changed_and_new_votes_are_merged_and_a_deletion_is_a_full_read(self):
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
        self.expect("record", (self.record()["mode"], self.record()["fallback"]), ("full", True))
        self.expect_whole(fake)

    def test_the_collections_count_is_cut_on_an_incremental_night_too(self):
        # Defect 10: its COUNT of the collection was never cut: DEADLINE_EXCEEDED made every
        # night a full read, blamed on Firestore refusing the incremental query.
        fake = seeded(3000)
        self.expect_night(self.night(fake), 0)
        fake.count_max = 1000
        fake.put("zz-new", timestamp=fake.now(), rating=4, joke_id="joke-y")
        done = self.night(fake)
        self.expect_night(done, 0, "did not finish within Firestore's deadline")
        self.assertNotIn("cannot be used", done.said)
        self.expect("mode", (self.record()["mode"], self.record()["fallback"]), ("incremental", False))
        self.expect_whole(fake)

    def test_firestores_readtime_is_the_clock_a_machine_two_days_off_changes_nothing(self):
        # Issue 49: a machine two days behind Firestore made every record "in the future" (a full
        # read, a warning); its nights were named by its own clock.
        for skew in (2 * DAY, -2 * DAY, 0):
            with self.subTest(skew=skew):
                self.setUp()
                fake = seeded(300, skew=skew)
                self.expect_night(self.night(fake), 0)
                fake.put("zz-new", timestamp=fake.now(), rating=4, joke_id="joke-y")
                done = self.night(fake)
                self.expect_night(done, 0, "merged into the previous night")
                self.assertNotIn("warning", done.said)
                self.expect("mode", self.record()["mode"], "incremental")
                for name in sorted(n for n in os.listdir(self.dir) if folders.NIGHT.match(n)):
                    read = parse_time(layered.record(os.path.join(self.dir, name))["read_time"])
                    self.expect("a night named by its readTime", name, time.strftime(
                        "%Y%m%dT%H%M%S", time.gmtime(read // 10**9)) + f".{read % 10**9 // 1000:06d}Z")
                self.expect_whole(fake)

    def test_a_full_read_is_due_every_30_days_by_firestores_clock(self):
        fake = seeded(300)
        self.expect_night(self.night(fake), 0)
        now = parse_time(self.record()["read_time"])
        for days, mode in ((29.4, "incremental"), (29.6, "full")):
            with self.subTest(days=days):
                self.rewrite(last_full_read_time=format_time(now - int(days * DAY * 10**9)))
                self.expect_night(self.night(fake), 0, f"rest: fetching {fake.database_path}/rating_events at readTime")
                self.expect("mode", self.record()["mode"], mode)
                now = parse_time(self.record()["read_time"])


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
        with self.assertRaises(Exception) as raised:
            fake.call("POST", "/documents:batchWrite", {"writes": []})
        self.expect("a call the fetch does not make", raised.exception.code, 404)


if __name__ == "__main__":
    harness.main()
