"""The night: fetch, the job (a child without the network), prove, publish, each step after the one before it
succeeded (without Firestore, the job alone on RANKINGS_EXPORTS); one lock, one signal handler, one deadline a try."""
import contextlib
import json
import os
import signal
import subprocess
import sys
import time

from . import fetch, files, folders, history, metrics, paths, proof, publish
from .firestore import Firestore
from .settings import PASSED, on_a_platform
from .snapshot import format_time, parse_time
from .statuses import CANT_CREATE, DATA, FINAL, SOFTWARE, STOPPED, TEMPFAIL, UNAVAILABLE, Failure, describe, \
    status_of
from .stop import STOP
from .transport import FirestoreError
from .zone import new_york

ISOLATE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "isolate.py")
# Each try's limit (the job reads 10 M votes in seconds: the limits stop a hung step, not a slow one).
FETCH_SECONDS, JOB_SECONDS, PUBLISH_SECONDS, KILL_AFTER, PAUSE = 3300, 900, 300, 60, 300
# A machine clock further from Firestore's than SKEW_SECONDS is said; a board's log names SHOWN refused votes.
SKEW_SECONDS, SHOWN, MONTH_NS = 300, 10, 30 * 86_400 * 10**9
STOPS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)
UNPROVABLE = "tonight's boards cannot be proven (Firestore lacks an index they need)"    # why tonight reads in full


def in_memory(state):
    """No volume holds the state directory (no mount point but / above it): Cloud Run keeps such files in memory."""
    try:
        with open("/proc/self/mountinfo", encoding="utf-8", errors="replace") as table:
            points = [line.split()[4] for line in table]
    except (OSError, IndexError):
        return False
    return not any(p != "/" and (state == p or state.startswith(p.rstrip("/") + "/")) for p in points)


def week_of(read_time):
    """The ISO week of a readTime on New York's clocks (the app's getCurrentWeekId())."""
    year, week, _ = new_york(parse_time(read_time) / 1e9).isocalendar()
    return f"{year:04d}-W{week:02d}"


def longest_try(settings):
    """Seconds one try of every step may take (a proof of up to 20,000 jokes a board): what a
    platform's task timeout must exceed so that the night's own limits speak first."""
    boards = len(settings.roles)
    firestore = FETCH_SECONDS + boards * PUBLISH_SECONDS + proof.limit(boards * 40_002)
    return boards * JOB_SECONDS + (firestore if settings.firestore_project else 0)


class Step:
    """Actions (one a board, or one) each given its try's limit in seconds, or limit() where the steps before
    decide it; a try again starts at the first action not yet done."""

    def __init__(self, name, actions, limit):
        self.name, self.actions, self.limit, self.status, self.why = name, actions, limit, None, None
        self.tries, self.seconds, self.done = 0, 0.0, set()


