"""The synthetic votes under an overlay of the writes made since, each version stamped with its
commit time (a read at readTime T sees those committed at or before T), and the night's queries of
them: one collection, fieldFilters joined by AND, ascending orderBy, startAt, limit. A filter or
cursor on __name__ or timestamp (both grow with a vote's index) is an index range found by bisection,
a COUNT is arithmetic, and one on joke_id and rating too (the board's proof) bisects each kind's
indexes; only a filter on another field scans. What the simulator does not do is refused saying so."""
import bisect
import heapq
import itertools
import json
import operator
import threading

from . import times

def first(low, high, reached):
    """The least i in [low, high) for which reached(i) holds (false, then true), else high."""
    return low + bisect.bisect_left(range(low, high), True, key=reached)


INVALID = "Payload isn't valid for request."
OPS = {"EQUAL": operator.eq, "LESS_THAN": operator.lt, "LESS_THAN_OR_EQUAL": operator.le,
       "GREATER_THAN": operator.gt, "GREATER_THAN_OR_EQUAL": operator.ge}
# Firestore's value type ordering: null, booleans, numbers (NaN first), times, strings, references.
RANKS = {"nullValue": 0, "booleanValue": 1, "integerValue": 2, "doubleValue": 2, "timestampValue": 3,
         "stringValue": 4, "referenceValue": 6}
TIMESTAMP, STRING, REFERENCE = 3, 4, 6


class Refused(Exception):
    """An answer other than 200: Firestore's error (message None: a plain 404)."""

    def __init__(self, message, status="INVALID_ARGUMENT", code=400, headers=None):
        super().__init__(message)
        self.message, self.status, self.code, self.headers = message, status, code, headers or {}


def unsupported(what):
    return Refused(f"The simulator does not support {what}.")


def key(value):
    """A Python value that sorts as Firestore sorts this Value: (type rank, its own order)."""
    (kind, inner), = value.items()
    if kind not in RANKS:
        raise unsupported(kind)
    if kind in ("integerValue", "doubleValue"):
        number = int(inner) if kind == "integerValue" else float(inner)
        return 2, (0, 0) if number != number else (1, number)
    if kind == "timestampValue":
        return TIMESTAMP, times.parse(inner)
    return RANKS[kind], tuple(inner.split("/")) if kind == "referenceValue" else inner


def passes(filters, name, fields):
    """Whether a document (its name's key, its fields) passes every (path, op, key): an
    inequality holds only between values of one type, and never for NaN."""
    for path, op, want in filters:
        have = name if path == "__name__" else fields.get(path)
        have = have if have is None or path == "__name__" else key(have)
        if have is None or (op != "EQUAL" and have[0] != want[0]) or (2, (0, 0)) in (have, want) \
                or not OPS[op](have, want):
            return False
    return True


class Database:
    def __init__(self, root, votes, collection, genesis):
        self.root, self.votes, self.collection, self.genesis = root, votes, collection, genesis
        self.root_key = tuple(root.split("/"))
        self.lock = threading.RLock()
        self.versions = {}      # (collection, id) -> [(commit, fields or None, createTime)], oldest first
        self.replaced = {}      # (joke_id, rating) -> [(index, first commit)] of the synthetic votes written over
        self.first = {}         # synthetic index -> the commit that first wrote over it
        self.generation = self.clock = self.read = 0
        self.cache = {}         # live documents and queries' overlaid documents, by readTime and generation
        stamp = times.format(genesis)
        self.parts = json.dumps(f"{root}/{collection}/"), f'"createTime": "{stamp}", "updateTime": "{stamp}"'

    def now(self):
        """Never before the last commit, so a read without readTime sees it; and every later commit
        is stamped after it, so a read at it gives the same answer ever after."""
        with self.lock:
            self.read = max(times.now(), self.clock, self.read)
            return self.read

    def commit(self, writes):
        """Writes [((collection, id), fields or None to delete)] at one commit time; a write that
        changes nothing makes no version (Firestore keeps its updateTime). Returns the time."""
        with self.lock:
            commit = max(times.now(), self.clock + 1, self.read + 1)
            for path, fields in writes:
                versions = self.versions.setdefault(path, [])
                index = None if versions or path[0] != self.collection else self.votes.index(path[1])
                was = versions[-1] if versions else (self.genesis, self.votes.fields(index), self.genesis) \
                    if index is not None else (0, None, None)
                if fields == was[1]:
                    continue
                versions.append((commit, fields, commit if was[1] is None else was[2]))
                if index is not None:
                    self.first[index] = commit
                    self.replaced.setdefault(self.votes.kind(index), []).append((index, commit))
            self.clock = commit
            self.generation += 1
            return commit

    def live(self, collection, read_time):
        """{key of joke_id (None: none): [(id, version)]} of the overlaid documents live at
        read_time, so that a query of one joke looks at that joke's only."""
        signature = ("live", collection, read_time, self.generation)
        if signature not in self.cache:
            by_joke = {}
            for (where, ident), versions in self.versions.items():
                version = next((v for v in reversed(versions) if v[0] <= read_time), None)
                if where == collection and version is not None and version[1] is not None:
                    joke = version[1].get("joke_id")
                    by_joke.setdefault(joke and key(joke), []).append((ident, version))
            self.remember(signature, by_joke)
        return self.cache[signature]

    def remember(self, signature, value):
        if len(self.cache) >= 64:
            self.cache.clear()
        self.cache[signature] = value

    def text(self, collection, entry):
        """The REST Document's JSON of a query's entry: (key, vote) or (key, id, version)."""
        if len(entry) == 2:
            return self.votes.text(entry[1], *self.parts)
        _, ident, (commit, fields, created) = entry
        return json.dumps({"name": f"{self.root}/{collection}/{ident}", **({"fields": fields} if fields else {}),
                           "createTime": times.format(created), "updateTime": times.format(commit)},
                          ensure_ascii=False)


