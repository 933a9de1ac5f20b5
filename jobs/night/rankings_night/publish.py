"""rankings-publish-firestore DOC: DOC written to Firestore as COLLECTION/NAME (NAME: DOC's file
name without .json) in one PATCH of the whole document, after `rankings check --print-firestore`
has checked it and given its Firestore body. It succeeds only when Firestore answers with that
document (its name, an updateTime, the same fields) and reading it back gives the same fields."""
import json
import os
import re
import subprocess
import sys

from . import auth, settings as setting
from .firestore import Firestore
from .log import one_line
from .snapshot import parse_time
from .statuses import SOFTWARE, CONFIG, DATA, NO_INPUT, UNAVAILABLE, USAGE, Failure, status_of
from .transport import FirestoreError

PROGRAM = "rankings-publish-firestore"
WEEK = re.compile(r"[0-9]{4}-W[0-9]{2}")
USAGE_TEXT = """Usage: rankings-publish-firestore DOC

Writes the rankings document DOC to Firestore as RANKINGS_FIRESTORE_COLLECTION/NAME (default
weekly_rankings; NAME is DOC's file name without .json), checked first by `rankings check`, and
succeeds only once Firestore holds it. Settings come from the environment, as rankings-night hands
them over. See "Firestore: fetch and publish" in rankings(1), or
/usr/share/doc/rankings/firestore.md.gz.
"""


def say(message):
    print(f"{PROGRAM}: {one_line(auth.redact(message))}", file=sys.stderr, flush=True)


def plain(value):
    """A REST Value as a Python value that compares as Firestore means it (a Timestamp written
    with or without its zero milliseconds, an empty array with or without `values`)."""
    (kind, inner), = value.items()
    if kind == "timestampValue":
        return kind, parse_time(inner)
    if kind == "integerValue":
        return kind, int(inner)
    if kind == "doubleValue":
        return kind, float(inner)
    if kind == "arrayValue":
        return kind, [plain(v) for v in inner.get("values", [])]
    if kind == "mapValue":
        return kind, {k: plain(v) for k, v in inner.get("fields", {}).items()}
    return kind, inner


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


def publish(path, settings):
    settings.require("RANKINGS_FIRESTORE_PROJECT")
    collection = settings.firestore_collection
    name = os.path.basename(path).removesuffix(".json")
    if not name or name.startswith("."):
        raise Failure(USAGE, f"{path}: no document name in the file name")
    if not os.path.exists(path):
        raise Failure(NO_INPUT, f"{path}: no such file")
    command = [settings.bin, "check", "--quiet", "--top", "1000", "--print-firestore"]
    if is_firestore_body(path):
        command += ["--format", "firestore"]
    try:
        checked = subprocess.run(command + [path], stdout=subprocess.PIPE)
    except OSError as error:
        raise Failure(CONFIG, f"cannot run {settings.bin} (RANKINGS_BIN): {error.strerror}") from None
    if checked.returncode != 0:
        raise Failure(checked.returncode, f"{path} not published: rankings check said status {checked.returncode}")
    body = json.loads(checked.stdout)
    week = body.get("fields", {}).get("week_id", {}).get("stringValue", "")
    # A week's board goes under its own week (the app reads weekly_rankings/WEEK); an all-time
    # board under any name that is not a week's (all_time, monthly).
    if (week != "all_time" and week != name) or (week == "all_time" and WEEK.fullmatch(name)):
        raise Failure(DATA, f"{path} not published: its week_id is {week}, but it would be written as "
                            f"{collection}/{name}; name the file {week}.json"
                      + (" (or another name that is not a week's)" if week == "all_time" else ""))
    firestore = Firestore(settings, say)
    target = f"{collection}/{name}"
    full_name = f"{firestore.database_path}/documents/{target}"
    written = firestore.patch(target, body)
    if not (isinstance(written, dict) and written.get("name") == full_name and isinstance(written.get("updateTime"), str)
            and same_fields(body["fields"], written)):
        raise Failure(UNAVAILABLE, f"{path} not proven published: Firestore's answer to the PATCH of {full_name} is "
                                   f"not that document: {json.dumps(written)[:200]}")
    read = firestore.get(target)
    if not (isinstance(read, dict) and read.get("name") == full_name and same_fields(body["fields"], read)):
        raise Failure(UNAVAILABLE, f"{path} not proven published: reading {full_name} back does not give the "
                                   f"document sent: {json.dumps(read)[:200]}")
    where = f" on the emulator at {settings.emulator_host}" if settings.emulator_host else ""
    say(f"wrote {full_name} ({len(body['fields'])} fields, updateTime {written['updateTime']}; read back the "
        f"same){where}")


def main(argv, environ):
    if len(argv) != 1 or argv[0].startswith("-"):
        wanted = argv in (["-h"], ["--help"])
        print(USAGE_TEXT, end="", file=sys.stdout if wanted else sys.stderr)
        return 0 if wanted else USAGE
    try:
        publish(argv[0], setting.from_environment(environ))
        return 0
    except (Failure, FirestoreError) as failure:
        say(f"error: {failure}")
        return status_of(failure)
    except Exception as error:  # noqa: BLE001 (a bug: one line, no traceback that could hold a token)
        say(f"error: unexpected {type(error).__name__}: {error} (a bug in {PROGRAM})")
        return SOFTWARE
