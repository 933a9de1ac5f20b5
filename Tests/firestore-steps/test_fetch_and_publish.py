"""The night's fetch and publish, one at a time in this process, against Google's Firestore
emulator: the sample's votes seeded with Google's client, fetched by fetch.run (a full read of as
many documents as Google's client counts at its readTime), made into the sample's golden documents
by the job (as the emulator's own export of them is), published by publish.publish and read back
with Google's client as the app's decoder sees them. Then Firestore's answers broken every way
faults.py knows, votes written while the fetch pages, and Firestore unreachable: each fails with
its status, and the fetch's DIR stays as it was."""
import datetime
import json
import os
import shutil
import subprocess
import sys
import tempfile

# The emulator, the proxy and what the suites share live with the loop's suites.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "firestore-loop"))
import support  # noqa: E402 (puts Tests/ on sys.path too)
import emulator as emu  # noqa: E402
import faults  # noqa: E402
import harness  # noqa: E402

PROJECT = "demo-rankings-steps"
server = db = work = None
expected = set()        # the collection as Google's client lists it: what a whole fetch holds
cached = {}


def setUpModule():
    global server, db, work, expected
    work = tempfile.mkdtemp(prefix="rankings-firestore-steps.")
    server = support.start_emulator()
    db = emu.client(PROJECT, server.address)
    emu.seed(db, os.path.join(support.SAMPLE, "rating_events.ndjson"))
    expected = {d.path for d in db.collection("rating_events").list_documents()}


def tearDownModule():
    if server:
        server.stop()
    shutil.rmtree(work, ignore_errors=True)


def fetch(directory, address=None, full_because=None, **client):
    return support.fetch(directory, support.connect(PROJECT, address or server.address, **client), full_because)


def publish(path, name="all_time", address=None, **client):
    return support.publish(support.connect(PROJECT, address or server.address, **client), path, name)


def nights(directory):
    return sorted(n for n in os.listdir(directory) if n[:1].isdigit())


def full_night():
    """The module's one night (a fetch into an empty DIR), made by the first test that needs it."""
    if "full" not in cached:
        directory = os.path.join(work, "firestore")
        cached["full"] = directory, fetch(directory)
    directory, done = cached["full"]
    if done.returncode != 0:
        raise AssertionError(f"the night failed ({done.returncode}): {done.stderr[-2000:]}")
    return directory, done


def copy_of_full_night(name):
    """A DIR holding the night, for a test to fail fetches into."""
    directory, _ = full_night()
    copy = os.path.join(work, name)
    shutil.copytree(directory, copy, symlinks=True)
    return copy


