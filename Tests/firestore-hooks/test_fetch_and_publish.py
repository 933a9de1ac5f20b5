"""The two Firestore programs of the night against Google's Firestore emulator: the sample's votes
seeded with Google's client, fetched by rankings-fetch-firestore (rest, then export), made into
the sample's golden documents by the job, published by rankings-publish-firestore and read back
with Google's client as the app's decoder sees them. A rest night holds as many documents as
Google's client counts at its readTime. Then Firestore's answers broken every way faults.py knows,
votes written while the fetch pages, a token sent through RANKINGS_FIRESTORE_ENDPOINT, a token
command printing two lines, missing or unknown settings and Firestore unreachable: each fails with
its status, and the fetch's DIR stays as it was. rankings-fetch.prom must pass `promtool check
metrics` after a night and after a failed fetch."""
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

PROJECT = "demo-rankings-loop"
server = db = work = None
expected = set()        # the collection as Google's client lists it: what a whole fetch holds
cached = {}


def setUpModule():
    global server, db, work, expected
    work = tempfile.mkdtemp(prefix="rankings-firestore-loop.")
    server = support.start_emulator()
    db = emu.client(PROJECT, server.address)
    emu.seed(db, os.path.join(support.SAMPLE, "rating_events.ndjson"))
    expected = {d.path for d in db.collection("rating_events").list_documents()}


def tearDownModule():
    if server:
        server.stop()
    shutil.rmtree(work, ignore_errors=True)


def emulated(**settings):
    return dict({"RANKINGS_FIRESTORE_PROJECT": PROJECT, "FIRESTORE_EMULATOR_HOST": server.address}, **settings)


def fetch(directory, **settings):
    return support.hook(support.FETCH, directory, **emulated(**settings))


def publish(path, **settings):
    return support.hook(support.PUBLISH, path, **emulated(**settings))


def nights(directory):
    return sorted(n for n in os.listdir(directory) if n[:1].isdigit())


def rest_night():
    """The module's one rest night (a fetch into an empty DIR, its metrics beside work/metrics),
    made by the first test that needs it."""
    if "rest" not in cached:
        directory = os.path.join(work, "firestore")
        os.makedirs(os.path.join(work, "metrics"), exist_ok=True)
        cached["rest"] = directory, fetch(directory, RANKINGS_METRICS=os.path.join(work, "metrics", "rankings.prom"))
    directory, done = cached["rest"]
    if done.returncode != 0:
        raise AssertionError(f"the rest night failed ({done.returncode}): {done.stderr[-2000:]}")
    return directory, done


def copy_of_rest_night(name):
    """A DIR holding the rest night, for a test to fail fetches into."""
    directory, _ = rest_night()
    copy = os.path.join(work, name)
    shutil.copytree(directory, copy, symlinks=True)
    return copy


