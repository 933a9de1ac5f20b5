"""A night's record, .night.json beside its snapshot: how the night was made, so the next one can
tell whether it may build on it, when the last full read was, and its files (FORMAT 3: `layers`,
layers.py; a FORMAT 2 record's one snapshot is read as one layer). A record missing, damaged, of
another format or out of range is never used: read() raises Damaged, and the night reads everything."""
import json
import os
import re

from . import files, layers as layering
from .snapshot import Damaged, parse_time

RECORD = ".night.json"      # hidden: `rankings aggregate DIR/current` never reads a dot file
FORMAT = 3
MOST = 10**12               # more documents than any collection this job reads
# The record's times are Firestore's, the plan's now this machine's: a clock some minutes behind
# must not make every night a full read, but a day ahead would put the next full read off as long.
SKEW_NS = 86_400 * 10**9


def _count(record, key):
    if not (type(record.get(key)) is int and 0 <= record[key] <= MOST):
        raise Damaged(f"{key} is {json.dumps(record.get(key))}, not a count")


def check(record, now_ns):
    """The record if every field the plan and the merge use is present, typed and in range."""
    if not isinstance(record, dict):
        raise Damaged("not a JSON object")
    if record.get("format") not in (2, FORMAT):
        raise Damaged(f"format {record.get('format')!r}, not 2 or {FORMAT} (a night of an earlier version)")
    for key in ("method", "mode", "project", "database", "collection"):
        if not isinstance(record.get(key), str):
            raise Damaged(f"{key} is {record.get(key)!r}, not a string")
    if record["mode"] not in ("full", "incremental", "window"):
        raise Damaged(f"mode {record['mode']!r}")
    if record["method"] != "rest":
        return record       # an export's night: no snapshot of ours to build on
    for key in ("documents_read", "snapshot_documents", "drift_documents"):
        _count(record, key)
    times = {}
    for key in ("read_time", "last_full_read_time"):
        try:
            times[key] = parse_time(record[key])
        except (KeyError, TypeError, ValueError, AttributeError):
            raise Damaged(f"{key} is {json.dumps(record.get(key))}, not an RFC 3339 time") from None
        if times[key] > now_ns + SKEW_NS:
            raise Damaged(f"{key} {record[key]} is in the future: over a day ahead of this machine's clock "
                          "(is the clock wrong?)")
    if times["last_full_read_time"] > times["read_time"]:
        raise Damaged("last_full_read_time is after read_time")
    if record["format"] == 2:
        if not (isinstance(record.get("snapshot_sha256"), str) and re.fullmatch(r"[0-9a-f]{64}", record["snapshot_sha256"])):
            raise Damaged("snapshot_sha256 is not a SHA-256 in hex")
        return record
    layering.check(record.get("layers"))
    _count(record, "bytes_written")
    if sum(layer["lines"] for layer in record["layers"]) < record["snapshot_documents"]:
        raise Damaged(f"its layers hold fewer lines than its {record['snapshot_documents']} documents")
    return record


def read(folder, now_ns):
    path = os.path.join(folder, RECORD)
    try:
        record = json.loads(files.read_regular(path, 1 << 20)[0], parse_constant=lambda c: c)
        return check(record, now_ns)
    except (OSError, ValueError, RecursionError) as error:
        raise Damaged(f"{path}: {getattr(error, 'strerror', None) or error}") from None
    except Damaged as damage:
        raise Damaged(f"{path}: {damage}") from None


def write(folder, record):
    """Written whole and synced before the night's folder is renamed into place; an OSError names it."""
    path = os.path.join(folder, RECORD)
    try:
        with files.create(path, encoding="utf-8") as out:
            json.dump(dict(record, format=FORMAT), out, indent=1, sort_keys=True)
            out.write("\n")
            out.flush()
            os.fsync(out.fileno())
    except OSError as error:
        raise OSError(error.errno, error.strerror, path) from None
