#!/usr/bin/env python3
"""A Firestore for the night's tests and benchmarks: the REST calls the night makes, answered in
Firestore's JSON shapes (held to Google's emulator by test_agreement.py), over N synthetic votes
computed on demand (synthetic.py; ten million cost no memory) under the writes made since, with
production's limits that the emulator lacks, scaled by settings (limits.py), and a count of what
it served. Python's standard library only.

In a test:

    from simulator.firestore_sim import FirestoreSimulator
    with FirestoreSimulator(documents=300, seed=1, read_time_life=5, count_max=100) as sim:
        sim.address                      # "127.0.0.1:PORT", for FIRESTORE_EMULATOR_HOST
        sim.vote("new-id", "joke", 5)    # a vote written now (its commit time); a re-rate: the same id
        sim.delete(sim.votes.id(7))      # sim.votes: the generator (ids, timestamps, votes by index)
        sim.write_ndjson(path, at)       # every vote at readTime `at` (default now), as snapshot lines
        sim.served()                     # requests by kind, documents per page, counts, faults
        sim.settings.fault_every = 3     # any limit, changed while it runs

The generator's own votes need no server: FirestoreSimulator(documents=N, seed=S, end=E,
genesis=G).write_ndjson(path, generated=True) (or --write-ndjson below): the same N, S, E and G,
the same bytes.

Standalone (a benchmark; stops on SIGINT or SIGTERM; the address on standard output):

    python3 Tests/simulator/firestore_sim.py --port 8080 --documents 10000000 --stream-rate 5000
    python3 Tests/simulator/firestore_sim.py --documents 1000 --seed 3 --end 2026-11-01T00:00:00Z \\
        --write-ndjson votes.ndjson     # the generator's votes, then exit

Routes: /v1/projects/P/databases/D/documents:runQuery, :runAggregationQuery, :commit,
D:exportDocuments, D/operations/ID, the emulator's
/emulator/v1/projects/P:export; control: GET /simulator/served, GET|POST /simulator/settings,
POST /simulator/votes {"votes": [{"id", "joke_id", "rating", ["device_id", "week_id",
"timestamp"]} or {"id", "delete": true}]}.
"""
import argparse
import collections
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
from .export import Exports, pages  # noqa: E402
from .limits import TIMED_OUT, Settings, check_read_time, count_seconds, fault  # noqa: E402
from .query import Query, QueryError, unsupported  # noqa: E402
from .store import Database  # noqa: E402
from .synthetic import Votes  # noqa: E402
from .values import Invalid  # noqa: E402

_DATABASE = re.compile(r"projects/([^/]+)/databases/([^/:]+)(.*)", re.S)


class Served:
    """What was asked and answered: requests by kind, HTTP statuses, the documents of each
    runQuery answer, each COUNT's result, faults injected, and the most runQuery answers in
    progress at once."""

    def __init__(self):
        self.lock = threading.Lock()
        self.streams = 0            # runQuery answers in progress now (a reset leaves them be)
        self.reset()

    def reset(self):
        """Everything counted from now on, and fault_every's requests numbered from 1 again."""
        with self.lock:
            self.requests, self.statuses = collections.Counter(), collections.Counter()
            self.pages, self.counts, self.faults = [], [], 0
            self.most_streams = self.streams
            self.number = 0

    def asked(self, kind):
        with self.lock:
            self.requests[kind] += 1

    def snapshot(self):
        with self.lock:
            return {"requests": dict(self.requests), "statuses": {str(k): v for k, v in self.statuses.items()},
                    "documents": sum(self.pages), "pages": list(self.pages), "counts": list(self.counts),
                    "faults": self.faults, "most_streams": self.most_streams}


class Encoded(str):
    """An answer already in JSON (a page of votes is made as text, not built and then encoded)."""


class Answer(Exception):
    """An HTTP answer other than 200 with JSON, raised from anywhere in a request."""

    def __init__(self, code, body, headers=None):
        super().__init__(code)
        self.code, self.body, self.headers = code, body, headers or {}


