"""The night's settings: one typed table, and its one reader, of /etc/rankings.conf or of the
environment. Every value is checked before anything runs: an unknown name, a value outside its
syntax or range is a Failure(78) naming where it was (`FILE:LINE:` or `environment:`).
docs/configuration.md documents each row; Tests/night holds the two to the same names."""
import collections
import difflib
import re

from . import paths
from .snapshot import parse_time
from .statuses import CONFIG, Failure

HOUR = 3600
DAY = 24 * HOUR


def _number(pattern, kind, low, high):
    def parse(text):
        if not re.fullmatch(pattern, text, re.ASCII):
            raise ValueError(f"must be a number ({'whole' if kind is int else 'decimal'}, ASCII digits)")
        value = kind(text)
        if not low <= value <= high:
            raise ValueError(f"must be from {low:g} to {high:g}")
        return value
    return parse


def whole(low, high):
    return _number(r"[0-9]{1,15}", int, low, high)


def decimal(low, high):
    return _number(r"[0-9]{1,15}(\.[0-9]{1,9})?", float, low, high)


def pattern(regex, what):
    def parse(text):
        if not re.fullmatch(regex, text, re.ASCII):
            raise ValueError(f"must be {what}")
        return text
    return parse


def choice(*options):
    return pattern("|".join(options), " or ".join(options))


def _hours(text, sign=""):
    """Seconds of Nh or Nd (-Nh, -Nd with sign "-"), or None."""
    match = re.fullmatch(sign + r"([0-9]{1,6})([hd])", text, re.ASCII)
    return int(match[1]) * (HOUR if match[2] == "h" else DAY) if match else None


def hours_or_days(low, high):
    def parse(text):
        seconds = _hours(text)
        if seconds is None:
            raise ValueError("must be a number of hours or days (48h, 2d)")
        if not low <= seconds <= high:
            raise ValueError(f"must be from {low // HOUR}h to {high // DAY}d")
        return seconds
    return parse


def since(text):
    """-Nh/-Nd before the fetch's start (negative seconds), or an RFC 3339 time (nanoseconds)."""
    seconds = _hours(text, "-")
    if seconds is not None:
        if not HOUR <= seconds <= 3660 * DAY:
            raise ValueError("must go back from 1h to 3660d")
        return -seconds
    try:
        nanoseconds = parse_time(text)
    except (ValueError, OverflowError):
        raise ValueError("must be an RFC 3339 time (2026-01-01T00:00:00Z) or -Nd/-Nh") from None
    # Before the epoch it would read as a negative offset (-Nh); no vote of this app predates 1970.
    if nanoseconds < 0:
        raise ValueError("must be an RFC 3339 time from 1970-01-01T00:00:00Z on, or -Nd/-Nh")
    return nanoseconds


def words(text):
    return text.split()


def anything(text):
    return text


