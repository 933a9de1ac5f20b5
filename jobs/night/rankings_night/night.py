"""The night: fetch, aggregate every board, publish, each a child process under one policy. At
most one night at a time (the lock); each try of a step bounded in time (TERM, then KILL a minute
later, with everything it started); a failed try tried again only when another can succeed, up to
RANKINGS_RETRIES more times, RANKINGS_RETRY_PAUSE_SECONDS apart; a step runs only after the one
before it succeeded. Every line a step prints is relayed to the night's log; what each step did
goes into the history (`rankings-night status`) and rankings-night.prom, however the night ends."""
import os
import signal
import subprocess
import sys
import threading
import time

from . import files, history, metrics, statuses
from .statuses import CANT_CREATE, STOPPED, TEMPFAIL, UNAVAILABLE, Failure

HERE = os.path.dirname(os.path.abspath(__file__))
JOB_SECONDS, PUBLISH_SECONDS, KILL_AFTER = 1500, 600, 60
MONTHLY_FLAGS = ["--max-drop", "100", "--allow-empty", "--since", "-30d"]
FETCH_HOOK = "rankings-fetch-firestore"


def utc(seconds):
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds)) + f".{int(seconds * 1000) % 1000:03d}Z"


class Step:
    def __init__(self, name, commands, limit, isolate=False):
        self.name, self.commands, self.limit, self.isolate = name, commands, limit, isolate
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

    # --- what runs ---------------------------------------------------------------------------

    def boards(self):
        """(name, output, flags) of every board, all made from the one snapshot the night reads."""
        s = self.settings
        boards = [("all_time", s.output, [])]
        if s.monthly == "yes":
            boards.append(("monthly", s.monthly_output or os.path.join(self.state, "monthly.json"), MONTHLY_FLAGS))
        return boards

    def steps(self, exports):
        s, computed_at = self.settings, "COMPUTED_AT"
        steps = []
        if s.fetch:
            steps.append(Step("fetch", [s.fetch], s.fetch_timeout_seconds))
        jobs = []
        for name, output, flags in self.boards():
            metrics_flag = ["--metrics", s.metrics] if s.metrics and name == "all_time" else []
            jobs.append([s.bin, "aggregate", "--computed-at", computed_at] + s.flags + self.extra_flags + flags
                        + metrics_flag + ["--output", output, exports])
        steps.append(Step("aggregate", jobs, JOB_SECONDS, isolate=True))
        if s.publish:
            steps.append(Step("publish", [s.publish + [output] for _, output, _ in self.boards()], PUBLISH_SECONDS))
        return steps

    def child_environment(self):
        """The settings as the steps' environment: the ones read, never other RANKINGS_* variables
        of the caller's (but `rankings`'s own, RANKINGS_CPU and RANKINGS_INFLATE)."""
        from .settings import PASSED
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
            from .cli import zone
            attempt = self.environ.get("CLOUD_RUN_TASK_ATTEMPT")     # the platform's retry of this task
            self.log(f"night starting ({self.scheduler}; New York time {zone()(self.started):%Y-%m-%d %H:%M:%S %Z}"
                     + (f"; CLOUD_RUN_TASK_ATTEMPT {attempt}" if attempt is not None else "") + ")",
                     **({"task_attempt": attempt} if attempt is not None else {}))
            exports = self.settings.exports
            for step in self.steps(exports):
                steps.append(step)
                if step.name == "aggregate":
                    # Both boards from one snapshot, whatever a later fetch does to `current`, and
                    # one computed_at: the step's start, after the fetch, so that a window the fetch
                    # read (RANKINGS_FIRESTORE_SINCE=-30d) holds all that --since -30d counts.
                    resolved, computed_at = os.path.realpath(exports), utc(time.time())
                    step.commands = [[computed_at if w == "COMPUTED_AT" else w for w in c[:-1]] + [resolved]
                                     for c in step.commands]
                self.run_step(step)
                if step.status != 0:
                    break
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
            for number, argv in enumerate(step.commands):
                if number < len(step.boards):
                    continue    # published or written on an earlier try
                self.log(f"{step.name}: try {step.tries} of {tries}: {' '.join(argv)}")
                step.status, step.why = self.attempt(argv, step.limit, step.isolate)
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
                    from .log import severity_of
                    self.log(line, severity_of(line), own=False)
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


def _signal_group(child, signum):
    try:
        os.killpg(child.pid, signum)
    except (ProcessLookupError, PermissionError):
        pass
