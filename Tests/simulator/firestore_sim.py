#!/usr/bin/env python3
"""A Firestore for what Google's emulator cannot show (held to it by test_agreement.py): the
night's fetch's REST calls over N synthetic votes computed on demand (synthetic.py; ten million cost
no memory) under the writes made since, with production's limits the emulator lacks, scaled by
Settings, and a count of what it served. partitionQuery cuts the collection as production's does
(Google's emulator lacks it).

    with FirestoreSimulator(documents=300, seed=1, read_time_life=5, count_max=100) as sim:
        sim.address; sim.vote("id", "joke", 5); sim.delete(sim.votes.id(7)); sim.served()
        sim.write_ndjson(path, read_time)    # the votes then, a REST Document a line

Standalone (the address on standard output; stops on SIGTERM), or the generator's votes as NDJSON;
POST /simulator/votes {"votes": [{"id", "joke_id", "rating", ["timestamp"]}]} writes votes:

    python3 Tests/simulator/firestore_sim.py --port 8080 --documents 10000000 --stream-rate 5000
    python3 Tests/simulator/firestore_sim.py --documents 1000 --seed 3 --write-ndjson votes.ndjson
"""
import argparse
import dataclasses
import http.server
import json
import math
import os
import re
import signal
import sys
import threading
import time
import urllib.parse

if __name__ == "__main__" and not __package__:
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    __import__("simulator")     # PEP 366: run as a file, its imports as the package's
    __package__ = "simulator"

from . import times  # noqa: E402
from .store import INVALID, Database, Query, Refused, unsupported  # noqa: E402
from .synthetic import Votes  # noqa: E402

TIMED_OUT = "The datastore operation timed out, or the data was temporarily unavailable."


@dataclasses.dataclass
class Settings:
    read_time_life: float = 3600.0      # seconds a readTime is served (production: an hour)
    count_max: int | None = None        # a COUNT of more documents fails with 504 DEADLINE_EXCEEDED...
    count_deadline: float = 60.0        # ...after this many seconds (production's deadline)
    stream_rate: float | None = None    # documents a second one runQuery answer is sent at
    fault_every: int | None = None      # every Nth Firestore request is answered 429 RESOURCE_EXHAUSTED
    retry_after: float = 1.0            # that 429's Retry-After, in seconds


