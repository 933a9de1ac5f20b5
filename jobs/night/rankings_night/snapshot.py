"""A night's snapshot of rating_events: rating_events.ndjson, one Firestore REST Document per
line, in strictly increasing name order (a full read and a compaction write it so; an incremental
night's change file is sorted the same way, layers.py), so a merge and a comparison are one pass
over sorted files. Each snapshot's SHA-256 is recorded when it is written (record.py) and
checked on the next night's pass before anything is built on it. Times are exact nanoseconds.

A night without kept state (RANKINGS_FIRESTORE_SNAPSHOT=gzip) keeps rating_events.ndjson.gz
instead: the same lines less createTime and updateTime, gzip-compressed by each stream as it
reads (one gzip member a stream, concatenated), since its file system is the container's memory;
no night builds on it. Its digest, as the plain file's, is of the bytes kept."""
import ctypes
import datetime
import gzip
import hashlib
import json
import os
import zlib

from . import files

SNAPSHOT = "rating_events.ndjson"
SNAPSHOT_GZ = SNAPSHOT + ".gz"
# What neither the job nor the proof reads: two times to the microsecond on Firestore, which
# compress poorly (the simulator's are all one time, so BENCHMARKS understates this).
UNREAD = ("createTime", "updateTime")
# zlib's level 1: 8 % larger than level 6 (66 bytes a vote against 61) for half its CPU (1.7 s a
# million votes against 3.3), in streams whose CPU is already the night's pace (BENCHMARKS, "A
# night without a volume").
LEVEL = 1
NAME_PREFIX = b'{"name":"'
EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)


class Damaged(Exception):
    """A snapshot that cannot be built on: the night reads everything instead."""


_LINE = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))


def document_line(document, slim=False):
    """A Document's line: its name first (what line_name reads without decoding), then the rest
    (less UNREAD when slim)."""
    if slim:
        document = {k: v for k, v in document.items() if k not in UNREAD}
    if next(iter(document)) != "name":     # Firestore sends it first: reordered only if not
        ordered = {"name": document["name"]}
        ordered.update((k, v) for k, v in document.items() if k != "name")
        document = ordered
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
    """The night's snapshot: rating_events.ndjson, or the compressed one of a night that kept none."""
    plain = os.path.join(folder, SNAPSHOT)
    compressed = os.path.join(folder, SNAPSHOT_GZ)
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
    """The document name on line `number` of a snapshot, or None: what a bad line the job names in
    a file that goes with its night (a container's) is in Firestore, where an operator can look."""
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
    """Lines appended to a new snapshot, counted and digested as they go; synced on close. A
    write that fails (a full disk) names the file."""

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
        self._write(line)
        self.lines += 1

    def write_lines(self, lines):
        self._write(b"".join(lines))
        self.lines += len(lines)

    def copy(self, path, lines=None):
        """The lines of a file written by another Writer, appended whole, then the file removed;
        `lines`: how many it holds, when it is compressed. Each chunk is released from the part
        once appended, so the two together hold the part's bytes once, not twice (in memory, on
        a container's file system)."""
        with open(path, "r+b") as part:     # writable: releasing its bytes is a write
            at = 0
            while chunk := part.read(1 << 20):
                self._write(chunk)
                if lines is None:
                    self.lines += chunk.count(b"\n")
                _release(part.fileno(), at, len(chunk))
                at += len(chunk)
        self.lines += lines or 0
        os.unlink(path)

    def close(self):
        try:
            self.file.flush()
            os.fsync(self.file.fileno())
            self.file.close()
        except OSError as error:
            raise OSError(error.errno, error.strerror, self.path) from None
        return self.lines, self.digest.hexdigest()


class GzipWriter(Writer):
    """A Writer of one gzip member, compressed as it is written, in the writing process (a
    stream's own); counted by lines, digested as the bytes kept."""

    def __init__(self, path, level=LEVEL):
        super().__init__(path)
        self.deflate = zlib.compressobj(level, zlib.DEFLATED, 31)    # 31: a gzip member

    def write(self, line):
        self.write_lines([line])

    def write_lines(self, lines):
        self._write(self.deflate.compress(b"".join(lines)))
        self.lines += len(lines)

    def close(self):
        self._write(self.deflate.flush())
        return super().close()


