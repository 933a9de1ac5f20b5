"""What the last nights did, kept beside the document (.rankings-nights.json, the newest last) so
that `rankings-night status` is the first thing an operator looks at: each night's result, each
step's status, tries, time and why it failed, and what the fetch read. Also the night's series
for rankings-night.prom, from the same entry."""
import json
import math
import os
import time

from . import files, record as records
from .metrics import carried
from .log import one_line
from .snapshot import Damaged
from .statuses import describe

NAME = ".rankings-nights.json"
KEEP = 60
STEPS = ("fetch", "aggregate", "prove", "publish")
MOST_BYTES = 16 << 20               # 60 nights are a few hundred kilobytes
LATEST = 32503680000                # 3000-01-01: later is no clock's time, and too late to show
MOST = 10**12                       # more documents, tries or seconds than any night has


class Bad(ValueError):
    """An entry that cannot be used: the field and why."""


def path(state):
    return os.path.join(state, NAME)


def load(state):
    """(nights, notes, damaged): the entries that pass check(), the notes on what could not be
    used, and whether the file holds anything that was not used (then append keeps it aside).
    Never raises on the file's contents: a damaged history is reported, not a crash."""
    where = path(state)
    try:
        data, more = files.read_regular(where, MOST_BYTES)
    except FileNotFoundError:
        return [], [], False
    except OSError as error:
        return [], [f"{where}: cannot be read: {error.strerror or error}"], True
    if more:
        return [], [f"{where}: larger than {MOST_BYTES} bytes, so not a history of this program"], True
    try:
        # NaN, Infinity and numbers too long to be ours stay strings, which check() refuses
        nights = json.loads(data, parse_constant=str, parse_int=lambda t: int(t) if len(t) <= 20 else t)
    except (ValueError, RecursionError) as error:
        return [], [f"{where}: not JSON ({type(error).__name__}: {str(error)[:200]})"], True
    if not isinstance(nights, list):
        return [], [f"{where}: not a JSON array of nights but {type(nights).__name__}"], True
    kept, dropped = [], []
    for number, night in enumerate(nights, 1):
        try:
            kept.append(check(night))
        except Bad as bad:
            dropped.append((number, bad))
    notes = []
    if dropped:
        number, bad = dropped[0]
        notes.append(f"{where}: {len(dropped)} of {len(nights)} entries dropped"
                     + (f", the first (entry {number})" if len(dropped) > 1 else f" (entry {number})") + f": {bad}")
    return kept[-KEEP:], notes, bool(dropped)


def read(state, say=None):
    """The nights that can be used, oldest first; what could not be used told to say()."""
    nights, notes, _ = load(state)
    for note in notes:
        if say is not None:
            say(f"warning: {note}")
    return nights


def append(state, entry, say):
    """Tonight's entry added, the file replaced in one rename. A file holding anything that was
    not used is first kept aside as NAME.damaged (NAME.damaged.1 ... when that exists), so
    nothing an operator may want to read is lost."""
    nights, notes, damaged = load(state)
    if damaged:
        aside = _keep_aside(path(state))
        for note in notes:
            say(f"warning: {note}" + (f"; kept aside as {aside}" if aside else "; cannot keep it aside, so it is replaced"))
    nights = (nights + [entry])[-KEEP:]
    files.write_atomically(path(state), (json.dumps(nights, indent=1) + "\n").encode())


def _keep_aside(where):
    """The damaged file renamed beside itself, never over an earlier one: its new name, or None."""
    for number in range(100):
        aside = where + ".damaged" + (f".{number}" if number else "")
        if not os.path.lexists(aside):
            try:
                os.rename(where, aside)
            except OSError:
                return None
            return aside
    return None


def _kind(value):
    return "null" if value is None else json.dumps(value)[:60] if isinstance(value, (str, int, float, bool)) \
        else type(value).__name__


def _want(ok, name, value, what):
    if not ok:
        raise Bad(f"{name} is {_kind(value)}, not {what}")
    return value


def _number(value):
    return type(value) in (int, float) and math.isfinite(value)


def _time(name, value):
    return _want(_number(value) and 0 <= value <= LATEST, name, value, "a time")


def _count(name, value):
    return _want(type(value) is int and 0 <= value <= MOST, name, value, "a count")


def _seconds(name, value):
    return _want(_number(value) and 0 <= value <= MOST, name, value, "seconds")


def _status(name, value):
    return _want(type(value) is int and 0 <= value <= 255, name, value, "an exit status")


def _text(name, value, none=False):
    return _want(isinstance(value, str) or (none and value is None), name, value, "text" + (" or null" if none else ""))


def _object(name, value):
    return _want(isinstance(value, dict), name, value, "an object")


def _field(night, key, name=None):
    if key not in night:
        raise Bad(f"{name or key} is missing")
    return night[key]


FETCH_FIELDS = {"record": _text, "mode": _text, "read_time": _text, "documents_read": _count,
                "snapshot_documents": _count, "drift_documents": _count, "streams": _count, "seconds": _seconds,
                "full_reason": lambda n, v: _text(n, v, none=True),
                "fallback": lambda n, v: _want(type(v) is bool, n, v, "true or false"),
                "bytes_written": _count, "compacted": lambda n, v: _text(n, v, none=True)}


