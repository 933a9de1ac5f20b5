"""0.4 configurations whose meaning 0.5 keeps (issue 48): each runs as it is, with exactly one
WARNING naming its 0.4 lines and what to write instead, and makes (with a project: publishes) the
board: the shipped 0.4 rankings.conf (exports, no Firestore), firestore.md's 0.4 minimal block
(the shipped fetch and publish hooks), RANKINGS_EXPORTS at the fetch's DIR/current, and
RANKINGS_FLAGS="--max-drop N" (the guard at N). And the guide's way to accept a drop once,
`rankings-night run -- --max-drop 100`, after which the next night is guarded again."""
import json
import os
import random
import shutil

import common
import harness

SHIPPED_04 = os.path.join(common.HERE, "rankings-0.4.conf")     # 0.4.0's jobs/rankings.conf, as it was
SAMPLE = os.path.join(harness.ROOT, "sample-data", "rating_events.ndjson")


def setUpModule():
    common.start()


def tearDownModule():
    common.stop()


def rated(fields):
    return fields["rating"] != 3


class Compat(harness.Case):
    def one_warning(self, done, *said):
        """Exactly one WARNING, holding each of `said` (the 0.4 lines and what to write)."""
        found = common.warnings(done)
        self.expect(f"WARNING lines (stderr:\n{done.stderr})", len(found), 1)
        for words in said:
            self.expect_in("the WARNING", words, found[0])
        return found[0]

    def published(self, p, done, proxy):
        """The night's board is weekly_rankings/all_time now, stamped with tonight's readTime."""
        self.expect_exit(done, 0)
        document, board = p.document(), p.board()
        self.assertIsNotNone(document, "weekly_rankings/all_time was not written")
        fields = document["fields"]
        self.expect("snapshot_read_time", common.timestamp(fields["snapshot_read_time"]["timestampValue"]),
                    common.timestamp(p.read_time()))
        self.expect("the totals published", [int(fields[k]["integerValue"]) for k in ("total_hilarious_ratings",
                                                                                   "total_horrible_ratings")],
                    [board["total_hilarious_ratings"], board["total_horrible_ratings"]])
        self.assertTrue(proxy.calls, "nothing went through the proxy")

    def test_the_shipped_0_4_file_with_exports_makes_the_board(self):
        p = common.Project("shipped")
        exports = os.path.join(p.folder, "exports")
        os.makedirs(exports)
        shutil.copy(SAMPLE, exports)
        with open(SHIPPED_04, encoding="utf-8") as text:
            config = text.read().replace("/srv/rankings/exports", exports).replace("/var/lib/rankings", p.state)
        path = os.path.join(p.folder, "rankings.conf")
        with open(path, "w", encoding="utf-8") as out:
            out.write(config)
        os.makedirs(p.state)
        done = p.night("run", "--config", path)
        self.expect_exit(done, 0)
        self.one_warning(done, "RANKINGS_OUTPUT", f"RANKINGS_STATE_DIRECTORY={p.state}", "RANKINGS_FLAGS",
                         "RANKINGS_FETCH", "RANKINGS_PUBLISH")
        self.expect("errors", common.errors(done), [])
        board = p.board()
        mine = os.path.join(p.folder, "mine.json")
        made = harness.run([common.RANKINGS, "aggregate", "--quiet", "--computed-at", board["computed_at"], "--output",
                            mine, exports])
        self.expect_exit(made, 0)
        with open(mine, encoding="utf-8") as text:
            self.expect("the board, against the job's own of the exports", board, json.load(text))

    def test_the_0_4_minimal_firestore_block_publishes(self):
        p = common.Project("minimal")
        common.write(p.db, common.votes(random.Random(1), 120, 60).items())
        with common.proxy() as proxy:
            # firestore.md's "A minimal configuration" at 0.4, DIR in this test's state directory,
            # which 0.4 placed by RANKINGS_OUTPUT; and the emulator.
            config = p.config([("RANKINGS_FETCH", f"/usr/libexec/rankings-fetch-firestore {p.state}/firestore"),
                               ("RANKINGS_PUBLISH", "/usr/libexec/rankings-publish-firestore"),
                               ("RANKINGS_FIRESTORE_PROJECT", p.project),
                               ("RANKINGS_OUTPUT", f"{p.state}/all_time.json"),
                               ("FIRESTORE_EMULATOR_HOST", proxy.address)])
            done = p.night("run", "--config", config)
        self.published(p, done, proxy)
        self.one_warning(done, "line 1 RANKINGS_FETCH", "line 2 RANKINGS_PUBLISH", "line 4 RANKINGS_OUTPUT",
                         "delete it", f"RANKINGS_STATE_DIRECTORY={p.state}")

    def test_exports_at_the_fetched_current_publishes(self):
        p = common.Project("current")
        common.write(p.db, common.votes(random.Random(2), 120, 60).items())
        with common.proxy() as proxy:
            done = p.run(proxy, RANKINGS_EXPORTS=f"{p.state}/firestore/current")
        self.published(p, done, proxy)
        self.one_warning(done, f"RANKINGS_EXPORTS={p.state}/firestore/current", "delete it")

    def test_flags_of_max_drop_n_are_the_guard_at_n(self):
        p = common.Project("maxdrop")
        collection = common.votes(random.Random(3), 200, 60)
        common.write(p.db, collection.items())
        flags = {"RANKINGS_FLAGS": "--max-drop 5"}
        with common.proxy() as proxy:
            done = p.run(proxy, **flags)
        self.published(p, done, proxy)
        self.one_warning(done, 'RANKINGS_FLAGS="--max-drop 5"', "RANKINGS_MAX_DROP=5")
        shown = p.night("settings", "--environment", settings=p.settings(proxy, **flags))
        self.expect_exit(shown, 0)
        self.expect_in("rankings-night settings", "RANKINGS_MAX_DROP=5", shown.stdout)
        # About 2.5 % of the rated votes deleted: over 1 %, within 5 %.
        total = p.board()["total_hilarious_ratings"] + p.board()["total_horrible_ratings"]
        gone = [n for n in sorted(collection) if rated(collection[n])][: max(2, total * 25 // 1000)]
        self.assertTrue(1 < 100 * len(gone) / total <= 5, f"{len(gone)} of {total}")
        for name in gone:
            p.db.collection("rating_events").document(name).delete()
        with common.proxy() as proxy:
            done = p.run(proxy, **flags)
        self.published(p, done, proxy)
        self.expect("the total after the drop", p.board()["total_hilarious_ratings"] +
                    p.board()["total_horrible_ratings"], total - len(gone))

    def test_run_dash_dash_max_drop_100_accepts_a_drop_once(self):
        p = common.Project("accept")
        collection = common.votes(random.Random(4), 200, 60)
        common.write(p.db, collection.items())
        with common.proxy() as proxy:
            done = p.run(proxy)
        self.published(p, done, proxy)
        names = [n for n in sorted(collection) if rated(collection[n])]
        for name in names[: len(names) // 2]:
            p.db.collection("rating_events").document(name).delete()
        kept = p.document()
        with common.proxy() as proxy:
            refused = p.run(proxy)
        self.expect_exit(refused, 65)
        self.assertTrue(any("--max-drop" in line for line in refused.stderr.splitlines()), refused.stderr)
        self.expect("weekly_rankings/all_time after the refused drop", p.document(), kept)
        with common.proxy() as proxy:
            accepted = p.run(proxy, "--", "--max-drop", "100")
        self.published(p, accepted, proxy)
        self.expect("the total accepted", p.board()["total_hilarious_ratings"] + p.board()["total_horrible_ratings"],
                    len(names) - len(names) // 2)
        # Once: the next night is guarded again, against the smaller board.
        for name in names[len(names) // 2:][:5]:
            p.db.collection("rating_events").document(name).delete()
        kept = p.document()
        with common.proxy() as proxy:
            again = p.run(proxy)
        self.expect_exit(again, 65)
        self.expect("weekly_rankings/all_time after the next drop", p.document(), kept)
        self.expect("the nights' statuses", [n["status"] for n in p.history(proxy)], [0, 65, 0, 65])


if __name__ == "__main__":
    harness.main()