class FirestoreSimulator:
    def __init__(self, documents=0, seed=1, project="demo", port=0, genesis=None, end=None, **limits):
        """Votes in rating_events since `genesis` (microseconds; default: as far back as a readTime
        reaches), stamped up to `end` (default: genesis)."""
        self.settings = Settings(**limits)
        if genesis is None:
            genesis = (times.now() // times.SECOND - math.ceil(self.settings.read_time_life) - 60) * times.SECOND
        self.genesis, self.project, self.collection, self.port = genesis, project, "rating_events", port
        self.votes = Votes(documents, seed, genesis if end is None else end)
        self.db = Database(f"projects/{project}/databases/(default)/documents", self.votes, self.collection, genesis)
        self.lock, self.server = threading.Lock(), None
        self.reset_served()

    def start(self):
        self.server = _Server(("127.0.0.1", self.port), _Handler)
        self.server.sim = self
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.1}, daemon=True).start()
        return self

    def stop(self):
        if self.server is not None:
            self.server.shutdown()
            self.server.server_close()
            self.server = None

    def __enter__(self):
        return self.start()

    def __exit__(self, *_):
        self.stop()

    @property
    def address(self):
        return f"127.0.0.1:{self.port}"

    # -- votes

    def commit(self, writes):
        """[("collection/id", fields or None to delete)] at one commit time: that time, RFC 3339."""
        return times.format(self.db.commit([(tuple(path.split("/")), fields) for path, fields in writes]))

    def vote(self, identifier, joke_id, rating, timestamp=None):
        """A vote as the app writes it, stamped `timestamp` (RFC 3339; default: now)."""
        micros = times.now() if timestamp is None else times.parse(timestamp)
        return self.commit([(f"{self.collection}/{identifier}", {
            "joke_id": {"stringValue": joke_id}, "rating": {"integerValue": str(rating)},
            "device_id": {"stringValue": "simulator-device"}, "week_id": {"stringValue": self.votes.week(micros)},
            "timestamp": {"timestampValue": times.format(micros)}})])

    def delete(self, identifier):
        return self.commit([(f"{self.collection}/{identifier}", None)])

    def texts(self, read_time=None, generated=False):
        """Every vote at read_time (default: now; or the generator's own), in name order, as JSON
        texts, a page at a time, so ten million never sit in memory."""
        if generated:
            yield from (self.votes.text(self.votes.vote(i), *self.db.parts) for i in range(self.votes.n))
            return
        at, cursor = self.db.now() if read_time is None else times.parse(read_time), None
        while True:
            query = {"from": [{"collectionId": self.collection}], "limit": 10_000,
                     "orderBy": [{"field": {"fieldPath": "__name__"}}]}
            if cursor:
                query["startAt"] = {"values": [{"referenceValue": cursor}]}
            page = Query(query, self.db).texts(at)
            yield from page
            if len(page) < 10_000:
                return
            cursor = json.loads(page[-1])["name"]

    def write_ndjson(self, path, read_time=None, generated=False):
        """The votes as NDJSON, as the fetch writes its snapshot and `rankings aggregate` reads it."""
        count = 0
        with open(path, "w", encoding="utf-8") as out:
            for text in self.texts(read_time, generated):
                out.write(text + "\n")
                count += 1
        return count

    def served(self):
        with self.lock:
            return {"pages": list(self.pages), "counts": list(self.counts), "faults": self.faults}

    def reset_served(self):
        """Everything counted from now on, and fault_every's requests numbered from 1 again."""
        with self.lock:
            self.pages, self.counts, self.faults, self.number = [], [], 0, 0

    # -- Firestore's REST API

    def route(self, method, path, body):
        if (method, path) == ("POST", "/simulator/votes"):
            return {"commitTimes": [self.vote(v["id"], v["joke_id"], v["rating"], v.get("timestamp"))
                                    for v in body["votes"]]}
        whole = re.fullmatch(r"/v1/projects/([^/]+)/databases/([^/:]+)(/documents:\w+)", path)
        if not whole or whole.group(1, 2) != (self.project, "(default)"):
            raise Refused(None, code=404)
        with self.lock:
            self.number += 1
            fault = self.settings.fault_every and self.number % self.settings.fault_every == 0
            self.faults += bool(fault)
        if fault:
            raise Refused("Quota exceeded.", "RESOURCE_EXHAUSTED", 429,
                          {"Retry-After": f"{self.settings.retry_after:g}"})
        handler = {"/documents:runQuery": self.run_query, "/documents:runAggregationQuery": self.run_aggregation,
                   "/documents:partitionQuery": self.partition_query}.get(whole[3]) if method == "POST" else None
        if handler is None:
            raise Refused(None, code=404)
        return handler(body)

    def read_time(self, text):
        now = self.db.now()
        if text is None:
            return now
        try:
            nanoseconds = times.parse_ns(text)
        except times.BadTime:
            raise Refused(INVALID) from None
        if nanoseconds % 1000:
            raise Refused("timestamp cannot have more than microseconds precision")
        if nanoseconds // 1000 > now:
            raise Refused("The requested 'read_time' cannot be in the future.")
        if now - nanoseconds // 1000 > self.settings.read_time_life * times.SECOND:
            raise Refused("The requested 'read_time' is too old.", "FAILED_PRECONDITION")
        return nanoseconds // 1000

    def run_query(self, body):
        asked = time.monotonic()
        if not isinstance(body, dict) or set(body) - {"structuredQuery", "readTime"}:
            raise unsupported("runQuery without a structuredQuery or with a transaction")
        read_time = self.read_time(body.get("readTime"))
        texts = Query(body.get("structuredQuery"), self.db).texts(read_time)
        stamp = f'"readTime": "{times.format(read_time)}"'
        items = [f'{{"document": {d}, {stamp}}}' for d in texts] or [f"{{{stamp}}}"]
        items[-1] = items[-1][:-1] + ', "done": true}'
        # Sent at the stream's rate from when it was asked: the time this process took to make the
        # answer is part of it, as Firestore's is of its own.
        rate = self.settings.stream_rate
        time.sleep(max(asked + (len(texts) / rate if rate else 0.0) - time.monotonic(), 0.0))
        with self.lock:
            self.pages.append(len(texts))
        return "[" + ",\n".join(items) + "]"

    def run_aggregation(self, body):
        aggregation = body.get("structuredAggregationQuery") if isinstance(body, dict) else None
        if not isinstance(aggregation, dict) or set(body) - {"structuredAggregationQuery", "readTime"}:
            raise unsupported("runAggregationQuery without a structuredAggregationQuery or with a transaction")
        read_time = self.read_time(body.get("readTime"))
        query, wanted = Query(aggregation.get("structuredQuery"), self.db), aggregation.get("aggregations")
        if not isinstance(wanted, list) or not wanted or any(set(a) - {"alias", "count"} or a.get("count") != {}
                                                              for a in wanted):
            raise unsupported("aggregations other than count")
        counted = query.count(read_time)
        failed = self.settings.count_max is not None and counted > self.settings.count_max
        time.sleep(self.settings.count_deadline if failed else 0)
        with self.lock:
            self.counts.append(None if failed else counted)
        if failed:
            raise Refused(TIMED_OUT, "DEADLINE_EXCEEDED", 504)
        fields = {a.get("alias") or f"field_{n}": {"integerValue": str(counted)} for n, a in enumerate(wanted, 1)}
        return [{"result": {"aggregateFields": fields}, "readTime": times.format(read_time), "done": True}]

    def partition_query(self, body):
        """The collection group's cursors, partitionCount of them, at even places of the
        generator's ids (which sort by their index), as production cuts a collection roughly where
        its documents are; one page."""
        query = body.get("structuredQuery") if isinstance(body, dict) else None
        if query != {"from": [{"collectionId": self.collection, "allDescendants": True}],
                     "orderBy": [{"field": {"fieldPath": "__name__"}, "direction": "ASCENDING"}]} \
                or set(body) - {"structuredQuery", "partitionCount", "readTime"}:
            raise unsupported(f"partitionQuery other than of the collection group by __name__: {json.dumps(body)[:200]}")
        self.read_time(body.get("readTime"))
        wanted, n = int(body.get("partitionCount", 0)), self.votes.n
        cursors = [f"{self.db.root}/{self.collection}/{self.votes.id(n * k // (wanted + 1))}"
                   for k in range(1, wanted + 1)] if n > wanted else []
        return {"partitions": [{"values": [{"referenceValue": c}]} for c in cursors]}



