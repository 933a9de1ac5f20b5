"""What the last nights did (STATE/.rankings-nights.json, the newest last), for `status`, cron and the metrics. A
damaged history is reported, never a crash: an entry that cannot be used is dropped, its file kept aside."""
import json
import os

from . import files, paths
from .log import one_line
from .statuses import describe
from .zone import new_york

KEEP, MOST_BYTES = 60, 16 << 20     # 60 nights are a few hundred kilobytes
STEPS = ("fetch", "aggregate", "prove", "publish")
LATEST, MOST = 32503680000, 10**12  # 3000-01-01, and more documents, tries or seconds than any night has
# A field's kind: what it must be, as a note says it, and the test (NaN and huge numbers compare false).
TIME = ("a time", lambda v: type(v) in (int, float) and 0 <= v <= LATEST)
COUNT = ("a count", lambda v: type(v) is int and 0 <= v <= MOST)
SECONDS = ("seconds", lambda v: type(v) in (int, float) and 0 <= v <= MOST)
STATUS = ("an exit status", lambda v: type(v) is int and 0 <= v <= 255)
TEXT = ("text", lambda v: isinstance(v, str))
TEXT_OR_NULL = ("text or null", lambda v: v is None or isinstance(v, str))
TEXTS = ("a list of text", lambda v: isinstance(v, list) and all(isinstance(t, str) for t in v))
COUNTS = ("counts by board", lambda v: isinstance(v, dict) and all(map(COUNT[1], v.values())))
FETCH = {"mode": TEXT, "read_time": TEXT, "documents_read": COUNT, "snapshot_documents": COUNT, "streams": COUNT,
         "seconds": SECONDS, "full_reason": TEXT_OR_NULL, "fallback": ("true or false", lambda v: type(v) is bool),
         "bytes_written": COUNT, "compacted": TEXT_OR_NULL, "prune_errors": COUNT}
# An entry's shape: each field's kind, or the shape of the object it holds; one ending in ? not in every version's.
ENTRY = {"started": TIME, "ended": TIME, "scheduler": TEXT, "status": STATUS, "boards": TEXTS,
         "steps": {f"{name}?": {"status": STATUS, "tries": COUNT, "seconds": SECONDS, "why": TEXT_OR_NULL}
                   for name in STEPS},
         "fetch": ("an object or null", lambda v: v is None or isinstance(v, dict)), "stopped_by?": TEXT,
         "published?": TEXTS, "refused?": COUNTS, "proof?": {"status?": TEXT, "queries?": COUNT, "lines?": TEXTS,
                                                            "mismatches?": TEXTS, "index_commands?": TEXTS}}


class Bad(ValueError):
    """An entry that cannot be used: the field and why."""


def read(state):
    """(nights, notes): the entries check() passes, and what could not be used (none: the file holds nothing else)."""
    where = paths.history(state)
    try:
        data, more = files.read_regular(where, MOST_BYTES)
        if more:
            raise Bad(f"larger than {MOST_BYTES} bytes, so not a history of this program")
        nights = json.loads(data, parse_constant=str)   # NaN and Infinity stay strings, which check() refuses
        if not isinstance(nights, list):
            raise Bad(f"not a JSON array of nights but {type(nights).__name__}")
    except FileNotFoundError:
        return [], []
    except OSError as error:
        return [], [f"{where}: cannot be read: {error.strerror or error}"]
    except (ValueError, RecursionError) as error:
        why = error if isinstance(error, Bad) else f"not JSON ({type(error).__name__}: {str(error)[:200]})"
        return [], [f"{where}: {why}"]
    kept, dropped = [], []
    for number, night in enumerate(nights, 1):
        try:
            kept.append(check(night))
        except Bad as bad:
            dropped.append(f"(entry {number}): {bad}")
    many = ", the first" if len(dropped) > 1 else ""
    notes = [f"{where}: {len(dropped)} of {len(nights)} entries dropped{many} {dropped[0]}"] if dropped else []
    return kept[-KEEP:], notes


def append(state, entry, say):
    """Tonight's entry added in one rename, a file holding anything unused first kept aside as NAME.damaged
    (.damaged.1 ... beside an earlier one): nothing is lost."""
    (nights, notes), where = read(state), paths.history(state)
    if notes:
        aside = next(name for name in [f"{where}.damaged"] + [f"{where}.damaged.{n}" for n in range(1, 100)]
                     if not os.path.lexists(name))
        os.rename(where, aside)     # beside it, so where the new file can be written this can be too
        for note in notes:
            say(f"{note}; kept aside as {aside}")
    files.write_atomically(where, (json.dumps((nights + [entry])[-KEEP:], indent=1) + "\n").encode())


