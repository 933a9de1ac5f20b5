#!/usr/bin/env python3
"""Write a synthetic export of the `rating_events` collection as NDJSON.

The output has the shape of the real export (one Firestore document per line,
timestamps in Firestore's `{"_seconds", "_nanoseconds"}` form), so that the
benchmark and the sample data exercise the same paths as production:

- about 433 jokes with 20-character Firestore-style ids and Zipf-like
  popularity, so the top of each list is clear while the tail is full of ties;
- a pool of devices (upper-case UUID strings, as iOS reports them); each
  device opens the app in a few weeks and rates a handful of distinct jokes per
  week, so a device often rates the same joke again in a later week;
- before `SCALE_CHANGE` the app offered the old 1-5 scale, afterwards only
  thumbs (1 or 5), so 2, 3 and 4 exist but are rare;
- `week_id` is the ISO week of the timestamp in UTC, and the document id is
  `<device_id>_<joke_id>_<week_id>`, unique as in Firestore;
- lines are grouped by device, the way a listing in document-id order groups
  them.

With --typed, each event is written as the nightly fetch hook
(jobs/firestore/rankings-fetch-firestore, `rest`) writes it: the REST API's typed
`Document`, compact and in one line, `{"name":"projects/P/databases/(default)/documents/
rating_events/ID","fields":{"joke_id":{"stringValue":…},"rating":{"integerValue":"5"},…},
"createTime":…,"updateTime":…}`, timestamps in RFC 3339 with 0, 3, 6 or 9 fraction digits as
proto3 JSON writes them. The same seed gives the same events in both forms.

Output depends only on --seed and the shape options: a smaller --bytes or
--events gives a prefix of a larger file with the same seed.
"""

import argparse
import datetime
import gzip
import math
import random
import string
import sys
import time

ID_ALPHABET = string.ascii_letters + string.digits

# Mondays 00:00 UTC: the first week with events and the week after the last.
FIRST_MONDAY = datetime.datetime(2024, 2, 12, tzinfo=datetime.timezone.utc)
END_MONDAY = datetime.datetime(2026, 2, 16, tzinfo=datetime.timezone.utc)
SCALE_CHANGE = datetime.datetime(2025, 1, 6, tzinfo=datetime.timezone.utc)
WEEK_SECONDS = 7 * 24 * 3600

# A lookup table per joke turns one random() call into a rating.
RATING_TABLE_SIZE = 64

# Lines are joined and written in batches: one write per batch keeps the
# generator at tens of MB/s without holding the whole file in memory.
BATCH_LINES = 20000


def parse_size(text):
    """Accept 1G, 500M, 64K or a plain byte count (powers of 1024)."""
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}
    text = text.strip().upper().removesuffix("B").removesuffix("I")
    if text and text[-1] in units:
        return int(float(text[:-1]) * units[text[-1]])
    return int(text)


def geometric(rng, mean):
    """A count >= 0 with the given mean; heavy enough tails for 'power users'."""
    p = 1.0 / (mean + 1.0)
    return int(math.log(1.0 - rng.random()) / math.log(1.0 - p))


class Week:
    """One ISO week: its id and the first second, both precomputed once."""

    def __init__(self, monday):
        year, week, _ = monday.isocalendar()
        self.week_id = f"{year}-W{week:02d}"
        self.start = int(monday.timestamp())
        self.old_scale = monday < SCALE_CHANGE


class Joke:
    """A joke id plus its rating tables for both app generations."""

    def __init__(self, rng, joke_id):
        self.joke_id = joke_id
        # How often people find it funny; most jokes lean one way.
        funny = min(0.95, max(0.05, rng.betavariate(2.0, 1.6)))
        self.new_ratings = self._table(rng, {5: funny, 1: 1.0 - funny})
        self.old_ratings = self._table(rng, {
            5: 0.55 * funny, 4: 0.25 * funny, 3: 0.12,
            2: 0.25 * (1.0 - funny), 1: 0.55 * (1.0 - funny)})

    @staticmethod
    def _table(rng, weights):
        values = list(weights)
        table = rng.choices(values, weights=[weights[v] for v in values],
                            k=RATING_TABLE_SIZE)
        return [str(v) for v in table]


TYPED_PREFIX = "projects/jokes-app/databases/(default)/documents/rating_events/"


def rfc3339(seconds, nanos):
    """A Timestamp as proto3 JSON writes it: 0, 3, 6 or 9 fraction digits."""
    text = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds))
    if nanos == 0:
        return text + "Z"
    if nanos % 1_000_000 == 0:
        return f"{text}.{nanos // 1_000_000:03d}Z"
    if nanos % 1000 == 0:
        return f"{text}.{nanos // 1000:06d}Z"
    return f"{text}.{nanos:09d}Z"


def typed_line(flat_id, jid, rating, device, week_id, seconds, nanos):
    """The event as the fetch hook writes a typed document, its fields in one fixed order,
    written to Firestore a few seconds after the vote."""
    written = rfc3339(seconds + 2, (nanos + 123_456_000) % 1_000_000_000)
    return (f'{{"name":"{TYPED_PREFIX}{flat_id}","fields":{{"joke_id":{{"stringValue":"{jid}"}},'
            f'"rating":{{"integerValue":"{rating}"}},"device_id":{{"stringValue":"{device}"}},'
            f'"week_id":{{"stringValue":"{week_id}"}},"timestamp":{{"timestampValue":"{rfc3339(seconds, nanos)}"}}}},'
            f'"createTime":"{written}","updateTime":"{written}"}}\n')