_PUNCH_HOLE = 0x03      # FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE
try:
    _fallocate = ctypes.CDLL(None, use_errno=True).fallocate
    _fallocate.argtypes = (ctypes.c_int, ctypes.c_int, ctypes.c_int64, ctypes.c_int64)
except (OSError, AttributeError):
    _fallocate = None


def _release(fd, offset, length):
    """The file's bytes at [offset, offset + length) given back to the file system (tmpfs, ext4 and
    xfs can); where it cannot, they are given back when the file is removed."""
    if _fallocate is not None:
        _fallocate(fd, _PUNCH_HOLE, offset, length)


def _vote(line):
    """What a document says as a vote: its fields (not createTime or updateTime, which an import or
    a restore changes without changing a vote)."""
    try:
        return json.loads(line).get("fields")
    except ValueError:
        return None


def _timestamp(line):
    """A line's timestamp field in nanoseconds, or None when it has none that Firestore orders as a
    timestamp (such a document never matches the incremental query)."""
    try:
        return parse_time(json.loads(line)["fields"]["timestamp"]["timestampValue"])
    except (ValueError, KeyError, TypeError, AttributeError):
        return None


def drift(held, full_path, watermark):
    """Documents the snapshot `held` (a path, or (name, line) in name order: a layered night's
    layers.merged) holds wrong against the full read at full_path that an incremental night from
    watermark could not have corrected: deleted since, or a vote changed or added with a
    timestamp before the watermark (or none). A document whose vote is the same is not drift,
    whatever its updateTime says."""
    count = 0
    held = sorted_lines(held) if isinstance(held, (str, os.PathLike)) else iter(held)
    h = next(held, None)
    for name, line in sorted_lines(full_path):
        while h is not None and h[0] < name:
            count += 1
            h = next(held, None)
        if h is not None and h[0] == name:
            same = h[1] == line or _vote(h[1]) == _vote(line)
            h = next(held, None)
            if same:
                continue
        stamp = _timestamp(line)
        if stamp is None or stamp < watermark:
            count += 1
    while h is not None:
        count += 1
        h = next(held, None)
    return count


def parse_time(text):
    """RFC 3339 with Z or an offset and up to nanoseconds, as whole nanoseconds since the epoch."""
    if not text.isascii():
        raise ValueError(f"{text!r} is not an RFC 3339 time")
    main, _, rest = text.partition(".")
    digits = ""
    if rest:
        while rest[:1].isdigit():
            digits, rest = digits + rest[0], rest[1:]
        if not digits or len(digits) > 9:
            raise ValueError(f"{text!r}: a fraction of 1 to 9 digits")
        offset = rest
    else:
        at = max(main.find(c, 19) for c in "Zz+-")
        main, offset = (main[:at], main[at:]) if at > 0 else (main, "")
    if offset in ("Z", "z"):
        offset = "+00:00"
    if len(main) != 19 or main[10] not in "Tt" or not offset or not main.replace("-", "").replace(":", "")[:8].isdigit():
        raise ValueError(f"{text!r} is not an RFC 3339 time with an offset")
    moment = datetime.datetime.fromisoformat(main[:10] + "T" + main[11:] + offset)
    seconds = (moment - EPOCH) // datetime.timedelta(seconds=1)
    return seconds * 1_000_000_000 + int(digits.ljust(9, "0") or 0)


def format_time(nanoseconds):
    """A Firestore timestampValue in UTC, cut down to the microsecond Firestore keeps (never up: a
    bound so cut takes in at least what it should); the year always four digits."""
    seconds, rest = divmod(nanoseconds, 1_000_000_000)
    moment = EPOCH + datetime.timedelta(seconds=seconds)
    return f"{moment.year:04d}-" + moment.strftime("%m-%dT%H:%M:%S") + f".{rest // 1000:06d}Z"
