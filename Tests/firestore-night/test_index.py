"""No unproven night keeps a blind spot (issue 49). Google's emulator needs no index, so the proxy
answers as Firestore does without the proof's composite indexes: 400 FAILED_PRECONDITION "The
query requires an index" for a COUNT with a rating range beside a joke_id's equality or a
timestamp's range. With the 30-day board, after a first night that was proven (so the next could
build on it): `rankings-night plan` names all three index commands; the night reads the whole
collection (not the incremental night it had planned), publishes both boards marked unproven (a
WARNING naming the gcloud command), and `status`, the history and rankings_night_boards_proven
say unproven."""
import datetime
import random

import common
import harness

INDEX = "gcloud firestore indexes composite create"


def setUpModule():
    common.start()


def tearDownModule():
    common.stop()


class Index(harness.Case):
    def test_a_missing_index_is_a_full_read_published_unproven(self):
        p = common.Project("index")
        collection = common.votes(random.Random(31), 150, 60)
        common.write(p.db, collection.items())
        monthly = {"RANKINGS_MONTHLY": "yes"}
        with common.proxy() as proxy:
            first = p.run(proxy, **monthly)
        self.expect_exit(first, 0)
        self.expect("the first night's read", p.record()["mode"], "full")
        now = datetime.datetime.now(common.UTC)
        common.write(p.db, [(f"{common.device_id(5 * 10**6 + n)}_J002_{common.week_id(now)}",
                             {"joke_id": "J002", "rating": 5, "device_id": common.device_id(5 * 10**6 + n),
                              "week_id": common.week_id(now), "timestamp": now}) for n in range(5)])
        with common.proxy() as proxy:
            proxy.fault(common.needs_index, common.NO_INDEX, times=None)
            plan = p.night("plan", "--environment", settings=p.settings(proxy, **monthly))
            kept = p.document()
            done = p.run(proxy, **monthly)
            nights, status = p.history(proxy, **monthly), p.status(proxy, **monthly)
        self.expect_exit(done, 0)
        record = p.record()
        self.expect("tonight's read", record["mode"], "full")
        self.expect_in("why", "proven", record["full_reason"])
        self.expect("documents tonight's read returned, at the proxy",
                    sum(c.documents or 0 for c in proxy.chosen(common.faults.pages)), len(collection) + 5)
        said = [line for line in common.warnings(done) if INDEX in line]
        self.assertTrue(said, f"no WARNING naming the index command:\n{done.stderr}")
        self.assertNotEqual(p.document(), kept, "weekly_rankings/all_time was not published")
        self.expect("its total", int(p.document()["fields"]["total_hilarious_ratings"]["integerValue"]),
                    p.board()["total_hilarious_ratings"])
        self.assertIsNotNone(p.document(p.board("monthly")["week_id"]), "the 30-day board was not published")
        last = nights[-1]
        self.expect("the night", (last["status"], last["proof"]["status"], len(last.get("published", []))),
                    (0, "unproven", 2))
        self.expect_in("rankings-night status", "unproven", status)
        self.expect("rankings_night_boards_proven", common.samples(p.metrics).get("rankings_night_boards_proven"), "0")
        self.expect_exit(plan, 0)
        commands = [line for line in plan.stdout.splitlines() if INDEX in line]
        self.expect(f"`plan`'s index commands:\n{plan.stdout}", len(commands), 3)
        self.expect("the fields of each", sorted(sorted(w.split(",")[0].split("=")[-1] for w in line.split()
                                                         if w.startswith("--field-config=")) for line in commands),
                    [["joke_id", "rating"], ["joke_id", "rating", "timestamp"], ["rating", "timestamp"]])


if __name__ == "__main__":
    harness.main()