class _Server(http.server.ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 128    # a full read has up to 64 streams, each a connection at once


class _Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def do_GET(self):
        headers = {}
        path = urllib.parse.unquote(urllib.parse.urlsplit(self.path).path)
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        try:
            try:
                body = json.loads(raw) if raw.strip() else None
            except ValueError:
                raise Refused(INVALID) from None
            status, answer = 200, self.server.sim.route(self.command, path, body)
        except Refused as refused:
            status, headers = refused.code, refused.headers
            answer = refused.message and {"error": {"code": status, "message": refused.message,
                                                    "status": refused.status}}
        data = ("Not Found\n" if answer is None else answer if isinstance(answer, str) else json.dumps(answer)).encode()
        try:
            self.send_response(status)
            self.send_header("Content-Type", "text/plain" if answer is None else "application/json; charset=UTF-8")
            self.send_header("Content-Length", str(len(data)))
            for name, value in headers.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True

    do_POST = do_GET


def main(argv=None):
    parser = argparse.ArgumentParser(description="A Firestore simulator (see the head of this file).")
    add = parser.add_argument
    add("--port", type=int, default=0, help="0: a free port (printed)")
    add("--project", default="demo")
    add("--documents", type=int, default=0, help="synthetic votes (up to 62**5)")
    add("--seed", type=int, default=1)
    for flag in ("--end", "--genesis"):
        add(flag, type=times.parse, help="RFC 3339 (default --end: --genesis; --genesis: as far back as a readTime)")
    add("--write-ndjson", metavar="PATH", help="write the generator's votes to PATH as NDJSON and exit")
    for f in dataclasses.fields(Settings):
        add("--" + f.name.replace("_", "-"), default=f.default,
            type=int if f.name in ("count_max", "fault_every") else float)
    args = vars(parser.parse_args(argv))
    target = args.pop("write_ndjson")
    sim = FirestoreSimulator(**args)
    if target:
        print(f"firestore_sim: {sim.write_ndjson(target, generated=True)} votes written to {target}", file=sys.stderr)
        return 0
    sim.start()
    print(sim.address, flush=True)
    print(f"firestore_sim: {sim.votes.n} votes in {sim.db.root}/{sim.collection} on http://{sim.address}",
          file=sys.stderr, flush=True)
    stopped = threading.Event()
    for number in (signal.SIGINT, signal.SIGTERM):
        signal.signal(number, lambda *_: stopped.set())
    stopped.wait()
    sim.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
