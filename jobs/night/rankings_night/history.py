"""What the last nights did, kept beside the document (.rankings-nights.json, the newest last) so
that `rankings-night status` is the first thing an operator looks at: each night's result, each
step's status, tries, time and why it failed, and what the fetch read. Also the night's series
for rankings-night.prom, from the same entry."""
import json
import os
import time

from . import files, record as records
from .snapshot import Damaged
from .statuses import describe

NAME = ".rankings-nights.json"
KEEP = 60
STEPS = ("fetch", "aggregate", "publish")


def path(state):
    return os.path.join(state, NAME)


def read(state):
    try:
        with open(path(state), "rb") as text:
            nights = json.load(text)
        return [n for n in nights if isinstance(n, dict)] if isinstance(nights, list) else []
    except (OSError, ValueError):
        return []


def append(state, entry):
    nights = (read(state) + [entry])[-KEEP:]
    files.write_atomically(path(state), (json.dumps(nights, indent=1) + "\n").encode())


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
    keys = ("mode", "read_time", "documents_read", "snapshot_documents", "drift_documents", "full_reason", "fallback",
            "streams", "seconds")
    return {k: night[k] for k in keys if k in night}


def entry(night, steps, status, ended, fetched):
    ran = {s.name: s for s in steps}
    return {
        "started": night.started, "ended": round(ended, 3), "scheduler": night.scheduler, "status": status,
        "boards": [name for name, _, _ in night.boards()],
        "steps": {name: {"status": ran[name].status, "tries": ran[name].tries, "seconds": ran[name].seconds,
                         "why": ran[name].why if ran[name].status else None}
                  for name in STEPS if name in ran},
        "fetch": fetched,
    }


def series(entry, path):
    """rankings-night.prom: every series on every night; a step that did not run is -1."""
    ended, ok = entry["ended"], entry["status"] == 0
    last = ended if ok else _carried(path, "rankings_night_last_success_timestamp_seconds", "")
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
            _carried(path, "rankings_night_step_last_success_timestamp_seconds", label)
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
    return out


def _carried(path, name, labels):
    from .metrics import carried
    return carried(path, name, labels)


def show(nights, count, zone):
    """The human view: newest first, one block a night."""
    lines = []
    for night in reversed(nights[-count:]):
        when = zone(night.get("started", 0)).strftime("%Y-%m-%d %H:%M %Z")
        result = "ok" if night.get("status") == 0 else f"FAILED {describe(night.get('status'))}"
        lines.append(f"{when}  {result}  ({night.get('scheduler', '?')}, {night.get('ended', 0) - night.get('started', 0):.0f}s;"
                     f" boards: {', '.join(night.get('boards', []))})")
        for name in STEPS:
            step = night.get("steps", {}).get(name)
            if step is None:
                lines.append(f"    {name:<9} not run")
                continue
            said = "ok" if step["status"] == 0 else f"failed {describe(step['status'])}"
            lines.append(f"    {name:<9} {said}, {step['tries']} {'try' if step['tries'] == 1 else 'tries'}, "
                         f"{step['seconds']:.1f}s" + (f": {step['why']}" if step.get("why") else ""))
            if name == "fetch" and night.get("fetch"):
                f = night["fetch"]
                if "record" in f:
                    lines.append(f"              current: {f['record']}")
                else:
                    lines.append(f"              current: {f.get('mode')} read at {f.get('read_time')}, "
                                 f"{f.get('documents_read')} documents read, {f.get('snapshot_documents')} in the "
                                 f"snapshot, drift {f.get('drift_documents')}"
                                 + (f"; full because {f['full_reason']}" if f.get("full_reason") else ""))
    return "\n".join(lines) if lines else "no night has run yet"
