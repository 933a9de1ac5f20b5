"""The night's export method against the simulator's exportDocuments, through the recording proxy
(Tests/firestore-loop/faults.py) as Google's API: the export is asked for at a snapshotTime (a
whole minute, the night's readTime), copied from where the bucket is mounted, proven by the
collection's COUNT at that time against its entities, and its board is the generator's; an
export missing a document, or holding one twice, is never switched in."""
import json
import os
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import harness  # noqa: E402
from simulator.firestore_sim import FirestoreSimulator  # noqa: E402

sys.path.insert(0, os.path.join(harness.ROOT, "Tests", "firestore-loop"))
import faults  # noqa: E402

FETCH = os.path.join(harness.NIGHT, "rankings-fetch-firestore")
RANKINGS = os.environ.get("RANKINGS", os.path.join(harness.ROOT, ".build", "debug", "rankings"))


class Export(harness.Case):
    def setUp(self):
        self.work = tempfile.mkdtemp(prefix="rankings-simulator-export.")
        self.addCleanup(shutil.rmtree, self.work, True)
        self.bucket = os.path.join(self.work, "gcs")
        self.dir = os.path.join(self.work, "firestore")

    def fetch(self, sim, proxy):
        environ = {"PATH": os.environ["PATH"], "RANKINGS_FIRESTORE_PROJECT": sim.project, "RANKINGS_BIN": RANKINGS,
                   "RANKINGS_FIRESTORE_ENDPOINT": f"http://{proxy.address}/v1",
                   "RANKINGS_FIRESTORE_TOKEN_COMMAND": "echo ya29.export", "RANKINGS_FIRESTORE_FETCH": "export",
                   "RANKINGS_FIRESTORE_BUCKET": "gs://exports/rankings",
                   "RANKINGS_FIRESTORE_BUCKET_MOUNT": os.path.join(self.bucket, "exports")}
        return harness.run([FETCH, self.dir], env=environ, timeout=300)

    def board(self, source):
        done = harness.run([RANKINGS, "aggregate", "--quiet", "--computed-at", "2026-11-27T05:00:00Z", source])
        self.expect_exit(done, 0)
        return done.stdout

    def test_an_export_at_a_snapshot_time_proven_by_count(self):
        with FirestoreSimulator(documents=1500, seed=9, export_root=self.bucket) as sim, \
                faults.FaultyProxy(sim.address) as proxy:
            done = self.fetch(sim, proxy)
            self.expect_exit(done, 0, "1500 rating_events entities at snapshotTime")
            asked = [c.body for c in proxy.calls if c.path.endswith(":exportDocuments")]
            self.expect("exportDocuments calls", len(asked), 1)
            snapshot = asked[0].get("snapshotTime", "")
            self.assertRegex(snapshot, r"^\d{4}-\d\d-\d\dT\d\d:\d\d:00\.000000Z$", "a whole minute")
            counted = [c.body for c in proxy.calls if c.kind == "count"]
            self.expect("the COUNT's readTime", [b.get("readTime") for b in counted], [snapshot])
            with open(os.path.join(self.dir, "current", ".night.json")) as f:
                self.expect("the night's time", json.load(f)["read_time"], snapshot)
            truth = os.path.join(self.work, "truth.ndjson")
            sim.write_ndjson(truth, snapshot)
            self.expect("the board", self.board(os.path.join(self.dir, "current")), self.board(truth))

    def test_an_export_missing_a_document_is_refused(self):
        with FirestoreSimulator(documents=1500, seed=10, export_root=self.bucket, export_skip=1) as sim, \
                faults.FaultyProxy(sim.address) as proxy:
            done = self.fetch(sim, proxy)
            self.expect_exit(done, 69, "the export holds 1499 rating_events entities, but Firestore counts 1500")
            self.assertFalse(os.path.lexists(os.path.join(self.dir, "current")), "switched in")

    def test_an_export_holding_a_document_twice_is_refused(self):
        """As many entities as the metadata records (an output file copied over another would
        be so), but one document twice: the proof's `--dedupe id` finds it."""
        from rankings_night import settings as setting
        from rankings_night.export import rating_events_in
        from rankings_night.statuses import Failure
        votes = [{"id": f"d{i:04d}", "joke_id": f"j{i % 7}", "rating": 1 + i % 5, "device_id": f"d{i:04d}",
                  "week_id": "2026-W01", "timestamp": {"_seconds": 1790000000 + i, "_nanoseconds": 0}}
                 for i in range(300)]
        for label, events in (("once", votes), ("twice", votes + votes[17:18])):
            writer = harness.run([sys.executable, os.path.join(harness.ROOT, "bench", "generate-export.py"),
                                  os.path.join(self.work, label), "--name", "export"],
                                 input="".join(json.dumps(e) + "\n" for e in events))
            self.expect_exit(writer, 0)
        configured = setting.from_environment({"RANKINGS_BIN": RANKINGS})
        self.expect("each once", rating_events_in(configured, os.path.join(self.work, "once", "export")), 300)
        with self.assertRaises(Failure) as raised:
            rating_events_in(configured, os.path.join(self.work, "twice", "export"))
        self.expect_in("reason", "holds 1 documents twice", str(raised.exception))


if __name__ == "__main__":
    harness.main()
