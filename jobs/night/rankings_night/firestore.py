"""Firestore's REST calls the night makes, over transport.py: a query read whole at one readTime a
page at a time, its COUNT at the same time, a document's GET and a commit whose write may carry a
precondition. A fake in memory can stand in with database_path, run_query, run_aggregation_query."""
import itertools
import urllib.parse

from . import auth, parallel, ranges
from .snapshot import format_time, parse_time
from .statuses import UNAVAILABLE, Failure
from .stream import Broken, conjuncts, field_value, read_count, read_page, value_key
from .transport import Anonymous, Refused, Retry, Transport

PAGE_SIZE = 1000    # documents a page asks for (answers stay well under Firestore's size limits)
GOOGLE = "https://firestore.googleapis.com/v1"


class Firestore:
    """One database's calls: Firestore(settings, say) as the night's settings give it, or
    Firestore.connect(project, ...). Its errors are transport.py's types."""

    def __init__(self, settings, say):
        api = f"http://{settings.emulator_host}/v1" if settings.emulator_host else settings.firestore_endpoint or GOOGLE
        self._open(settings.firestore_project, settings.firestore_database, api,
                   auth.Credentials(settings.firestore_token_command, emulator=bool(settings.emulator_host)),
                   Retry(attempts=settings.firestore_attempts, initial=settings.firestore_backoff_seconds,
                         maximum=max(Retry.maximum, settings.firestore_backoff_seconds)),
                   settings.firestore_timeout_seconds, None, say)

    @classmethod
    def connect(cls, project, *, database="(default)", api=GOOGLE, credentials=None, retry=Retry(), timeout=60.0,
                deadline=None, say=print):
        """`api`: the REST root (http://HOST:PORT/v1 for an emulator); `credentials`: auth.Credentials
        or None (no token); `timeout`: seconds a try may take; `deadline`: time.monotonic() after
        which no call goes on (settable later as .transport.deadline); `say`: retries logged."""
        firestore = cls.__new__(cls)
        firestore._open(project, database, api, credentials, retry, timeout, deadline, say)
        return firestore

    def _open(self, project, database, api, credentials, retry, timeout, deadline, say):
        self.api, self.database_path = api.rstrip("/"), f"projects/{project}/databases/{database}"
        self.credentials = credentials or Anonymous()
        self.transport = Transport(retry, timeout, self.credentials, lambda m: say(auth.redact(m)), deadline)

    def call(self, method, suffix, body=None, final=()):
        url = f"{self.api}/{urllib.parse.quote(self.database_path + suffix, safe='/():')}"
        try:
            return self.transport.call(method, url, body, final)
        except Refused as refused:
            hint = getattr(self.credentials, "forbidden_hint", lambda: "")()
            if refused.code == 403 and hint:
                refused.args = (f"{refused} ({hint})",)
            raise

    def run_query(self, body):
        return self.call("POST", "/documents:runQuery", body)

    def run_aggregation_query(self, body, final=()):
        return self.call("POST", "/documents:runAggregationQuery", body, final)

    def get(self, path):
        """The document at `path` (collection/id); Refused (404) when there is none."""
        return self.call("GET", f"/documents/{path}")

    def get_document(self, path):
        """The document at `path`, or None on 404 (a database that does not exist answers so too)."""
        try:
            return self.get(path)
        except Refused as refused:
            if refused.code == 404:
                return None
            raise

    def write(self, path, fields, update_time=None, exists=None):
        """A commit's write of the whole document, on its `update_time` or on whether it `exists`."""
        write = {"update": {"name": f"{self.database_path}/documents/{path}", "fields": fields}}
        if update_time is not None:
            write["currentDocument"] = {"updateTime": update_time}
        elif exists is not None:
            write["currentDocument"] = {"exists": bool(exists)}
        return write

    def commit(self, writes):
        """`writes` all or none. A precondition not met is Refused (400, 409), a retried commit whose
        first try was applied too: read back."""
        return self.call("POST", "/documents:commit", {"writes": list(writes)})


