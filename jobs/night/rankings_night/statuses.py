"""Every exit status of the night's programs (sysexits.h numbers, as `rankings` uses them), and the
one mapping from an error to its status. Tests/night holds it to JobError.swift and the docs."""
import sys

from . import transport

OK = 0
USAGE = 64          # a bad command line; root where another user keeps the files
DATA = 65           # the data is wrong: a document refused, an empty collection
NO_INPUT = 66       # an input is missing or unreadable
UNAVAILABLE = 69    # Firestore refused, stayed unreachable, or could not be proven whole
SOFTWARE = 70       # a bug
CANT_CREATE = 73    # a file or folder cannot be created or written
IO_ERROR = 74       # reading or writing failed part way
TEMPFAIL = 75       # another run holds the lock
CONFIG = 78         # a setting missing or wrong; no access token; a read the settings cannot serve
STOPPED = 124       # a step stopped at its time limit (timeout(1)'s status)

NAMES = {OK: "ok", USAGE: "usage", DATA: "data", NO_INPUT: "no input", UNAVAILABLE: "unavailable",
         SOFTWARE: "bug", CANT_CREATE: "cannot create", IO_ERROR: "I/O error", TEMPFAIL: "locked",
         CONFIG: "settings", STOPPED: "stopped at its limit"}

# The same try would fail the same way: never tried again.
FINAL = frozenset({USAGE, DATA, SOFTWARE, CONFIG})


def retryable(status):
    """Another try may succeed: anything but the final statuses (a step killed by a signal too)."""
    return status != OK and status not in FINAL


def describe(status):
    if status is None:
        return "not run"
    if status > 128 and status - 128 < 65:
        return f"{status} (signal {status - 128})"
    return f"{status} ({NAMES[status]})" if status in NAMES else str(status)


class Failure(Exception):
    """A failure with the status it exits with; `final` keeps the night from trying again."""

    def __init__(self, status, message, final=None):
        super().__init__(message)
        self.status = status
        self.final = status in FINAL if final is None else final

    def __reduce__(self):
        # Whole across a pipe from a child process (parallel.apart), without calling a subclass's constructor.
        return _rebuilt, (type(self), str(self), self.__dict__)


def status_of(error):
    """A Failure's own status; the Firestore client's errors' by their type; anything else is a bug."""
    if isinstance(error, Failure):
        return error.status
    if isinstance(error, transport.NoCredentials):
        return CONFIG
    if isinstance(error, transport.FirestoreError):
        return UNAVAILABLE      # refused, unreachable, out of time: another try may succeed
    return SOFTWARE


def command(argv, usage, action, say, program):
    """The main of a thin command over one function (rankings-fetch-firestore DIR,
    rankings-publish-firestore FILE): action(ARG), and a failure as one line and its status."""
    if len(argv) != 1 or argv[0].startswith("-"):
        wanted = argv in (["-h"], ["--help"])
        print(usage, end="", file=sys.stdout if wanted else sys.stderr)
        return OK if wanted else USAGE
    try:
        action(argv[0])
        return OK
    except (Failure, transport.FirestoreError) as failure:
        say(f"error: {failure}")
        return status_of(failure)
    except Exception as error:  # noqa: BLE001 (a bug: one line, no traceback that could hold a token)
        say(f"error: unexpected {type(error).__name__}: {error} (a bug in {program})")
        return SOFTWARE


def _rebuilt(kind, message, attributes):
    failure = kind.__new__(kind)
    Exception.__init__(failure, message)
    failure.__dict__.update(attributes)
    return failure
