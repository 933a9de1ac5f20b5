"""Metrics files for node_exporter's textfile collector beside RANKINGS_METRICS: rankings-fetch.prom
and rankings-night.prom. Every series on every run, so a graph has no gaps; a failed run carries
the last success over from the file it replaces. Replaced in one rename, never through a link."""
import math
import os

from . import files

MOST = 1 << 20       # far more than the files written here


def carried(path, name, labels="", not_after=None):
    """The value of `name{labels}` in the file at path, or None; None too for a time later than
    `not_after` (a clock that ran ahead wrote it: carried over, it would hide a stale board)."""
    try:
        data, _ = files.read_regular(path, MOST)
        for line in data.decode("utf-8", "replace").splitlines():
            words = line.split()
            if len(words) == 2 and words[0] == name + labels:
                value = float(words[1])
                return None if not math.isfinite(value) or (not_after is not None and value > not_after) else value
    except (OSError, ValueError):
        pass
    return None


def write(path, series, say):
    """series: (name, help, [(labels, value)...]) in order; each name once with HELP and TYPE."""
    text = "".join(f"# HELP {name} {description}\n# TYPE {name} gauge\n"
                   + "".join(f"{name}{labels} {value}\n" for labels, value in samples)
                   for name, description, samples in series)
    try:
        files.write_atomically(path, text.encode("utf-8"))
    except OSError as error:
        say(f"warning: cannot write {path}: {error.strerror or error}")


def beside(metrics, name):
    """The file `name` in RANKINGS_METRICS's directory, or None when it is not set."""
    return os.path.join(os.path.dirname(metrics), name) if metrics else None