def error(code, status, message):
    return {"error": {"code": code, "message": message, "status": status}}


class FirestoreSimulator:
    def __init__(self, documents=0, seed=1, project="demo", database="(default)", collection="rating_events",
                 host="127.0.0.1", port=0, genesis=None, end=None, export_root=None, **limits):
        """documents votes of `seed` in `collection` of projects/`project`/databases/`database`,
        there since `genesis` (microseconds; default: as long before the start as any readTime
        can reach), stamped over a year up to `end` (microseconds; default: genesis). Every
        other keyword is a limits.Settings field."""
        self.settings = Settings(**limits)
        self.started = time.monotonic()
        if genesis is None:
            reach = max(self.settings.read_time_life, self.settings.pitr_life if self.settings.pitr else 0)
            genesis = (times.now() // times.SECOND - math.ceil(reach) - 60) * times.SECOND
        self.genesis = genesis
        self.votes = Votes(documents, seed, genesis if end is None else end)
        self.project, self.database, self.collection = project, database, collection
        self.db = Database(project, database, self.votes, collection, genesis)
        self.databases = {(project, database): self.db}
        self.exports = Exports(self.settings, export_root)
        self.served_counts = Served()
        self.host, self.port = host, port
        self.server = None

    # -- running

    def start(self):
        owner = self

        class Handler(_Handler):
            sim = owner

        self.server = _Server((self.host, self.port), Handler)
        self.port = self.server.server_address[1]
        self.started = time.monotonic()
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
        return f"{self.host}:{self.port}"

    # -- votes

    def commit(self, writes):
        """Writes [(PATH, fields or None to delete)] (PATH: "collection/id") at one commit time;
        its RFC 3339 text, a readTime that sees them (one a microsecond earlier does not)."""
        commit, _ = self.db.commit([(tuple(path.split("/")), fields) for path, fields in writes])
        return times.format(commit)

    def vote(self, identifier, joke_id, rating, device_id="simulator-device", week_id=None, timestamp=None):
        """A vote as the app writes it (a re-rate: the same id again), its timestamp `timestamp`
        (RFC 3339; default: now) and its week_id that time's ISO week. Returns the commit time."""
        micros = times.now() if timestamp is None else times.parse(timestamp)
        week_id = week_id or self.votes.week(micros)
        return self.commit([(f"{self.collection}/{identifier}", {
            "joke_id": {"stringValue": joke_id}, "rating": {"integerValue": str(rating)},
            "device_id": {"stringValue": device_id}, "week_id": {"stringValue": week_id},
            "timestamp": {"timestampValue": times.format(micros)}})])

    def delete(self, identifier, collection=None):
        return self.commit([(f"{collection or self.collection}/{identifier}", None)])

    def documents(self, read_time=None, collection=None):
        """Every document of the collection at read_time (default: now), in name order."""
        at = self.db.now() if read_time is None else times.parse(read_time)
        for page in pages(self.db, collection or self.collection, at):
            yield from page

    def generated(self):
        """The generator's own votes, without any write made since, in name order."""
        for i in range(self.votes.n):
            yield self.db.base_document(i)

    def write_ndjson(self, path, read_time=None, generated=False):
        """The votes (at read_time; or the generator's own) as NDJSON, a REST Document a line, name
        first, as the fetch writes its snapshot and `rankings aggregate` reads it. Returns the count."""
        count = 0
        with open(path, "w", encoding="utf-8") as out:
            for document in self.generated() if generated else self.documents(read_time):
                out.write(json.dumps(document, ensure_ascii=False, separators=(",", ":")) + "\n")
                count += 1
        return count

    def served(self):
        return self.served_counts.snapshot()

    def reset_served(self):
        self.served_counts.reset()

    # -- Firestore's REST API

    def database_of(self, project, database):
        with self.db.lock:
            if (project, database) not in self.databases:
                self.databases[(project, database)] = Database(project, database)
            return self.databases[(project, database)]

    def read_time_of(self, db, body):
        now = db.now()
        if "readTime" not in body:
            return now
        return check_read_time(self.settings, body["readTime"], now)

    def api(self, method, rest, query, body):
        """(status, JSON) of one Firestore call on /v1/REST."""
        served = self.served_counts
        whole = _DATABASE.fullmatch(rest)
        if not whole:
            raise Answer(404, None)
        db = self.database_of(whole[1], whole[2])
        tail = whole[3]
        if tail == "/documents:runQuery" and method == "POST":
            return self.run_query(db, body)
        if tail == "/documents:runAggregationQuery" and method == "POST":
            return self.run_aggregation(db, body)
        if tail == "/documents:commit" and method == "POST":
            served.asked("commit")
            return 200, self.commit_api(db, body)
        if tail == ":exportDocuments" and method == "POST":
            served.asked("exportDocuments")
            if not isinstance(body, dict):
                raise QueryError("Payload isn't valid for request.")
            check = lambda text: check_read_time(self.settings, text, db.now())  # noqa: E731
            return 200, self.exports.start(db, body, self.collection, db.now(), check)
        if tail.startswith("/operations/") and method == "GET":
            served.asked("operation")
            operation = self.exports.get(rest)
            if operation is None:
                raise Answer(404, error(404, "NOT_FOUND", f"Operation {rest} not found."))
            return 200, operation
        raise Answer(404, None)

    def run_query(self, db, body):
        served = self.served_counts
        served.asked("runQuery")
        asked = time.monotonic()
        if not isinstance(body, dict) or set(body) - {"structuredQuery", "readTime"}:
            raise unsupported("runQuery without a structuredQuery or with a transaction")
        read_time = self.read_time_of(db, body)
        documents = Query(body.get("structuredQuery"), db.root).texts(db, read_time)
        stamp = f'"readTime": "{times.format(read_time)}"'
        items = [f'{{"document": {d}, {stamp}}}' for d in documents] or [f"{{{stamp}}}"]
        items[-1] = items[-1][:-1] + ', "done": true}'
        with served.lock:
            served.streams += 1
            served.most_streams = max(served.most_streams, served.streams)
        try:
            # Sent at the stream's rate from when it was asked: the time this process took to
            # make the answer is part of it, as Firestore's is of its own.
            rate = self.settings.stream_rate
            due = asked + self.settings.latency + (len(documents) / rate if rate else 0.0)
            time.sleep(max(due - time.monotonic(), 0.0))
        finally:
            with served.lock:
                served.streams -= 1
                served.pages.append(len(documents))
        return 200, Encoded("[" + ",\n".join(items) + "]")

    def run_aggregation(self, db, body):
        served = self.served_counts
        served.asked("runAggregationQuery")
        aggregation = body.get("structuredAggregationQuery") if isinstance(body, dict) else None
        if not isinstance(aggregation, dict) or set(body) - {"structuredAggregationQuery", "readTime"}:
            raise unsupported("runAggregationQuery without a structuredAggregationQuery or with a transaction")
        read_time = self.read_time_of(db, body)
        query = Query(aggregation.get("structuredQuery"), db.root)
        wanted = aggregation.get("aggregations")
        if not isinstance(wanted, list) or not wanted or any(set(a) - {"alias", "count"} or "count" not in a
                                                              for a in wanted):
            raise unsupported("aggregations other than count")
        counted = query.count(db, read_time)
        seconds, failed = count_seconds(self.settings, counted)
        time.sleep(self.settings.latency + seconds)
        with served.lock:
            served.counts.append(None if failed else counted)
        if failed:
            raise Answer(504, error(504, "DEADLINE_EXCEEDED", TIMED_OUT))
        fields = {}
        for number, one in enumerate(wanted, 1):
            up_to = (one.get("count") or {}).get("upTo")
            value = counted if up_to is None else min(counted, int(up_to))
            fields[one.get("alias") or f"field_{number}"] = {"integerValue": str(value)}
        return 200, [{"result": {"aggregateFields": fields}, "readTime": times.format(read_time), "done": True}]

    def path_of(self, db, name):
        if not isinstance(name, str) or not name.startswith(db.root + "/"):
            raise QueryError(f"Document name {name!r} is not in {db.root}.")
        path = tuple(name[len(db.root) + 1:].split("/"))
        if len(path) % 2 or not all(path):
            raise QueryError(f"Document name {name!r} is not a document's.")
        return path

    def commit_api(self, db, body):
        writes = body.get("writes") if isinstance(body, dict) else None
        if not isinstance(writes, list) or set(body) - {"writes"}:
            raise unsupported("commit other than of writes without a transaction")
        if not writes:
            return {}
        plan = []
        for write in writes:
            if not isinstance(write, dict) or len(write) != 1 or not ({"update", "delete"} & set(write)):
                raise unsupported("writes other than update (no mask, precondition or transform) and delete")
            if "delete" in write:
                plan.append((self.path_of(db, write["delete"]), None))
            else:
                update = write["update"]
                if not isinstance(update, dict) or set(update) - {"name", "fields"}:
                    raise QueryError("Payload isn't valid for request.")
                plan.append((self.path_of(db, update.get("name")), update.get("fields", {})))
        commit, results = db.commit(plan)
        return {"writeResults": [{} if r is None else {"updateTime": times.format(r)} for r in results],
                "commitTime": times.format(commit)}

    def control(self, method, path, body):
        if path == "/simulator/served" and method == "GET":
            return self.served()
        if path == "/simulator/settings":
            if method == "POST":
                try:
                    self.settings.update(body if isinstance(body, dict) else {})
                except KeyError as unknown:
                    raise Answer(400, error(400, "INVALID_ARGUMENT", f"no setting {unknown}")) from None
            return dataclasses.asdict(self.settings)
        if path == "/simulator/votes" and method == "POST":
            commits = []
            for one in (body or {}).get("votes", []):
                if one.get("delete"):
                    commits.append(self.delete(one["id"]))
                else:
                    commits.append(self.vote(one["id"], one["joke_id"], one["rating"],
                                             one.get("device_id", "simulator-device"), one.get("week_id"),
                                             one.get("timestamp")))
            return {"commitTimes": commits}
        raise Answer(404, None)


class _Server(http.server.ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 128    # RANKINGS_FIRESTORE_STREAMS goes up to 64 connections at once


class _Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    sim = None

    def log_message(self, *args):
        pass

    def do_GET(self):
        self.handle_one("GET")

    def do_POST(self):
        self.handle_one("POST")

    def handle_one(self, method):
        sim, served = self.sim, self.sim.served_counts
        parts = urllib.parse.urlsplit(self.path)
        path = urllib.parse.unquote(parts.path)
        query = dict(urllib.parse.parse_qsl(parts.query))
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        streamed = path.endswith((":runQuery", ":runAggregationQuery"))
        try:
            try:
                body = json.loads(raw) if raw.strip() else None
            except ValueError:
                raise QueryError("Payload isn't valid for request.") from None
            if path.startswith("/simulator/"):
                status, answer = 200, sim.control(method, path, body)
            else:
                if not path.startswith(("/v1/", "/emulator/v1/")):
                    raise Answer(404, None)
                with served.lock:
                    served.number += 1
                    number = served.number
                injected = fault(sim.settings, number, time.monotonic() - sim.started)
                if injected is not None:
                    code, word, message, headers = injected
                    with served.lock:
                        served.faults += 1
                    raise Answer(code, error(code, word, message), headers)
                if path.startswith("/emulator/v1/"):
                    status, answer = 200, self.emulator(path, body)
                else:
                    status, answer = sim.api(method, path[len("/v1/"):], query, body)
        except QueryError as refused:
            status, answer, headers = refused.code, error(refused.code, refused.status, str(refused)), {}
        except Invalid as invalid:
            status, answer, headers = 400, error(400, "INVALID_ARGUMENT", str(invalid)), {}
        except Answer as other:
            status, answer, headers = other.code, other.body, other.headers
        else:
            headers = {}
        if status != 200 and streamed and sim.settings.errors_in_array and answer is not None:
            answer = [answer]
        if not path.startswith("/simulator/"):
            with served.lock:
                served.statuses[status] += 1
        self.reply(status, answer, headers)

    def emulator(self, path, body):
        whole = re.fullmatch(r"/emulator/v1/projects/([^/]+):export", path)
        if not whole or not isinstance(body, dict):
            raise Answer(404, None)
        self.sim.served_counts.asked("emulatorExport")
        database = body.get("database", f"projects/{whole[1]}/databases/(default)")
        project, name = whole[1], database.rsplit("/", 1)[-1]
        Exports.emulator_export(self.sim.database_of(project, name), self.sim.collection,
                                body.get("export_directory", ""))
        return {}

    def reply(self, status, answer, headers):
        if answer is None:
            data, kind = b"Not Found\n", "text/plain"
        elif isinstance(answer, Encoded):
            data, kind = answer.encode("utf-8"), "application/json; charset=UTF-8"
        else:
            data, kind = json.dumps(answer, ensure_ascii=False).encode("utf-8"), "application/json; charset=UTF-8"
        try:
            self.send_response(status)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(data)))
            for name, value in headers.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True