class Night:
    def __init__(self, settings, log, scheduler="hand", max_drop=None, environ=None, firestore=None, pause=PAUSE):
        self.settings, self.log, self.scheduler, self.pause = settings, log, scheduler, pause
        self.environ = dict(os.environ if environ is None else environ)
        self.state, self.roles, self.firestore = settings.state_directory, settings.roles, firestore
        self.max_drop = settings.max_drop if max_drop is None else max_drop
        self.record = self.read_time = self.computed_at = self.snapshot = self.verdict = self.unprovable = None
        self.reports, self.refused, self.published = {}, {}, []
        self.again, self.child, self.current = None, None, "night"     # again: why tonight reads everything again

    def say(self, message, severity="INFO"):     # a step's module's line, as the step's
        self.log(f"{self.current}: {message}", severity)

    def steps(self, full_because=None):
        boards = [lambda limit, r=r: self.aggregate(r, limit) for r in self.roles]
        if not self.settings.firestore_project:
            return [Step("aggregate", boards, JOB_SECONDS)]
        prove_limit = lambda: proof.limit(sum(proof.counts(paths.stats(self.state, r)) for r in self.roles))  # noqa
        return [Step("fetch", [lambda limit: self.fetch(full_because)], FETCH_SECONDS),
                Step("aggregate", boards, JOB_SECONDS), Step("prove", [lambda limit: self.prove()], prove_limit),
                Step("publish", [lambda limit, r=r: self.publish(r) for r in self.roles], PUBLISH_SECONDS)]

    def run(self):
        STOP.reset()
        files.refuse_root(self.state, "rankings-night run", in_container=on_a_platform(self.environ))
        where = paths.lock(self.state)
        for path in [f(self.state, r) for r in self.roles for f in (paths.board, paths.report, paths.stats)] \
                + [paths.history(self.state), where, self.settings.metrics or ""]:
            if kind := files.not_regular(path):
                raise Failure(CANT_CREATE, f"{path} is {kind}, not a regular file, where the night writes one: move it "
                                           "away; nothing was run")
        try:
            os.makedirs(self.state, exist_ok=True)
            lock = files.lock(where)
        except OSError as error:
            raise Failure(CANT_CREATE, f"cannot lock {where}: {error.strerror}") from None
        if lock is None:
            raise Failure(TEMPFAIL, f"another night holds {where}; not starting a second one")
        self.started, handlers = time.time(), {s: signal.signal(s, self.on_signal) for s in STOPS}
        signal.pthread_sigmask(signal.SIG_UNBLOCK, STOPS)   # a parent may hand down a mask that blocks them
        steps, pending, attempt = [], self.steps(), self.environ.get("CLOUD_RUN_TASK_ATTEMPT")  # a platform's retry
        try:
            self.log(f"night starting ({self.scheduler}; New York time {new_york(self.started):%Y-%m-%d %H:%M:%S %Z}"
                     + (f"; CLOUD_RUN_TASK_ATTEMPT {attempt}" if attempt is not None else "") + ")",
                     **({"task_attempt": attempt} if attempt is not None else {}))
            if self.settings.notes:
                self.log(self.settings.notes, "WARNING")
            if self.settings.firestore_project and self.firestore is None:
                self.firestore = Firestore.from_settings(self.settings, self.say)
            while pending and STOP.signum is None and (not steps or steps[-1].status == 0):
                if steps and steps[-1].name == "prove" and self.again:     # read, made and proved again, once
                    pending, self.again = self.steps(full_because=self.again)[:3] + pending, None
                steps.append(pending.pop(0))
                self.run_step(steps[-1])
        finally:
            for signum, handler in handlers.items():
                signal.signal(signum, handler)
            os.close(lock)
        last = steps[-1] if steps else None     # the loop ends at a step that failed
        status = 128 + STOP.signum if STOP.signum is not None else last.status \
            if last.status == 0 or last.name == "aggregate" or 64 <= last.status <= 78 else UNAVAILABLE
        self.finish(steps, status)
        return status

    def on_signal(self, signum, _frame):
        STOP.set(signum)
        if self.child is not None:
            _signal_group(self.child, signal.SIGTERM)

    def run_step(self, step):
        tries, begun, self.current = 1 + self.settings.retries, time.monotonic(), step.name
        while True:
            step.tries, step.status, step.why, final = step.tries + 1, 0, None, False
            for number in sorted(set(range(len(step.actions))) - step.done):
                try:
                    STOP.check()
                    self.log(f"{step.name}: try {step.tries} of {tries}"
                             + (f" ({self.roles[number]})" if len(step.actions) > 1 else ""))
                    limit = step.limit() if callable(step.limit) else step.limit
                    if self.firestore is not None:
                        self.firestore.transport.deadline = time.monotonic() + limit
                    step.actions[number](limit)
                    step.done.add(number)
                    continue
                except (Failure, FirestoreError) as failure:
                    step.status, step.why = status_of(failure), str(failure)
                    final = getattr(failure, "final", False) or step.status in FINAL
                except Exception as error:  # noqa: BLE001 (a bug: one line, no traceback that could hold a token)
                    step.status, final = SOFTWARE, True
                    step.why = f"unexpected {type(error).__name__}: {error} (a bug in rankings-night)"
                if STOP.signum is None:
                    self.log.error(f"{step.name}: {step.why}")
                break
            step.seconds = round(time.monotonic() - begun, 3)
            failed = f"{step.name}: failed with status {describe(step.status)} on try {step.tries}"
            if step.status == 0:
                return self.log(f"{step.name}: done ({step.seconds:.1f}s)")
            if STOP.signum is not None:
                step.status, step.why = 128 + STOP.signum, f"stopped by {signal.Signals(STOP.signum).name}"
                return self.log.error(f"{step.name}: {step.why} on try {step.tries}")
            if final or step.tries >= tries:
                return self.log.error(failed + (", which another try cannot change" if final else "; no tries left"))
            self.log.warning(f"{failed}; trying again in {self.pause}s")
            if STOP.event.wait(self.pause):
                return

    def fetch(self, full_because):
        """Tonight's snapshot, and Firestore's readTime as tonight's clock; a night whose boards cannot be proven
        (an index missing: asked first, once) reads the whole collection."""
        if self.unprovable is None:
            self.unprovable, _ = proof.probe(self.firestore, self.settings.monthly, self.say)
        if self.unprovable and full_because is None:
            full_because = UNPROVABLE
        try:
            self.record = fetch.run(paths.fetched(self.state), self.firestore, self.say, full_because,
                                    on_a_platform(self.environ) and in_memory(self.state))
        except BaseException as error:
            self.record = getattr(error, "record", None) or self.record     # tonight's figures, never another's
            raise
        self.read_time = self.computed_at = self.record["read_time"]
        self.snapshot = os.path.realpath(os.path.join(paths.fetched(self.state), "current"))
        skew = time.time() - self.record.get("seconds", 0) - parse_time(self.read_time) / 1e9   # when it was taken
        if abs(skew) > SKEW_SECONDS:
            self.say(f"this machine's clock is {abs(skew):.0f} s {'ahead of' if skew > 0 else 'behind'} Firestore's "
                     f"(readTime {self.read_time}): the boards take Firestore's time; set the clock (timedatectl, "
                     "chrony)", "WARNING")

    def aggregate(self, role, limit):
        s, report = self.settings, paths.report(self.state, role)
        if self.snapshot is None:       # the exports resolved once a night
            self.snapshot, self.computed_at = os.path.realpath(s.exports), format_time(time.time_ns())
        argv = [paths.rankings(), "aggregate", "--quiet", "--computed-at", self.computed_at, "--max-invalid",
                f"{s.max_refused}%", "--report", report, "--stats", paths.stats(self.state, role),
                "--output", paths.board(self.state, role)]
        argv += ["--max-drop", str(self.max_drop)] if role == "all_time" else ["--max-drop", "100", "--allow-empty",
                 "--since", format_time(parse_time(self.computed_at) - MONTH_NS), "--week-document"]
        with contextlib.suppress(FileNotFoundError):
            os.unlink(report)       # an earlier night's must never pass for tonight's
        status, last = self.attempt(argv + [self.snapshot], limit)
        if status in (0, DATA) and os.path.exists(report):
            with open(report, encoding="utf-8") as text:
                self.reports[role] = done = json.load(text)
            self.refused[role], refused = done["bad_lines"], done.get("refused", [])
            self.say(f"{role}: {done['counted_events']} votes ({done['hilarious']} hilarious, {done['horrible']} "
                     f"horrible, {done['neutral']} neutral), {done['distinct_jokes']} jokes"
                     + (f", {done['bad_lines']} malformed left out" if done["bad_lines"] else ""))
            for vote in refused[:SHOWN]:
                where = (vote.get("document") or "").split("/documents/", 1)[-1] or f"{vote['input']}:{vote['line']}"
                self.say(f"{role}: left out {where}: {vote['reason']}", "WARNING")
            if len(refused) > SHOWN:
                self.say(f"{role}: and {len(refused) - SHOWN} more left out ({report} names them all)", "WARNING")
        if status != 0:
            raise Failure(status, last or f"rankings aggregate exited with status {status}")

    def prove(self):
        """The boards against Firestore's counts at tonight's readTime. Not proven after an incremental night: read,
        made and proved again (self.again); after a full read a mismatch is 65, an unproven board published so."""
        since = parse_time(self.computed_at) - MONTH_NS
        boards = [(role, paths.stats(self.state, role), self.reports[role], since if role == "monthly" else None)
                  for role in self.roles]
        self.verdict = verdict = proof.prove(self.firestore, self.read_time, boards, self.say)
        if verdict.status == "proven":
            return
        if self.record.get("mode") != "full":
            how = "disagreed with" if verdict.status == "mismatch" else "were not proven by"
            self.again = f"tonight's boards {how} Firestore ({'; '.join((verdict.mismatches or verdict.lines)[:3])})"
            return self.say("reading the whole collection and proving again", "WARNING")
        if verdict.status == "mismatch":
            raise Failure(DATA, f"not published: {'; '.join(verdict.mismatches[:5])}")
        self.say("the boards are published unproven" + "".join(f"; make the index: {c}" for c in
                                                               verdict.index_commands), "WARNING")

    def publish(self, role):
        name = "all_time" if role == "all_time" else week_of(self.read_time)
        outcome = publish.publish(self.firestore, paths.board(self.state, role), name, self.read_time,
                                  float(self.max_drop) if role == "all_time" else None, paths.rankings(), self.say)
        self.published.append(f"weekly_rankings/{name}" + " (a later night's kept)" * (outcome == "superseded"))

    def attempt(self, argv, limit):
        """(status, the last line it printed) of the job, without the network, bounded by limit seconds (TERM,
        then KILL a minute later: a stop's TERM comes from on_signal); its lines relayed when it ends."""
        environ = {k: v for k, v in self.environ.items()
                   if k in PASSED or not (k.startswith("RANKINGS_") or k == "FIRESTORE_EMULATOR_HOST")}
        try:
            self.child = subprocess.Popen([sys.executable, "-I", ISOLATE] + argv, stdin=subprocess.DEVNULL, env=environ,
                                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True)
        except OSError as error:
            return UNAVAILABLE, f"cannot run {sys.executable}: {error.strerror}"
        stopped = False
        try:
            said = self.child.communicate(timeout=limit)[0]
        except subprocess.TimeoutExpired:
            stopped = STOP.signum is None
            self.log.error(f"stopping rankings aggregate: still running at its limit of {limit}s")
            _signal_group(self.child, signal.SIGTERM)
            try:
                said = self.child.communicate(timeout=KILL_AFTER)[0]
            except subprocess.TimeoutExpired:
                _signal_group(self.child, signal.SIGKILL)
                said = self.child.communicate()[0]
        _signal_group(self.child, signal.SIGKILL)   # whatever it left running in its group
        lines = [line for line in said.decode("utf-8", "replace").splitlines() if line.strip()]
        for line in lines:
            self.log(line, own=False)
        status, self.child = self.child.returncode, None
        return (STOPPED if stopped else 128 - status if status < 0 else status), (lines or [None])[-1]

    def finish(self, steps, status):
        """The history's entry, the metrics and the last line, however the night ended."""
        ended, self.current, record = time.time(), "metrics", self.record
        entry = {"started": self.started, "ended": round(ended, 3), "scheduler": self.scheduler, "status": status,
                 "boards": list(self.roles), "published": self.published, "refused": self.refused,
                 "steps": {s.name: {"status": s.status, "tries": s.tries, "seconds": s.seconds,
                                    "why": s.why if s.status else None} for s in steps},
                 "fetch": record and {k: record[k] for k, (_, good) in history.FETCH.items()
                                      if k in record and good(record[k])}}
        entry.update({"proof": self.verdict.entry()} if self.verdict else {},
                     **({"stopped_by": signal.Signals(STOP.signum).name} if STOP.signum else {}))
        try:
            history.append(self.state, entry, self.log.warning)
        except OSError as error:
            self.log.warning(f"cannot write the night's history in {self.state}: {error.strerror or error}")
        if self.settings.metrics:
            held = folders.held(paths.fetched(self.state))[1] if self.settings.firestore_project else 0
            metrics.write(self.settings.metrics, entry, held, self.say)
        tonight = self.record if steps and steps[0].name == "fetch" and steps[0].status == 0 else {}
        words = ("done: the boards are written" + " and published" * bool(self.settings.firestore_project)
                 if status == 0 else f"failed with status {describe(status)}")
        self.log(f"night {words} ({ended - self.started:.1f}s)", "INFO" if status == 0 else "ERROR", status=status,
                 **{k: tonight[k] for k in ("mode", "documents_read", "snapshot_documents") if k in tonight})


def _signal_group(child, signum):
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(child.pid, signum)
