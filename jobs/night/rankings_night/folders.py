"""The night folders under the fetch's DIR, and one fetch's life among them. DIR holds, and this
module touches nothing else in it:
  current                 a symbolic link to the newest complete night (relative: NIGHT)
  NIGHT                   a complete night: the fetch's start in UTC to the microsecond,
                          20261124T050000.123456Z (earlier versions: 20261124T050000Z)
  .partial-XXXXXXXX       a fetch in progress, or the leftover of one that was killed
  .current.new            the link being swapped in for current (for an instant)
  .rankings-fetch.lock    flock(2)ed by the one fetch running in DIR
Clean-up removes only a real directory named as a night or a partial folder, owned by the user
running it, and a partial folder only under the lock (so its fetch is provably dead)."""
import os
import pwd
import re
import shutil
import signal
import stat
import tempfile
import time

from . import files
from .statuses import CANT_CREATE, TEMPFAIL, UNAVAILABLE, USAGE, Failure, status_of
from .transport import FirestoreError

NIGHT = re.compile(r"^\d{8}T\d{6}(\.\d{6})?Z$")
PARTIAL_PREFIX = ".partial-"
STAGING_LINK = ".current.new"
# The alarm behind the deadline rings this much later: calls that watch Run.ends end by
# themselves and say what they were doing; the alarm stops whatever does not.
GRACE_SECONDS = 2


class Stopped(BaseException):
    """A signal or the deadline: a BaseException, so no `except Exception` on the way up swallows
    it before the clean-up."""

    def __init__(self, status, message):
        super().__init__(message)
        self.status = status


