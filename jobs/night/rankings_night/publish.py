"""rankings-publish-firestore DOC: DOC written to Firestore as COLLECTION/NAME (NAME: DOC's file
name without .json) after `rankings check --print-firestore` has checked it and given its body. It
succeeds only when Firestore's answer holds the write and reading it back gives the same fields."""
import json
import os
import re
import subprocess
import sys
import time

from . import auth, settings as setting, statuses
from .firestore import Firestore
from .log import one_line
from .snapshot import parse_time
from .statuses import CONFIG, DATA, NO_INPUT, UNAVAILABLE, USAGE, Failure
from .transport import Refused

PROGRAM = "rankings-publish-firestore"
READ_TIME = "snapshot_read_time"    # the field that orders two nights' boards (the app ignores it)
RACES = 3                           # reads and commits before a document that keeps changing is given up
WEEK = re.compile(r"[0-9]{4}-W[0-9]{2}")
USAGE_TEXT = """Usage: rankings-publish-firestore DOC

Writes the rankings document DOC to Firestore as RANKINGS_FIRESTORE_COLLECTION/NAME (default
weekly_rankings; NAME is DOC's file name without .json here: rankings-night names each board by
its role), checked first by `rankings check`, in one commit on the condition that the document is
the one read just before, and succeeds only once Firestore holds it. Settings come from the environment, as rankings-night hands
them over. See "Firestore: fetch and publish" in rankings(1), or
/usr/share/doc/rankings/firestore.md.gz.
"""


def _stderr(line):
    print(line, file=sys.stderr, flush=True)


out = _stderr   # where the publish's lines go: standard error, or the night's log when it runs there


def say(message):
    out(f"{PROGRAM}: {one_line(auth.redact(message))}")


_PLAIN = {"timestampValue": parse_time, "integerValue": int, "doubleValue": float,
          "arrayValue": lambda inner: [plain(v) for v in inner.get("values", [])],
          "mapValue": lambda inner: {k: plain(v) for k, v in inner.get("fields", {}).items()}}


def plain(value):
    """A REST Value that compares as Firestore means it (a Timestamp's zero milliseconds, an empty array)."""
    (kind, inner), = value.items()
    return kind, _PLAIN.get(kind, lambda same: same)(inner)


def same_fields(sent, answer):
    try:
        return {k: plain(v) for k, v in sent.items()} == {k: plain(v) for k, v in answer["fields"].items()}
    except (KeyError, TypeError, ValueError, AttributeError):
        return False


def is_firestore_body(path):
    """A body is an object with `fields` and no `week_id`, as `rankings` itself tells them apart."""
    try:
        with open(path, "rb") as document:
            top = json.load(document)
    except (OSError, ValueError):
        return False
    return isinstance(top, dict) and "fields" in top and "week_id" not in top


