"""Nothing a client writes into the app's document decides the night (issue 49), each through the
proxy in front of Google's emulator with the real job:
  - a snapshot_read_time in 2099 (later than Firestore's own time): not trusted, replaced by
    tonight's board with a WARNING; status ok;
  - an empty document (set({}), valid Firestore): no board yet, so tonight's is published;
  - totals stored as doubles (as a JSON upload stores them): still numbers to the guard, which
    refuses a 50 % drop (65, the app's board untouched)."""
import datetime
import random

import common
import harness

BOARD = {"week_id": "all_time", "hilarious": [], "horrible": [], "total_hilarious_ratings": 3,
         "total_horrible_ratings": 0}


def setUpModule():
    common.start()


def tearDownModule():
    common.stop()


class AppDocument(harness.Case):
    def project(self, name, document):
        p = common.Project(name)
        common.write(p.db, common.votes(random.Random(7), 100, 60).items())
        p.db.collection("weekly_rankings").document("all_time").set(document)
        return p

    def test_a_snapshot_read_time_in_2099_is_replaced_with_a_warning(self):
        p = self.project("future", dict(BOARD, snapshot_read_time=datetime.datetime(2099, 1, 1, tzinfo=common.UTC)))
        with common.proxy() as proxy:
            done = p.run(proxy)
            status, nights = p.status(proxy), p.history(proxy)
        self.expect_exit(done, 0)
        fields = p.document()["fields"]
        self.expect("snapshot_read_time now", common.timestamp(fields["snapshot_read_time"]["timestampValue"]),
                    common.timestamp(p.read_time()))
        self.expect("the total now", int(fields["total_hilarious_ratings"]["integerValue"]),
                    p.board()["total_hilarious_ratings"])
        self.expect("the night", (nights[-1]["status"], nights[-1].get("published")), (0, ["weekly_rankings/all_time"]))
        self.expect_in("rankings-night status", "  ok  ", status.splitlines()[0])
        said = [line for line in common.warnings(done) if "publish: " in line and "2099" in line]
        self.expect(f"the publish's WARNINGs naming 2099 (stderr:\n{done.stderr})", len(said), 1)

    def test_an_empty_document_is_no_board_yet(self):
        p = self.project("empty", {})
        with common.proxy() as proxy:
            done = p.run(proxy)
        self.expect_exit(done, 0)
        fields = p.document()["fields"]
        self.expect("the document's week_id", fields.get("week_id"), {"stringValue": "all_time"})
        self.expect("its totals", [int(fields[k]["integerValue"]) for k in ("total_hilarious_ratings",
                                                                         "total_horrible_ratings")],
                    [p.board()["total_hilarious_ratings"], p.board()["total_horrible_ratings"]])

    def test_totals_stored_as_doubles_are_guarded(self):
        # The app's board has 2,000 votes, stored as doubles; tonight's has about 60: a drop of 97 %.
        p = self.project("doubles", dict(BOARD, total_hilarious_ratings=1200.0, total_horrible_ratings=800.0))
        before = p.document()
        self.expect("the totals' type in Firestore", before["fields"]["total_hilarious_ratings"], {"doubleValue": 1200})
        with common.proxy() as proxy:
            done = p.run(proxy)
            nights = p.history(proxy)
        self.expect_exit(done, 65)
        said = [line for line in common.errors(done) if "publish: " in line and "--max-drop" in line]
        self.assertTrue(said, f"no publish ERROR naming --max-drop:\n{done.stderr}")
        self.expect_in("the way to accept it", "rankings-night run -- --max-drop 100", said[0])
        self.expect("weekly_rankings/all_time", p.document(), before)
        self.expect("the night", (nights[-1]["status"], nights[-1]["steps"]["publish"]["status"],
                                  nights[-1].get("published")), (65, 65, []))


if __name__ == "__main__":
    harness.main()
