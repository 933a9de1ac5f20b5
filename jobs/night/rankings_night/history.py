"""What the last nights did, kept beside the document (.rankings-nights.json, the newest last) for
`rankings-night status`, cron's "ran today" and rankings-night.prom: each night's result, each
step's status, tries, time and why it failed, and what the fetch read and the proof found."""
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


def load(state):
    """(nights, notes, damaged): the entries check() passes, notes on what could not be used, and
    whether the file holds anything unused. A damaged history is reported, never a crash."""
    where = os.path.join(state, NAME)
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
    for note in notes if say is not None else ():
        say(f"warning: {note}")
    return nights


def append(state, entry, say):
    """Tonight's entry added, the file replaced in one rename; a file holding anything unused is
    first kept aside as NAME.damaged (.damaged.1 ... when that exists): nothing is lost."""
    nights, notes, damaged = load(state)
    where = os.path.join(state, NAME)
    if damaged:
        aside = _keep_aside(where)
        for note in notes:
            say(f"warning: {note}" + (f"; kept aside as {aside}" if aside else "; cannot keep it aside, so it is replaced"))
    files.write_atomically(where, (json.dumps((nights + [entry])[-KEEP:], indent=1) + "\n").encode())


def _keep_aside(where):
    for number in range(100):
        aside = where + ".damaged" + (f".{number}" if number else "")
        if not os.path.lexists(aside):
            try:
                os.rename(where, aside)
            except OSError:
                return None
            return aside
    return None


def _number(value):
    return type(value) in (int, float) and math.isfinite(value)


# A field's kind: what it must be, as the note says it, and the test.
TIME = ("a time", lambda v: _number(v) and 0 <= v <= LATEST)
COUNT = ("a count", lambda v: type(v) is int and 0 <= v <= MOST)
SECONDS = ("seconds", lambda v: _number(v) and 0 <= v <= MOST)
STATUS = ("an exit status", lambda v: type(v) is int and 0 <= v <= 255)
TEXT = ("text", lambda v: isinstance(v, str))
TEXT_OR_NULL = ("text or null", lambda v: v is None or isinstance(v, str))
OBJECT = ("an object", lambda v: isinstance(v, dict))
LIST = ("a list", lambda v: isinstance(v, list))
FETCH = {"record": TEXT, "mode": TEXT, "read_time": TEXT, "documents_read": COUNT, "snapshot_documents": COUNT,
         "drift_documents": COUNT, "streams": COUNT, "seconds": SECONDS, "full_reason": TEXT_OR_NULL,
         "fallback": ("true or false", lambda v: type(v) is bool), "bytes_written": COUNT, "compacted": TEXT_OR_NULL}


def _want(name, value, kind):
    if not kind[1](value):
        shown = "null" if value is None else json.dumps(value)[:60] if isinstance(value, (str, int, float, bool)) \
            else type(value).__name__
        raise Bad(f"{name} is {shown}, not {kind[0]}")
    return value


def _fields(where, value, kinds, optional=False):
    """value's fields of `kinds`, each checked; a missing one is Bad, or left out when optional."""
    out = {}
    for key, kind in kinds.items():
        if key in value:
            out[key] = _want(where + key, value[key], kind)
        elif not optional:
            raise Bad(f"{where}{key} is missing")
    return out


def check(night):
    """A night as status, cron and the metrics use it: every field present and of its type, or Bad
    naming the first that is not. Fields of other versions are left out."""
    out = _fields("", _want("the entry", night, OBJECT),
                  {"started": TIME, "ended": TIME, "scheduler": TEXT, "status": STATUS, "boards": LIST})
    out["boards"] = [_want("a board", b, TEXT) for b in out["boards"]]
    steps = _fields("", night, {"steps": OBJECT})["steps"]
    out["steps"] = {}
    for name in (n for n in STEPS if n in steps):
        step = _want(f"steps.{name}", steps[name], OBJECT)
        out["steps"][name] = _fields(f"steps.{name}.", step, {"status": STATUS, "tries": COUNT, "seconds": SECONDS})
        out["steps"][name]["why"] = _want(f"steps.{name}.why", step.get("why"), TEXT_OR_NULL)
    fetch = _fields("", night, {"fetch": ("an object", lambda v: v is None or isinstance(v, dict))})["fetch"]
    out["fetch"] = None if fetch is None else _fields("fetch.", fetch, FETCH, optional=True)
    if night.get("proof") is not None:
        proof = _want("proof", night["proof"], OBJECT)
        out["proof"] = _fields("proof.", proof, {"status": TEXT, "queries": COUNT})
        for key in ("lines", "mismatches", "index_commands"):
            listed = _want(f"proof.{key}", proof.get(key, []), LIST)
            out["proof"][key] = [_want(f"a line of proof.{key}", line, TEXT) for line in listed]
    if "boot" in night:
        out["boot"] = _fields("boot.", _want("boot", night["boot"], OBJECT), {"id": TEXT, "seconds": SECONDS})
    return out


