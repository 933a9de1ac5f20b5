"""The night: fetch, aggregate every board, prove them, publish, under one policy (the shipped
fetch and publish, and the proof, in this process; the job and other programs as children). At
most one night at a time (the lock); each try of a step bounded in time (TERM, then KILL a minute
later, with everything it started); a failed try tried again only when another can succeed, up to
RANKINGS_RETRIES more times, RANKINGS_RETRY_PAUSE_SECONDS apart; a step runs only after the one
before it succeeded. Every line a step prints is relayed to the night's log; what each step did
goes into the history (`rankings-night status`) and rankings-night.prom, however the night ends."""
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time

from . import auth, fetch, files, history, layers, metrics, proving, publish, statuses, wiring
from .firestore import Firestore
from .log import severity_of
from .settings import PASSED
from .snapshot import SNAPSHOT_GZ, document_at
from .statuses import CANT_CREATE, CONFIG, DATA, STOPPED, TEMPFAIL, UNAVAILABLE, Failure
from .transport import FirestoreError
from .zone import zone

HERE = os.path.dirname(os.path.abspath(__file__))
# Each board's job and publish are bounded alike (the job reads 10 M votes in seconds; the
# limits stop a hung step, not a slow one). A platform's task timeout must exceed longest_try().
JOB_SECONDS, PUBLISH_SECONDS, KILL_AFTER = 900, 300, 60


def longest_try(settings):
    """Seconds one try of every step may take at most, as the limits below add up: what a
    platform's task timeout (Cloud Run's --task-timeout, a CronJob's activeDeadlineSeconds per
    try) must exceed so that the night's own limits speak first."""
    w = wiring.wire(settings)
    fetch_limit = 0
    if w.fetch_directory is not None:
        fetch_limit = min(settings.fetch_timeout_seconds, settings.firestore_deadline_seconds)
    elif w.fetch_command:
        fetch_limit = settings.fetch_timeout_seconds + KILL_AFTER
    per_board = JOB_SECONDS + (PUBLISH_SECONDS if w.publish_firestore or w.publish_command else 0)
    prove = PUBLISH_SECONDS if w.fetch_directory is not None and settings.board_proof != "no" else 0
    return fetch_limit + len(w.boards) * per_board + prove


def utc(seconds):
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds)) + f".{int(seconds * 1000) % 1000:03d}Z"


class Step:
    """One step: its actions run in order, each a command (a child process) or a function of this
    process returning (status, why); a retry starts at the first action not yet done."""

    def __init__(self, name, actions, limit, isolate=False):
        self.name, self.commands, self.limit, self.isolate = name, actions, limit, isolate
        self.status = self.why = None
        self.tries, self.seconds, self.boards = 0, 0.0, []


