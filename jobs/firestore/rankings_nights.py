# The night folders under rankings-fetch-firestore's DIR, and one fetch's life among them: who
# may fetch there (root is turned away where another user keeps them; one fetch at a time), the
# partial folder a fetch writes into, the one rename that makes it a night and the one that
# points DIR/current at it, the clean-up of old nights and of dead partial folders, the run's
# deadline and signals, and rankings-fetch.prom. How a night's content is fetched is the hook's.
#
# DIR holds, and this module touches nothing else in it:
#   current                 a symbolic link to the newest complete night (relative: NIGHT)
#   NIGHT                   a complete night: the fetch's start time in UTC to the microsecond,
#                           20261124T050000.123456Z (earlier versions: 20261124T050000Z); names
#                           sort in time order and no two runs share one
#   .partial-XXXXXXXX       a fetch in progress, or the leftover of one that was killed
#   .current.new            the link being swapped in for current (for an instant)
#   .rankings-fetch.lock    flock(2)ed by the one fetch running in DIR
#
# Clean-up removes only what this hook made: a real directory (never a symbolic link or a file
# with a night's name), named as a night or a partial folder, owned by the user running the
# hook. Whatever else is there is left alone and named in a warning. A partial folder is removed
# only by a run that holds the lock, so it is provably dead (only the lock's holder makes one).
#
# Only Python 3's standard library, like the hooks.
import errno
import fcntl
import os
import pwd
import re
import shutil
import signal
import stat
import sys
import tempfile
import time

import rankings_firestore as fs

EX_TEMPFAIL = 75
NIGHT = re.compile(r"^\d{8}T\d{6}(\.\d{6})?Z$")
PARTIAL_PREFIX = ".partial-"
LOCK_NAME = ".rankings-fetch.lock"
STAGING_LINK = ".current.new"
# Below the 25 minutes the fetch unit and rankings-cron give one try (RANKINGS_FETCH_TIMEOUT_SECONDS,
# default 1500), so a slow fetch stops itself, removes its partial folder and says why before it
# would be killed.
DEADLINE_SECONDS = 1200
# The alarm behind the deadline rings this much later: calls that watch Run.ends end by
# themselves at the deadline and say what they were doing; the alarm stops whatever does not
# (a token command, a sync to a slow disk).
DEADLINE_GRACE_SECONDS = 2


class Stopped(BaseException):
    """A signal or the deadline ended the run. A BaseException, like KeyboardInterrupt, so no
    `except Exception` on the way up can swallow it: the run must unwind to its clean-up."""

    def __init__(self, status, message):
        super().__init__(message)
        self.status = status


def night_name(directory, nanoseconds):
    """The night's name for a start time; one microsecond later while the name is taken (a
    clock stepped back), so a name is never reused."""
    seconds, rest = divmod(nanoseconds, 10**9)
    micro = rest // 1000
    while True:
        name = time.strftime("%Y%m%dT%H%M%S", time.gmtime(seconds)) + f".{micro:06d}Z"
        if not os.path.lexists(os.path.join(directory, name)):
            return name
        micro += 1
        if micro == 10**6:
            seconds, micro = seconds + 1, 0


def owner_name(uid):
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return str(uid)


def refuse_root(directory, program):
    """Root fetching where another user keeps the nights would leave root's folders there, which
    that user's runs could neither prune nor replace: turned away (64) before anything is made,
    as rankings-cron turns root away. DIR may not exist yet: its nearest existing parent counts."""
    if os.geteuid() != 0:
        return
    place = os.path.abspath(directory)
    while not os.path.lexists(place) and place != os.path.dirname(place):
        place = os.path.dirname(place)
    try:
        uid = os.stat(place).st_uid
    except OSError:
        return
    if uid != 0:
        user = owner_name(uid)
        raise fs.Failure(fs.EX_USAGE, f"running as root, but {place} belongs to {user}: run it as that user "
                                      f"(sudo -u {user} {program} {directory}); nothing was fetched")


def sync_directory(path):
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def sync_tree(folder):
    for parent, _, files in os.walk(folder):
        for name in files:
            fd = os.open(os.path.join(parent, name), os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)
        sync_directory(parent)