def boot():
    """(this boot's id, seconds since it): a clock no one sets, which places a night on today's
    wall clock even after the wall clock was set back or forward. None where Linux does not say."""
    try:
        with open("/proc/sys/kernel/random/boot_id", encoding="ascii") as text:
            return text.read().strip(), time.clock_gettime(time.CLOCK_BOOTTIME)
    except (OSError, AttributeError, ValueError):
        return None


def real_start(night, now, booted):
    """When a night started on today's wall clock: measured back on the boot clock when it ran
    since this boot, else its own `started`; None for one in the future (a wrong clock's)."""
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
    """What the night DIR/current names says of itself; fields of other kinds (an export's) left out."""
    directory = fetch_directory(settings)
    if directory is None:
        return None
    try:
        night = records.read(os.path.join(directory, "current"), time.time_ns())
    except Damaged as damage:
        return {"record": str(damage)}
    return {k: night[k] for k, kind in FETCH.items() if k != "record" and k in night and kind[1](night[k])}


def entry(night, steps, status, ended, fetched):
    ran = {s.name: s for s in steps}
    out = {
        "started": night.started, "ended": round(ended, 3), "scheduler": night.scheduler, "status": status,
        "boards": [board.role for board in night.wiring.boards],
        "steps": {name: {"status": ran[name].status, "tries": ran[name].tries, "seconds": ran[name].seconds,
                         "why": ran[name].why if ran[name].status else None}
                  for name in STEPS if name in ran},
        "fetch": fetched,
    }
    if night.proof is not None:
        out["proof"] = night.proof.entry()
    booted = boot()
    if booted is not None:      # where the night ended on the boot clock, for cron's "ran today"
        out["boot"] = {"id": booted[0], "seconds": math.floor(booted[1] * 1000) / 1000}
    return out


def series(entry, path):
    """rankings-night.prom: every series on every night; a step that did not run is -1."""
    ended = entry["ended"]
    last = ended if entry["status"] == 0 else \
        carried(path, "rankings_night_last_success_timestamp_seconds", not_after=ended)
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
    steps = [(f'{{step="{name}"}}', entry["steps"].get(name)) for name in STEPS]
    success = [(label, ended if step is not None and step["status"] == 0 else
                carried(path, "rankings_night_step_last_success_timestamp_seconds", label, not_after=ended))
               for label, step in steps]
    out += [
        ("rankings_night_step_exit_status", "Exit status of each step's last try in the last night; -1: it did not "
                                            "run (not configured, or an earlier step failed).",
         [(label, -1 if step is None else step["status"]) for label, step in steps]),
        ("rankings_night_step_tries", "Tries of each step in the last night.",
         [(label, 0 if step is None else step["tries"]) for label, step in steps]),
        ("rankings_night_step_duration_seconds", "How long each step took in the last night, its pauses included.",
         [(label, 0 if step is None else step["seconds"]) for label, step in steps]),
    ]
    success = [(label, done) for label, done in success if done is not None]
    if success:
        out.append(("rankings_night_step_last_success_timestamp_seconds", "Unix time at which each step last "
                                                                           "succeeded.", success))
    proof = entry.get("proof") or {}
    return out + [
        ("rankings_night_boards_proven", "1: the last night's boards were proved against Firestore's counts; 0: "
                                         "unproven (published all the same) or disagreeing (not published); -1: "
                                         "not proved (no Firestore fetch, or the night stopped before).",
         [("", {"proven": 1, "unproven": 0, "mismatch": 0}.get(proof.get("status"), -1))]),
        ("rankings_night_proof_queries", "COUNT queries the last night's proof sent to Firestore.",
         [("", proof.get("queries", 0))]),
    ]


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
                lines.append(f"              current: {f['record']}" if "record" in f else
                             f"              current: {f.get('mode')} read at {f.get('read_time')}, "
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