def _time(text):
    return times.parse(text) if "T" in text else round(float(text) * times.SECOND)


def main(argv=None):
    parser = argparse.ArgumentParser(description="A Firestore simulator for the night's tests and benchmarks "
                                                 "(see the head of this file).",
                                     formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    add = parser.add_argument
    add("--host", default="127.0.0.1", help="the address to listen on")
    add("--port", type=int, default=0, help="0: a free port (printed)")
    add("--project", default="demo", help="the project whose database holds the votes")
    add("--database", default="(default)", help="that database")
    add("--collection", default="rating_events", help="the votes' top-level collection")
    add("--documents", type=int, default=0, help="synthetic votes (up to 62**5)")
    add("--seed", type=int, default=1, help="the same seed, the same votes")
    add("--end", type=_time, help="the last vote's time (RFC 3339 or Unix seconds; default: --genesis)")
    add("--genesis", type=_time, help="when the votes were written (default: as far back as a readTime reaches)")
    add("--export-root", help="where exports to gs://BUCKET/PATH are written (as DIR/BUCKET/PATH)")
    add("--write-ndjson", metavar="PATH", help="write the generator's votes to PATH as NDJSON and exit")
    for f in dataclasses.fields(Settings):
        flag, text = "--" + f.name.replace("_", "-"), f.metadata["help"]
        if f.type is bool:
            add(flag, action="store_true", help=text)
        elif f.name == "fault_window":
            add(flag, type=lambda t: tuple(float(x) for x in t.split(":")), metavar="FROM:TO", help=text)
        else:
            kind = int if f.name in ("count_max", "fault_every", "fault_status", "export_skip") else float
            add(flag, type=kind, default=f.default, help=text)
    args = vars(parser.parse_args(argv))
    limits = {f.name: args.pop(f.name) for f in dataclasses.fields(Settings)}
    target = args.pop("write_ndjson")
    sim = FirestoreSimulator(args.pop("documents"), args.pop("seed"), **args,
                             **limits)
    if target:
        count = sim.write_ndjson(target, generated=True)
        print(f"firestore_sim: {count} votes written to {target}", file=sys.stderr)
        return 0
    sim.start()
    print(sim.address, flush=True)
    print(f"firestore_sim: {sim.votes.n} votes in {sim.db.root}/{sim.collection} on http://{sim.address} "
          f"(readTime life {sim.settings.read_time_life:g} s{', PITR' if sim.settings.pitr else ''})",
          file=sys.stderr, flush=True)
    stopped = threading.Event()
    for number in (signal.SIGINT, signal.SIGTERM):
        signal.signal(number, lambda *_: stopped.set())
    stopped.wait()
    sim.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
