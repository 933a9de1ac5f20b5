"""The simulator's own votes: N rating_events computed from a seed and an index, never stored, so
ten million cost no memory. An id is the index in 5 base-62 digits of Firestore's auto-id alphabet
(in ASCII order, so ids sort as indexes do), then 15 seeded random ones; the timestamp grows with
the index too, so a range of names or times is a range of indexes, found by bisection. Jokes: 433
with Zipf-like popularity and a quality each; ratings mostly 1 or 5 (by the joke's quality), a few
2-4; a device per 8 votes; week_id: the ISO week of the timestamp in UTC, as the app writes it."""
import array
import datetime
import hashlib

from . import times

ALPHABET = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
_CHARS = bytes(ord(ALPHABET[b % 62]) for b in range(256))    # a random byte as an id character
MOST = 62 ** 5
JOKES = 433
DAY = 86400 * times.SECOND


def _spread(number):
    """A cheap, fixed scramble of an integer: which seconds and milliseconds are whole."""
    return (number * 0x9E3779B97F4A7C15 >> 17) & 0xFFFF


class Votes:
    """`n` votes of seed `seed` stamped over the year up to `end` (microseconds)."""

    def __init__(self, n, seed=1, end=None):
        if not 0 <= n <= MOST:
            raise ValueError(f"documents: 0 to {MOST}")
        self.n = n
        self.end = times.now() if end is None else end
        self.start = self.end - 365 * DAY
        self._key = hashlib.blake2b(str(seed).encode(), digest_size=32).digest()
        self._mix = int.from_bytes(self._key[:16], "big")
        self.jokes = [(h[:20].translate(_CHARS).decode(), 0.15 + 0.8 * h[20] / 256)
                      for h in map(self._digest, range(MOST, MOST + JOKES))]
        self.devices = max(1, n // 8)
        self._weeks, self._kinds = {}, None

    def _digest(self, i):
        """32 seeded random bytes of vote i: its id's tail, then what it says."""
        return hashlib.blake2b(i.to_bytes(8, "big"), digest_size=32, key=self._key).digest()

    @staticmethod
    def _head(i, a=ALPHABET):
        return f"{a[i // 14776336 % 62]}{a[i // 238328 % 62]}{a[i // 3844 % 62]}{a[i // 62 % 62]}{a[i % 62]}"

    def id(self, i):
        return self._head(i) + self._digest(i)[:15].translate(_CHARS).decode()

    def index(self, identifier):
        """The index of a generated vote's id, or None."""
        head = [ALPHABET.find(c) for c in identifier[:5]] if len(identifier) == 20 else [-1]
        i = sum(d * 62 ** (4 - k) for k, d in enumerate(head))
        return i if min(head) >= 0 and i < self.n and self.id(i) == identifier else None

    def timestamp(self, i):
        """Never less than a lower index's. Some whole seconds, some whole milliseconds, the rest
        microseconds, so every form of an RFC 3339 time is served."""
        raw = self.start + (i * 365 * DAY) // max(self.n, 1)
        second = raw // times.SECOND
        if _spread(second) % 5 == 0:
            return second * times.SECOND
        return raw // 1000 * 1000 if _spread(raw // 1000) % 3 == 0 else raw

    def week(self, micros):
        day = micros // DAY
        if day not in self._weeks:
            year, week, _ = (times.EPOCH + datetime.timedelta(days=day)).isocalendar()
            self._weeks[day] = f"{year}-W{week:02d}"
        return self._weeks[day]

    def _kind(self, digest):
        """(joke_id, rating) of a vote's random bytes."""
        h = int.from_bytes(digest[16:], "big")
        joke, quality = self.jokes[int(JOKES * ((h & 0xFFFFF) / 2**20) ** 3)]
        if ((h >> 20) & 0xFFFF) < 0.07 * 65536:
            return joke, 2 + (h >> 40) % 3
        return joke, 5 if ((h >> 50) & 0xFFFF) / 65536 < quality else 1

    def kind(self, i):
        return self._kind(self._digest(i))

    def vote(self, i):
        """(id, joke_id, rating, device_id, week_id, timestamp in microseconds)."""
        digest = self._digest(i)
        d = (int.from_bytes(digest[16:], "big") >> 70) % self.devices
        hexa = f"{((d + 1) * 0x9E3779B97F4A7C15F39CC0605CEDC835 ^ self._mix) & (2**128 - 1):032X}"
        stamp = self.timestamp(i)
        return (self._head(i) + digest[:15].translate(_CHARS).decode(), *self._kind(digest),
                f"{hexa[:8]}-{hexa[8:12]}-4{hexa[13:16]}-A{hexa[17:20]}-{hexa[20:32]}", self.week(stamp), stamp)

    def kinds(self):
        """{(joke_id, rating): its votes' indexes, ascending}: made once, so that a COUNT of a
        joke's ratings is a bisection."""
        if self._kinds is None:
            self._kinds = {}
            for i in range(self.n):
                self._kinds.setdefault(self.kind(i), array.array("i")).append(i)
        return self._kinds

    def fields(self, i):
        _, joke, rating, device, week, stamp = self.vote(i)
        return {"joke_id": {"stringValue": joke}, "rating": {"integerValue": str(rating)},
                "device_id": {"stringValue": device}, "week_id": {"stringValue": week},
                "timestamp": {"timestampValue": times.format(stamp)}}

    @staticmethod
    def text(vote, prefix, stamps):
        """The vote's REST Document as json.dumps writes it (its name's prefix and its times
        given as JSON text), made without building it: its strings need no escaping."""
        identifier, joke, rating, device, week, stamp = vote
        return (f'{{"name": {prefix[:-1]}{identifier}", "fields": {{"joke_id": {{"stringValue": "{joke}"}}, '
                f'"rating": {{"integerValue": "{rating}"}}, "device_id": {{"stringValue": "{device}"}}, '
                f'"week_id": {{"stringValue": "{week}"}}, "timestamp": {{"timestampValue": '
                f'"{times.format(stamp)}"}}}}, {stamps}}}')
