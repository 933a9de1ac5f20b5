"""Files the night writes beside other people's: created with O_EXCL and O_NOFOLLOW and an explicit
mode whatever the umask, so a planted link is never followed and one user's file never locks out
another. An existing one is opened only as a regular file, without following a link or waiting:
a FIFO planted in its place (anyone who can write node_exporter's folder can) would stall the night."""
import errno
import fcntl
import os
import secrets
import stat

MODE = 0o644
_NEW = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC


def open_regular(path, flags=os.O_RDONLY):
    """An existing regular file's descriptor, opened with O_NONBLOCK and O_NOFOLLOW (so neither
    a FIFO nor a link can hold or redirect the open), then made blocking again. Anything else
    raises OSError: ELOOP for a link, EINVAL "not a regular file" for a FIFO, device or socket."""
    try:
        fd = os.open(path, flags | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as error:
        if error.errno == errno.ENXIO:      # a FIFO opened for writing with no reader
            raise OSError(errno.EINVAL, "not a regular file", path) from None
        raise
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(errno.EINVAL, "not a regular file", path)
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd


def read_regular(path, most):
    """Up to `most` bytes of an existing regular file (open_regular), and whether it had more."""
    fd = open_regular(path)
    with os.fdopen(fd, "rb") as text:
        data = text.read(most + 1)
    return data[:most], len(data) > most


def _new(path, mode=MODE, flags=0):
    """A new file's descriptor (never an existing one, never through a link), `mode` whatever the umask."""
    fd = os.open(path, _NEW | flags, mode)
    os.fchmod(fd, mode)
    return fd


def create(path, mode=MODE, encoding=None):
    """A new file for writing (_new): a file object, text with an encoding."""
    fd = _new(path, mode)
    try:
        return os.fdopen(fd, "w" if encoding else "wb", encoding=encoding)
    except BaseException:
        os.close(fd)
        raise


def write_atomically(path, data, mode=MODE):
    """path replaced by data in one rename: a new file in the same directory, written, synced."""
    directory, name = os.path.split(path)
    staging = os.path.join(directory, f".{name}.{secrets.token_hex(4)}.tmp")
    fd = _new(staging, mode)
    try:
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


def open_append(path, mode=MODE):
    """A log file's descriptor, appended to; made with `mode` when it does not exist."""
    try:
        return _new(path, mode, os.O_APPEND)
    except FileExistsError:
        return open_regular(path, os.O_WRONLY | os.O_APPEND)


def lock(path):
    """flock(2) on path without waiting: the descriptor, or None while another process holds it.
    An existing lock is only opened for reading (flock needs no more: one made by root stays
    usable by the job's user); a new one is made 0644. Not inherited by children."""
    try:
        fd = open_regular(path)
    except FileNotFoundError:
        try:
            fd = _new(path)
        except FileExistsError:
            fd = open_regular(path)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as error:
        os.close(fd)
        if error.errno in (errno.EWOULDBLOCK, errno.EAGAIN):
            return None
        raise
    return fd
