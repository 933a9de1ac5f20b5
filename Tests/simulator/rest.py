"""The tests' own HTTP calls to a Firestore (the simulator or Google's emulator): one request, its
status, headers and JSON (or text), nothing retried; and the structured queries they ask."""
import json
import urllib.error
import urllib.parse
import urllib.request


class Client:
    def __init__(self, address, project):
        self.address, self.database = address, f"projects/{project}/databases/(default)"
        self.root = f"{self.database}/documents"

    def call(self, method, path, body=None):
        """(status, headers, answer) of METHOD /v1/projects/P/databases/D+PATH, or of a full PATH."""
        path = path if path.startswith(("/v1/", "/emulator/", "/simulator/")) else f"/v1/{self.database}{path}"
        request = urllib.request.Request(f"http://{self.address}{urllib.parse.quote(path, safe='/():')}",
                                         None if body is None else json.dumps(body).encode(), method=method,
                                         headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(request, timeout=60) as answer:
                status, headers, text = answer.status, dict(answer.headers), answer.read()
        except urllib.error.HTTPError as refused:
            status, headers, text = refused.code, dict(refused.headers), refused.read()
        try:
            return status, headers, json.loads(text)
        except ValueError:
            return status, headers, text.decode("utf-8", "replace")

    def query(self, structured, read_time=None):
        return self.call("POST", "/documents:runQuery", dict(structuredQuery=structured, **at(read_time)))

    def count(self, structured, read_time=None):
        return self.call("POST", "/documents:runAggregationQuery", dict(structuredAggregationQuery={
            "structuredQuery": structured, "aggregations": [{"alias": "documents", "count": {}}]}, **at(read_time)))

    def counted(self, structured, read_time=None):
        """The COUNT's number, from an answer that must be 200."""
        status, _, answer = self.count(structured, read_time)
        assert status == 200, answer
        return int(answer[0]["result"]["aggregateFields"]["documents"]["integerValue"])

    def now(self):
        """The server's own now: the readTime of an empty query's answer."""
        return self.query({"from": [{"collectionId": "no-such-collection"}]})[2][0]["readTime"]


def at(read_time):
    return {} if read_time is None else {"readTime": read_time}


def query(where=None, by=None, limit=None, collection="rating_events", **more):
    out = {"from": [{"collectionId": collection}], **more}
    out.update({} if where is None else {"where": where}, **({} if limit is None else {"limit": limit}))
    if by is not None:
        out["orderBy"] = [{"field": {"fieldPath": p}, "direction": "ASCENDING"} for p in by]
    return out


def field(path, op, value):
    return {"fieldFilter": {"field": {"fieldPath": path}, "op": op, "value": value}}


def since(when):
    return field("timestamp", "GREATER_THAN_OR_EQUAL", {"timestampValue": when})


def name(op, full):
    return field("__name__", op, {"referenceValue": full})


def both(*filters):
    return {"compositeFilter": {"op": "AND", "filters": list(filters)}}