class Query:
    """A query over a collection at one readTime: `where`, names in [low, high), ordered by
    `order_by` (the last __name__, so that a cursor names one place)."""

    def __init__(self, firestore, collection, where=None, order_by=("__name__",), read_time=None,
                 low=None, high=None, page_size=PAGE_SIZE):
        assert order_by and order_by[-1] == "__name__"
        self.firestore, self.collection, self.order_by = firestore, collection, tuple(order_by)
        self.read_time, self.page_size, self.low, self.high = read_time, page_size, low, high
        self.prefix = f"{firestore.database_path}/documents/{collection}/"
        # An AND of filters joins the name range's as one AND (the board's proof counts so).
        filters = conjuncts(where)
        for op, name in (("GREATER_THAN_OR_EQUAL", low), ("LESS_THAN", high)):
            if name is not None:
                filters.append({"fieldFilter": {"field": {"fieldPath": "__name__"}, "op": op,
                                                "value": {"referenceValue": self.prefix + name}}})
        self.where = filters[0] if len(filters) == 1 else \
            {"compositeFilter": {"op": "AND", "filters": filters}} if filters else None

    def structured_query(self, **more):
        return {"from": [{"collectionId": self.collection}], **({"where": self.where} if self.where else {}), **more}

    def body(self, key, query):
        """A request of `query` at the query's readTime, once it has one."""
        return {key: query, **({"readTime": self.read_time} if self.read_time is not None else {})}

    def ordering(self, document):
        values = []
        for path in self.order_by[:-1]:
            values.append(field_value(document.get("fields", {}), path))
            if values[-1] is None:
                raise Broken(f"{document['name']} has no {path}, which the query orders by")
        values.append({"referenceValue": document["name"]})
        return values, tuple(value_key(v) for v in values[:-1]) + (document["name"][len(self.prefix):],)

    def pages(self):
        """Each page's documents once whole; Broken for an answer that is not Firestore's whole
        stream and for any document out of order or out of place."""
        cursor, last_key = None, None
        for number in itertools.count(1):
            query = self.structured_query(limit=self.page_size, orderBy=[
                {"field": {"fieldPath": p}, "direction": "ASCENDING"} for p in self.order_by])
            if cursor is not None:
                query["startAt"] = {"values": cursor, "before": False}
            body = self.body("structuredQuery", query)
            where = f"runQuery page {number}"
            documents, read_time = read_page(self.firestore.run_query(body), where)
            self.read_time = self.read_time or read_time
            if len(documents) > self.page_size:
                raise Broken(f"{where}: {len(documents)} documents, more than the limit of {self.page_size}")
            for document in documents:
                name = document["name"]
                id_ = name[len(self.prefix):]
                if not name.startswith(self.prefix) or "/" in id_:
                    raise Broken(f"{where}: {name} is not a document of {self.prefix[:-1]}")
                if (self.low is not None and id_ < self.low) or (self.high is not None and id_ >= self.high):
                    raise Broken(f"{where}: {name} is outside the range asked for")
                cursor, key = self.ordering(document)
                if last_key is not None and not key > last_key:
                    raise Broken(f"{where}: {name} does not come after the document before it "
                                 "(a repeat or a step back)")
                last_key = key
            yield documents
            if len(documents) < self.page_size:
                return

    def count(self):
        """Firestore's count of the query's documents at its readTime (or now, which it becomes)."""
        body = self.body("structuredAggregationQuery", {"structuredQuery": self.structured_query(),
                                                        "aggregations": [{"alias": "documents", "count": {}}]})
        counted, read_time = read_count(self.firestore.run_aggregation_query(body, final=("DEADLINE_EXCEEDED",)),
                                        "runAggregationQuery")
        self.read_time = self.read_time or read_time
        return counted


def now(firestore, collection, whole_minute=False):
    """The server's now, from a query of limit 0 (a document asked for here would be billed again
    by the read); `whole_minute` (what an export's snapshotTime takes): the minute before it."""
    query = Query(firestore, collection, page_size=0)
    next(query.pages())
    if whole_minute:
        return format_time(parse_time(query.read_time) // 60_000_000_000 * 60_000_000_000)
    return query.read_time


def count(firestore, collection, read_time, low, high, workers, say, where=None):
    """[(low, high, count)] covering [low, high) at read_time: one COUNT, or where Firestore cannot
    finish it in its deadline (DEADLINE_EXCEEDED), its children's, cut finer as needed."""
    try:
        return [(low, high, Query(firestore, collection, where=where, read_time=read_time, low=low,
                                  high=high).count())]
    except Refused as refused:
        if refused.reason != "DEADLINE_EXCEEDED":
            raise
    children = ranges.split(low, high)
    if not children:
        raise Failure(UNAVAILABLE, f"Firestore cannot COUNT {ranges.describe(low, high)} within its deadline, "
                                   "and the range cannot be cut finer")
    say(f"rest: the COUNT of {ranges.describe(low, high)} did not finish within Firestore's deadline: "
        f"counting its {len(children)} parts")
    parts = parallel.each(lambda r: count(firestore, collection, read_time, *r, workers, say, where), children,
                          workers)
    return [part for counted in parts for part in counted]
