"""Firestore, not local files, as the night's baseline, against Google's emulator: whole nights
(`rankings-night run --environment`) whose state directory starts empty each time (a container
without a volume) still guard the board against shrinking (RANKINGS_MAX_DROP), by the board the
app reads in Firestore, and `run -- --max-drop 100` accepts the drop once; and two nights that
overlap, the older one's publish held back until the newer one has published, leave the newer
board in Firestore, whichever way round they finish."""
import json
import os
import random
import shutil
import subprocess
import tempfile
import threading

import support
import emulator as emu
import faults
import harness

PROJECT = "demo-rankings-baseline"
VOTES, JOKES = 1000, 40
server = work = None


def setUpModule():
    global server, work
    work = tempfile.mkdtemp(prefix="rankings-firestore-baseline.")
    server = support.start_emulator()


def tearDownModule():
    if server:
        server.stop()
    shutil.rmtree(work, ignore_errors=True)


class Baseline(harness.Case):
    @classmethod
    def setUpClass(cls):
        cls.db = emu.client(PROJECT, server.address)
        cls.rng = random.Random(42)
        cls.collection = support.votes(cls.rng, VOTES, 90, jokes=JOKES)
        emu.write(cls.db, "rating_events", cls.collection.items())
        cls.states = 0

    def fresh_state(self):
        """A state directory of its own, as a container without a volume starts every night."""
        type(self).states += 1
        state = os.path.join(work, f"state-{self.states}")
        os.makedirs(state)
        return state

    def command(self, state, proxy, *flags):
        """(argv, environment) of a night on state through proxy, its guard at 1 %."""
        return support.night_process(state, PROJECT, proxy.address, *flags, RANKINGS_MAX_DROP="1")

    def night(self, *flags, status=0, said=None):
        state = self.fresh_state()
        with faults.FaultyProxy(server.address) as proxy:
            argv, env = self.command(state, proxy, *flags)
            done = harness.run(argv, timeout=300, env=env)
        self.expect_exit(done, status, said)
        return state, done

    def published(self):
        return emu.show(self.db, "weekly_rankings", "all_time")

    def board(self, state):
        with open(os.path.join(state, "all_time.json"), encoding="utf-8") as text:
            return json.load(text)

    def test_1_a_night_without_a_volume_guards_the_board_by_firestores(self):
        state, _ = self.night()
        first = self.board(state)
        before = self.published()
        # A tenth of the votes gone: the next night, with no board of its own to compare with,
        # compares with the app's, and refuses.
        gone = sorted(self.collection)[: VOTES // 10]
        batch = self.db.batch()
        for name in gone:
            batch.delete(self.db.collection("rating_events").document(name))
        batch.commit()
        state, done = self.night(status=65, said="the app keeps its board")
        self.expect_in("the guard's words", "(--max-drop 1); the app keeps its board. If the votes really went, "
                                            "accept it once: rankings-night run -- --max-drop 100", done.stderr)
        self.expect("no board of its own to compare with", os.path.exists(os.path.join(state, "all_time.json")), True)
        self.expect("the app's board, untouched (its update time too)", self.published(), before)
        # Accepted once, by hand.
        state, _ = self.night("--max-drop", "100")
        after = self.board(state)
        totals = [b["total_hilarious_ratings"] + b["total_horrible_ratings"] for b in (first, after)]
        self.assertLess(totals[1], totals[0] * 0.99, f"not a drop: {totals}")
        got = self.db.collection("weekly_rankings").document("all_time").get().to_dict()
        self.expect("the app's board is the smaller one now",
                    got["total_hilarious_ratings"] + got["total_horrible_ratings"], totals[1])

    def overlap(self, older_last):
        """Night A fetches, then waits in its publish (its read of the app's board answered, its
        commit not yet sent) while votes are added; then night B runs whole. With older_last, A
        goes on only after B has published (the older night's publish lands last); otherwise A
        ends before B starts (two nights in a row). (A's stderr, A's board, B's board.)"""
        reached, release = threading.Event(), threading.Event()

        def hold(status, answer):
            reached.set()
            release.wait(240)
            return status, answer
        state_a, state_b = self.fresh_state(), self.fresh_state()
        with faults.FaultyProxy(server.address) as proxy_a, faults.FaultyProxy(server.address) as proxy_b:
            # The publish's read of the app's board (the night's one batchGet before its commit).
            proxy_a.fault(faults.batch_gets, hold, times=1)
            argv, env = self.command(state_a, proxy_a, "--max-drop", "100")
            a = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            try:
                self.assertTrue(reached.wait(240), "night A never reached its publish")
                extra = support.votes(self.rng, 200, 2, 1, jokes=JOKES)
                emu.write(self.db, "rating_events", extra.items())
                self.collection.update(extra)
                if not older_last:
                    release.set()
                    a_out, a_err = a.communicate(timeout=300)
                argv, env = self.command(state_b, proxy_b, "--max-drop", "100")
                b = harness.run(argv, timeout=300, env=env)
                self.expect_exit(b, 0, "rankings-night: night done")
                release.set()
                if older_last:
                    a_out, a_err = a.communicate(timeout=300)
            finally:
                release.set()
                if a.poll() is None:
                    a.kill()
        self.expect("night A's status", a.returncode, 0)
        return a_err, self.board(state_a), self.board(state_b)

    def test_2_an_older_night_published_last_leaves_the_newer_board(self):
        a_err, older, newer = self.overlap(older_last=True)
        self.expect_in("the older night says so", "was made from a later snapshot", a_err)
        self.assertNotEqual(older["total_hilarious_ratings"] + older["total_horrible_ratings"],
                            newer["total_hilarious_ratings"] + newer["total_horrible_ratings"], "the boards are alike")
        got = self.db.collection("weekly_rankings").document("all_time").get().to_dict()
        self.expect("Firestore holds the newer board",
                    (got["total_hilarious_ratings"], got["total_horrible_ratings"]),
                    (newer["total_hilarious_ratings"], newer["total_horrible_ratings"]))

    def test_3_nights_in_order_leave_the_newer_board(self):
        a_err, _, newer = self.overlap(older_last=False)
        self.expect_in("the older night published", "rankings-night: publish: wrote ", a_err)
        got = self.db.collection("weekly_rankings").document("all_time").get().to_dict()
        self.expect("Firestore holds the newer board",
                    (got["total_hilarious_ratings"], got["total_horrible_ratings"]),
                    (newer["total_hilarious_ratings"], newer["total_horrible_ratings"]))


if __name__ == "__main__":
    harness.main()
