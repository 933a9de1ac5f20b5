"""A night's snapshot as layers (format 3): the base, rating_events.ndjson, then the change files
rating_events.changes-000001.ndjson, ... one an incremental night since the base, each sorted by
name; a later layer's document replaces an earlier one of its name, and none carries a deletion.
The record lists each layer's lines, bytes and SHA-256. An earlier night's layer is a hard link to
its file, never written after its night is committed (docs/firestore.md, "The night's folder")."""
import errno
import hashlib
import heapq
import json
import os
import re

from . import files
from .snapshot import SNAPSHOT, SNAPSHOT_GZ, Damaged, sorted_lines

CHANGES = re.compile(r"^rating_events\.changes-(\d{6})\.ndjson$")
CHUNK = 8 << 20     # hashlib lets go of the GIL over big buffers: the check runs beside the query


def change_name(number):
    return f"rating_events.changes-{number:06d}.ndjson"


def is_layer(name):
    return name == SNAPSHOT or CHANGES.match(name) is not None


def of(record):
    """The layers of a checked rest record; a FORMAT 2 record's snapshot is one, its bytes None."""
    if "layers" in record:
        return [dict(layer) for layer in record["layers"]]
    return [{"file": SNAPSHOT, "lines": record["snapshot_documents"], "bytes": None,
             "sha256": record["snapshot_sha256"]}]


def check(layers):
    """Damaged unless layers is a FORMAT 3 record's: the base, then change files from 000001 without
    a gap, each with its counts and digest."""
    if not isinstance(layers, list) or not layers:
        raise Damaged("layers is not a list of files")
    for number, layer in enumerate(layers):
        want = SNAPSHOT if number == 0 else change_name(number)
        if len(layers) == 1 and isinstance(layer, dict) and layer.get("file") == SNAPSHOT_GZ:
            want = SNAPSHOT_GZ      # a night that kept no state: one compressed file, never built on
        if not isinstance(layer, dict) or layer.get("file") != want:
            raise Damaged(f"layer {number} is not {want}")
        for key in ("lines", "bytes"):
            if not (type(layer.get(key)) is int and 0 <= layer[key] <= 1 << 60):
                raise Damaged(f"{want}: {key} is {json.dumps(layer.get(key))}, not a count")
        if not (isinstance(layer.get("sha256"), str) and re.fullmatch(r"[0-9a-f]{64}", layer["sha256"])):
            raise Damaged(f"{want}: sha256 is not a SHA-256 in hex")
    return layers


def verify(folder, layers):
    """The layers in folder, each checked against its record (size first, then lines and digest, read
    in big chunks, no line parsed), bytes filled in (FORMAT 2). Damaged names the first that differs."""
    out = []
    for layer in layers:
        path = os.path.join(folder, layer["file"])
        try:
            size = os.stat(path).st_size
            if layer["bytes"] is not None and size != layer["bytes"]:
                raise Damaged(f"{path} is not the snapshot its record describes ({size} bytes, recorded "
                              f"{layer['bytes']})")
            digest, lines, size = hashlib.sha256(), 0, 0
            with open(path, "rb", buffering=0) as data:
                while chunk := data.read(CHUNK):
                    digest.update(chunk)
                    lines += chunk.count(b"\n")
                    size += len(chunk)
            digest = digest.hexdigest()
        except OSError as error:
            raise Damaged(f"{path}: {error.strerror or error}") from None
        if (lines, digest) != (layer["lines"], layer["sha256"]) or (layer["bytes"] not in (None, size)):
            raise Damaged(f"{path} is not the snapshot its record describes ({lines} lines, {size} bytes, SHA-256 "
                          f"{digest[:12]}…; recorded {layer['lines']}, {layer['bytes']}, {layer['sha256'][:12]}…)")
        out.append(dict(layer, bytes=size))
    return out


def merged(folder, layers, extra=None):
    """(name, line) of the snapshot the layers make, in name order, the later layer winning;
    `extra`: (name, line)s in name order, a layer after the last. One pass over each file at once.
    Damaged where a file breaks its order."""
    sources = [sorted_lines(os.path.join(folder, layer["file"])) for layer in layers]
    sources += [extra] if extra is not None else []
    # The key puts the later layer first among equal names; the rest of them are skipped.
    keyed = [_keyed(source, -rank) for rank, source in enumerate(sources)]
    previous = None
    for (name, _), line in heapq.merge(*keyed, key=lambda item: item[0]):
        if name != previous:
            previous = name
            yield name, line


def _keyed(source, rank):
    for name, line in source:
        yield (name, rank), line


def lines(folder, layers):
    """The snapshot's lines, as merged() makes them."""
    return (line for _, line in merged(folder, layers))


def link_or_copy(source, target, say):
    """target made a hard link to source, or a copy (said) where the file system will not link:
    the bytes written."""
    try:
        os.link(source, target, follow_symlinks=False)
        return 0
    except OSError as error:
        why = "another file system" if error.errno == errno.EXDEV else (error.strerror or str(error))
    with open(source, "rb") as data, files.create(target) as out:
        written = 0
        while chunk := data.read(CHUNK):
            out.write(chunk)
            written += len(chunk)
        out.flush()
        os.fsync(out.fileno())
    say(f"warning: rest: {source} could not be linked into tonight's night ({why}): copied, {written} bytes")
    return written


def needs_escape(name):
    """Whether a name is written with a JSON escape: the job refuses one in a change file (it reads
    their names undecoded), so the fetch writes a new base instead."""
    return json.dumps(name, ensure_ascii=False)[1:-1] != name


# Every later read of a night reads its change files too: past a quarter of the base's bytes,
# rewriting the base (once in several nights) costs less than carrying them. The count bounds a
# chain of quiet nights (and the job's open files).
COMPACT_SHARE = 0.25
MOST_CHANGES = 60


def compaction(layers, tonight_bytes, escaped=()):
    """Why tonight's changes go into a new base rather than a change file over the verified
    `layers`, or None; `escaped`: tonight's names needing a JSON escape."""
    if escaped:
        return f"the name {escaped[0]} is written with a JSON escape, which a change file may not hold"
    if len(layers) > MOST_CHANGES:
        return f"{len(layers)} change files would be more than {MOST_CHANGES}"
    changes = sum(layer["bytes"] for layer in layers[1:]) + tonight_bytes
    if changes > COMPACT_SHARE * layers[0]["bytes"]:
        return (f"the change files would hold {changes} bytes, over {COMPACT_SHARE:.0%} of the base's "
                f"{layers[0]['bytes']}")
    return None
