"""Firestore's streamed answers judged whole or broken, and its order of values: pure functions.
A runQuery answer is a JSON array of items, `done` on the last; an `error` item when the query
failed part way (the HTTP status is 200 by then). An answer without its item marked done was cut short."""
import json
import re

from .statuses import UNAVAILABLE, Failure


class Broken(Failure):
    """Firestore's answer is not a whole, well-formed stream: the night cannot be proven whole."""

    def __init__(self, message):
        super().__init__(UNAVAILABLE, message)


def _items(answer, where):
    if not isinstance(answer, list):
        raise Broken(f"{where}: the answer is not a stream (a JSON array) but {json.dumps(answer)[:200]}")
    done = False
    for number, item in enumerate(answer, 1):
        if not isinstance(item, dict):
            raise Broken(f"{where}: item {number} is not an object but {json.dumps(item)[:100]}")
        if done:
            raise Broken(f"{where}: item {number} follows the item marked done")
        if "error" in item:
            error = item["error"]
            error = error.get("message", error) if isinstance(error, dict) else error
            raise Broken(f"{where}: Firestore stopped the stream at item {number} with an error: {error}")
        done = item.get("done") is True
        yield number, item
    if not done:
        raise Broken(f"{where}: the stream ends without its item marked done ({len(answer)} items): cut short")


def read_page(answer, where):
    """(documents, readTime) of one whole runQuery answer, or Broken."""
    documents, read_time = [], None
    for number, item in _items(answer, where):
        if "readTime" in item:
            if not isinstance(item["readTime"], str):
                raise Broken(f"{where}: item {number}'s readTime is not a string")
            read_time = read_time or item["readTime"]
        if "document" in item:
            document = item["document"]
            if not isinstance(document, dict) or not isinstance(document.get("name"), str):
                raise Broken(f"{where}: item {number} holds a document without a name")
            documents.append(document)
    if read_time is None:
        raise Broken(f"{where}: the stream holds no readTime ({len(answer)} items): not Firestore's whole answer")
    return documents, read_time


def read_count(answer, where):
    """(count, readTime) of one whole runAggregationQuery answer with the alias `documents`."""
    counts, read_time = [], None
    for number, item in _items(answer, where):
        read_time = read_time or item.get("readTime")
        if "result" in item:
            try:
                counts.append(int(item["result"]["aggregateFields"]["documents"]["integerValue"]))
            except (KeyError, TypeError, ValueError):
                raise Broken(f"{where}: item {number} holds no integer count") from None
    if len(counts) != 1:
        raise Broken(f"{where}: {len(counts)} counts in the answer, not 1")
    return counts[0], read_time


def conjuncts(where):
    """The REST Filters an AND joins (a filter alone: itself; None: none)."""
    if where and where.get("compositeFilter", {}).get("op") == "AND":
        return list(where["compositeFilter"]["filters"])
    return [where] if where else []


def field_value(fields, path):
    """The Value at a dotted field path of a document's fields, or None."""
    value = {"mapValue": {"fields": fields}}
    for part in path.split("."):
        value = ((value.get("mapValue") or {}).get("fields") or {}).get(part) if isinstance(value, dict) else None
    return value


_TIMESTAMP = re.compile(r"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:\.(\d{1,9}))?Z", re.ASCII)


def _stamp(text):
    whole = _TIMESTAMP.fullmatch(text)
    return whole[1], int((whole[2] or "").ljust(9, "0"))


# Firestore's "value type ordering" (its rank, then the value's own key) for the types we order by.
_KEYS = {"nullValue": (0, lambda v: 0), "booleanValue": (1, bool), "integerValue": (2, int), "doubleValue": (2, float),
         "timestampValue": (3, _stamp), "stringValue": (4, str), "referenceValue": (6, str)}


def value_key(value):
    """A Python value that sorts as Firestore sorts this REST Value; Broken for another type."""
    if isinstance(value, dict) and len(value) == 1:
        (kind, inner), = value.items()
        if kind in _KEYS:
            rank, key = _KEYS[kind]
            try:
                return rank, key(inner)
            except (TypeError, ValueError):
                pass
    raise Broken(f"cannot order by the value {json.dumps(value)[:100]}")