class Fetch(harness.Case):
    def holds_the_collection(self, folder):
        """folder's snapshot is every top-level document of rating_events once, ratings and times
        typed, and as many as Google's client counts at the night's readTime."""
        from google.api_core.datetime_helpers import DatetimeWithNanoseconds
        got, typed = [], 0
        with open(os.path.join(folder, "rating_events.ndjson"), encoding="utf-8") as lines:
            for line in lines:
                document = json.loads(line)
                got.append(document["name"].split("/documents/", 1)[1])
                fields = document["fields"]
                typed += "integerValue" in fields["rating"] and "timestampValue" in fields["timestamp"]
        self.expect("documents", len(got), len(expected))
        if set(got) != expected:
            self.fail(f"not the client's documents: missing {sorted(expected - set(got))[:3]}, "
                      f"extra {sorted(set(got) - expected)[:3]}")
        self.expect("in name order", got, sorted(got))
        self.expect("typed ratings and timestamps", typed, len(expected))
        with open(os.path.join(folder, ".night.json"), encoding="utf-8") as text:
            read_time = json.load(text)["read_time"]
        counted = db.collection("rating_events").count().get(
            read_time=DatetimeWithNanoseconds.from_rfc3339(read_time))[0][0].value
        self.expect(f"Google's count at readTime {read_time}", counted, len(got))

    def test_a_night_holds_every_document_typed_as_many_as_google_counts_and_its_record_says_so(self):
        directory, done = full_night()
        current = os.readlink(os.path.join(directory, "current"))
        self.expect("nights", nights(directory), [current])
        self.holds_the_collection(os.path.join(directory, "current"))
        record = done.result
        self.expect("the record", {k: record.get(k) for k in ("mode", "fallback", "documents_read", "snapshot_documents",
                                                              "streams")},
                    {"mode": "full", "fallback": False, "documents_read": len(expected),
                     "snapshot_documents": len(expected), "streams": 8})
        self.expect("the record on disk", support.record(directory)["read_time"], record["read_time"])
        self.expect_in("the emulator has no partitionQuery", "rankings-night: fetch: rest: no partitionQuery", done.stderr)

    def test_pages_retried_after_503_429_a_dropped_connection_an_answer_not_http_and_one_cut_short_hold_every_document_once(self):
        # Each broken page is tried again, and the retry of each comes back whole.
        with faults.FaultyProxy(server.address) as proxy:
            for nth, fault in ((1, 503), (3, "drop"), (5, 429), (7, "garbage"), (9, "truncate")):
                proxy.fault(faults.pages, fault, nth=nth)
            directory = os.path.join(work, "through-faults")
            done = fetch(directory, proxy.address)
            self.expect_exit(done, 0)
            self.expect("retries said", len(support.said(done, "next in")), 5)
            broken = [c for c in proxy.chosen(faults.pages) if c.fault is not None]
            self.expect("pages broken", len(broken), 5)
        self.holds_the_collection(os.path.join(directory, "current"))

    def test_a_broken_answer_fails_the_fetch_69_and_dir_keeps_its_nights_and_bytes(self):
        # One try a call, so the fault is what the fetch meets (through retries, a broken answer
        # is tried again: above); the collection's first page, 1,000 of the sample's documents.
        directory = copy_of_full_night("faulted")
        before = harness.tree(directory)
        fewer = f"documents fetched, but Firestore counts {len(expected)} in rating_events"
        for fault, message, client in (
                ("error-item", "with an error: injected: the query stopped part way", {}),
                ("short", fewer, {}),
                ("only-end", fewer, {}),
                ("cut", "items): cut short", {}),
                ("empty", "the stream ends without its item marked done (0 items): cut short", {}),
                ("repeat", "is not after the document before it (a repeat or a step back)", {}),
                ("non-object", "item 4 is not an object", {}),
                ("nameless", "an item holds a document without a name", {}),
                ("truncate", "IncompleteRead", {}),
                ("garbage", "BadStatusLine", {}),
                ("trickle", "no whole answer within 3s", {"timeout": 3}),
        ):
            with self.subTest(fault=fault):
                with faults.FaultyProxy(server.address) as proxy:
                    proxy.fault(faults.first_page, fault)
                    done = fetch(directory, proxy.address, "a test's", attempts=1, **client)
                self.expect_exit(done, 69, message)
                self.expect("the last line is the error", done.stderr.splitlines()[-1].startswith(
                    "rankings-night: error: fetch: "), True)
                self.expect("DIR: its nights, current and every byte (no partial folder left)",
                            harness.tree(directory), before)

    def test_a_full_disk_while_writing_the_snapshot_is_73_naming_the_file_and_leaves_nothing(self):
        if os.geteuid() != 0:
            self.skipTest("needs root (a small tmpfs)")
        directory = os.path.join(work, "full-disk")
        os.makedirs(directory)
        subprocess.run(["mount", "-t", "tmpfs", "-o", "size=512k", "tmpfs", directory], check=True)
        try:
            done = fetch(directory)
            self.expect_exit(done, 73, "No space left on device; current unchanged")
            self.expect("DIR", harness.tree(directory), {})
            # Which file could not be written.
            self.expect_in("the file named", f"error: fetch: {directory}/", done.stderr)
        finally:
            subprocess.run(["umount", directory], check=False)

    def test_votes_written_and_deleted_while_paging_are_neither_seen_nor_missed(self):
        # After the fetch has its readTime and a page, Google's client writes two votes (one sorting
        # first, one last) and deletes one: every page is read at the night's readTime, so the
        # night holds the collection as it was, exactly.
        events = db.collection("rating_events")
        victim = events.document(sorted(expected)[-1].split("/", 1)[1])
        kept = victim.get().to_dict()
        new = {"joke_id": "j-new", "rating": 5, "device_id": "d-new", "week_id": "2026-W01",
               "timestamp": datetime.datetime(2026, 1, 1, tzinfo=support.UTC)}

        def write_while_paging():
            events.document("0000-arrived-during-fetch").set(new)
            events.document("zzzz-arrived-during-fetch").set(new)
            victim.delete()
        try:
            with faults.FaultyProxy(server.address) as proxy:
                proxy.before(faults.pages, write_while_paging, nth=2)
                directory = os.path.join(work, "while-voting")
                done = fetch(directory, proxy.address)
                self.expect_exit(done, 0)
            now = {d.path for d in events.list_documents()}
            self.expect("the collection changed meanwhile", (len(now - expected), len(expected - now)), (2, 1))
            self.holds_the_collection(os.path.join(directory, "current"))
        finally:
            events.document("0000-arrived-during-fetch").delete()
            events.document("zzzz-arrived-during-fetch").delete()
            victim.set(kept)

    def test_the_job_makes_the_sample_goldens_from_the_night(self):
        directory, _ = full_night()
        self.makes_the_goldens(os.path.join(directory, "current"))

    def test_the_job_makes_the_sample_goldens_from_the_emulators_own_export(self):
        # A managed export, as an operator drops one in RANKINGS_EXPORTS (the night of no project).
        folder = os.path.join(work, "export")
        os.makedirs(folder)
        done = harness.run([sys.executable, "-c", f"""
import json, urllib.request
request = urllib.request.Request("http://{server.address}/emulator/v1/projects/{PROJECT}:export", method="POST",
    data=json.dumps({{"database": "projects/{PROJECT}/databases/(default)", "export_directory": "{folder}"}}).encode(),
    headers={{"Content-Type": "application/json"}})
print(urllib.request.urlopen(request, timeout=60).status)"""])
        self.expect_exit(done, 0)
        tree, = [os.path.join(folder, n) for n in os.listdir(folder)]
        self.expect("export roots", len([n for n in os.listdir(tree) if n.endswith(".overall_export_metadata")]), 1)
        self.makes_the_goldens(tree)

    def makes_the_goldens(self, source):
        for flags, golden in (([], os.path.join(support.SAMPLE, "expected", "all_time.json")),
                              (["--week", "2025-W42"], os.path.join(support.SAMPLE, "backfill", "week-2025-W42.json"))):
            done = harness.run([support.RANKINGS, "aggregate", "--computed-at", "2026-02-18T05:00:00Z", *flags, source])
            self.expect_exit(done, 0)
            with open(golden) as g:
                self.expect(f"{' '.join(flags) or 'all-time'}: the golden bytes", done.stdout, g.read())

    def test_unreachable_firestore_fails_69_after_retries_and_dir_stays(self):
        directory, _ = full_night()
        before = harness.tree(directory)
        done = fetch(directory, f"127.0.0.1:{emu.free_port()}")
        self.expect_exit(done, 69, "(gave up after 5 tries)")
        self.expect("DIR", harness.tree(directory), before)
        self.expect("documents read", done.result["documents_read"], 0)