Setting = collections.namedtuple("Setting", "parse default", defaults=("",))
# Every setting there is: its syntax, and its default as text ("" is unset).
TABLE = {
    "RANKINGS_EXPORTS": Setting(anything),
    "RANKINGS_OUTPUT": Setting(anything),
    "RANKINGS_FLAGS": Setting(words),
    "RANKINGS_METRICS": Setting(anything),
    "RANKINGS_FETCH": Setting(words),
    "RANKINGS_PUBLISH": Setting(words),
    "RANKINGS_MONTHLY": Setting(choice("yes", "no"), "no"),
    "RANKINGS_MONTHLY_OUTPUT": Setting(anything),
    "RANKINGS_RETRIES": Setting(whole(0, 10), "3"),
    "RANKINGS_RETRY_PAUSE_SECONDS": Setting(whole(0, DAY), "300"),
    "RANKINGS_FETCH_TIMEOUT_SECONDS": Setting(whole(1, 7 * DAY), "3600"),
    "RANKINGS_LOG_FILE": Setting(anything),
    "RANKINGS_LOG_FORMAT": Setting(choice("plain", "json"), "plain"),
    "RANKINGS_LOCK_FILE": Setting(anything),
    "RANKINGS_BIN": Setting(anything, paths.RANKINGS),
    "RANKINGS_FIRESTORE_PROJECT": Setting(pattern(r"[a-z0-9][a-z0-9.:-]{0,99}", "a Google Cloud project id "
                                                  "(lower-case letters, digits, hyphens)")),
    "RANKINGS_FIRESTORE_DATABASE": Setting(pattern(r"\(default\)|[a-z][a-z0-9-]{0,61}[a-z0-9]?",
                                                   "a database id, or (default)"), "(default)"),
    "RANKINGS_FIRESTORE_FETCH": Setting(choice("rest", "export"), "rest"),
    "RANKINGS_FIRESTORE_BUCKET": Setting(pattern(r"(gs://)?[a-z0-9][a-z0-9._-]{1,221}(/[A-Za-z0-9._/+=@,:-]*)?",
                                                 "gs://BUCKET[/PREFIX]")),
    "RANKINGS_FIRESTORE_BUCKET_MOUNT": Setting(pattern(r"/.*", "an absolute path")),
    "RANKINGS_FIRESTORE_COLLECTION": Setting(pattern(r"[A-Za-z0-9_.-]{1,100}", "a collection id"), "weekly_rankings"),
    "RANKINGS_FIRESTORE_KEEP": Setting(whole(1, 1000), "7"),
    "RANKINGS_FIRESTORE_DEADLINE_SECONDS": Setting(decimal(1, 7 * DAY), "3300"),
    "RANKINGS_FIRESTORE_ATTEMPTS": Setting(whole(1, 100), "5"),
    "RANKINGS_FIRESTORE_BACKOFF_SECONDS": Setting(decimal(0.001, HOUR), "1"),
    "RANKINGS_FIRESTORE_TIMEOUT_SECONDS": Setting(decimal(0.1, HOUR), "60"),
    "RANKINGS_FIRESTORE_TOKEN_COMMAND": Setting(anything),
    "RANKINGS_FIRESTORE_ENDPOINT": Setting(pattern(r"https?://[A-Za-z0-9.:\[\]_-]+(/[A-Za-z0-9._/~-]*)?",
                                                   "an http(s) URL")),
    "RANKINGS_FIRESTORE_INCREMENTAL": Setting(choice("yes", "no"), "yes"),
    "RANKINGS_FIRESTORE_MARGIN": Setting(hours_or_days(HOUR, 30 * DAY), "48h"),
    # Every board is proved against Firestore's counts, so the full read no longer keeps it right:
    # it only bounds how long an incremental chain grows (drift is measured then).
    "RANKINGS_FIRESTORE_FULL_EVERY": Setting(whole(1, 366), "30"),
    "RANKINGS_FIRESTORE_SINCE": Setting(since),
    "RANKINGS_FIRESTORE_STREAMS": Setting(whole(1, 64), "8"),
    "RANKINGS_FIRESTORE_PITR": Setting(choice("yes", "no"), "no"),
    "RANKINGS_FIRESTORE_SNAPSHOT": Setting(choice("plain", "gzip"), "plain"),
    "RANKINGS_BOARD_PROOF": Setting(choice("yes", "required", "no"), "yes"),
    "FIRESTORE_EMULATOR_HOST": Setting(pattern(r"[A-Za-z0-9.-]+:[0-9]{1,5}|\[[0-9A-Fa-f:]+\]:[0-9]{1,5}",
                                               "HOST:PORT")),
}

# Settings of the overlay files rankings-cron read, now gone: what to do instead.
RETIRED = {
    "RANKINGS_INCLUDE": "overlay files are gone: the monthly board is RANKINGS_MONTHLY=yes in /etc/rankings.conf "
                        "(then remove /etc/rankings-monthly.conf and /etc/cron.d/rankings-monthly)",
    "RANKINGS_EXTRA_FLAGS": "overlay files are gone: put the flags in RANKINGS_FLAGS, or use RANKINGS_MONTHLY=yes "
                            "for the monthly board",
}

# `rankings`'s own variables (docs/performance.md): accepted in the environment and passed on to it.
PASSED = frozenset({"RANKINGS_CPU", "RANKINGS_INFLATE"})


def attribute(name):
    """RANKINGS_FIRESTORE_PROJECT -> firestore_project; FIRESTORE_EMULATOR_HOST -> emulator_host."""
    return "emulator_host" if name == "FIRESTORE_EMULATOR_HOST" else name.lower().removeprefix("rankings_")


class Settings:
    """Typed values by attribute (settings.flags...), and the text each was given as (`given`)."""

    def __init__(self, given, where):
        self.given = dict(given)       # name -> text, only what was set
        self.where = dict(where)       # name -> "FILE:LINE" or "environment"
        for name, setting in TABLE.items():
            text = self.given.get(name, "")
            try:
                given = text or setting.default
                value = setting.parse(given) if given or setting.parse is words else None
            except ValueError as problem:
                where = self.where.get(name, "default")
                end = f"; nothing was run {HINT}" if where not in ("environment", "default") else ""
                raise Failure(CONFIG, f"{where}: {name}={text}: {problem}{end}") from None
            setattr(self, attribute(name), value)

    def require(self, *names):
        for name in names:
            if not self.given.get(name):
                raise Failure(CONFIG, f"{name} is not set ({self.source})")

    @property
    def source(self):
        places = {w.rsplit(":", 1)[0] for w in self.where.values()}
        return ", ".join(sorted(places)) or "nothing set"


