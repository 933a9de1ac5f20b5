"""The night's policy with stand-ins: the job a script that records its arguments and writes what
it is told (its board, --report, --stats), the fetch, the proof and the publish functions that do
as the test says. The steps and their order, the arguments each board's job gets, Firestore's
readTime as the clock, retries only where another try can change the outcome, a stop, the lock,
what the night refuses before it starts, the votes the job left out, and what the history, the
status and the one metrics file say however the night ends."""
import json
import os
import signal
import stat
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import harness  # noqa: E402
from rankings_night import cli, fetch, files, night as nights, proof, publish, settings  # noqa: E402
from rankings_night.log import Log  # noqa: E402
from rankings_night.snapshot import parse_time  # noqa: E402
from rankings_night.statuses import Failure  # noqa: E402
from rankings_night.stop import STOP  # noqa: E402

NIGHT = os.path.join(harness.NIGHT, "rankings-night")
READ_TIME = "2026-11-27T05:00:02.606186Z"      # a Friday: week 2026-W48 in New York
# The job: appends its arguments and its network namespace to `calls`, exits with the first line
# of `plan` (none: 0), writes its --output and --stats, and its --report from `report.json`.
JOB = r"""#!/bin/sh
dir=$(dirname "$0")
printf '%s %s\n' "$(readlink /proc/self/ns/net)" "$*" >>"$dir/calls"
outcome=0
if [ -s "$dir/plan" ]; then outcome=$(head -n 1 "$dir/plan"); sed -i 1d "$dir/plan"; fi
echo "rankings: a line of the job's"
if [ "$outcome" = sleep ]; then sleep 600 & wait; fi
while [ $# -gt 0 ]; do
    case $1 in
        --output) printf '{"fake":true}\n' >"$2" ;;
        --stats) printf '{"joke_id":"j1","hilarious":2,"horrible":1,"neutral":0,"ratings":3}\n' >"$2" ;;
        --report) cp "$dir/report.json" "$2" ;;
    esac
    shift
done
if [ "$outcome" != 0 ]; then echo "rankings: error: failing with $outcome" >&2; exit "$outcome"; fi
"""
REPORT = {"valid_events": 3, "counted_events": 3, "filtered_out": 0, "duplicates_removed": 0, "hilarious": 2,
          "horrible": 1, "neutral": 0, "bad_lines": 0, "left_out_documents": 0, "replaced_lines": 0,
          "distinct_jokes": 1, "input_bytes": 100, "seconds": 0.01, "exit_status": 0, "refused": []}


class Verdict:
    def __init__(self, status, lines=(), mismatches=(), index_commands=()):
        self.status, self.lines, self.mismatches = status, list(lines), list(mismatches)
        self.index_commands, self.queries = list(index_commands), 4

    def entry(self):
        return {"status": self.status, "lines": self.lines, "mismatches": self.mismatches,
                "index_commands": self.index_commands, "queries": self.queries}


class Client:
    """What the night hands the steps; the stand-ins below never call it."""
    class transport:
        deadline = None