def _fields(value, table, prefix):
    return {key: check_field(prefix + key, _field(value, key, prefix + key)) for key, check_field in table.items()}


def check(night):
    """A night as status, cron and the metrics use it: every field present and of its type, or Bad
    naming the first that is not. Fields of other versions are left out."""
    _object("the entry", night)
    out = _fields(night, {"started": _time, "ended": _time, "scheduler": _text, "status": _status}, "")
    boards = _want(isinstance(_field(night, "boards"), list), "boards", night["boards"], "a list")
    out["boards"] = [_text("a board", b) for b in boards]
    steps = _object("steps", _field(night, "steps"))
    out["steps"] = {}
    for name in STEPS:
        if name in steps:
            where = f"steps.{name}"
            step = _object(where, steps[name])
            out["steps"][name] = dict(_fields(step, {"status": _status, "tries": _count, "seconds": _seconds},
                                              where + "."),
                                      why=_text(f"{where}.why", step.get("why"), none=True))
    fetch = _field(night, "fetch")
    if fetch is not None:
        _object("fetch", fetch)
        out["fetch"] = {k: check_field(f"fetch.{k}", fetch[k]) for k, check_field in FETCH_FIELDS.items() if k in fetch}
    else:
        out["fetch"] = None
    proof = night.get("proof")
    if proof is not None:
        out["proof"] = _fields(_object("proof", proof), {"status": _text, "queries": _count}, "proof.")
        for key in ("lines", "mismatches", "index_commands"):
            listed = _want(isinstance(proof.get(key, []), list), f"proof.{key}", proof.get(key), "a list")
            out["proof"][key] = [_text(f"a line of proof.{key}", line) for line in listed]
    if "boot" in night:
        out["boot"] = _fields(_object("boot", night["boot"]), {"id": _text, "seconds": _seconds}, "boot.")
    return out


def boot():
    """(this boot's id, seconds since it): a clock no one sets, to place a night on the wall clock
    of now even after the wall clock was set back or forward. None where Linux does not say."""
    try:
        with open("/proc/sys/kernel/random/boot_id", encoding="ascii") as text:
            return text.read().strip(), time.clock_gettime(time.CLOCK_BOOTTIME)
    except (OSError, AttributeError, ValueError):
        return None


def real_start(night, now, booted):
    """When a night started, on today's wall clock: measured back from now on the boot clock when
    it ran since this boot (a clock set a day ahead then corrected does not move it); else its own
    `started`. None for a night that started in the future: a wrong clock's, which proves nothing."""
    mark = night.get("boot")
    if mark is not None and booted is not None and mark["id"] == booted[0] and mark["seconds"] <= booted[1]:
        start = now - (booted[1] - mark["seconds"]) - max(night["ended"] - night["started"], 0)
    else:
        start = night["started"]
    return start if 0 <= start <= now else None


def fetch_directory(settings):
    """DIR of the shipped fetch, when RANKINGS_FETCH runs it; None for another command."""
    command = settings.fetch or []
    if len(command) == 2 and os.path.basename(command[0]) == "rankings-fetch-firestore":
        return command[1]
    return None


def fetched(settings):
    """What the night DIR/current names says of itself (after tonight's fetch, tonight's)."""
    directory = fetch_directory(settings)
    if directory is None:
        return None
    try:
        night = records.read(os.path.join(directory, "current"), time.time_ns())
    except Damaged as damage:
        return {"record": str(damage)}
    out = {}
    for key, check_field in FETCH_FIELDS.items():
        try:
            if key != "record" and key in night:
                out[key] = check_field(key, night[key])
        except Bad:
            pass    # a field the record's own check leaves alone (an export's night): not shown
    return out


def entry(night, steps, status, ended, fetched):
    ran = {s.name: s for s in steps}
    out = {
        "started": night.started, "ended": round(ended, 3), "scheduler": night.scheduler, "status": status,
        "boards": [name for name, _, _ in night.boards()],
        "steps": {name: {"status": ran[name].status, "tries": ran[name].tries, "seconds": ran[name].seconds,
                         "why": ran[name].why if ran[name].status else None}
                  for name in STEPS if name in ran},
        "fetch": fetched,
    }
    if getattr(night, "proof", None) is not None:
        out["proof"] = night.proof.entry()
    booted = boot()
    if booted is not None:      # where the night ended on the boot clock, for cron's "ran today"
        out["boot"] = {"id": booted[0], "seconds": math.floor(booted[1] * 1000) / 1000}
    return out


