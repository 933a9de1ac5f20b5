"""A structuredQuery run against a Database at a readTime, as Firestore runs it: one top-level
collection; fieldFilters (<, <=, >, >=, ==) joined by AND; ascending orderBy, to which Firestore
adds the inequality fields not named and then __name__; startAt/endAt cursors; limit.

The synthetic votes are never scanned to find a place: their names and timestamps both grow with
their index, so a filter or a cursor on __name__ or timestamp is an index bound found by
bisection, a page is computed from its first index, and a COUNT is arithmetic (less the votes the
overlay replaces); one that also filters on joke_id and rating alone (the board's proof) bisects
each (joke_id, rating)'s indexes (Votes.kinds). Only a filter on another field makes a scan. What
the simulator does not do is refused with 400 INVALID_ARGUMENT saying so, never answered wrong.
Composite indexes are not modelled: a query production would refuse for want of one is answered."""
import bisect
import json

from .synthetic import first
from .values import REFERENCE, STRING, TIMESTAMP, Invalid, field, key, matches, normalise, reference_path

RANGE = ("LESS_THAN", "LESS_THAN_OR_EQUAL", "GREATER_THAN", "GREATER_THAN_OR_EQUAL")
INDEXED = ("__name__", "timestamp")     # the synthetic votes' fields that grow with the index
CACHED = 64


class QueryError(Exception):
    def __init__(self, message, status="INVALID_ARGUMENT", code=400):
        super().__init__(message)
        self.status, self.code = status, code


def unsupported(what):
    return QueryError(f"The simulator does not support {what}.")


def _value(value):
    try:
        return normalise(value)
    except Invalid as invalid:
        raise QueryError(str(invalid)) from None


def _path(entry):
    path = entry.get("fieldPath") if isinstance(entry, dict) else None
    if not isinstance(path, str) or not path or "`" in path:
        raise unsupported(f"the field reference {entry!r}")
    return path


