"""The board proves itself against Google's emulator before the app sees it: whole nights
(`rankings-night run --environment`) in a row on one state directory, every call through
faults.py's proxy. Each test is one night, in order:

1. a full read: the board proven, with 2 COUNTs a joke and a few more (counted at the proxy);
2. an incremental night after a deletion of a Hilarious vote and a late Hilarious vote stamped
   before the margin (the collection's COUNT unchanged, so the incremental night's own proof
   holds): the board disagrees, the night reads everything, and the app's board is the truth;
3. the snapshot changed behind the night's back, its digest rewritten to match: the same;
4. Firestore refusing the per-joke COUNTs for want of an index: the probe finds it before the
   fetch, so the night reads the whole collection (no blind spot), and the board is published
   marked unproven in the log (a WARNING with the command), `status` and the metrics.
The truth is `rankings aggregate` over the collection as the test wrote it."""
import datetime
import hashlib
import json
import os
import random
import shutil
import tempfile

import support
import emulator as emu
import faults
import harness

PROJECT = "demo-rankings-board-proof"
VOTES, JOKES = 1200, 40
INDEX = {"error": {"code": 400, "status": "FAILED_PRECONDITION",
                   "message": "The query requires an index. You can create it here: https://console.firebase.google.com/"}}
server = work = None


def setUpModule():
    global server, work
    work = tempfile.mkdtemp(prefix="rankings-firestore-proof.")
    server = support.start_emulator()


def tearDownModule():
    if server:
        server.stop()
    shutil.rmtree(work, ignore_errors=True)


def per_joke(call):
    return call.kind == "count" and call.filters_on("joke_id")


