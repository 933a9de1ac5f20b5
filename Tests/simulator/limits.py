"""Production Firestore's limits that Google's emulator does not enforce, scaled for tests: how
old a readTime may be, how long a COUNT may take, how fast one stream pages, and when the service
answers 429 or 503. Every one is a setting; the defaults are production's where it has one and
"no limit" where a test must ask for it."""
import dataclasses

from . import times
from .query import QueryError

TOO_OLD = "The requested 'read_time' is too old."
FUTURE = "The requested 'read_time' cannot be in the future."
PRECISION = "timestamp cannot have more than microseconds precision"
TIMED_OUT = "The datastore operation timed out, or the data was temporarily unavailable."
FAULTS = {429: ("RESOURCE_EXHAUSTED", "Quota exceeded."),
          503: ("UNAVAILABLE", "The service is currently unavailable.")}


def _setting(default, text):
    return dataclasses.field(default=default, metadata={"help": text})


@dataclasses.dataclass
class Settings:
    # readTime: any microsecond within read_time_life seconds; with pitr, also a whole
    # pitr_granularity (a minute) within pitr_life (7 days). Production: 3600, 604800, 60.
    read_time_life: float = _setting(3600.0, "seconds a readTime is served (production: an hour)")
    pitr: bool = _setting(False, "point-in-time recovery: whole minutes are served up to --pitr-life")
    pitr_life: float = _setting(7 * 86400.0, "seconds a whole-minute readTime is served with --pitr (7 days)")
    pitr_granularity: float = _setting(60.0, "the 'whole minute' of --pitr and of an export's snapshotTime")
    # COUNT: fails with 504 DEADLINE_EXCEEDED after count_deadline seconds when it counts more than
    # count_max documents, or when at count_rate documents a second it would take longer; with
    # count_rate, a count that fits takes counted / count_rate seconds. Production: 60 s.
    count_max: int | None = _setting(None, "a COUNT of more documents fails with 504 DEADLINE_EXCEEDED")
    count_rate: float | None = _setting(None, "documents a COUNT counts a second (it takes that long)")
    count_deadline: float = _setting(60.0, "seconds before a COUNT too big or too slow fails")
    # Paging: a runQuery answer of n documents is sent n / stream_rate seconds (plus latency) after
    # it is asked for, so parallel streams page faster together than one alone.
    stream_rate: float | None = _setting(None, "documents a second one runQuery answer is sent at")
    latency: float = _setting(0.0, "seconds added to every runQuery and COUNT answer")
    # Load: every fault_every-th Firestore request (counting from 1), and every request from
    # fault_window[0] to fault_window[1] seconds after the start, is answered fault_status (429
    # RESOURCE_EXHAUSTED with Retry-After: retry_after, or 503 UNAVAILABLE).
    fault_every: int | None = _setting(None, "every Nth Firestore request is answered --fault-status")
    fault_window: tuple | None = _setting(None, "FROM:TO seconds after the start: every request is refused")
    fault_status: int = _setting(429, "429 (RESOURCE_EXHAUSTED, with Retry-After) or 503 (UNAVAILABLE)")
    retry_after: float = _setting(1.0, "the 429's Retry-After, in seconds")
    # Users of production's REST API report a streamed method's error as a one-item array; the
    # emulator answers an object, as the simulator does by default.
    errors_in_array: bool = _setting(False, "runQuery and COUNT errors as [{\"error\": ...}], not an object")
    # An export stays PROCESSING at least this long.
    export_seconds: float = _setting(0.0, "seconds an export stays PROCESSING at least")
    # A fault of exports: the first N documents left out, consistently (the metadata agrees), as
    # an export that is not the view its snapshotTime names would hold fewer.
    export_skip: int = _setting(0, "documents an exportDocuments export leaves out (a fault)")

    def update(self, changes):
        names = {f.name for f in dataclasses.fields(self)}
        for name, value in changes.items():
            if name not in names:
                raise KeyError(name)
            setattr(self, name, tuple(value) if name == "fault_window" and value is not None else value)


def check_read_time(settings, read_time, now):
    """The readTime's microseconds, or QueryError as Firestore refuses it."""
    try:
        nanoseconds = times.parse_ns(read_time)
    except times.BadTime:
        raise QueryError("Payload isn't valid for request.") from None
    if nanoseconds % 1000:
        raise QueryError(PRECISION)
    micros = nanoseconds // 1000
    if micros > now:
        raise QueryError(FUTURE)
    age = now - micros
    if age <= settings.read_time_life * times.SECOND:
        return micros
    if settings.pitr and age <= settings.pitr_life * times.SECOND \
            and micros % round(settings.pitr_granularity * times.SECOND) == 0:
        return micros
    raise QueryError(TOO_OLD, "FAILED_PRECONDITION")


def count_seconds(settings, counted):
    """(seconds the COUNT takes, whether it then fails with DEADLINE_EXCEEDED)."""
    seconds = counted / settings.count_rate if settings.count_rate else 0.0
    if (settings.count_max is not None and counted > settings.count_max) or seconds > settings.count_deadline:
        return settings.count_deadline, True
    return seconds, False


def fault(settings, number, elapsed):
    """(HTTP status, status word, message, headers) for request `number`, or None."""
    window = settings.fault_window
    due = (settings.fault_every and number % settings.fault_every == 0) or \
        (window is not None and window[0] <= elapsed < window[1])
    if not due:
        return None
    status = settings.fault_status
    word, message = FAULTS.get(status, ("UNAVAILABLE", "The service is currently unavailable."))
    headers = {"Retry-After": f"{settings.retry_after:g}"} if status == 429 else {}
    return status, word, message, headers
