"""A Firestore in memory for the night's unit tests: what rankings_night.fetch uses of
firestore.Firestore, answering from a dict of documents kept with every version by commit time,
so an answer depends on its readTime as Firestore's does. No HTTP, no emulator.

    fake = FakeFirestore()                        # database_path, transport.deadline, credentials
    fake.put("vote-1", rating=5, timestamp=ns)    # a version committed at the fake's now
    fake.delete("vote-1")
    fake.faults = [Fault("short", value=1)]       # table-driven faults, below
    fetch.run(directory, fake, say)

What it answers, in Firestore's REST shape (a list of items, readTime on each, `done` on the last):
`POST /documents:runQuery` with a structuredQuery over one top-level collection: `where` a
fieldFilter or an AND compositeFilter of fieldFilters on `timestamp >=` (timestampValue) and
`__name__ >=`/`<` (referenceValue); `orderBy` ascending, ending with `__name__`; a `startAt`
cursor; `limit` (0 too); `readTime`. `POST /documents:runAggregationQuery`: a `count` of such a
query. Anything else is refused with 400 INVALID_ARGUMENT naming it, never answered wrong.

A readTime in the fake's future is refused (400 INVALID_ARGUMENT), one older than `read_time_life`
seconds too (400 FAILED_PRECONDITION, "too old"), as Firestore refuses them. The fake's clock is the
local one plus `skew` seconds (a machine whose clock is behind Firestore's: skew > 0).

Streams run in forked processes (parallel.apart), so what the fake was asked and what it served
goes to a journal file every process appends to, and the faults' counters live in shared memory:
`fake.journal()` is every call, in order, from every process."""
import bisect
import json
import multiprocessing
import os
import signal
import tempfile
import threading
import time
import types
from dataclasses import dataclass

from rankings_night.snapshot import format_time, parse_time
from rankings_night.statuses import UNAVAILABLE, Failure
from rankings_night.transport import Refused

TOO_OLD = "The requested 'read_time' is too old."
FUTURE = "The requested 'read_time' cannot be in the future."
TIMED_OUT = "The datastore operation timed out, or the data was temporarily unavailable."


@dataclass
class Fault:
    """One row of a fault table. `kind`:
      short    a runQuery answer leaves out its last `value` documents, still marked done
      lie      a COUNT answers `value` more than it counts
      status   the call fails as the transport fails after its retries on HTTP `value` (429, 5xx)
      too_old  the call is refused as Firestore refuses a readTime it no longer keeps
      kill     the process serving the call is killed with SIGKILL (the OOM killer), only in a
               stream's process (not the one that made the fake)
      refuse   the call is refused with HTTP 400 and the reason `reason`
      hold     the call waits `value` seconds first
    `method`: "runQuery" or "count". `ranged`: only calls with a __name__ range (True), only
    without (False), any (None); `cursor` the same of a startAt cursor (a page after a stream's
    first). `after`: let that many matching calls pass first. `times`: fire at most that often
    (None: every matching call after `after`)."""
    kind: str
    method: str = "runQuery"
    value: int = 1
    ranged: bool = None
    cursor: bool = None
    after: int = 0
    times: int = 1
    reason: str = "INVALID_ARGUMENT"


