"""What the fetch and the publish must prove before they succeed (fetch.run and publish.publish in
this process), against Google's Firestore emulator with faults.py in front of it where Firestore's
answer is to be wrong:

- an incremental night whose answer is cut (its last document gone, or all of it but its end, or
  its end gone), or that Firestore refuses (400 FAILED_PRECONDITION, as when the timestamp index
  is exempted), becomes a full read: fallback, the reason said, the document a full read's;
- a previous snapshot changed on disk (one rating, one document's name), its record intact, is
  not built on: a full read, the reason that it is not the snapshot its record describes;
- a damaged .night.json (a count that is not one, a time that is not one or is in the future, a
  record of an earlier format, damaged or not) makes a full read with the reason, never 70;
- a wrong project (an empty collection) fails 65 naming the project, DIR as it was;
- a publish whose commit's answer is not the document sent (204, {}, [], no or two write
  results), whose read-back differs, or that is redirected elsewhere, fails 69 with no success
  line, and the redirect's target sees no request."""
import datetime
import json
import os
import random
import shutil
import sys
import tempfile

# The emulator, the proxy and what the suites share live with the loop's suites.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "firestore-loop"))
import support  # noqa: E402 (puts Tests/ on sys.path too)
import emulator as emu  # noqa: E402
import faults  # noqa: E402
import harness  # noqa: E402

PROJECT = "demo-rankings-proofs"
server = work = None


def setUpModule():
    global server, work
    work = tempfile.mkdtemp(prefix="rankings-firestore-proofs.")
    server = support.start_emulator()


def tearDownModule():
    if server:
        server.stop()
    shutil.rmtree(work, ignore_errors=True)


def fetch(directory, project=PROJECT, address=None, full_because=None):
    return support.fetch(directory, support.connect(project, address or server.address), full_because)


def on_documents(fault):
    """fault applied to an incremental page that holds documents: the margin is read in spans of
    time, and the spans before tonight's changes hold none."""
    return lambda items: faults.rewrite(fault, items) if any("document" in item for item in items) else items


def copy(directory, name):
    shutil.rmtree(os.path.join(work, name), ignore_errors=True)
    shutil.copytree(directory, os.path.join(work, name), symlinks=True)
    return os.path.join(work, name)


class Chain(harness.Case):
    """Night 1, a full read over 3,000 votes (the tests copy its DIR), then 5 re-ratings of
    Horrible votes to Hilarious, and a full read of the collection after them: the document
    every night below must make."""
    project, votes = PROJECT, 3000

    @classmethod
    def setUpClass(cls):
        cls.db = emu.client(cls.project, server.address)
        collection = support.votes(random.Random(11), cls.votes, 200)
        emu.write(cls.db, "rating_events", collection.items())
        cls.night1 = os.path.join(work, f"{cls.project}-night1")
        done = fetch(cls.night1, cls.project)
        if done.returncode != 0:
            raise AssertionError(f"night 1 failed ({done.returncode}): {done.stderr[-2000:]}")
        now = datetime.datetime.now(support.UTC)
        cls.re_rated = [n for n in sorted(collection) if collection[n]["rating"] == 1][:5]
        emu.write(cls.db, "rating_events", ((n, dict(collection[n], rating=5, timestamp=now)) for n in cls.re_rated))
        reference = os.path.join(work, f"{cls.project}-full")
        done = fetch(reference, cls.project, full_because="the reference")
        if done.returncode != 0:
            raise AssertionError(f"the full read failed ({done.returncode}): {done.stderr[-2000:]}")
        cls.at = support.stamp()
        cls.full = support.document(os.path.join(reference, "current"), cls.at)

    def falls_back(self, directory, why, fault=None, match=faults.incremental):
        """Tonight's night, through the proxy breaking the answer to what match chooses (the
        incremental query's pages): a full read with the reason, and the full read's document."""
        with faults.FaultyProxy(server.address) as proxy:
            if fault is not None:
                proxy.fault(match, fault, times=None if callable(fault) else 1)
            done = fetch(directory, self.project, proxy.address)
            asked = len(proxy.chosen(faults.incremental))
        self.expect_exit(done, 0)
        self.assertGreater(asked, 0, "no incremental query asked (the night did not try one)")
        record = support.record(directory)
        self.expect("mode, fallback", (record["mode"], record.get("fallback")), ("full", True))
        self.expect("the document (a full read's)", support.document(os.path.join(directory, "current"), self.at),
                    self.full)
        self.expect_in("the record's reason", why, record["full_reason"])
        logged = support.said(done, "rankings-night: warning: fetch: rest: the incremental night is not proven, so a "
                                    "full read: ")
        self.expect_in("the reason said", why, "".join(logged[:1]))
        return done


