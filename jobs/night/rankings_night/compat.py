"""Version 0.4's settings (docs/configuration.md, "Settings of 0.4"): one that still means what it meant is carried over
and named in one WARNING with what to write instead; one that chose a mode 0.5 no longer has is 78 before anything
runs, naming what to do. The 0.5 rules of RANKINGS_EXPORTS are checked here too."""
import os
import re

from . import paths
from .statuses import CONFIG, Failure

HINT = '(see "Upgrading from 0.4" in rankings(1))'
EXPORT = "the export method is gone (its boards cannot be proven): delete the line"
# name: (the one value that means what 0.5 does, None: only empty; what any other meant)
RULES = {
    "RANKINGS_FIRESTORE_FETCH": ("rest", EXPORT),
    "RANKINGS_FIRESTORE_BUCKET": (None, EXPORT),
    "RANKINGS_FIRESTORE_BUCKET_MOUNT": (None, EXPORT),
    "RANKINGS_FIRESTORE_SINCE": (None, "a window night is gone: RANKINGS_MONTHLY=yes publishes the 30-day board from "
                                       "the nightly snapshot; delete the line"),
    "RANKINGS_FIRESTORE_COLLECTION": ("weekly_rankings", "the boards are published to weekly_rankings, where the app "
                                                         "reads them: delete the line"),
    "RANKINGS_BOARD_PROOF": ("yes", "every board is proved now; one that cannot be (an index missing) is made from a "
                                    "full read and published marked unproven: delete the line"),
    "RANKINGS_FIRESTORE_ENDPOINT": (None, "the night reads firestore.googleapis.com (through https_proxy when it is "
                                          "set): delete the line"),
}
# Derived or constant now: deleted, and nothing written instead.
GONE = {"RANKINGS_LOCK_FILE", "RANKINGS_LOG_FILE", "RANKINGS_BIN", "RANKINGS_RETRY_PAUSE_SECONDS",
        "RANKINGS_FETCH_TIMEOUT_SECONDS"} | {f"RANKINGS_FIRESTORE_{n}" for n in (
            "DEADLINE_SECONDS", "KEEP", "ATTEMPTS", "BACKOFF_SECONDS", "TIMEOUT_SECONDS", "INCREMENTAL", "MARGIN",
            "FULL_EVERY", "STREAMS", "PITR", "SNAPSHOT")}
OLD = frozenset(RULES) | GONE | {"RANKINGS_OUTPUT", "RANKINGS_MONTHLY_OUTPUT", "RANKINGS_FLAGS", "RANKINGS_FETCH",
                                 "RANKINGS_PUBLISH"}
MEANING = ("--since", "--as-of", "--week", "--week-document", "--dedupe", "--computed-at", "--time-zone", "--top",
           "--format", "--allow-empty")
PROJECT = ("RANKINGS_FIRESTORE_PROJECT 0.5 always fetches and publishes: delete this line for that, or "
           "delete RANKINGS_FIRESTORE_PROJECT to make the boards from RANKINGS_EXPORTS without Firestore")
DROP = re.compile(r"(?:^|\s)--max-drop(?:=|\s+)(\S+)")     # 0.4's RANKINGS_FLAGS="--max-drop N"


def refused(where, problem, hint=HINT):
    """A setting refused (78) where it was given: a file's line says nothing ran and where to read more."""
    return Failure(CONFIG, f"{where}: {problem}" + (f"; nothing was run {hint}" if where != "environment" else ""))


def carry(old, given, where):
    """Into given and where: the 0.5 settings a 0.4 file gives by other names, where it does not give them itself."""
    output, drops = old.get("RANKINGS_OUTPUT"), DROP.findall(old.get("RANKINGS_FLAGS", ("",))[0])
    if output and "RANKINGS_STATE_DIRECTORY" not in given and output[0].startswith("/"):
        given["RANKINGS_STATE_DIRECTORY"], where["RANKINGS_STATE_DIRECTORY"] = os.path.dirname(output[0]), output[1]
    if drops and "RANKINGS_MAX_DROP" not in given:
        given["RANKINGS_MAX_DROP"], where["RANKINGS_MAX_DROP"] = drops[-1], old["RANKINGS_FLAGS"][1]


def _same(a, b):     # one file, the links of their folders resolved (not one the file itself is)
    a, b = os.path.abspath(a), os.path.abspath(b)
    return os.path.basename(a) == os.path.basename(b) and os.path.realpath(os.path.dirname(a)) == \
        os.path.realpath(os.path.dirname(b))


