"""The twelve settings an operator may set (docs/configuration.md), read from /etc/rankings.conf or the environment and
checked before anything runs: a wrong one is 78 naming where it was (FILE:LINE or environment). 0.4's: compat.py."""
import difflib
import os
import re

from . import compat, paths
from .compat import refused
from .statuses import CONFIG, Failure

HINT = '(see "The configuration file" in rankings(1))'


def pattern(regex, what, convert=str):
    """A setting's syntax: text that regex matches whole, as convert() makes it."""
    def parse(text):
        if not re.fullmatch(regex, text, re.ASCII | re.DOTALL):
            raise ValueError(f"must be {what}")
        return convert(text)
    return parse


percent = pattern(r"100(\.0{1,6})?|0?[0-9]{1,2}(\.[0-9]{1,6})?", "a percentage from 0 to 100 (up to six decimals: "
                  "1, 0.5)")
ABSOLUTE = pattern("/.*", "an absolute path (the night's folder then depends on no working directory)",
                   os.path.normpath)
# Every setting there is: its syntax, and its default as text ("" is unset).
TABLE = {
    "RANKINGS_STATE_DIRECTORY": (ABSOLUTE, paths.STATE),
    "RANKINGS_EXPORTS": (ABSOLUTE, ""),
    "RANKINGS_FIRESTORE_PROJECT": (pattern(r"[a-z0-9][a-z0-9.:-]{0,99}", "a Google Cloud project id (lower-case "
                                           "letters, digits, hyphens)"), ""),
    "RANKINGS_FIRESTORE_DATABASE": (pattern(r"\(default\)|[a-z][a-z0-9-]{0,61}[a-z0-9]?", "a database id, or "
                                            "(default)"), "(default)"),
    "RANKINGS_MONTHLY": (pattern("yes|no", "yes or no", lambda text: text == "yes"), "no"),
    "RANKINGS_MAX_DROP": (percent, "1"),
    "RANKINGS_MAX_REFUSED": (percent, "1"),
    "RANKINGS_METRICS": (ABSOLUTE, ""),
    "RANKINGS_RETRIES": (pattern("0*([0-9]|10)", "a whole number from 0 to 10", int), "3"),
    "RANKINGS_LOG_FORMAT": (pattern("plain|json", "plain or json"), "plain"),
    "RANKINGS_FIRESTORE_TOKEN_COMMAND": (str, ""),
    "FIRESTORE_EMULATOR_HOST": (pattern(r"[A-Za-z0-9.-]+:[0-9]{1,5}|\[[0-9A-Fa-f:]+\]:[0-9]{1,5}", "HOST:PORT"), ""),
}
# Cloud Run Jobs and Kubernetes (on_a_platform) retry a failed task and read JSON logs: their defaults.
PLATFORM = {"RANKINGS_RETRIES": "0", "RANKINGS_LOG_FORMAT": "json"}
# `rankings`'s own variables (docs/performance.md): accepted in the environment and passed on to it.
PASSED = frozenset({"RANKINGS_CPU", "RANKINGS_INFLATE"})
# Kubernetes gives a pod RANKINGS_SERVICE_HOST, RANKINGS_PORT_8080_TCP... for a Service named
# rankings (RANKINGS_DB_SERVICE_HOST... for rankings-db): never settings (none ends so), passed over.
SERVICE_LINK = re.compile(r"RANKINGS(_[A-Z0-9_]+?)?_(SERVICE_(HOST|PORT)|PORT)(_.*)?")
# A value's characters (docs/configuration.md, "Syntax"), and spaces or parentheses only inside double quotes.
VALUE_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_./:,+=@%-")
LONGEST = 131071  # KEY=VALUE in a child's environment (Linux's MAX_ARG_STRLEN, less its NUL)
# A comment after a value: after its closing quote, or after a space in a bare one (systemd keeps it as the value).
COMMENT = re.compile(r'("[^"]*"|[^"]*?[ \t])[ \t]*#.*', re.DOTALL)


def on_a_platform(environ):
    return any(k in environ for k in ("CLOUD_RUN_JOB", "CLOUD_RUN_EXECUTION", "KUBERNETES_SERVICE_HOST"))


