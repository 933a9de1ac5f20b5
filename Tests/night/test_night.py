"""The night's policy with stand-in steps (scripts that record their arguments and exit as told):
the order of the steps, retries only where another try can change the outcome, each try's time
limit, the lock, root turned away, a stop, the boards made from one snapshot, the job without the
network, and what the history, the status and rankings-night.prom say however the night ends."""
import json
import os
import pwd
import signal
import stat
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import harness  # noqa: E402
from rankings_night import cli, files  # noqa: E402

NIGHT = os.path.join(harness.NIGHT, "rankings-night")
# A step: appends its arguments (and its network namespace) to calls, takes its outcome from the
# first line of plan/NAME ("sleep" waits for ever), and writes a document to its --output.
STEP = r"""#!/bin/sh
name=$(basename "$0")
dir=$(dirname "$0")
# The night tries the job's flags on no input (the last word "-") before the fetch: accepted.
for last; do :; done
if [ "$name" = rankings ] && [ "$last" = - ]; then
    echo "$*" >>"$dir/flag-checks"
    case " $* " in *" --top 20x "*) echo "rankings: error: --top takes a whole number, not '20x'" >&2; exit 64;; esac
    exit 0
fi
trap 'echo "stopped $name" >>"$dir/calls"; exit 143' TERM
printf '%s %s %s\n' "$name" "$(readlink /proc/self/ns/net)" "$*" >>"$dir/calls"
env | grep '^RANKINGS_' | sort >"$dir/env.$name"
outcome=0
if [ -s "$dir/plan.$name" ]; then outcome=$(head -n 1 "$dir/plan.$name"); sed -i 1d "$dir/plan.$name"; fi
echo "$name: said something"
if [ -f "$dir/say.$name" ]; then cat "$dir/say.$name"; fi
if [ "$outcome" = sleep ]; then
    echo "sleeping $name" >>"$dir/calls"
    sleep 600 & wait
fi
if [ "$outcome" != 0 ]; then echo "$name: error: failing with $outcome"; exit "$outcome"; fi
while [ $# -gt 0 ]; do [ "$1" = --output ] && printf '{"fake":true}\n' >"$2"; shift; done
exit 0
"""