class Publish(harness.Case):
    """Documents the job makes from the sample (its goldens), published."""

    @classmethod
    def setUpClass(cls):
        cls.folder = os.path.join(work, "publish")
        os.makedirs(cls.folder, exist_ok=True)
        cls.goldens = {"all_time": os.path.join(support.SAMPLE, "expected", "all_time.json"),
                       "2025-W42": os.path.join(support.SAMPLE, "backfill", "week-2025-W42.json")}
        for name, golden in cls.goldens.items():
            shutil.copyfile(golden, os.path.join(cls.folder, f"{name}.json"))

    def stored(self, name="all_time"):
        return db.collection("weekly_rankings").document(name)

    def test_publish_writes_both_and_googles_client_reads_the_same_lists_integer_counts_timestamps_and_no_extra_field(self):
        for name, golden in self.goldens.items():
            done = publish(os.path.join(self.folder, f"{name}.json"), name)
            self.expect_exit(done, 0, f"rankings-night: publish: wrote projects/{PROJECT}/databases/(default)/documents/"
                                      f"weekly_rankings/{name} (")
            self.expect("its outcome", done.result, "written")
            with open(golden, encoding="utf-8") as g:
                want = json.load(g)
            got = self.stored(name).get().to_dict()
            # The snapshot's readTime the night adds, a Timestamp (the app ignores it).
            self.assertIsInstance(got.pop("snapshot_read_time"), datetime.datetime, "snapshot_read_time")
            self.expect(f"{name}: fields", sorted(got), sorted(want))
            for key in ("hilarious", "horrible"):
                self.expect(f"{name}: {key}", got[key], want[key])
                for entry in got[key]:
                    self.expect(f"{name}: {key} entry types", [type(entry[k]).__name__ for k in ("joke_id", "count", "rank")],
                                ["str", "int", "int"])
            for key in ("total_hilarious_ratings", "total_horrible_ratings"):
                self.expect(f"{name}: {key}", (type(got[key]).__name__, got[key]), ("int", want[key]))
            for key in ("computed_at", "week_start", "week_end"):
                if key in want:
                    self.assertIsInstance(got[key], datetime.datetime, f"{name}: {key} is not a Timestamp")
                    text = got[key].astimezone(support.UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
                    self.expect(f"{name}: {key}", text, want[key] if "." in want[key] else want[key].replace("Z", ".000Z"))
            self.expect(f"{name}: week_id", got["week_id"], want["week_id"])

    def test_a_publish_replaces_the_whole_document(self):
        self.expect_exit(publish(os.path.join(self.folder, "all_time.json")), 0)
        self.stored().update({"stale": True})
        self.expect_exit(publish(os.path.join(self.folder, "all_time.json")), 0)
        self.expect("the stale field", "stale" in self.stored().get().to_dict(), False)

    def test_an_invalid_document_is_refused_65_and_firestore_keeps_the_old_one(self):
        self.expect_exit(publish(os.path.join(self.folder, "all_time.json")), 0)
        os.makedirs(os.path.join(work, "bad"), exist_ok=True)
        bad = os.path.join(work, "bad", "all_time.json")
        with open(bad, "w") as out:
            out.write('{"week_id": "all_time", "hilarious": []}\n')
        before = self.stored().get().update_time
        self.expect_exit(publish(bad), 65, "not published: rankings check said status 65")
        self.expect("update time", self.stored().get().update_time, before)

    def test_a_weeks_board_as_all_time_is_refused_65_and_firestore_keeps_the_old_one(self):
        self.expect_exit(publish(os.path.join(self.folder, "all_time.json")), 0)
        before = self.stored().get().update_time
        done = publish(os.path.join(self.folder, "2025-W42.json"), "all_time")
        self.expect_exit(done, 65, "its week_id is 2025-W42, but it would be written as weekly_rankings/all_time")
        self.expect("update time", self.stored().get().update_time, before)

    def test_publish_to_unreachable_firestore_is_69(self):
        firestore = support.connect(PROJECT, f"127.0.0.1:{emu.free_port()}")
        done = support.publish(firestore, os.path.join(self.folder, "all_time.json"), read_time="2026-11-27T05:00:00Z")
        self.expect_exit(done, 69, "gave up after 5 tries")


if __name__ == "__main__":
    harness.main()
