"""The night's fetch (fetch.run, in this process) at sizes and under limits Google's emulator does
not show, against the simulator with its limits scaled down: a readTime of 8 s is enough for
20,000 votes at 1,000 a second a stream (the streams start at once, where partitionQuery cuts ids
of a long common prefix); a read that cannot end within a readTime's life fails, is not tried
again, and is never switched in; a COUNT past Firestore's deadline is cut into range COUNTs and
the night still proven; a RESOURCE_EXHAUSTED burst slows the night and loses nothing; an
incremental night at scale merges what changed, and a deletion makes a full read cut where
partitionQuery cuts. Each good night's board is held to the one `rankings aggregate` makes from
the simulator's own votes."""
import json
import os
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import harness  # noqa: E402
from simulator.firestore_sim import FirestoreSimulator  # noqa: E402
sys.path.insert(0, os.path.join(harness.ROOT, "Tests", "firestore-loop"))
import support  # noqa: E402 (the night's steps in this process)

RANKINGS = os.environ.get("RANKINGS", os.path.join(harness.ROOT, ".build", "debug", "rankings"))
COMPUTED_AT = "2026-11-27T05:00:00Z"


class Fetch(harness.Case):
    def setUp(self):
        self.work = tempfile.mkdtemp(prefix="rankings-simulator-fetch.")
        self.addCleanup(shutil.rmtree, self.work, True)
        self.dir = os.path.join(self.work, "firestore")

    def fetch(self, sim, full_because=None, **client):
        return support.fetch(self.dir, support.connect(sim.project, sim.address, **client), full_because)

    def board(self, source):
        out = os.path.join(self.work, f"board-{len(os.listdir(self.work))}.json")
        done = harness.run([RANKINGS, "aggregate", "--quiet", "--computed-at", COMPUTED_AT, "-o", out, source])
        self.expect_exit(done, 0)
        with open(out, "rb") as f:
            return f.read()

    def proven_against_the_generator(self, sim):
        """current holds every vote once, in order, and its board is the generator's."""
        record = self.record()
        truth = os.path.join(self.work, "truth.ndjson")
        sim.write_ndjson(truth, record["read_time"])
        with open(truth, "rb") as t:
            names = [d["name"] for d in support.layered.documents(os.path.join(self.dir, "current"))]
            self.expect("documents", len(names), sum(1 for _ in t))
        self.expect("current's files as its record says", support.layered.problems(os.path.join(self.dir, "current")), [])
        self.expect("the board", self.board(os.path.join(self.dir, "current")), self.board(truth))

    def record(self):
        with open(os.path.join(self.dir, "current", ".night.json")) as f:
            return json.load(f)

    def test_a_read_time_of_8_seconds_is_enough_for_20000_votes_at_1000_a_second_a_stream(self):
        # 0.4 planned its ranges with COUNTs first and outlived this readTime before any page; the
        # simulator's ids share a long prefix (their index), which partitionQuery cuts evenly.
        with FirestoreSimulator(documents=20000, seed=3, stream_rate=1000, read_time_life=8) as sim:
            done = self.fetch(sim)
            self.expect_exit(done, 0, "read in 8 ranges cut where Firestore's partitionQuery cuts")
            self.expect("streams", self.record()["streams"], 8)
            self.proven_against_the_generator(sim)
            # The readTime's query asks for no document (limit 0), so none is served twice.
            self.expect("documents served: each once", sum(sim.served()["pages"]), 20000)

    def test_a_read_outliving_its_read_time_fails_is_not_tried_again_and_is_never_switched_in(self):
        # 3,000 votes a stream at 400 a second: the third page is asked for past the readTime's 4 s.
        with FirestoreSimulator(documents=24000, seed=4, stream_rate=400, read_time_life=4) as sim:
            done = self.fetch(sim)
            self.expect_exit(done, 69, "rest: the read outlived its readTime ")
            self.expect_in("what it had read", " documents in ", done.stderr)
            self.expect_in("over how many streams", " over 8 streams: Firestore keeps a readTime an hour", done.stderr)
            self.expect("final (the same streams would outlive it again)", done.error.final, True)
            self.assertFalse(os.path.lexists(os.path.join(self.dir, "current")), "switched in")
            self.expect("DIR", os.listdir(self.dir), [])

    def test_a_count_past_firestores_deadline_is_cut_and_the_night_proven(self):
        with FirestoreSimulator(documents=9000, seed=5, count_max=2500, count_deadline=0.2) as sim:
            done = self.fetch(sim)
            self.expect_exit(done, 0, "did not finish within Firestore's deadline: counting its ")
            self.proven_against_the_generator(sim)
            self.assertIn(None, sim.served()["counts"], "a COUNT timed out")

    def test_a_resource_exhausted_burst_slows_the_night_and_loses_nothing(self):
        with FirestoreSimulator(documents=6000, seed=6, fault_every=4, retry_after=0.5) as sim:
            done = self.fetch(sim, attempts=8)
            self.expect_exit(done, 0, "HTTP 429")
            self.assertGreater(sim.served()["faults"], 0)
            self.proven_against_the_generator(sim)

    def test_an_incremental_night_at_scale_merges_what_changed(self):
        with FirestoreSimulator(documents=20000, seed=8) as sim:
            self.expect_exit(self.fetch(sim), 0)
            sim.vote(sim.votes.id(17), "joke-re-rated", 1)
            sim.vote("zz-new-vote", "joke-new", 5)
            done = self.fetch(sim)
            self.expect_exit(done, 0, "merged into the previous night")
            self.expect("mode", self.record()["mode"], "incremental")
            self.proven_against_the_generator(sim)
            # A deletion leaves the merge one over Firestore's count: a full read.
            sim.delete(sim.votes.id(18))
            done = self.fetch(sim)
            self.expect_exit(done, 0, "the incremental night is not proven, so a full read")
            self.expect("mode", self.record()["mode"], "full")
            self.proven_against_the_generator(sim)
            # Its ranges were cut where Firestore's partitionQuery cuts (the simulator's: at even places of the ids).
            self.expect_in("the ranges", "read in 8 ranges cut where Firestore's partitionQuery cuts", done.stderr)


if __name__ == "__main__":
    harness.main()
