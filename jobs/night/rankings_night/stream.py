"""Firestore's streamed answers (JSON arrays of items, `done` on the last) judged whole, and its order of values."""
import json

from .snapshot import parse_time
from .statuses import UNAVAILABLE, Failure


class Broken(Failure):
    """Firestore's answer is not a whole, well-formed stream: the night cannot be proven whole."""

    def __init__(self, message):
        super().__init__(UNAVAILABLE, message)


def _whole(answer, where):
    """The readTime of a whole streamed answer (objects, the last alone marked done, one with a readTime), or Broken."""
    if not isinstance(answer, list):
        raise Broken(f"{where}: the answer is not a stream (a JSON array) but {json.dumps(answer)[:200]}")
    read_time = None
    for number, item in enumerate(answer, 1):
        if not isinstance(item, dict):
            raise Broken(f"{where}: item {number} is not an object but {json.dumps(item)[:100]}")
        if number > 1 and answer[number - 2].get("done") is True:
            raise Broken(f"{where}: item {number} follows the item marked done")
        if "error" in item:
            error = item["error"].get("message", item["error"]) if isinstance(item["error"], dict) else item["error"]
            raise Broken(f"{where}: Firestore stopped the stream at item {number} with an error: {error}")
        if not isinstance(item.get("readTime", ""), str):
            raise Broken(f"{where}: item {number}'s readTime is not a string")
        read_time = read_time or item.get("readTime")
    if not answer or answer[-1].get("done") is not True:
        raise Broken(f"{where}: the stream ends without its item marked done ({len(answer)} items): cut short")
    if read_time is None:
        raise Broken(f"{where}: the stream holds no readTime ({len(answer)} items): not Firestore's whole answer")
    return read_time


def read_page(answer, where):
    """(documents, readTime) of one whole runQuery answer, or Broken."""
    read_time, documents = _whole(answer, where), [item["document"] for item in answer if "document" in item]
    if not all(isinstance(d, dict) and isinstance(d.get("name"), str) for d in documents):
        raise Broken(f"{where}: an item holds a document without a name")
    return documents, read_time


def read_count(answer, where):
    """(count, readTime) of one whole runAggregationQuery answer with the alias `documents`."""
    read_time, results = _whole(answer, where), [item["result"] for item in answer if "result" in item]
    if len(results) != 1:
        raise Broken(f"{where}: {len(results)} counts in the answer, not 1")
    try:
        return int(results[0]["aggregateFields"]["documents"]["integerValue"]), read_time
    except (KeyError, TypeError, ValueError):
        raise Broken(f"{where}: the answer holds no integer count") from None


def field_filter(path, op, value):
    return {"fieldFilter": {"field": {"fieldPath": path}, "op": op, "value": value}}


def conjuncts(where):
    """The REST Filters an AND joins (a filter alone: itself; None: none)."""
    composite = (where or {}).get("compositeFilter", {})
    return list(composite["filters"]) if composite.get("op") == "AND" else [where] if where else []


_KEYS = {"nullValue": (0, lambda v: 0), "booleanValue": (1, bool), "integerValue": (2, int), "doubleValue": (2, float),
         "timestampValue": (3, parse_time), "stringValue": (4, str), "referenceValue": (6, str)}


def value_key(value):
    """A key that sorts as Firestore sorts this Value (its type's rank, then the value); Broken for another type."""
    try:
        (kind, inner), = value.items()
        rank, key = _KEYS[kind]
        return rank, key(inner)
    except (AttributeError, KeyError, TypeError, ValueError):
        raise Broken(f"cannot order by the value {json.dumps(value)[:100]}") from None