def unknown(name, where):
    end = f"; nothing was run {HINT}" if where != "environment" else ""
    if name in RETIRED:
        return Failure(CONFIG, f"{where}: {name}: {RETIRED[name]}{end}")
    near = difflib.get_close_matches(name, TABLE, n=1, cutoff=0.8)
    return Failure(CONFIG, f"{where}: unknown setting {name}" + (f" (did you mean {near[0]}?)" if near else "") + end)


# Kubernetes gives a pod RANKINGS_SERVICE_HOST, RANKINGS_PORT_8080_TCP... for a Service named
# rankings (RANKINGS_DB_SERVICE_HOST... for rankings-db): never settings (none ends so), passed over.
SERVICE_LINK = re.compile(r"RANKINGS(_[A-Z0-9_]+?)?_(SERVICE_(HOST|PORT)|PORT)(_.*)?")


def from_environment(environ):
    """Every RANKINGS_* variable of environ (and FIRESTORE_EMULATOR_HOST), checked."""
    given, where = {}, {}
    for name, text in environ.items():
        if SERVICE_LINK.fullmatch(name):
            continue
        if (name.startswith("RANKINGS_") and name not in PASSED) or name == "FIRESTORE_EMULATOR_HOST":
            if name not in TABLE:
                raise unknown(name, "environment")
            given[name], where[name] = text, "environment"
    return Settings(given, where)


# The configuration file's syntax (docs/configuration.md): KEY=VALUE lines, comments on lines of
# their own, values of these characters, and spaces or parentheses only inside double quotes.
VALUE_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_./:,+=@%-")
LONGEST = 131071  # KEY=VALUE in a child's environment (Linux's MAX_ARG_STRLEN, less its NUL)
HINT = '(see "The configuration file" in rankings(1))'


def shown(char):
    return f'"{char}"' if "!" <= char <= "~" else f"byte 0x{ord(char):02X}"


def read_file(path):
    """The settings of a configuration file; Failure(78) at its first line outside the syntax."""
    try:
        with open(path, "rb") as file:
            data = file.read()
    except OSError as error:
        raise Failure(CONFIG, f"cannot read the configuration {path}: {error.strerror}") from None
    given, where = {}, {}
    # An editor's UTF-8 byte order mark: invisible, and not part of the first name.
    data = data.removeprefix(b"\xef\xbb\xbf")
    for number, raw in enumerate(data.split(b"\n"), 1):
        def refuse(problem):
            return Failure(CONFIG, f"{path}:{number}: {problem}; nothing was run {HINT}")
        if b"\0" in raw:
            raise refuse("byte 0x00 is not allowed in the file")
        if b"\r" in raw:
            raise refuse("a carriage return: save the file with Unix line ends (LF only)")
        line = raw.decode("latin-1").rstrip(" \t")
        if not line.strip(" \t") or line.lstrip(" \t").startswith("#"):
            continue
        match = re.fullmatch(r"([A-Za-z0-9_]+)=(.*)", line, re.ASCII | re.DOTALL)
        if not match:
            raise refuse('not a KEY=VALUE line (no spaces around "=", no "export")')
        name, value = match[1], match[2]
        if name not in TABLE:
            raise unknown(name, f"{path}:{number}")
        quoted = value.startswith('"')
        if quoted:
            if len(value) < 2 or not value.endswith('"'):
                after = value[1:].partition('"')[2].lstrip(" \t")
                raise refuse(f"{name}: a comment after a value: put it on a line of its own" if after.startswith("#")
                             else f'{name}: a double-quoted value must end with " at the end of the line')
            value = value[1:-1]
        if len(name) + 1 + len(value) > LONGEST:
            raise refuse(f"{name}: a value of {len(value)} bytes cannot reach the steps (their environment "
                         f"holds at most {LONGEST} bytes for {name}=VALUE)")
        bad = [c for c in value if c not in VALUE_CHARS and not (quoted and c in " ()")]
        if bad:
            if not quoted and re.search(r"[ \t]#", value):
                raise refuse(f"{name}: a comment after a value: put it on a line of its own")
            first = bad[0] if quoted else next((c for c in bad if c not in " \t"), None)
            if first is None:
                raise refuse(f"{name}: a value with spaces must be in double quotes")
            raise refuse(f"{name}: {shown(first)} is not allowed in a value (only letters, digits, spaces and "
                         "( ) in double quotes and _ . / : , + = @ % -)")
        given[name], where[name] = value, f"{path}:{number}"
    return Settings(given, where)
