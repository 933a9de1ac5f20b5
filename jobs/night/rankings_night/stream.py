"""Firestore's streamed answers judged whole or broken, and its order of values: pure functions.

A runQuery answer is a JSON array of items: documents, each with the readTime; `done` on the last
item; an `error` item when the query failed part way (the HTTP status is 200 by then). A page is
whole only when the array is, every item is an object, none is an error, none follows the item
marked done, and the last one is marked done: an answer without its end was cut short."""
import json
import re

from .statuses import UNAVAILABLE, Failure


class Broken(Failure):
    """Firestore's answer is not a whole, well-formed stream: the night cannot be proven whole."""

    def __init__(self, message):
        super().__init__(UNAVAILABLE, message)


def _error(item):
    error = item["error"]
    return error.get("message", error) if isinstance(error, dict) else error


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
            raise Broken(f"{where}: Firestore stopped the stream at item {number} with an error: {_error(item)}")
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


# Firestore's order of values of different types (its documented "value type ordering").
_TYPE_RANK = {"nullValue": 0, "booleanValue": 1, "integerValue": 2, "doubleValue": 2, "timestampValue": 3,
              "stringValue": 4, "referenceValue": 6}
_TIMESTAMP = re.compile(r"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:\.(\d{1,9}))?Z", re.ASCII)


def value_key(value):
    """A Python value that sorts as Firestore sorts this REST Value, for the types a query of ours
    orders by; Broken for any other."""
    if isinstance(value, dict) and len(value) == 1:
        (kind, inner), = value.items()
        rank = _TYPE_RANK.get(kind)
        try:
            if kind in ("integerValue", "doubleValue"):
                return rank, float(inner) if kind == "doubleValue" else int(inner)
            if kind == "timestampValue":
                whole = _TIMESTAMP.fullmatch(inner)
                return rank, (whole[1], int((whole[2] or "").ljust(9, "0")))
            if kind in ("stringValue", "referenceValue"):
                return rank, str(inner)
            if kind == "booleanValue":
                return rank, bool(inner)
            if kind == "nullValue":
                return rank, 0
        except (TypeError, ValueError):
            pass
    raise Broken(f"cannot order by the value {json.dumps(value)[:100]}")
