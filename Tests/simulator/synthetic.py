"""The simulator's own votes: N rating_events computed from a seed and an index, never stored, so
ten million cost no memory. A document's id and its timestamp both grow with its index, so a range
of names or a `timestamp >=` is a range of indexes, found by bisection, and a page is computed on
demand from its first index.

An id is 20 characters of Firestore's auto-id alphabet: the index in base 62 (5 digits, the
alphabet in ASCII order, so ids sort as indexes do), then 15 seeded random ones. Jokes: 433 with
Zipf-like popularity and a quality each; ratings mostly 1 or 5 (by the joke's quality), a few 2-4;
devices: one per 8 votes; week_id: the ISO week of the timestamp in UTC, as the app writes it."""
import array
import datetime
import hashlib

from . import times

ALPHABET = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
_CHARS = bytes(ord(ALPHABET[b % 62]) for b in range(256))    # a random byte as an id character
INDEX_DIGITS = 5
MOST = 62 ** INDEX_DIGITS
JOKES = 433
VOTES_PER_DEVICE = 8
DAY = 86400 * times.SECOND


def _spread(number):
    """A cheap, fixed scramble of an integer: which seconds and milliseconds are whole."""
    return (number * 0x9E3779B97F4A7C15 >> 17) & 0xFFFF


def first(low, high, reached):
    """The least i in [low, high) for which reached(i) holds (reached: false, then true), else high."""
    while low < high:
        middle = (low + high) // 2
        if reached(middle):
            high = middle
        else:
            low = middle + 1
    return low


class Votes:
    """`n` votes of seed `seed` stamped from `end - span` up to `end` (microseconds)."""

    def __init__(self, n, seed=1, end=None, span=365 * DAY):
        if not 0 <= n <= MOST:
            raise ValueError(f"documents: 0 to {MOST}")
        self.n, self.seed = n, seed
        self.end = times.now() if end is None else end
        self.start = self.end - span
        self.span = span
        self._key = hashlib.blake2b(str(seed).encode(), digest_size=32).digest()
        self._mix = int.from_bytes(self._key[:16], "big")
        self.jokes = []
        for k in range(JOKES):
            h = self._digest(MOST + k)
            self.jokes.append((h[:20].translate(_CHARS).decode(), 0.15 + 0.8 * h[20] / 256))
        self.devices = max(1, n // VOTES_PER_DEVICE)
        self._weeks = {}
        self._kinds = None

    def _digest(self, i):
        """32 seeded random bytes of vote i: its id's tail, then what it says."""
        return hashlib.blake2b(i.to_bytes(8, "big"), digest_size=32, key=self._key).digest()

    @staticmethod
    def _head(i, a=ALPHABET):
        return f"{a[i // 14776336 % 62]}{a[i // 238328 % 62]}{a[i // 3844 % 62]}{a[i // 62 % 62]}{a[i % 62]}"

    def id(self, i):
        return self._head(i) + self._digest(i)[:15].translate(_CHARS).decode()

    def timestamp(self, i):
        """Microseconds; never less than the timestamp of a lower index. Some whole seconds, some
        whole milliseconds, the rest microseconds, so every form of an RFC 3339 time is served."""
        raw = self.start + (i * self.span) // max(self.n, 1)
        second = raw // times.SECOND
        if _spread(second) % 5 == 0:
            return second * times.SECOND
        millisecond = raw // 1000
        return millisecond * 1000 if _spread(millisecond) % 3 == 0 else raw

    def device(self, d):
        hexa = f"{((d + 1) * 0x9E3779B97F4A7C15F39CC0605CEDC835 ^ self._mix) & (2**128 - 1):032X}"
        return f"{hexa[:8]}-{hexa[8:12]}-4{hexa[13:16]}-A{hexa[17:20]}-{hexa[20:32]}"

    def week(self, micros):
        day = micros // DAY
        if day not in self._weeks:
            year, week, _ = (times.EPOCH + datetime.timedelta(days=day)).isocalendar()
            self._weeks[day] = f"{year}-W{week:02d}"
        return self._weeks[day]

    def _kind(self, h):
        """(joke_id, rating) of a vote's random number."""
        joke, quality = self.jokes[int(JOKES * ((h & 0xFFFFF) / 2**20) ** 3)]
        if ((h >> 20) & 0xFFFF) < 0.07 * 65536:
            return joke, 2 + (h >> 40) % 3
        return joke, 5 if ((h >> 50) & 0xFFFF) / 65536 < quality else 1

    def vote(self, i):
        """(id, joke_id, rating, device_id, week_id, timestamp in microseconds)."""
        digest = self._digest(i)
        h = int.from_bytes(digest[16:], "big")
        joke, rating = self._kind(h)
        stamp = self.timestamp(i)
        return (self._head(i) + digest[:15].translate(_CHARS).decode(), joke, rating,
                self.device((h >> 70) % self.devices), self.week(stamp), stamp)

    def kind(self, i):
        """(joke_id, rating) of vote i."""
        return self._kind(int.from_bytes(self._digest(i)[16:], "big"))

    def kinds(self):
        """{(joke_id, rating): the indexes of its votes, ascending}: made once (a pass over every
        vote, without the rest of each), so that a COUNT of a joke's ratings is a bisection."""
        if self._kinds is None:
            found = {}
            for i in range(self.n):
                found.setdefault(self.kind(i), array.array("i")).append(i)
            self._kinds = found
        return self._kinds

    def fields(self, i):
        """The vote as a REST Document's fields, in the order the app writes them."""
        return self.fields_of(self.vote(i))

    @staticmethod
    def fields_of(vote):
        _, joke, rating, device, week, stamp = vote
        return {"joke_id": {"stringValue": joke}, "rating": {"integerValue": str(rating)},
                "device_id": {"stringValue": device}, "week_id": {"stringValue": week},
                "timestamp": {"timestampValue": times.format(stamp)}}

    def text(self, vote, prefix, stamps):
        """The vote as a REST Document's JSON text, the same as json.dumps of its Document
        (its name prefix and create/update times given as JSON text), made without building it:
        the vote's strings need no escaping."""
        identifier, joke, rating, device, week, stamp = vote
        return (f'{{"name": {prefix[:-1]}{identifier}", "fields": {{"joke_id": {{"stringValue": "{joke}"}}, '
                f'"rating": {{"integerValue": "{rating}"}}, "device_id": {{"stringValue": "{device}"}}, '
                f'"week_id": {{"stringValue": "{week}"}}, "timestamp": {{"timestampValue": '
                f'"{times.format(stamp)}"}}}}, {stamps}}}')

    def index_of_id(self, identifier):
        """The first index whose id is at or after identifier."""
        return first(0, self.n, lambda i: self.id(i) >= identifier)

    def index_of_time(self, micros):
        """The first index whose timestamp is at or after micros."""
        return first(0, self.n, lambda i: self.timestamp(i) >= micros)