class Query:
    def __init__(self, structured, root):
        if not isinstance(structured, dict):
            raise QueryError("Payload isn't valid for request.")
        extra = set(structured) - {"from", "where", "orderBy", "startAt", "endAt", "limit"}
        if extra:
            raise unsupported(", ".join(sorted(extra)))
        self.root = root
        sources = structured.get("from")
        if not (isinstance(sources, list) and len(sources) == 1 and isinstance(sources[0], dict)
                and isinstance(sources[0].get("collectionId"), str) and not sources[0].get("allDescendants")):
            raise unsupported("a query that is not over one top-level collection")
        self.collection = sources[0]["collectionId"]
        self.filters = []
        if "where" in structured:
            self._where(structured["where"])
        self.order = []
        for entry in structured.get("orderBy", []):
            if not isinstance(entry, dict) or entry.get("direction", "ASCENDING") not in ("ASCENDING",
                                                                                        "DIRECTION_UNSPECIFIED"):
                raise unsupported("orderBy other than ASCENDING")
            path = _path(entry.get("field"))
            if path not in self.order:
                self.order.append(path)
        self.order += sorted({p for p, op, _ in self.filters if op in RANGE} - set(self.order) - {"__name__"})
        if "__name__" not in self.order:
            self.order.append("__name__")
        if self.order.index("__name__") != len(self.order) - 1:
            raise QueryError("order by clause cannot contain more fields after the key")
        self.start = self._cursor(structured.get("startAt"))
        self.end = self._cursor(structured.get("endAt"))
        self.limit = structured.get("limit")
        if isinstance(self.limit, dict):
            self.limit = self.limit.get("value")
        if self.limit is not None and (not isinstance(self.limit, int) or isinstance(self.limit, bool)
                                       or self.limit < 0):
            raise QueryError("Payload isn't valid for request.")

    def _where(self, where):
        if not isinstance(where, dict) or len(where) != 1:
            raise QueryError("Payload isn't valid for request.")
        if "compositeFilter" in where:
            composite = where["compositeFilter"]
            if composite.get("op") != "AND":
                raise unsupported(f"compositeFilter {composite.get('op')}")
            for inner in composite.get("filters", []):
                self._where(inner)
            return
        if "fieldFilter" not in where:
            raise unsupported(next(iter(where)))
        one = where["fieldFilter"]
        path, op = _path(one.get("field")), one.get("op")
        if op not in RANGE + ("EQUAL",):
            raise unsupported(f"the filter operator {op}")
        value = _value(one.get("value"))
        if path == "__name__":
            value = {"referenceValue": self._reference(value, "__key__ filter value must be a Key")}
        self.filters.append((path, op, key(value)))

    def _reference(self, value, refusal):
        name = value.get("referenceValue")
        if not isinstance(name, str):
            raise QueryError(refusal)
        if not name.startswith("projects/"):
            raise QueryError(f'Resource name "{name}" lacks "projects" at index 0.')
        if not name.startswith(self.root + "/"):
            raise unsupported(f"a reference outside this database: {name}")
        return name

    def _cursor(self, cursor):
        if cursor is None:
            return None
        items = cursor.get("values", []) if isinstance(cursor, dict) else None
        if not isinstance(items, list) or len(items) > len(self.order):
            raise QueryError("Too many cursor values specified.")
        keys = []
        for path, value in zip(self.order, items):
            value = _value(value)
            if path == "__name__":
                value = {"referenceValue": self._reference(value, "Cursor __key__ value is not a document reference.")}
            keys.append(key(value))
        return tuple(keys), bool(cursor.get("before", False))

    # -- one document

    def order_key(self, name, fields):
        """The document's place in the query's order, or None when it lacks an ordered field."""
        out = []
        for path in self.order:
            if path == "__name__":
                out.append((REFERENCE, reference_path(name)))
            else:
                value = field(fields, path)
                if value is None:
                    return None
                out.append(key(value))
        return tuple(out)

    def matches(self, name, fields, filters=None):
        for path, op, want in self.filters if filters is None else filters:
            value = (REFERENCE, reference_path(name)) if path == "__name__" else field(fields, path)
            if not matches(op, value if path == "__name__" or value is None else key(value), want):
                return False
        return True

    # -- the synthetic votes

    def _base(self, db, read_time, ordered=True):
        """(low, high, filters left to test on each vote): the synthetic votes the query can
        return are those of indexes [low, high) that pass them; None when there are none. Only
        an order in which the votes are in index order is served (not needed by a COUNT)."""
        if not db.base_visible(self.collection, read_time):
            return None
        if ordered and tuple(self.order) not in (("__name__",), ("timestamp", "__name__")):
            raise unsupported(f"ordering by {', '.join(self.order)} over the synthetic {self.collection}")
        votes, prefix = db.votes, reference_path(f"{db.root}/{self.collection}")
        low, high, left = 0, votes.n, []

        def place(path):
            if path == "__name__":
                return lambda i: (REFERENCE, prefix + (votes.id(i),))
            return lambda i: (TIMESTAMP, votes.timestamp(i))

        def bound(where, op, edge):
            nonlocal low, high
            if op in ("GREATER_THAN_OR_EQUAL", "EQUAL"):
                low = max(low, first(low, high, lambda i: where(i) >= edge))
            if op == "GREATER_THAN":
                low = max(low, first(low, high, lambda i: where(i) > edge))
            if op == "LESS_THAN":
                high = min(high, first(low, high, lambda i: where(i) >= edge))
            if op in ("LESS_THAN_OR_EQUAL", "EQUAL"):
                high = min(high, first(low, high, lambda i: where(i) > edge))

        for path, op, want in self.filters:
            if path in INDEXED:
                if path == "timestamp" and want[0] != TIMESTAMP:
                    return None
                bound(place(path), op, want)
            else:
                left.append((path, op, want))
        for cursor, ops in ((self.start, ("GREATER_THAN_OR_EQUAL", "GREATER_THAN")),
                            (self.end, ("LESS_THAN", "LESS_THAN_OR_EQUAL"))):
            if cursor is not None:
                edge, before = cursor
                where = [place(p) for p in self.order[:len(edge)]]
                bound(lambda i: tuple(w(i) for w in where), ops[0] if before else ops[1], edge)
        return (low, high, left) if low < high else None

    def _base_stream(self, db, read_time, base):
        """The votes of indexes [low, high) the overlay does not replace that pass the filters
        left, as synthetic.Votes.vote tuples."""
        low, high, left = base
        votes, collection = db.votes, self.collection
        for i in range(low, high):
            vote = votes.vote(i)
            if db.overridden((collection, vote[0]), read_time):
                continue
            if left and not self.matches(f"{db.root}/{collection}/{vote[0]}", votes.fields_of(vote), left):
                continue
            yield vote

    # -- the overlay

    def _overlay(self, db, read_time):
        """[(order key, path, state)] of the overlaid documents live at read_time that pass the
        filters, in order; cursors not applied."""
        signature = (self.collection, read_time, tuple(self.order), tuple(self.filters), db.generation)
        cache = db.query_cache
        if signature not in cache:
            found = []
            live = db.live(self.collection, read_time)
            joke = next((want for path, op, want in self.filters if path == "joke_id" and op == "EQUAL"), None)
            for path, version in [d for group in live.values() for d in group] if joke is None else live.get(joke, ()):
                name = db.name(path)
                order_key = self.order_key(name, version.fields)
                if order_key is not None and self.matches(name, version.fields):
                    found.append((order_key, path, (version.fields, version.created, version.commit)))
            found.sort(key=lambda entry: entry[0])
            if len(cache) >= CACHED:
                cache.clear()
            cache[signature] = found
        found = cache[signature]
        low, high = 0, len(found)
        if self.start is not None:
            edge, before = self.start
            cut = bisect.bisect_left if before else bisect.bisect_right
            low = cut(found, edge, key=lambda entry: entry[0][:len(edge)])
        if self.end is not None:
            edge, before = self.end
            cut = bisect.bisect_left if before else bisect.bisect_right
            high = cut(found, edge, key=lambda entry: entry[0][:len(edge)])
        return found[low:max(low, high)]

    # -- answers

    def _entries(self, db, read_time):
        """The query's documents at read_time, in order: ("vote", Votes.vote tuple) for a
        synthetic one, ("overlay", path, state) for a written one."""
        with db.lock:
            base = self._base(db, read_time)
            overlay = self._overlay(db, read_time)
        limit = float("inf") if self.limit is None else self.limit
        out, j = [], 0
        if base is not None and limit > 0:
            prefix = reference_path(f"{db.root}/{self.collection}")
            by_time = self.order[0] == "timestamp"
            for vote in self._base_stream(db, read_time, base):
                if j < len(overlay):
                    name = (REFERENCE, prefix + (vote[0],))
                    place = ((TIMESTAMP, vote[5]), name) if by_time else (name,)
                    while j < len(overlay) and overlay[j][0] < place and len(out) < limit:
                        out.append(("overlay",) + overlay[j][1:])
                        j += 1
                if len(out) >= limit:
                    break
                out.append(("vote", vote))
                if len(out) >= limit:
                    break
        while j < len(overlay) and len(out) < limit:
            out.append(("overlay",) + overlay[j][1:])
            j += 1
        return out

    def documents(self, db, read_time):
        """The query's documents at read_time, in order, as REST Documents."""
        return [db.vote_document(e[1]) if e[0] == "vote" else db.document(e[1], e[2])
                for e in self._entries(db, read_time)]

    def texts(self, db, read_time):
        """The same as JSON texts (json.dumps of each), the votes' made faster without a dict."""
        return [db.vote_text(e[1]) if e[0] == "vote" else json.dumps(db.document(e[1], e[2]), ensure_ascii=False)
                for e in self._entries(db, read_time)]

    def _by_kind(self, db, read_time, base):
        """How many synthetic votes of indexes [low, high) the overlay does not replace pass the
        filters left, when those are on joke_id and rating alone (a vote's (joke_id, rating)
        decides them: the board's proof): bisections of Votes.kinds(). None for other filters."""
        low, high, left = base
        if any(path not in ("joke_id", "rating") for path, _, _ in left):
            return None
        kinds, replaced = db.votes.kinds(), db.replaced(self.collection)
        joke = next((want[1] for path, op, want in left if path == "joke_id" and op == "EQUAL" and want[0] == STRING),
                    None)
        counted = 0
        for kind in kinds if joke is None else [(joke, r) for r in range(1, 6) if (joke, r) in kinds]:
            if self.matches("", {"joke_id": {"stringValue": kind[0]}, "rating": {"integerValue": str(kind[1])}}, left):
                indexes = kinds[kind]
                counted += bisect.bisect_left(indexes, high) - bisect.bisect_left(indexes, low)
                counted -= sum(low <= i < high and since <= read_time for i, since in replaced.get(kind, ()))
        return counted

    def count(self, db, read_time, up_to=None, scan=False):
        """How many documents the query has at read_time (with limit, and up_to, applied).
        `scan`: the synthetic votes counted one by one even where their index of kinds could."""
        with db.lock:
            base = self._base(db, read_time, ordered=self.start is not None or self.end is not None)
            counted = len(self._overlay(db, read_time))
            by_kind = None if base is None or not base[2] or scan else self._by_kind(db, read_time, base)
            if by_kind is not None:
                counted += by_kind
                base = None
            elif base is not None and not base[2]:
                low, high, _ = base
                counted += high - low
                for path in db.overlay_paths(self.collection):
                    index = db.base_index.get(path)
                    if index is not None and low <= index < high and db.overridden(path, read_time):
                        counted -= 1
                base = None
        if base is not None:
            counted += sum(1 for _ in self._base_stream(db, read_time, base))
        for most in (self.limit, up_to):
            if most is not None:
                counted = min(counted, most)
        return counted