def _judged(name, text, where, old, s):
    """(why 0.5 refuses the line or None, what to write instead) of one 0.4 setting."""
    words, state, project = text.split(), s.state_directory, s.firestore_project
    fetched = paths.fetched(state)
    if name in RULES:
        return (RULES[name][1] if text and text != RULES[name][0] else None), "delete it"
    if name in ("RANKINGS_OUTPUT", "RANKINGS_MONTHLY_OUTPUT"):
        role, folder = "all_time" if name == "RANKINGS_OUTPUT" else "monthly", os.path.dirname(text) or "/"
        if text and not _same(text, paths.board(state, role)):
            return (f"the boards are now all_time.json and monthly.json in the state directory: write RANKINGS_"
                    f"STATE_DIRECTORY={folder} instead, and read the board as {paths.board(folder, role)}"), None
        moved = s.where.get("RANKINGS_STATE_DIRECTORY") == where and state != paths.STATE
        return None, f"write RANKINGS_STATE_DIRECTORY={state} instead" if moved else "delete it"
    if name == "RANKINGS_FLAGS":
        other = next(iter(DROP.sub(" ", text).split()), None)     # a word besides --max-drop N
        flag = (other or "").split("=", 1)[0]
        if flag == "--max-invalid":
            return ("refused votes are left out up to RANKINGS_MAX_REFUSED percent of the votes (default 1): write "
                    "RANKINGS_MAX_REFUSED instead"), None
        if flag in MEANING:
            return (f"{flag} changes what a board means, and is not the night's: the 30-day board is "
                    "RANKINGS_MONTHLY=yes; a past day, week or window is `rankings aggregate` by hand (\"Backfill\" in "
                    "rankings(1))"), None
        if other:
            return f"{other} is not the night's (it sets the job's flags itself): delete it", None
        moved = s.where.get("RANKINGS_MAX_DROP") == where and float(s.max_drop) != 1
        return None, f"write RANKINGS_MAX_DROP={s.max_drop} instead" if moved else "delete it"
    if name == "RANKINGS_FETCH":
        if words and os.path.basename(words[0]) != "rankings-fetch-firestore":
            return ("fetch commands are gone: without RANKINGS_FIRESTORE_PROJECT the night reads RANKINGS_EXPORTS as "
                    "it is, so have your fetch fill it before midnight; delete the line"), None
        if words and (len(words) != 2 or not _same(words[1], fetched)):
            return (f"the fetched nights are now {fetched}: move them there (as their owner: mv {words[-1]} "
                    f"{fetched}) and delete the line"), None
        if project and (not words or "RANKINGS_PUBLISH" not in old):
            return (f"{'empty' if not words else 'without RANKINGS_PUBLISH'}, 0.4 did not "
                    f"{'fetch' if not words else 'publish'}, but with {PROJECT}"), None
    if name == "RANKINGS_PUBLISH":
        if words and (os.path.basename(words[0]) != "rankings-publish-firestore" or len(words) != 1):
            return (f"publish commands are gone: copy the boards from {paths.board(state, 'all_time')} and "
                    "monthly.json beside it with a unit of your own (a systemd .path unit), and delete the line"), None
        if project and not words:
            return f"empty, 0.4 did not publish, but with {PROJECT}", None
    return None, "delete it"


def check(old, s):
    """The one WARNING's text on the 0.4 settings read (None when there are none), or Failure(78)."""
    project, old, notes = s.firestore_project, dict(old), []
    if project and s.exports and _same(s.exports, os.path.join(paths.fetched(s.state_directory), "current")):
        old["RANKINGS_EXPORTS"], s.exports = (s.given["RANKINGS_EXPORTS"], s.where["RANKINGS_EXPORTS"]), None
    for name, (text, where) in old.items():
        why, advice = _judged(name, text, where, old, s)
        if why:
            raise refused(where, f"{name}={text}: {why}")
        notes.append(f"{'line ' + where.rsplit(':', 1)[1] + ' ' if where != 'environment' else ''}{name}="
                     f"{chr(34) + text + chr(34) if ' ' in text else text}: {advice}")
    if project and s.exports:
        raise Failure(CONFIG, f"{s.where['RANKINGS_EXPORTS']}: RANKINGS_EXPORTS={s.exports}: with a project the "
                              "night reads what it fetched, never another folder: delete the line (or the project)")
    if not project and not s.exports:
        raise Failure(CONFIG, f"RANKINGS_EXPORTS is not set ({s.source}): without RANKINGS_FIRESTORE_PROJECT the "
                              "night reads the exports it names")
    if notes:
        return (f"{s.source} holds settings of 0.4, read as before; write 0.5's instead (rankings-night settings shows "
                "the result): " + "; ".join(notes))
