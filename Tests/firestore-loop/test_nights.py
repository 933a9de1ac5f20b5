"""Incremental nights against Google's Firestore emulator: eight nights on 5,000 votes, each
fetched by the night's fetch (fetch.run, in this process) into one DIR as the night does, each
compared with what the test itself wrote: the document the job makes from DIR/current must be
the one it makes from the collection as written, byte for byte, on every night but the one
COUNT cannot see (the blind spot the boards' proof closes: Tests/firestore-loop/test_board_proof.py),
and on that one until the next full read, due by days since the last one, which heals it. Each
night's record says what it did."""
import contextlib
import datetime
import json
import os
import random
import shutil
import tempfile

import support
import emulator as emu
import faults
import harness
from rankings_night import plan

PROJECT = "demo-rankings-nights"
VOTES = 5_000
server = work = None


def setUpModule():
    global server, work
    work = tempfile.mkdtemp(prefix="rankings-firestore-nights.")
    server = support.start_emulator()


def tearDownModule():
    if server:
        server.stop()
    shutil.rmtree(work, ignore_errors=True)


class Nights(harness.Case):
    """One chain of nights; each test is a night, in order, on the collection the ones before
    it left."""

    @classmethod
    def setUpClass(cls):
        cls.db = emu.client(PROJECT, server.address)
        cls.rng = random.Random(27)
        cls.now = datetime.datetime.now(support.UTC)
        # 5,000 votes over the last 200 days; a device votes on a joke once a week.
        cls.collection = support.votes(cls.rng, VOTES, 200)
        cls.names = sorted(cls.collection)
        cls.write(cls.collection.items())
        cls.chain = os.path.join(work, "chain")
        cls.history = []

    @classmethod
    def write(cls, votes):
        votes = list(votes)
        emu.write(cls.db, "rating_events", votes)
        cls.collection.update(votes)

    @classmethod
    def delete(cls, name):
        cls.db.collection("rating_events").document(name).delete()
        del cls.collection[name]

    def new_votes(self):
        # 1 % new votes, stamped within the last hour (what tonight's app wrote).
        now = datetime.datetime.now(support.UTC)
        self.write(support.vote(10000 + len(self.history) * 1000 + i, self.rng.randrange(300), 30,
                                self.rng.randint(1, 5), now - datetime.timedelta(minutes=self.rng.uniform(0, 60)))
                   for i in range(VOTES // 100))

    def night(self, expect_mode, same=True, counted=False, fallback=False):
        """Fetches into the chain and compares the document the job makes of it with the one it
        makes of the collection as written."""
        if len(self.history) != int(self._testMethodName.split("_")[2]) - 1:
            self.fail("an earlier night did not run, so this one cannot")
        if counted:
            with faults.FaultyProxy(server.address) as proxy:
                done = support.fetch(self.chain, support.connect(PROJECT, proxy.address))
            returned = sum(c.documents or 0 for c in proxy.chosen(faults.pages))
        else:
            done = support.fetch(self.chain, support.connect(PROJECT, server.address))
        self.expect_exit(done, 0)
        record = support.record(self.chain)
        self.expect("the record returned is current's", done.result["read_time"], record["read_time"])
        self.history.append(record)
        self.expect("mode", record["mode"], expect_mode)
        self.expect("fallback", record["fallback"], fallback)
        if expect_mode == "full":
            # The whole collection, and before it the incremental read COUNT refused, if any.
            self.assertGreaterEqual(record["documents_read"], record["snapshot_documents"], "a full night read less")
        # COUNT holds every night to the collection's size, the blind spot's too.
        self.expect("documents in the snapshot", record["snapshot_documents"], len(self.collection))
        current = os.path.join(self.chain, "current")
        self.expect("current's files as its record says", support.layered.problems(current), [])
        if expect_mode == "incremental" and not record.get("compacted"):
            self.expect("tonight wrote its change file alone", record["bytes_written"],
                        os.path.getsize(os.path.join(current, record["layers"][-1]["file"]))
                        if len(record["layers"]) > len(self.history[-2].get("layers", [])) else 0)
        at = support.stamp()
        theirs = support.document(support.written(PROJECT, self.collection, os.path.join(work, "written")), at)
        mine = support.document(os.path.join(self.chain, "current"), at)
        self.expect("the document from current is the one from the collection as written", mine == theirs, same)
        if counted:
            self.expect("documents read (the fetch's count against the emulator's answers)",
                        record["documents_read"], returned)
        return done, record

    def test_night_0_a_full_read_at_8_streams_is_one_streams_byte_for_byte_each_document_once(self):
        """Issue 35: the collection read in ranges of ids on parallel streams at one readTime is
        the one-stream snapshot, and the proxy sees every document returned exactly once. (One
        stream: what a full read's streams would be with plan.STREAMS 1.)"""
        snapshots = {}
        for streams in (1, 8):
            directory = os.path.join(work, f"streams-{streams}")
            with faults.FaultyProxy(server.address) as proxy, streams_of(streams):
                done = support.fetch(directory, support.connect(PROJECT, proxy.address))
                self.expect_exit(done, 0, "read in")
                returned = [n for c in proxy.chosen(faults.full_pages) for n in c.names]
            self.expect(f"{streams} streams: documents returned", len(returned), VOTES)
            self.expect(f"{streams} streams: each once", len(set(returned)), VOTES)
            record = support.record(directory)
            self.expect("ranges read", record["streams"], streams)
            self.expect(f"{streams} streams: a full read's one file", [l["file"] for l in record["layers"]],
                        ["rating_events.ndjson"])
            with open(os.path.join(directory, "current", "rating_events.ndjson"), "rb") as f:
                snapshots[streams] = f.read()
            snapshots[f"board {streams}"] = support.document(os.path.join(directory, "current"), "2026-11-27T05:00:00Z")
        self.expect("the snapshots, byte for byte", snapshots[8] == snapshots[1], True)
        self.expect("the boards, byte for byte", snapshots["board 8"], snapshots["board 1"])

    def test_night_1_no_previous_night_so_a_full_read(self):
        done, record = self.night("full")
        self.expect_in("reason", "rankings-night: fetch: rest: a full read: no previous night", done.stderr)
        self.expect("documents read", record["documents_read"], VOTES)

    def test_night_2_one_percent_new_votes_read_incrementally_at_most_3_percent(self):
        self.new_votes()
        _, record = self.night("incremental", counted=True)
        self.assertLessEqual(record["documents_read"], 0.03 * record["snapshot_documents"])
        self.assertIsNotNone(record["watermark"])

    def test_night_3_100_re_ratings_of_existing_documents(self):
        # A device re-rating a joke in the same week keeps the document id; rating and time change.
        now = datetime.datetime.now(support.UTC)
        self.write((n, dict(self.collection[n], rating=6 - self.collection[n]["rating"], timestamp=now))
                   for n in self.rng.sample(self.names, 100))
        self.night("incremental")

    def test_night_4_votes_stamped_inside_the_margin_but_before_the_last_read_time(self):
        # Written tonight with a device's clock a day behind, or synced late.
        now = datetime.datetime.now(support.UTC)
        self.write(support.vote(9000 + i, self.rng.randrange(300), 30, self.rng.randint(1, 5),
                                now - datetime.timedelta(hours=self.rng.uniform(20, 40))) for i in range(150))
        self.night("incremental")

    def test_night_5_ten_deletions_and_a_vote_stamped_before_the_margin_count_differs_so_a_full_read(self):
        for name in self.names[:10]:
            self.delete(name)
        self.write([support.vote(7000, 1, 1, 5, self.now - datetime.timedelta(days=5))])
        done, _ = self.night("full", fallback=True)
        self.expect_in("reason", "rankings-night: warning: fetch: rest: the incremental night is not proven, so a full "
                                 "read", done.stderr)

    def test_night_6_one_deletion_and_one_old_write_counts_blind_spot_incremental_and_wrong(self):
        # The deleted vote is Hilarious and the new one Horrible, so the totals tell them apart.
        self.delete(next(n for n in self.names[10:] if self.collection[n]["rating"] >= 4))
        self.write([support.vote(7001, 2, 1, 1, self.now - datetime.timedelta(days=6))])
        self.night("incremental", same=False)

    def test_night_7_a_quiet_night_still_the_blind_spots_error(self):
        self.new_votes()
        self.night("incremental", same=False)

    def test_night_8_a_full_read_due_by_days_heals_the_blind_spot(self):
        # A full read is due 30 days after the last one, by Firestore's clock: the record says it
        # was 30 days ago (still a valid record: its snapshot and digest are untouched).
        path = os.path.join(self.chain, "current", ".night.json")
        with open(path, encoding="utf-8") as text:
            record = json.load(text)
        from rankings_night.snapshot import format_time, parse_time
        record["last_full_read_time"] = format_time(parse_time(record["read_time"]) - 30 * 86_400 * 10**9)
        os.chmod(path, 0o644)
        with open(path, "w", encoding="utf-8") as out:
            json.dump(record, out)
        self.new_votes()
        done, record = self.night("full")
        self.expect_in("reason", "days ago (one every 30 days)", record["full_reason"])
        self.expect_in("reason said", "rankings-night: fetch: rest: a full read: the last full read was 30.0 days ago",
                       done.stderr)


@contextlib.contextmanager
def streams_of(number):
    """plan.STREAMS (a full read's streams with no faster rate known) as number, for a while."""
    was, plan.STREAMS = plan.STREAMS, number
    try:
        yield
    finally:
        plan.STREAMS = was


if __name__ == "__main__":
    harness.main()
