"""The night's history (.rankings-nights.json) as the night, `cron` and `status` read it: every
damaged shape dropped with a note and never a crash, a file that is not a history kept aside,
nights a wrong clock started not counted, a last success in the future not carried over, and
nothing the night opens (history, metrics, log, lock, record) able to hold it up as a FIFO."""
import contextlib
import io
import json
import os
import stat
import sys
import tempfile
import threading

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import harness  # noqa: E402
from rankings_night import cli, files, history, log, metrics, paths, record  # noqa: E402
from rankings_night.snapshot import Damaged  # noqa: E402

MIDNIGHT = 1795755600.0        # 2026-11-27 00:00 in New York
NAN, INF, DEEP = "NaN", "Infinity", "[" * 50000 + "]" * 50000


def night(**changes):
    entry = {"started": MIDNIGHT - 86400 + 60, "ended": MIDNIGHT - 86400 + 75, "scheduler": "cron", "status": 0,
             "boards": ["all_time"],
             "steps": {"aggregate": {"status": 0, "tries": 1, "seconds": 0.3, "why": None}}, "fetch": None}
    for key, value in changes.items():
        if value is KeyError:
            entry.pop(key)
        else:
            entry[key] = value
    return entry


def text(value):
    """JSON with a few raw tokens (NaN, Infinity, deep nesting) spliced in where strings say so."""
    out = json.dumps(value)
    for token in (NAN, INF, "-" + INF, DEEP):
        out = out.replace(json.dumps("RAW" + token), token)
    return out


def raw(token):
    return "RAW" + token


# (what, the file's text or None for a special file, what the note says); entries beside a good one
GOOD = night()
ENTRIES = [
    ("a number", 1, "the entry is 1, not an object"),
    ("a string", "night", "not an object"),
    ("null", None, "not an object"),
    ("a list", [GOOD], "not an object"),
    ("started missing", night(started=KeyError), "started is missing"),
    ("started a string", night(started="2026-11-26"), 'started is "2026-11-26", not a time'),
    ("started null", night(started=None), "started is null, not a time"),
    ("started 1e20", night(started=1e20), "started is 1e+20, not a time"),
    ("started negative", night(started=-1), "started is -1, not a time"),
    ("started NaN", night(started=raw(NAN)), 'started is "NaN", not a time'),
    ("started Infinity", night(started=raw(INF)), 'started is "Infinity", not a time'),
    ("started -Infinity", night(started=raw("-" + INF)), "not a time"),
    ("started true", night(started=True), "started is true, not a time"),
    ("started a huge integer", night(started=10 ** 400), "not a time"),
    ("started an object", night(started={"s": 1}), "started is dict, not a time"),
    ("ended a string", night(ended="later"), "ended is"),
    ("ended NaN", night(ended=raw(NAN)), "ended is"),
    ("scheduler a number", night(scheduler=3), "scheduler is 3, not text"),
    ("scheduler null", night(scheduler=None), "scheduler is null"),
    ("status a string", night(status="0"), 'status is "0", not an exit status'),
    ("status a fraction", night(status=1.5), "status is 1.5"),
    ("status negative", night(status=-1), "status is -1"),
    ("status 256", night(status=256), "status is 256"),
    ("status null", night(status=None), "status is null"),
    ("boards a string", night(boards="all_time"), "boards is"),
    ("a board a number", night(boards=[1]), "boards is list, not a list of text"),
    ("steps a list", night(steps=[]), "steps is list, not an object"),
    ("steps a string", night(steps="ok"), "steps is"),
    ("a step a list", night(steps={"fetch": []}), "steps.fetch is list, not an object"),
    ("a step's status a string", night(steps={"fetch": {"status": "0", "tries": 1, "seconds": 1, "why": None}}),
     "steps.fetch.status is"),
    ("a step's status missing", night(steps={"fetch": {"tries": 1, "seconds": 1}}), "steps.fetch.status is missing"),
    ("a step's tries negative", night(steps={"publish": {"status": 0, "tries": -1, "seconds": 1}}),
     "steps.publish.tries is -1, not a count"),
    ("a step's seconds NaN", night(steps={"aggregate": {"status": 0, "tries": 1, "seconds": raw(NAN)}}),
     "steps.aggregate.seconds is"),
    ("a step's why a number", night(steps={"aggregate": {"status": 65, "tries": 1, "seconds": 1, "why": 5}}),
     "steps.aggregate.why is 5"),
    ("fetch a list", night(fetch=[]), "fetch is list"),
    ("fetch a string", night(fetch="full"), "fetch is"),
    ("fetch's documents a string", night(fetch={"mode": "full", "documents_read": "many"}), "fetch.documents_read is"),
    ("fetch's mode a number", night(fetch={"mode": 5}), "fetch.mode is 5"),
    ("fetch's fallback a string", night(fetch={"mode": "full", "fallback": "yes"}), "fetch.fallback is"),
    ("fetch's documents Infinity", night(fetch={"documents_read": raw(INF)}), "fetch.documents_read is"),
]
# Whole files that are no history: (what, bytes or a maker of a special file, what the note says)
FILES = [
    ("not JSON", b"{\"started\": ", "not JSON"),
    ("empty", b"", "not JSON"),
    ("binary", bytes(range(256)) * 4, "not JSON"),
    ("an object", b"{}", "not a JSON array of nights but dict"),
    ("a string", b'"nights"', "not a JSON array of nights but str"),
    ("null", b"null", "not a JSON array of nights but NoneType"),
    ("nested 50,000 deep", DEEP.encode(), "not JSON (RecursionError"),
    ("nested in an entry", text([GOOD, night(fetch={"mode": raw(DEEP)})]).encode(), "not JSON (RecursionError"),
    ("huge", b"[" + b" " * (history.MOST_BYTES + 1) + b"]", "larger than"),
    ("a FIFO", os.mkfifo, "not a regular file"),
    ("a directory", os.mkdir, "not a regular file"),
]


