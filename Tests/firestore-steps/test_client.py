"""The night's Firestore client (rankings_night.firestore) against Google's emulator: get_document
of a document not there is None; a commit whose write says `exists: false` creates it once and is
refused the second time; a commit on the updateTime just read replaces it, and one on an older
updateTime is refused and changes nothing (what a publish that must not overwrite a newer board
relies on; the emulator refuses currentDocument.updateTime on a PATCH, so it goes by :commit).
Python's standard library only: `python3 Tests/firestore-steps/test_client.py`."""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "firestore-loop"))
sys.path.insert(0, os.path.dirname(HERE))
import emulator as emu  # noqa: E402
import harness  # noqa: E402
from rankings_night.firestore import Firestore  # noqa: E402
from rankings_night.transport import Refused, Retry  # noqa: E402

PROJECT = "demo-rankings-client"
PATH = "weekly_rankings/all_time"
server = None


def setUpModule():
    global server
    server = emu.Emulator()
    server.start()


def tearDownModule():
    if server:
        server.stop()


def board(computed_at):
    return {"week_id": {"stringValue": "all_time"}, "computed_at": {"stringValue": computed_at}}


class Commit(harness.Case):
    def setUp(self):
        self.firestore = Firestore(PROJECT, api=f"http://{server.address}/v1", retry=Retry(attempts=2, initial=0.1),
                                   say=print)
        # A run before this one on the same emulator left its document.
        self.firestore.commit([{"delete": f"{self.firestore.database_path}/documents/{PATH}"}])

    def fields(self):
        return self.firestore.get_document(PATH)["fields"]

    def test_a_commit_on_the_update_time_read_and_only_then(self):
        f = self.firestore
        self.expect("before", f.get_document(PATH), None)
        created = f.commit([f.write(PATH, board("first"), exists=False)])
        self.expect("write results", len(created["writeResults"]), 1)
        with self.assertRaises(Refused) as raised:
            f.commit([f.write(PATH, board("again"), exists=False)])
        self.expect("a second create's refusal", raised.exception.code in (400, 409), True)
        self.expect("after the refused create", self.fields(), board("first"))

        read = f.get_document(PATH)
        self.expect("name", read["name"], f"projects/{PROJECT}/databases/(default)/documents/{PATH}")
        self.expect("the updateTime read is the commit's", read["updateTime"],
                    created["writeResults"][0]["updateTime"])
        replaced = f.commit([f.write(PATH, board("second"), update_time=read["updateTime"])])
        self.expect("replaced", self.fields(), board("second"))

        with self.assertRaises(Refused) as raised:
            f.commit([f.write(PATH, board("stale"), update_time=read["updateTime"])])
        self.expect("refusal", (raised.exception.code, raised.exception.reason), (400, "FAILED_PRECONDITION"))
        self.expect("after the refused commit", self.fields(), board("second"))
        self.expect("its updateTime", f.get_document(PATH)["updateTime"], replaced["writeResults"][0]["updateTime"])


if __name__ == "__main__":
    harness.main()