def series(entry, path):
    """rankings-night.prom: every series on every night; a step that did not run is -1."""
    ended, ok = entry["ended"], entry["status"] == 0
    last = ended if ok else _carried(path, "rankings_night_last_success_timestamp_seconds", "", ended)
    out = [
        ("rankings_night_last_run_timestamp_seconds", "Unix time at which the last night ended.", [("", ended)]),
        ("rankings_night_last_run_duration_seconds", "How long the last night took.",
         [("", round(ended - entry["started"], 3))]),
        ("rankings_night_last_run_exit_status", "Exit status of the last night; 0 is success.", [("", entry["status"])]),
    ]
    if last is not None:
        out.append(("rankings_night_last_success_timestamp_seconds", "Unix time at which a night last succeeded: the "
                    "boards written and, with RANKINGS_PUBLISH, published. Alert when it is over 26 hours old.",
                    [("", last)]))
    status, tries, seconds, success = [], [], [], []
    for name in STEPS:
        step, label = entry["steps"].get(name), f'{{step="{name}"}}'
        status.append((label, -1 if step is None else step["status"]))
        tries.append((label, 0 if step is None else step["tries"]))
        seconds.append((label, 0 if step is None else step["seconds"]))
        done = ended if step is not None and step["status"] == 0 else \
            _carried(path, "rankings_night_step_last_success_timestamp_seconds", label, ended)
        if done is not None:
            success.append((label, done))
    out += [
        ("rankings_night_step_exit_status", "Exit status of each step's last try in the last night; -1: it did not "
                                            "run (not configured, or an earlier step failed).", status),
        ("rankings_night_step_tries", "Tries of each step in the last night.", tries),
        ("rankings_night_step_duration_seconds", "How long each step took in the last night, its pauses included.",
         seconds),
    ]
    if success:
        out.append(("rankings_night_step_last_success_timestamp_seconds", "Unix time at which each step last "
                                                                           "succeeded.", success))
    proof = entry.get("proof") or {}
    proven = {"proven": 1, "unproven": 0, "mismatch": 0}.get(proof.get("status"), -1)
    out += [
        ("rankings_night_boards_proven", "1: the last night's boards were proved against Firestore's counts; 0: "
                                         "unproven (published all the same) or disagreeing (not published); -1: "
                                         "not proved (no Firestore fetch, or the night stopped before).",
         [("", proven)]),
        ("rankings_night_proof_queries", "COUNT queries the last night's proof sent to Firestore.",
         [("", proof.get("queries", 0))]),
    ]
    return out


def _carried(path, name, labels, now):
    return carried(path, name, labels, not_after=now)


def last(nights, count):
    """The last `count` nights (none for 0: nights[-0:] would be all of them)."""
    return nights[-count:] if count > 0 else []


def show(nights, count, zone, held=None):
    """The human view of checked nights: newest first, one block a night; "" for none asked.
    `held`: (nights, bytes, DIR) the fetch's kept nights hold on disk (folders.held), or None."""
    if count <= 0:
        return ""
    lines = []
    for night in reversed(last(nights, count)):
        when = zone(night["started"]).strftime("%Y-%m-%d %H:%M %Z")
        result = "ok" if night["status"] == 0 else f"FAILED {describe(night['status'])}"
        lines.append(f"{when}  {result}  ({one_line(night['scheduler'])}, {night['ended'] - night['started']:.0f}s;"
                     f" boards: {one_line(', '.join(night['boards']))})")
        for name in STEPS:
            step = night["steps"].get(name)
            if step is None:
                lines.append(f"    {name:<9} not run")
                continue
            said = "ok" if step["status"] == 0 else f"failed {describe(step['status'])}"
            lines.append(f"    {name:<9} {said}, {step['tries']} {'try' if step['tries'] == 1 else 'tries'}, "
                         f"{step['seconds']:.1f}s" + (f": {one_line(step['why'])}" if step["why"] else ""))
            if name == "prove" and night.get("proof"):
                proof = night["proof"]
                lines.append(f"              the boards {one_line(proof['status'])} ({proof['queries']} COUNTs)")
                lines += [f"              {one_line(line)}" for line in proof["lines"] + proof["mismatches"][:10]]
                lines += [f"              make the index: {one_line(c)}" for c in proof["index_commands"]]
            if name == "fetch" and night["fetch"]:
                f = {k: one_line(v) if isinstance(v, str) else v for k, v in night["fetch"].items()}
                if "record" in f:
                    lines.append(f"              current: {f['record']}")
                else:
                    lines.append(f"              current: {f.get('mode')} read at {f.get('read_time')}, "
                                 f"{f.get('documents_read')} documents read, {f.get('snapshot_documents')} in the "
                                 f"snapshot, drift {f.get('drift_documents')}"
                                 + (f", wrote {size(f['bytes_written'])}" if "bytes_written" in f else "")
                                 + (f"; full because {f['full_reason']}" if f.get("full_reason") else "")
                                 + (f"; a new base because {f['compacted']}" if f.get("compacted") else ""))
    if held is not None:
        lines.append(f"kept nights: {held[0]} in {held[2]} hold {size(held[1])} (a file nights share counted once)")
    return "\n".join(lines) if lines else "no night has run yet"


def size(count):
    """Bytes as an operator reads them: 0 B, 812 B, 4.2 kB, 3.9 GB (powers of 1000, as df -H)."""
    for unit in ("B", "kB", "MB", "GB", "TB"):
        if count < 1000 or unit == "TB":
            return f"{count} {unit}" if unit == "B" else f"{count:.1f} {unit}"
        count /= 1000
