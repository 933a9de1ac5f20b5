"""A night's snapshot of rating_events as layers (docs/firestore.md, "The night's folder"), each a Firestore Document
a line in strictly increasing name order. An earlier night's layer is a hard link, never written after its night is
committed. Kept compressed (a container's state in its memory): the lines less UNREAD, a gzip member a stream."""
import contextlib
import ctypes
import datetime
import errno
import hashlib
import heapq
import json
import os
import re
import shutil
import zlib

from . import files

COLLECTION = "rating_events"
SNAPSHOT = f"{COLLECTION}.ndjson"
SNAPSHOT_GZ = SNAPSHOT + ".gz"
UNREAD = ("createTime", "updateTime")   # neither the job nor the proof reads them, and they compress poorly
LEVEL = 1   # zlib's: 8 % larger than 6 for half its CPU, the streams' pace (BENCHMARKS, "A night without a volume")
NAME_PREFIX = b'{"name":"'
CHUNK = 8 << 20     # hashlib lets go of the GIL over big buffers: the check runs beside the COUNTs
# Every read of a night reads its change files too: past a quarter of the base's bytes, rewriting the base
# costs less than carrying them. The count bounds a chain of quiet nights (and the job's open files).
COMPACT_SHARE, MOST_CHANGES = 0.25, 60
EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)
_TIME = re.compile(r"(\d{4}-\d\d-\d\d)[Tt](\d\d:\d\d:\d\d)(?:\.(\d{1,9}))?([Zz]|[+-].*)", re.ASCII | re.DOTALL)
_LINE = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))
_fallocate = ctypes.CDLL(None, use_errno=True).fallocate
_fallocate.argtypes = (ctypes.c_int, ctypes.c_int, ctypes.c_int64, ctypes.c_int64)
PUNCH_HOLE = 0x03   # FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE: tmpfs, ext4 and xfs give the bytes back


class Damaged(Exception):
    """A snapshot that cannot be built on: the night reads everything instead."""


def change_name(number):
    return f"{COLLECTION}.changes-{number:06d}.ndjson"


def document_line(document, slim=False):
    """A Document's line, its name first (what line_name reads without decoding); less UNREAD when slim."""
    kept = {k: v for k, v in document.items() if not (slim and k in UNREAD)}
    return (_LINE.encode({"name": document["name"], **kept}) + "\n").encode("utf-8")


def line_name(line):
    end = line.find(b'"', len(NAME_PREFIX))
    if line.startswith(NAME_PREFIX) and end > 0 and b"\\" not in line[len(NAME_PREFIX):end]:
        return line[len(NAME_PREFIX):end].decode("utf-8")
    with contextlib.suppress(ValueError, KeyError, TypeError):
        name = json.loads(line)["name"]     # written with an escape
        if isinstance(name, str):
            return name
    raise Damaged("a line without a document name")


def sorted_lines(path):
    """(name, line) of each line, checking the order it promises."""
    previous = None
    with open(path, "rb") as lines:
        for number, line in enumerate(lines, 1):
            if not line.endswith(b"\n"):
                raise Damaged(f"{path}:{number}: the last line is cut short")
            name = line_name(line)
            if previous is not None and name <= previous:
                raise Damaged(f"{path}:{number}: {name} is not after {previous}")
            previous = name
            yield name, line


class Writer:
    """Lines into a new file (`compressed`: a gzip member), counted and digested; not synced (the commit is)."""

    def __init__(self, path, compressed=False):
        self.path, self.lines, self.size, self.digest = path, 0, 0, hashlib.sha256()
        self.deflate = zlib.compressobj(LEVEL, zlib.DEFLATED, 31) if compressed else None   # 31: a gzip member
        self.file = files.create(path)    # 0644 whatever the umask: the job may read it as another user

    def _write(self, data):
        try:
            self.file.write(data)
        except OSError as error:
            raise OSError(error.errno, error.strerror, self.path) from None
        self.digest.update(data)
        self.size += len(data)

    def write_lines(self, lines):
        data = b"".join(lines)
        self._write(self.deflate.compress(data) if self.deflate else data)
        self.lines += len(lines)

    def copy(self, path, lines):
        """Another Writer's file appended as it is, each chunk then released: its bytes are held once, not twice."""
        with open(path, "r+b") as part:     # writable: releasing its bytes is a write
            while chunk := part.read(1 << 20):
                self._write(chunk)
                _fallocate(part.fileno(), PUNCH_HOLE, part.tell() - len(chunk), len(chunk))
        self.lines += lines
        os.unlink(path)

    def close(self):
        if self.deflate:
            self._write(self.deflate.flush())
        try:
            self.file.close()
        except OSError as error:
            raise OSError(error.errno, error.strerror, self.path) from None
        return {"file": os.path.basename(self.path), "lines": self.lines, "bytes": self.size,
                "sha256": self.digest.hexdigest()}


