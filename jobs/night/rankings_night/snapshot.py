"""A night's snapshot of rating_events: rating_events.ndjson, one Firestore REST Document a line in
strictly increasing name order (so a merge and a comparison are one pass), its SHA-256 recorded
(record.py) and checked before a night builds on it. Times are exact nanoseconds.
RANKINGS_FIRESTORE_SNAPSHOT=gzip keeps rating_events.ndjson.gz instead (its file system is the
container's memory): the lines less UNREAD, one gzip member a stream, concatenated; never built on."""
import ctypes
import datetime
import gzip
import hashlib
import json
import os
import re
import zlib

from . import files

SNAPSHOT = "rating_events.ndjson"
SNAPSHOT_GZ = SNAPSHOT + ".gz"
# Neither the job nor the proof reads them, and they compress poorly.
UNREAD = ("createTime", "updateTime")
# zlib's level 1: 8 % larger than level 6 for half its CPU, in streams whose CPU is the night's pace
# (BENCHMARKS, "A night without a volume").
LEVEL = 1
NAME_PREFIX = b'{"name":"'
EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)
# The offset's form is left to fromisoformat.
_TIME = re.compile(r"(\d{4}-\d\d-\d\d)[Tt](\d\d:\d\d:\d\d)(?:\.(\d{1,9}))?([Zz]|[+-].*)", re.ASCII | re.DOTALL)


class Damaged(Exception):
    """A snapshot that cannot be built on: the night reads everything instead."""


_LINE = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))


def document_line(document, slim=False):
    """A Document's line, its name first (what line_name reads without decoding); less UNREAD when slim."""
    if slim or next(iter(document)) != "name":     # Firestore sends the name first
        rest = {k: v for k, v in document.items() if k != "name" and not (slim and k in UNREAD)}
        document = {"name": document["name"], **rest}
    return (_LINE.encode(document) + "\n").encode("utf-8")


def line_name(line):
    if line.startswith(NAME_PREFIX):
        end = line.find(b'"', len(NAME_PREFIX))
        if end > 0 and b"\\" not in line[len(NAME_PREFIX):end]:
            return line[len(NAME_PREFIX):end].decode("utf-8")
    try:
        name = json.loads(line)["name"]
    except (ValueError, KeyError, TypeError):
        name = None
    if not isinstance(name, str):
        raise Damaged("a line without a document name")
    return name


def snapshot_path(folder):
    """rating_events.ndjson, or the compressed one of a night that kept none."""
    plain, compressed = os.path.join(folder, SNAPSHOT), os.path.join(folder, SNAPSHOT_GZ)
    return compressed if not os.path.exists(plain) and os.path.exists(compressed) else plain


def open_lines(path):
    """A snapshot opened for its lines, gzip or not (by its magic bytes, as the job tells)."""
    file = open(path, "rb")
    try:
        if file.peek(2)[:2] == b"\x1f\x8b":
            return gzip.GzipFile(fileobj=file, mode="rb")   # reads every member
    except BaseException:
        file.close()
        raise
    return file


def document_at(path, number):
    """The document name on line `number` of a snapshot, or None: where a bad line the job names is
    in Firestore."""
    try:
        with open_lines(path) as lines:
            for at, line in enumerate(lines, 1):
                if at == number:
                    return line_name(line)
    except (OSError, Damaged):
        pass
    return None


def sorted_lines(path, digest=None):
    """(name, line) of each line, checking the order it promises; feeds digest the bytes read."""
    previous = None
    with open_lines(path) as lines:
        for number, line in enumerate(lines, 1):
            if digest is not None:
                digest.update(line)
            if not line.endswith(b"\n"):
                raise Damaged(f"{path}:{number}: the last line is cut short")
            name = line_name(line)
            if previous is not None and name <= previous:
                raise Damaged(f"{path}:{number}: {name} is not after {previous}")
            previous = name
            yield name, line


