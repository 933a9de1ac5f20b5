# A night's snapshot of rating_events and the record beside it, for rankings-fetch-firestore.
#
# The snapshot (rating_events.ndjson) holds one Firestore Document per line, as runQuery returns
# it, in strictly increasing name order: a full night writes it in that order, and an incremental
# night keeps it by merging. So a merge and a comparison are one pass over sorted files, with
# memory for tonight's answer only, never for the whole collection.
#
# The record (.night.json) says how the night was made, so the next night can tell whether it may
# build on it (same project, database and method; recent; undamaged) and when the last full read
# was.
import datetime
import json
import os

SNAPSHOT = "rating_events.ndjson"
# Hidden: `rankings aggregate DIR/current` reads the night's *.ndjson and *.json files, never a dot file.
RECORD = ".night.json"
RECORD_FORMAT = 1
NAME_PREFIX = b'{"name":"'
EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)


class Damaged(Exception):
    """The previous night's snapshot or record cannot be built on; the night reads everything."""


def document_line(document):
    """The snapshot's line for a Document: its name first (what line_name reads back without
    decoding the line), then the rest in the answer's own order."""
    ordered = {"name": document["name"]}
    ordered.update((k, v) for k, v in document.items() if k != "name")
    return (json.dumps(ordered, ensure_ascii=False, separators=(",", ":")) + "\n").encode("utf-8")


def line_name(line):
    """The document name a snapshot line starts with. A name without a backslash or quote is read
    straight from the bytes; any other line is decoded whole."""
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


def sorted_lines(path):
    """(name, line) for each line of a snapshot, checking the order it promises."""
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


def merge(previous_path, changed, out):
    """Writes to out the previous snapshot with every document in changed (name -> line)
    replacing its earlier version, and the new ones in their places. Returns how many lines it
    wrote."""
    pending = sorted(changed)
    i = written = 0
    for name, line in sorted_lines(previous_path):
        while i < len(pending) and pending[i] < name:
            out.write(changed[pending[i]])
            i += 1
            written += 1
        if i < len(pending) and pending[i] == name:
            line = changed[name]
            i += 1
        out.write(line)
        written += 1
    for name in pending[i:]:
        out.write(changed[name])
        written += 1
    return written


def _timestamp(line):
    """A line's timestamp field in nanoseconds, or None when it has none that Firestore orders as a
    timestamp (such a document never matches the incremental query)."""
    try:
        value = json.loads(line)["fields"]["timestamp"]["timestampValue"]
        return parse_time(value)
    except (ValueError, KeyError, TypeError):
        return None


def drift(held_path, full_path, watermark):
    """How many documents the snapshot at held_path holds wrong against the full read at
    full_path, counting only what an incremental night from watermark could not have corrected:
    documents deleted since, and documents written or changed whose timestamp is before the
    watermark (or not a timestamp at all). A changed document at or after the watermark is one
    the incremental query would have returned, so it is not drift."""
    count = 0
    held = sorted_lines(held_path)
    h = next(held, None)
    for name, line in sorted_lines(full_path):
        while h is not None and h[0] < name:
            count += 1          # deleted
            h = next(held, None)
        if h is not None and h[0] == name:
            same = h[1] == line
            h = next(held, None)
            if same:
                continue
        stamp = _timestamp(line)
        if stamp is None or stamp < watermark:
            count += 1          # written where the incremental query does not look
    while h is not None:
        count += 1
        h = next(held, None)
    return count


def parse_time(text):
    """RFC 3339 with Z or an offset and up to nanoseconds (Firestore's readTime and
    timestampValue; the settings' times) as whole nanoseconds since the epoch: exact, so a vote
    exactly at a boundary is on the side the boundary says."""
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
    if len(main) != 19 or main[10] not in "Tt" or not offset:
        raise ValueError(f"{text!r} is not an RFC 3339 time with an offset")
    moment = datetime.datetime.fromisoformat(main[:10] + "T" + main[11:] + offset)
    seconds = (moment - EPOCH) // datetime.timedelta(seconds=1)
    return seconds * 1_000_000_000 + int(digits.ljust(9, "0") or 0)


def format_time(nanoseconds):
    """Nanoseconds since the epoch as a Firestore timestampValue, in UTC, cut down to the
    microsecond Firestore keeps (never up: a bound so cut takes in at least what it should)."""
    seconds, rest = divmod(nanoseconds, 1_000_000_000)
    moment = EPOCH + datetime.timedelta(seconds=seconds)
    return moment.strftime("%Y-%m-%dT%H:%M:%S") + f".{rest // 1000:06d}Z"


def read_record(folder):
    """The record a night left, or Damaged when it left none or one that does not read."""
    path = os.path.join(folder, RECORD)
    try:
        with open(path, encoding="utf-8") as text:
            record = json.load(text)
    except (OSError, ValueError) as error:
        raise Damaged(f"{path}: {getattr(error, 'strerror', None) or error}") from None
    if not isinstance(record, dict) or record.get("format") != RECORD_FORMAT:
        raise Damaged(f"{path}: not a night record of format {RECORD_FORMAT}")
    return record


def write_record(folder, record):
    """.night.json, written whole before the night's folder is renamed into place."""
    record = dict(record, format=RECORD_FORMAT)
    with open(os.path.join(folder, RECORD), "w", encoding="utf-8") as out:
        json.dump(record, out, indent=1, sort_keys=True)
        out.write("\n")
