"""Firestore's REST calls the night makes, over transport.py: queries and COUNTs at one readTime, batchGet, commit."""
import itertools
import json
import urllib.parse

from . import auth, parallel, ranges, stop
from .statuses import UNAVAILABLE, Failure
from .stream import Broken, conjuncts, field_filter, read_count, read_page, value_key
from .transport import Refused, Retry, Transport

PAGE_SIZE = 1000    # documents a page asks for (answers stay well under Firestore's size limits)
GOOGLE = "https://firestore.googleapis.com/v1"


class Firestore:
    """One database's calls at `api` (an emulator's: http://HOST:PORT/v1); the step's try sets .transport.deadline.
    A fake in memory stands in with database_path, transport.deadline and the calls it answers."""

    def __init__(self, project, *, database="(default)", api=GOOGLE, credentials=None, retry=Retry(), timeout=60.0,
                 say=print):
        self.api, self.database_path = api.rstrip("/"), f"projects/{project}/databases/{database}"
        self.transport = Transport(retry, timeout, credentials, lambda m: say(auth.redact(m)), None, stop.STOP)

    @classmethod
    def from_settings(cls, settings, say):
        host = settings.emulator_host
        return cls(settings.firestore_project, database=settings.firestore_database, say=say,
                   api=f"http://{host}/v1" if host else GOOGLE,
                   credentials=None if host else auth.Credentials(settings.firestore_token_command))

    def call(self, method, suffix, body=None, final=()):
        url = f"{self.api}/{urllib.parse.quote(self.database_path + suffix, safe='/():')}"
        return self.transport.call(method, url, body, final)

    def get_document(self, path):
        return self.batch_get(path)[0]

    def batch_get(self, path):
        """(the document at `path` (collection/id) or None, the readTime Firestore read it at: its own time)."""
        name = f"{self.database_path}/documents/{path}"
        answer = self.call("POST", "/documents:batchGet", {"documents": [name]})
        item = answer[0] if isinstance(answer, list) and len(answer) == 1 and isinstance(answer[0], dict) else {}
        found = item.get("found")
        if not isinstance(item.get("readTime"), str) or (item.get("missing") != name if found is None else not (
                isinstance(found, dict) and found.get("name") == name and isinstance(found.get("updateTime"), str))):
            raise Broken(f"batchGet of {name}: not one document's answer: {json.dumps(answer)[:200]}")
        return found, item["readTime"]

    def write(self, path, fields, update_time=None, exists=False):
        """A commit's write of the whole document, on its `update_time`, or else on whether it `exists`."""
        return {"update": {"name": f"{self.database_path}/documents/{path}", "fields": fields},
                "currentDocument": {"exists": exists} if update_time is None else {"updateTime": update_time}}

    def commit(self, writes):
        """`writes` all or none; Refused (400, 409) when a precondition fails (a retry's first try applied, too)."""
        return self.call("POST", "/documents:commit", {"writes": list(writes)})


class Query:
    """A query at one readTime (None: Firestore's now) of ids in [low, high), ordered by `order_by`, __name__ last."""

    def __init__(self, firestore, collection, where=None, order_by=("__name__",), read_time=None,
                 low=None, high=None, page_size=PAGE_SIZE):
        self.firestore, self.order_by, self.read_time = firestore, order_by, read_time
        self.page_size, self.low, self.high = page_size, low, high
        self.prefix = f"{firestore.database_path}/documents/{collection}/"
        filters = conjuncts(where) + [field_filter("__name__", op, {"referenceValue": self.prefix + name})
                                      for op, name in (("GREATER_THAN_OR_EQUAL", low), ("LESS_THAN", high)) if name]
        where = filters[0] if len(filters) == 1 else {"compositeFilter": {"op": "AND", "filters": filters}}
        self.query = {"from": [{"collectionId": collection}], **({"where": where} if filters else {})}

    def ask(self, method, key, query, final=()):
        body = {key: query, **({"readTime": self.read_time} if self.read_time is not None else {})}
        return self.firestore.call("POST", f"/documents:{method}", body, final)

    def pages(self):
        """Each page's documents once whole; Broken for a document out of place or out of order as well."""
        order, start, last = [{"field": {"fieldPath": p}, "direction": "ASCENDING"} for p in self.order_by], {}, None
        for number in itertools.count(1):
            query, where = dict(self.query, limit=self.page_size, orderBy=order, **start), f"runQuery page {number}"
            documents, read_time = read_page(self.ask("runQuery", "structuredQuery", query), where)
            self.read_time = self.read_time or read_time
            for document in documents:
                name, values = document["name"], [document.get("fields", {}).get(p) for p in self.order_by[:-1]]
                id_ = name[len(self.prefix):]
                if not name.startswith(self.prefix) or "/" in id_ or (self.low and id_ < self.low) or (
                        self.high and id_ >= self.high):
                    raise Broken(f"{where}: {name} is not a document of {self.prefix[:-1]} in the range asked for")
                key = (*map(value_key, values), id_)
                if last is not None and not key > last:
                    raise Broken(f"{where}: {name} is not after the document before it (a repeat or a step back)")
                last, start = key, {"startAt": {"values": values + [{"referenceValue": name}], "before": False}}
            yield documents
            if len(documents) < self.page_size:
                return

    def count(self):
        """Firestore's count of the query's documents at its readTime (or now, which it becomes)."""
        aggregation = {"structuredQuery": self.query, "aggregations": [{"alias": "documents", "count": {}}]}
        answer = self.ask("runAggregationQuery", "structuredAggregationQuery", aggregation, ("DEADLINE_EXCEEDED",))
        counted, read_time = read_count(answer, "runAggregationQuery")
        self.read_time = self.read_time or read_time
        return counted


def now(firestore, collection):
    """The server's now, from a query of limit 0 (a document asked for here would be billed again by the read)."""
    query = Query(firestore, collection, page_size=0)
    next(query.pages())
    return query.read_time


def count(firestore, collection, read_time, low, high, workers, say, where=None):
    """[(low, high, count)] covering [low, high): one COUNT, or, past Firestore's deadline, its children's."""
    try:
        return [(low, high, Query(firestore, collection, where, read_time=read_time, low=low, high=high).count())]
    except Refused as refused:
        if refused.reason != "DEADLINE_EXCEEDED":
            raise
    children = ranges.split(low, high)
    if not children:
        raise Failure(UNAVAILABLE, f"Firestore cannot COUNT {ranges.describe(low, high)} in time, nor can it be cut")
    say(f"the COUNT of {ranges.describe(low, high)} did not finish within Firestore's deadline: "
        f"counting its {len(children)} parts")
    parts = parallel.each(lambda r: count(firestore, collection, read_time, *r, workers, say, where), children, workers)
    return [part for counted in parts for part in counted]
