"""The whole night against Google's Firestore emulator: `rankings-night run --config FILE` with the
30-day board on (RANKINGS_MONTHLY=yes), its fetch and publish the shipped hooks, every call to
Firestore through faults.py's proxy as to Google's API (RANKINGS_FIRESTORE_ENDPOINT and a token).
Each night fetches once (counted at the proxy: a full read of the collection the first night,
one incremental query the next, never a read of the window besides), and makes both boards from
that one snapshot: the monthly one is the job's --since -30d of the very folder the all-time one
was made from, and of the collection as the test wrote it. Both are published and read back with
Google's client; rankings-night.prom and rankings-fetch.prom pass `promtool check metrics`."""
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

PROJECT = "demo-rankings-night"
VOTES = 3000
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
        cls.collection = support.votes(cls.rng, VOTES, 90)
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
            config = os.path.join(work, "rankings.conf")
            with open(config, "w") as out:
                out.write(f"RANKINGS_EXPORTS={self.directory}/current\n"
                          f"RANKINGS_OUTPUT={self.state}/all_time.json\n"
                          f"RANKINGS_METRICS={self.state}/rankings.prom\n"
                          f"RANKINGS_BIN={support.RANKINGS}\n"
                          f'RANKINGS_FETCH="{support.HOOKS}/{support.FETCH} {self.directory}"\n'
                          f"RANKINGS_PUBLISH={support.HOOKS}/{support.PUBLISH}\n"
                          "RANKINGS_MONTHLY=yes\n"
                          "RANKINGS_RETRIES=0\n"
                          f"RANKINGS_FIRESTORE_PROJECT={PROJECT}\n"
                          f"RANKINGS_FIRESTORE_ENDPOINT=http://{proxy.address}/v1\n"
                          'RANKINGS_FIRESTORE_TOKEN_COMMAND="echo ya29.night-token"\n'
                          "RANKINGS_FIRESTORE_BACKOFF_SECONDS=0.1\n")
            done = harness.run([support.NIGHT, "run", "--config", config], timeout=300, env=support.environment())
        type(self).nights += 1
        self.expect("tokens sent", {c.authorization for c in proxy.calls}, {"Bearer ya29.night-token"})
        if status:
            self.expect_exit(done, status, f"rankings-night: night failed with status {status}")
            return done, proxy
        self.expect_exit(done, 0, "rankings-night: night done: the boards are written and published")
        return done, proxy, support.record(self.directory)

    def both_boards_from_one_snapshot(self, done):
        """The two aggregate commands of the night read the same resolved folder, the one current
        names now, with one computed_at; the monthly board is that folder's last 30 days, and the
        collection's as the test wrote it; both are in Firestore as the job wrote them."""
        commands = [line.split(": try 1 of 1: ", 1)[1].split() for line in support.said(done, "aggregate: try 1 of 1: ")]
        self.expect("aggregate commands", len(commands), 2)
        snapshot = os.path.realpath(os.path.join(self.directory, "current"))
        self.expect("the folder each board was made from", [c[-1] for c in commands], [snapshot, snapshot])
        boards = {}
        for name in ("all_time", "monthly"):
            with open(os.path.join(self.state, f"{name}.json"), encoding="utf-8") as text:
                boards[name] = json.load(text)
        computed_at = boards["all_time"]["computed_at"]
        self.expect("one computed_at", boards["monthly"]["computed_at"], computed_at)
        mine = os.path.join(work, "monthly.json")
        for source in (snapshot, support.written(PROJECT, self.collection, os.path.join(work, "written"))):
            if os.path.exists(mine):
                os.unlink(mine)
            made = harness.run([support.RANKINGS, "aggregate", "--computed-at", computed_at, "--allow-empty",
                                "--since", "-30d", "--week-document", "--output", mine, source])
            self.expect_exit(made, 0)
            with open(mine, "rb") as a, open(os.path.join(self.state, "monthly.json"), "rb") as b:
                self.expect(f"the monthly board, against --since -30d of {source}", b.read(), a.read())
        totals = {n: b["total_hilarious_ratings"] + b["total_horrible_ratings"] for n, b in boards.items()}
        self.assertTrue(0 < totals["monthly"] < totals["all_time"], f"not a window of the all-time board: {totals}")
        # The 30-day board is the New York week's document, where older app versions read it.
        week = boards["monthly"]["week_id"]
        self.assertRegex(week, r"^[0-9]{4}-W[0-9]{2}$")
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
        night = support.promtool_samples(os.path.join(self.state, "rankings-night.prom"))
        steps = ("fetch", "aggregate", "publish")
        self.expect("rankings-night.prom", {k: night.get(k) for k in ["rankings_night_last_run_exit_status"] + [
            f'rankings_night_step_{s}{{step="{n}"}}' for s in ("exit_status", "tries") for n in steps]},
            {"rankings_night_last_run_exit_status": "0",
             **{f'rankings_night_step_exit_status{{step="{n}"}}': "0" for n in steps},
             **{f'rankings_night_step_tries{{step="{n}"}}': "1" for n in steps}})
        self.assertIn("rankings_night_last_success_timestamp_seconds", night)
        fetch = support.promtool_samples(os.path.join(self.state, "rankings-fetch.prom"))
        self.expect("rankings-fetch.prom", (fetch.get("rankings_fetch_last_run_exit_status"), fetch.get("rankings_fetch_full")),
                    ("0", "1" if full else "0"))

    def test_night_1_one_full_read_and_both_boards_from_it(self):
        done, proxy, record = self.night()
        self.expect("mode", record["mode"], "full")
        self.expect("queries over the votes since a time (an incremental night's or a window's)",
                    len(proxy.chosen(faults.incremental)), 0)
        self.expect("documents of the full read's pages, at the proxy",
                    sum(c.documents or 0 for c in proxy.chosen(faults.full_pages)), VOTES)
        self.expect("documents the fetch says it read", record["documents_read"], VOTES)
        self.both_boards_from_one_snapshot(done)
        self.metrics(full=True)

    def test_night_2_one_incremental_query_and_both_boards_from_its_snapshot(self):
        if self.nights != 1:
            self.fail("night 1 did not run, so this one cannot")
        now = datetime.datetime.now(support.UTC)
        changed = [support.vote(20000 + i, self.rng.randrange(300), 30, 5, now) for i in range(40)]
        changed += [(n, dict(self.collection[n], rating=6 - self.collection[n]["rating"], timestamp=now))
                    for n in self.rng.sample(sorted(self.collection), 10)]
        emu.write(self.db, "rating_events", changed)
        self.collection.update(changed)
        done, proxy, record = self.night()
        self.expect("mode", record["mode"], "incremental")
        pages = proxy.chosen(faults.pages)
        # The margin in RANKINGS_FIRESTORE_STREAMS (8) spans of time, a page each at this size.
        self.expect("runQuery pages", len(pages), 8)
        self.expect("they are the incremental query's", [faults.incremental(p) for p in pages], [True] * 8)
        self.expect("documents at the proxy", sum(p.documents for p in pages), 50)
        self.expect("documents the fetch says it read", record["documents_read"], 50)
        self.both_boards_from_one_snapshot(done)
        self.metrics(full=False)

    def test_night_3_a_publish_not_proven_fails_the_night_69_and_the_metrics_keep_the_last_success(self):
        if self.nights != 2:
            self.fail("nights 1 and 2 did not run, so this one cannot")
        success = support.promtool_samples(os.path.join(self.state, "rankings-night.prom"))[
            "rankings_night_last_success_timestamp_seconds"]
        done, proxy = self.night(status=69, fault=(faults.commits, lambda status, answer: (204, None)))
        self.expect_in("why", "publish: failed with status 69 (unavailable) on try 1", done.stderr)
        self.expect_in("the publish's own line relayed", "not proven published", done.stderr)
        # The board read before, no read-back of a commit not proven, and no monthly board after
        # the all-time one failed.
        self.expect("commit and GET calls", [c.kind for c in proxy.calls if c.kind in ("commit", "get")],
                    ["get", "commit"])
        night = support.promtool_samples(os.path.join(self.state, "rankings-night.prom"))
        self.expect("rankings-night.prom", {k: night.get(k) for k in (
            "rankings_night_last_run_exit_status", 'rankings_night_step_exit_status{step="fetch"}',
            'rankings_night_step_exit_status{step="aggregate"}', 'rankings_night_step_exit_status{step="publish"}',
            "rankings_night_last_success_timestamp_seconds")},
            {"rankings_night_last_run_exit_status": "69", 'rankings_night_step_exit_status{step="fetch"}': "0",
             'rankings_night_step_exit_status{step="aggregate"}': "0",
             'rankings_night_step_exit_status{step="publish"}': "69",
             "rankings_night_last_success_timestamp_seconds": success})


if __name__ == "__main__":
    harness.main()