def night_name(directory, nanoseconds):
    """The start time's name; a microsecond later while it is taken (a clock stepped back)."""
    while True:
        name = time.strftime("%Y%m%dT%H%M%S", time.gmtime(nanoseconds // 10**9)) \
            + f".{nanoseconds % 10**9 // 1000:06d}Z"
        if not os.path.lexists(os.path.join(directory, name)):
            return name
        nanoseconds += 1000


def owner_name(uid):
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return str(uid)


def refuse_root(place, command, in_container=False):
    """Root working where another user keeps the files would leave files there the user's runs
    could not replace: 64 before anything is made (a path not there yet: its nearest parent)."""
    if os.geteuid() != 0:
        return
    place = os.path.abspath(place)
    while not os.path.lexists(place) and place != os.path.dirname(place):
        place = os.path.dirname(place)
    try:
        uid = os.stat(place).st_uid
    except OSError:
        return
    if uid != 0:
        user = owner_name(uid)
        how = (f"start the container as that user (podman/docker --user {uid}, Kubernetes "
               f"securityContext.runAsUser: {uid})" if in_container else f"sudo -u {user} {command}")
        raise Failure(USAGE, f"running as root, but {place} belongs to {user}: run it as that user "
                             f"({how}); nothing was done")


def sync_tree(folder):
    for parent, _, names in os.walk(folder):
        for name in names + ["."]:
            fd = os.open(os.path.join(parent, name), os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)


def held(directory):
    """(nights, bytes) the complete nights in DIR hold on disk: each file once however many nights
    link it (a layer shared by hard links is one inode). Unreadable entries are left out."""
    try:
        folders = [os.path.join(directory, n) for n in os.listdir(directory) if NIGHT.match(n)]
    except OSError:
        return 0, 0
    folders = [f for f in folders if os.path.isdir(f) and not os.path.islink(f)]
    sizes = {}
    for folder in folders:
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for entry in entries:
            try:
                info = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            if stat.S_ISREG(info.st_mode):
                sizes[info.st_dev, info.st_ino] = info.st_size
    return len(folders), sum(sizes.values())


class Run:
    """One fetch into DIR: `with Run(...) as night:` night.start(), the fetch into night.folder, then
    night.commit(keep). Leaving it by any failure removes the partial folder and leaves current and
    every night as they were: an OSError is 73 naming the file, a stop 128 + its signal, the deadline 69."""

    def __init__(self, program, directory, deadline, say, named="RANKINGS_FIRESTORE_DEADLINE_SECONDS"):
        self.program, self.directory, self.deadline, self.say = program, directory, deadline, say
        self.named = named      # the setting the deadline comes from, for the words at its end
        self.link = os.path.join(directory, "current")
        self.name = self.folder = self._final = self._lock = self.ends = None
        self.prune_errors = 0
        self._committing = self._stopping = False

    def __enter__(self):
        refuse_root(self.directory, f"{self.program} {self.directory}")
        self.started = time.time()
        stops = (signal.SIGTERM, signal.SIGHUP, signal.SIGINT, signal.SIGALRM)
        self._handlers = {signum: signal.signal(signum, self._on_signal) for signum in stops}
        # A parent may hand down a mask that blocks them; the deadline and a stop must arrive.
        self._mask = signal.pthread_sigmask(signal.SIG_UNBLOCK, stops)
        return self

    def _on_signal(self, signum, _frame):
        if self._committing or self._stopping:
            return
        self._stopping = True
        if signum == signal.SIGALRM:
            raise Stopped(UNAVAILABLE, f"the fetch did not end within {self.named} "
                                       f"({self.deadline:g} s); stopped, current unchanged")
        raise Stopped(128 + signum, f"stopped by {signal.Signals(signum).name}; current unchanged")

    def __exit__(self, kind, error, _traceback):
        self._stopping = True
        signal.setitimer(signal.ITIMER_REAL, 0)
        replacement = None
        if isinstance(error, Stopped):
            replacement = Failure(error.status, str(error))
        elif isinstance(error, (Failure, FirestoreError)):
            if status_of(error) == UNAVAILABLE and self.ends is not None and time.monotonic() >= self.ends:
                replacement = Failure(UNAVAILABLE, f"the fetch did not end within {self.named} ({self.deadline:g} s): "
                                                   f"{error}")
        elif isinstance(error, OSError):
            name = error.filename2 or error.filename     # a link that cannot be made: the link
            replacement = Failure(CANT_CREATE, (f"{name}: " if name else "")
                                  + f"{error.strerror or error}; current unchanged")
        if self._lock is not None:
            if kind is not None:
                self._discard()
            os.close(self._lock)
            self._lock = None
        for signum, handler in self._handlers.items():
            signal.signal(signum, handler)
        signal.pthread_sigmask(signal.SIG_SETMASK, self._mask)
        if replacement is not None:
            raise replacement from None
        return False

    def start(self):
        """Everything that can refuse the run, checked before anything is fetched."""
        self.ends = time.monotonic() + self.deadline
        signal.setitimer(signal.ITIMER_REAL, self.deadline + GRACE_SECONDS)
        try:
            os.makedirs(self.directory, exist_ok=True)
        except OSError as error:
            raise Failure(CANT_CREATE, f"cannot create {self.directory}: {error.strerror}") from None
        lock = os.path.join(self.directory, ".rankings-fetch.lock")
        try:
            self._lock = files.lock(lock)
        except OSError as error:
            raise Failure(CANT_CREATE, f"cannot lock {lock}: {error.strerror}") from None
        if self._lock is None:
            raise Failure(TEMPFAIL, f"another fetch holds {lock}; not starting a second one")
        self._check_link(" (nothing was fetched)")
        for name in self._entries():
            if name.startswith(PARTIAL_PREFIX):
                self._remove(name, "a partial folder left by a run that was stopped")
        self.name = night_name(self.directory, time.time_ns())
        try:
            self.folder = tempfile.mkdtemp(prefix=PARTIAL_PREFIX, dir=self.directory)
            os.chmod(self.folder, 0o755)    # the job reads it as another user's night under cron
        except OSError as error:
            raise Failure(CANT_CREATE, f"cannot create a folder in {self.directory}: {error.strerror}") from None

    def _check_link(self, after=""):
        if os.path.lexists(self.link) and not os.path.islink(self.link):
            raise Failure(CANT_CREATE, f"{self.link} exists and is not a symbolic link; move it away{after}")

    def current(self):
        return os.path.realpath(self.link) if os.path.islink(self.link) else None

    def commit(self, keep):
        """The folder synced, renamed to its night's name, then DIR/current pointed at it in one
        rename (a reader sees the old night or the new one, never neither); old nights pruned."""
        sync_tree(self.folder)
        final = os.path.join(self.directory, self.name)
        self._committing = True
        signal.setitimer(signal.ITIMER_REAL, 0)
        if os.path.lexists(final):
            raise Failure(CANT_CREATE, f"{final} already exists")
        os.rename(self.folder, final)
        self.folder, self._final = None, final
        self._check_link()
        staging = os.path.join(self.directory, STAGING_LINK)
        if os.path.lexists(staging):
            os.unlink(staging)
        os.symlink(self.name, staging)
        os.replace(staging, self.link)
        self._final = None
        try:
            fd = os.open(self.directory, os.O_RDONLY | os.O_DIRECTORY)
            os.fsync(fd)
            os.close(fd)
        except OSError as error:
            self.say(f"warning: cannot sync {self.directory} after switching current: {error.strerror}")
        ours = sorted(n for n in self._entries() if NIGHT.match(n) and self._ours(n))
        for name in ours[:-keep]:
            if name != self.name:
                self._remove(name, "an old night")

    def _entries(self):
        try:
            return os.listdir(self.directory)
        except OSError as error:
            self._warn(f"cannot list {self.directory}: {error.strerror}")
            return []

    def _ours(self, name):
        path = os.path.join(self.directory, name)
        try:
            info = os.lstat(path)
        except OSError:
            return False
        if not stat.S_ISDIR(info.st_mode):
            self.say(f"warning: left alone {path}: not a folder (a night is a folder the fetch made)")
            return False
        if info.st_uid != os.geteuid():
            self.say(f"warning: left alone {path}: it belongs to {owner_name(info.st_uid)}, "
                     f"not {owner_name(os.geteuid())}, who runs the fetch")
            return False
        return True

    def _remove(self, name, what):
        if not self._ours(name):
            return
        path, problems = os.path.join(self.directory, name), []
        shutil.rmtree(path, onerror=lambda _function, where, info: problems.append((where, info[1])))
        if problems:
            where, error = problems[0]
            self._warn(f"cannot remove {what}, {path}: {where}: {getattr(error, 'strerror', None) or error}")

    def _warn(self, message):
        self.prune_errors += 1
        self.say(f"warning: {message}")

    def _discard(self):
        """A failed run's folder, partial or renamed into place; whatever stays, the next run removes."""
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
