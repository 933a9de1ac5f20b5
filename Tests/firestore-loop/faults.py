"""A forwarding proxy in front of the real emulator that breaks chosen answers on purpose, so a
test can show what the night's steps do when Firestore, or the network, has trouble in the
middle of a fetch, a proof or a publish; or runs a test's function before forwarding a request, so that
Google's client can write while a fetch is paging. Every other request goes to the emulator
unchanged, and its answer comes back unchanged.

A request is chosen by what it asks, not by its number (the fetch reads ranges on several streams
at once, so numbers are not stable): `proxy.fault(match, fault, nth=1, times=1)` breaks the nth
request for which match(call) holds, and the `times - 1` after it (times=None: every one).
Matchers below: pages (a query's page, not the query of limit 0 that asks Firestore's readTime),
incremental (a page of a query with a `timestamp` filter), full_pages, first_page, counts, commits,
batch_gets (a document read with its readTime: the publish's), gets, patches.

The proxy keeps every call (method, path, body, the Authorization header, the documents of a
runQuery answer) and sends no Authorization on: the emulator takes no token.

Faults:
  503, 429, 400...  that status with {} instead of forwarding; (status, body) with that JSON body;
                    ("redirect", 301|302|307, URL) a redirect to URL, nothing forwarded
  "drop"            the connection closed without an answer
  "garbage"         a line that is not an HTTP status line, then the connection closed
  "truncate"        the emulator's answer, cut after half its bytes though its length says more
  "trickle"         the emulator's answer, one byte every 1.5 s
  a function        the emulator's answer rewritten: a runQuery's items as f(items) -> items;
                    any other answer as f(status, answer) -> (status, answer), answer None
                    for an empty body (as with 204)
  and these rewrites of a runQuery answer (a JSON array of items):
  "empty"           []
  "error-item"      a streamed error after half the items, as Google's streamed JSON reports a
                    query failing part way (the status is 200 by then); the rest dropped
  "short"           without its last document, the stream still well formed (its end, `done`,
                    moved to the item before): what only the query's own COUNT can tell
  "cut"             without its last item, `done` with it: a stream that ends too early
  "only-end"        nothing but one item with the readTime and `done`: as if nothing matched
  "repeat"          the answer's first document twice (and its last one left out)
  "non-object"      a number in place of the answer's fourth item
  "nameless"        the answer's fourth document without its name
"""
import http.server
import json
import sys
import threading
import time
import urllib.error
import urllib.request


class Call:
    """One request as the proxy saw it, and what the emulator answered."""

    def __init__(self, number, method, path, body, authorization):
        self.number, self.method, self.path, self.authorization = number, method, path, authorization
        try:
            self.body = json.loads(body) if body else None
        except ValueError:
            self.body = None
        self.documents = None       # documents in the emulator's runQuery answer
        self.names = []             # and their names
        self.fault = None

    @property
    def kind(self):
        if self.path.endswith(":runQuery"):
            return "runQuery"
        if self.path.endswith(":runAggregationQuery"):
            return "count"
        if self.path.endswith(":commit"):
            return "commit"
        if self.path.endswith(":batchGet"):
            return "batchGet"
        if self.path.endswith(":partitionQuery"):
            return "partitionQuery"
        return self.method.lower()

    @property
    def query(self):
        body = self.body if isinstance(self.body, dict) else {}
        return body.get("structuredQuery") or body.get("structuredAggregationQuery", {}).get("structuredQuery") or {}

    def filters_on(self, field):
        """Whether the query's filter names field (a fieldFilter anywhere in it)."""
        def walk(node):
            if isinstance(node, dict):
                if node.get("field", {}).get("fieldPath") == field:
                    return True
                return any(walk(v) for v in node.values())
            if isinstance(node, list):
                return any(walk(v) for v in node)
            return False
        return walk(self.query.get("where"))


def pages(call):
    """A page of a query: not the fetch's query of limit 0 for Firestore's readTime."""
    return call.kind == "runQuery" and call.query.get("limit", 0) > 1


def incremental(call):
    """A page of a query over the votes stamped since a time (an incremental night's, or a window's)."""
    return pages(call) and call.filters_on("timestamp")


def full_pages(call):
    """A page of a query over the whole collection (or a range of its names)."""
    return pages(call) and not call.filters_on("timestamp")


def first_page(call):
    """The collection's first page: a full read's first range's, from its first id."""
    return full_pages(call) and "startAt" not in call.query and "GREATER_THAN" not in json.dumps(call.query.get("where"))


def counts(call):
    return call.kind == "count"


def patches(call):
    return call.kind == "patch"


def commits(call):
    return call.kind == "commit"


def gets(call):
    return call.kind == "get"


def batch_gets(call):
    return call.kind == "batchGet"


def rewrite(fault, items):
    """The emulator's runQuery items as the fault changes them."""
    if callable(fault):
        return fault(items)
    if not isinstance(items, list):
        raise ValueError(f"{fault!r} rewrites a runQuery answer, not {json.dumps(items)[:100]}")
    documents = [i for i, item in enumerate(items) if "document" in item]
    end = {"readTime": next((item["readTime"] for item in items if "readTime" in item), None), "done": True}
    if fault == "empty":
        return []
    if fault == "error-item":
        return items[: len(items) // 2] + [{"error": {"code": 503, "message": "injected: the query stopped part way",
                                                      "status": "UNAVAILABLE"}}]
    if fault == "short":
        return _ended([item for i, item in enumerate(items) if i != documents[-1]], end)
    if fault == "cut":
        return items[:-1]
    if fault == "only-end":
        return [end]
    if fault == "repeat":
        # As many items as before (a page over its limit is refused before its order is read).
        return _ended(items[:1] + items[:-1], end)
    if fault == "non-object":
        return items[:3] + [42] + items[4:]
    if fault == "nameless":
        items = json.loads(json.dumps(items))
        del items[3]["document"]["name"]
        return items
    raise ValueError(f"unknown fault {fault!r}")