class Run:
    """One fetch into DIR, as a context manager around the hook's own work:

        with Run(program, directory, environ) as night:
            ...settings...
            night.start()              # lock, current checked, dead partials gone, night.folder made
            night.record = fetch(night.folder, night.name)    # what .night.json says
            night.commit(keep)         # synced, renamed, current switched, old nights pruned

    Leaving it by any failure removes the partial folder and leaves current and every night as
    they were; it always writes rankings-fetch.prom (when RANKINGS_METRICS is set). An OSError
    becomes a failure with status 73 and a one-line message; SIGTERM, SIGHUP and SIGINT become
    128 + the signal's number, and the deadline 69, once the partial folder is gone."""

    def __init__(self, program, directory, environ):
        self.program = program
        self.directory = directory
        self.environ = environ
        self.name = None
        self.folder = None
        # The night's record (rankings_snapshot): its counts go into rankings-fetch.prom.
        self.record = None
        # Entries the clean-up could not remove (rankings_fetch_prune_errors).
        self.prune_errors = 0
        # time.monotonic() by which the fetch must be over (set by start()).
        self.ends = None
        self._lock = None
        self._final = None
        # Set once the rename into place begins: from then on a signal no longer stops the run,
        # which ends as it would have (the new night is current, or the failure is reported).
        self._committing = False
        self._stopping = False
        self._handlers = {}

    # --- the run's bounds ------------------------------------------------------------------

    def __enter__(self):
        refuse_root(self.directory, self.program)
        self.started = time.time()
        stops = (signal.SIGTERM, signal.SIGHUP, signal.SIGINT, signal.SIGALRM)
        for signum in stops:
            self._handlers[signum] = signal.signal(signum, self._on_signal)
        # A parent may hand down a mask that blocks them; the deadline and a stop must arrive.
        self._mask = signal.pthread_sigmask(signal.SIG_UNBLOCK, stops)
        return self

    def _on_signal(self, signum, _frame):
        if self._committing or self._stopping:
            return
        self._stopping = True
        if signum == signal.SIGALRM:
            raise Stopped(fs.EX_UNAVAILABLE, f"the fetch did not end within RANKINGS_FIRESTORE_DEADLINE_SECONDS "
                                             f"({self.deadline:g} s); stopped, current unchanged")
        raise Stopped(128 + signum, f"stopped by {signal.Signals(signum).name}; current unchanged")

    def __exit__(self, kind, error, _traceback):
        # A signal during the clean-up must not cut it short.
        self._stopping = True
        signal.setitimer(signal.ITIMER_REAL, 0)
        status = 0
        replacement = None
        if kind is not None:
            if self._lock is not None:
                self._discard()
            if isinstance(error, (fs.Failure, Stopped)):
                status = error.status
                if (isinstance(error, fs.Failure) and status == fs.EX_UNAVAILABLE and self.ends is not None
                        and time.monotonic() >= self.ends):
                    # A call that stopped at the deadline: the reason first, then what it was doing.
                    replacement = fs.Failure(status, f"the fetch did not end within RANKINGS_FIRESTORE_DEADLINE_SECONDS "
                                                     f"({self.deadline:g} s): {error}")
            elif isinstance(error, OSError):
                status = fs.EX_CANTCREAT
                where = f"{error.filename}: " if error.filename else ""
                replacement = fs.Failure(status, f"{where}{error.strerror or error}; current unchanged")
            else:
                # A bug: the status the hook's main() gives it (70 where it defines EX_SOFTWARE).
                status = getattr(fs, "EX_SOFTWARE", 1)
            if isinstance(error, Stopped):
                replacement = fs.Failure(status, str(error))
        try:
            self.write_metrics(status)
        finally:
            if self._lock is not None:
                os.close(self._lock)
                self._lock = None
            for signum, handler in self._handlers.items():
                signal.signal(signum, handler)
            signal.pthread_sigmask(signal.SIG_SETMASK, self._mask)
        if replacement is not None:
            raise replacement from None
        return False

    # --- before the fetch ------------------------------------------------------------------

    def start(self):
        """Everything that can refuse the run is checked here, before anything is fetched."""
        self.deadline = fs.Settings.number(self.environ, "RANKINGS_FIRESTORE_DEADLINE_SECONDS", DEADLINE_SECONDS, float)
        self.ends = time.monotonic() + self.deadline
        signal.setitimer(signal.ITIMER_REAL, self.deadline + DEADLINE_GRACE_SECONDS)
        directory = self.directory
        try:
            os.makedirs(directory, exist_ok=True)
        except OSError as error:
            raise fs.Failure(fs.EX_CANTCREAT, f"cannot create {directory}: {error.strerror}") from None
        self._take_lock()
        link = os.path.join(directory, "current")
        if os.path.lexists(link) and not os.path.islink(link):
            raise fs.Failure(fs.EX_CANTCREAT, f"{link} exists and is not a symbolic link; move it away "
                                              f"(nothing was fetched)")
        self._remove_dead_partials()
        self.name = night_name(directory, time.time_ns())
        try:
            self.folder = _make_partial(directory)
        except OSError as error:
            raise fs.Failure(fs.EX_CANTCREAT, f"cannot create a folder in {directory}: {error.strerror}") from None

    def _take_lock(self):
        """flock(2) on DIR/.rankings-fetch.lock, without waiting. Opened read-only when it
        exists (flock needs no more) and created 0644 otherwise, whatever the umask, so the
        lock of one user never keeps another out. Not inherited by the hook's children
        (O_CLOEXEC): one left running cannot hold it after the run."""
        path = os.path.join(self.directory, LOCK_NAME)
        try:
            try:
                fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
            except FileNotFoundError:
                fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
                os.fchmod(fd, 0o644)
        except OSError as error:
            raise fs.Failure(fs.EX_CANTCREAT, f"cannot open the lock {path}: {error.strerror}") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as error:
            os.close(fd)
            if error.errno in (errno.EWOULDBLOCK, errno.EAGAIN):
                raise fs.Failure(EX_TEMPFAIL, f"another fetch holds {path}; not starting a second one") from None
            raise fs.Failure(fs.EX_CANTCREAT, f"cannot lock {path}: {error.strerror}") from None
        self._lock = fd

    def _remove_dead_partials(self):
        """Partial folders left by a run that was killed (SIGKILL, a power cut): with the lock
        held, no other run is writing one."""
        for name in self._entries():
            if name.startswith(PARTIAL_PREFIX):
                self._remove(name, "a partial folder left by a run that was stopped")

    # --- after the fetch -------------------------------------------------------------------

    def commit(self, keep):
        """The fetched folder synced to disk, renamed to its night's name, then DIR/current
        pointed at it; then old nights pruned, which can only warn."""
        sync_tree(self.folder)
        final = os.path.join(self.directory, self.name)
        self._committing = True
        signal.setitimer(signal.ITIMER_REAL, 0)
        if os.path.lexists(final):
            raise fs.Failure(fs.EX_CANTCREAT, f"{final} already exists")
        os.rename(self.folder, final)
        self.folder, self._final = None, final
        # DIR/current names the new night, replaced in one rename: a reader sees the old night
        # or the new one, never neither.
        link = os.path.join(self.directory, "current")
        if os.path.lexists(link) and not os.path.islink(link):
            raise fs.Failure(fs.EX_CANTCREAT, f"{link} exists and is not a symbolic link; move it away")
        staging = os.path.join(self.directory, STAGING_LINK)
        if os.path.lexists(staging):
            os.unlink(staging)
        os.symlink(self.name, staging)
        os.replace(staging, link)
        self._final = None
        try:
            sync_directory(self.directory)
        except OSError as error:
            fs.say(self.program, f"warning: cannot sync {self.directory} after switching current: {error.strerror}")
        self.prune(keep)

    def prune(self, keep):
        """The newest KEEP nights this hook made stay, and whatever current names; older ones go.
        A failure is a warning and counts in rankings_fetch_prune_errors, never the run's."""
        link = os.path.join(self.directory, "current")
        try:
            current = os.readlink(link)
        except OSError:
            current = self.name
        ours = sorted(n for n in self._entries() if NIGHT.match(n) and self._ours(n))
        for name in ours[:-keep]:
            if name != current:
                self._remove(name, "an old night")

    def _entries(self):
        try:
            return os.listdir(self.directory)
        except OSError as error:
            self._warn(f"cannot list {self.directory}: {error.strerror}")
            return []

    def _ours(self, name):
        """A real directory owned by this user; anything else with a night's name is named once."""
        path = os.path.join(self.directory, name)
        try:
            info = os.lstat(path)
        except OSError:
            return False
        if not stat.S_ISDIR(info.st_mode):
            fs.say(self.program, f"warning: left alone {path}: not a folder (a night is a folder this hook made)")
            return False
        if info.st_uid != os.geteuid():
            fs.say(self.program, f"warning: left alone {path}: it belongs to {owner_name(info.st_uid)}, "
                                 f"not {owner_name(os.geteuid())}, who runs the fetch")
            return False
        return True

    def _remove(self, name, what):
        path = os.path.join(self.directory, name)
        if not self._ours(name):
            return
        problems = []
        if sys.version_info >= (3, 12):
            shutil.rmtree(path, onexc=lambda _function, where, error: problems.append((where, error)))
        else:
            shutil.rmtree(path, onerror=lambda _function, where, info: problems.append((where, info[1])))
        if problems:
            where, error = problems[0]
            self._warn(f"cannot remove {what}, {path}: {where}: {getattr(error, 'strerror', None) or error}")

    def _warn(self, message):
        self.prune_errors += 1
        fs.say(self.program, f"warning: {message}")

    def _discard(self):
        """A failed run's folder: the partial one, or the night renamed into place when current
        could not be switched to it. Best effort: whatever stays is removed by the next run."""
        for path in (self.folder, self._final):
            if path is not None:
                shutil.rmtree(path, ignore_errors=True)
        self.folder = self._final = None
        staging = os.path.join(self.directory, STAGING_LINK)
        try:
            if os.path.islink(staging):
                os.unlink(staging)
        except OSError:
            pass

    # --- metrics ---------------------------------------------------------------------------

    def write_metrics(self, status):
        """rankings-fetch.prom beside RANKINGS_METRICS, for node_exporter's textfile collector: the
        job's own file cannot say anything when the fetch keeps the job from running. The last
        success is carried over from the previous file when this run failed."""
        metrics = self.environ.get("RANKINGS_METRICS", "")
        if not metrics:
            return
        path = os.path.join(os.path.dirname(metrics), "rankings-fetch.prom")
        ended = time.time()
        last_success = ended if status == 0 else None
        if last_success is None:
            try:
                with open(path, encoding="utf-8") as old:
                    for line in old:
                        if line.startswith("rankings_fetch_last_success_timestamp_seconds "):
                            last_success = float(line.split()[1])
            except (OSError, ValueError, IndexError):
                pass
        lines = [
            ("rankings_fetch_last_run_timestamp_seconds", "Unix time at which the last fetch ended.", f"{ended:.3f}"),
            ("rankings_fetch_last_run_duration_seconds", "How long the last fetch took.", f"{ended - self.started:.3f}"),
            ("rankings_fetch_last_run_exit_status", "Exit status of the last fetch; 0 is success.", str(status)),
            ("rankings_fetch_prune_errors", "Entries the last fetch's clean-up could not remove (old nights, "
                                            "partial folders of stopped runs).", str(self.prune_errors)),
        ]
        if last_success is not None:
            lines.append(("rankings_fetch_last_success_timestamp_seconds",
                          "Unix time at which a fetch last switched current.", f"{last_success:.3f}"))
        record = self.record or {}
        if "snapshot_documents" in record:
            lines += [
                ("rankings_fetch_last_run_documents", "Documents the last rest fetch's night holds.",
                 str(record["snapshot_documents"])),
                ("rankings_fetch_documents_read", "Documents Firestore returned to the last rest fetch (what it "
                                                  "bills as reads, besides one per 1,000 counted).",
                 str(record["documents_read"])),
                ("rankings_fetch_snapshot_documents", "Documents in the last rest fetch's night.",
                 str(record["snapshot_documents"])),
                ("rankings_fetch_full", "1 when the last rest fetch read the whole collection, 0 when it read "
                                        "only what changed (or a window).", "1" if record["mode"] == "full" else "0"),
                ("rankings_fetch_drift_documents", "Documents the incremental chain held wrong, found by the "
                                                   "last rest fetch (0 when it found none).",
                 str(record["drift_documents"])),
            ]
        text = "".join(f"# HELP {n} {h}\n# TYPE {n} gauge\n{n} {v}\n" for n, h, v in lines)
        staging = f"{path}.{os.getpid()}.tmp"
        try:
            with open(staging, "w", encoding="utf-8") as out:
                out.write(text)
            os.replace(staging, path)
        except OSError as error:
            fs.say(self.program, f"warning: cannot write {path}: {error.strerror}")
            try:
                os.unlink(staging)
            except OSError:
                pass


def _make_partial(directory):
    """A new .partial-XXXXXXXX folder, 0755 whatever the umask (the job reads it as another
    user's night under cron)."""
    folder = tempfile.mkdtemp(prefix=PARTIAL_PREFIX, dir=directory)
    os.chmod(folder, 0o755)
    return folder