def check(night, shape=ENTRY, where=""):
    """A night as status, cron and the metrics use it (its fields as `shape` has them, others dropped), or Bad
    naming its first field that is not as it must be; text or null left out is null."""
    if not isinstance(night, dict):
        raise Bad(f"{where.rstrip('.') or 'the entry'} is {_shown(night)}, not an object")
    out = {}
    for key, kind in shape.items():
        name = key.rstrip("?")
        if name not in night and (key.endswith("?") or kind is TEXT_OR_NULL):
            out.update({} if key.endswith("?") else {name: None})
        elif name not in night:
            raise Bad(f"{where}{name} is missing")
        elif isinstance(kind, dict):
            out[name] = check(night[name], kind, f"{where}{name}.")
        elif not kind[1](night[name]):
            raise Bad(f"{where}{name} is {_shown(night[name])}, not {kind[0]}")
        else:
            out[name] = night[name]
    if shape is ENTRY and out["fetch"]:
        out["fetch"] = check(out["fetch"], {f"{k}?": kind for k, kind in FETCH.items()}, "fetch.")
    return out


def _shown(value):
    return "null" if value is None else json.dumps(value)[:60] if isinstance(value, (str, int, float, bool)) \
        else type(value).__name__


def last(nights, count):
    return nights[-count:] if count > 0 else []     # nights[-0:] would be all of them


def show(nights, count, held=None):
    """The nights for a person, newest first, one block a night; `held`: (nights, bytes, DIR) the kept fetched
    nights hold on disk (folders.held), or None."""
    if count <= 0:
        return ""
    lines = []
    for night in reversed(last(nights, count)):
        result = "ok" if night["status"] == 0 else f"FAILED {describe(night['status'])}"
        stopped = f", stopped by {night['stopped_by']}" if night.get("stopped_by") else ""
        lines.append(f"{new_york(night['started']):%Y-%m-%d %H:%M %Z}  {result}  ({one_line(night['scheduler'])}, "
                     f"{night['ended'] - night['started']:.0f}s{stopped}; "
                     f"boards: {one_line(', '.join(night['boards']))})")
        for name in STEPS:
            step = night["steps"].get(name)
            if step is None:
                lines.append(f"    {name:<9} not run")
                continue
            said = "ok" if step["status"] == 0 else f"failed {describe(step['status'])}"
            lines.append(f"    {name:<9} {said}, {step['tries']} {'try' if step['tries'] == 1 else 'tries'}, "
                         f"{step['seconds']:.1f}s" + (f": {one_line(step['why'])}" if step["why"] else ""))
            lines += [f"              {line}" for line in _under(name, night)]
    if held is not None:
        lines.append(f"kept nights: {held[0]} in {held[2]} hold {size(held[1])} (a file nights share counted once)")
    return "\n".join(lines) if lines else "no night has run yet"


def _under(name, night):
    """The lines under a step: tonight's fetch, the votes left out, the proof's verdict, what was published."""
    f, proof, refused, published = night["fetch"] or {}, night.get("proof"), night.get("refused", {}), \
        night.get("published")
    if name == "fetch" and f:
        return [f"tonight: {f.get('mode')} read" + (f" at {f['read_time']}" if "read_time" in f else "")
                + f", {f.get('documents_read')} documents read"
                + (f", {f['snapshot_documents']} in the snapshot" if "snapshot_documents" in f else "")
                + (f", wrote {size(f['bytes_written'])}" if "bytes_written" in f else "")
                + (f"; full because {one_line(f['full_reason'])}" if f.get("full_reason") else "")
                + (f"; a new base because {one_line(f['compacted'])}" if f.get("compacted") else "")]
    if name == "aggregate" and any(refused.values()):
        return ["left out: " + ", ".join(f"{n} malformed {'vote' if n == 1 else 'votes'} ({one_line(board)})"
                                         for board, n in refused.items() if n)]
    if name == "prove" and proof:
        return [f"the boards {one_line(proof['status'])} ({proof['queries']} COUNTs)"] \
            + [one_line(line) for line in proof.get("lines", []) + proof.get("mismatches", [])[:10]] \
            + [f"make the index: {one_line(c)}" for c in proof.get("index_commands", [])]
    return ["published: " + ", ".join(map(one_line, published))] if name == "publish" and published else []


def size(count):
    """Bytes as an operator reads them: 0 B, 812 B, 4.2 kB, 3.9 GB (powers of 1000, as df -H)."""
    for unit in ("B", "kB", "MB", "GB", "TB"):
        if count < 1000 or unit == "TB":
            return f"{count} {unit}" if unit == "B" else f"{count:.1f} {unit}"
        count /= 1000
