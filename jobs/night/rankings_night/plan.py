"""What tonight's fetch does, and why: a pure function of the settings, the previous night's record
(or why there is none) and now, so `rankings-night plan` tells an operator what the fetch will do."""
from dataclasses import dataclass

from .snapshot import parse_time

DAY_NS = 86_400 * 10**9
PREVIOUS_MAX_AGE_NS = 7 * DAY_NS   # a week of drift is the most one incremental chain may carry


@dataclass(frozen=True)
class Plan:
    mode: str                   # "full", "incremental", "window" or "export"
    reason: str                 # why, in words an operator reads in the log and in `status`
    watermark: int = None       # incremental: votes stamped at or after this (ns) are asked for
    since: int = None           # window: the same bound, from RANKINGS_FIRESTORE_SINCE


def plan(settings, previous, damage, now_ns, collection="rating_events"):
    """previous: the checked record DIR/current names, or None and damage: why there is none."""
    if settings.firestore_fetch == "export":
        return Plan("export", "RANKINGS_FIRESTORE_FETCH=export")
    since = settings.firestore_since
    if since is not None:
        return Plan("window", "RANKINGS_FIRESTORE_SINCE is set", since=now_ns + since * 10**9 if since < 0 else since)
    if settings.firestore_incremental == "no":
        return Plan("full", "RANKINGS_FIRESTORE_INCREMENTAL=no")
    if settings.firestore_snapshot == "gzip":
        return Plan("full", "RANKINGS_FIRESTORE_SNAPSHOT=gzip: a compressed night is never built on")
    if previous is None:
        return Plan("full", damage or "no previous night")
    for key, value in (("method", "rest"), ("project", settings.firestore_project),
                       ("database", settings.firestore_database), ("collection", collection)):
        if previous[key] != value:
            return Plan("full", f"the previous night's {key} is {previous[key]!r}, not {value!r}")
    if previous["mode"] == "window":
        return Plan("full", "the previous night is a window, not a snapshot")
    read_ns, full_ns = parse_time(previous["read_time"]), parse_time(previous["last_full_read_time"])
    if now_ns - read_ns > PREVIOUS_MAX_AGE_NS:
        return Plan("full", f"the previous night was read over {PREVIOUS_MAX_AGE_NS // DAY_NS} days ago")
    days = (now_ns - full_ns) / DAY_NS
    # Days, not runs: seven runs by hand in an afternoon are not a week. Half a day early counts,
    # so a nightly run a few seconds earlier than last week's is not put off by a whole night.
    if days >= settings.firestore_full_every - 0.5:
        return Plan("full", f"the last full read was {days:.1f} days ago "
                            f"(RANKINGS_FIRESTORE_FULL_EVERY={settings.firestore_full_every})")
    return Plan("incremental", f"building on the night read at {previous['read_time']}; a full read is due "
                               f"{settings.firestore_full_every - days:.1f} days from now",
                watermark=read_ns - settings.firestore_margin * 10**9)


# Firestore serves a read at a readTime this long after it (firestore.proto: RunQueryRequest's
# read_time is within the past hour, or whole minutes within 7 days with point-in-time recovery).
READ_TIME_LIFE = 3600
PITR_LIFE = 7 * 86400
MOST_STREAMS = 64


def full_read_fits(documents, rate, streams, life, deadline):
    """None when a full read of `documents` at `rate` documents a second per stream (the last full
    read's; None before one) over `streams` ends within readTime's life and the deadline with a tenth
    to spare; else why not and what would make it fit (a warning: a refused night measures no rate)."""
    if not rate or documents <= 0:
        return None
    seconds = documents / (rate * streams)
    if seconds <= 0.9 * min(life, deadline):
        return None
    outlives = seconds > 0.9 * life
    limit = min(life, deadline) if outlives else deadline
    needed = -(-documents // max(int(rate * 0.9 * limit), 1))
    fixes = [f"RANKINGS_FIRESTORE_STREAMS={needed}"] if needed <= MOST_STREAMS else []
    if outlives and life < PITR_LIFE:
        fixes.append("RANKINGS_FIRESTORE_PITR=yes (point-in-time recovery on: 7 days) and a longer deadline")
    if not outlives:
        fixes.append(f"RANKINGS_FIRESTORE_DEADLINE_SECONDS={int(seconds / 0.9) + 1} "
                     "(and RANKINGS_FETCH_TIMEOUT_SECONDS above it)")
    fixes.append("RANKINGS_FIRESTORE_FETCH=export")
    bound = f"Firestore's life of a readTime ({life / 60:.0f} min)" if outlives else \
        f"the fetch's deadline, RANKINGS_FIRESTORE_DEADLINE_SECONDS ({deadline / 60:.0f} min)"
    return (f"a full read of {documents} documents at {rate:.0f} documents a second per stream (the last full "
            f"read's) over {streams} streams takes about {seconds / 60:.0f} min, past {bound}; set "
            + ", or ".join(fixes))
