"""The publish (publish.py) against Google's Firestore emulator, the app's document seeded by REST
as the app or a person could leave it: none; empty (set({})); totals stored as doubles (the guard
holds); a snapshot_read_time of 2099 (not Firestore's: replaced, with a WARNING); a later one that
is real (superseded, untouched); a stop before the commit (the document's bytes unchanged) and
during it (published, not read back). The body is the real `rankings check`'s (TEST_RANKINGS, or
.build/debug/rankings). Skipped, saying why, without gcloud and java or the job."""
import json
import os
import shutil
import signal
import sys
import tempfile
import unittest
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "firestore-loop"))
import harness  # noqa: E402
import emulator as emu  # noqa: E402
from rankings_night import stop  # noqa: E402
from rankings_night.firestore import Firestore, Retry  # noqa: E402
from rankings_night.publish import publish  # noqa: E402
from rankings_night.snapshot import format_time, parse_time  # noqa: E402
from rankings_night.statuses import Failure  # noqa: E402

RANKINGS = os.environ.get("TEST_RANKINGS") or os.path.join(harness.ROOT, ".build", "debug", "rankings")
MINUTE = 60 * 10**9
server = work = None
BOARD = {"week_id": "all_time",
         "hilarious": [{"joke_id": "J0", "count": 4, "rank": 1}, {"joke_id": "J1", "count": 3, "rank": 2}],
         "horrible": [{"joke_id": "J1", "count": 4, "rank": 1}, {"joke_id": "J0", "count": 3, "rank": 2}],
         "total_hilarious_ratings": 12, "total_horrible_ratings": 12, "computed_at": "2026-11-27T05:00:00Z"}


MISSING = [tool for tool in ("gcloud", "java") if not shutil.which(tool) and not os.environ.get(emu.SHARED)]
WHY_NOT = f"Google's Firestore emulator needs gcloud and java: no {' or '.join(MISSING)}" if MISSING else \
    None if os.access(RANKINGS, os.X_OK) else f"no job at {RANKINGS} (TEST_RANKINGS) to give the body"


def setUpModule():
    global server, work
    if WHY_NOT:
        return
    work = tempfile.mkdtemp(prefix="rankings-publish.")
    server = emu.Emulator()
    server.start()


def tearDownModule():
    if server:
        server.stop()
    if work:
        shutil.rmtree(work, ignore_errors=True)


def rest(project, method, path, body=None):
    """The emulator's raw answer (bytes) to a REST call of a project's documents."""
    request = urllib.request.Request(f"http://{server.address}/v1/projects/{project}/databases/(default)/documents{path}",
                                     method=method,
                                     data=None if body is None else json.dumps(body).encode(),
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=30) as answer:
        return answer.read()


