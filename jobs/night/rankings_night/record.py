"""A night's record, .night.json: how it was made, when the last full read was, its files (`layers`), so
the next night can tell whether to build on it; one damaged or out of range raises Damaged (read in full)."""
import json
import os
import re

from . import files
from .snapshot import SNAPSHOT, SNAPSHOT_GZ, Damaged, change_name, format_time, parse_time

RECORD = ".night.json"      # hidden: `rankings aggregate DIR/current` never reads a dot file
FORMAT = 3
MOST = 10**12               # more documents than any collection this job reads
SKEW_NS = 86_400 * 10**9    # the times are Firestore's; `rankings-night plan`'s clock may be minutes behind


def check(record, now_ns):
    """The record if every field the plan and the merge use is present, typed and in range."""
    if not isinstance(record, dict):
        raise Damaged("not a JSON object")
    if record.get("format") != FORMAT:
        raise Damaged(f"format {record.get('format')!r}, not {FORMAT} (a night of an earlier version)")
    for key in ("method", "mode", "project", "database", "collection"):
        if not isinstance(record.get(key), str):
            raise Damaged(f"{key} is {record.get(key)!r}, not a string")
    if record["method"] != "rest" or record["mode"] not in ("full", "incremental"):    # 0.4's export, window
        raise Damaged(f"made by the {record['method']} method, mode {record['mode']!r}: never built on")
    for key in ("documents_read", "snapshot_documents", "bytes_written"):
        if not (type(record.get(key)) is int and 0 <= record[key] <= MOST):
            raise Damaged(f"{key} is {json.dumps(record.get(key))}, not a count")
    for key in ("read_time", "last_full_read_time"):
        try:
            if parse_time(record[key]) > now_ns + SKEW_NS:
                raise Damaged(f"{key} {record[key]} is in the future: over a day ahead of {format_time(now_ns)}")
        except (KeyError, TypeError, ValueError):
            raise Damaged(f"{key} is {json.dumps(record.get(key))}, not an RFC 3339 time") from None
    if parse_time(record["last_full_read_time"]) > parse_time(record["read_time"]):
        raise Damaged("last_full_read_time is after read_time")
    layers = record.get("layers")
    if not isinstance(layers, list) or not layers:
        raise Damaged("layers is not a list of files")
    for number, layer in enumerate(layers):     # the base, then change files from 000001 without a gap
        want = change_name(number) if number else SNAPSHOT_GZ if record.get("snapshot_form") == "gzip" else SNAPSHOT
        if not isinstance(layer, dict) or layer.get("file") != want:
            raise Damaged(f"layer {number} is not {want}")
        for key in ("lines", "bytes"):
            if not (type(layer.get(key)) is int and 0 <= layer[key] <= 1 << 60):
                raise Damaged(f"{want}: {key} is {json.dumps(layer.get(key))}, not a count")
        if not (isinstance(layer.get("sha256"), str) and re.fullmatch(r"[0-9a-f]{64}", layer["sha256"])):
            raise Damaged(f"{want}: sha256 is not a SHA-256 in hex")
    if sum(layer["lines"] for layer in layers) < record["snapshot_documents"]:
        raise Damaged(f"its layers hold fewer lines than its {record['snapshot_documents']} documents")
    return record


def read(folder, now_ns):
    path = os.path.join(folder, RECORD)
    try:
        record = json.loads(files.read_regular(path, 1 << 20)[0], parse_constant=lambda c: c)
        if isinstance(record, dict) and record.get("format") == 2 and "snapshot_sha256" in record:
            # 0.4.0's: its one snapshot is the base (of its file's size: the SHA-256 is what checks it).
            base = {"file": SNAPSHOT, "lines": record.get("snapshot_documents"), "sha256": record["snapshot_sha256"],
                    "bytes": os.path.getsize(os.path.join(folder, SNAPSHOT))}
            record = dict(record, format=FORMAT, bytes_written=0, layers=[base])
        return check(record, now_ns)
    except (OSError, ValueError, RecursionError, Damaged) as error:
        raise Damaged(f"{path}: {getattr(error, 'strerror', None) or error}") from None


def write(folder, record):
    path = os.path.join(folder, RECORD)
    try:
        with files.create(path, encoding="utf-8") as out:
            json.dump(dict(record, format=FORMAT), out, indent=1, sort_keys=True)
            out.write("\n")
            out.flush()
            os.fsync(out.fileno())
    except OSError as error:
        raise OSError(error.errno, error.strerror, path) from None
