"""The night's fetch at sizes and under limits Google's emulator does not show, against the
simulator with its limits scaled down: a full read that cannot end within readTime's life fails
(never switched in) and succeeds with enough streams; one the deadline may not hold is warned
of and read (failing at the deadline); a COUNT past Firestore's deadline is cut into range
COUNTs and the night still proven; a RESOURCE_EXHAUSTED burst slows the night and loses
nothing; ids with a long common prefix still spread over the streams. Each good night's board is
held to the one `rankings aggregate` makes from the generator's own votes."""
import json
import os
import re
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import harness  # noqa: E402
from simulator.firestore_sim import FirestoreSimulator  # noqa: E402
sys.path.insert(0, os.path.join(harness.ROOT, "Tests", "night"))
import layered  # noqa: E402 (the tests' own reader of a night's layers)

FETCH = os.path.join(harness.NIGHT, "rankings-fetch-firestore")
RANKINGS = os.environ.get("RANKINGS", os.path.join(harness.ROOT, ".build", "debug", "rankings"))
COMPUTED_AT = "2026-11-27T05:00:00Z"


class Fetch(harness.Case):
    def setUp(self):
        self.work = tempfile.mkdtemp(prefix="rankings-simulator-fetch.")
        self.addCleanup(shutil.rmtree, self.work, True)
        self.dir = os.path.join(self.work, "firestore")

    def fetch(self, sim, **settings):
        environ = {"PATH": os.environ["PATH"], "RANKINGS_FIRESTORE_PROJECT": sim.project,
                   "FIRESTORE_EMULATOR_HOST": sim.address, "RANKINGS_FIRESTORE_BACKOFF_SECONDS": "0.1",
                   "RANKINGS_BIN": RANKINGS, "RANKINGS_METRICS": os.path.join(self.work, "rankings.prom")}
        environ.update({k: str(v) for k, v in settings.items()})
        return harness.run([FETCH, self.dir], env=environ, timeout=300)

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
            names = [d["name"] for d in layered.documents(os.path.join(self.dir, "current"))]
            self.expect("documents", len(names), sum(1 for _ in t))
        self.expect("current's files as its record says", layered.problems(os.path.join(self.dir, "current")), [])
        self.expect("the board", self.board(os.path.join(self.dir, "current")), self.board(truth))

    def record(self):
        with open(os.path.join(self.dir, "current", ".night.json")) as f:
            return json.load(f)

    def test_a_read_outliving_its_readtime_fails_and_enough_streams_succeed(self):
        # One stream needs 12 s, past the readTime's 5; twelve need about 1, with room for a slow machine.
        with FirestoreSimulator(documents=12000, seed=3, stream_rate=1000, read_time_life=5) as sim:
            done = self.fetch(sim, RANKINGS_FIRESTORE_STREAMS=1)
            self.expect_exit(done, 78, "the read outlived its readTime")
            self.assertFalse(os.path.lexists(os.path.join(self.dir, "current")), "switched in")
            sim.reset_served()
            done = self.fetch(sim, RANKINGS_FIRESTORE_STREAMS=12)
            self.expect_exit(done, 0, "read in 12 ranges")
            self.proven_against_the_generator(sim)
            # The readTime's query asks for no document (limit 0), so none is served twice.
            self.expect("documents served: each once", sum(sim.served()["pages"]), 12000)

    def test_a_read_the_deadline_may_not_hold_is_warned_of_and_read(self):
        # A warning, not a refusal: the rate is one night's measure, and a refused night would
        # measure no other (a slow night would refuse every full read after it).
        with FirestoreSimulator(documents=8000, seed=4, stream_rate=2000) as sim:
            self.expect_exit(self.fetch(sim, RANKINGS_FIRESTORE_STREAMS=8, RANKINGS_FIRESTORE_INCREMENTAL="no"), 0)
            rate = self.record()["full_rate"]
            self.assertTrue(rate, "the full read's rate is recorded")
            done = self.fetch(sim, RANKINGS_FIRESTORE_STREAMS=1, RANKINGS_FIRESTORE_INCREMENTAL="no",
                              RANKINGS_FIRESTORE_DEADLINE_SECONDS=3)
            self.expect_exit(done, 69, "did not end within RANKINGS_FIRESTORE_DEADLINE_SECONDS")
            self.expect_in("the warning", "warning: rest: a full read of 8000 documents", done.stderr)
            self.expect_in("the fix", "RANKINGS_FIRESTORE_STREAMS=", done.stderr)

    def test_a_count_past_firestores_deadline_is_cut_and_the_night_proven(self):
        with FirestoreSimulator(documents=9000, seed=5, count_max=2500, count_deadline=0.2) as sim:
            done = self.fetch(sim, RANKINGS_FIRESTORE_STREAMS=4)
            self.expect_exit(done, 0, "did not finish within Firestore's deadline: counting its 65 parts")
            self.proven_against_the_generator(sim)
            self.assertIn(None, sim.served()["counts"], "a COUNT timed out")

    def test_a_resource_exhausted_burst_slows_the_night_and_loses_nothing(self):
        with FirestoreSimulator(documents=6000, seed=6, fault_every=4, retry_after=0.5) as sim:
            done = self.fetch(sim, RANKINGS_FIRESTORE_STREAMS=4, RANKINGS_FIRESTORE_ATTEMPTS=8)
            self.expect_exit(done, 0, "HTTP 429")
            self.assertGreater(sim.served()["faults"], 0)
            self.proven_against_the_generator(sim)

    def test_ids_with_a_long_common_prefix_still_spread_over_the_streams(self):
        with FirestoreSimulator(documents=20000, seed=7) as sim:
            self.expect_exit(self.fetch(sim, RANKINGS_FIRESTORE_STREAMS=8), 0)
            self.assertGreaterEqual(self.record()["streams"], 6, "ranges read")
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
            # A deletion leaves the merge one over Firestore's count: a full read, and drift 1.
            sim.delete(sim.votes.id(18))
            done = self.fetch(sim)
            self.expect_exit(done, 0, "the incremental night is not proven, so a full read")
            self.expect("mode and drift", (self.record()["mode"], self.record()["drift_documents"]), ("full", 1))
            self.proven_against_the_generator(sim)
            # Its ranges were cut at the previous snapshot's quantiles: even to a document.
            said = re.search(r"read in 8 ranges: (.*)", done.stderr)[1]
            held = [int(part.rsplit(" ", 1)[1]) for part in said.split(", [")]
            self.assertLessEqual(max(held) - min(held), 2, f"ranges at the quantiles: {said}")


if __name__ == "__main__":
    harness.main()