class Night:
    def __init__(self, settings, log, scheduler="hand", extra_flags=(), environ=None):
        self.settings, self.log, self.scheduler = settings, log, scheduler
        self.extra_flags = list(extra_flags)
        self.environ = dict(os.environ if environ is None else environ)
        self.signal = None
        self.stopped = threading.Event()
        self.state = os.path.dirname(os.path.abspath(settings.output))
        self.child = None
        self.wiring = wiring.wire(settings)
        self.fetched = None     # the record of tonight's fetch, when it ran here
        self.computed_at = None     # every board's, set when the job starts
        self.snapshot = None        # the folder every board was made from
        self.named_lines = 0        # bad lines named by their Firestore document so far
        self.proof = None           # proving.Verdict, once the boards were proved
        self.again, self.again_done = None, False   # why tonight reads everything again, once

    # --- what runs ---------------------------------------------------------------------------

    def boards(self):
        """(role, output, flags) of every board, all made from the one snapshot the night reads."""
        return [(b.role, b.output, list(b.flags)) for b in self.wiring.boards]

    def proving(self):
        """Whether the boards are proved against Firestore: the shipped fetch read them here."""
        return self.wiring.fetch_directory is not None and self.settings.board_proof != "no"

    def job_command(self, board, computed_at, exports):
        s = self.settings
        metrics_flag = ["--metrics", s.metrics] if s.metrics and board.role == "all_time" else []
        proof_flags = proving.job_flags(board) if self.proving() else []
        return [s.bin, "aggregate", "--computed-at", computed_at] + s.flags + self.extra_flags + list(board.flags) \
            + metrics_flag + proof_flags + ["--output", board.output, exports]

    def steps(self, full_because=None):
        s, w = self.settings, self.wiring
        steps = []
        if w.fetch_directory is not None:
            # The shipped fetch runs here: its own deadline (the shorter of the two settings) ends it.
            steps.append(Step("fetch", [lambda: self.fetch_here(w.fetch_directory, full_because)],
                              min(s.fetch_timeout_seconds, s.firestore_deadline_seconds)))
        elif w.fetch_command:
            steps.append(Step("fetch", [list(w.fetch_command)], s.fetch_timeout_seconds))
        steps.append(Step("aggregate", [], JOB_SECONDS, isolate=True))
        if self.proving():
            steps.append(Step("prove", [self.prove_here], PUBLISH_SECONDS))
        if w.publish_firestore:
            steps.append(Step("publish", [lambda b=b: self.publish_here(b) for b in w.boards], PUBLISH_SECONDS))
        elif w.publish_command:
            steps.append(Step("publish", [list(w.publish_command) + [b.output] for b in w.boards], PUBLISH_SECONDS))
        return steps

    def fetch_here(self, directory, full_because=None):
        fetch.out = self.relay_line

        def work():
            self.fetched = fetch.run(directory, self.settings, full_because=full_because, deadline=min(
                self.settings.fetch_timeout_seconds, self.settings.firestore_deadline_seconds))
        return self.called(fetch.say, work)

    def prove_here(self):
        """The boards against Firestore's counts at tonight's readTime (proving.py): 0 when proven,
        or unproven and allowed; a mismatch after an incremental night asks for a full read
        (self.again); 65 for a full read's, 78 for an unproven board RANKINGS_BOARD_PROOF=required."""
        def work():
            firestore = Firestore(self.settings, proof_say)
            firestore.transport.deadline = time.monotonic() + PUBLISH_SECONDS
            verdict = proving.prove(firestore, self.fetched or {}, self.snapshot, self.wiring.boards,
                                    self.computed_at, self.settings.firestore_streams, proof_say)
            self.proof = verdict
            if verdict.status == proving.PROVEN:
                for line in verdict.lines:
                    proof_say(line)
                return
            if verdict.status == proving.UNPROVEN:
                for line in verdict.lines:
                    proof_say(f"warning: {line}")
                if self.settings.board_proof == "required":
                    raise Failure(CONFIG, "the boards are unproven and RANKINGS_BOARD_PROOF=required: nothing "
                                          "published" + "".join(f"; make the index: {c}" for c in verdict.index_commands))
                return
            if (self.fetched or {}).get("mode") != "full" and not self.again_done:
                self.again = f"tonight's board disagreed with Firestore ({'; '.join(verdict.mismatches[:3])})"
                proof_say(f"warning: {verdict.lines[0] if len(verdict.lines) == 1 else '; '.join(verdict.lines)}; "
                          "reading the whole collection and proving again")
                return
            raise Failure(DATA, f"not published: {'; '.join(verdict.lines)}")
        return self.called(proof_say, work)

    def publish_here(self, board):
        """One board into Firestore, ordered by tonight's snapshot against the board there, and the
        all-time board guarded against shrinking by the one the app reads now."""
        publish.out = self.relay_line
        read_time = (self.fetched or {}).get("read_time")
        max_drop = max_drop_of(self.settings.flags + self.extra_flags) if board.role == "all_time" else None
        name = wiring.document_of(board, self.computed_at)
        return self.called(publish.say, lambda: publish.publish(board.output, self.settings, name=name,
                                                                read_time=read_time, max_drop=max_drop,
                                                                seconds=PUBLISH_SECONDS))

    def called(self, say, work):
        """(status, why) of a step's function, its failure said as its own line (`say`, which
        names the step's program and hides any token): the Failure's status, a signal it was
        stopped by (which stops the night too), or 70 for anything else (a bug)."""
        try:
            work()
            return 0, None
        except (Failure, FirestoreError) as failure:
            status = statuses.status_of(failure)
            if status - 128 in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP) and self.signal is None:
                self.signal = status - 128
                self.stopped.set()
            say(f"error: {failure}")
            return status, str(failure)
        except Exception as error:  # noqa: BLE001 (a bug: one line, no traceback that could hold a token)
            why = f"unexpected {type(error).__name__}: {error} (a bug in rankings-night)"
            say(f"error: {why}")
            return statuses.SOFTWARE, why

    def relay_line(self, line):
        self.log(self.named(line), severity_of(line), own=False)

    def named(self, line):
        """A job's line about a line of the snapshot (its base or a change file: the job names the
        layer's file), with the document it is in Firestore (the snapshot may be gone with a
        container's task by the time anyone reads the log); the first few such lines only, since
        each costs a pass over the file."""
        where, _, rest = line.partition(": ")
        path, _, number = where.rpartition(":")
        if not (rest and number.isdigit() and self.named_lines < 10
                and (layers.is_layer(os.path.basename(path)) or os.path.basename(path) == SNAPSHOT_GZ)):
            return line
        self.named_lines += 1
        name = document_at(path if os.path.isabs(path) else os.path.join(self.snapshot or "", path), int(number))
        return f"{line} (Firestore document {name.split('/documents/', 1)[-1]})" if name else line

    def check_flags(self):
        """The job's flags tried on no input before the fetch, so a typo is refused in a second
        rather than after an hour's read: RANKINGS_FLAGS alone (78, the file's), then with those
        after `run --` (64, the command line's)."""
        s = self.settings
        with tempfile.TemporaryDirectory(prefix="rankings-flags.") as scratch:
            for source, flags, status in (("RANKINGS_FLAGS", s.flags, CONFIG),
                                          ("rankings-night run --", s.flags + self.extra_flags, statuses.USAGE)):
                if not flags or (status == statuses.USAGE and not self.extra_flags):
                    continue
                argv = [s.bin, "aggregate", "--quiet", "--allow-empty"] + flags \
                    + ["--metrics", "", "--output", os.path.join(scratch, "board.json"), "-"]
                try:
                    done = subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                          stderr=subprocess.PIPE, timeout=60, cwd=scratch)
                except (OSError, subprocess.TimeoutExpired):
                    return      # the aggregate step says what is wrong with the binary
                if done.returncode == statuses.USAGE:
                    said = done.stderr.decode("utf-8", "replace").strip().splitlines()[-1:] or ["usage"]
                    raise Failure(status, f"{source}: rankings aggregate refuses "
                                          f"{' '.join(flags if status == CONFIG else self.extra_flags)}: "
                                          f"{said[0]}; nothing was run")

    def child_environment(self):
        """The settings as the steps' environment: the ones read, never other RANKINGS_* variables
        of the caller's (but `rankings`'s own, RANKINGS_CPU and RANKINGS_INFLATE)."""
        environ = {k: v for k, v in self.environ.items()
                   if not (k.startswith("RANKINGS_") or k == "FIRESTORE_EMULATOR_HOST") or k in PASSED}
        environ.update(self.settings.environment())
        return environ

    # --- the night ---------------------------------------------------------------------------

    def run(self):
        self.started = time.time()
        lock_path = self.settings.lock_file or os.path.join(self.state, ".rankings.lock")
        try:
            lock = files.lock(lock_path)
        except OSError as error:
            raise Failure(CANT_CREATE, f"cannot lock {lock_path}: {error.strerror}") from None
        if lock is None:
            raise Failure(TEMPFAIL, f"another night holds {lock_path}; not starting a second one")
        stops = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)
        handlers = {s: signal.signal(s, self._on_signal) for s in stops}
        # A parent may hand down a mask that blocks them: the night must hear a stop, and its
        # steps (which inherit the mask) the TERM at their limit.
        signal.pthread_sigmask(signal.SIG_UNBLOCK, stops)
        steps = []
        try:
            attempt = self.environ.get("CLOUD_RUN_TASK_ATTEMPT")     # the platform's retry of this task
            self.log(f"night starting ({self.scheduler}; New York time {zone()(self.started):%Y-%m-%d %H:%M:%S %Z}"
                     + (f"; CLOUD_RUN_TASK_ATTEMPT {attempt}" if attempt is not None else "") + ")",
                     **({"task_attempt": attempt} if attempt is not None else {}))
            self.check_flags()
            pending = self.steps()
            while pending:
                step = pending.pop(0)
                steps.append(step)
                if step.name == "aggregate":
                    # Both boards from one snapshot, whatever a later fetch does to `current`, and
                    # one computed_at: the step's start, after the fetch, so that a window the fetch
                    # read (RANKINGS_FIRESTORE_SINCE=-30d) holds all that --since -30d counts.
                    self.snapshot, self.computed_at = os.path.realpath(self.wiring.exports), utc(time.time())
                    step.commands = [self.job_command(b, self.computed_at, self.snapshot) for b in self.wiring.boards]
                self.run_step(step)
                if step.status != 0:
                    break
                if step.name == "prove" and self.again and not self.again_done:
                    # An incremental night's board that disagrees: everything read, made and proved again.
                    self.again_done = True
                    pending = [s for s in self.steps(full_because=self.again) if s.name != "publish"] + pending
            status = self.outcome(steps)
        finally:
            for signum, handler in handlers.items():
                signal.signal(signum, handler)
            os.close(lock)
        self.finish(steps, status)
        return status

    def outcome(self, steps):
        if self.signal is not None:
            return 128 + self.signal
        failed = next((s for s in steps if s.status != 0), None)
        if failed is None:
            return 0
        if failed.name == "aggregate" or 64 <= failed.status <= 78:
            return failed.status
        return UNAVAILABLE      # a hook's own status, or one stopped at its limit or by a signal

    def finish(self, steps, status):
        ended = time.time()
        fetched = history.fetched(self.settings) if any(s.name == "fetch" and s.tries for s in steps) else None
        entry = history.entry(self, steps, status, ended, fetched)
        try:
            history.append(self.state, entry, self.log.warning)
        except OSError as error:
            self.log.warning(f"cannot write the night's history in {self.state}: {error.strerror or error}")
        path = metrics.beside(self.settings.metrics, "rankings-night.prom")
        if path:
            metrics.write(path, history.series(entry, path), self.log.warning)
        # Only a fetch that succeeded tonight made `current`: after a failed one it is an earlier
        # night's, whose figures would pass for tonight's in a log-based metric.
        tonight = fetched if any(s.name == "fetch" and s.status == 0 for s in steps) else None
        figures = {k: tonight[k] for k in ("mode", "documents_read", "drift_documents", "snapshot_documents")
                   if tonight and k in tonight}
        words = "done: the boards are written" + (" and published" if self.settings.publish else "") if status == 0 \
            else f"failed with status {statuses.describe(status)}"
        self.log(f"night {words} ({ended - self.started:.1f}s)", "INFO" if status == 0 else "ERROR",
                 status=status, **figures)

    def _on_signal(self, signum, _frame):
        if self.signal is None:
            self.signal = signum
            self.stopped.set()
            if self.child is not None:
                _signal_group(self.child, signal.SIGTERM)

    # --- one step ----------------------------------------------------------------------------

    def run_step(self, step):
        tries = 1 + self.settings.retries
        begun = time.monotonic()
        while True:
            step.tries += 1
            step.status = 0
            for number, action in enumerate(step.commands):
                if number < len(step.boards):
                    continue    # published or written on an earlier try
                if callable(action):
                    self.log(f"{step.name}: try {step.tries} of {tries}")
                    step.status, step.why = action()
                else:
                    self.log(f"{step.name}: try {step.tries} of {tries}: {' '.join(action)}")
                    step.status, step.why = self.attempt(action, step.limit, step.isolate)
                if step.status != 0:
                    break
                step.boards.append(number)
            step.seconds = round(time.monotonic() - begun, 3)
            if step.status == 0:
                self.log(f"{step.name}: done ({step.seconds:.1f}s)")
                return
            said = f"124 (stopped at its limit of {step.limit}s)" if step.status == STOPPED else statuses.describe(step.status)
            if self.signal is not None:
                self.log.error(f"{step.name}: stopped by {signal.Signals(self.signal).name} on try {step.tries}")
                return
            if not statuses.retryable(step.status) or step.tries >= tries:
                final = "; no tries left" if statuses.retryable(step.status) else ", which another try cannot change"
                self.log.error(f"{step.name}: failed with status {said} on try {step.tries}{final}")
                return
            pause = self.settings.retry_pause_seconds
            self.log.warning(f"{step.name}: failed with status {said} on try {step.tries}; trying again in {pause}s")
            if self.stopped.wait(pause):
                return

    def attempt(self, argv, limit, isolate):
        """(status, the last line it printed) of one command, bounded by limit seconds."""
        if isolate:
            argv = [sys.executable, "-I", os.path.join(HERE, "isolate.py")] + argv
        if self.stopped.is_set():
            return 128 + self.signal, None
        try:
            child = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                     env=self.child_environment(), start_new_session=True)
        except OSError as error:
            self.log.error(f"cannot run {argv[0]}: {error.strerror}")
            return 69 if error.errno != 2 else 66, f"cannot run {argv[0]}: {error.strerror}"
        self.child, last = child, [None]

        def relay():
            for raw in child.stdout:
                line = raw.decode("utf-8", "replace").rstrip("\n")
                if line:
                    last[0] = line
                    self.relay_line(line)
        reader = threading.Thread(target=relay, daemon=True)
        reader.start()
        ends, killed, status = time.monotonic() + limit, None, None
        while status is None:
            try:
                status = child.wait(timeout=1)
            except subprocess.TimeoutExpired:
                now = time.monotonic()
                if killed is None and now >= ends:
                    self.log.error(f"stopping {os.path.basename(argv[0])}: still running at its limit of {limit}s")
                    _signal_group(child, signal.SIGTERM)
                    killed = now
                elif killed is None and self.signal is not None:
                    killed = now
                elif killed is not None and now >= killed + KILL_AFTER:
                    _signal_group(child, signal.SIGKILL)
        _signal_group(child, signal.SIGKILL)    # whatever it left running in its group
        reader.join(5)
        self.child = None
        if status < 0:
            status = 128 - status
        if killed is not None and self.signal is None:
            status = STOPPED
        return status, last[0]


def proof_say(message):
    """The proof's lines, named as the night's own step's (`warning: ` and `error: ` first, where
    the log reads a line's severity)."""
    level, _, rest = message.partition(": ")
    said = f"{level}: prove: {rest}" if level in ("warning", "error") else f"prove: {message}"
    fetch.out(f"rankings-night: {auth.redact(said)}")


def max_drop_of(flags):
    """--max-drop's percent as the job reads it (the last one given wins), or None."""
    found = None
    for number, word in enumerate(flags):
        text = flags[number + 1] if word == "--max-drop" and number + 1 < len(flags) else \
            word.split("=", 1)[1] if word.startswith("--max-drop=") else None
        if text is not None:
            try:
                found = float(text)
            except ValueError:
                pass    # the job refuses it before the fetch (check_flags)
    return found


def _signal_group(child, signum):
    try:
        os.killpg(child.pid, signum)
    except (ProcessLookupError, PermissionError):
        pass
