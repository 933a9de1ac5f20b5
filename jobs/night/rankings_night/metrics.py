"""The night's one metrics file for node_exporter's textfile collector (RANKINGS_METRICS): every series every night,
so a graph has no gaps; a failed night carries the last successes over from the file it replaces, in one rename."""
import math
import os

from . import files
from .history import STEPS

# 0.4 wrote these beside RANKINGS_METRICS; left, node_exporter would serve their stale series.
EARLIER = ("rankings-night.prom", "rankings-fetch.prom")


def carried(path, name, labels="", not_after=None):
    """The value of `name{labels}` in the file at path, or None; None too for a time later than `not_after`
    (a clock that ran ahead wrote it: carried over, it would hide a stale board)."""
    try:
        lines = files.read_regular(path, 1 << 20)[0].decode("utf-8", "replace").splitlines()
        value = next(float(w[1]) for w in map(str.split, lines) if len(w) == 2 and w[0] == name + labels)
    except (OSError, ValueError, StopIteration):
        return None
    return value if math.isfinite(value) and (not_after is None or value <= not_after) else None


def series(entry, path, held):
    """(name, help, [(labels, value)...]) of tonight's entry; `held`: the kept fetched nights' bytes."""
    ended, status, proof, fetch = entry["ended"], entry["status"], entry.get("proof") or {}, entry.get("fetch") or {}
    steps = [(f'{{step="{name}"}}', entry["steps"].get(name) or {}) for name in STEPS]

    def success(name, done, labels=""):    # tonight's end, or the last one carried over
        return labels, ended if done else carried(path, f"rankings_night_{name}", labels, not_after=ended)

    def each_step(field, default):
        return [(label, step.get(field, default)) for label, step in steps]
    out = [(f"rankings_night_{name}", text, [s for s in samples if s[1] is not None]) for name, text, samples in (
        ("last_run_timestamp_seconds", "Unix time at which the last night ended.", [("", ended)]),
        ("last_run_duration_seconds", "How long the last night took.", [("", round(ended - entry["started"], 3))]),
        ("last_run_exit_status", "Exit status of the last night; 0 is success.", [("", status)]),
        ("last_success_timestamp_seconds", "Unix time at which a night last succeeded (alert past 26 hours).",
         [success("last_success_timestamp_seconds", status == 0)]),
        ("step_exit_status", "Each step's status on its last try; -1: not run.", each_step("status", -1)),
        ("step_tries", "Tries of each step in the last night.", each_step("tries", 0)),
        ("step_duration_seconds", "How long each step took, its pauses included.", each_step("seconds", 0)),
        ("step_last_success_timestamp_seconds", "Unix time at which each step last succeeded.",
         [success("step_last_success_timestamp_seconds", step.get("status") == 0, label) for label, step in steps]),
        ("boards_proven", "1: the boards were proved against Firestore's counts; 0: unproven or disagreeing; -1: not "
                          "proved.", [("", {"proven": 1, "unproven": 0, "mismatch": 0}.get(proof.get("status"), -1))]),
        ("proof_queries", "COUNT queries the last night's proof sent.", [("", proof.get("queries", 0))]),
        ("refused_votes", "Malformed votes each board left out (its report names them).",
         [(f'{{board="{board}"}}', entry.get("refused", {}).get(board, 0)) for board in entry["boards"]]))]
    if "fetch" not in entry["steps"]:
        return out
    fetched = entry["steps"]["fetch"]["status"] == 0
    return out + [(f"rankings_fetch_{name}", text, [("", value)]) for name, text, value in (
        ("documents_read", "Documents Firestore returned to the last fetch, failed or not (billed as reads).",
         fetch.get("documents_read", 0)),
        ("snapshot_documents", "Documents in the snapshot the last fetch made; 0 when it failed.",
         fetch.get("snapshot_documents", 0) * fetched),
        ("full", "1 when the last fetch read the whole collection.", int(fetch.get("mode") == "full")),
        ("fallback", "1 when the last fetch read in full for want of a proof of its incremental night.",
         int(bool(fetch.get("fallback")))),
        ("bytes_written", "Bytes of the files the last fetch wrote.", fetch.get("bytes_written", 0) * fetched),
        ("kept_bytes", "Disk the kept fetched nights hold, each file once.", held),
        ("prune_errors", "Entries the last fetch's clean-up could not remove.", fetch.get("prune_errors", 0)))]


def write(path, entry, held, say):
    """The one file, and 0.4's two beside it removed; a failure is said, never the night's."""
    text = "".join(f"# HELP {name} {description}\n# TYPE {name} gauge\n"
                   + "".join(f"{name}{labels} {value}\n" for labels, value in samples)
                   for name, description, samples in series(entry, path, held) if samples)
    try:
        files.write_atomically(path, text.encode("utf-8"))
    except OSError as error:
        say(f"cannot write {path}: {error.strerror or error}", "WARNING")
    for earlier in (os.path.join(os.path.dirname(path), name) for name in EARLIER):
        if os.path.isfile(earlier) and not os.path.islink(earlier):
            try:
                os.unlink(earlier)
                say(f"removed {earlier}: 0.4's, whose series are in {path} now")
            except OSError as error:
                say(f"cannot remove 0.4's {earlier}: {error.strerror}", "WARNING")
