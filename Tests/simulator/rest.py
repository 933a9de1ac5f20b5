"""The tests' own HTTP calls to a Firestore (the simulator or Google's emulator): one request,
its status, headers and JSON (or text), nothing retried, so each answer is seen as it was."""
import json
import urllib.error
import urllib.parse
import urllib.request


class Client:
    def __init__(self, address, project, database="(default)"):
        self.address = address
        self.database = f"projects/{project}/databases/{database}"
        self.root = f"{self.database}/documents"

    def call(self, method, path, body=None, timeout=60):
        """(status, headers, answer) of METHOD http://ADDRESS/v1/projects/P/databases/D+PATH
        ("/documents:runQuery", ":exportDocuments"); a PATH from "/v1/", "/emulator/" or
        "/simulator/" as it is."""
        if not path.startswith(("/v1/", "/emulator/", "/simulator/")):
            path = f"/v1/{self.database}{path}"
        url = f"http://{self.address}{urllib.parse.quote(path, safe='/():')}"
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(url, data=data, method=method, headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(request, timeout=timeout) as answer:
                status, headers, text = answer.status, dict(answer.headers), answer.read()
        except urllib.error.HTTPError as refused:
            status, headers, text = refused.code, dict(refused.headers), refused.read()
        try:
            return status, headers, json.loads(text)
        except ValueError:
            return status, headers, text.decode("utf-8", "replace")

    def query(self, structured, read_time=None):
        body = {"structuredQuery": structured}
        if read_time is not None:
            body["readTime"] = read_time
        return self.call("POST", "/documents:runQuery", body)

    def count(self, structured, read_time=None, alias="documents"):
        body = {"structuredAggregationQuery": {"structuredQuery": structured,
                                               "aggregations": [{"alias": alias, "count": {}}]}}
        if read_time is not None:
            body["readTime"] = read_time
        return self.call("POST", "/documents:runAggregationQuery", body)

    def commit(self, writes):
        """writes: [(PATH, fields or None to delete)] (PATH: "collection/id")."""
        body = [{"delete": f"{self.root}/{p}"} if f is None else {"update": {"name": f"{self.root}/{p}", "fields": f}}
                for p, f in writes]
        return self.call("POST", "/documents:commit", {"writes": body})

    def now(self):
        """The server's own now: the readTime of an empty query's answer."""
        status, _, answer = self.query({"from": [{"collectionId": "no-such-collection"}]})
        assert status == 200, answer
        return answer[0]["readTime"]
