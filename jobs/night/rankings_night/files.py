"""Files the night writes beside other people's: made with O_EXCL, O_NOFOLLOW and mode 0644 whatever the umask,
so a planted link is never followed and one user's file never locks out another; an existing one opened only as a
regular file, neither following a link nor waiting (a FIFO planted in node_exporter's folder would stall the night)."""
import contextlib
import errno
import fcntl
import os
import pwd
import secrets
import stat

from .statuses import USAGE, Failure

MODE = 0o644
KINDS = {stat.S_IFREG: None, stat.S_IFIFO: "a FIFO", stat.S_IFDIR: "a directory", stat.S_IFSOCK: "a socket"}


def open_regular(path):
    """An existing regular file's descriptor for reading; OSError for anything else (EINVAL: not a regular file)."""
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise OSError(errno.EINVAL, "not a regular file", path)
    os.set_blocking(fd, True)
    return fd


def read_regular(path, most):
    """Up to `most` bytes of an existing regular file (open_regular), and whether it had more."""
    with os.fdopen(open_regular(path), "rb") as text:
        data = text.read(most + 1)
    return data[:most], len(data) > most


def not_regular(path):
    """What the entry at path is, when there is one and it is no regular file (a link to one is one)."""
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        return "a link to nothing" if os.path.islink(path) else None
    return KINDS.get(stat.S_IFMT(mode), "a device")


def create(path, encoding=None):
    out = os.fdopen(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, MODE),
                    "w" if encoding else "wb", encoding=encoding)
    os.fchmod(out.fileno(), MODE)    # whatever the umask
    return out


def write_atomically(path, data):
    """path replaced by data in one rename: a new file in the same directory, written, synced."""
    staging = os.path.join(os.path.dirname(path), f".{os.path.basename(path)}.{secrets.token_hex(4)}.tmp")
    try:
        with create(staging) as out:
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
        os.rename(staging, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(staging)
        raise


def lock(path):
    """flock(2) without waiting: the descriptor (not inherited), or None while another process holds it. Made
    0644, then opened for reading only: flock needs no more, so one made by root stays usable by the job's user."""
    with contextlib.suppress(FileExistsError):
        create(path).close()
    fd = open_regular(path)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        return None
    return fd


def owner_name(uid):
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return str(uid)


def refuse_root(place, command, in_container=False):
    """Root working where another user keeps the files would leave files there the user's runs could not
    replace: 64 before anything is made (a path not there yet: its nearest parent)."""
    place = os.path.abspath(place)
    while not os.path.lexists(place) and place != os.path.dirname(place):
        place = os.path.dirname(place)
    try:
        uid = os.stat(place).st_uid if os.geteuid() == 0 else 0
    except OSError:     # a link to nothing: no owner to defer to
        return
    if uid != 0:
        user = owner_name(uid)
        how = (f"start the container as that user (podman/docker --user {uid}, Kubernetes securityContext.runAsUser: "
               f"{uid})" if in_container else f"sudo -u {user} {command}")
        raise Failure(USAGE, f"running as root, but {place} belongs to {user}: run it as that user ({how}); "
                             "nothing was done")