def _ended(items, end):
    """items with the last one marked done, as a whole stream ends."""
    return items[:-1] + [dict(items[-1], done=True)] if items else [end]


class _Server(http.server.ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address):
        # A program that hung up mid-answer (a stream killed when another failed) is no error here.
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


class _Rule:
    def __init__(self, match, action, nth, times):
        self.match, self.action, self.nth, self.times, self.seen = match, action, nth, times, 0

    def take(self, call):
        """The action when this call is one the rule is for."""
        if not self.match(call):
            return None
        self.seen += 1
        if self.seen < self.nth or (self.times is not None and self.seen >= self.nth + self.times):
            return None
        return self.action


class FaultyProxy:
    def __init__(self, upstream):
        self.upstream = upstream
        self.calls = []
        self.faults, self.befores = [], []
        self.lock = threading.Lock()
        proxy = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def answer(self, status, data, length=None, headers=()):
                self.send_response(status)
                if data or length:
                    self.send_header("Content-Type", "application/json")
                for name, value in headers:
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(data) if length is None else length))
                self.end_headers()
                self.wfile.write(data)

            def forward(self):
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                with proxy.lock:
                    call = Call(len(proxy.calls) + 1, self.command, self.path, body, self.headers.get("Authorization"))
                    proxy.calls.append(call)
                    # Every rule sees every call, so each counts its own matches.
                    fault = next((a for a in [r.take(call) for r in proxy.faults] if a is not None), None)
                    before = [a for a in [r.take(call) for r in proxy.befores] if a is not None]
                    call.fault = fault
                for function in before:
                    function()
                if fault == "drop":
                    self.close_connection = True
                    self.connection.shutdown(2)
                    return
                if fault == "garbage":
                    self.close_connection = True
                    self.wfile.write(b"SSH-2.0-not-http\r\n\r\n")
                    self.wfile.flush()
                    self.connection.shutdown(2)
                    return
                if isinstance(fault, int):
                    self.answer(fault, b"{}")
                    return
                if isinstance(fault, tuple) and fault[0] == "redirect":
                    self.answer(fault[1], b"", headers=[("Location", fault[2])])
                    return
                if isinstance(fault, tuple):
                    self.answer(fault[0], json.dumps(fault[1]).encode())
                    return
                # No Authorization goes on: the emulator wants none.
                request = urllib.request.Request(f"http://{proxy.upstream}{self.path}", data=body or None,
                                                 method=self.command, headers={"Content-Type": "application/json"})
                try:
                    with urllib.request.urlopen(request, timeout=120) as answer:
                        status, data = answer.status, answer.read()
                except urllib.error.HTTPError as error:
                    status, data = error.code, error.read()
                if status == 200 and call.kind == "runQuery":
                    call.names = [item["document"]["name"] for item in json.loads(data) if "document" in item]
                    call.documents = len(call.names)
                if fault == "truncate":
                    self.close_connection = True
                    self.answer(status, data[: len(data) // 2], length=len(data))
                    self.connection.shutdown(2)
                elif fault == "trickle":
                    self.close_connection = True
                    self.answer(status, b"", length=len(data))
                    try:
                        for byte in data:
                            self.wfile.write(bytes([byte]))
                            self.wfile.flush()
                            time.sleep(1.5)
                    except OSError:
                        pass  # the program gave up, as it should
                elif fault is not None and call.kind != "runQuery" and callable(fault):
                    status, answer = fault(status, json.loads(data) if data else None)
                    self.answer(status, b"" if answer is None else json.dumps(answer).encode())
                elif fault is not None:
                    self.answer(status, json.dumps(rewrite(fault, json.loads(data))).encode())
                else:
                    self.answer(status, data)

            do_GET = do_POST = do_PATCH = do_DELETE = forward

        self.server = _Server(("127.0.0.1", 0), Handler)
        self.address = f"127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True)

    def fault(self, match, fault, nth=1, times=1):
        self.faults.append(_Rule(match, fault, nth, times))
        return self

    def before(self, match, function, nth=1):
        """function() runs before the nth request match() holds for is forwarded."""
        self.befores.append(_Rule(match, function, nth, 1))
        return self

    def chosen(self, match):
        with self.lock:
            return [c for c in self.calls if match(c)]

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.server.shutdown()
        self.server.server_close()


class Recorder:
    """A plain HTTP server that answers 404 to anything and keeps what it was sent: where a
    redirect points, to show that nothing followed it."""

    def __init__(self):
        self.requests = []
        recorder = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def record(self):
                recorder.requests.append((self.command, self.path, dict(self.headers)))
                self.send_response(404)
                self.send_header("Content-Length", "0")
                self.end_headers()

            do_GET = do_POST = do_PATCH = do_PUT = do_DELETE = record

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.address = f"127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.server.shutdown()
        self.server.server_close()