def fetch_metrics():
    return support.promtool_samples(os.path.join(work, "metrics", "rankings-fetch.prom"))


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

    def test_a_rest_night_holds_every_document_typed_as_many_as_google_counts_and_promtool_accepts_its_metrics(self):
        directory, done = rest_night()
        current = os.readlink(os.path.join(directory, "current"))
        self.expect("nights", nights(directory), [current])
        self.holds_the_collection(os.path.join(directory, "current"))
        samples = fetch_metrics()
        self.expect("rankings-fetch.prom", {k: samples.get(f"rankings_fetch_{k}") for k in (
            "last_run_exit_status", "snapshot_documents", "documents_read", "full", "fallback", "drift_documents")},
            {"last_run_exit_status": "0", "snapshot_documents": str(len(expected)),
             "documents_read": str(len(expected)), "full": "1", "fallback": "0", "drift_documents": "0"})
        self.assertNotIn("rankings_fetch_last_run_documents", samples, "the dropped series is back")
        self.assertIn("rankings_fetch_last_success_timestamp_seconds", samples)

    def test_pages_retried_after_503_429_a_dropped_connection_an_answer_not_http_and_one_cut_short_hold_every_document_once(self):
        # One stream, so the pages come one after another: every other page request is broken,
        # and the retry of each comes back whole.
        with faults.FaultyProxy(server.address) as proxy:
            for nth, fault in ((1, 503), (3, "drop"), (5, 429), (7, "garbage"), (9, "truncate")):
                proxy.fault(faults.pages, fault, nth=nth)
            directory = os.path.join(work, "through-faults")
            done = fetch(directory, FIRESTORE_EMULATOR_HOST=proxy.address, RANKINGS_FIRESTORE_STREAMS="1",
                         RANKINGS_FIRESTORE_INCREMENTAL="no")
            self.expect_exit(done, 0)
            self.expect("retries reported", len(support.said(done, "next in")), 5)
            self.expect("page requests (5 pages, the empty 6th, 5 tried again)", len(proxy.chosen(faults.pages)), 11)
        self.holds_the_collection(os.path.join(directory, "current"))

    def test_a_broken_answer_fails_the_night_69_and_dir_keeps_its_nights_and_bytes(self):
        # One try a call, so the fault is what the fetch meets; one stream, so "page 2" is the
        # second page of the collection. (Through retries, a broken answer is tried again: above.)
        directory = copy_of_rest_night("faulted")
        before = harness.tree(directory)
        for fault, page, message, extra in (
                ("error-item", 2, "Firestore stopped the stream at item 501 with an error: injected", {}),
                ("short", 1, "999 documents fetched", {}),
                ("only-end", 1, "0 documents fetched", {}),
                ("cut", 1, "the stream ends without its item marked done (999 items): cut short", {}),
                ("empty", 1, "the stream ends without its item marked done (0 items): cut short", {}),
                ("repeat", 2, "does not come after the document before it (a repeat or a step back)", {}),
                ("non-object", 1, "item 4 is not an object", {}),
                ("nameless", 1, "item 4 holds a document without a name", {}),
                ("truncate", 2, "IncompleteRead", {}),
                ("garbage", 1, "BadStatusLine", {}),
                ("trickle", 1, "no whole answer within 3s", {"RANKINGS_FIRESTORE_TIMEOUT_SECONDS": "3"}),
        ):
            with self.subTest(fault=fault, page=page):
                with faults.FaultyProxy(server.address) as proxy:
                    proxy.fault(faults.pages, fault, nth=page)
                    done = fetch(directory, FIRESTORE_EMULATOR_HOST=proxy.address, RANKINGS_FIRESTORE_ATTEMPTS="1",
                                 RANKINGS_FIRESTORE_STREAMS="1", RANKINGS_FIRESTORE_INCREMENTAL="no", **extra)
                self.expect_exit(done, 69, message)
                last = done.stderr.strip().splitlines()[-1]
                self.expect("the last line is the error", last.startswith("rankings-fetch-firestore: error: "), True)
                self.expect("a traceback", "Traceback" in done.stderr, False)
                self.expect("DIR: its nights, current and every byte (no partial folder left)",
                            harness.tree(directory), before)

    def test_a_full_disk_while_writing_the_snapshot_is_73_naming_the_file_and_leaves_only_the_lock(self):
        if os.geteuid() != 0:
            self.skipTest("needs root (a small tmpfs)")
        directory = os.path.join(work, "full-disk")
        os.makedirs(directory)
        subprocess.run(["mount", "-t", "tmpfs", "-o", "size=512k", "tmpfs", directory], check=True)
        try:
            done = fetch(directory, RANKINGS_FIRESTORE_INCREMENTAL="no")
            self.expect_exit(done, 73, "No space left on device; current unchanged")
            self.expect("a traceback", "Traceback" in done.stderr, False)
            self.expect("DIR", sorted(harness.tree(directory)), [".rankings-fetch.lock"])
            # As the earlier hook did ("cannot write /dev/full: ..."): which file could not be written.
            self.expect_in("the file named", f"error: {directory}/", done.stderr)
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
                done = fetch(directory, FIRESTORE_EMULATOR_HOST=proxy.address, RANKINGS_FIRESTORE_STREAMS="1")
                self.expect_exit(done, 0)
            now = {d.path for d in events.list_documents()}
            self.expect("the collection changed meanwhile", (len(now - expected), len(expected - now)), (2, 1))
            self.holds_the_collection(os.path.join(directory, "current"))
        finally:
            events.document("0000-arrived-during-fetch").delete()
            events.document("zzzz-arrived-during-fetch").delete()
            victim.set(kept)

    def test_the_emulators_export_becomes_the_night_the_job_makes_the_goldens_from_it_and_keep_2_keeps_two(self):
        directory = os.path.join(work, "export")
        made = []
        for keep in ("7", "7", "2"):
            done = fetch(directory, RANKINGS_FIRESTORE_FETCH="export", RANKINGS_FIRESTORE_KEEP=keep)
            self.expect_exit(done, 0)
            made.append(os.readlink(os.path.join(directory, "current")))
        self.expect("nights kept (KEEP=2 on the third)", nights(directory), made[1:])
        tree = os.path.join(directory, "current")
        self.expect("export roots", len([n for n in os.listdir(tree) if n.endswith(".overall_export_metadata")]), 1)
        outputs = [os.path.join(p, n) for p, _, files in os.walk(tree) for n in files if n.startswith("output-")]
        self.assertTrue(outputs and all(os.path.getsize(o) > 0 for o in outputs), f"no export output files in {tree}")
        self.makes_the_goldens(tree)

    def test_the_job_makes_the_sample_goldens_from_the_rest_night(self):
        directory, _ = rest_night()
        self.makes_the_goldens(os.path.join(directory, "current"))

    def makes_the_goldens(self, source):
        for flags, golden in (([], os.path.join(support.SAMPLE, "expected", "all_time.json")),
                              (["--week", "2025-W42"], os.path.join(support.SAMPLE, "backfill", "week-2025-W42.json"))):
            done = harness.run([support.RANKINGS, "aggregate", "--computed-at", "2026-02-18T05:00:00Z", *flags, source])
            self.expect_exit(done, 0)
            with open(golden) as g:
                self.expect(f"{' '.join(flags) or 'all-time'}: the golden bytes", done.stdout, g.read())

    def test_unreachable_firestore_fails_both_methods_69_after_retries_dir_unchanged_and_the_metrics_keep_the_last_success(self):
        directory, _ = rest_night()
        success = fetch_metrics().get("rankings_fetch_last_success_timestamp_seconds")
        before = harness.tree(directory)
        for method in ("rest", "export"):
            done = fetch(directory, FIRESTORE_EMULATOR_HOST=f"127.0.0.1:{emu.free_port()}",
                         RANKINGS_FIRESTORE_FETCH=method, RANKINGS_METRICS=os.path.join(work, "metrics", "rankings.prom"))
            self.expect_exit(done, 69, "gave up after 5 tries")
            self.expect(f"{method}: DIR", harness.tree(directory), before)
            samples = fetch_metrics()
            self.expect(f"{method}: rankings-fetch.prom's status", samples.get("rankings_fetch_last_run_exit_status"), "69")
            self.expect(f"{method}: its last success (the rest night's)",
                        samples.get("rankings_fetch_last_success_timestamp_seconds"), success)

    def test_a_token_from_the_token_command_goes_with_every_call_through_the_endpoint_and_into_no_message(self):
        with faults.FaultyProxy(server.address) as proxy:
            directory = os.path.join(work, "with-token")
            done = fetch(directory, FIRESTORE_EMULATOR_HOST=None, RANKINGS_FIRESTORE_ENDPOINT=f"http://{proxy.address}/v1",
                         RANKINGS_FIRESTORE_TOKEN_COMMAND="echo ya29.loop-token")
            self.expect_exit(done, 0)
            self.expect("Authorization headers", {c.authorization for c in proxy.calls}, {"Bearer ya29.loop-token"})
        self.expect("the token in a message", "loop-token" in done.stderr, False)
        self.holds_the_collection(os.path.join(directory, "current"))

    def test_a_token_command_printing_two_lines_stops_both_programs_78_showing_neither_line(self):
        directory = copy_of_rest_night("two-line-token")
        before = harness.tree(directory)
        with faults.FaultyProxy(server.address) as proxy:
            for name, argument in ((support.FETCH, directory),
                                   (support.PUBLISH, os.path.join(support.SAMPLE, "expected", "all_time.json"))):
                done = support.hook(name, argument, RANKINGS_FIRESTORE_PROJECT=PROJECT,
                                    RANKINGS_FIRESTORE_ENDPOINT=f"http://{proxy.address}/v1",
                                    RANKINGS_FIRESTORE_TOKEN_COMMAND="printf 'ya29.SECRET-token\\nsecond-line\\n'")
                self.expect_exit(done, 78, "no access token")
                self.expect_in(name, "not a single line", done.stderr)
                for secret in ("SECRET", "second-line"):
                    self.expect(f"{name}: {secret} shown", secret in done.stderr, False)
            self.expect("requests sent", len(proxy.calls), 0)
        self.expect("DIR", harness.tree(directory), before)

    def test_a_missing_project_or_an_unknown_setting_stops_both_programs_78(self):
        for name, argument in ((support.FETCH, os.path.join(work, "no-project")),
                               (support.PUBLISH, os.path.join(support.SAMPLE, "expected", "all_time.json"))):
            done = support.hook(name, argument, FIRESTORE_EMULATOR_HOST=server.address)
            self.expect_exit(done, 78, f"{name}: error: RANKINGS_FIRESTORE_PROJECT is not set")
            done = support.hook(name, argument, **emulated(RANKINGS_FIRESTORE_PROJEKT="x"))
            self.expect_exit(done, 78, "unknown setting RANKINGS_FIRESTORE_PROJEKT (did you mean "
                                       "RANKINGS_FIRESTORE_PROJECT?)")
        self.assertFalse(os.path.exists(os.path.join(work, "no-project")), "the fetch made DIR")


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
            done = publish(os.path.join(self.folder, f"{name}.json"))
            self.expect_exit(done, 0, f"wrote projects/{PROJECT}/databases/(default)/documents/weekly_rankings/{name}")
            with open(golden, encoding="utf-8") as g:
                want = json.load(g)
            got = self.stored(name).get().to_dict()
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

    def test_a_firestore_body_publishes_the_same_document_as_the_json_form(self):
        directory, _ = rest_night()
        os.makedirs(os.path.join(work, "body"), exist_ok=True)
        body = os.path.join(work, "body", "all_time.json")
        done = harness.run([support.RANKINGS, "aggregate", "--computed-at", "2026-02-18T05:00:00Z", "--format", "firestore",
                            "--output", body, os.path.join(directory, "current")])
        self.expect_exit(done, 0)
        self.expect_exit(publish(os.path.join(self.folder, "all_time.json")), 0)
        from_json = self.stored().get().to_dict()
        self.stored().delete()
        self.expect_exit(publish(body), 0)
        self.expect("the document", self.stored().get().to_dict(), from_json)

    def test_an_invalid_document_is_refused_65_and_firestore_keeps_the_old_one(self):
        self.expect_exit(publish(os.path.join(self.folder, "all_time.json")), 0)
        os.makedirs(os.path.join(work, "bad"), exist_ok=True)
        bad = os.path.join(work, "bad", "all_time.json")
        with open(bad, "w") as out:
            out.write('{"week_id": "all_time", "hilarious": []}\n')
        before = self.stored().get().update_time
        self.expect_exit(publish(bad), 65)
        self.expect("update time", self.stored().get().update_time, before)

    def test_a_weeks_board_named_all_time_is_refused_65_and_an_all_time_board_publishes_as_monthly(self):
        self.expect_exit(publish(os.path.join(self.folder, "all_time.json")), 0)
        os.makedirs(os.path.join(work, "misnamed"), exist_ok=True)
        misnamed = os.path.join(work, "misnamed", "all_time.json")
        shutil.copyfile(self.goldens["2025-W42"], misnamed)
        before = self.stored().get().update_time
        done = publish(misnamed)
        self.expect_exit(done, 65, "its week_id is 2025-W42, but it would be written as weekly_rankings/all_time; "
                                   "name the file 2025-W42.json")
        self.expect("update time", self.stored().get().update_time, before)
        monthly = os.path.join(work, "misnamed", "monthly.json")
        shutil.copyfile(self.goldens["all_time"], monthly)
        self.expect_exit(publish(monthly), 0)
        self.expect("weekly_rankings/monthly", self.stored("monthly").get().to_dict()["week_id"], "all_time")

    def test_publish_to_unreachable_firestore_is_69(self):
        done = publish(os.path.join(self.folder, "all_time.json"), FIRESTORE_EMULATOR_HOST=f"127.0.0.1:{emu.free_port()}")
        self.expect_exit(done, 69, "gave up after 5 tries")

    def test_a_newline_in_the_documents_file_name_stays_inside_its_one_log_line(self):
        os.makedirs(os.path.join(work, "odd-name"), exist_ok=True)
        odd = os.path.join(work, "odd-name", "all\ntime.json")
        shutil.copyfile(self.goldens["all_time"], odd)
        done = publish(odd, RANKINGS_FIRESTORE_COLLECTION="loop_odd_names")
        self.expect_exit(done, 0, "loop_odd_names/all\\ntime (")
        self.expect("log lines", len(done.stderr.splitlines()), 1)


if __name__ == "__main__":
    harness.main()