class Writer:
    """Lines appended to a new snapshot, counted and digested (as the bytes kept); synced on close;
    an OSError names the file."""
    deflate = None

    def __init__(self, path):
        self.path, self.lines, self.digest = path, 0, hashlib.sha256()
        self.file = files.create(path)    # 0644 whatever the umask: the job may read it as another user

    def _write(self, data):
        try:
            self.file.write(data)
        except OSError as error:
            raise OSError(error.errno, error.strerror, self.path) from None
        self.digest.update(data)

    def write(self, line):
        self.write_lines([line])

    def write_lines(self, lines):
        data = b"".join(lines)
        self._write(self.deflate.compress(data) if self.deflate else data)
        self.lines += len(lines)

    def copy(self, path, lines=None):
        """Another Writer's file appended whole (`lines`: how many, when compressed), then removed.
        Each chunk is released from it once appended, so the two hold its bytes once, not twice."""
        with open(path, "r+b") as part:     # writable: releasing its bytes is a write
            at = 0
            while chunk := part.read(1 << 20):
                self._write(chunk)
                self.lines += chunk.count(b"\n") if lines is None else 0
                _release(part.fileno(), at, len(chunk))
                at += len(chunk)
        self.lines += lines or 0
        os.unlink(path)

    def close(self):
        if self.deflate:
            self._write(self.deflate.flush())
        try:
            self.file.flush()
            os.fsync(self.file.fileno())
            self.file.close()
        except OSError as error:
            raise OSError(error.errno, error.strerror, self.path) from None
        return self.lines, self.digest.hexdigest()


class GzipWriter(Writer):
    """A Writer of one gzip member, compressed in the writing process (a stream's own)."""

    def __init__(self, path, level=LEVEL):
        super().__init__(path)
        self.deflate = zlib.compressobj(level, zlib.DEFLATED, 31)    # 31: a gzip member


try:
    _fallocate = ctypes.CDLL(None, use_errno=True).fallocate
    _fallocate.argtypes = (ctypes.c_int, ctypes.c_int, ctypes.c_int64, ctypes.c_int64)
except (OSError, AttributeError):
    _fallocate = None


def _release(fd, offset, length):
    """Bytes given back to the file system (tmpfs, ext4 and xfs can; else when the file is removed)."""
    if _fallocate is not None:
        _fallocate(fd, 0x03, offset, length)    # FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE


def _fields(line):
    """A document's vote: its fields (not the times an import or a restore changes), or None."""
    try:
        return json.loads(line).get("fields")
    except ValueError:
        return None


def _timestamp(line):
    """A line's timestamp in nanoseconds, or None when it has none (never matching the incremental query)."""
    try:
        return parse_time(_fields(line)["timestamp"]["timestampValue"])
    except (ValueError, KeyError, TypeError, AttributeError):
        return None


def drift(held, full_path, watermark):
    """Documents the snapshot `held` (a path, or layers.merged's (name, line)s) holds wrong against
    the full read at full_path that an incremental night from watermark could not have corrected:
    deleted since, or a vote changed or added stamped before the watermark (or unstamped). The same
    vote is not drift, whatever its updateTime."""
    count = 0
    held = sorted_lines(held) if isinstance(held, (str, os.PathLike)) else iter(held)
    h = next(held, None)
    for name, line in sorted_lines(full_path):
        while h is not None and h[0] < name:
            count += 1
            h = next(held, None)
        if h is not None and h[0] == name:
            same = h[1] == line or _fields(h[1]) == _fields(line)
            h = next(held, None)
            if same:
                continue
        stamp = _timestamp(line)
        count += stamp is None or stamp < watermark
    return count + (h is not None) + sum(1 for _ in held)


def parse_time(text):
    """RFC 3339 with Z or an offset and up to nanoseconds, as whole nanoseconds since the epoch."""
    match = _TIME.fullmatch(text)
    if not match:
        raise ValueError(f"{text!r} is not an RFC 3339 time with an offset")
    date, clock, digits, offset = match.groups()
    moment = datetime.datetime.fromisoformat(f"{date}T{clock}{'+00:00' if offset in 'Zz' else offset}")
    return (moment - EPOCH) // datetime.timedelta(seconds=1) * 1_000_000_000 + int((digits or "0").ljust(9, "0"))


def format_time(nanoseconds):
    """A Firestore timestampValue in UTC, cut down (never up: a bound so cut takes in at least what it
    should) to the microsecond Firestore keeps; the year always four digits."""
    seconds, rest = divmod(nanoseconds, 1_000_000_000)
    moment = EPOCH + datetime.timedelta(seconds=seconds)
    return f"{moment.year:04d}-" + moment.strftime("%m-%dT%H:%M:%S") + f".{rest // 1000:06d}Z"