class Night(harness.Case):
    def setUp(self):
        self.work = tempfile.mkdtemp(prefix="rankings-night-test.")
        self.bin = os.path.join(self.work, "bin")
        os.makedirs(self.bin)
        with open(os.path.join(self.bin, "rankings"), "w") as out:
            out.write(JOB)
        os.chmod(os.path.join(self.bin, "rankings"), 0o755)
        self.path = os.environ["PATH"]
        os.environ["PATH"] = f"{self.bin}:{self.path}"
        self.state = os.path.join(self.work, "state")
        os.makedirs(os.path.join(self.work, "exports", "night1"))
        os.symlink("night1", os.path.join(self.work, "exports", "current"))
        self.report()
        self.saved = {(m, n): getattr(m, n, None) for m, n in ((fetch, "run"), (proof, "probe"), (proof, "prove"),
                                                         (publish, "publish"), (proof, "counts"), (proof, "limit"))}
        self.events, self.fetches, self.proofs, self.publishes = [], [], [], []
        self.missing, self.read_time = [], READ_TIME
        fetch.run = self.fake_fetch
        proof.probe = lambda firestore, monthly, say: (self.missing, 0.01)
        proof.prove = self.fake_prove
        proof.counts = lambda path: 4
        proof.limit = lambda counts: 300
        publish.publish = self.fake_publish

    def tearDown(self):
        os.environ["PATH"] = self.path
        for (module, name), value in self.saved.items():
            setattr(module, name, value)
        STOP.reset()

    def fake_fetch(self, directory, firestore, say, full_because=None, compressed=False):
        self.events.append("fetch")
        outcome = self.fetches.pop(0) if self.fetches else None
        if isinstance(outcome, BaseException):
            raise outcome
        if callable(outcome):
            outcome()
        os.makedirs(os.path.join(directory, "n1"), exist_ok=True)
        if not os.path.lexists(os.path.join(directory, "current")):
            os.symlink("n1", os.path.join(directory, "current"))
        self.full_because = full_because
        mode = "full" if full_because else "incremental"
        say(f"rest: a stand-in {mode} read")
        return {"mode": mode, "read_time": self.read_time, "documents_read": 3, "snapshot_documents": 3,
                "drift_documents": 0, "full_reason": full_because, "fallback": False}

    def fake_prove(self, firestore, read_time, boards, say):
        self.events.append("prove")
        self.proved = boards
        outcome = self.proofs.pop(0) if self.proofs else Verdict("proven", [f"{b[0]}: proven" for b in boards])
        if callable(outcome):
            outcome = outcome()
        if isinstance(outcome, BaseException):
            raise outcome
        for line in outcome.lines:
            say(line)
        return outcome

    def fake_publish(self, firestore, path, name, read_time, max_drop, binary, say):
        self.events.append(f"publish {name}")
        outcome = self.publishes.pop(0) if self.publishes else "written"
        if callable(outcome):
            outcome = outcome()
        if isinstance(outcome, BaseException):
            raise outcome
        self.max_drops = getattr(self, "max_drops", []) + [max_drop]
        return outcome

    def report(self, **changes):
        with open(os.path.join(self.bin, "report.json"), "w") as out:
            json.dump(dict(REPORT, **changes), out)

    def configure(self, firestore=True, **more):
        given = {"RANKINGS_STATE_DIRECTORY": self.state, "RANKINGS_METRICS": f"{self.state}/rankings.prom"}
        given.update({"RANKINGS_FIRESTORE_PROJECT": "p1"} if firestore else
                     {"RANKINGS_EXPORTS": f"{self.work}/exports/current"})
        given.update(more)
        self.config = os.path.join(self.work, "rankings.conf")
        with open(self.config, "w") as out:
            out.writelines(f"{k}={v}\n" for k, v in given.items() if v is not None)
        return settings.read_file(self.config)

    def plan(self, *outcomes):
        with open(os.path.join(self.bin, "plan"), "w") as out:
            out.writelines(f"{o}\n" for o in outcomes)

    def night(self, s=None, max_drop=None, pause=0):
        s = s or settings.read_file(self.config)
        self.lines = []
        log = Log(form="json", stream=self)
        try:
            return nights.Night(s, log, "hand", max_drop, dict(os.environ), Client(), pause=pause).run()
        except Failure as failure:
            self.lines.append({"severity": "ERROR", "message": str(failure)})
            return failure.status

    def write(self, line):      # the log's stream
        if line.strip():
            self.lines.append(json.loads(line))

    def flush(self):
        pass

    def said(self, severity=None):
        return [line["message"] for line in self.lines if severity is None or line["severity"] == severity]

    def jobs(self):
        try:
            with open(os.path.join(self.bin, "calls")) as f:
                return [line.split(" ", 1) for line in f.read().splitlines()]
        except FileNotFoundError:
            return []

    def history(self):
        with open(os.path.join(self.state, ".rankings-nights.json")) as f:
            return json.load(f)

    def metrics(self):
        with open(os.path.join(self.state, "rankings.prom")) as f:
            return dict(line.split() for line in f if not line.startswith("#"))

    def test_a_firestore_night_fetches_makes_every_board_proves_then_publishes_each(self):
        self.configure(RANKINGS_MONTHLY="yes")
        self.expect("status", self.night(), 0)
        self.expect("steps", self.events, ["fetch", "prove", "publish all_time", "publish 2026-W48"])
        (_, all_time), (_, monthly) = self.jobs()
        all_time, monthly = all_time.split(), monthly.split()
        snapshot = os.path.realpath(os.path.join(self.state, "firestore", "current"))
        self.expect("one snapshot", (all_time[-1], monthly[-1]), (snapshot, snapshot))
        common = ["aggregate", "--quiet", "--computed-at", READ_TIME, "--max-invalid", "1%"]
        self.expect("all-time", all_time, common + [
            "--report", f"{self.state}/.all_time.report.json", "--stats", f"{self.state}/.all_time.stats.ndjson",
            "--output", f"{self.state}/all_time.json", "--max-drop", "1", snapshot])
        self.expect("30-day", monthly, common + [
            "--report", f"{self.state}/.monthly.report.json", "--stats", f"{self.state}/.monthly.stats.ndjson",
            "--output", f"{self.state}/monthly.json", "--max-drop", "100", "--allow-empty", "--since",
            "2026-10-28T05:00:02.606186Z", "--week-document", snapshot])
        self.expect("the proof's boards", [(b[0], b[3]) for b in self.proved],
                    [("all_time", None), ("monthly", parse_time(READ_TIME) - 30 * 86400 * 10**9)])
        self.expect("the guard on the all-time board only", self.max_drops, [1.0, None])
        self.expect_in("the job's own line relayed", "rankings: a line of the job's", self.said())
        self.expect_in("its counts from its report", "aggregate: all_time: 3 votes (2 hilarious, 1 horrible, 0 neutral), "
                                                     "1 jokes", " ".join(self.said()))
        last = self.history()[-1]
        self.expect("published", last["published"], ["weekly_rankings/all_time", "weekly_rankings/2026-W48"])
        self.expect("history's fetch", last["fetch"]["read_time"], READ_TIME)
        metrics = self.metrics()
        self.expect("status", metrics["rankings_night_last_run_exit_status"], "0")
        self.expect("proven", metrics["rankings_night_boards_proven"], "1")
        self.expect("the fetch's series in the one file", metrics["rankings_fetch_documents_read"], "3")

    def test_firestores_readtime_is_the_clock_whatever_the_machines(self):
        self.configure(RANKINGS_MONTHLY="yes")
        real = time.time
        for days in (-2, 2):
            with self.subTest(days=days):
                nights.time.time = lambda: real() + days * 86400
                try:
                    self.events.clear()
                    self.expect("status", self.night(), 0)
                finally:
                    nights.time.time = real
                self.expect("the week's document", self.events[-1], "publish 2026-W48")
                self.expect("computed_at", self.jobs()[-1][1].split()[3], READ_TIME)
                self.expect_in("said", "this machine's clock is", " ".join(self.said("WARNING")))

    def test_a_night_without_firestore_makes_the_boards_from_the_exports(self):
        self.configure(firestore=False)
        self.expect("status", self.night(), 0)
        self.expect("no Firestore step", self.events, [])
        (_, job), = self.jobs()
        self.expect("the exports, resolved", job.split()[-1], f"{self.work}/exports/night1")
        last = self.history()[-1]
        self.expect("steps", list(last["steps"]), ["aggregate"])
        self.expect("no fetch series", any(k.startswith("rankings_fetch_") for k in self.metrics()), False)

    def test_a_step_is_tried_again_only_when_another_try_can_succeed(self):
        rows = [  # (where, outcomes, night's status, tries of that step)
            ("fetch", [Failure(69, "x"), Failure(75, "y"), None], 0, 3),
            ("fetch", [Failure(69, "x")] * 5, 69, 4),
            ("fetch", [Failure(78, "no token")], 78, 1),
            ("job", [74, 0], 0, 2),
            ("job", [65], 65, 1),
            ("job", [64], 64, 1),
            ("publish", [Failure(65, "guard")], 65, 1),
            ("publish", [Failure(69, "x")] * 4, 69, 4),
        ]
        for where, outcomes, status, tries in rows:
            with self.subTest(where=where, outcomes=outcomes):
                self.tearDown()
                self.setUp()
                self.configure()
                if where == "job":
                    self.plan(*outcomes)
                else:
                    getattr(self, {"fetch": "fetches", "publish": "publishes"}[where]).extend(outcomes)
                self.expect("status", self.night(), status)
                count = len(self.jobs()) if where == "job" else self.events.count(where if where == "fetch"
                                                                                  else "publish all_time")
                self.expect("tries", count, tries)
                last = self.history()[-1]
                step = {"job": "aggregate"}.get(where, where)
                self.expect("history", (last["status"], last["steps"][step]["tries"]), (status, tries))

    def test_a_stop_during_the_proof_publishes_nothing_and_says_so(self):
        self.configure(RANKINGS_MONTHLY="yes")

        def stopped():
            self.night_signal(signal.SIGTERM)
            return Verdict("proven", ["all_time: proven"])
        self.proofs.append(stopped)
        self.expect("status", self.night(), 143)
        self.expect("nothing published", [e for e in self.events if e.startswith("publish")], [])
        last = self.history()[-1]
        self.expect("history", (last["status"], last["stopped_by"], last["published"]), (143, "SIGTERM", []))
        self.expect("publish not run", "publish" in last["steps"], False)
        self.expect("metrics", self.metrics()['rankings_night_step_exit_status{step="publish"}'], "-1")

    def test_a_stop_during_the_publish_keeps_what_was_published(self):
        self.configure(RANKINGS_MONTHLY="yes")

        def stopped():
            self.night_signal(signal.SIGINT)
            return "written"
        self.publishes.append(stopped)
        self.expect("status", self.night(), 130)
        self.expect("the second board not published", self.events[-1], "publish all_time")
        self.expect("recorded", self.history()[-1]["published"], ["weekly_rankings/all_time"])

    def night_signal(self, signum):
        os.kill(os.getpid(), signum)
        time.sleep(0.1)     # the handler runs between bytecodes of the main thread

    def test_a_stop_during_the_job_ends_the_job(self):
        self.configure()
        self.plan("sleep")
        timer = threading.Timer(1.0, os.kill, (os.getpid(), signal.SIGTERM))
        self.fetches.append(timer.start)
        self.expect("status", self.night(), 143)
        self.expect("no proof", self.events, ["fetch"])
        self.expect("history", self.history()[-1]["steps"]["aggregate"]["status"], 143)

    def test_boards_that_disagree_after_an_incremental_night_are_read_made_and_proved_again(self):
        self.configure()
        self.proofs.append(Verdict("mismatch", ["all_time: disagrees"], ["joke j1: hilarious 2 on the board, 3 in Firestore"]))
        self.expect("status", self.night(), 0)
        self.expect("steps", self.events, ["fetch", "prove", "fetch", "prove", "publish all_time"])
        self.expect_in("why", "tonight's boards disagreed with Firestore (joke j1", self.full_because)
        self.expect("the job twice", len(self.jobs()), 2)

    def test_boards_that_disagree_after_a_full_read_are_65_and_not_published(self):
        self.configure()
        self.missing = ["gcloud firestore indexes composite create ..."]
        self.proofs.append(Verdict("mismatch", ["all_time: disagrees"], ["joke j1: hilarious 2 on the board, 3 in Firestore"]))
        self.expect("status", self.night(), 65)
        self.expect("not published", self.events, ["fetch", "prove"])

    def test_boards_that_cannot_be_proven_are_made_from_a_full_read_and_published_marked_unproven(self):
        self.configure()
        self.missing = ["gcloud firestore indexes composite create --collection-group=rating_events ..."]
        self.proofs.append(Verdict("unproven", ["all_time: unproven: no index"], index_commands=self.missing))
        self.expect("status", self.night(), 0)
        self.expect("one full read", self.events, ["fetch", "prove", "publish all_time"])
        self.expect_in("why", "cannot be proven", self.full_because)
        self.expect_in("said", "the boards are published unproven; make the index: gcloud firestore indexes",
                       " ".join(self.said("WARNING")))
        self.expect("metric", self.metrics()["rankings_night_boards_proven"], "0")
        self.expect("history", self.history()[-1]["proof"]["status"], "unproven")

    def test_the_votes_the_job_left_out_are_named_by_their_firestore_document(self):
        self.configure()
        refused = [{"input": "x", "line": n, "document": f"projects/p1/databases/(default)/documents/rating_events/d{n}",
                    "reason": "joke_id is missing", "joke_id": None, "firestore_kind": "hilarious"} for n in range(12)]
        self.report(bad_lines=12, refused=refused)
        self.expect("status", self.night(), 0)
        warned = self.said("WARNING")
        self.expect("the first ten, then how many more",
                    [w for w in warned if "left out" in w],
                    [f"rankings-night: warning: aggregate: all_time: left out rating_events/d{n}: joke_id is missing"
                     for n in range(10)] + [f"rankings-night: warning: aggregate: all_time: and 2 more left out ({self.state}/.all_time.report.json names them all)"])
        self.expect("history", self.history()[-1]["refused"], {"all_time": 12})
        self.expect("metric", self.metrics()['rankings_night_refused_votes{board="all_time"}'], "12")

    def test_a_failed_fetch_shows_tonights_attempt_never_an_earlier_nights(self):
        self.configure()
        failure = Failure(69, "no whole answer")
        failure.record = {"mode": "full", "documents_read": 700}
        self.fetches.extend([failure] * 4)
        self.expect("status", self.night(), 69)
        fetched = self.history()[-1]["fetch"]
        self.expect("tonight's figures", (fetched["mode"], fetched["documents_read"]), ("full", 700))
        self.expect("no read time of another night", "read_time" in fetched, False)
        self.expect("snapshot series", self.metrics()["rankings_fetch_snapshot_documents"], "0")

    def test_another_night_holding_the_lock_is_75_and_nothing_runs(self):
        self.configure()
        os.makedirs(self.state)
        held = files.lock(os.path.join(self.state, ".rankings.lock"))
        try:
            self.expect("status", self.night(), 75)
        finally:
            os.close(held)
        self.expect("nothing ran", (self.events, self.jobs()), ([], []))

    def test_a_fifo_where_the_night_or_the_job_writes_is_73_at_once(self):
        for name in ("rankings.prom", ".all_time.stats.ndjson", ".all_time.report.json", "all_time.json",
                     ".rankings-nights.json"):
            with self.subTest(name=name):
                self.tearDown()
                self.setUp()
                self.configure()
                os.makedirs(self.state)
                os.mkfifo(os.path.join(self.state, name))
                self.expect("status", self.night(), 73)
                self.expect_in("said", f"{self.state}/{name} is a FIFO, not a regular file", " ".join(self.said()))
                self.expect("nothing ran", (self.events, self.jobs()), ([], []))
                self.assertTrue(stat.S_ISFIFO(os.lstat(os.path.join(self.state, name)).st_mode))

    def test_a_04_file_is_named_once_in_the_nights_log(self):
        self.configure(firestore=False, RANKINGS_FLAGS='"--max-drop 1"')
        self.expect("status", self.night(), 0)
        warned = [w for w in self.said("WARNING") if "settings of 0.4" in w]
        self.expect("one warning", len(warned), 1)

    def test_the_job_runs_without_the_network(self):
        self.configure()
        self.expect("status", self.night(), 0)
        self.assertNotEqual(self.jobs()[0][0], os.readlink("/proc/self/ns/net"), "the job has the network")

    def test_accepting_a_drop_once_gives_the_job_and_the_publish_the_same_guard(self):
        self.configure()
        self.expect("status", self.night(max_drop="100"), 0)
        self.expect("the job's", self.jobs()[0][1].split()[-3:-1], ["--max-drop", "100"])
        self.expect("the publish's", self.max_drops, [100.0])

    def test_a_failed_night_carries_the_last_success_over(self):
        self.configure()
        self.expect("status", self.night(), 0)
        success = self.metrics()["rankings_night_last_success_timestamp_seconds"]
        self.publishes.extend([Failure(69, "x")] * 4)
        self.expect("status", self.night(), 69)
        metrics = self.metrics()
        self.expect("carried over", metrics["rankings_night_last_success_timestamp_seconds"], success)
        self.expect("publish", metrics['rankings_night_step_exit_status{step="publish"}'], "69")

    def test_0_4s_metrics_files_beside_the_one_are_removed(self):
        self.configure()
        os.makedirs(self.state)
        for name in ("rankings-night.prom", "rankings-fetch.prom"):
            with open(os.path.join(self.state, name), "w") as out:
                out.write("# stale\n")
        self.expect("status", self.night(), 0)
        self.expect("gone", [os.path.exists(os.path.join(self.state, n)) for n in ("rankings-night.prom",
                                                                                   "rankings-fetch.prom")], [False] * 2)


class Commands(harness.Case):
    def test_run_takes_only_max_drop_after_the_dashes(self):
        self.expect("accepted", cli.parse(["run", "--", "--max-drop", "100"])[1]["max_drop"], "100")
        self.expect("accepted", cli.parse(["run", "--", "--max-drop=0.5"])[1]["max_drop"], "0.5")
        for argv in (["run", "--", "--since", "-30d"], ["run", "--", "--max-drop"], ["status", "--", "--max-drop", "1"],
                     ["run", "--", "--max-drop", "200"]):
            with self.subTest(argv=argv):
                with self.assertRaises(Failure) as raised:
                    cli.parse(argv)
                self.expect("status", raised.exception.status, 64)

    def test_config_twice_or_with_the_environment_is_64(self):
        for argv in (["run", "--config", "a", "--config", "b"], ["plan", "--config=a", "--environment"]):
            with self.subTest(argv=argv):
                with self.assertRaises(Failure) as raised:
                    cli.parse(argv)
                self.expect("status", raised.exception.status, 64)


if __name__ == "__main__":
    harness.main()