class Settings:
    """Typed values by attribute (.state_directory..., and .roles), the text each was given as (`given`), where
    (`where`), and `notes`: the one WARNING on 0.4 settings read, or None. `lines`: (name, text, where) read."""

    def __init__(self, lines, source):
        old = {name: (text, where) for name, text, where in lines if name in compat.OLD}
        self.given = {name: text for name, text, _ in lines if name not in compat.OLD}
        self.where, self.source = {name: where for name, _, where in lines if name not in compat.OLD}, source
        compat.carry(old, self.given, self.where)
        for name, (parse, default) in TABLE.items():
            text = self.given.get(name) or default
            try:
                value = parse(text) if text else None
            except ValueError as problem:
                raise refused(self.where.get(name, "default"), f"{name}={text}: {problem}", HINT) from None
            setattr(self, "emulator_host" if name == "FIRESTORE_EMULATOR_HOST" else name.lower()[9:], value)
        self.roles = paths.ROLES if self.monthly else paths.ROLES[:1]
        self.notes = compat.check(old, self)


def known(name, where):
    """name, unless it is no setting: then 78, with the setting it may have meant."""
    if name not in TABLE and name not in compat.OLD:
        near = difflib.get_close_matches(name, TABLE, n=1, cutoff=0.8)
        raise refused(where, f"unknown setting {name}" + (f" (did you mean {near[0]}?)" if near else ""), HINT)
    return name


def from_environment(environ):
    """Every RANKINGS_* variable of environ (and FIRESTORE_EMULATOR_HOST), checked; a platform's defaults."""
    defaults = [(name, text, "default on a container platform") for name, text in PLATFORM.items()] \
        if on_a_platform(environ) else []
    return Settings(defaults + [(known(name, "environment"), text, "environment") for name, text in environ.items()
                                if (name.startswith("RANKINGS_") or name == "FIRESTORE_EMULATOR_HOST")
                                and name not in PASSED and not SERVICE_LINK.fullmatch(name)], "the environment")


def read_file(path):
    """The settings of a configuration file; Failure(78) at its first line outside the syntax."""
    try:
        with open(path, "rb") as file:
            data = file.read().removeprefix(b"\xef\xbb\xbf")    # an editor's byte order mark: not part of a name
    except OSError as error:
        raise Failure(CONFIG, f"cannot read the configuration {path}: {error.strerror}") from None
    lines = []
    for number, raw in enumerate(data.split(b"\n"), 1):
        where, line = f"{path}:{number}", raw.decode("latin-1").rstrip(" \t")
        if b"\0" in raw or b"\r" in raw:
            raise refused(where, "byte 0x00 is not allowed in the file" if b"\0" in raw else
                          "a carriage return: save the file with Unix line ends (LF only)", HINT)
        if not line.strip(" \t") or line.lstrip(" \t").startswith("#"):
            continue
        match = re.fullmatch(r"([A-Za-z0-9_]+)=(.*)", line, re.ASCII | re.DOTALL)
        if not match:
            raise refused(where, 'not a KEY=VALUE line (no spaces around "=", no "export")', HINT)
        name, value, quoted = known(match[1], where), match[2], re.fullmatch(r'"(.*)"', match[2], re.DOTALL)
        text = quoted[1] if quoted else value
        bad = [c for c in text if c not in VALUE_CHARS and not (quoted and c in " ()")]
        first = next((c for c in bad if quoted or c not in " \t"), None)     # unquoted: spaces said apart
        shown = first and (f'"{first}"' if "!" <= first <= "~" else f"byte 0x{ord(first):02X}")
        problems = (    # the first that holds is said
            (not quoted and COMMENT.fullmatch(value), "a comment after a value: put it on a line of its own"),
            (value.startswith('"') and not quoted, 'a double-quoted value must end with " at the end of the line'),
            (len(name) + 1 + len(text) > LONGEST, f"a value of {len(text)} bytes is longer than a program's "
                                                  f"environment holds ({LONGEST} bytes for {name}=VALUE)"),
            (bad and not first, "a value with spaces must be in double quotes"),
            (bad, f"{shown} is not allowed in a value (only letters, digits, spaces and ( ) in double quotes and "
                  "_ . / : , + = @ % -)"))
        problem = next((why for wrong, why in problems if wrong), None)
        if problem:
            raise refused(where, f"{name}: {problem}", HINT)
        lines.append((name, text, where))
    return Settings(lines, path)