def verify(folder, layers):
    """Damaged naming the first layer in folder whose lines, bytes or SHA-256 differ from its record's."""
    for layer in layers:
        path, digest, lines, size = os.path.join(folder, layer["file"]), hashlib.sha256(), 0, 0
        try:
            with open(path, "rb", buffering=0) as data:
                while chunk := data.read(CHUNK):
                    digest.update(chunk)
                    lines, size = lines + chunk.count(b"\n"), size + len(chunk)
        except OSError as error:
            raise Damaged(f"{path}: {error.strerror or error}") from None
        if (lines, size, digest.hexdigest()) != (layer["lines"], layer["bytes"], layer["sha256"]):
            raise Damaged(f"{path} is not the snapshot its record describes ({lines} lines, {size} bytes, SHA-256 "
                          f"{digest.hexdigest()[:12]}…; recorded {layer['lines']}, {layer['bytes']}, "
                          f"{layer['sha256'][:12]}…)")


def merged(folder, layers, extra=()):
    """(name, line) of the snapshot the layers and `extra` (name, line)s make, in name order, later winning."""
    sources = [extra] + [sorted_lines(os.path.join(folder, layer["file"])) for layer in reversed(layers)]
    # heapq.merge is stable (as sorted() of its sources chained): of equal names, the latest source's comes first.
    previous = None
    for name, line in heapq.merge(*sources, key=lambda item: item[0]):
        if name != previous:
            previous = name
            yield name, line


def link_or_copy(source, target, say):
    """target made a hard link to source, or a copy (said) where the file system will not link: the bytes written."""
    try:
        os.link(source, target, follow_symlinks=False)
        return 0
    except OSError as error:
        why = "another file system" if error.errno == errno.EXDEV else (error.strerror or str(error))
    with open(source, "rb") as data, files.create(target) as out:
        shutil.copyfileobj(data, out, CHUNK)
        written = out.tell()
    say(f"rest: {source} could not be linked into tonight's night ({why}): copied, {written} bytes", "WARNING")
    return written


def compaction(layers, tonight_bytes, names):
    """Why tonight's changes go into a new base, not a change file over `layers`, or None. The job refuses a
    name written with a JSON escape in a change file (it reads their names undecoded)."""
    escaped = [name for name in names if json.dumps(name, ensure_ascii=False)[1:-1] != name]
    if escaped:
        return f"the name {escaped[0]} is written with a JSON escape, which a change file may not hold"
    if len(layers) > MOST_CHANGES:
        return f"{len(layers)} change files would be more than {MOST_CHANGES}"
    changes = sum(layer["bytes"] for layer in layers[1:]) + tonight_bytes
    if changes > COMPACT_SHARE * layers[0]["bytes"]:
        return (f"the change files would hold {changes} bytes, over {COMPACT_SHARE:.0%} of the base's "
                f"{layers[0]['bytes']}")
    return None


def parse_time(text):
    """RFC 3339 with Z or an offset and up to nanoseconds, as whole nanoseconds since the epoch."""
    match = _TIME.fullmatch(text)
    if not match:
        raise ValueError(f"{text!r} is not an RFC 3339 time with an offset")
    date, clock, digits, offset = match.groups()
    moment = datetime.datetime.fromisoformat(f"{date}T{clock}{'+00:00' if offset in 'Zz' else offset}")
    return (moment - EPOCH) // datetime.timedelta(seconds=1) * 1_000_000_000 + int((digits or "0").ljust(9, "0"))


def format_time(nanoseconds):
    """A timestampValue in UTC cut down (a bound so cut takes in at least what it should) to the microsecond."""
    seconds, rest = divmod(nanoseconds, 1_000_000_000)
    moment = EPOCH + datetime.timedelta(seconds=seconds)
    return f"{moment.year:04d}-" + moment.strftime("%m-%dT%H:%M:%S") + f".{rest // 1000:06d}Z"
