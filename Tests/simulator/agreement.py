"""What test_agreement.py does to both Firestores alike: the writes, the cases, and the one
normalisation of their answers. An answer is compared whole (HTTP status, every key, every value)
but for the times each server stamps by its own clock, which become tokens that keep their
presence, their form and their relations: a time in Firestore's form (UTC, Z, 0, 3 or 6
digits) becomes <time>; the readTime the request asked for, <readTime asked>; an updateTime equal
to its document's createTime, <createTime>. A time in any other form stays as it is, so differs."""
import re

TIME = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{3}|\.\d{6})?Z")
STAMPS = ("readTime", "createTime", "updateTime", "commitTime")


def normalised(answer, asked=None):
    def stamp(value):
        if not isinstance(value, str) or not TIME.fullmatch(value):
            return value
        return "<readTime asked>" if value == asked else "<time>"

    def walk(item):
        if isinstance(item, (list, tuple)):
            return [walk(v) for v in item]
        if not isinstance(item, dict):
            return item
        out = {k: stamp(v) if k in STAMPS else walk(v) for k, v in item.items()}
        if "createTime" in item and item.get("updateTime") == item["createTime"]:
            out["updateTime"] = "<createTime>"
        return out

    return walk(answer)


def vote(joke, rating, device, week, timestamp):
    return {"joke_id": {"stringValue": joke}, "rating": {"integerValue": str(rating)},
            "device_id": {"stringValue": device}, "week_id": {"stringValue": week},
            "timestamp": timestamp if isinstance(timestamp, dict) else {"timestampValue": timestamp}}


def first_writes(votes, stamp):
    """Batch A: a re-rate, a delete, a new vote among the synthetic ids, and three documents whose
    timestamp is missing, a string, or an integer (where Firestore's type ordering shows)."""
    late = stamp(votes.end + 1_500_000)
    return [(f"rating_events/{votes.id(10)}", vote("re-rated-joke", 2, "device-a", "2026-W01", late)),
            (f"rating_events/{votes.id(20)}", None),
            ("rating_events/00002-new-vote", vote("new-joke", 5, "device-b", "2026-W02", stamp(votes.end + 2_000))),
            ("rating_events/00003-no-time", {"joke_id": {"stringValue": "x"}, "rating": {"integerValue": "5"}}),
            ("rating_events/00004-string-time", vote("x", 1, "d", "w", {"stringValue": "yesterday"})),
            ("rating_events/00005-number-time", vote("x", 1, "d", "w", {"integerValue": "12"}))]


def second_writes(votes, stamp):
    """Batch B: the new vote re-rated, another delete, the odd documents deleted, a vote stamped
    before the filter's time, and a write of a vote as it already is (no new version)."""
    return [("rating_events/00002-new-vote", vote("new-joke", 1, "device-b", "2026-W02", stamp(votes.end + 9_000_000))),
            (f"rating_events/{votes.id(30)}", None),
            ("rating_events/00003-no-time", None),
            ("rating_events/00004-string-time", None),
            ("rating_events/00005-number-time", None),
            ("rating_events/zzzz-late-vote", vote("late-joke", 5, "device-c", "2025-W01", stamp(votes.start + 1))),
            (f"rating_events/{votes.id(40)}", votes.fields(40))]


def order(*paths):
    return [{"field": {"fieldPath": p}, "direction": "ASCENDING"} for p in paths]


def since(when):
    return {"fieldFilter": {"field": {"fieldPath": "timestamp"}, "op": "GREATER_THAN_OR_EQUAL",
                            "value": {"timestampValue": when}}}


def name(op, full):
    return {"fieldFilter": {"field": {"fieldPath": "__name__"}, "op": op, "value": {"referenceValue": full}}}


def both(*filters):
    return {"compositeFilter": {"op": "AND", "filters": list(filters)}}


def query(where=None, by=None, limit=None, collection="rating_events", **more):
    out = {"from": [{"collectionId": collection}]}
    if where is not None:
        out["where"] = where
    if by is not None:
        out["orderBy"] = order(*by)
    if limit is not None:
        out["limit"] = limit
    out.update(more)
    return out


def cursor_of(document, paths):
    values = []
    for path in paths:
        values.append({"referenceValue": document["name"]} if path == "__name__" else document["fields"][path])
    return values


def chain(client, where, by, limit, read_time=None):
    """A whole read a page at a time, as the night reads: each page after the last document of
    the one before, at the first page's readTime. [(status, normalised answer)] per page."""
    pages, cursor = [], None
    while True:
        structured = query(where, by, limit)
        if cursor is not None:
            structured["startAt"] = {"values": cursor, "before": False}
        status, _, answer = client.query(structured, read_time)
        pages.append((status, normalised(answer, read_time)))
        if status != 200:
            return pages
        documents = [item["document"] for item in answer if "document" in item]
        read_time = read_time or answer[0]["readTime"]
        if len(documents) < limit:
            return pages
        cursor = cursor_of(documents[-1], by)


def documents_in(answer):
    """How many documents a (normalised) answer, or a chain of them, holds."""
    if isinstance(answer, dict):
        return ("document" in answer) + sum(documents_in(v) for v in answer.values() if isinstance(v, (list, tuple)))
    if isinstance(answer, (list, tuple)):
        return sum(documents_in(v) for v in answer)
    return 0