class Incremental(Chain):
    def test_an_incremental_answer_cut_is_not_accepted_a_full_read_with_the_reason_and_a_full_reads_document(self):
        for fault, why in (
                ("short", "4 documents since"),                 # the last re-rating gone, the stream well formed
                ("only-end", "0 documents since"),              # nothing but its readTime and done
                ("cut", "cannot be used: runQuery page 1: the stream ends without its item marked done"),             # its last item gone, done with it
        ):
            with self.subTest(fault=fault):
                done = self.falls_back(copy(self.night1, f"cut-{fault}"), why, on_documents(fault))
                if fault != "cut":
                    self.expect_in("the query's own COUNT", "but Firestore counts 5 for the same query", done.stderr)

    def test_firestore_refusing_the_incremental_query_or_its_count_makes_a_full_read(self):
        # What Firestore answers when the timestamp field's index is exempted.
        refusal = (400, [{"error": {"code": 400, "status": "FAILED_PRECONDITION",
                                    "message": "The query requires an index on timestamp."}}])
        for what, match, why in (("its pages", faults.incremental, "documents:runQuery: HTTP 400"),
                                 ("its COUNT", lambda call: faults.counts(call) and call.filters_on("timestamp"),
                                  "documents:runAggregationQuery: HTTP 400")):
            with self.subTest(what):
                self.falls_back(copy(self.night1, "refused"), why, refusal, match)

    def test_a_previous_snapshot_changed_on_disk_with_its_record_intact_is_not_built_on(self):
        night = os.readlink(os.path.join(self.night1, "current"))
        prefix = f"projects/{self.project}/databases/(default)/documents/"
        with open(os.path.join(self.night1, night, "rating_events.ndjson"), "rb") as f:
            lines = f.read().splitlines(keepends=True)
        one = next(i for i, line in enumerate(lines) if b'"rating":{"integerValue":"1"}' in line
                   and not any(n.encode() in line for n in self.re_rated))
        for what, number, changed in (
                ("a rating 1 -> 5", one, lines[one].replace(b'"rating":{"integerValue":"1"}', b'"rating":{"integerValue":"5"}')),
                ("a name moved to another collection", 0,
                 lines[0].replace(f"{prefix}rating_events/".encode(), f"{prefix}jokes/".encode())),
        ):
            with self.subTest(what):
                self.assertNotEqual(changed, lines[number])
                directory = copy(self.night1, "changed")
                with open(os.path.join(directory, night, "rating_events.ndjson"), "wb") as f:
                    f.write(b"".join(lines[:number] + [changed] + lines[number + 1:]))
                self.falls_back(directory, "is not the snapshot its record describes")

    def test_a_wrong_project_an_empty_collection_fails_65_naming_it_and_dir_stays(self):
        directory = copy(self.night1, "wrong-project")
        before = harness.tree(directory)
        done = fetch(directory, "demo-rankings-nobody")
        self.expect_exit(done, 65, "rating_events in projects/demo-rankings-nobody/databases/(default) holds no "
                                   "documents")
        self.expect("DIR", harness.tree(directory), before)


class Records(Chain):
    """A damaged record of the previous night, on a small collection."""
    project, votes = "demo-rankings-records", 60

    def test_a_damaged_record_makes_a_full_read_with_the_reason_never_70(self):
        night = os.readlink(os.path.join(self.night1, "current"))
        with open(os.path.join(self.night1, night, ".night.json"), encoding="utf-8") as text:
            good = json.load(text)
        # The record of format 1 (0.3's fetch): it counted incremental nights by runs.
        earlier = {k: good[k] for k in ("collection", "database", "documents_read", "method", "mode", "project",
                                        "read_time", "snapshot_documents", "watermark")}
        earlier.update(format=1, since=None, drift_documents=0, margin_seconds=172800, incrementals_since_full=0)
        def record(damaged, value=None):
            """The record's bytes; value (JSON text) in place of the one "@"."""
            text = json.dumps(damaged, indent=1)
            return (text.replace('"@"', value) if value is not None else text).encode()
        cases = []
        for value in ('"abc"', "null", "[1]", "1e400", "NaN"):
            cases.append((f"snapshot_documents {value}", record(dict(good, snapshot_documents="@"), value),
                          "snapshot_documents is"))
            cases.append((f"a format-1 record, incrementals_since_full {value}",
                          record(dict(earlier, incrementals_since_full="@"), value), "format 1, not 3"))
        cases += [
            ("read_time 12345", record(dict(good, read_time=12345)), "read_time is 12345, not an RFC 3339 time"),
            ("read_time in 2099", record(dict(good, read_time="2099-11-27T05:00:00.000000Z")), "is in the future"),
            ("read_time 2026-13-45T99:99:99Z", record(dict(good, read_time="2026-13-45T99:99:99Z")),
             "not an RFC 3339 time"),
            ("a format-1 record", record(earlier), "format 1, not 3"),
            ("a JSON array", b"[" + record(good) + b"]", "not a JSON object"),
            ("a count of 5,000 digits", record(dict(good, snapshot_documents="@"), "9" * 5000), ".night.json: "),
            ("bytes that are not UTF-8", record(good).replace(b'"rest"', b'"r\xffst"'),
             ".night.json: "),
            ("nested 100,000 deep", b"[" * 100_000 + b"]" * 100_000, ".night.json: "),
            ("empty", b"", ".night.json: "),
        ]
        for what, text, why in cases:
            with self.subTest(what):
                directory = copy(self.night1, "damaged")
                with open(os.path.join(directory, night, ".night.json"), "wb") as out:
                    out.write(text)
                done = fetch(directory, self.project)
                self.expect_exit(done, 0)
                self.expect("mode", support.record(directory)["mode"], "full")
                self.expect("the document (a full read's)", support.document(os.path.join(directory, "current"), self.at),
                            self.full)
                logged = support.said(done, "so a full read: the previous night's record cannot be used: ")
                self.expect_in("the reason logged", why, "".join(logged[:1]))


