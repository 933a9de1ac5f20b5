"""The night's log: one line per event, under one tag. Plain lines for a terminal or the journal
(rankings.service sets SyslogIdentifier=rankings), a file's lines stamped with the time and the
process, syslog under cron, or one JSON object per line with `severity` and `message` (what Cloud
Logging and other container platforms read), the night's figures as fields of its last line."""
import json
import os
import sys
import time

from . import files

SEVERITIES = ("DEBUG", "INFO", "NOTICE", "WARNING", "ERROR")


def one_line(text):
    """A message stays one line whatever it quotes: control characters as Python escapes."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in str(text))


def severity_of(line):
    """What a step's own line says it is (`prog: error: ...`, `prog: warning: ...`)."""
    words = line.split(": ", 2)
    if len(words) > 1 and words[1] in ("error", "warning"):
        return words[1].upper()
    return "INFO"


class Log:
    def __init__(self, program="rankings-night", form="plain", path=None, syslog_ident=None, stream=None):
        self.program, self.form = program, form
        self.stream = stream or sys.stderr
        self.fd = files.open_append(path) if path else None
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
            print(line, file=self.stream, flush=True)

    def error(self, message, **fields):
        self(message, "ERROR", **fields)

    def warning(self, message, **fields):
        self(message, "WARNING", **fields)
