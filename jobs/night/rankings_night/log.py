"""The night's log: one line per event. Plain lines for a terminal or the journal, a file's lines
stamped with the time and the process, syslog under cron, or one JSON object per line (what Cloud
Logging reads). Each line has a severity, so an alert on WARNING sees a fallback, drift or bad
records, not only failures."""
import json
import os
import re
import sys
import time

from . import files

SEVERITIES = ("DEBUG", "INFO", "NOTICE", "WARNING", "ERROR")
# sd-daemon(3)'s prefixes, which journald reads off a line of standard error (SyslogLevelPrefix=)
JOURNAL_LEVELS = {"DEBUG": 7, "INFO": 6, "NOTICE": 5, "WARNING": 4, "ERROR": 3}
# `rankings aggregate`'s own lines that say the votes held bad records: one bad line
# (PATH:N: why, PATH:record N: why), how many more were not shown, and its summary line when it
# counted any (RunSummary.swift: "rankings: 5 events (...), 2 bad lines, ...").
_BAD_RECORDS = re.compile(r"\S[^:]*:(record )?\d+: |rankings: \d+ more bad lines? not shown$"
                          r"|rankings: \d+ events? \(.*\), [1-9]\d* bad lines?, ")


def one_line(text):
    """A message stays one line whatever it quotes: control characters as Python escapes."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in str(text))


def severity_of(line):
    """What a step's own line says it is: `prog: error: ...`, `prog: warning: ...` (the fetch
    starts its lines on a fallback or drift so), or the job's lines on bad records (WARNING)."""
    words = line.split(": ", 2)
    if len(words) > 1 and words[1] in ("error", "warning"):
        return words[1].upper()
    if _BAD_RECORDS.match(line):
        return "WARNING"
    return "INFO"


class Log:
    def __init__(self, program="rankings-night", form="plain", path=None, syslog_ident=None, stream=None):
        self.program, self.form = program, form
        self.stream = stream or sys.stderr
        self.fd = files.open_append(path) if path else None
        self.journal = False
        if form == "plain" and self.fd is None:
            try:    # systemd's journal names the stream it reads in JOURNAL_STREAM, DEV:INODE
                status = os.fstat(self.stream.fileno())
                self.journal = os.environ.get("JOURNAL_STREAM") == f"{status.st_dev}:{status.st_ino}"
            except (AttributeError, OSError, ValueError):
                pass
        self.syslog = None
        if syslog_ident:
            import syslog
            syslog.openlog(syslog_ident, syslog.LOG_PID, syslog.LOG_DAEMON)
            self.syslog = syslog

    def __call__(self, message, severity="INFO", own=True, **fields):
        """One event. own=False: a step's line, relayed as it is (it names its program)."""
        message = one_line(message)
        text = f"{self.program}: {message}" if own else message
        if self.form == "json":
            line = json.dumps(dict(fields, severity=severity, message=text), ensure_ascii=False, default=str)
        elif self.fd is not None:
            line = f"{time.strftime('%Y-%m-%dT%H:%M:%S%z')} {self.program}[{os.getpid()}]: {message if own else text}"
        else:
            line = text
        if self.syslog is not None and self.form != "json":
            level = {"ERROR": self.syslog.LOG_ERR, "WARNING": self.syslog.LOG_WARNING}.get(severity, self.syslog.LOG_INFO)
            self.syslog.syslog(level, text)
        elif self.fd is not None:
            os.write(self.fd, (line + "\n").encode("utf-8", "replace"))
        else:
            prefix = f"<{JOURNAL_LEVELS.get(severity, 6)}>" if self.journal else ""
            print(prefix + line, file=self.stream, flush=True)

    def error(self, message, **fields):
        self(message, "ERROR", **fields)

    def warning(self, message, **fields):
        self(message, "WARNING", **fields)