class Publish(harness.Case):
    """The all-time golden published through the proxy."""

    @classmethod
    def setUpClass(cls):
        cls.db = emu.client(PROJECT, server.address)
        cls.folder = os.path.join(work, "publish")
        os.makedirs(cls.folder, exist_ok=True)
        cls.path = os.path.join(cls.folder, "all_time.json")
        shutil.copyfile(os.path.join(support.SAMPLE, "expected", "all_time.json"), cls.path)

    def publish(self, proxy):
        return support.publish(support.connect(PROJECT, proxy.address, attempts=2), self.path,
                               read_time=support.now(support.connect(PROJECT, server.address), "rating_events"))

    def test_a_publish_through_the_proxy_writes_the_document_and_reads_it_back(self):
        self.db.collection("weekly_rankings").document("all_time").delete()
        with faults.FaultyProxy(server.address) as proxy:
            done = self.publish(proxy)
        self.expect_exit(done, 0, f"wrote projects/{PROJECT}/databases/(default)/documents/weekly_rankings/all_time")
        # The document read with Firestore's time, written on the condition that it is still the
        # one read, read back.
        self.expect("calls", [c.kind for c in proxy.calls], ["batchGet", "commit", "batchGet"])
        with open(self.path, encoding="utf-8") as g:
            want = json.load(g)
        got = self.db.collection("weekly_rankings").document("all_time").get().to_dict()
        self.expect("Google's client reads", {k: got[k] for k in ("hilarious", "horrible", "week_id")},
                    {k: want[k] for k in ("hilarious", "horrible", "week_id")})

    def test_an_answer_that_is_not_the_document_sent_fails_69_with_no_success_line(self):
        def results(count):
            return lambda status, answer: (status, dict(answer, writeResults=answer["writeResults"] * count))

        def changed(status, answer):
            found = answer[0]["found"]
            fields = dict(found["fields"], total_hilarious_ratings={"integerValue": "1"})
            return status, [dict(answer[0], found=dict(found, fields=fields))]
        for what, match, fault, said in (
                ("204 and no body", faults.commits, lambda status, answer: (204, None), "holds no write result: {}"),
                ("200 and {}", faults.commits, lambda status, answer: (200, {}), "holds no write result: {}"),
                ("200 and []", faults.commits, lambda status, answer: (200, []), "holds no write result: []"),
                ("200 and no write result", faults.commits, results(0), "holds no write result"),
                ("200 and two write results", faults.commits, results(2), "holds no write result"),
                ("a read-back with other fields", faults.batch_gets, changed, "reading"),
        ):
            with self.subTest(what):
                with faults.FaultyProxy(server.address) as proxy:
                    # The commit's every try; the read-back, not the read before the commit.
                    proxy.fault(match, fault, nth=2 if match is faults.batch_gets else 1, times=None)
                    done = self.publish(proxy)
                self.expect_exit(done, 69, said)
                self.expect_in("not proven", "not proven published", done.stderr)
                self.expect("a success line", support.said(done, ": wrote "), [])

    def test_a_redirect_is_not_followed_and_its_target_sees_no_request(self):
        for code in (301, 302, 307):
            with self.subTest(code=code), faults.Recorder() as elsewhere, faults.FaultyProxy(server.address) as proxy:
                target = f"http://{elsewhere.address}/v1/projects/{PROJECT}/databases/(default)/documents/weekly_rankings/all_time"
                proxy.fault(faults.commits, ("redirect", code, target), times=None)
                done = self.publish(proxy)
                self.expect_exit(done, 69, f"HTTP {code}: a redirect to {target}, not followed")
                self.expect("a success line", support.said(done, ": wrote "), [])
                self.expect("requests elsewhere", elsewhere.requests, [])


if __name__ == "__main__":
    harness.main()