def run_in_process(argv):
    """cli.main's status, standard output and standard error."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = cli.main(argv)
    return status, out.getvalue(), err.getvalue()


FAILING_JOB = "#!/bin/sh\nexit 1\n"


def strict(text):
    def refuse(token):
        raise ValueError(f"{token} is not JSON")
    return json.loads(text, parse_constant=refuse)


def bounded(call, *args):
    """call(*args) in a thread, given 60 s to return (a bound on a hang, not a timing assertion)."""
    result = {}

    def work():
        try:
            result["value"] = call(*args)
        except BaseException as error:  # noqa: BLE001 (raised again in the caller's thread)
            result["error"] = error
    worker = threading.Thread(target=work, daemon=True)
    worker.start()
    worker.join(60)
    if worker.is_alive():
        raise AssertionError(f"{call.__name__} still waiting after 60 s")
    if "error" in result:
        raise result["error"]
    return result.get("value")


class State(harness.Case):
    def setUp(self):
        self.work = tempfile.mkdtemp(prefix="rankings-night-history.")
        self.config = os.path.join(self.work, "rankings.conf")
        with open(self.config, "w") as out:
            out.write(f"RANKINGS_EXPORTS={self.work}/nothing\nRANKINGS_STATE_DIRECTORY={self.work}\n"
                      "RANKINGS_RETRIES=0\n")
        self.path = paths.history(self.work)
        # The job, found on PATH from a checkout: one that fails (status 1).
        os.makedirs(os.path.join(self.work, "bin"))
        with open(os.path.join(self.work, "bin", "rankings"), "w") as out:
            out.write(FAILING_JOB)
        os.chmod(os.path.join(self.work, "bin", "rankings"), 0o755)
        self.saved_path = os.environ["PATH"]
        os.environ["PATH"] = f"{self.work}/bin:{self.saved_path}"
        self.err = ""

    def tearDown(self):
        os.environ["PATH"] = self.saved_path

    def write(self, data):
        with open(self.path, "wb") as out:
            out.write(data)

    def bytes(self, path=None):
        with open(path or self.path, "rb") as f:
            return f.read()

    def logged(self):
        return self.err


class Status(State):
    def test_status_never_crashes_on_a_damaged_history_and_names_what_it_dropped(self):
        self.assertGreaterEqual(len(ENTRIES) + len(FILES), 30)
        for what, entry, said in ENTRIES:
            with self.subTest(entry=what):
                self.write(text([GOOD, entry]).encode())
                before = self.bytes()
                status, out, err = run_in_process(["status", "--config", self.config])
                self.expect("status", status, 0)
                self.expect_in("the good night shown", "ok  (cron, 15s; boards: all_time)", out)
                self.expect_in("the note", f"warning: {self.path}: 1 of 2 entries dropped (entry 2): ", err)
                self.expect_in("why", said, err)
                status, out, err = run_in_process(["status", "--config", self.config, "--json"])
                self.expect("status --json", status, 0)
                self.expect("the good night, as strict JSON", strict(out), [GOOD])
                self.expect("status changes nothing", self.bytes(), before)
        for what, content, said in FILES:
            with self.subTest(file=what):
                if os.path.isdir(self.path):
                    os.rmdir(self.path)
                elif os.path.lexists(self.path):
                    os.unlink(self.path)
                if callable(content):
                    content(self.path)
                else:
                    self.write(content)
                status, out, err = bounded(run_in_process, ["status", "--config", self.config, "--json"])
                self.expect("status", status, 0)
                self.expect("no nights", strict(out), [])
                self.expect_in("the note", f"warning: {self.path}: ", err)
                self.expect_in("why", said, err)
                status, out, err = bounded(run_in_process, ["status", "--config", self.config])
                self.expect("status", (status, out), (0, "no night has run yet\n"))

    def test_status_n_0_shows_no_night(self):
        self.write(text([GOOD, night(started=MIDNIGHT + 60, ended=MIDNIGHT + 75)]).encode())
        self.expect("-n 0", run_in_process(["status", "--config", self.config, "-n", "0"]), (0, "", ""))
        self.expect("-n 0 --json", run_in_process(["status", "--config", self.config, "-n", "0", "--json"]),
                    (0, "[]\n", ""))
        status, out, _ = run_in_process(["status", "--config", self.config, "-n", "1"])
        self.expect("-n 1: the newest only", (status, out.count("(cron, 15s"), "2026-11-27 00:01" in out), (0, 1, True))

    def test_a_line_a_step_printed_is_shown_on_one_line(self):
        self.write(text([night(status=65, steps={"aggregate": {"status": 65, "tries": 1, "seconds": 1,
                                                               "why": "rankings: error: \x1b[2Jgone\nfake line"}})]).encode())
        _, out, _ = run_in_process(["status", "--config", self.config])
        self.expect_in("escaped", "rankings: error: \\x1b[2Jgone\\nfake line", out)


class Append(State):
    def test_a_history_that_is_not_a_history_is_kept_aside_not_replaced(self):
        said = []
        for number, (what, content, note) in enumerate([f for f in FILES if not callable(f[1])][:3]):
            with self.subTest(file=what):
                self.write(content)
                history.append(self.work, GOOD, said.append)
                aside = self.path + ".damaged" + (f".{number}" if number else "")
                self.expect("kept aside, byte for byte", self.bytes(aside), content)
                self.expect("the new history", json.loads(self.bytes()), [GOOD])
                self.expect_in("said", f"{self.path}: {note}", said[-1])
                self.expect_in("said where", f"; kept aside as {aside}", said[-1])

    def test_a_history_with_damaged_entries_keeps_the_good_ones_and_the_file_aside(self):
        content = text([GOOD, night(started=raw(NAN)), GOOD]).encode()
        self.write(content)
        said = []
        tonight = night(started=MIDNIGHT + 60, ended=MIDNIGHT + 70)
        history.append(self.work, tonight, said.append)
        self.expect("the good ones and tonight's", json.loads(self.bytes()), [GOOD, GOOD, tonight])
        self.expect("the old file", self.bytes(self.path + ".damaged"), content)
        self.expect("one note", len(said), 1)
        self.expect_in("the note", '1 of 3 entries dropped (entry 2): started is "NaN", not a time', said[0])

    def test_a_good_history_is_only_added_to(self):
        self.write(text([GOOD]).encode())
        said = []
        history.append(self.work, GOOD, said.append)
        self.expect("said", said, [])
        self.expect("nights", json.loads(self.bytes()), [GOOD, GOOD])
        self.assertFalse(os.path.exists(self.path + ".damaged"))


class Cron(State):
    def cron(self, now):
        real_time = cli.time.time
        cli.time.time = lambda: now
        try:
            status, _, err = run_in_process(["cron", "--config", self.config])
            self.err += err
            return status
        finally:
            cli.time.time = real_time

    def test_a_damaged_history_never_stops_cron(self):
        for what, entry, _ in ENTRIES[4:15]:        # every shape of `started`
            with self.subTest(entry=what):
                content = text([entry]).encode()
                self.write(content)
                self.expect("the night ran (its job failing)", self.cron(MIDNIGHT + 60), 1)
                self.expect("kept aside", self.bytes(self.path + ".damaged"), content)
                os.unlink(self.path + ".damaged")
                self.expect("once a day", self.cron(MIDNIGHT + 120), 0)
                os.unlink(self.path)

    def test_a_night_started_in_the_future_did_not_run_today(self):
        # The clock ran ahead: tonight's date, but an hour from now.
        self.write(text([night(started=MIDNIGHT + 3600, ended=MIDNIGHT + 3615)]).encode())
        self.expect("the night runs", self.cron(MIDNIGHT + 60), 1)
        self.expect("then once a day", self.cron(MIDNIGHT + 120), 0)

    def test_a_cron_night_started_earlier_today_ran_today(self):
        content = text([GOOD, night(started=MIDNIGHT + 10, ended=MIDNIGHT + 25)]).encode()
        self.write(content)
        self.expect("nothing to do", self.cron(MIDNIGHT + 60), 0)
        self.expect("no night ran", self.bytes(), content)

    def test_a_night_run_by_hand_today_or_by_cron_yesterday_does_not_count(self):
        self.write(text([GOOD, night(started=MIDNIGHT + 10, ended=MIDNIGHT + 25, scheduler="hand")]).encode())
        self.expect("the night runs", self.cron(MIDNIGHT + 60), 1)
        self.expect("then once a day", self.cron(MIDNIGHT + 120), 0)

    def test_an_older_history_with_the_boot_clock_still_counts_its_nights(self):
        today = night(started=MIDNIGHT + 10, ended=MIDNIGHT + 25)
        self.write(text([dict(today, boot={"id": "b1", "seconds": 1000.0})]).encode())
        self.expect("ran today", self.cron(MIDNIGHT + 60), 0)
        status, out, err = run_in_process(["status", "--config", self.config, "--json"])
        self.expect("status --json: the night, its boot dropped, no note", (status, strict(out), err), (0, [today], ""))


class Timer(harness.Case):
    """systemctl stand-in (no systemd here: PID 1 is not systemd in the test's machine)."""

    def setUp(self):
        self.work = tempfile.mkdtemp(prefix="rankings-night-timer.")
        self.systemd = os.path.join(self.work, "run-systemd-system")
        os.mkdir(self.systemd)
        self.path = os.environ["PATH"]

    def tearDown(self):
        os.environ["PATH"] = self.path

    def systemctl(self, enabled, active):
        stand_in = os.path.join(self.work, "systemctl")
        with open(stand_in, "w") as out:
            out.write(f'#!/bin/sh\necho "$*" >>"{self.work}/asked"\n'
                      f'case "$1" in is-enabled) exit {enabled};; is-active) exit {active};; esac\nexit 1\n')
        os.chmod(stand_in, 0o755)
        os.environ["PATH"] = self.work + os.pathsep + os.environ["PATH"]

    def test_only_a_timer_systemd_runs_keeps_cron_aside(self):
        for enabled, active, systemd, expected in ((0, 3, True, False), (0, 0, True, True), (1, 0, True, True),
                                                   (0, 0, False, False)):
            with self.subTest(enabled=enabled, active=active, systemd=systemd):
                self.systemctl(enabled, active)
                where = self.systemd if systemd else os.path.join(self.work, "absent")
                self.expect("timer_active", cli.timer_active(where), expected)

    def test_cron_runs_the_night_while_the_timer_is_only_enabled(self):
        state = State("setUp")
        state.setUp()
        self.systemctl(0, 3)
        self.expect("the night runs (its job failing)", Cron.cron(state, MIDNIGHT + 60), 1)
        self.expect_in("in the history", '"scheduler": "cron"', state.bytes().decode())


class Metrics(State):
    def test_a_last_success_in_the_future_is_not_carried_over(self):
        path = os.path.join(self.work, "rankings-night.prom")
        with open(path, "w") as out:
            out.write(f"rankings_night_last_success_timestamp_seconds {MIDNIGHT + 86400}\n"
                      f'rankings_night_step_last_success_timestamp_seconds{{step="fetch"}} {MIDNIGHT + 86400}\n'
                      f'rankings_night_step_last_success_timestamp_seconds{{step="aggregate"}} {MIDNIGHT - 60}\n')
        failed = night(started=MIDNIGHT, ended=MIDNIGHT + 10, status=69,
                       steps={"fetch": {"status": 69, "tries": 4, "seconds": 9, "why": "no"}})
        written = dict((name, samples) for name, _, samples in metrics.series(failed, path, 0))
        self.expect("no last success", written["rankings_night_last_success_timestamp_seconds"], [])
        self.expect("steps", written["rankings_night_step_last_success_timestamp_seconds"],
                    [('{step="aggregate"}', MIDNIGHT - 60)])

    def test_nan_or_infinity_is_not_carried_over(self):
        path = os.path.join(self.work, "old.prom")
        for value in ("NaN", "+Inf", "-Inf"):
            with open(path, "w") as out:
                out.write(f"x {value}\n")
            self.expect(value, metrics.carried(path, "x"), None)


class Fifos(State):
    def fifo(self, name):
        path = os.path.join(self.work, name)
        os.mkfifo(path)
        return path

    def test_a_fifo_never_holds_the_night_up(self):
        self.expect("metrics.carried", bounded(metrics.carried, self.fifo("rankings-night.prom"), "x"), None)
        self.expect("history.read", bounded(history.read, self.work), ([], []))
        with self.assertRaises(OSError) as raised:
            bounded(files.lock, self.fifo("planted-lock"))
        self.expect("why", raised.exception.strerror, "not a regular file")
        folder = os.path.join(self.work, "night")
        os.mkdir(folder)
        self.fifo(os.path.join("night", record.RECORD))
        with self.assertRaises(Damaged) as raised:
            bounded(record.read, folder, 0)
        self.expect_in("the record", "not a regular file", str(raised.exception))


class Modes(harness.Case):
    def test_every_file_the_night_makes_is_0644_whatever_the_umask(self):
        work = tempfile.mkdtemp(prefix="rankings-night-modes.")
        old = os.umask(0o077)
        try:
            history.append(work, GOOD, print)
            metrics.write(os.path.join(work, "rankings.prom"), GOOD, 0, print)
            os.close(files.lock(os.path.join(work, ".rankings.lock")))
            os.mkdir(os.path.join(work, "night"), 0o755)
            record.write(os.path.join(work, "night"), {"mode": "full"})
            from rankings_night.snapshot import Writer
            Writer(os.path.join(work, "night", "part")).file.close()
        finally:
            os.umask(old)
        for name in (os.path.basename(paths.history(work)), "rankings.prom", ".rankings.lock", "night/" + record.RECORD,
                     "night/part"):
            with self.subTest(file=name):
                self.expect("mode", stat.S_IMODE(os.stat(os.path.join(work, name)).st_mode), 0o644)


class Severity(harness.Case):
    def test_the_journal_hears_each_lines_severity_and_plain_lines_say_it(self):
        with tempfile.TemporaryFile("w+") as stream:
            status = os.fstat(stream.fileno())
            saved = os.environ.get("JOURNAL_STREAM")
            os.environ["JOURNAL_STREAM"] = f"{status.st_dev}:{status.st_ino}"
            try:
                said = log.Log(stream=stream)
                said("rankings: a line of the job's", own=False)
                said.warning("fetch: rest: the incremental night is not proven, so a full read: x")
                said.error("failed")
                said("done")
            finally:
                if saved is None:
                    os.environ.pop("JOURNAL_STREAM")
                else:
                    os.environ["JOURNAL_STREAM"] = saved
            log.Log(stream=stream)("a terminal's")
            stream.seek(0)
            self.expect("lines", stream.read().splitlines(),
                        ["<6>rankings: a line of the job's",
                         "<4>rankings-night: warning: fetch: rest: the incremental night is not proven, so a full read: x",
                         "<3>rankings-night: error: failed", "<6>rankings-night: done", "rankings-night: a terminal's"])


if __name__ == "__main__":
    harness.main()
