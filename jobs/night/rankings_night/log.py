"""The night's log: one line an event, with the night's own severity: plain (the journal's with sd-daemon's level
prefix), syslog under cron, or JSON for Cloud Logging; a plain WARNING or ERROR says so after the program's name."""
import contextlib
import json
import os
import sys
import syslog

# sd-daemon(3)'s prefixes, which journald reads off a line of standard error; syslog's levels too
LEVELS = {"DEBUG": 7, "INFO": 6, "NOTICE": 5, "WARNING": 4, "ERROR": 3}
WORDS = {"WARNING": "warning: ", "ERROR": "error: "}


def one_line(text):
    """A message stays one line whatever it quotes: control characters as Python escapes."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in str(text))


class Log:
    def __init__(self, form="plain", syslog_ident=None, stream=None):
        self.form, self.stream, self.syslog, self.journal = form, stream or sys.stderr, bool(syslog_ident), False
        if self.syslog:
            syslog.openlog(syslog_ident, syslog.LOG_PID, syslog.LOG_DAEMON)
        with contextlib.suppress(AttributeError, OSError, ValueError):  # journald names its stream, DEV:INODE
            status = os.fstat(self.stream.fileno())
            self.journal = form == "plain" and os.environ.get("JOURNAL_STREAM") == f"{status.st_dev}:{status.st_ino}"

    def __call__(self, message, severity="INFO", own=True, **fields):
        """One event. own=False: a line of the job's, relayed as it is (it names its program)."""
        text = f"rankings-night: {WORDS.get(severity, '')}{one_line(message)}" if own else one_line(message)
        if self.form == "json":
            text = json.dumps(dict(fields, severity=severity, message=text), ensure_ascii=False, default=str)
        elif self.syslog:
            return syslog.syslog(LEVELS.get(severity, 6), text)
        print(f"<{LEVELS.get(severity, 6)}>{text}" if self.journal else text, file=self.stream, flush=True)

    def error(self, message, **fields):
        self(message, "ERROR", **fields)

    def warning(self, message, **fields):
        self(message, "WARNING", **fields)