@unittest.skipIf(WHY_NOT, WHY_NOT)
class Publish(harness.Case):
    def setUp(self):
        # A project of its own for each test (suites sharing an emulator keep apart so too).
        self.project = "demo-publish-" + self.id().rsplit(".", 1)[-1][5:].replace("_", "-")[:40]
        self.name, self.target = "all_time", "weekly_rankings/all_time"
        self.path = os.path.join(work, f"{self.project}.json")
        with open(self.path, "w", encoding="utf-8") as out:
            json.dump(BOARD, out)
        self.firestore = Firestore(self.project, api=f"http://{server.address}/v1",
                                   retry=Retry(attempts=2, initial=0.1), say=print)
        self.said = []
        # Firestore's own now, and tonight's read an hour before it.
        self.now = parse_time(self.firestore.batch_get(self.target)[1])
        self.read_time = format_time(self.now - 60 * MINUTE)

    def tearDown(self):
        stop.STOP.reset()

    def seed(self, fields):
        name = f"projects/{self.project}/databases/(default)/documents/{self.target}"
        rest(self.project, "POST", ":commit", {"writes": [{"update": {"name": name, "fields": fields}}]})
        return self.document()

    def document(self):
        return rest(self.project, "GET", f"/{self.target}")

    def publish(self, max_drop=1.0):
        return publish(self.firestore, self.path, self.name, self.read_time, max_drop, RANKINGS,
                       lambda text, severity="INFO": self.said.append((severity, text)))

    def fields(self):
        return json.loads(self.document()).get("fields", {})

    def expect_board(self):
        fields = self.fields()
        self.expect("the board's totals", (fields["total_hilarious_ratings"], fields["total_horrible_ratings"]),
                    ({"integerValue": "12"}, {"integerValue": "12"}))
        self.expect("stamped with tonight's readTime", parse_time(fields["snapshot_read_time"]["timestampValue"]),
                    parse_time(self.read_time))

    def test_no_document_yet(self):
        self.expect("result", self.publish(), "written")
        self.expect_board()
        self.expect("said", [s for s, _ in self.said], ["INFO"])
        self.expect_in("said", "read back the same", self.said[0][1])

    def test_an_empty_document_is_no_board_yet(self):
        self.seed({})
        self.expect("result", self.publish(), "written")
        self.expect_board()

    def test_totals_stored_as_doubles_are_numbers_to_the_guard(self):
        before = self.seed({"week_id": {"stringValue": self.name}, "total_hilarious_ratings": {"doubleValue": 1000.0},
                            "total_horrible_ratings": {"doubleValue": 1000}})
        with self.assertRaises(Failure) as raised:
            self.publish()
        self.expect("status", raised.exception.status, 65)
        self.expect_in("why", "its hilarious + horrible total 24 is 98.8 % below the 2000 of", str(raised.exception))
        self.expect("the app's document", self.document(), before)
        self.expect("accepted once", self.publish(max_drop=100), "written")
        self.expect_board()

    def test_a_snapshot_read_time_later_than_firestores_own_is_not_trusted(self):
        self.seed({"week_id": {"stringValue": self.name}, "snapshot_read_time": {"timestampValue": "2099-01-01T00:00:00Z"},
                   "total_hilarious_ratings": {"integerValue": "12"}, "total_horrible_ratings": {"integerValue": "12"}})
        self.expect("result", self.publish(), "written")
        self.expect_board()
        self.expect("said", [s for s, _ in self.said], ["WARNING", "INFO"])
        self.expect_in("warning", "2099-01-01T00:00:00Z, later than Firestore's own time", self.said[0][1])
        self.expect_in("warning", "not trusted; tonight's board replaces it", self.said[0][1])

    def test_a_later_snapshot_that_is_real_supersedes_tonights(self):
        before = self.seed({"week_id": {"stringValue": self.name},
                            "snapshot_read_time": {"timestampValue": format_time(self.now - 10 * MINUTE)}})
        self.expect("result", self.publish(), "superseded")
        self.expect("the app's document", self.document(), before)
        self.expect("said", [s for s, _ in self.said], ["INFO"])
        self.expect_in("said", "nothing is wrong", self.said[0][1])

    def test_a_stop_before_the_commit_publishes_nothing(self):
        before = self.seed({"week_id": {"stringValue": self.name}, "total_hilarious_ratings": {"integerValue": "12"},
                            "total_horrible_ratings": {"integerValue": "12"}})
        read = self.firestore.batch_get
        self.firestore.batch_get = lambda path: (read(path), stop.STOP.set(signal.SIGTERM))[0]
        with self.assertRaises(stop.Stopped) as raised:
            self.publish()
        self.expect("status", raised.exception.status, 143)
        self.expect("the app's document, byte for byte", self.document(), before)

    def test_a_stop_during_the_commit_is_published_not_read_back(self):
        commit = self.firestore.commit
        self.firestore.commit = lambda writes: (commit(writes), stop.STOP.set(signal.SIGTERM))[0]
        self.expect("result", self.publish(), "written")
        self.expect_board()
        self.expect("said", [s for s, _ in self.said], ["WARNING"])
        self.expect_in("said", "not read back: the night was stopped", self.said[0][1])

    def test_a_board_of_another_week_is_not_published(self):
        self.name, self.target = "2026-W48", "weekly_rankings/2026-W48"
        with self.assertRaises(Failure) as raised:
            self.publish()
        self.expect("status", raised.exception.status, 65)
        self.expect_in("why", "its week_id is all_time, but it would be written as weekly_rankings/2026-W48",
                       str(raised.exception))
        self.expect("the app's document", self.firestore.batch_get(self.target)[0], None)


if __name__ == "__main__":
    harness.main()
