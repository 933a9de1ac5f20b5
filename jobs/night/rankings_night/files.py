"""Files the night writes beside other people's (a lock, a log, metrics, its history): created
with O_EXCL and O_NOFOLLOW and an explicit mode whatever the umask, so a link planted in their
place is never followed and a file made by one user never locks out another."""
import errno
import fcntl
import os
import secrets

_NEW = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC


def write_atomically(path, data, mode=0o644):
    """path replaced by data in one rename: a new file in the same directory, written, synced."""
    directory, name = os.path.split(path)
    staging = os.path.join(directory, f".{name}.{secrets.token_hex(4)}.tmp")
    fd = os.open(staging, _NEW, mode)
    try:
        os.fchmod(fd, mode)
        with os.fdopen(fd, "wb", closefd=False) as out:
            out.write(data)
        os.fsync(fd)
        os.close(fd)
        fd = None
        os.rename(staging, path)
    except BaseException:
        if fd is not None:
            os.close(fd)
        try:
            os.unlink(staging)
        except OSError:
            pass
        raise


def open_append(path, mode=0o644):
    """A log file, appended to; made with `mode` when it does not exist. Never through a link."""
    try:
        fd = os.open(path, _NEW | os.O_APPEND, mode)
        os.fchmod(fd, mode)
    except FileExistsError:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_NOFOLLOW | os.O_CLOEXEC)
    return fd


def lock(path):
    """flock(2) on path without waiting: the descriptor, or None while another process holds it.
    An existing lock is only opened for reading (flock needs no more: one made by root stays
    usable by the job's user); a new one is made 0644. Not inherited by children."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except FileNotFoundError:
        try:
            fd = os.open(path, _NEW, 0o644)
            os.fchmod(fd, 0o644)
        except FileExistsError:
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as error:
        os.close(fd)
        if error.errno in (errno.EWOULDBLOCK, errno.EAGAIN):
            return None
        raise
    return fd