class FakeFirestore:
    def __init__(self, project="demo-fake", database="(default)", collection="rating_events",
                 read_time_life=3600.0, skew=0.0, count_max=None, count_hold=0.0, partition_query=False):
        self.database_path = f"projects/{project}/databases/{database}"
        self.root = f"{self.database_path}/documents"
        self.collection = collection
        self.transport = types.SimpleNamespace(deadline=None)
        self.credentials = types.SimpleNamespace(headers=lambda: {})
        self.read_time_life, self.skew, self.count_max = read_time_life, skew, count_max
        self.partition_query, self.extra_cursors = partition_query, []
        self.count_hold = count_hold        # seconds each COUNT is held (to see COUNTs side by side)
        self.versions = {}                  # id -> [(commit ns, fields or None when deleted, create ns)]
        self._faults = []
        self.lock = threading.RLock()
        self.last = 0
        self._cache = {}                    # read_time -> ([ids], [Documents]) in name order
        self.parent = os.getpid()
        self._shared_lock = multiprocessing.Lock()
        self._counters = multiprocessing.RawArray("i", 64)     # per fault: calls seen, fired
        self._counts_in_flight = 0
        self.most_counts_in_flight = 0
        folder = tempfile.mkdtemp(prefix="fake-firestore.")
        self.journal_path = os.path.join(folder, "journal")
        open(self.journal_path, "w").close()

    # -- time and writes

    def now(self):
        """The fake's now, in whole microseconds, strictly after any it handed out or stamped."""
        with self.lock:
            now = (time.time_ns() + int(self.skew * 1e9)) // 1000 * 1000
            self.last = max(now, self.last + 1000)
            return self.last

    def put(self, id_, timestamp=None, **fields):
        """A version of document id_ with these fields (ints as integerValue, str as
        stringValue), `timestamp` (ns, or an RFC 3339 text) as a timestampValue unless None."""
        values = {k: {"integerValue": str(v)} if isinstance(v, int) else {"stringValue": v} for k, v in fields.items()}
        if timestamp is not None:
            text = timestamp if isinstance(timestamp, str) else format_time(timestamp)
            values["timestamp"] = {"timestampValue": text}
        commit = self.now()
        with self.lock:
            history = self.versions.setdefault(id_, [])
            created = history[-1][2] if history and history[-1][1] is not None else commit
            history.append((commit, values, created))
            self._cache.clear()
        return commit

    def delete(self, id_):
        with self.lock:
            self.versions.setdefault(id_, []).append((self.now(), None, None))
            self._cache.clear()

    def at(self, read_time):
        """([ids], [Documents]) as they were at read_time (ns), in name order."""
        with self.lock:
            if read_time in self._cache:
                return self._cache[read_time]
            out = {}
            for id_, history in self.versions.items():
                seen = [v for v in history if v[0] <= read_time]
                if seen and seen[-1][1] is not None:
                    commit, fields, created = seen[-1]
                    out[id_] = {"name": f"{self.root}/{self.collection}/{id_}", "fields": fields,
                                "createTime": format_time(created), "updateTime": format_time(commit)}
            ids = sorted(out)
            if len(self._cache) > 32:
                self._cache.clear()
            self._cache[read_time] = ids, [out[i] for i in ids]
            return self._cache[read_time]

    # -- the journal

    def _note(self, entry):
        line = (json.dumps(dict(entry, pid=os.getpid())) + "\n").encode()
        fd = os.open(self.journal_path, os.O_WRONLY | os.O_APPEND)
        try:
            os.write(fd, line)
        finally:
            os.close(fd)

    def journal(self):
        with open(self.journal_path) as lines:
            return [json.loads(line) for line in lines]

    def served(self):
        """{id: times served} over every runQuery answer of every process."""
        out = {}
        for entry in self.journal():
            for id_ in entry.get("served", ()):
                out[id_] = out.get(id_, 0) + 1
        return out

    # -- Firestore's interface, as Fetch calls it: firestore.Firestore.call, one REST call each

    def call(self, method, suffix, body=None, final=()):
        if (method, suffix) == ("POST", "/documents:partitionQuery"):
            return self.partition(body or {})
        if method != "POST" or suffix not in ("/documents:runQuery", "/documents:runAggregationQuery"):
            raise Refused(f"{method} {suffix}: the fake does not serve it", 404, "NOT_FOUND")
        counting = suffix.endswith("runAggregationQuery")
        if counting:
            structured = (body or {}).get("structuredAggregationQuery", {})
            aggregations = structured.get("aggregations") or [{}]
            if len(aggregations) != 1 or "count" not in aggregations[0]:
                raise self.invalid("an aggregation other than one count")
            query = structured.get("structuredQuery", {})
        else:
            query = (body or {}).get("structuredQuery", {})
        parsed = self.parse(query)
        kind = "count" if counting else "runQuery"
        read_time = self.read_time_of(body or {})
        fault = self.fault(kind, parsed)
        if fault is not None and fault.kind == "hold":
            time.sleep(fault.value)
        elif fault is not None and fault.kind not in ("short", "lie"):
            self._note({"call": kind, "low": parsed["low"], "high": parsed["high"], "fault": fault.kind})
            self.fire(fault, suffix)
        documents = self.matching(parsed, read_time)
        stamp = format_time(read_time)
        if counting:
            return self.count_answer(parsed, documents, stamp, aggregations[0].get("alias", "field_1"), fault)
        documents = self.page(parsed, documents)
        if fault is not None and fault.kind == "short":
            documents = documents[:max(len(documents) - fault.value, 0)]
        self._note({"call": kind, "low": parsed["low"], "high": parsed["high"], "cursor": parsed["cursor"] is not None,
                    "served": [d["name"].rsplit("/", 1)[1] for d in documents]})
        items = [{"document": d, "readTime": stamp} for d in documents] or [{"readTime": stamp}]
        items[-1]["done"] = True
        return items

    def partition(self, body):
        """Cursors at even places of the ids (and extra_cursors), on two pages; or refused as Google's
        emulator refuses it (501 UNIMPLEMENTED) unless made with partition_query=True."""
        if not self.partition_query:
            self._note({"call": "partitionQuery", "refused": 501})
            raise Refused(f"POST {self.root}:partitionQuery: HTTP 501: Method google.firestore.v1.Firestore/"
                          "PartitionQuery is unimplemented", 501, "UNIMPLEMENTED")
        if body.get("structuredQuery") != {"from": [{"collectionId": self.collection, "allDescendants": True}],
                                           "orderBy": [{"field": {"fieldPath": "__name__"}, "direction": "ASCENDING"}]}:
            raise self.invalid(f"the partitioned query {body.get('structuredQuery')!r}")
        wanted, (ids, _) = int(body.get("partitionCount", 0)), self.at(self.read_time_of(body))
        cursors = sorted([f"{self.root}/{self.collection}/{ids[len(ids) * k // (wanted + 1)]}"
                          for k in range(1, wanted + 1)] * (len(ids) > wanted) + list(self.extra_cursors))
        page = 1 if body.get("pageToken") == "second" else 0
        self._note({"call": "partitionQuery", "partitionCount": wanted, "page": page})
        answer = {"partitions": [{"values": [{"referenceValue": c}]} for c in cursors[page::2]]}
        return dict(answer, nextPageToken="second") if page == 0 else answer

    def count_answer(self, parsed, documents, stamp, alias, fault):
        if self.count_max is not None and len(documents) > self.count_max:
            self._note({"call": "count", "low": parsed["low"], "high": parsed["high"], "fault": "deadline"})
            raise Refused(f"POST runAggregationQuery: HTTP 504: {TIMED_OUT}", 504, "DEADLINE_EXCEEDED")
        with self.lock:
            self._counts_in_flight += 1
            self.most_counts_in_flight = max(self.most_counts_in_flight, self._counts_in_flight)
        try:
            if self.count_hold:
                time.sleep(self.count_hold)
        finally:
            with self.lock:
                self._counts_in_flight -= 1
        counted = len(documents) + (fault.value if fault is not None and fault.kind == "lie" else 0)
        self._note({"call": "count", "low": parsed["low"], "high": parsed["high"], "counted": counted})
        return [{"result": {"aggregateFields": {alias: {"integerValue": str(counted)}}}, "readTime": stamp,
                 "done": True}]

    # -- faults

    @property
    def faults(self):
        return self._faults

    @faults.setter
    def faults(self, rows):
        """A new table, its counters from 0."""
        with self._shared_lock:
            self._faults = list(rows)
            self._counters[:] = [0] * len(self._counters)

    def fault(self, kind, parsed):
        """The first fault of the table due for this call, its counters moved on."""
        ranged = parsed["low"] is not None or parsed["high"] is not None
        with self._shared_lock:
            for number, row in enumerate(self.faults):
                if row.method != kind or (row.ranged is not None and row.ranged != ranged) \
                        or (row.cursor is not None and row.cursor != (parsed["cursor"] is not None)):
                    continue
                if row.kind == "kill" and os.getpid() == self.parent:
                    continue
                seen, fired = self._counters[2 * number], self._counters[2 * number + 1]
                self._counters[2 * number] = seen + 1
                if seen >= row.after and (row.times is None or fired < row.times):
                    self._counters[2 * number + 1] = fired + 1
                    return row
        return None

    def fired(self, number):
        """How often fault `number` of the table fired, in every process."""
        return self._counters[2 * number + 1]

    def fire(self, fault, suffix):
        url = f"POST {self.root[:-len('/documents')]}{suffix}"
        if fault.kind == "kill":
            os.kill(os.getpid(), signal.SIGKILL)
        if fault.kind == "status":
            word = "RESOURCE_EXHAUSTED" if fault.value == 429 else "UNAVAILABLE"
            raise Failure(UNAVAILABLE, f"{url}: HTTP {fault.value}: {word} (gave up after 5 tries)")
        if fault.kind == "too_old":
            raise Refused(f"{url}: HTTP 400: {TOO_OLD}", 400, "FAILED_PRECONDITION")
        raise Refused(f"{url}: HTTP 400: refused by the fault table", 400, fault.reason)

    # -- queries

    def invalid(self, what):
        return Refused(f"POST runQuery: HTTP 400: the fake does not support {what}", 400, "INVALID_ARGUMENT")

    def read_time_of(self, body):
        now = self.now()
        if "readTime" not in body:
            return now
        try:
            read_time = parse_time(body["readTime"])
        except (ValueError, AttributeError):
            raise self.invalid(f"the readTime {body['readTime']!r}") from None
        if read_time > now:
            raise Refused(f"POST: HTTP 400: {FUTURE}", 400, "INVALID_ARGUMENT")
        if now - read_time > self.read_time_life * 1e9:
            raise Refused(f"POST: HTTP 400: {TOO_OLD}", 400, "FAILED_PRECONDITION")
        return read_time

    def parse(self, query):
        extra = set(query) - {"from", "where", "orderBy", "startAt", "limit"}
        if extra:
            raise self.invalid(", ".join(sorted(extra)))
        if query.get("from") != [{"collectionId": self.collection}]:
            raise self.invalid(f"the source {query.get('from')!r}")
        where = query.get("where")
        filters = [] if where is None else where["compositeFilter"]["filters"] \
            if "compositeFilter" in where and where["compositeFilter"].get("op") == "AND" else [where]
        parsed = {"since": None, "until": None, "low": None, "high": None, "cursor": None, "limit": query.get("limit")}
        prefix = f"{self.root}/{self.collection}/"
        for one in filters:
            if set(one) != {"fieldFilter"}:
                raise self.invalid(f"the filter {one!r}")
            path, op, value = one["fieldFilter"]["field"]["fieldPath"], one["fieldFilter"]["op"], \
                one["fieldFilter"]["value"]
            if (path, op) == ("timestamp", "GREATER_THAN_OR_EQUAL") and "timestampValue" in value:
                parsed["since"] = parse_time(value["timestampValue"])
            elif (path, op) == ("timestamp", "LESS_THAN") and "timestampValue" in value:
                parsed["until"] = parse_time(value["timestampValue"])
            elif path == "__name__" and op in ("GREATER_THAN_OR_EQUAL", "LESS_THAN") \
                    and value.get("referenceValue", "").startswith(prefix):
                parsed["low" if op == "GREATER_THAN_OR_EQUAL" else "high"] = value["referenceValue"][len(prefix):]
            else:
                raise self.invalid(f"the filter {path} {op} {value!r}")
        order = [o["field"]["fieldPath"] for o in query.get("orderBy", [])]
        if any(o.get("direction", "ASCENDING") != "ASCENDING" for o in query.get("orderBy", [])):
            raise self.invalid("a descending order")
        if order not in ([], ["__name__"], ["timestamp", "__name__"]):
            raise self.invalid(f"the order {order!r}")
        parsed["order"] = order or ["__name__"]
        if "startAt" in query:
            cursor = query["startAt"]
            if len(cursor["values"]) != len(parsed["order"]):
                raise self.invalid("a cursor that is not the whole order")
            parsed["cursor"] = (tuple(self.cursor_key(v) for v in cursor["values"]), bool(cursor.get("before")))
        return parsed

    def cursor_key(self, value):
        if "timestampValue" in value:
            return parse_time(value["timestampValue"])
        if "referenceValue" in value:
            return value["referenceValue"].rsplit("/", 1)[1]
        raise self.invalid(f"the cursor value {value!r}")

    def key(self, parsed, document):
        out = []
        for path in parsed["order"]:
            if path == "__name__":
                out.append(document["name"].rsplit("/", 1)[1])
            else:
                out.append(parse_time(document["fields"][path]["timestampValue"]))
        return tuple(out)

    def matching(self, parsed, read_time):
        """The query's documents at read_time in its order, its cursor and limit aside."""
        ids, documents = self.at(read_time)
        first = 0 if parsed["low"] is None else bisect.bisect_left(ids, parsed["low"])
        end = len(ids) if parsed["high"] is None else bisect.bisect_left(ids, parsed["high"])
        timed = parsed["since"] is not None or parsed["until"] is not None
        if not timed and parsed["order"] == ["__name__"]:
            return documents[first:end]
        out = []
        for document in documents[first:end]:
            stamp = document["fields"].get("timestamp", {})
            if (timed or "timestamp" in parsed["order"]) and "timestampValue" not in stamp:
                continue    # Firestore's filter and order on a field hold only documents with it
            if parsed["since"] is not None and parse_time(stamp["timestampValue"]) < parsed["since"]:
                continue
            if parsed["until"] is not None and parse_time(stamp["timestampValue"]) >= parsed["until"]:
                continue
            out.append(document)
        out.sort(key=lambda d: self.key(parsed, d))
        return out

    def page(self, parsed, documents):
        if parsed["cursor"] is not None:
            values, before = parsed["cursor"]
            documents = [d for d in documents if self.key(parsed, d) > values
                         or (before and self.key(parsed, d) == values)]
        if parsed["limit"] is not None:
            documents = documents[:parsed["limit"]]
        return documents
