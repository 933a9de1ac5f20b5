"""The whole night against Google's Firestore emulator: `rankings-night run --environment` with the
30-day board on (RANKINGS_MONTHLY=yes), every call to Firestore through faults.py's proxy
(FIRESTORE_EMULATOR_HOST). Each night fetches once (counted at the proxy: a full read of the
collection the first night, one incremental query the next, in spans of time, never a read of
the window besides), and makes both boards from that one snapshot at its readTime: the monthly
one is the job's --since READTIME-30d of the very folder the all-time one was made from, and of
the collection as the test wrote it. Both are proven, published and read back with Google's
client; the one metrics file passes `promtool check metrics`. A publish not proven fails the
night 69 and the metrics keep the last success."""
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
from rankings_night.night import week_of
from rankings_night.snapshot import format_time, parse_time

PROJECT = "demo-rankings-night"
VOTES, JOKES = 1500, 40
server = work = None


def setUpModule():
    global server, work
    work = tempfile.mkdtemp(prefix="rankings-firestore-night.")
    server = support.start_emulator()


def tearDownModule():
    if server:
        server.stop()
    shutil.rmtree(work, ignore_errors=True)


class Night(harness.Case):
    """Two nights in a row on one state directory; each test is one, in order."""

    @classmethod
    def setUpClass(cls):
        cls.db = emu.client(PROJECT, server.address)
        cls.rng = random.Random(30)
        # Votes over the last 90 days: about a third of them in the 30-day board.
        cls.collection = support.votes(cls.rng, VOTES, 90, jokes=JOKES)
        emu.write(cls.db, "rating_events", cls.collection.items())
        cls.state = os.path.join(work, "state")
        cls.directory = os.path.join(cls.state, "firestore")
        os.makedirs(cls.state)
        cls.nights = 0

    def night(self, status=0, fault=None):
        """One night through a fresh proxy (breaking what fault says, (match, fault)); (the night's
        process, the proxy, the fetch's record), or without the record when the night is to fail."""
        with faults.FaultyProxy(server.address) as proxy:
            if fault:
                proxy.fault(*fault, times=None)
            done = support.night(self.state, PROJECT, proxy.address, RANKINGS_MONTHLY="yes",
                                 RANKINGS_METRICS=f"{self.state}/rankings.prom")
        type(self).nights += 1
        if status:
            self.expect_exit(done, status, f"rankings-night: error: night failed with status {status}")
            return done, proxy
        self.expect_exit(done, 0, "rankings-night: night done: the boards are written and published")
        return done, proxy, support.record(self.directory)

    def both_boards_from_one_snapshot(self, record):
        """Both boards computed at the snapshot's readTime, the folder current names: the all-time
        one the job's of it, the monthly one its --since READTIME-30d, and the collection's as the
        test wrote it; both are in Firestore as the job wrote them."""
        snapshot = os.path.realpath(os.path.join(self.directory, "current"))
        boards = {}
        for name in ("all_time", "monthly"):
            with open(os.path.join(self.state, f"{name}.json"), encoding="utf-8") as text:
                boards[name] = json.load(text)
        computed_at = boards["all_time"]["computed_at"]
        self.expect("computed at the snapshot's readTime (to the millisecond)", computed_at,
                    record["read_time"][:23] + "Z")
        self.expect("one computed_at", boards["monthly"]["computed_at"], computed_at)
        since = format_time(parse_time(record["read_time"]) - 30 * 86_400 * 10**9)
        mine = os.path.join(work, "board.json")
        for name, flags in (("all_time", []), ("monthly", ["--allow-empty", "--since", since, "--week-document"])):
            for source in (snapshot, support.written(PROJECT, self.collection, os.path.join(work, "written"))):
                if os.path.exists(mine):
                    os.unlink(mine)
                made = harness.run([support.RANKINGS, "aggregate", "--computed-at", record["read_time"], *flags,
                                    "--output", mine, source])
                self.expect_exit(made, 0)
                with open(mine, "rb") as a, open(os.path.join(self.state, f"{name}.json"), "rb") as b:
                    self.expect(f"the {name} board, against the job's {' '.join(flags)} of {source}", b.read(), a.read())
        totals = {n: b["total_hilarious_ratings"] + b["total_horrible_ratings"] for n, b in boards.items()}
        self.assertTrue(0 < totals["monthly"] < totals["all_time"], f"not a window of the all-time board: {totals}")
        # The 30-day board is the New York week's document of the readTime, where older app versions read it.
        week = boards["monthly"]["week_id"]
        self.expect("the week of the readTime", week, week_of(record["read_time"]))
        self.expect("no weekly_rankings/monthly", self.db.collection("weekly_rankings").document("monthly").get().exists,
                    False)
        for name, board in boards.items():
            name = week if name == "monthly" else name
            got = self.db.collection("weekly_rankings").document(name).get().to_dict()
            if name == week:
                bounds = {k: got[k].astimezone(datetime.timezone.utc).isoformat(timespec="milliseconds")
                          .replace("+00:00", "Z") for k in ("week_start", "week_end")}
                self.expect(f"weekly_rankings/{name}'s bounds, Timestamps as the older app decodes them", bounds,
                            {k: board[k] for k in ("week_start", "week_end")})
            stamp = got["computed_at"].astimezone(datetime.timezone.utc).isoformat(timespec="milliseconds")
            self.expect(f"weekly_rankings/{name} as Google's client reads it",
                        {k: got[k] for k in ("week_id", "hilarious", "horrible", "total_hilarious_ratings",
                                             "total_horrible_ratings")} | {"computed_at": stamp.replace("+00:00", "Z")},
                        {k: board[k] for k in ("week_id", "hilarious", "horrible", "total_hilarious_ratings",
                                               "total_horrible_ratings", "computed_at")})

    def metrics(self, full):
        samples = support.promtool_samples(os.path.join(self.state, "rankings.prom"))
        steps = ("fetch", "aggregate", "prove", "publish")
        self.expect("rankings.prom", {k: samples.get(k) for k in [
            "rankings_night_last_run_exit_status", "rankings_night_boards_proven", "rankings_fetch_full"] + [
            f'rankings_night_step_{s}{{step="{n}"}}' for s in ("exit_status", "tries") for n in steps]},
            {"rankings_night_last_run_exit_status": "0", "rankings_night_boards_proven": "1",
             "rankings_fetch_full": "1" if full else "0",
             **{f'rankings_night_step_exit_status{{step="{n}"}}': "0" for n in steps},
             **{f'rankings_night_step_tries{{step="{n}"}}': "1" for n in steps}})
        self.assertIn("rankings_night_last_success_timestamp_seconds", samples)
        self.expect("0.4's files beside it", [n for n in os.listdir(self.state) if n.endswith(".prom")], ["rankings.prom"])

    def test_night_1_one_full_read_and_both_boards_from_it(self):
        done, proxy, record = self.night()
        self.expect("mode", record["mode"], "full")
        self.expect("queries over the votes since a time (an incremental night's or a window's)",
                    len(proxy.chosen(faults.incremental)), 0)
        self.expect("documents of the full read's pages, at the proxy",
                    sum(c.documents or 0 for c in proxy.chosen(faults.full_pages)), VOTES)
        self.expect("documents the fetch says it read", record["documents_read"], VOTES)
        self.both_boards_from_one_snapshot(record)
        self.metrics(full=True)

    def test_night_2_one_incremental_query_and_both_boards_from_its_snapshot(self):
        if self.nights != 1:
            self.fail("night 1 did not run, so this one cannot")
        now = datetime.datetime.now(support.UTC)
        changed = [support.vote(20000 + i, self.rng.randrange(JOKES), 30, 5, now) for i in range(40)]
        changed += [(n, dict(self.collection[n], rating=6 - self.collection[n]["rating"], timestamp=now))
                    for n in self.rng.sample(sorted(self.collection), 10)]
        emu.write(self.db, "rating_events", changed)
        self.collection.update(changed)
        done, proxy, record = self.night()
        self.expect("mode", record["mode"], "incremental")
        pages = proxy.chosen(faults.pages)
        # The margin's one query, a page at this size.
        self.expect("runQuery pages", len(pages), 1)
        self.expect("they are the incremental query's", [faults.incremental(p) for p in pages], [True])
        self.expect("documents at the proxy", sum(p.documents for p in pages), 50)
        self.expect("documents the fetch says it read", record["documents_read"], 50)
        self.both_boards_from_one_snapshot(record)
        self.metrics(full=False)

    def test_night_3_a_publish_not_proven_fails_the_night_69_and_the_metrics_keep_the_last_success(self):
        if self.nights != 2:
            self.fail("nights 1 and 2 did not run, so this one cannot")
        success = support.promtool_samples(os.path.join(self.state, "rankings.prom"))[
            "rankings_night_last_success_timestamp_seconds"]
        done, proxy = self.night(status=69, fault=(faults.commits, lambda status, answer: (204, None)))
        self.expect_in("why", "rankings-night: error: publish: failed with status 69 (unavailable) on try 1",
                       done.stderr)
        self.expect_in("the publish's own line", "rankings-night: error: publish: ", done.stderr)
        self.expect_in("its words", "not proven published", done.stderr)
        # The board read before, no read-back of a commit not proven, and no monthly board after
        # the all-time one failed.
        self.expect("commit and batchGet calls", [c.kind for c in proxy.calls if c.kind in ("commit", "batchGet")],
                    ["batchGet", "commit"])
        samples = support.promtool_samples(os.path.join(self.state, "rankings.prom"))
        self.expect("rankings.prom", {k: samples.get(k) for k in (
            "rankings_night_last_run_exit_status", 'rankings_night_step_exit_status{step="fetch"}',
            'rankings_night_step_exit_status{step="aggregate"}', 'rankings_night_step_exit_status{step="prove"}',
            'rankings_night_step_exit_status{step="publish"}', "rankings_night_last_success_timestamp_seconds")},
            {"rankings_night_last_run_exit_status": "69", 'rankings_night_step_exit_status{step="fetch"}': "0",
             'rankings_night_step_exit_status{step="aggregate"}': "0",
             'rankings_night_step_exit_status{step="prove"}': "0",
             'rankings_night_step_exit_status{step="publish"}': "69",
             "rankings_night_last_success_timestamp_seconds": success})


if __name__ == "__main__":
    harness.main()