class Night(harness.Case):
    def setUp(self):
        self.work = tempfile.mkdtemp(prefix="rankings-night-test.")
        self.bin = os.path.join(self.work, "bin")
        os.makedirs(self.bin)
        for name in ("rankings", "fetch", "publish"):
            path = os.path.join(self.bin, name)
            with open(path, "w") as out:
                out.write(STEP)
            os.chmod(path, 0o755)
        self.state = os.path.join(self.work, "state")
        os.makedirs(os.path.join(self.state, "exports", "night1"))
        os.symlink("night1", os.path.join(self.state, "exports", "current"))

    def configure(self, **more):
        settings = {"RANKINGS_EXPORTS": f"{self.state}/exports/current", "RANKINGS_OUTPUT": f"{self.state}/all_time.json",
                    "RANKINGS_BIN": f"{self.bin}/rankings", "RANKINGS_FETCH": f'"{self.bin}/fetch DIR"',
                    "RANKINGS_PUBLISH": f"{self.bin}/publish", "RANKINGS_METRICS": f"{self.state}/rankings.prom",
                    "RANKINGS_RETRY_PAUSE_SECONDS": "0", "RANKINGS_FLAGS": '"--max-drop 1"'}
        settings.update(more)
        self.config = os.path.join(self.work, "rankings.conf")
        with open(self.config, "w") as out:
            out.writelines(f"{k}={v}\n" for k, v in settings.items() if v is not None)

    def plan(self, step, *outcomes):
        with open(os.path.join(self.bin, f"plan.{step}"), "w") as out:
            out.writelines(f"{o}\n" for o in outcomes)

    def calls(self):
        try:
            with open(os.path.join(self.bin, "calls")) as f:
                return [line.split(" ", 2) for line in f.read().splitlines()]
        except FileNotFoundError:
            return []

    def night(self, *extra, timeout=120):
        return harness.run([NIGHT, "run", "--config", self.config, *extra], timeout=timeout)

    def metrics(self):
        with open(os.path.join(self.state, "rankings-night.prom")) as f:
            return dict(line.split() for line in f if not line.startswith("#"))

    def history(self):
        with open(os.path.join(self.state, ".rankings-nights.json")) as f:
            return json.load(f)

    def test_a_night_runs_fetch_then_every_board_from_one_snapshot_then_publishes_each(self):
        self.configure(RANKINGS_MONTHLY="yes")
        done = self.night()
        self.expect_exit(done, 0, "rankings-night: night done")
        calls = self.calls()
        self.expect("steps", [c[0] for c in calls], ["fetch", "rankings", "rankings", "publish", "publish"])
        all_time, monthly = calls[1][2].split(), calls[2][2].split()
        self.expect("one snapshot, resolved", (all_time[-1], monthly[-1]), (f"{self.state}/exports/night1",) * 2)
        self.expect("one computed_at", all_time[2], monthly[2])
        self.expect("all-time flags", all_time[3:], ["--max-drop", "1", "--metrics", f"{self.state}/rankings.prom",
                                                    "--output", f"{self.state}/all_time.json", all_time[-1]])
        self.expect("monthly flags", monthly[3:], ["--max-drop", "1", "--max-drop", "100", "--allow-empty", "--since",
                                                  "-30d", "--week-document", "--output", f"{self.state}/monthly.json",
                                                  monthly[-1]])
        self.expect("published", [c[2] for c in calls[3:]], [f"{self.state}/all_time.json", f"{self.state}/monthly.json"])
        self.expect_in("a step's own line relayed", "rankings: said something", done.stderr)
        metrics = self.metrics()
        self.expect("status", metrics["rankings_night_last_run_exit_status"], "0")
        self.expect("publish", metrics['rankings_night_step_exit_status{step="publish"}'], "0")
        self.assertIn("rankings_night_last_success_timestamp_seconds", metrics)

    def test_the_jobs_flags_are_tried_before_the_fetch(self):
        # 0.4 found `--top 20x` after a 25,000-document full read (64), every night.
        self.configure(RANKINGS_FLAGS='"--max-drop 1 --top 20x"')
        done = self.night()
        self.expect_exit(done, 78, "RANKINGS_FLAGS: rankings aggregate refuses --max-drop 1 --top 20x: "
                                   "rankings: error: --top takes a whole number, not '20x'; nothing was run")
        self.expect("nothing ran", self.calls(), [])
        self.configure()
        done = self.night("--", "--top", "20x")
        self.expect_exit(done, 64, "rankings-night run --: rankings aggregate refuses --top 20x")
        self.expect("nothing ran", self.calls(), [])
        with open(os.path.join(self.bin, "flag-checks")) as checks:
            tried = [line.split(" --output ")[0] for line in checks.read().splitlines()]
        self.expect("what was tried", tried, ["aggregate --quiet --allow-empty --max-drop 1 --top 20x --metrics ",
                                              "aggregate --quiet --allow-empty --max-drop 1 --metrics ",
                                              "aggregate --quiet --allow-empty --max-drop 1 --top 20x --metrics "])

    def test_a_bad_line_of_the_snapshot_is_named_by_its_firestore_document(self):
        # The snapshot goes with a container's task: the log names the document, as Firestore does.
        night = os.path.join(self.state, "exports", "night1")
        with open(os.path.join(night, "rating_events.ndjson"), "w") as out:
            for name in ("a1", "bad1"):
                out.write(json.dumps({"name": f"projects/p/databases/(default)/documents/rating_events/{name}",
                                      "fields": {}}) + "\n")
        with open(os.path.join(self.bin, "say.rankings"), "w") as out:
            out.write(f"{night}/rating_events.ndjson:2: invalid record: rating is not a number\n")
        self.configure(RANKINGS_LOG_FORMAT="json")
        done = self.night()
        self.expect_exit(done, 0)
        said = [json.loads(line) for line in done.stderr.splitlines() if "invalid record" in line]
        self.expect("the line, with its document, as a warning", [(s["severity"], s["message"]) for s in said],
                    [("WARNING", f"{night}/rating_events.ndjson:2: invalid record: rating is not a number "
                                 "(Firestore document rating_events/bad1)")])

    def test_a_bad_line_of_a_change_file_is_named_by_its_firestore_document(self):
        night = os.path.join(self.state, "exports", "night1")
        changes = "rating_events.changes-000002.ndjson"
        with open(os.path.join(night, changes), "w") as out:
            for name in ("b1", "b2", "bad2"):
                out.write(json.dumps({"name": f"projects/p/databases/(default)/documents/rating_events/{name}",
                                      "fields": {}}) + "\n")
        with open(os.path.join(self.bin, "say.rankings"), "w") as out:
            out.write(f"{night}/{changes}:3: invalid record: rating is not a number\n")
        self.configure(RANKINGS_LOG_FORMAT="json")
        done = self.night()
        self.expect_exit(done, 0)
        said = [json.loads(line)["message"] for line in done.stderr.splitlines() if "invalid record" in line]
        self.expect("the line, with its document", said, [f"{night}/{changes}:3: invalid record: rating is not a "
                                                          "number (Firestore document rating_events/bad2)"])

    def test_the_job_runs_without_the_network(self):
        self.configure()
        self.expect_exit(self.night(), 0)
        namespaces = {c[0]: c[1] for c in self.calls()}
        self.assertNotEqual(namespaces["rankings"], os.readlink("/proc/self/ns/net"), "the job has the network")
        self.expect("the fetch has it", namespaces["fetch"], os.readlink("/proc/self/ns/net"))

    def test_a_step_is_tried_again_only_when_another_try_can_succeed(self):
        rows = [  # (step, outcomes, night's status, tries, steps run after it)
            ("fetch", [69, 75, 0], 0, 3, ["rankings", "publish"]),
            ("fetch", [69, 69, 69, 69, 0], 69, 4, []),
            ("fetch", [78], 78, 1, []),
            ("fetch", [3, 3, 3, 3], 69, 4, []),                 # a hook's own status
            ("rankings", [74, 0], 0, 2, ["publish"]),
            ("rankings", [65], 65, 1, []),
            ("rankings", [64], 64, 1, []),
            ("publish", [65], 65, 1, []),
            ("publish", [69, 69, 69, 69], 69, 4, []),
        ]
        for step, outcomes, status, tries, after in rows:
            with self.subTest(step=step, outcomes=outcomes):
                self.setUp()
                self.configure()
                self.plan(step, *outcomes)
                self.expect_exit(self.night(), status)
                names = [c[0] for c in self.calls()]
                self.expect("tries", names.count(step), tries)
                order = ["fetch", "rankings", "publish"]
                self.expect("later steps", [n for n in dict.fromkeys(names) if order.index(n) > order.index(step)], after)
                last = self.history()[-1]
                key = {"rankings": "aggregate"}.get(step, step)
                self.expect("history", (last["status"], last["steps"][key]["tries"]), (status, tries))
                metrics = self.metrics()
                for name in ("fetch", "aggregate", "publish"):
                    self.assertIn(f'rankings_night_step_exit_status{{step="{name}"}}', metrics)
                if status:
                    self.expect_in("why", "error: failing with", last["steps"][key]["why"])

    def test_a_try_is_stopped_at_its_limit(self):
        self.configure(RANKINGS_FETCH_TIMEOUT_SECONDS="1", RANKINGS_RETRIES="1")
        self.plan("fetch", "sleep", "sleep")
        done = self.night()
        self.expect_exit(done, 69, "fetch: failed with status 124 (stopped at its limit of 1s) on try 2")
        self.expect("tries, each stopped with TERM", [c[:2] for c in self.calls() if c[0] == "stopped"],
                    [["stopped", "fetch"]] * 2)
        self.expect("nothing after it", {c[0] for c in self.calls()}, {"fetch", "sleeping", "stopped"})

    def test_a_failed_night_carries_the_last_success_over(self):
        self.configure()
        self.expect_exit(self.night(), 0)
        success = self.metrics()["rankings_night_last_success_timestamp_seconds"]
        self.plan("publish", 69, 69, 69, 69)
        self.expect_exit(self.night(), 69)
        metrics = self.metrics()
        self.expect("carried over", metrics["rankings_night_last_success_timestamp_seconds"], success)
        self.expect("publish", metrics['rankings_night_step_exit_status{step="publish"}'], "69")
        self.plan("fetch", 78)
        self.expect_exit(self.night(), 78)
        metrics = self.metrics()
        self.expect("not run", (metrics['rankings_night_step_exit_status{step="aggregate"}'],
                                metrics['rankings_night_step_exit_status{step="publish"}']), ("-1", "-1"))
        status = harness.run([NIGHT, "status", "--config", self.config, "-n", "3"])
        self.expect_exit(status, 0)
        self.expect_in("status", "FAILED 78 (settings)", status.stdout)
        self.expect_in("status", "aggregate not run", status.stdout)
        self.expect_in("status", "publish   failed 69 (unavailable), 4 tries", status.stdout)

    def test_another_night_holding_the_lock_is_75_and_nothing_runs(self):
        self.configure()
        held = files.lock(os.path.join(self.state, ".rankings.lock"))
        try:
            self.expect_exit(self.night(), 75, "another night holds")
        finally:
            os.close(held)
        self.expect("calls", self.calls(), [])

    def test_root_is_turned_away_where_another_user_keeps_the_files(self):
        if os.geteuid() != 0:
            self.skipTest("needs root")
        self.configure()
        nobody = pwd.getpwnam("nobody")
        os.chown(self.state, nobody.pw_uid, nobody.pw_gid)
        self.expect_exit(self.night(), 64, "run it as that user (sudo -u nobody")
        self.expect("calls", self.calls(), [])
        self.assertFalse(os.path.exists(os.path.join(self.state, ".rankings.lock")))

    def test_a_refused_setting_runs_nothing(self):
        self.configure(RANKINGS_FLAG='"--max-drop 1"')
        self.expect_exit(self.night(), 78, "unknown setting RANKINGS_FLAG (did you mean RANKINGS_FLAGS?)")
        self.expect("calls", self.calls(), [])
        self.assertFalse(os.path.exists(os.path.join(self.state, ".rankings-nights.json")))

    def test_a_stopped_night_stops_its_step_and_says_so(self):
        self.configure()
        self.plan("fetch", "sleep")
        import subprocess
        night = subprocess.Popen([NIGHT, "run", "--config", self.config], stderr=subprocess.PIPE, text=True)
        for _ in range(600):
            if any(c[0] == "sleeping" for c in self.calls()):
                break
            time.sleep(0.05)
        night.send_signal(signal.SIGTERM)
        _, err = night.communicate(timeout=60)
        self.expect("status", night.returncode, 143)
        self.expect("the step got TERM", self.calls()[-1][:2], ["stopped", "fetch"])
        self.expect("history", self.history()[-1]["status"], 143)
        self.expect_in("said", "fetch: stopped by SIGTERM", err)

    def test_a_log_file_is_made_readable_and_never_through_a_link(self):
        log = os.path.join(self.state, "night.log")
        self.configure(RANKINGS_LOG_FILE=log)
        old = os.umask(0o077)
        try:
            self.expect_exit(self.night(), 0)
        finally:
            os.umask(old)
        self.expect("mode", stat.S_IMODE(os.stat(log).st_mode), 0o644)
        with open(log) as f:
            self.expect_in("log", "]: night done: the boards are written", f.read())
        os.unlink(log)
        victim = os.path.join(self.work, "victim")
        with open(victim, "w") as f:
            f.write("mine\n")
        os.symlink(victim, log)
        self.expect_exit(self.night(), 73, "cannot append to RANKINGS_LOG_FILE")
        with open(victim) as f:
            self.expect("untouched", f.read(), "mine\n")

    def test_the_steps_get_the_settings_read_and_no_other_rankings_variable(self):
        self.configure(RANKINGS_FIRESTORE_PROJECT="jokes")
        environ = dict(os.environ, RANKINGS_INCLUDE="/etc/x", RANKINGS_FIRESTORE_PROJECT="other", RANKINGS_CPU="portable")
        self.expect_exit(harness.run([NIGHT, "run", "--config", self.config], env=environ), 0)
        with open(os.path.join(self.bin, "env.fetch")) as f:
            seen = dict(line.rstrip("\n").split("=", 1) for line in f)
        self.expect("project", seen.get("RANKINGS_FIRESTORE_PROJECT"), "jokes")
        self.expect("the caller's own", seen.get("RANKINGS_INCLUDE"), None)
        self.expect("rankings's own variable", seen.get("RANKINGS_CPU"), "portable")

    def test_flags_by_hand_go_after_the_configurations(self):
        self.configure()
        self.expect_exit(self.night("--", "--max-drop", "100"), 0)
        job = self.calls()[1][2].split()
        self.expect("flags", job[3:7], ["--max-drop", "1", "--max-drop", "100"])

    def test_a_history_nested_50000_deep_is_kept_aside_and_the_night_still_ends_well(self):
        self.configure()
        damaged = ("[" * 50000 + "]" * 50000).encode()
        with open(os.path.join(self.state, ".rankings-nights.json"), "wb") as out:
            out.write(damaged)
        done = self.night()
        self.expect_exit(done, 0, "warning: ")
        self.expect_in("said", ".rankings-nights.json: not JSON (RecursionError", done.stderr)
        self.expect("tonight's night", [n["status"] for n in self.history()], [0])
        with open(os.path.join(self.state, ".rankings-nights.json.damaged"), "rb") as f:
            self.expect("kept aside", f.read(), damaged)
        self.expect("metrics", self.metrics()["rankings_night_last_run_exit_status"], "0")

    def test_a_fifo_at_the_metrics_path_holds_nothing_up(self):
        self.configure()
        fifo = os.path.join(self.state, "rankings-night.prom")
        os.mkfifo(fifo)
        self.plan("publish", 65)        # a failed night reads the old file for the last success
        self.expect_exit(self.night(timeout=60), 65)
        self.assertTrue(stat.S_ISREG(os.lstat(fifo).st_mode), "the FIFO replaced by the metrics")
        self.expect("metrics", self.metrics()["rankings_night_last_run_exit_status"], "65")

    def test_every_file_the_night_makes_is_0644_under_umask_077(self):
        self.configure(RANKINGS_LOG_FILE=f"{self.state}/night.log")
        old = os.umask(0o077)
        try:
            self.expect_exit(self.night(), 0)
        finally:
            os.umask(old)
        for name in ("night.log", ".rankings-nights.json", "rankings-night.prom", ".rankings.lock"):
            with self.subTest(file=name):
                self.expect("mode", stat.S_IMODE(os.stat(os.path.join(self.state, name)).st_mode), 0o644)

    def last_line(self, done):
        return json.loads([line for line in done.stderr.splitlines() if line.startswith("{")][-1])

    def test_the_last_line_has_only_tonights_fetch_figures(self):
        # The shipped fetch runs in the night's process; here against a port nobody listens on,
        # after an earlier night whose record `current` still names.
        folder = os.path.join(self.state, "firestore", "20261127T050000Z")
        os.makedirs(folder)
        os.symlink("20261127T050000Z", os.path.join(self.state, "firestore", "current"))
        with open(os.path.join(folder, ".night.json"), "w") as out:
            json.dump({"format": 2, "method": "export", "mode": "full", "project": "jokes", "database": "(default)",
                       "collection": "rating_events", "documents_read": 5000}, out)
        self.configure(RANKINGS_FETCH=f'"/usr/libexec/rankings-fetch-firestore {self.state}/firestore"',
                       RANKINGS_EXPORTS=None, RANKINGS_FIRESTORE_PROJECT="jokes", RANKINGS_LOG_FORMAT="json",
                       RANKINGS_RETRIES="0", RANKINGS_FIRESTORE_ATTEMPTS="1", FIRESTORE_EMULATOR_HOST="127.0.0.1:1")
        done = self.night()
        self.expect_exit(done, 69)
        last = self.last_line(done)
        self.expect("a failed fetch's night", {k: last.get(k) for k in ("status", "mode", "documents_read")},
                    {"status": 69, "mode": None, "documents_read": None})

    def test_a_platforms_retry_is_named_in_the_starting_line(self):
        self.configure()
        done = harness.run([NIGHT, "run", "--config", self.config], env=dict(os.environ, CLOUD_RUN_TASK_ATTEMPT="2"))
        self.expect_exit(done, 0)
        starting = [line for line in done.stderr.splitlines() if "night starting" in line]
        self.expect_in("the attempt", "; CLOUD_RUN_TASK_ATTEMPT 2)", starting[0])
        done = self.night()
        self.assertNotIn("CLOUD_RUN_TASK_ATTEMPT", done.stderr)

    def test_only_task_0_of_several_runs_the_night(self):
        self.configure()
        environ = dict(os.environ, CLOUD_RUN_TASK_COUNT="3", CLOUD_RUN_TASK_INDEX="1")
        done = harness.run([NIGHT, "run", "--config", self.config], env=environ)
        self.expect_exit(done, 0)
        self.expect("one line", done.stderr,
                    "rankings-night: task 1 of 3 (CLOUD_RUN_TASK_INDEX, CLOUD_RUN_TASK_COUNT): only task 0 runs "
                    "the night; nothing to do\n")
        self.expect("nothing ran", self.calls(), [])
        self.assertFalse(os.path.exists(os.path.join(self.state, ".rankings-nights.json")))
        environ["CLOUD_RUN_TASK_INDEX"] = "0"
        self.expect_exit(harness.run([NIGHT, "run", "--config", self.config], env=environ), 0, "night done")
        self.expect("task 0 ran it", [c[0] for c in self.calls()], ["fetch", "rankings", "publish"])


class Cron(harness.Case):
    def test_cron_runs_the_night_only_in_new_yorks_first_hour_once_a_day(self):
        work = tempfile.mkdtemp(prefix="rankings-night-cron.")
        config = os.path.join(work, "rankings.conf")
        with open(config, "w") as out:
            out.write(f"RANKINGS_EXPORTS={work}/nothing\nRANKINGS_OUTPUT={work}/all_time.json\n"
                      f"RANKINGS_BIN=/bin/false\nRANKINGS_RETRIES=0\nRANKINGS_LOG_FILE={work}/log\n")
        real = cli.time.time
        try:
            cli.time.time = lambda: 1795755600.0 + 3600     # 2026-11-27 01:00 in New York: not the hour
            self.expect("outside the hour", cli.main(["cron", "--config", config]), 0)
            self.assertFalse(os.path.exists(f"{work}/log"))
            cli.timer_active = lambda: False
            cli.time.time = lambda: 1795755600.0 + 60       # 00:01 in New York
            self.expect("the night (its job failing)", cli.main(["cron", "--config", config]), 1)
            self.expect("once a day", cli.main(["cron", "--config", config]), 0)
        finally:
            cli.time.time = real


if __name__ == "__main__":
    harness.main()