class Proof(harness.Case):
    @classmethod
    def setUpClass(cls):
        cls.db = emu.client(PROJECT, server.address)
        cls.rng = random.Random(7)
        cls.collection = support.votes(cls.rng, VOTES, 60, jokes=JOKES)
        emu.write(cls.db, "rating_events", cls.collection.items())
        cls.state = os.path.join(work, "state")
        os.makedirs(cls.state)
        cls.nights = 0

    def night(self, status=0, fault=None):
        with faults.FaultyProxy(server.address) as proxy:
            if fault:
                proxy.fault(*fault, times=None)
            done = support.night(self.state, PROJECT, proxy.address, RANKINGS_METRICS=f"{self.state}/rankings.prom",
                                 RANKINGS_MAX_DROP="5")
        type(self).nights += 1
        self.expect_exit(done, status)
        return done, proxy

    def in_order(self, number):
        if self.nights != number - 1:
            self.fail(f"the nights before night {number} did not all run")

    def truth(self):
        """The board of the collection as written, at the published board's computed_at."""
        with open(os.path.join(self.state, "all_time.json"), encoding="utf-8") as text:
            computed_at = json.load(text)["computed_at"]
        folder = support.written(PROJECT, self.collection, os.path.join(work, f"written-{self.nights}"))
        out = os.path.join(work, f"truth-{self.nights}.json")
        made = harness.run([support.RANKINGS, "aggregate", "--computed-at", computed_at, "--output", out, folder])
        self.expect_exit(made, 0)
        with open(out, encoding="utf-8") as text:
            return json.load(text)

    def published(self):
        got = self.db.collection("weekly_rankings").document("all_time").get().to_dict()
        return {k: got[k] for k in ("hilarious", "horrible", "total_hilarious_ratings", "total_horrible_ratings")}

    def expect_truth(self, what):
        truth = self.truth()
        self.expect(what, self.published(), {k: truth[k] for k in ("hilarious", "horrible", "total_hilarious_ratings",
                                                                    "total_horrible_ratings")})

    def status(self):
        done = harness.run([support.NIGHT, "status", "-n", "1", "--environment"],
                           env=support.environment(RANKINGS_STATE_DIRECTORY=self.state, RANKINGS_FIRESTORE_PROJECT=PROJECT))
        self.expect_exit(done, 0)
        return done.stdout

    def test_night_1_a_full_read_proven_with_two_counts_a_joke(self):
        self.in_order(1)
        done, proxy = self.night()
        self.expect_in("proven", "prove: all_time: the board is proven at readTime", done.stderr)
        with open(os.path.join(self.state, ".all_time.stats.ndjson"), encoding="utf-8") as stats:
            jokes = sum(1 for line in stats if line.strip())
        # The proof's at tonight's readTime (the probe's one before the fetch asks at none).
        read_time = support.record(os.path.join(self.state, "firestore"))["read_time"]
        proof_counts = [c for c in proxy.calls if c.kind == "count" and c.filters_on("rating")
                        and c.body.get("readTime") == read_time]
        self.expect("COUNTs: 2 a joke and 2 totals", len(proof_counts), 2 * jokes + 2)
        self.expect("per joke", len([c for c in proof_counts if c.filters_on("joke_id")]), 2 * jokes)
        self.expect_truth("the app's board")
        self.expect_in("status", "the boards proven", self.status())
        night = support.promtool_samples(os.path.join(self.state, "rankings.prom"))
        self.expect("rankings_night_boards_proven", night["rankings_night_boards_proven"], "1")

    def test_night_2_a_missed_deletion_and_late_vote_are_found_and_read_whole(self):
        self.in_order(2)
        hilarious = sorted(n for n, v in self.collection.items() if v["rating"] >= 4)
        gone = hilarious[0]
        self.db.collection("rating_events").document(gone).delete()
        del self.collection[gone]
        # A late vote: stamped five days ago, before the incremental night's 48-hour margin.
        late_joke = next(v["joke_id"] for n, v in self.collection.items() if v["joke_id"] != gone.split("_")[1])
        when = datetime.datetime.now(datetime.timezone.utc) - datetime.timedelta(days=5)
        name, fields = support.vote(9999, int(late_joke[1:]), 5, 5, when)
        emu.write(self.db, "rating_events", [(name, fields)])
        self.collection[name] = fields
        done, _ = self.night()
        self.expect_in("the incremental night's board disagreed", "rankings-night: warning: prove: all_time: the board "
                                                                  "disagrees with Firestore", done.stderr)
        self.expect_in("and was read whole", "rankings-night: warning: prove: reading the whole collection and proving "
                                             "again", done.stderr)
        self.expect_in("proven at last", "prove: all_time: the board is proven at readTime", done.stderr)
        self.expect_truth("the app's board after the full read")
        self.expect("tonight's snapshot is a full read", support.record(os.path.join(self.state, "firestore"))["mode"],
                    "full")

    def test_night_3_a_snapshot_changed_behind_the_nights_back_is_found(self):
        self.in_order(3)
        folder = os.path.realpath(os.path.join(self.state, "firestore", "current"))
        path = os.path.join(folder, "rating_events.ndjson")
        with open(path, "rb") as text:
            lines = text.read().splitlines(keepends=True)
        for number, line in enumerate(lines):
            if b'"rating":{"integerValue":"1"}' in line:
                lines[number] = line.replace(b'"rating":{"integerValue":"1"}', b'"rating":{"integerValue":"5"}')
                break
        data = b"".join(lines)
        # A new file in its place: the base may be a hard link the earlier nights share.
        os.unlink(path)
        with open(path, "wb") as out:
            out.write(data)
        record_path = os.path.join(folder, ".night.json")
        with open(record_path, encoding="utf-8") as text:
            record = json.load(text)
        record["layers"][0].update(sha256=hashlib.sha256(data).hexdigest(), bytes=len(data))
        os.chmod(record_path, 0o644)
        with open(record_path, "w", encoding="utf-8") as out:
            json.dump(record, out)
        done, _ = self.night()
        self.expect_in("built on the changed snapshot", "merged into the previous night", done.stderr)
        self.expect_in("and found out", "reading the whole collection and proving again", done.stderr)
        self.expect_truth("the app's board")

    def test_night_4_no_index_reads_everything_and_publishes_marked_unproven(self):
        self.in_order(4)
        done, _ = self.night(fault=(per_joke, (400, INDEX)))
        command = ("gcloud firestore indexes composite create --project=demo-rankings-board-proof --database='(default)' "
                   "--collection-group=rating_events --query-scope=COLLECTION --field-config=field-path=joke_id,"
                   "order=ascending --field-config=field-path=rating,order=ascending")
        self.expect_in("the probe's warning", "rankings-night: warning: fetch: the all-time board cannot be proven: "
                                              f"no index for a joke's votes by rating; make it with: {command}", done.stderr)
        record = support.record(os.path.join(self.state, "firestore"))
        self.expect("a full read, so no blind spot", (record["mode"], record["full_reason"]),
                    ("full", "tonight's boards cannot be proven (Firestore lacks an index they need)"))
        self.expect_in("the proof's warning", "rankings-night: warning: prove: all_time: the board is unproven at readTime",
                       done.stderr)
        self.expect_in("published unproven", "rankings-night: warning: prove: the boards are published unproven; make the "
                                             f"index: {command}", done.stderr)
        self.expect("JSON lines", [line for line in done.stderr.splitlines() if line.startswith("{")], [])
        self.expect_truth("published all the same")
        self.expect_in("status", "the boards unproven", self.status())
        night = support.promtool_samples(os.path.join(self.state, "rankings.prom"))
        self.expect("rankings_night_boards_proven", night["rankings_night_boards_proven"], "0")


if __name__ == "__main__":
    harness.main()
