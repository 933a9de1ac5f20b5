"""The night: fetch, aggregate every board, prove them, publish, each step after the last one
succeeded. One night at a time (the lock); each try bounded in time (TERM, then KILL a minute
later, with all it started); a failed try tried again only when another can succeed. Every line
a step prints goes to the log; what each step did to the history and rankings-night.prom."""
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
    """Seconds one try of every step may take at most: what a platform's task timeout must exceed
    so that the night's own limits speak first."""
    w = wiring.wire(settings)
    fetch_limit = _fetch_limit(settings) if w.fetch_directory is not None else \
        settings.fetch_timeout_seconds + KILL_AFTER if w.fetch_command else 0
    per_board = JOB_SECONDS + (PUBLISH_SECONDS if w.publish_firestore or w.publish_command else 0)
    return fetch_limit + len(w.boards) * per_board + (PUBLISH_SECONDS if _proving(settings, w) else 0)


def _fetch_limit(settings):
    return min(settings.fetch_timeout_seconds, settings.firestore_deadline_seconds)


def _proving(settings, w):
    """The boards are proved against Firestore where the shipped fetch read them here."""
    return w.fetch_directory is not None and settings.board_proof != "no"


def utc(seconds):
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds)) + f".{int(seconds * 1000) % 1000:03d}Z"


class Step:
    """Actions run in order, each a command (a child) or a function returning (status, why); a
    retry starts at the first action not yet done."""

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
        self.fetched = self.computed_at = self.snapshot = self.proof = None
        self.named_lines = 0        # bad lines named by their Firestore document so far
        self.again, self.again_done = None, False   # why tonight reads everything again, once

    def job_command(self, board, computed_at, exports):
        s = self.settings
        metrics_flag = ["--metrics", s.metrics] if s.metrics and board.role == "all_time" else []
        proof_flags = proving.job_flags(board) if _proving(s, self.wiring) else []
        return [s.bin, "aggregate", "--computed-at", computed_at] + s.flags + self.extra_flags + list(board.flags) \
            + metrics_flag + proof_flags + ["--output", board.output, exports]

    def steps(self, full_because=None):
        s, w = self.settings, self.wiring
        steps = []
        if w.fetch_directory is not None:
            steps.append(Step("fetch", [lambda: self.fetch_here(w.fetch_directory, full_because)], _fetch_limit(s)))
        elif w.fetch_command:
            steps.append(Step("fetch", [list(w.fetch_command)], s.fetch_timeout_seconds))
        steps.append(Step("aggregate", [], JOB_SECONDS, isolate=True))
        if _proving(s, w):
            steps.append(Step("prove", [self.prove_here], PUBLISH_SECONDS))
        if w.publish_firestore:
            steps.append(Step("publish", [lambda b=b: self.publish_here(b) for b in w.boards], PUBLISH_SECONDS))
        elif w.publish_command:
            steps.append(Step("publish", [list(w.publish_command) + [b.output] for b in w.boards], PUBLISH_SECONDS))
        return steps

    def fetch_here(self, directory, full_because):
        fetch.out = self.relay_line

        def work():
            self.fetched = fetch.run(directory, self.settings, full_because=full_because,
                                     deadline=_fetch_limit(self.settings))
        return self.called(fetch.say, work)

    def prove_here(self):
        """The boards against Firestore's counts at tonight's readTime: a mismatch after an
        incremental night asks for a full read (self.again); 65 after a full read; 78 for an
        unproven board under RANKINGS_BOARD_PROOF=required."""
        def work():
            firestore = Firestore(self.settings, proof_say)
            firestore.transport.deadline = time.monotonic() + PUBLISH_SECONDS
            self.proof = verdict = proving.prove(firestore, self.fetched or {}, self.snapshot, self.wiring.boards,
                                                 self.computed_at, self.settings.firestore_streams, proof_say)
            if verdict.status in (proving.PROVEN, proving.UNPROVEN):
                for line in verdict.lines:
                    proof_say(line if verdict.status == proving.PROVEN else f"warning: {line}")
                if verdict.status == proving.UNPROVEN and self.settings.board_proof == "required":
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
        publish.out = self.relay_line
        read_time = (self.fetched or {}).get("read_time")
        max_drop = max_drop_of(self.settings.flags + self.extra_flags) if board.role == "all_time" else None
        name = wiring.document_of(board, self.computed_at)
        return self.called(publish.say, lambda: publish.publish(board.output, self.settings, name=name,
                                                                read_time=read_time, max_drop=max_drop,
                                                                seconds=PUBLISH_SECONDS))

    def called(self, say, work):
        """(status, why) of a step's function, a failure said as its program's line (`say` hides
        any token); a signal it was stopped by stops the night too; anything else is 70 (a bug)."""
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
        """A job's line about a line of a layer, with its Firestore document (the snapshot may be
        gone with a container's task when the log is read); the first ten only: each costs a pass."""
        where, _, rest = line.partition(": ")
        path, _, number = where.rpartition(":")
        if not (rest and number.isdigit() and self.named_lines < 10
                and (layers.is_layer(os.path.basename(path)) or os.path.basename(path) == SNAPSHOT_GZ)):
            return line
        self.named_lines += 1
        name = document_at(path if os.path.isabs(path) else os.path.join(self.snapshot or "", path), int(number))
        return f"{line} (Firestore document {name.split('/documents/', 1)[-1]})" if name else line

    def check_flags(self):
        """The job's flags tried on no input before the fetch, so a typo is refused in a second, not
        after an hour's read: RANKINGS_FLAGS alone (78), then with those after `run --` (64)."""
        s = self.settings
        with tempfile.TemporaryDirectory(prefix="rankings-flags.") as scratch:
            for source, flags, status, shown in (("RANKINGS_FLAGS", s.flags, CONFIG, s.flags),
                                                 ("rankings-night run --", s.flags + self.extra_flags, statuses.USAGE,
                                                  self.extra_flags)):
                if not shown:
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
                    raise Failure(status, f"{source}: rankings aggregate refuses {' '.join(shown)}: {said[0]}; "
                                          "nothing was run")

    def child_environment(self):
        """The settings read, and no other RANKINGS_* variable of the caller's but `rankings`'s own."""
        environ = {k: v for k, v in self.environ.items()
                   if not (k.startswith("RANKINGS_") or k == "FIRESTORE_EMULATOR_HOST") or k in PASSED}
        return environ | self.settings.given

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
    """The proof's lines as the night's own step's (`warning: ` first, where the log reads it)."""
    level, _, rest = message.partition(": ")
    said = f"{level}: prove: {rest}" if level in ("warning", "error") else f"prove: {message}"
    fetch.out(f"rankings-night: {auth.redact(said)}")


def max_drop_of(flags):
    """--max-drop's percent as the job reads it (the last one given wins), or None."""
    found = None
    for word, after in zip(flags, flags[1:] + [None]):
        text = after if word == "--max-drop" else word.split("=", 1)[1] if word.startswith("--max-drop=") else None
        try:
            found = found if text is None else float(text)
        except ValueError:
            pass    # the job refuses it before the fetch (check_flags)
    return found


def _signal_group(child, signum):
    try:
        os.killpg(child.pid, signum)
    except (ProcessLookupError, PermissionError):
        pass
