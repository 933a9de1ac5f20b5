"""A board published in one commit on the document read just before (docs/firestore.md, "The publish")."""
import json
import math
import subprocess

from . import stop
from .snapshot import parse_time
from .statuses import DATA, UNAVAILABLE, Failure
from .transport import Refused

COLLECTION = "weekly_rankings"
READ_TIME = "snapshot_read_time"    # the field that orders two nights' boards (the app ignores it)
RACES = 3                           # reads and commits before a document that keeps changing is given up
TOTALS = ("total_hilarious_ratings", "total_horrible_ratings")
_PLAIN = {"timestampValue": parse_time, "integerValue": int, "doubleValue": float,
          "arrayValue": lambda inner: [plain(v) for v in inner.get("values", [])],
          "mapValue": lambda inner: {k: plain(v) for k, v in inner.get("fields", {}).items()}}


def plain(value):
    """A REST Value that compares as Firestore means it (a Timestamp's zero fractions, an empty array)."""
    (kind, inner), = value.items()
    return kind, _PLAIN.get(kind, lambda same: same)(inner)


def total(fields):
    """Hilarious + Horrible of a board's fields, integers or doubles (a JSON upload stores doubles), or None."""
    try:
        values = [float(fields[key].get("integerValue", fields[key].get("doubleValue"))) for key in TOTALS]
    except (TypeError, KeyError, ValueError, AttributeError):
        return None
    return sum(values) if all(math.isfinite(v) and v >= 0 for v in values) else None


def publish(firestore, path, name, read_time, max_drop, binary, say):
    """The board at `path` as COLLECTION/`name`: "written", or "superseded" by a later night's; 65 past `max_drop`."""
    check = subprocess.run([binary, "check", "--quiet", "--top", "1000", "--print-firestore", path],
                           stdin=subprocess.DEVNULL, capture_output=True)     # the body, once it has checked it
    if check.returncode != 0:
        said = "".join(f": {line}" for line in check.stderr.decode("utf-8", "replace").strip().splitlines()[-1:])
        raise Failure(check.returncode, f"{path} not published: rankings check said status {check.returncode}{said}")
    fields, target = json.loads(check.stdout).get("fields", {}), f"{COLLECTION}/{name}"
    week = fields.get("week_id", {}).get("stringValue")
    if week != name:
        raise Failure(DATA, f"{path} not published: its week_id is {week}, but it would be written as {target}")
    fields[READ_TIME], full_name = {"timestampValue": read_time}, f"{firestore.database_path}/documents/{target}"
    for _ in range(RACES):
        current, firestore_time = firestore.batch_get(target)
        theirs = (current or {}).get("fields") or {}     # an empty document (set({})) is no board yet
        stamp = theirs.get(READ_TIME, {}).get("timestampValue")     # none on a board made by hand: no order
        if stamp and parse_time(stamp) > parse_time(read_time):
            if parse_time(stamp) <= parse_time(firestore_time):
                say(f"not written: {full_name} was made from a later snapshot (readTime {stamp}) than this "
                    f"night's ({read_time}); nothing is wrong")
                return "superseded"
            say(f"{full_name} says it was made from a snapshot read at {stamp}, later than Firestore's own time "
                f"({firestore_time}): not a night's, so not trusted; tonight's board replaces it", "WARNING")
        before, after = total(theirs), total(fields)
        if max_drop is not None and before and after is not None and after < before * (1 - max_drop / 100):
            raise Failure(DATA, f"{path} not published: its hilarious + horrible total {after:g} is "
                                f"{100 * (before - after) / before:.1f} % below the {before:g} of {full_name}, which "
                                f"the app reads now (--max-drop {max_drop:g}); the app keeps its board. If the votes "
                                "really went, accept it once: rankings-night run -- --max-drop 100")
        stop.STOP.check()   # nothing is published after a stop
        try:
            answer = firestore.commit([firestore.write(target, fields, current and current["updateTime"])])
            break
        except Refused as refused:
            if refused.reason not in ("FAILED_PRECONDITION", "ABORTED") and refused.code != 409:
                raise       # else the document changed since it was read: read it again
    else:
        raise Failure(UNAVAILABLE, f"{path} not published: {full_name} changed under every one of {RACES} tries")
    try:
        (result,) = answer["writeResults"]
        wrote = f"wrote {full_name} ({len(fields)} fields, updateTime {result['updateTime']}"
    except (KeyError, TypeError, ValueError):
        raise Failure(UNAVAILABLE, f"{path} not proven published: Firestore's answer to the commit of {full_name} "
                                   f"holds no write result: {json.dumps(answer)[:200]}") from None
    try:
        read, _ = firestore.batch_get(target)
    except stop.Stopped:    # committed before the stop was seen: published, as the history must say
        say(f"{wrote}); not read back: the night was stopped", "WARNING")
        return "written"
    if plain({"mapValue": {"fields": fields}}) != plain({"mapValue": read or {}}):    # read's "fields" as a map's
        raise Failure(UNAVAILABLE, f"{path} not proven published: reading {full_name} back does not give the "
                                   f"document sent: {json.dumps(read)[:200]}")
    say(f"{wrote}; read back the same)")
    return "written"
