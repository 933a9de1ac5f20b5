"""Firestore's times as whole microseconds since the epoch: read from RFC 3339 as its REST API
takes them (any offset, up to nine digits), written as it writes them (UTC, Z, 0, 3 or 6 digits)."""
import datetime
import functools
import re
import time

EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)
SECOND = 1_000_000
_RFC3339 = re.compile(r"(\d{4})-(\d\d)-(\d\d)[Tt](\d\d):(\d\d):(\d\d)(?:\.(\d{1,9}))?(?:[Zz]|([+-])(\d\d):(\d\d))",
                      re.ASCII)


class BadTime(ValueError):
    pass


# Every span and page of a night's queries reads the same written votes' times again.
@functools.lru_cache(maxsize=1 << 20)
def parse_ns(text):
    whole = _RFC3339.fullmatch(text) if isinstance(text, str) else None
    if not whole:
        raise BadTime(f"not an RFC 3339 time: {text!r}")
    try:
        moment = datetime.datetime(*(int(whole[i]) for i in range(1, 7)), tzinfo=datetime.timezone.utc)
    except ValueError as error:
        raise BadTime(f"{text!r}: {error}") from None
    seconds = (moment - EPOCH) // datetime.timedelta(seconds=1)
    if whole[8]:
        offset = (int(whole[9]) * 60 + int(whole[10])) * 60
        seconds -= offset if whole[8] == "+" else -offset
    return seconds * 10**9 + int((whole[7] or "").ljust(9, "0"))


def parse(text):
    """Microseconds, digits past the microsecond dropped as Firestore drops them."""
    return parse_ns(text) // 1000


@functools.lru_cache(maxsize=4096)
def _day(days):
    d = EPOCH + datetime.timedelta(days=days)
    return f"{d.year:04d}-{d.month:02d}-{d.day:02d}T"


def format(micros):
    seconds, fraction = divmod(micros, SECOND)
    days, second = divmod(seconds, 86400)
    text = f"{_day(days)}{second // 3600:02d}:{second // 60 % 60:02d}:{second % 60:02d}"
    if fraction == 0:
        return text + "Z"
    return f"{text}.{fraction // 1000:03d}Z" if fraction % 1000 == 0 else f"{text}.{fraction:06d}Z"


def now():
    return time.time_ns() // 1000