def _path(entry):
    path = entry.get("fieldPath") if isinstance(entry, dict) else None
    if not isinstance(path, str) or not path or "`" in path or "." in path:
        raise unsupported(f"the field reference {entry!r}")
    return path


class Query:
    def __init__(self, structured, db):
        if not isinstance(structured, dict):
            raise Refused(INVALID)
        extra = set(structured) - {"from", "where", "orderBy", "startAt", "limit"}
        if extra:
            raise unsupported(", ".join(sorted(extra)))
        sources = structured.get("from")
        if not (isinstance(sources, list) and len(sources) == 1 and isinstance(sources[0], dict)
                and isinstance(sources[0].get("collectionId"), str) and not sources[0].get("allDescendants")):
            raise unsupported("a query that is not over one top-level collection")
        self.collection, self.db, self.root, self.filters = sources[0]["collectionId"], db, db.root_key, []
        self.prefix = db.root_key + (self.collection,)
        self._where(structured.get("where"))
        self.order = []
        for entry in structured.get("orderBy", []):
            if not isinstance(entry, dict) or entry.get("direction", "ASCENDING") != "ASCENDING":
                raise unsupported("orderBy other than ASCENDING")
            self.order.append(_path(entry.get("field")))
        self.order += sorted({p for p, op, _ in self.filters if op != "EQUAL"} - set(self.order) - {"__name__"})
        self.order += [] if "__name__" in self.order else ["__name__"]
        if self.order[-1] != "__name__":
            raise Refused("order by clause cannot contain more fields after the key")
        cursor, self.start = structured.get("startAt"), None
        if cursor is not None:
            values = cursor.get("values", []) if isinstance(cursor, dict) else None
            if not isinstance(values, list) or len(values) > len(self.order):
                raise Refused("Too many cursor values specified.")
            self.start = tuple(map(self._key, self.order, values)), bool(cursor.get("before"))
        self.limit = structured.get("limit")
        if self.limit is not None and (type(self.limit) is not int or self.limit < 0):
            raise Refused(INVALID)

    def _where(self, where):
        if where is None:
            return
        if not isinstance(where, dict) or len(where) != 1:
            raise Refused(INVALID)
        if "compositeFilter" in where:
            if where["compositeFilter"].get("op") != "AND":
                raise unsupported(f"compositeFilter {where['compositeFilter'].get('op')}")
            for inner in where["compositeFilter"].get("filters", []):
                self._where(inner)
            return
        one = where.get("fieldFilter")
        if not isinstance(one, dict):
            raise unsupported(next(iter(where)))
        path, op = _path(one.get("field")), one.get("op")
        if op not in OPS:
            raise unsupported(f"the filter operator {op}")
        self.filters.append((path, op, self._key(path, one.get("value"))))

    def _key(self, path, value):
        try:
            found = key(value)
        except (AttributeError, TypeError, ValueError):
            raise Refused(INVALID) from None
        if path == "__name__" and (found[0] != REFERENCE or found[1][:len(self.root)] != self.root):
            raise unsupported(f"a __name__ value that is not a document of {'/'.join(self.root)}")
        return found

    def _order_key(self, name, fields):
        """The document's place in the query's order, or None when it lacks an ordered field."""
        values = [fields.get(path) for path in self.order[:-1]]
        return None if None in values else tuple(map(key, values)) + (name,)

    # -- the synthetic votes

    def _span(self, read_time, ordered):
        """(low, high, filters left): the synthetic votes the query can return are those of indexes
        [low, high) that pass the filters left; None when there are none. Only an order in which
        the votes are in index order is served (a COUNT without a cursor needs none)."""
        votes, low, high, left, bounds = self.db.votes, 0, self.db.votes.n, [], []
        if self.collection != self.db.collection or read_time < self.db.genesis or not votes.n:
            return None
        if ordered and tuple(self.order) not in (("__name__",), ("timestamp", "__name__")):
            raise unsupported(f"ordering by {', '.join(self.order)} over the synthetic {self.collection}")
        place = {"__name__": lambda i: (REFERENCE, self.prefix + (votes.id(i),)),
                 "timestamp": lambda i: (TIMESTAMP, votes.timestamp(i))}
        for path, op, want in self.filters:
            if path == "timestamp" and want[0] != TIMESTAMP:
                return None
            (bounds if path in place else left).append((path, op, want))
        bounds = [(place[path], op, want) for path, op, want in bounds]
        if self.start is not None:
            edge, before = self.start
            where = [place[p] for p in self.order[:len(edge)]]
            bounds.append((lambda i: tuple(w(i) for w in where), "GREATER_THAN_OR_EQUAL" if before else "GREATER_THAN",
                           edge))
        for at, op, edge in bounds:
            if op not in ("LESS_THAN", "LESS_THAN_OR_EQUAL"):
                low = first(low, high, lambda i: at(i) > edge if op == "GREATER_THAN" else at(i) >= edge)
            if op not in ("GREATER_THAN", "GREATER_THAN_OR_EQUAL"):
                high = first(low, high, lambda i: at(i) >= edge if op == "LESS_THAN" else at(i) > edge)
        return (low, high, left) if low < high else None

    def _votes(self, read_time, low, high, left):
        """The synthetic votes of [low, high) not written over by read_time that pass `left`."""
        votes, written = self.db.votes, self.db.first
        for i in range(low, high):
            if written.get(i, read_time + 1) > read_time and (not left or passes(left, None, votes.fields(i))):
                yield votes.vote(i)

    def _overlay(self, read_time):
        """[(order key, id, version)] of the overlaid documents live at read_time that pass the
        filters, in order, from the cursor on (the pages of one query share the work)."""
        signature = (self.collection, read_time, tuple(self.order), tuple(self.filters), self.db.generation)
        if signature not in self.db.cache:
            found, live = [], self.db.live(self.collection, read_time)
            joke = next((want for path, op, want in self.filters if path == "joke_id" and op == "EQUAL"), None)
            for ident, version in itertools.chain(*live.values()) if joke is None else live.get(joke, ()):
                name = (REFERENCE, self.prefix + (ident,))
                place = self._order_key(name, version[1])
                if place is not None and passes(self.filters, name, version[1]):
                    found.append((place, ident, version))
            self.db.remember(signature, sorted(found, key=operator.itemgetter(0)))
        found = self.db.cache[signature]
        if self.start is None:
            return found
        edge, before = self.start
        cut = bisect.bisect_left if before else bisect.bisect_right
        return found[cut(found, edge, key=lambda entry: entry[0][:len(edge)]):]

    def texts(self, read_time):
        """The query's documents at read_time, in order, as JSON texts."""
        with self.db.lock:
            span = self._span(read_time, ordered=True)
            overlay = self._overlay(read_time)
        votes = () if span is None else self._votes(read_time, *span)
        if overlay:
            by_time = self.order[0] == "timestamp"

            def place(vote):
                name = (REFERENCE, self.prefix + (vote[0],))
                return ((TIMESTAMP, vote[5]), name) if by_time else (name,)
            entries = heapq.merge(((place(v), v) for v in votes), overlay, key=operator.itemgetter(0))
        else:
            entries = ((None, v) for v in votes)
        return [self.db.text(self.collection, e) for e in itertools.islice(entries, self.limit)]

    def count(self, read_time, scan=False):
        """How many documents the query has at read_time, limit applied. `scan`: the synthetic
        votes counted one by one even where their index of kinds could."""
        with self.db.lock:
            span = self._span(read_time, ordered=self.start is not None)
            counted = len(self._overlay(read_time))
            if span is not None and not scan and all(path in ("joke_id", "rating") for path, _, _ in span[2]):
                counted += self._by_kind(read_time, *span)
                span = None
        if span is not None:
            counted += sum(1 for _ in self._votes(read_time, *span))
        return counted if self.limit is None else min(counted, self.limit)

    def _by_kind(self, read_time, low, high, left):
        """The synthetic votes of [low, high) that pass filters on joke_id and rating alone (a
        vote's kind decides them), less those written over by read_time."""
        joke = next((want[1] for path, op, want in left if path == "joke_id" and op == "EQUAL" and want[0] == STRING),
                    None)
        kinds = None if joke is None else [(joke, rating) for rating in range(1, 6)]

        def passing(kind):
            return passes(left, None, {"joke_id": {"stringValue": kind[0]}, "rating": {"integerValue": str(kind[1])}})

        counted = high - low
        if left:
            index = self.db.votes.kinds()
            counted = sum(bisect.bisect_left(index[k], high) - bisect.bisect_left(index[k], low)
                          for k in kinds or index if k in index and passing(k))
        for kind in kinds or list(self.db.replaced):
            if passing(kind):
                counted -= sum(low <= i < high and since <= read_time for i, since in self.db.replaced.get(kind, ()))
        return counted
