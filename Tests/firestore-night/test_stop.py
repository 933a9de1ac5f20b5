"""A stop stops (issue 49): a second night gets SIGTERM while the proxy holds the first of its
proof's COUNTs (what `systemctl stop` sends mid-proof). Nothing is published after the signal
(weekly_rankings/all_time byte for byte the first night's), the night exits 143 soon after the
COUNT is answered, and the history, `rankings-night status` and the metrics say it was stopped by
SIGTERM in the proof, the publish not run, the last success the first night's."""
import datetime
import random
import signal

import common
import harness


def setUpModule():
    common.start()


def tearDownModule():
    common.stop()


class Stop(harness.Case):
    def test_sigterm_during_the_proof_publishes_nothing_and_says_so(self):
        p = common.Project("stop")
        common.write(p.db, common.votes(random.Random(41), 150, 60).items())
        with common.proxy() as proxy:
            first = p.run(proxy)
        self.expect_exit(first, 0)
        success = common.samples(p.metrics).get("rankings_night_last_success_timestamp_seconds")
        kept = p.document()
        now = datetime.datetime.now(common.UTC)
        common.write(p.db, [(f"{common.device_id(7 * 10**6 + n)}_J003_{common.week_id(now)}",
                             {"joke_id": "J003", "rating": 5, "device_id": common.device_id(7 * 10**6 + n),
                              "week_id": common.week_id(now), "timestamp": now}) for n in range(5)])
        held = common.Held()
        with common.proxy() as proxy:
            proxy.before(common.proof_count, held)
            night = p.start(proxy)
            try:
                self.assertTrue(held.arrived.wait(180), f"the proof's first COUNT never came:\n{night.said()}")
                night.send_signal(signal.SIGTERM)
                # The COUNT answered a second after the signal: the night must not go on to publish.
                self.assertIsNone(night.poll(), "the night ended before its COUNT was answered")
                held.released.wait(1)
                held.released.set()
                status = night.wait(60)
            finally:
                held.released.set()
                if night.poll() is None:
                    night.kill()
                    night.wait()
            said = night.said()
            nights, shown = p.history(proxy), p.status(proxy)
        self.expect(f"exit status (output:\n{said})", status, 143)
        self.expect("weekly_rankings/all_time", p.document(), kept)
        self.expect("commits at the proxy", [c.path for c in proxy.calls if c.kind == "commit"], [])
        self.assertTrue(any("stopped by SIGTERM" in line for line in said.splitlines()), said)
        last = nights[-1]
        self.expect("the history's night", (last["status"], last.get("stopped_by"), last["steps"]["prove"]["status"],
                                            "publish" in last["steps"], last.get("published")),
                    (143, "SIGTERM", 143, False, []))
        head, steps = shown.splitlines()[0], {line.split()[0]: line for line in shown.splitlines()[1:] if line.strip()}
        self.expect_in("rankings-night status", "stopped by SIGTERM", head)
        self.expect_in("rankings-night status", "143", head)
        self.expect_in("its prove step", "143", steps["prove"])
        self.expect_in("its publish step", "not run", steps["publish"])
        metrics = common.samples(p.metrics)
        self.expect("the metrics", {k: metrics.get(k) for k in (
            "rankings_night_last_run_exit_status", 'rankings_night_step_exit_status{step="prove"}',
            'rankings_night_step_exit_status{step="publish"}', "rankings_night_last_success_timestamp_seconds")},
            {"rankings_night_last_run_exit_status": "143", 'rankings_night_step_exit_status{step="prove"}': "143",
             'rankings_night_step_exit_status{step="publish"}': "-1",
             "rankings_night_last_success_timestamp_seconds": success})


if __name__ == "__main__":
    harness.main()
