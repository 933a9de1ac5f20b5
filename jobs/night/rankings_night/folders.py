"""The fetch's DIR: `current`, a link to the newest night; the nights, folders named by their readTime in UTC
to the microsecond; `.partial-*`, a fetch in progress or killed; `.current.new`, the link swapped in. Clean-up
removes only a real folder so named and of the user running it; a partial one under the night's one lock."""
import contextlib
import os
import re
import shutil
import stat
import tempfile

from .files import owner_name
from .snapshot import format_time
from .statuses import CANT_CREATE, Failure

NIGHT = re.compile(r"^\d{8}T\d{6}(\.\d{6})?Z$")
PARTIAL_PREFIX = ".partial-"
KEEP = 7        # nights kept: a week of them to go back to


def sync(path):
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def current(directory):
    link = os.path.join(directory, "current")
    return os.path.realpath(link) if os.path.islink(link) else None


def held(directory):
    """(nights, bytes) the complete nights in DIR hold on disk, a file linked by many nights once."""
    nights, sizes = 0, {}
    with contextlib.suppress(OSError):
        for night in os.scandir(directory):
            if NIGHT.match(night.name) and night.is_dir(follow_symlinks=False):
                nights += 1
                with contextlib.suppress(OSError):
                    for entry in os.scandir(night.path):
                        if entry.is_file(follow_symlinks=False):
                            sizes[entry.inode()] = entry.stat(follow_symlinks=False).st_size
    return nights, sum(sizes.values())


class Run:
    """`with Run(directory, say) as night:` a fetch into night.folder, then night.commit(readTime). Any
    exception (a stop's too) removes the folder, current as it was; an OSError comes out as 73."""

    def __init__(self, directory, say):
        self.directory, self.say, self.prune_errors = directory, say, 0
        self.link = os.path.join(directory, "current")

    def __enter__(self):
        try:
            os.makedirs(self.directory, exist_ok=True)
            if os.path.lexists(self.link) and not os.path.islink(self.link):
                raise Failure(CANT_CREATE, f"{self.link} exists and is not a symbolic link; move it away")
            for name in os.listdir(self.directory):
                if name.startswith(PARTIAL_PREFIX):
                    self._remove(name, "a partial folder left by a fetch that was stopped")
            self.folder = tempfile.mkdtemp(prefix=PARTIAL_PREFIX, dir=self.directory)
            os.chmod(self.folder, 0o755)    # the job reads it as another user's night under cron
        except OSError as error:
            raise Failure(CANT_CREATE, f"cannot create a folder in {self.directory}: {error.strerror}") from None
        return self

    def __exit__(self, kind, error, _traceback):
        if kind is not None and self.folder is not None:    # partial, or renamed into place but not current
            shutil.rmtree(self.folder, ignore_errors=True)
        if isinstance(error, OSError):
            name = error.filename2 or error.filename     # a link that cannot be made: the link
            raise Failure(CANT_CREATE, f"{name + ': ' if name else ''}{error.strerror or error}; current "
                                       "unchanged") from None

    def commit(self, nanoseconds):
        """The folder synced, named by its readTime, then current switched to it in one rename (a reader sees
        the old night or the new one, never neither); old nights pruned to KEEP. The night's name."""
        for name in os.listdir(self.folder) + ["."]:   # its files, then itself
            sync(os.path.join(self.folder, name))
        name = format_time(nanoseconds).replace("-", "").replace(":", "")     # 20261127T050000.000001Z
        os.rename(self.folder, os.path.join(self.directory, name))
        self.folder, staging = os.path.join(self.directory, name), os.path.join(self.directory, ".current.new")
        with contextlib.suppress(FileNotFoundError):
            os.unlink(staging)      # left by a fetch killed or failed here
        os.symlink(name, staging)
        os.replace(staging, self.link)
        self.folder = None      # current now: nothing to remove on the way out, and nothing here fails the night
        try:
            for old in sorted(n for n in os.listdir(self.directory) if NIGHT.match(n))[:-KEEP]:
                if old != name:
                    self._remove(old, "an old night")
            sync(self.directory)
        except OSError as error:
            self.prune_errors += 1
            self.say(f"cannot prune or sync {self.directory} after switching current: {error.strerror}", "WARNING")
        return name

    def _remove(self, name, what):
        path = os.path.join(self.directory, name)
        info = os.lstat(path)
        kind = "folder" if stat.S_ISDIR(info.st_mode) else "file"
        if kind != "folder" or info.st_uid != os.geteuid():
            self.say(f"left alone {path}: {owner_name(info.st_uid)}'s {kind}, not a folder of "
                     f"{owner_name(os.geteuid())}, who runs the fetch", "WARNING")
        else:
            try:
                shutil.rmtree(path)
            except OSError as error:
                self.prune_errors += 1
                self.say(f"cannot remove {what}, {path}: {error.filename}: {error.strerror or error}", "WARNING")
