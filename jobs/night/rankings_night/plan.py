"""What tonight's fetch does and why: plan(), a pure function of the night it may build on and now (Firestore's
readTime); describe(), the same by this machine's clock for `rankings-night plan`."""
import os
from collections import namedtuple

from . import folders, record as records
from .snapshot import COLLECTION, SNAPSHOT, Damaged, format_time, parse_time

DAY_NS = 86_400 * 10**9
PREVIOUS_MAX_AGE_NS = 7 * DAY_NS    # the longest an incremental chain may go without its previous night
FULL_EVERY_DAYS = 30                # a full read finds what incremental nights cannot see
MARGIN_NS = 48 * 3600 * 10**9       # an incremental night asks again for the votes stamped this long before
READ_TIME_LIFE = 3600               # Firestore serves a readTime an hour (firestore.proto: RunQueryRequest)
STREAMS, MOST_STREAMS = 8, 64
# mode: "full" or "incremental"; reason: in words an operator reads in the log and in `status`;
# watermark: an incremental night's, from which (ns) the votes stamped are asked for.
Plan = namedtuple("Plan", "mode reason watermark", defaults=(None,))


def previous_night(folder, now_ns, database_path=None):
    """(record, None) of the night in `folder` when tonight (of `database_path`) may build on it, else (None, why)."""
    if folder is None:
        return None, "no previous night"
    try:
        record = records.read(folder, now_ns)
    except Damaged as damage:
        return None, f"the previous night's record cannot be used: {damage}"
    where = f"projects/{record['project']}/databases/{record['database']}"
    if database_path not in (None, where) or record["collection"] != COLLECTION:
        return None, f"the previous night is of {where}/{record['collection']}, not {database_path}/{COLLECTION}"
    if record.get("snapshot_form") == "gzip":
        return None, "the previous night's snapshot is compressed: never built on"
    if not os.path.isfile(os.path.join(folder, SNAPSHOT)):
        return None, f"the previous night has no {SNAPSHOT}"
    return record, None


def plan(previous, damage, now_ns, full_because=None):
    """From previous_night()'s (previous, damage); `full_because`: why tonight must read everything anyway."""
    if previous is None:
        return Plan("full", damage or "no previous night")
    read_ns = parse_time(previous["read_time"])
    if now_ns - read_ns > PREVIOUS_MAX_AGE_NS:
        return Plan("full", f"the previous night was read over {PREVIOUS_MAX_AGE_NS // DAY_NS} days ago")
    days = (now_ns - parse_time(previous["last_full_read_time"])) / DAY_NS
    # Days, not runs; half a day early counts (docs/firestore.md, "Tonight's plan", says why).
    if days >= FULL_EVERY_DAYS - 0.5:
        return Plan("full", f"the last full read was {days:.1f} days ago (one every {FULL_EVERY_DAYS} days)")
    if full_because:
        return Plan("full", full_because)
    return Plan("incremental", f"building on the night read at {previous['read_time']}; a full read is due "
                               f"{FULL_EVERY_DAYS - days:.1f} days from now", watermark=read_ns - MARGIN_NS)


def streams(previous):
    """(streams, None): 8, or as many (up to 64) as the last full read's rate needs to read in 90 % of a readTime's
    life; (64, why not) past that. Never refused: the rate is one night's, and a refused night measures none."""
    rate, documents = (previous or {}).get("full_rate"), (previous or {}).get("snapshot_documents") or 0
    if not (isinstance(rate, (int, float)) and rate > 0):
        return STREAMS, None
    needed = -(-documents // max(int(rate * 0.9 * READ_TIME_LIFE), 1))
    if needed <= MOST_STREAMS:
        return max(STREAMS, needed), None
    return MOST_STREAMS, (f"a full read of {documents} documents at {rate:.0f} documents a second per stream (the "
                          f"last full read's) over {MOST_STREAMS} streams takes about "
                          f"{documents / rate / MOST_STREAMS / 60:.0f} min, over 90 % of Firestore's life of a "
                          f"readTime ({READ_TIME_LIFE // 60} min)")


def describe(directory, now_ns):
    folder = folders.current(directory)
    previous, damage = previous_night(folder, now_ns)
    tonight = plan(previous, damage, now_ns)
    lines = [f"tonight's fetch: {tonight.mode}", f"why: {tonight.reason}"]
    if tonight.watermark is not None:
        lines.append(f"asks for: the votes stamped at or after {format_time(tonight.watermark)} (48 h before the "
                     "last night's readTime), then proves the merge by COUNT")
    else:
        count, late = streams(previous)
        lines.append(f"asks for: every document, {count} streams at once, proven by the collection's COUNT"
                     + (f"; {late}" if late else ""))
    if previous is not None:
        lines.append(f"previous night: {folder}: {previous['mode']}, read at {previous['read_time']}, "
                     f"{previous['snapshot_documents']} documents, last full read {previous['last_full_read_time']}")
    return lines