def publish(path, settings, name=None, read_time=None, max_drop=None, seconds=None):
    """DOC written as COLLECTION/NAME in one commit on the document read just before (nothing written
    between is overwritten unseen); not over one from a later snapshot than `read_time`
    ("superseded"), nor over a total `max_drop` % higher (65). "written" or "superseded"."""
    settings.require("RANKINGS_FIRESTORE_PROJECT")
    collection = settings.firestore_collection
    name = name or os.path.basename(path).removesuffix(".json")
    if not name or name.startswith("."):
        raise Failure(USAGE, f"{path}: no document name in the file name")
    if not os.path.exists(path):
        raise Failure(NO_INPUT, f"{path}: no such file")
    command = [settings.bin, "check", "--quiet", "--top", "1000", "--print-firestore"]
    if is_firestore_body(path):
        command += ["--format", "firestore"]
    try:
        checked = subprocess.run(command + [path], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE)
    except OSError as error:
        raise Failure(CONFIG, f"cannot run {settings.bin} (RANKINGS_BIN): {error.strerror}") from None
    if checked.returncode != 0:
        said = checked.stderr.decode("utf-8", "replace").strip().splitlines()[-1:]
        raise Failure(checked.returncode, f"{path} not published: rankings check said status {checked.returncode}"
                      + (f": {said[0]}" if said else ""))
    body = json.loads(checked.stdout)
    week = body.get("fields", {}).get("week_id", {}).get("stringValue", "")
    # A week's board goes under its own week (the app reads weekly_rankings/WEEK); an all-time
    # board under any name that is not a week's (all_time, monthly).
    if (week != "all_time" and week != name) or (week == "all_time" and WEEK.fullmatch(name)):
        raise Failure(DATA, f"{path} not published: its week_id is {week}, but it would be written as "
                            f"{collection}/{name}; name the file {week}.json"
                      + (" (or another name that is not a week's)" if week == "all_time" else ""))
    if read_time is not None:
        body["fields"][READ_TIME] = {"timestampValue": read_time}
    firestore = Firestore(settings, say)
    if seconds is not None:     # every call of this publish, its retries included, within them
        firestore.transport.deadline = time.monotonic() + seconds
    target = f"{collection}/{name}"
    full_name = f"{firestore.database_path}/documents/{target}"
    for _ in range(RACES):
        current = firestore.get_document(target)
        if current is not None and not (isinstance(current, dict) and isinstance(current.get("updateTime"), str)
                                        and isinstance(current.get("fields"), dict)):
            raise Failure(UNAVAILABLE, f"reading {target} before publishing gave no document: "
                                       f"{json.dumps(current)[:200]}")
        if read_time is not None and later(current, read_time):
            say(f"not written: {full_name} was made from a later snapshot (readTime "
                f"{current['fields'][READ_TIME]['timestampValue']}) than this night's ({read_time}); nothing is wrong")
            return "superseded"
        if max_drop is not None and current is not None:
            guard(path, full_name, current, body, max_drop)
        try:
            answer = firestore.commit([firestore.write(target, body["fields"], exists=False) if current is None else
                                       firestore.write(target, body["fields"], update_time=current["updateTime"])])
        except Refused as refused:
            if refused.reason in ("FAILED_PRECONDITION", "ABORTED") or refused.code == 409:
                say(f"{full_name} changed while this night published: reading it again")
                continue
            raise
        break
    else:
        raise Failure(UNAVAILABLE, f"{path} not published: {full_name} changed under every one of {RACES} tries")
    results = answer.get("writeResults") if isinstance(answer, dict) else None
    written = results[0].get("updateTime") if isinstance(results, list) and len(results) == 1 \
        and isinstance(results[0], dict) else None
    if not isinstance(written, str):
        raise Failure(UNAVAILABLE, f"{path} not proven published: Firestore's answer to the commit of {full_name} "
                                   f"holds no write result: {json.dumps(answer)[:200]}")
    read = firestore.get(target)
    if not (isinstance(read, dict) and read.get("name") == full_name and same_fields(body["fields"], read)):
        raise Failure(UNAVAILABLE, f"{path} not proven published: reading {full_name} back does not give the "
                                   f"document sent: {json.dumps(read)[:200]}")
    where = f" on the emulator at {settings.emulator_host}" if settings.emulator_host else ""
    say(f"wrote {full_name} ({len(body['fields'])} fields, updateTime {written}; read back the same){where}")
    return "written"


def later(current, read_time):
    """Whether the published document was made from a snapshot read after read_time."""
    try:
        theirs = current["fields"][READ_TIME]["timestampValue"]
        return parse_time(theirs) > parse_time(read_time)
    except (TypeError, KeyError, ValueError):
        return False    # made by hand, or by a night without a fetch: no snapshot to order by


def guard(path, full_name, current, body, max_drop):
    """--max-drop against the board in Firestore (a container without a volume has no board of its own)."""
    def total(fields):
        try:
            return int(fields["total_hilarious_ratings"]["integerValue"]) + \
                int(fields["total_horrible_ratings"]["integerValue"])
        except (TypeError, KeyError, ValueError):
            return None
    before, after = total(current["fields"]), total(body["fields"])
    if before is None or after is None or before == 0 or after >= before * (1 - max_drop / 100):
        return
    raise Failure(DATA, f"{path} not published: its hilarious + horrible total {after} is "
                        f"{100 * (before - after) / before:.1f} % below the {before} of {full_name}, which the app "
                        f"reads now (--max-drop {max_drop:g}); the app keeps its board. If the votes really went, "
                        "accept it once: rankings-night run -- --max-drop 100")


def main(argv, environ):
    return statuses.command(argv, USAGE_TEXT, lambda arg: publish(arg, setting.from_environment(environ)), say, PROGRAM)
