"""Firestore's REST Values: stored as Firestore stores them (an integer as a string, a time in
UTC at microseconds, an empty array or map without its list), and ordered as Firestore orders
them, across types by its documented value type ordering."""
import base64
import math

from . import times


class Invalid(ValueError):
    """A value Firestore would not take; its message is the emulator's for a bad body."""

    def __init__(self, detail=""):
        super().__init__("Payload isn't valid for request.")
        self.detail = detail


def _number(inner, kind):
    if isinstance(inner, bool):
        raise Invalid(f"{kind} {inner!r}")
    if kind == "integerValue":
        if isinstance(inner, int) or (isinstance(inner, str) and inner.strip().lstrip("-").isdigit()):
            value = int(inner)
            if -2**63 <= value < 2**63:
                return str(value)
        raise Invalid(f"integerValue {inner!r}")
    if isinstance(inner, (int, float)):
        return float(inner)
    if inner in ("NaN", "Infinity", "-Infinity"):
        return inner
    try:
        return float(inner)
    except (TypeError, ValueError):
        raise Invalid(f"doubleValue {inner!r}") from None


def normalise(value):
    """The Value as Firestore keeps and answers it; Invalid for anything it would refuse."""
    if not isinstance(value, dict) or len(value) != 1:
        raise Invalid(f"a value with {len(value) if isinstance(value, dict) else 'no'} kinds")
    (kind, inner), = value.items()
    if kind in ("integerValue", "doubleValue"):
        return {kind: _number(inner, kind)}
    if kind == "stringValue" and isinstance(inner, str):
        return value
    if kind == "booleanValue" and isinstance(inner, bool):
        return value
    if kind == "nullValue" and inner in (None, "NULL_VALUE"):
        return {"nullValue": None}
    if kind == "timestampValue":
        try:
            return {kind: times.format(times.parse(inner))}
        except times.BadTime:
            raise Invalid(f"timestampValue {inner!r}") from None
    if kind == "referenceValue" and isinstance(inner, str):
        return value
    if kind == "bytesValue" and isinstance(inner, str):
        try:
            return {kind: base64.b64encode(base64.b64decode(inner, validate=True)).decode()}
        except ValueError:
            raise Invalid("bytesValue") from None
    if kind == "geoPointValue" and isinstance(inner, dict):
        return {kind: {"latitude": float(inner.get("latitude", 0)), "longitude": float(inner.get("longitude", 0))}}
    if kind == "arrayValue" and isinstance(inner, dict):
        values = [normalise(v) for v in inner.get("values", [])]
        return {kind: {"values": values} if values else {}}
    if kind == "mapValue" and isinstance(inner, dict):
        fields = normalise_fields(inner.get("fields", {}))
        return {kind: {"fields": fields} if fields else {}}
    raise Invalid(f"{kind} {inner!r}")


def normalise_fields(fields):
    if not isinstance(fields, dict):
        raise Invalid("fields is not an object")
    return {name: normalise(value) for name, value in fields.items()}


# Firestore's value type ordering: null, booleans, NaN, numbers, times, strings, bytes,
# references, geo points, arrays, maps.
NULL, BOOLEAN, NUMBER, TIMESTAMP, STRING, BYTES, REFERENCE, GEO, ARRAY, MAP = range(10)


def reference_path(name):
    """A document's name as the segments Firestore compares a reference by."""
    return tuple(name.split("/"))


def key(value):
    """A Python value that sorts as Firestore sorts this stored Value: (type rank, its own order)."""
    (kind, inner), = value.items()
    if kind == "nullValue":
        return NULL, 0
    if kind == "booleanValue":
        return BOOLEAN, inner
    if kind == "integerValue":
        return NUMBER, (1, int(inner))
    if kind == "doubleValue":
        number = float(inner)
        return NUMBER, (0, 0) if math.isnan(number) else (1, number)
    if kind == "timestampValue":
        return TIMESTAMP, times.parse(inner)
    if kind == "stringValue":
        return STRING, inner
    if kind == "bytesValue":
        return BYTES, base64.b64decode(inner)
    if kind == "referenceValue":
        return REFERENCE, reference_path(inner)
    if kind == "geoPointValue":
        return GEO, (inner["latitude"], inner["longitude"])
    if kind == "arrayValue":
        return ARRAY, tuple(key(v) for v in inner.get("values", []))
    return MAP, tuple(sorted((k, key(v)) for k, v in inner.get("fields", {}).items()))


def field(fields, path):
    """The value at a dotted field path of a document's fields, or None."""
    value = {"mapValue": {"fields": fields}}
    for part in path.split("."):
        value = value.get("mapValue", {}).get("fields", {}).get(part) if value else None
    return value


def is_nan(k):
    return k[0] == NUMBER and k[1][0] == 0


def matches(op, have, want):
    """A fieldFilter's verdict on a document value's key `have` (None: no such field) against the
    filter value's key `want`: an inequality holds only between values of one type."""
    if have is None or is_nan(have) or is_nan(want):
        return False
    if op == "EQUAL":
        return have == want
    if have[0] != want[0]:
        return False
    return {"LESS_THAN": have < want, "LESS_THAN_OR_EQUAL": have <= want,
            "GREATER_THAN": have > want, "GREATER_THAN_OR_EQUAL": have >= want}[op]
