"""Every exit status of the night (sysexits.h numbers, as `rankings` uses them), and the one mapping
from an error to its status. Tests/night holds it to JobError.swift and the docs."""
from . import transport

# sysexits.h's, and timeout(1)'s 124 for a step stopped at its limit; docs/exit-status.md says when each is exited with.
OK, USAGE, DATA, NO_INPUT, UNAVAILABLE, SOFTWARE, CANT_CREATE, IO_ERROR, TEMPFAIL, CONFIG, STOPPED = \
    0, 64, 65, 66, 69, 70, 73, 74, 75, 78, 124
NAMES = {OK: "ok", USAGE: "usage", DATA: "data", NO_INPUT: "no input", UNAVAILABLE: "unavailable",
         SOFTWARE: "bug", CANT_CREATE: "cannot create", IO_ERROR: "I/O error", TEMPFAIL: "locked",
         CONFIG: "settings", STOPPED: "stopped at its limit"}
FINAL = frozenset({USAGE, DATA, SOFTWARE, CONFIG})      # the same try would fail the same way (a signal's would not)


def describe(status):
    if 128 < status < 193:
        return f"{status} (signal {status - 128})"
    return f"{status} ({NAMES[status]})" if status in NAMES else str(status)


class Failure(Exception):
    """A failure with the status it exits with; `final` keeps the night from trying again."""

    def __init__(self, status, message, final=None):
        super().__init__(message)
        self.status, self.final = status, status in FINAL if final is None else final

    def __reduce__(self):   # whole across a pipe (parallel.apart), without calling a subclass's constructor
        return type(self).__new__, (type(self), str(self)), self.__dict__


def status_of(error):
    """A Failure's own status; the Firestore client's errors' by their type; anything else is a bug."""
    if isinstance(error, Failure):
        return error.status
    return CONFIG if isinstance(error, transport.NoCredentials) else \
        UNAVAILABLE if isinstance(error, transport.FirestoreError) else SOFTWARE