def firestore_id(rng):
    return "".join(rng.choice(ID_ALPHABET) for _ in range(20))


def device_uuid(rng):
    bits = rng.getrandbits(128)
    # Version 4, RFC 4122 variant, as a random UUID has.
    bits = (bits & ~(0xF << 76)) | (4 << 76)
    bits = (bits & ~(0x3 << 62)) | (0x2 << 62)
    h = f"{bits:032X}"
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


class Generator:
    def __init__(self, seed, joke_count):
        self.rng = random.Random(seed)
        rng = self.rng
        self.jokes = [Joke(rng, firestore_id(rng)) for _ in range(joke_count)]
        # Popularity follows rank in a shuffled order, so the most popular
        # jokes are not also the smallest ids.
        rng.shuffle(self.jokes)
        self.joke_cum = self._cumulative(1.0 / (r + 1) ** 0.95
                                         for r in range(joke_count))
        self.weeks = []
        monday = FIRST_MONDAY
        while monday < END_MONDAY:
            self.weeks.append(Week(monday))
            monday += datetime.timedelta(days=7)
        # The app grows: new devices arrive more often in later weeks.
        n = len(self.weeks)
        self.first_week_cum = self._cumulative(1.0 + 3.0 * i / n
                                               for i in range(n))

    @staticmethod
    def _cumulative(weights):
        total, cum = 0.0, []
        for w in weights:
            total += w
            cum.append(total)
        return cum

    def lines(self, typed=False):
        """Yield export lines forever, one device at a time."""
        rng = self.rng
        jokes, weeks = self.jokes, self.weeks
        joke_cum, week_cum = self.joke_cum, self.first_week_cum
        joke_indices = range(len(jokes))
        last_week = len(weeks) - 1
        while True:
            device = device_uuid(rng)
            head = '{"id":"' + device + "_"
            week = rng.choices(range(len(weeks)), cum_weights=week_cum)[0]
            sessions = 1 + geometric(rng, 2.0)
            for _ in range(sessions):
                w = weeks[week]
                tail = (',"device_id":"' + device + '","week_id":"'
                        + w.week_id + '","timestamp":{"_seconds":')
                picks = rng.choices(joke_indices, cum_weights=joke_cum,
                                    k=1 + geometric(rng, 3.0))
                for j in dict.fromkeys(picks):  # distinct, in draw order
                    joke = jokes[j]
                    table = joke.old_ratings if w.old_scale else joke.new_ratings
                    rating = table[int(rng.random() * RATING_TABLE_SIZE)]
                    seconds = w.start + int(rng.random() * WEEK_SECONDS)
                    # Firestore keeps microseconds.
                    nanos = int(rng.random() * 1_000_000) * 1000
                    jid = joke.joke_id
                    if typed:
                        yield typed_line(f"{device}_{jid}_{w.week_id}", jid, rating, device, w.week_id,
                                         seconds, nanos)
                        continue
                    yield (f'{head}{jid}_{w.week_id}","joke_id":"{jid}",'
                           f'"rating":{rating}{tail}{seconds},"_nanoseconds":{nanos}}}}}\n')
                week += 1 + geometric(rng, 3.0)
                if week > last_week:
                    break


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    limit = parser.add_mutually_exclusive_group(required=True)
    limit.add_argument("--bytes", type=parse_size,
                       help="stop before the output would exceed this size "
                            "(uncompressed), e.g. 1G, 50M")
    limit.add_argument("--events", type=int, help="exact number of lines")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--jokes", type=int, default=433)
    parser.add_argument("--typed", action="store_true",
                        help="typed Firestore Document lines, as the fetch hook writes them")
    parser.add_argument("-o", "--output", default="-",
                        help="output file; a name ending in .gz is gzip-"
                             "compressed; - for standard output")
    args = parser.parse_args(argv)

    if args.output == "-":
        out = sys.stdout.buffer
    elif args.output.endswith(".gz"):
        # mtime=0 keeps the compressed bytes deterministic too.
        out = gzip.GzipFile(args.output, "wb", compresslevel=6, mtime=0)
    else:
        out = open(args.output, "wb")

    byte_budget = args.bytes if args.bytes is not None else math.inf
    line_budget = args.events if args.events is not None else math.inf
    written = lines = 0
    batch = []
    for line in Generator(args.seed, args.jokes).lines(args.typed):
        if lines >= line_budget or written + len(line) > byte_budget:
            break
        batch.append(line)
        written += len(line)  # lines are ASCII: characters == bytes
        lines += 1
        if len(batch) == BATCH_LINES:
            out.write("".join(batch).encode("ascii"))
            batch.clear()
    out.write("".join(batch).encode("ascii"))
    if out is not sys.stdout.buffer:
        out.close()
    print(f"generate.py: {lines} events, {written} bytes", file=sys.stderr)


if __name__ == "__main__":
    main()
